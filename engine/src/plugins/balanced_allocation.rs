//! NodeResourcesBalancedAllocation: favours nodes whose cpu and memory utilisation fractions are
//! close: score = (1 − standard deviation of the fractions) × 100, with the pod's requests
//! added (actual requests, not the non-zero defaults).
//! Source of behaviour: `pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go`.

use crate::api::Pod;
use crate::cache::Snapshot;
use crate::framework::cycle_state::CycleState;
use crate::framework::events::{ActionType, ClusterEvent, EventResource};
use crate::framework::interface::{
    EnqueueExtensions, MAX_NODE_SCORE, Plugin, PreScorePlugin, ScorePlugin,
};
use crate::framework::node_info::NodeInfo;
use crate::framework::status::Status;
use std::sync::Arc;

pub const NAME: &str = "NodeResourcesBalancedAllocation";

#[derive(Debug, Default)]
pub struct BalancedAllocation;

impl Plugin for BalancedAllocation {
    fn name(&self) -> &'static str {
        NAME
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

/// kube's `balancedResourceScorer` over the given (requested, allocatable) pairs.
pub fn balanced_score(pairs: &[(i64, i64)]) -> i64 {
    let fractions: Vec<f64> = pairs
        .iter()
        .filter(|&&(_, a)| a != 0)
        .map(|&(r, a)| (r as f64 / a as f64).min(1.0))
        .collect();
    let std = match fractions.len() {
        0 | 1 => 0.0,
        2 => (fractions[0] - fractions[1]).abs() / 2.0,
        n => {
            let mean = fractions.iter().sum::<f64>() / n as f64;
            let var = fractions
                .iter()
                .map(|f| (f - mean) * (f - mean))
                .sum::<f64>()
                / n as f64;
            var.sqrt()
        }
    };
    ((1.0 - std) * MAX_NODE_SCORE as f64) as i64
}

impl PreScorePlugin for BalancedAllocation {
    fn pre_score(&self, _: &mut CycleState, _: &Pod, _: &[&NodeInfo], _: &Snapshot) -> Status {
        Status::success()
    }
}

impl ScorePlugin for BalancedAllocation {
    fn score(&self, _: &CycleState, pod: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        let alloc = node.allocatable();
        let used = &node.requested;
        let req = &pod.spec.requests;
        Ok(balanced_score(&[
            (used.milli_cpu + req.milli_cpu, alloc.milli_cpu),
            (used.memory + req.memory, alloc.memory),
        ]))
    }
}

impl EnqueueExtensions for BalancedAllocation {
    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![
            ClusterEvent::new(EventResource::Pod, ActionType::DELETE),
            ClusterEvent::new(
                EventResource::Node,
                ActionType::ADD.union(ActionType::UPDATE_NODE_ALLOCATABLE),
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balanced_formula() {
        // Equal fractions: perfectly balanced.
        assert_eq!(balanced_score(&[(2000, 4000), (16, 32)]), 100);
        // 0.5 vs 0.25 -> std 0.125 -> 87.
        assert_eq!(balanced_score(&[(2000, 4000), (8, 32)]), 87);
        // Fractions are capped at 1.
        assert_eq!(balanced_score(&[(8000, 4000), (0, 32)]), 50);
    }
}
