//! NodeResourcesFit: the node must have room for the pod's requests and one more pod; Score
//! with the LeastAllocated strategy (cpu and memory, weight 1 each).
//! Source of behaviour: `pkg/scheduler/framework/plugins/noderesources/fit.go`,
//! `least_allocated.go`, `resource_allocation.go`.

use crate::api::{Pod, Resource};
use crate::cache::Snapshot;
use crate::framework::cycle_state::CycleState;
use crate::framework::events::{
    ActionType, ClusterEvent, EventObject, EventResource, QueueingHint,
};
use crate::framework::interface::{
    EnqueueExtensions, FilterPlugin, MAX_NODE_SCORE, Plugin, PreFilterPlugin, PreFilterResult,
    PreScorePlugin, ScorePlugin,
};
use crate::framework::node_info::NodeInfo;
use crate::framework::status::{Code, Status};
use std::sync::Arc;

pub const NAME: &str = "NodeResourcesFit";

#[derive(Debug, Default)]
pub struct NodeResourcesFit;

impl Plugin for NodeResourcesFit {
    fn name(&self) -> &'static str {
        NAME
    }
    fn into_pre_filter(self: Arc<Self>) -> Option<Arc<dyn PreFilterPlugin>> {
        Some(self)
    }
    fn into_filter(self: Arc<Self>) -> Option<Arc<dyn FilterPlugin>> {
        Some(self)
    }
    fn into_pre_score(self: Arc<Self>) -> Option<Arc<dyn PreScorePlugin>> {
        Some(self)
    }
    fn into_score(self: Arc<Self>) -> Option<Arc<dyn ScorePlugin>> {
        Some(self)
    }
    fn into_enqueue_extensions(self: Arc<Self>) -> Option<Arc<dyn EnqueueExtensions>> {
        Some(self)
    }
}

/// The reasons a pod does not fit (kube's `fitsRequest`), empty when it fits.
pub fn insufficient(req: &Resource, node: &NodeInfo) -> Vec<String> {
    let mut reasons = Vec::new();
    let alloc = node.allocatable();
    if node.pod_count + 1 > alloc.allowed_pod_number {
        reasons.push("Too many pods".to_string());
    }
    if req.is_zero() {
        return reasons;
    }
    let used = &node.requested;
    if req.milli_cpu > 0 && req.milli_cpu > alloc.milli_cpu - used.milli_cpu {
        reasons.push("Insufficient cpu".to_string());
    }
    if req.memory > 0 && req.memory > alloc.memory - used.memory {
        reasons.push("Insufficient memory".to_string());
    }
    if req.ephemeral_storage > 0
        && req.ephemeral_storage > alloc.ephemeral_storage - used.ephemeral_storage
    {
        reasons.push("Insufficient ephemeral-storage".to_string());
    }
    for &(name, v) in &req.scalar {
        if v > 0 && v > alloc.scalar(name) - used.scalar(name) {
            reasons.push(format!("Insufficient {name}"));
        }
    }
    reasons
}

impl PreFilterPlugin for NodeResourcesFit {
    fn pre_filter(
        &self,
        _: &mut CycleState,
        _: &Pod,
        _: &Snapshot,
    ) -> (Option<PreFilterResult>, Status) {
        // The pod's requests are precomputed at the API boundary (PodSpecInfo::requests).
        (None, Status::success())
    }
}

impl FilterPlugin for NodeResourcesFit {
    fn filter(&self, _: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        let reasons = insufficient(&pod.spec.requests, node);
        if reasons.is_empty() {
            Status::success()
        } else {
            Status::with_reasons(Code::Unschedulable, reasons)
        }
    }
}

/// LeastAllocated for one resource: `(capacity − requested) × 100 / capacity`.
fn least_requested(requested: i64, capacity: i64) -> i64 {
    if capacity == 0 || requested > capacity {
        return 0;
    }
    (capacity - requested) * MAX_NODE_SCORE / capacity
}

/// The LeastAllocated score over cpu and memory (weight 1 each), using non-zero requests.
pub fn least_allocated_score(pod: &Pod, node: &NodeInfo) -> i64 {
    let alloc = node.allocatable();
    let nz = &node.non_zero_requested;
    let pr = &pod.spec.non_zero_requests;
    let mut sum = 0;
    let mut weights = 0;
    for (alloc, req) in [
        (alloc.milli_cpu, nz.milli_cpu + pr.milli_cpu),
        (alloc.memory, nz.memory + pr.memory),
    ] {
        if alloc == 0 {
            continue;
        }
        sum += least_requested(req, alloc);
        weights += 1;
    }
    if weights == 0 { 0 } else { sum / weights }
}

impl PreScorePlugin for NodeResourcesFit {
    fn pre_score(&self, _: &mut CycleState, _: &Pod, _: &[&NodeInfo], _: &Snapshot) -> Status {
        Status::success()
    }
}

impl ScorePlugin for NodeResourcesFit {
    fn score(&self, _: &CycleState, pod: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        Ok(least_allocated_score(pod, node))
    }
}

/// Whether `freed` gives back any resource `want` asks for.
fn frees_something_needed(want: &Resource, freed: &Resource) -> bool {
    (want.milli_cpu > 0 && freed.milli_cpu > 0)
        || (want.memory > 0 && freed.memory > 0)
        || (want.ephemeral_storage > 0 && freed.ephemeral_storage > 0)
        || want
            .scalar
            .iter()
            .any(|&(n, v)| v > 0 && freed.scalar(n) > 0)
        // Every pod takes a pod slot: freeing one can help a pod rejected for "Too many pods".
        || want.is_zero()
}

