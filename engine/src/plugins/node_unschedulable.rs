//! NodeUnschedulable: rejects nodes with `spec.unschedulable` unless the pod tolerates the
//! `node.kubernetes.io/unschedulable:NoSchedule` taint.
//! Source of behaviour: `pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go`.

use super::taint_toleration::tolerates;
use crate::api::{Pod, Sym, Taint, TaintEffect};
use crate::framework::cycle_state::CycleState;
use crate::framework::events::{ActionType, ClusterEvent, EventResource};
use crate::framework::interface::{EnqueueExtensions, FilterPlugin, Plugin};
use crate::framework::node_info::NodeInfo;
use crate::framework::status::{Code, Status};
use std::sync::Arc;

pub const NAME: &str = "NodeUnschedulable";
pub const ERR_REASON_UNSCHEDULABLE: &str = "node(s) were unschedulable";

#[derive(Debug)]
pub struct NodeUnschedulable {
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
}

impl EnqueueExtensions for NodeUnschedulable {
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
