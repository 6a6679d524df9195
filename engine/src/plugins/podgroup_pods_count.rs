//! PodGroupPodsCount (PlacementScore, behind `TopologyAwareWorkloadScheduling`, weight 1):
//! favours the placement that fits more of the group's pods (kube v1.37.2
//! `pkg/scheduler/framework/plugins/podgrouppodscount/podgroup_pods_count.go`).
//!
//! - **ScorePlacement**: the group's scheduled pods (assigned and assumed, kube's
//!   `PodGroupState.ScheduledPodsCount`) plus the pods the placement's proposed assignments
//!   place. Counting the scheduled pods keeps the relative gap between placements small.
//! - **NormalizePlacementScore**: each score scaled by the highest one,
//!   `MinScore + score × (MaxScore − MinScore) / max` (integer division). The group's
//!   `minCount` is deliberately not the base. All scores 0 is an Error (`no pods from pod
//!   group are assigned to any of the candidate placements`): the gang plugin lets no group
//!   with nothing to place through.

use crate::framework::interface::{PlacementScorePlugin, Plugin};
use crate::framework::pod_group::{
    PlacementCycleState, PlacementScore, PodGroupAssignments, PodGroupCycleState, PodGroupInfo,
};
use crate::framework::pod_group_state::PodGroupStates;
use crate::framework::{MAX_NODE_SCORE, MIN_NODE_SCORE, Status};
use std::sync::Arc;

pub(crate) const NAME: &str = "PodGroupPodsCount";

/// The plugin: the group's scheduled members come from the scheduler's pod-group states
/// (kube: the snapshot's `PodGroupStates`).
pub(crate) struct PodGroupPodsCount {
    groups: Arc<PodGroupStates>,
}

impl PodGroupPodsCount {
    pub(crate) fn new(groups: Arc<PodGroupStates>) -> PodGroupPodsCount {
        PodGroupPodsCount { groups }
    }
}

impl Plugin for PodGroupPodsCount {
    fn name(&self) -> &'static str {
        NAME
    }
    fn into_placement_score(self: Arc<Self>) -> Option<Arc<dyn PlacementScorePlugin>> {
        Some(self)
    }
}

impl PlacementScorePlugin for PodGroupPodsCount {
    fn score_placement(
        &self,
        _group_state: &PodGroupCycleState,
        _state: &PlacementCycleState,
        pod_group: &PodGroupInfo,
        assignments: &PodGroupAssignments,
    ) -> (i64, Status) {
        let scheduled = self.groups.scheduled_pods_count(&pod_group.key);
        (
            score_placement(scheduled, assignments.proposed_assignments.len()),
            Status::success(),
        )
    }
    fn has_normalize(&self) -> bool {
        true
    }
    fn normalize_placement_score(
        &self,
        _state: &PodGroupCycleState,
        _pod_group: &PodGroupInfo,
        scores: &mut [PlacementScore],
    ) -> Status {
        let mut raw: Vec<i64> = scores.iter().map(|s| s.score).collect();
        let st = normalize_placement_scores(&mut raw);
        if st.is_success() {
            for (s, r) in scores.iter_mut().zip(raw) {
                s.score = r;
            }
        }
        st
    }
}

/// kube's `ScorePlacement`: scheduled members plus proposed assignments.
pub(crate) fn score_placement(scheduled_pods: usize, proposed: usize) -> i64 {
    (scheduled_pods + proposed) as i64
}

/// kube's `NormalizePlacementScore`, in place.
pub(crate) fn normalize_placement_scores(scores: &mut [i64]) -> Status {
    let max = scores.iter().copied().max().unwrap_or(0).max(0);
    if max == 0 {
        return Status::error(
            "no pods from pod group are assigned to any of the candidate placements",
        );
    }
    for s in scores.iter_mut() {
        *s = MIN_NODE_SCORE + *s * (MAX_NODE_SCORE - MIN_NODE_SCORE) / max;
    }
    Status::success()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Ported from kubernetes/kubernetes pkg/scheduler/framework/plugins/podgrouppodscount/podgroup_pods_count_test.go (v1.37.2)
    // (TestScorePlacement, the PodGroup cases: assigned and assumed members both count; two
    // proposed assignments).
    #[test]
    fn score_placement_counts_scheduled_and_proposed() {
        let cases: &[(&str, usize, usize, i64)] = &[
            ("existing assigned and assumed pods", 2 + 1, 2, 5),
            ("no assumed pods", 1, 2, 3),
            ("no assigned pods", 1, 2, 3),
            ("no assigned pods, no assumed pods", 0, 2, 2),
        ];
        for &(name, scheduled, proposed, want) in cases {
            assert_eq!(score_placement(scheduled, proposed), want, "{name}");
        }
    }

    // Ported from kubernetes/kubernetes pkg/scheduler/framework/plugins/podgrouppodscount/podgroup_pods_count_test.go (v1.37.2)
    // (TestNormalizePlacementScore).
    #[test]
    fn normalize_placement_scores_follows_kube_table() {
        type Case<'a> = (&'a str, &'a [i64], Option<&'a [i64]>);
        let cases: &[Case] = &[
            ("distinct scores", &[10, 50, 110], Some(&[9, 45, 100])),
            ("equal scores", &[50, 50], Some(&[100, 100])),
            ("single score", &[50], Some(&[100])),
            (
                "some minimal score that is far from a group of scores located closely",
                &[11, 100, 101, 102],
                Some(&[10, 98, 99, 100]),
            ),
            ("zero scores", &[0, 0], None),
        ];
        for &(name, scores, want) in cases {
            let mut got = scores.to_vec();
            let st = normalize_placement_scores(&mut got);
            match want {
                Some(w) => {
                    assert!(st.is_success(), "{name}: {st:?}");
                    assert_eq!(got, w, "{name}");
                }
                None => {
                    assert_eq!(st.code(), crate::framework::Code::Error, "{name}");
                    assert_eq!(
                        st.message(),
                        "no pods from pod group are assigned to any of the candidate placements",
                        "{name}"
                    );
                }
            }
        }
    }
}
