//! NodeDeclaredFeatures: keeps a pod off nodes that do not declare a feature the pod needs.
//! Source of behaviour: `pkg/scheduler/framework/plugins/nodedeclaredfeatures/nodedeclaredfeatures.go`
//! (kubernetes v1.37.2), with kube's feature registry and inference
//! ([`crate::api::node_features`]).
//!
//! - PreFilter: Skip when the gate is off or the pod needs no feature (then Filter does not
//!   run for it), else the requirements go to Filter (they live on the pod's spec here, so
//!   the cycle state holds nothing).
//! - Filter: `UnschedulableAndUnresolvable` "node(s) didn't match Pod's required features"
//!   unless the pod's requirements are a subset of the node's declared features.
//! - Events: Node Add or UpdateNodeDeclaredFeature (queue when the node is new or its list
//!   changed) and the pod's own update (queue when its requirements changed).
//!
//! In the default profile (after every other default plugin) while the gate is on, as
//! kube's `applyFeatureGates` adds it.

use crate::api::Pod;
use crate::framework::cycle_state::CycleState;
use crate::framework::events::{
    ActionType, ClusterEvent, EventObject, EventResource, QueueingHint,
};
use crate::framework::interface::{
    EnqueueExtensions, FilterPlugin, Plugin, PreFilterPlugin, PreFilterResult,
};
use crate::framework::node_info::NodeInfo;
use crate::framework::signature::{SignFragments, signer};
use crate::framework::snapshot::Snapshot;
use crate::framework::status::{Code, Status};
use std::sync::Arc;

pub(crate) const NAME: &str = "NodeDeclaredFeatures";
pub(crate) const ERR_REASON_UNSATISFIED_REQUIREMENTS: &str =
    "node(s) didn't match Pod's required features";

#[derive(Debug)]
pub(crate) struct NodeDeclaredFeatures {
    /// The gate: off, the plugin does nothing and registers no event.
    enabled: bool,
}

impl NodeDeclaredFeatures {
    pub(crate) fn new(enabled: bool) -> NodeDeclaredFeatures {
        NodeDeclaredFeatures { enabled }
    }
}

impl Plugin for NodeDeclaredFeatures {
    fn signs_pods(&self) -> bool {
        true
    }
    fn node_local(&self, _pod: &crate::api::Pod) -> bool {
        true
    }
    fn sign_pod(&self, pod: &crate::api::Pod, sig: &mut SignFragments) -> Result<(), &'static str> {
        sig.put(signer::FEATURES, || {
            format!("{:?}", pod.spec.required_node_features)
        });
        Ok(())
    }
    fn name(&self) -> &'static str {
        NAME
    }
    fn into_pre_filter(self: Arc<Self>) -> Option<Arc<dyn PreFilterPlugin>> {
        Some(self)
    }
    fn into_filter(self: Arc<Self>) -> Option<Arc<dyn FilterPlugin>> {
        Some(self)
    }
    fn into_enqueue_extensions(self: Arc<Self>) -> Option<Arc<dyn EnqueueExtensions>> {
        Some(self)
    }
}

impl PreFilterPlugin for NodeDeclaredFeatures {
    fn pre_filter(
        &self,
        _: &mut CycleState,
        pod: &Pod,
        _: &Snapshot,
    ) -> (Option<PreFilterResult>, Status) {
        if !self.enabled || pod.spec.required_node_features.is_empty() {
            return (None, Status::skip());
        }
        (None, Status::success())
    }
}

impl FilterPlugin for NodeDeclaredFeatures {
    fn filter(&self, _: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        let needs = pod.spec.required_node_features;
        if !self.enabled || needs.is_subset(node.node.declared_feature_set) {
            return Status::success();
        }
        Status::new(
            Code::UnschedulableAndUnresolvable,
            ERR_REASON_UNSATISFIED_REQUIREMENTS,
        )
    }
    fn passes_every_node(&self, pod: &Pod) -> bool {
        !self.enabled || pod.spec.required_node_features.is_empty()
    }
}

impl EnqueueExtensions for NodeDeclaredFeatures {
    /// kube's `isSchedulableAfterNodeChange` (a new node, or one whose declared list changed)
    /// and `isSchedulableAfterTargetPodUpdate` (the pod's requirements changed).
    fn queueing_hint(
        &self,
        _: &ClusterEvent,
        pod: &Pod,
        old: &EventObject,
        new: &EventObject,
    ) -> Result<QueueingHint, String> {
        let queue = QueueingHint::queue_if;
        match (old, new) {
            (EventObject::Node(o), EventObject::Node(n)) => {
                Ok(queue(o.declared_features != n.declared_features))
            }
            (_, EventObject::Node(_)) => Ok(QueueingHint::Queue),
            (EventObject::Pod(o), EventObject::Pod(n)) if n.uid == pod.uid => Ok(queue(
                o.spec.required_node_features != n.spec.required_node_features,
            )),
            (_, EventObject::Pod(_)) => Ok(QueueingHint::QueueSkip),
            _ => Ok(QueueingHint::Queue),
        }
    }

