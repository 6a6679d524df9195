//! NodeName: a pod with `spec.nodeName` fits only that node.
//! Source of behaviour: `pkg/scheduler/framework/plugins/nodename/node_name.go`.

use crate::api::Pod;
use crate::framework::cycle_state::CycleState;
use crate::framework::events::{
    ActionType, ClusterEvent, EventObject, EventResource, QueueingHint,
};
use crate::framework::interface::{EnqueueExtensions, FilterPlugin, Plugin};
use crate::framework::node_info::NodeInfo;
use crate::framework::signature::{SignFragments, signer};
use crate::framework::status::{Code, Status};
use std::sync::Arc;

pub(crate) const NAME: &str = "NodeName";
pub(crate) const ERR_REASON: &str = "node(s) didn't match the requested node name";

#[derive(Debug, Default)]
pub(crate) struct NodeName;

impl Plugin for NodeName {
    fn signs_pods(&self) -> bool {
        true
    }
    fn node_local(&self, _pod: &crate::api::Pod) -> bool {
        true
    }
    fn sign_pod(&self, pod: &crate::api::Pod, sig: &mut SignFragments) -> Result<(), &'static str> {
        sig.put(signer::NODE_NAME, || pod.spec.node_name.to_string_lossy());
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

impl FilterPlugin for NodeName {
    fn filter(&self, _: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        let want = pod.spec.node_name;
        if want.is_empty() || want == node.name() {
            Status::success()
        } else {
            Status::new(Code::UnschedulableAndUnresolvable, ERR_REASON)
        }
    }
    fn passes_every_node(&self, pod: &Pod) -> bool {
        pod.spec.node_name.is_empty()
    }
}

impl EnqueueExtensions for NodeName {
    /// kube's `isSchedulableAfterNodeAdd`: the added node helps only a pod without
    /// `spec.nodeName` or one naming that node.
    fn queueing_hint(
        &self,
        _: &ClusterEvent,
        pod: &Pod,
        _: &EventObject,
        new: &EventObject,
    ) -> Result<QueueingHint, String> {
        let EventObject::Node(added) = new else {
            return Ok(QueueingHint::Queue);
        };
        let want = pod.spec.node_name;
        Ok(QueueingHint::queue_if(
            want.is_empty() || want == added.name,
        ))
    }

    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![ClusterEvent::new(EventResource::Node, ActionType::ADD)]
    }
}

#[cfg(test)]
mod hint_tests {
    //! Cases after kubernetes/kubernetes pkg/scheduler/framework/plugins/nodename/node_name_test.go
    //! (TestIsSchedulableAfterNodeAdd).
    use super::*;
    use crate::api::{Node, PodSpecInfo, Sym};

    #[test]
    fn an_added_node_helps_only_the_pod_that_names_it_or_names_none() {
        let pl = NodeName;
        let ev = ClusterEvent::new(EventResource::Node, ActionType::ADD);
        let added = EventObject::Node(Arc::new(Node::named("n1")));
        let h = |node_name: &str| {
            let spec = PodSpecInfo {
                node_name: Sym::new(node_name),
                ..PodSpecInfo::default()
            };
            let p = Pod::new("ns", "p", Arc::new(spec));
            pl.queueing_hint(&ev, &p, &EventObject::None, &added)
                .unwrap()
        };
        assert_eq!(h("n1"), QueueingHint::Queue);
        assert_eq!(h(""), QueueingHint::Queue);
        assert_eq!(h("n2"), QueueingHint::QueueSkip);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Node, PodSpecInfo, Sym};

    fn pod(node_name: &str) -> Pod {
        let spec = PodSpecInfo {
            node_name: Sym::new(node_name),
            ..PodSpecInfo::default()
        };
        Pod::new("ns", "p", Arc::new(spec))
    }

    /// Ported from TestNodeName (pkg/scheduler/framework/plugins/nodename/node_name_test.go).
    #[test]
    fn filter_table() {
        let node = NodeInfo::new(Arc::new(Node::named("foo")));
        let cases = [
            ("no host specified", "", None),
            ("host matches", "foo", None),
            (
                "host doesn't match",
                "bar",
                Some(Code::UnschedulableAndUnresolvable),
            ),
        ];
        for (name, want_node, want) in cases {
            let st = NodeName.filter(&CycleState::new(), &pod(want_node), &node);
            match want {
                None => assert!(st.is_success(), "{name}: {st:?}"),
                Some(code) => {
                    assert_eq!(st.code(), code, "{name}");
                    assert_eq!(st.reasons()[0].to_string(), ERR_REASON, "{name}");
                }
            }
        }
    }

    /// The cycle leaves NodeName out of the per-node loop exactly when its Filter passes
    /// every node.
    #[test]
    fn passes_every_node_only_without_a_node_name() {
        assert!(NodeName.passes_every_node(&pod("")));
        assert!(!NodeName.passes_every_node(&pod("foo")));
    }
}
