//! NodeResourcesFit: the node must have room for the pod's requests and one more pod; Score
//! with the LeastAllocated strategy (cpu and memory, weight 1 each).
//! Source of behaviour: `pkg/scheduler/framework/plugins/noderesources/fit.go`,
//! `least_allocated.go`, `resource_allocation.go`.

use crate::api::{Pod, Resource};
use crate::framework::cycle_state::CycleState;
use crate::framework::events::{ActionType, ClusterEvent, EventResource};
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
        _: &[Arc<NodeInfo>],
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
    fn pre_score(&self, _: &mut CycleState, _: &Pod, _: &[&NodeInfo]) -> Status {
        Status::success()
    }
}

impl ScorePlugin for NodeResourcesFit {
    fn score(&self, _: &CycleState, pod: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        Ok(least_allocated_score(pod, node))
    }
}

impl EnqueueExtensions for NodeResourcesFit {
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
    fn least_requested_formula() {
        assert_eq!(least_requested(0, 4000), 100);
        assert_eq!(least_requested(1000, 4000), 75);
        assert_eq!(least_requested(3000, 4000), 25);
        assert_eq!(least_requested(5000, 4000), 0);
        assert_eq!(least_requested(1, 0), 0);
    }
}
