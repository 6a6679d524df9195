//! NodeUnschedulable: rejects nodes with `spec.unschedulable` unless the pod tolerates the
//! `node.kubernetes.io/unschedulable:NoSchedule` taint.
//! Source of behaviour: `pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go`.

use super::taint_toleration::tolerates;
use crate::api::{Pod, Sym, Taint, TaintEffect};
use crate::framework::cycle_state::CycleState;
use crate::framework::events::{
    ActionType, ClusterEvent, EventObject, EventResource, QueueingHint,
};
use crate::framework::interface::{EnqueueExtensions, FilterPlugin, Plugin};
use crate::framework::node_info::{NodeInfo, NodeTraits};
use crate::framework::signature::{self, SignFragments, signer};
use crate::framework::status::{Code, Status};
use std::sync::Arc;

pub(crate) const NAME: &str = "NodeUnschedulable";
pub(crate) const ERR_REASON_UNSCHEDULABLE: &str = "node(s) were unschedulable";

#[derive(Debug)]
pub(crate) struct NodeUnschedulable {
    taint: Taint,
}

impl Default for NodeUnschedulable {
    fn default() -> Self {
        NodeUnschedulable {
            taint: Taint {
                key: Sym::new("node.kubernetes.io/unschedulable"),
                value: Sym::EMPTY,
                effect: TaintEffect::NoSchedule,
            },
        }
    }
}

impl Plugin for NodeUnschedulable {
    fn signs_pods(&self) -> bool {
        true
    }
    fn node_local(&self, _pod: &crate::api::Pod) -> bool {
        true
    }
    fn sign_pod(&self, pod: &crate::api::Pod, sig: &mut SignFragments) -> Result<(), &'static str> {
        sig.put(signer::TOLERATIONS, || signature::tolerations(pod));
        Ok(())
    }
    fn name(&self) -> &'static str {
        NAME
    }
    fn into_filter(self: Arc<Self>) -> Option<Arc<dyn FilterPlugin>> {
        Some(self)
    }
    fn into_enqueue_extensions(self: Arc<Self>) -> Option<Arc<dyn EnqueueExtensions>> {
        Some(self)
    }
}

impl FilterPlugin for NodeUnschedulable {
    fn filter(&self, _: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        if !node.unschedulable() || tolerates(&pod.spec.tolerations, &self.taint) {
            return Status::success();
        }
        Status::new(Code::UnschedulableAndUnresolvable, ERR_REASON_UNSCHEDULABLE)
    }
    fn passes_every_node(&self, pod: &Pod) -> bool {
        tolerates(&pod.spec.tolerations, &self.taint)
    }
    fn needs_nodes_with(&self, _: &Pod) -> NodeTraits {
        NodeTraits::UNSCHEDULABLE
    }
}

impl EnqueueExtensions for NodeUnschedulable {
    /// kube's `isSchedulableAfterNodeChange` (a node added schedulable, or updated from
    /// unschedulable to schedulable) and `isSchedulableAfterPodTolerationChange` (only the
    /// rejected pod's own update, and only when it now tolerates the unschedulable taint).
    fn queueing_hint(
        &self,
        _: &ClusterEvent,
        pod: &Pod,
        old: &EventObject,
        new: &EventObject,
    ) -> Result<QueueingHint, String> {
        let queue = QueueingHint::queue_if;
        match new {
            EventObject::Node(modified) => {
                let was_unschedulable = match old {
                    EventObject::Node(original) => original.unschedulable,
                    _ => true,
                };
                Ok(queue(was_unschedulable && !modified.unschedulable))
            }
            EventObject::Pod(modified) => Ok(queue(
                modified.key == pod.key
                    && modified.uid == pod.uid
                    && tolerates(&modified.spec.tolerations, &self.taint),
            )),
            EventObject::None | EventObject::Object(_) => Ok(QueueingHint::Queue),
        }
    }

    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![
            ClusterEvent::new(
                EventResource::Node,
                ActionType::ADD.union(ActionType::UPDATE_NODE_TAINT),
            ),
            ClusterEvent::new(EventResource::Pod, ActionType::UPDATE_POD_TOLERATIONS),
        ]
    }
}

#[cfg(test)]
mod hint_tests {
    //! Cases after kubernetes/kubernetes
    //! pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable_test.go
    //! (TestIsSchedulableAfterNodeChange, TestIsSchedulableAfterPodTolerationChange).
    use super::*;
    use crate::api::{Node, PodSpecInfo, Toleration};