    fn events_to_register(&self) -> Vec<ClusterEvent> {
        if !self.enabled {
            return vec![];
        }
        vec![
            ClusterEvent::new(
                EventResource::Node,
                ActionType::ADD.union(ActionType::UPDATE_NODE_DECLARED_FEATURE),
            ),
            // kube's TargetPod: the hint queues only on the pod's own update.
            ClusterEvent::new(EventResource::Pod, ActionType::UPDATE),
        ]
    }
}

#[cfg(test)]
mod tests {
    //! Cases after kubernetes/kubernetes
    //! pkg/scheduler/framework/plugins/nodedeclaredfeatures/nodedeclaredfeatures_test.go
    //! (TestPreFilter, TestFilter, TestIsSchedulableAfterNodeChange,
    //! TestIsSchedulableAfterTargetPodUpdate), with kube's real feature registry in place of
    //! the test's mock features.
    use super::*;
    use crate::api::node_features::{FeatureSet, try_map};
    use crate::api::{Node, PodSpecInfo};

    fn pod(needs: &[&str]) -> Arc<Pod> {
        let spec = PodSpecInfo {
            required_node_features: try_map(needs),
            ..Default::default()
        };
        let mut p = Pod::new("ns", "p", Arc::new(spec));
        p.uid = Arc::from("uid-p");
        Arc::new(p)
    }

    fn node(declared: &[&str]) -> Arc<Node> {
        let mut n = Node::named("n");
        n.declared_features = declared.iter().map(|f| Arc::from(*f)).collect();
        n.declared_feature_set = try_map(declared);
        Arc::new(n)
    }

    fn node_info(declared: &[&str]) -> NodeInfo {
        NodeInfo::new(node(declared))
    }

    const A: &str = "RestartAllContainersOnContainerExits";
    const B: &str = "UserNamespacesHostNetworkSupport";

    #[test]
    fn pre_filter_skips_pods_without_requirements_and_when_off() {
        let pl = NodeDeclaredFeatures::new(true);
        let mut cs = CycleState::default();
        let snap = Snapshot::default();
        assert_eq!(
            pl.pre_filter(&mut cs, &pod(&[]), &snap).1.code(),
            Code::Skip
        );
        assert!(pl.pre_filter(&mut cs, &pod(&[A]), &snap).1.is_success());
        let off = NodeDeclaredFeatures::new(false);
        assert_eq!(
            off.pre_filter(&mut cs, &pod(&[A]), &snap).1.code(),
            Code::Skip
        );
    }

    #[test]
    fn filter_needs_every_required_feature_declared() {
        let pl = NodeDeclaredFeatures::new(true);
        let cs = CycleState::default();
        let ok = pl.filter(&cs, &pod(&[A]), &node_info(&[A, B]));
        assert!(ok.is_success());
        let missing = pl.filter(&cs, &pod(&[A, B]), &node_info(&[A]));
        assert_eq!(missing.code(), Code::UnschedulableAndUnresolvable);
        assert_eq!(missing.reasons(), vec![ERR_REASON_UNSATISFIED_REQUIREMENTS]);
        // Unknown names on the node are ignored (TryMap).
        let unknown = pl.filter(&cs, &pod(&[A]), &node_info(&["Feature1"]));
        assert_eq!(unknown.code(), Code::UnschedulableAndUnresolvable);
        assert!(pl.filter(&cs, &pod(&[]), &node_info(&[])).is_success());
    }

    #[test]
    fn node_hints() {
        let pl = NodeDeclaredFeatures::new(true);
        let p = pod(&[A]);
        let ev = ClusterEvent::new(EventResource::Node, ActionType::ADD);
        let h = |o: EventObject, n: EventObject| pl.queueing_hint(&ev, &p, &o, &n).unwrap();
        assert_eq!(
            h(EventObject::None, EventObject::Node(node(&[]))),
            QueueingHint::Queue
        );
        assert_eq!(
            h(EventObject::Node(node(&[A])), EventObject::Node(node(&[A]))),
            QueueingHint::QueueSkip
        );
        assert_eq!(
            h(EventObject::Node(node(&[])), EventObject::Node(node(&[A]))),
            QueueingHint::Queue
        );
        // kube compares the lists, not the mapped sets: an unknown name counts.
        assert_eq!(
            h(
                EventObject::Node(node(&[A])),
                EventObject::Node(node(&[A, "Zzz"]))
            ),
            QueueingHint::Queue
        );
    }

    #[test]
    fn pod_update_hints() {
        let pl = NodeDeclaredFeatures::new(true);
        let p = pod(&[A]);
        let ev = ClusterEvent::new(EventResource::Pod, ActionType::UPDATE);
        let h = |o: Arc<Pod>, n: Arc<Pod>| {
            pl.queueing_hint(&ev, &p, &EventObject::Pod(o), &EventObject::Pod(n))
                .unwrap()
        };
        assert_eq!(h(pod(&[A]), pod(&[A])), QueueingHint::QueueSkip);
        assert_eq!(h(pod(&[A]), pod(&[])), QueueingHint::Queue);
        assert_eq!(FeatureSet::default(), FeatureSet::EMPTY);
    }

    #[test]
    fn off_registers_no_event() {
        assert!(
            NodeDeclaredFeatures::new(false)
                .events_to_register()
                .is_empty()
        );
        assert_eq!(
            NodeDeclaredFeatures::new(true).events_to_register().len(),
            2
        );
    }
}
