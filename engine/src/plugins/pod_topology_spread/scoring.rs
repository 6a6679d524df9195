//! PreScore, Score and NormalizeScore: the soft (`ScheduleAnyway`) constraints.
//! Source of behaviour: `pkg/scheduler/framework/plugins/podtopologyspread/scoring.go`.

use super::PodTopologySpread;
use super::common::{Constraint, count_pods_match_selector, kept_domain_counts, node_has_all_keys};
use crate::api::{Pod, Sym, UnsatisfiableConstraintAction};
use crate::framework::Snapshot;
use crate::framework::cycle_state::CycleState;
use crate::framework::interface::MAX_NODE_SCORE;
use crate::framework::node_info::NodeInfo;
use crate::framework::status::Status;
use ahash::{AHashMap, AHashSet};

/// The cycle-state key of [`PreScoreState`] (kube's `"PreScore" + Name`).
pub(crate) const PRE_SCORE_STATE_KEY: &str = "PreScorePodTopologySpread";

/// What PreScore computes for Score and NormalizeScore. Vectors are indexed by constraint.
#[derive(Clone, Debug, Default)]
pub(crate) struct PreScoreState {
    pub constraints: Vec<Constraint>,
    /// kube's `IgnoredNodes`: feasible nodes missing a topology key (only when every key is
    /// required). They score 0 and take no part in normalization.
    pub(crate) ignored_nodes: AHashSet<Sym>,
    /// The same, by position in the feasible-node list PreScore saw (the order of the score
    /// column NormalizeScore gets).
    pub(crate) ignored_at: Vec<bool>,
    /// kube's `TopologyValueToPodCounts`: for non-hostname constraints, the domains of the
    /// feasible nodes and the matching pods in each, counted over all eligible nodes.
    /// Hostname constraints are counted per node in Score and have no entries.
    pub(crate) topology_value_to_pod_counts: Vec<AHashMap<Sym, i64>>,
    /// kube's `TopologyNormalizingWeight`: `ln(domains + 2)` per constraint.
    pub(crate) topology_normalizing_weight: Vec<f64>,
}

/// kube's `topologyNormalizingWeight`.
pub(crate) fn topology_normalizing_weight(size: usize) -> f64 {
    ((size + 2) as f64).ln()
}

/// kube's `scoreForCount`: `maxSkew - 1` waters the differences between domains down.
pub(crate) fn score_for_count(cnt: i64, max_skew: i32, weight: f64) -> f64 {
    cnt as f64 * weight + f64::from(max_skew - 1)
}

impl PodTopologySpread {
    /// kube's `initPreScoreState`: the soft constraints, ignored nodes, the domains of the
    /// feasible nodes and the normalizing weights. `None` when there is no soft constraint.
    fn init_pre_score_state(
        &self,
        pod: &Pod,
        filtered: &[&NodeInfo],
        require_all_topologies: bool,
    ) -> Option<PreScoreState> {
        let constraints = self.get_constraints(pod, UnsatisfiableConstraintAction::ScheduleAnyway);
        if constraints.is_empty() {
            return None;
        }
        let mut s = PreScoreState {
            topology_value_to_pod_counts: vec![AHashMap::new(); constraints.len()],
            ignored_at: vec![false; filtered.len()],
            ..Default::default()
        };
        let mut topo_size = vec![0usize; constraints.len()];
        for (pos, ni) in filtered.iter().enumerate() {
            let labels = &*ni.node.labels;
            if require_all_topologies && !node_has_all_keys(labels, &constraints) {
                s.ignored_nodes.insert(ni.name());
                s.ignored_at[pos] = true;
                continue;
            }
            for (i, c) in constraints.iter().enumerate() {
                if c.topology_key == self.hostname {
                    continue;
                }
                // A missing label reads as "" (only possible with system defaults).
                let v = labels.get(c.topology_key).unwrap_or(Sym::EMPTY);
                if let std::collections::hash_map::Entry::Vacant(e) =
                    s.topology_value_to_pod_counts[i].entry(v)
                {
                    e.insert(0);
                    topo_size[i] += 1;
                }
            }
        }
        s.topology_normalizing_weight = constraints
            .iter()
            .zip(&topo_size)
            .map(|(c, &sz)| {
                let sz = if c.topology_key == self.hostname {
                    filtered.len() - s.ignored_nodes.len()
                } else {
                    sz
                };
                topology_normalizing_weight(sz)
            })
            .collect();
        s.constraints = constraints;
        Some(s)
    }