    fn node(unschedulable: bool) -> EventObject {
        let mut n = Node::named("n");
        n.unschedulable = unschedulable;
        EventObject::Node(Arc::new(n))
    }

    fn pod(name: &str, tolerate: bool) -> Arc<Pod> {
        let mut spec = PodSpecInfo::default();
        if tolerate {
            spec.tolerations.push(Toleration {
                key: Sym::new("node.kubernetes.io/unschedulable"),
                exists: true,
                value: Sym::EMPTY,
                effect: Some(TaintEffect::NoSchedule),
            });
        }
        Arc::new(Pod::new("ns", name, Arc::new(spec)))
    }

    #[test]
    fn node_changes() {
        let pl = NodeUnschedulable::default();
        let p = pod("p", false);
        let ev = ClusterEvent::new(EventResource::Node, ActionType::ADD);
        let h = |old: EventObject, new: EventObject| pl.queueing_hint(&ev, &p, &old, &new).unwrap();
        assert_eq!(
            h(EventObject::None, node(false)),
            QueueingHint::Queue,
            "added schedulable"
        );
        assert_eq!(
            h(EventObject::None, node(true)),
            QueueingHint::QueueSkip,
            "added cordoned"
        );
        assert_eq!(
            h(node(true), node(false)),
            QueueingHint::Queue,
            "uncordoned"
        );
        assert_eq!(
            h(node(false), node(false)),
            QueueingHint::QueueSkip,
            "no change"
        );
        assert_eq!(
            h(node(false), node(true)),
            QueueingHint::QueueSkip,
            "cordoned"
        );
    }

    #[test]
    fn pod_toleration_changes() {
        let pl = NodeUnschedulable::default();
        let p = pod("p", false);
        let ev = ClusterEvent::new(EventResource::Pod, ActionType::UPDATE_POD_TOLERATIONS);
        let h = |new: Arc<Pod>| {
            pl.queueing_hint(
                &ev,
                &p,
                &EventObject::Pod(p.clone()),
                &EventObject::Pod(new),
            )
            .unwrap()
        };
        assert_eq!(h(pod("p", true)), QueueingHint::Queue, "its own toleration");
        assert_eq!(
            h(pod("p", false)),
            QueueingHint::QueueSkip,
            "an unrelated toleration"
        );
        assert_eq!(
            h(pod("other", true)),
            QueueingHint::QueueSkip,
            "another pod"
        );
    }
}

#[cfg(test)]
mod filter_tests {
    use super::*;
    use crate::api::{Node, PodSpecInfo, Toleration};

    fn node(unschedulable: bool) -> NodeInfo {
        let mut n = Node::named("n");
        n.unschedulable = unschedulable;
        NodeInfo::new(Arc::new(n))
    }

    fn pod(tolerate: bool) -> Pod {
        let mut spec = PodSpecInfo::default();
        if tolerate {
            spec.tolerations.push(Toleration {
                key: Sym::new("node.kubernetes.io/unschedulable"),
                exists: true,
                value: Sym::EMPTY,
                effect: Some(TaintEffect::NoSchedule),
            });
        }
        Pod::new("ns", "p", Arc::new(spec))
    }

    /// After kubernetes/kubernetes
    /// pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable_test.go
    /// (TestNodeUnschedulable), with the two shortcuts the framework takes: a pod that
    /// tolerates the taint skips the plugin (`passes_every_node`), and a schedulable node
    /// lacks the trait the plugin needs (`needs_nodes_with`). Both must agree with Filter.
    #[test]
    fn filter_and_its_shortcuts_agree() {
        let pl = NodeUnschedulable::default();
        let state = CycleState::new();
        for (unschedulable, tolerate, passes) in [
            (false, false, true),
            (true, false, false),
            (true, true, true),
            (false, true, true),
        ] {
            let (n, p) = (node(unschedulable), pod(tolerate));
            let st = pl.filter(&state, &p, &n);
            assert_eq!(st.is_success(), passes, "{unschedulable} {tolerate}");
            if !passes {
                assert_eq!(st.code(), Code::UnschedulableAndUnresolvable);
                assert_eq!(st.reasons(), [ERR_REASON_UNSCHEDULABLE]);
            }
            assert_eq!(pl.passes_every_node(&p), tolerate);
            let called = n.traits().intersects(pl.needs_nodes_with(&p));
            assert_eq!(called, unschedulable);
            if !called || pl.passes_every_node(&p) {
                assert!(st.is_success(), "a shortcut would have hidden a rejection");
            }
        }
    }
}
