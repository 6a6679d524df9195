//! TaintToleration: Filter on NoSchedule/NoExecute taints; Score counts intolerable
//! PreferNoSchedule taints (fewer is better, normalized in reverse).
//! Source of behaviour: `pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go`.

use super::helper::default_normalize_score;
use crate::api::{Pod, Taint, TaintEffect, Toleration};
use crate::cache::Snapshot;
use crate::framework::cycle_state::CycleState;
use crate::framework::events::{ActionType, ClusterEvent, EventResource};
use crate::framework::interface::{
    EnqueueExtensions, FilterPlugin, Plugin, PreScorePlugin, ScorePlugin,
};
use crate::framework::node_info::NodeInfo;
use crate::framework::status::{Code, Status};
use std::sync::Arc;

pub const NAME: &str = "TaintToleration";

/// kube's `Toleration.ToleratesTaint`.
pub fn toleration_matches(t: &Toleration, taint: &Taint) -> bool {
    if t.effect.is_some_and(|e| e != taint.effect) {
        return false;
    }
    if !t.key.is_empty() && t.key != taint.key {
        return false;
    }
    if t.exists {
        return true;
    }
    // Equal (the default): values must match; an empty key with Equal matches only empty keys.
    t.key == taint.key && t.value == taint.value
}

pub fn tolerates(tolerations: &[Toleration], taint: &Taint) -> bool {
    tolerations.iter().any(|t| toleration_matches(t, taint))
}

/// kube's `FindMatchingUntoleratedTaint` with `DoNotScheduleTaintsFilterFunc`: the first
/// NoSchedule or NoExecute taint that no toleration tolerates.
pub fn find_untolerated_do_not_schedule_taint<'a>(
    tolerations: &[Toleration],
    taints: &'a [Taint],
) -> Option<&'a Taint> {
    taints.iter().find(|t| {
        matches!(t.effect, TaintEffect::NoSchedule | TaintEffect::NoExecute)
            && !tolerates(tolerations, t)
    })
}

#[derive(Debug, Default)]
pub struct TaintToleration;

impl Plugin for TaintToleration {
    fn name(&self) -> &'static str {
        NAME
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

impl FilterPlugin for TaintToleration {
    fn filter(&self, _: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        let bad = node.node.taints.iter().find(|t| {
            matches!(t.effect, TaintEffect::NoSchedule | TaintEffect::NoExecute)
                && !tolerates(&pod.spec.tolerations, t)
        });
        match bad {
            None => Status::success(),
            Some(t) => Status::new(
                Code::UnschedulableAndUnresolvable,
                format!("node(s) had untolerated taint {{{}: {}}}", t.key, t.value),
            ),
        }
    }
}

impl PreScorePlugin for TaintToleration {
    fn pre_score(&self, _: &mut CycleState, _: &Pod, _: &[&NodeInfo], _: &Snapshot) -> Status {
        Status::success()
    }
}

impl ScorePlugin for TaintToleration {
    fn score(&self, _: &CycleState, pod: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        // Only tolerations with an empty effect or PreferNoSchedule count.
        let n = node
            .node
            .taints
            .iter()
            .filter(|t| t.effect == TaintEffect::PreferNoSchedule)
            .filter(|t| {
                !pod.spec.tolerations.iter().any(|tol| {
                    tol.effect
                        .is_none_or(|e| e == TaintEffect::PreferNoSchedule)
                        && toleration_matches(tol, t)
                })
            })
            .count();
        Ok(n as i64)
    }
    fn has_normalize(&self) -> bool {
        true
    }
    fn normalize_score(&self, _: &CycleState, _: &Pod, scores: &mut [i64]) -> Status {
        default_normalize_score(scores, true);
        Status::success()
    }
}

impl EnqueueExtensions for TaintToleration {
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
mod tests {
    use super::*;
    use crate::api::Sym;

    fn taint(k: &str, v: &str, e: TaintEffect) -> Taint {
        Taint {
            key: Sym::new(k),
            value: Sym::new(v),
            effect: e,
        }
    }
    fn tol(k: &str, exists: bool, v: &str, e: Option<TaintEffect>) -> Toleration {
        Toleration {
            key: Sym::new(k),
            exists,
            value: Sym::new(v),
            effect: e,
        }
    }

    #[test]
    fn toleration_matching() {
        let t = taint("foo", "bar", TaintEffect::NoSchedule);
        assert!(toleration_matches(&tol("foo", false, "bar", None), &t));
        assert!(!toleration_matches(&tol("foo", false, "baz", None), &t));
        assert!(toleration_matches(&tol("foo", true, "", None), &t));
        assert!(toleration_matches(&tol("", true, "", None), &t));
        assert!(!toleration_matches(
            &tol("foo", true, "", Some(TaintEffect::NoExecute)),
            &t
        ));
        assert!(!toleration_matches(&tol("", false, "", None), &t));
    }
}
