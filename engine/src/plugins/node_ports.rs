//! NodePorts: a pod's host ports must be free on the node.
//! Source of behaviour: `pkg/scheduler/framework/plugins/nodeports/node_ports.go`.

use crate::api::Pod;
use crate::framework::Snapshot;
use crate::framework::cycle_state::CycleState;
use crate::framework::events::{
    ActionType, ClusterEvent, EventObject, EventResource, QueueingHint,
};
use crate::framework::interface::{
    EnqueueExtensions, FilterPlugin, Plugin, PreFilterPlugin, PreFilterResult,
};
use crate::framework::node_info::NodeInfo;
use crate::framework::signature::{self, SignFragments, signer};
use crate::framework::status::{Code, Status};
use std::sync::Arc;

pub(crate) const NAME: &str = "NodePorts";
pub(crate) const ERR_REASON: &str = "node(s) didn't have free ports for the requested pod ports";

#[derive(Debug, Default)]
pub(crate) struct NodePorts;

impl Plugin for NodePorts {
    fn signs_pods(&self) -> bool {
        true
    }
    fn node_local(&self, _pod: &crate::api::Pod) -> bool {
        true
    }
    fn sign_pod(&self, pod: &crate::api::Pod, sig: &mut SignFragments) -> Result<(), &'static str> {
        sig.put(signer::HOST_PORTS, || signature::host_ports(pod));
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

impl PreFilterPlugin for NodePorts {
    fn pre_filter(
        &self,
        _: &mut CycleState,
        pod: &Pod,
        _: &Snapshot,
    ) -> (Option<PreFilterResult>, Status) {
        if pod.spec.host_ports.is_empty() {
            return (None, Status::skip());
        }
        (None, Status::success())
    }
}

impl FilterPlugin for NodePorts {
    fn filter(&self, _: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        if pod.spec.host_ports.iter().any(|p| node.port_conflicts(p)) {
            Status::new(Code::Unschedulable, ERR_REASON)
        } else {
            Status::success()
        }
    }
}

impl EnqueueExtensions for NodePorts {
    /// kube's `isSchedulableAfterPodDeleted`: only the deletion of an assigned (or nominated)
    /// pod whose host ports clash with this pod's can free what it needs. A node added always
    /// queues (no hint function in kube).
    fn queueing_hint(
        &self,
        _: &ClusterEvent,
        pod: &Pod,
        old: &EventObject,
        _: &EventObject,
    ) -> Result<QueueingHint, String> {
        let EventObject::Pod(deleted) = old else {
            return Ok(QueueingHint::Queue);
        };
        if deleted.node_name.is_none() && deleted.nominated_node_name.is_none() {
            return Ok(QueueingHint::QueueSkip);
        }
        let clash = deleted
            .spec
            .host_ports
            .iter()
            .any(|d| pod.spec.host_ports.iter().any(|w| d.conflicts(w)));
        Ok(QueueingHint::queue_if(clash))
    }

    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![
            ClusterEvent::new(EventResource::Pod, ActionType::DELETE),
            ClusterEvent::new(EventResource::Node, ActionType::ADD),
        ]
    }
}

#[cfg(test)]
mod hint_tests {
    //! Cases after kubernetes/kubernetes
    //! pkg/scheduler/framework/plugins/nodeports/node_ports_test.go
    //! (Test_isSchedulableAfterPodDeleted).
    use super::*;
    use crate::api::{HostPort, PodSpecInfo, Sym};

    fn pod(name: &str, port: Option<i32>, node: Option<&str>) -> Arc<Pod> {
        let spec = PodSpecInfo {
            host_ports: port
                .map(|p| HostPort {
                    ip: Sym::new("0.0.0.0"),
                    protocol: Sym::new("TCP"),
                    port: p,
                })
                .into_iter()
                .collect(),
            ..PodSpecInfo::default()
        };
        let mut p = Pod::new("ns", name, Arc::new(spec));
        p.node_name = node.map(Sym::new);
        Arc::new(p)
    }

    #[test]
    fn only_a_deleted_assigned_pod_with_a_clashing_port_helps() {
        let pl = NodePorts;
        let me = pod("me", Some(80), None);
        let ev = ClusterEvent::new(EventResource::Pod, ActionType::DELETE);
        let h = |deleted: Arc<Pod>| {
            pl.queueing_hint(&ev, &me, &EventObject::Pod(deleted), &EventObject::None)
                .unwrap()
        };
        assert_eq!(h(pod("a", Some(80), Some("n1"))), QueueingHint::Queue);
        assert_eq!(
            h(pod("b", Some(8080), Some("n1"))),
            QueueingHint::QueueSkip,
            "other port"
        );
        assert_eq!(
            h(pod("c", None, Some("n1"))),
            QueueingHint::QueueSkip,
            "no host ports"
        );
        assert_eq!(
            h(pod("d", Some(80), None)),
            QueueingHint::QueueSkip,
            "unscheduled"
        );
    }
}