/// Whether an empty node with `alloc` could hold `want` at all.
fn could_ever_fit(want: &Resource, alloc: &Resource) -> bool {
    alloc.allowed_pod_number > 0
        && want.milli_cpu <= alloc.milli_cpu
        && want.memory <= alloc.memory
        && want.ephemeral_storage <= alloc.ephemeral_storage
        && want.scalar.iter().all(|&(n, v)| v <= alloc.scalar(n))
}

impl EnqueueExtensions for NodeResourcesFit {
    /// After kube's `isSchedulableAfterPodEvent` / `isSchedulableAfterNodeChange`: a deleted
    /// pod helps if it was bound; a scaled-down pod only if it frees a resource the pod asks
    /// for; a node only if it could hold the pod at all.
    fn queueing_hint(
        &self,
        event: &ClusterEvent,
        pod: &Pod,
        old: &EventObject,
        new: &EventObject,
    ) -> Result<QueueingHint, String> {
        let want = &pod.spec.requests;
        let hint = |b: bool| {
            if b {
                QueueingHint::Queue
            } else {
                QueueingHint::QueueSkip
            }
        };
        match (event.resource, old, new) {
            (EventResource::Node, _, EventObject::Node(n)) => {
                Ok(hint(could_ever_fit(want, &n.allocatable)))
            }
            // A deleted pod that was bound frees at least a pod slot (kube queues on any
            // assigned pod's delete); one that never ran frees nothing.
            (EventResource::AssignedPod | EventResource::Pod, EventObject::Pod(gone), _)
                if event.action == ActionType::DELETE =>
            {
                Ok(hint(gone.is_assigned()))
            }
            (_, EventObject::Pod(before), EventObject::Pod(after))
                if event.action == ActionType::UPDATE_POD_SCALE_DOWN =>
            {
                let mut freed = before.spec.requests.clone();
                freed.sub(&after.spec.requests);
                Ok(hint(frees_something_needed(want, &freed)))
            }
            // Anything else (no objects to judge by): assume it may help.
            _ => Ok(QueueingHint::Queue),
        }
    }

    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![
            ClusterEvent::new(
                EventResource::Pod,
                ActionType::DELETE.union(ActionType::UPDATE_POD_SCALE_DOWN),
            ),
            ClusterEvent::new(
                EventResource::Node,
                ActionType::ADD
                    .union(ActionType::UPDATE_NODE_ALLOCATABLE)
                    .union(ActionType::UPDATE_NODE_TAINT)
                    .union(ActionType::UPDATE_NODE_LABEL),
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_requeue_only_when_the_event_can_help() {
        use crate::api::{Node, PodSpecInfo, Sym};
        use std::sync::Arc;
        let with = |cpu: i64, mem: i64| PodSpecInfo {
            requests: Resource {
                milli_cpu: cpu,
                memory: mem,
                ..Default::default()
            },
            ..Default::default()
        };
        let pending = Pod::new("ns", "p", Arc::new(with(2000, 0)));
        let bound = |name: &str, spec: PodSpecInfo| {
            let mut p = Pod::new("ns", name, Arc::new(spec));
            p.node_name = Some(Sym::new("n"));
            Arc::new(p)
        };
        let f = NodeResourcesFit;
        let h = |ev, old: &EventObject, new: &EventObject| {
            f.queueing_hint(&ev, &pending, old, new).unwrap()
        };
        // Any bound pod's delete frees at least a pod slot; a never-bound one frees nothing.
        let del = ClusterEvent::new(EventResource::AssignedPod, ActionType::DELETE);
        let gone_mem = EventObject::Pod(bound("m", with(0, 1 << 30)));
        assert_eq!(h(del, &gone_mem, &EventObject::None), QueueingHint::Queue);
        let never_ran = EventObject::Pod(Arc::new(Pod::new("ns", "u", Arc::new(with(500, 0)))));
        assert_eq!(
            h(del, &never_ran, &EventObject::None),
            QueueingHint::QueueSkip
        );
        // A scale-down helps only if it frees something the pod asks for.
        let down = ClusterEvent::new(
            EventResource::AssignedPod,
            ActionType::UPDATE_POD_SCALE_DOWN,
        );
        let before = EventObject::Pod(bound("s", with(1000, 1 << 30)));
        let less_mem = EventObject::Pod(bound("s", with(1000, 1 << 20)));
        let less_cpu = EventObject::Pod(bound("s", with(200, 1 << 30)));
        assert_eq!(h(down, &before, &less_mem), QueueingHint::QueueSkip);
        assert_eq!(h(down, &before, &less_cpu), QueueingHint::Queue);
        let node = |cpu: i64| {
            EventObject::Node(Arc::new(Node {
                name: Sym::new("n"),
                labels: Arc::default(),
                taints: Arc::new([]),
                unschedulable: false,
                allocatable: Resource {
                    milli_cpu: cpu,
                    memory: 8 << 30,
                    allowed_pod_number: 110,
                    ..Default::default()
                },
                ..Default::default()
            }))
        };
        let add = ClusterEvent::new(EventResource::Node, ActionType::ADD);
        assert_eq!(h(add, &EventObject::None, &node(4000)), QueueingHint::Queue);
        assert_eq!(
            h(add, &EventObject::None, &node(1000)),
            QueueingHint::QueueSkip
        );
    }

    #[test]
    fn least_requested_formula() {
        assert_eq!(least_requested(0, 4000), 100);
        assert_eq!(least_requested(1000, 4000), 75);
        assert_eq!(least_requested(3000, 4000), 25);
        assert_eq!(least_requested(5000, 4000), 0);
        assert_eq!(least_requested(1, 0), 0);
    }
}
