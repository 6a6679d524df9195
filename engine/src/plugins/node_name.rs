//! NodeName: a pod with `spec.nodeName` fits only that node.
//! Source of behaviour: `pkg/scheduler/framework/plugins/nodename/node_name.go`.

use crate::api::Pod;
use crate::framework::cycle_state::CycleState;
use crate::framework::events::{ActionType, ClusterEvent, EventResource};
use crate::framework::interface::{EnqueueExtensions, FilterPlugin, Plugin};
use crate::framework::node_info::NodeInfo;
use crate::framework::status::{Code, Status};
use std::sync::Arc;

pub const NAME: &str = "NodeName";
pub const ERR_REASON: &str = "node(s) didn't match the requested node name";

#[derive(Debug, Default)]
pub struct NodeName;

impl Plugin for NodeName {
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
}

impl EnqueueExtensions for NodeName {
    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![ClusterEvent::new(EventResource::Node, ActionType::ADD)]
    }
}
