//! SchedulingGates (KEP-3521): keeps pods with `spec.schedulingGates` out of activeQ.
//! Source of behaviour: `pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates.go`.

use crate::api::Pod;
use crate::framework::events::{
    ActionType, ClusterEvent, EventObject, EventResource, QueueingHint,
};
use crate::framework::interface::{EnqueueExtensions, Plugin, PreEnqueuePlugin};
use crate::framework::status::{Code, Status};
use std::fmt::Write;
use std::sync::Arc;

pub(crate) const NAME: &str = "SchedulingGates";

#[derive(Debug, Default)]
pub(crate) struct SchedulingGates;

impl Plugin for SchedulingGates {
    fn name(&self) -> &'static str {
        NAME
    }
    fn into_pre_enqueue(self: Arc<Self>) -> Option<Arc<dyn PreEnqueuePlugin>> {
        Some(self)
    }
    fn into_enqueue_extensions(self: Arc<Self>) -> Option<Arc<dyn EnqueueExtensions>> {
        Some(self)
    }
}

impl PreEnqueuePlugin for SchedulingGates {
    fn pre_enqueue(&self, pod: &Pod) -> Status {
        let gates = &pod.spec.scheduling_gates;
        if gates.is_empty() {
            return Status::success();
        }
        // Go's %v of a []string: "[a b]".
        let mut msg = String::from("waiting for scheduling gates: [");
        for (i, g) in gates.iter().enumerate() {
            if i > 0 {
                msg.push(' ');
            }
            let _ = write!(msg, "{g}");
        }
        msg.push(']');
        Status::new(Code::UnschedulableAndUnresolvable, msg)
    }
}

impl EnqueueExtensions for SchedulingGates {
    fn events_to_register(&self) -> Vec<ClusterEvent> {
        // Only the pod's own update that removes its last gate can help it.
        vec![ClusterEvent::new(
            EventResource::Pod,
            ActionType::UPDATE_POD_SCHEDULING_GATES_ELIMINATED,
        )]
    }

    /// Queue only when the updated pod is the queued pod itself (kube ≤ 1.33's hint; newer
    /// kube registers the TargetPod resource, which means the same).
    fn queueing_hint(
        &self,
        _event: &ClusterEvent,
        pod: &Pod,
        _old: &EventObject,
        new: &EventObject,
    ) -> Result<QueueingHint, String> {
        match new.pod() {
            Some(p) if p.uid == pod.uid && p.key == pod.key => Ok(QueueingHint::Queue),
            Some(_) => Ok(QueueingHint::QueueSkip),
            None => Err("SchedulingGates: the event carries no pod".into()),
        }
    }
}
