//! The differential oracle's view of tidegate's pod-group decisions: another scheduler's
//! group cycle (kube's, recorded) is judged with tidegate's own PlacementScore plugins and
//! tidegate's group preemption, on the state the oracle replays (`evaluate.rs` does the same
//! for single pods).
//!
//! - [`Scheduler::score_placements`]: the PlacementScore plugins of the group's profile over
//!   proposed assignments, one list per placement (kube's `RunPlacementScorePlugins`), so
//!   the oracle can tell whether the placement kube kept is among the top-scored.
//! - [`Scheduler::evaluate_pod_group_preemption`]: workload-aware preemption's victim
//!   selection (`pod_group_preemption::select_victims_on_domain`) where the rerun of the
//!   group's algorithm is replaced by the placement kube's simulation found: every victim of
//!   lower priority leaves, the members go to their given nodes, and victims are reprieved
//!   in kube's order, with ties kube breaks by `time.Now()` broken by the caller.

use crate::api::{Pod, PodGroup, PodKey, Sym};
use crate::framework::CycleState;
use crate::framework::interface::{Handle, PodGroupHandle};
use crate::framework::pod_group::{
    Placement, PodGroupAssignments, PodGroupInfo, ProposedAssignment,
};
use crate::plugins::default_preemption::GroupHost;
use crate::plugins::pod_group_preemption::{self as group_preemption, victims};
use std::cmp::Ordering;
use std::sync::Arc;

use super::Scheduler;
use super::pod_group_handle::GroupHandle;

/// A placement as [`Scheduler::score_placements`] reads it: its nodes (empty: every node)
/// and its proposed assignments (member, node).
pub(super) type ProposedPlacement = (Vec<Sym>, Vec<(Arc<Pod>, Sym)>);

impl Scheduler {
    /// The total PlacementScore of each placement of `group`: `placements[i]` is its nodes
    /// (empty: every node) and its proposed assignments (member, node), normalised and
    /// weighted as the group cycle scores them. The nodes are read as the current state
    /// holds them, which should be without the cycle's members (kube scores placements after
    /// undoing them). `None` when no profile is responsible for the members (`profile_pod`'s
    /// scheduler name); `Err` with the framework's message when scoring fails.
    pub fn score_placements(
        &self,
        group: Arc<PodGroup>,
        profile_pod: &Pod,
        placements: &[ProposedPlacement],
    ) -> Option<Result<Vec<i64>, String>> {
        let fwk = &self.frameworks[self.framework_for(profile_pod)?];
        let info = PodGroupInfo::new(group.key.clone(), Some(group));
        let mut snap = self.snapshot.lock();
        self.cache.update_snapshot(&mut snap);
        let placement = |nodes: &[Sym]| {
            let nodes = if nodes.is_empty() {
                snap.nodes.clone()
            } else {
                nodes
                    .iter()
                    .filter_map(|n| snap.index.get(n).map(|&i| snap.nodes[i].clone()))
                    .collect()
            };
            Arc::new(Placement {
                name: String::new(),
                nodes,
            })
        };
        let assignments: Vec<PodGroupAssignments> = placements
            .iter()
            .map(|(nodes, members)| PodGroupAssignments {
                placement: Some(placement(nodes)),
                proposed_assignments: members
                    .iter()
                    .map(|(pod, node)| ProposedAssignment {
                        pod: pod.clone(),
                        node_name: *node,
                        cycle_state: Arc::new(CycleState::new()),
                    })
                    .collect(),
            })
            .collect();
        drop(snap);
        let states = vec![CycleState::new(); assignments.len()];
        let mut group_state = CycleState::new();
        let (scores, st) = fwk.run_placement_score(&mut group_state, &info, &assignments, &states);
        if !st.is_success() {
            return Some(Err(st.message().to_string()));
        }
        Some(Ok(scores.iter().map(|s| s.total_score).collect()))
    }

    /// The pods workload-aware preemption evicts for `group` (its unscheduled `members`) when
    /// its algorithm, rerun without every lower-priority victim, places `placed` (member,
    /// node; in the order it placed them), on the current cluster state: most important
    /// victim first. Victims kube's `MoreImportantVictim` cannot order (equal but for start
    /// times, which it reads as `time.Now()`) are reprieved first when `kept_first` says so
    /// of their first pod. `None` when no profile is responsible for the members; `Err`
    /// when the group may not preempt, nothing is of lower priority, or a member does not fit
    /// where `placed` puts it.
    pub fn evaluate_pod_group_preemption(
        &self,
        group: Arc<PodGroup>,
        members: Vec<Arc<Pod>>,
        placed: Vec<(Arc<Pod>, Sym)>,
        kept_first: &dyn Fn(&PodKey) -> bool,
    ) -> Option<Result<Vec<Arc<Pod>>, String>> {
        let fi = self.framework_for(members.first()?)?;
        let preemptor = group_preemption::PodGroupPreemptor::new(
            Some(&group),
            members,
            self.features.pod_group_preemption_policy,
        );
        if preemptor.preempt_never {
            return Some(Err("not eligible due to preemptionPolicy=Never.".into()));
        }
        let groups = self.cache.pod_groups().clone();
        let pdbs = self.client.pod_disruption_budgets();
        let order = |a: &victims::Victim, b: &victims::Victim| -> Ordering {
            let kept = |v: &victims::Victim| v.pods.first().is_some_and(|p| kept_first(&p.key));
            victims::more_important_but_start(a, b)
                .then_with(|| kept(b).cmp(&kept(a)))
                .then_with(|| victims::more_important_victim(a, b))
        };
        let mut handle = GroupHandle::with_assignments(self, fi, placed);
        handle.start_mutations();
        let out = {
            let snapshot = handle.snapshot();
            let all = victims::cross_node_victims(
                snapshot.nodes.iter().map(|n| &**n),
                snapshot,
                Some(&*groups),
            );
            let mut host = GroupHost {
                handle: &mut handle,
            };
            group_preemption::select_victims_on_domain(&mut host, &preemptor, all, &pdbs, &order)
        };
        handle.end_mutations();
        Some(out.map(|v| v.pods).map_err(|st| st.message().to_string()))
    }
}