    pub(crate) fn pre_score_impl(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        filtered: &[&NodeInfo],
        snapshot: &Snapshot,
    ) -> Status {
        if snapshot.nodes.is_empty() {
            return Status::skip();
        }
        // Only the non-system-default rules require every topology label, so nodes without a
        // zone label still get hostname spreading from the system defaults.
        let require_all =
            !pod.spec.topology_spread_constraints.is_empty() || !self.system_defaulted;
        let Some(mut s) = self.init_pre_score_state(pod, filtered, require_all) else {
            return Status::skip();
        };
        // The matching pods of every domain over all eligible nodes, kept between cycles
        // ([`crate::plugins::kept`]); hostname constraints are counted per node in Score.
        let hostname = self.hostname;
        let tally = kept_domain_counts(
            &self.kept_score,
            pod,
            &s.constraints,
            require_all,
            |c| c.topology_key == hostname,
            snapshot,
        );
        // Only the domains of feasible nodes are scored.
        for (i, counts) in s.topology_value_to_pod_counts.iter_mut().enumerate() {
            for (&v, cnt) in counts.iter_mut() {
                *cnt = tally.get(i, v).unwrap_or(0);
            }
        }
        state.write(PRE_SCORE_STATE_KEY, s);
        Status::success()
    }

    pub(crate) fn score_impl(
        &self,
        state: &CycleState,
        pod: &Pod,
        node: &NodeInfo,
    ) -> Result<i64, Status> {
        let Some(s) = state.read::<PreScoreState>(PRE_SCORE_STATE_KEY) else {
            return Err(Self::missing_state(PRE_SCORE_STATE_KEY));
        };
        if !s.ignored_nodes.is_empty() && s.ignored_nodes.contains(&node.name()) {
            return Ok(0);
        }
        let labels = &*node.node.labels;
        let mut score = 0.0f64;
        for (i, c) in s.constraints.iter().enumerate() {
            let Some(v) = labels.get(c.topology_key) else {
                continue;
            };
            let cnt = if c.topology_key == self.hostname {
                i64::from(count_pods_match_selector(
                    &node.pods,
                    c.selector.as_ref(),
                    pod.namespace,
                ))
            } else {
                s.topology_value_to_pod_counts[i]
                    .get(&v)
                    .copied()
                    .unwrap_or(0)
            };
            score += score_for_count(cnt, c.max_skew, s.topology_normalizing_weight[i]);
        }
        Ok(score.round() as i64)
    }

    pub(crate) fn normalize_impl(&self, state: &CycleState, scores: &mut [i64]) -> Status {
        let Some(s) = state.read::<PreScoreState>(PRE_SCORE_STATE_KEY) else {
            return Self::missing_state(PRE_SCORE_STATE_KEY);
        };
        let ignored = |i: usize| s.ignored_at.get(i).copied().unwrap_or(false);
        if !s.ignored_nodes.is_empty() && s.ignored_at.len() != scores.len() {
            return Status::error(format!(
                "PodTopologySpread: {} scores for {} nodes seen in PreScore",
                scores.len(),
                s.ignored_at.len()
            ));
        }
        let mut min = i64::MAX;
        let mut max = 0i64;
        for (i, &sc) in scores.iter().enumerate() {
            if ignored(i) {
                continue;
            }
            min = min.min(sc);
            max = max.max(sc);
        }
        for (i, sc) in scores.iter_mut().enumerate() {
            if ignored(i) {
                *sc = 0;
            } else if max == 0 {
                *sc = MAX_NODE_SCORE;
            } else {
                *sc = MAX_NODE_SCORE * (max + min - *sc) / max;
            }
        }
        Status::success()
    }
}
