//! PreFilter, its AddPod/RemovePod extensions and Filter: the hard (`DoNotSchedule`)
//! constraints.
//! Source of behaviour: `pkg/scheduler/framework/plugins/podtopologyspread/filtering.go`.

use super::common::{Constraint, DomainTally, PolicyNeeds, kept_domain_counts, node_has_all_keys};
use super::{ERR_REASON_CONSTRAINTS_NOT_MATCH, ERR_REASON_NODE_LABEL_NOT_MATCH, PodTopologySpread};
use crate::api::{Pod, Sym, UnsatisfiableConstraintAction};
use crate::framework::Snapshot;
use crate::framework::cycle_state::CycleState;
use crate::framework::node_info::NodeInfo;
use crate::framework::status::{Code, Status};
use std::sync::Arc;

/// The cycle-state key of [`PreFilterState`] (kube's `"PreFilter" + Name`).
pub(crate) const PRE_FILTER_STATE_KEY: &str = "PreFilterPodTopologySpread";

/// One entry of [`CriticalPaths`]: a domain (topology value) and its matching pod count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CriticalPath {
    pub(crate) topology_value: Sym,
    pub(crate) match_num: i32,
}

/// kube's `criticalPaths`: two domains of one constraint. `0` always holds the minimum match
/// count; `1` holds a count at least as large (not necessarily the second smallest). Two
/// entries suffice because preemption removes pods from one node at a time and each candidate
/// node is evaluated on its own copy of the state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CriticalPaths(pub [CriticalPath; 2]);

impl Default for CriticalPaths {
    fn default() -> Self {
        let p = CriticalPath {
            topology_value: Sym::EMPTY,
            match_num: i32::MAX,
        };
        CriticalPaths([p, p])
    }
}

impl CriticalPaths {
    /// kube's `criticalPaths.update`: record that domain `value` now has `num` matching pods.
    pub(crate) fn update(&mut self, value: Sym, num: i32) {
        let p = &mut self.0;
        let i = if value == p[0].topology_value {
            Some(0)
        } else if value == p[1].topology_value {
            Some(1)
        } else {
            None
        };
        match i {
            Some(i) => {
                p[i].match_num = num;
                if p[0].match_num > p[1].match_num {
                    p.swap(0, 1);
                }
            }
            None => {
                if num < p[0].match_num {
                    p[1] = p[0];
                    p[0] = CriticalPath {
                        topology_value: value,
                        match_num: num,
                    };
                } else if num < p[1].match_num {
                    p[1] = CriticalPath {
                        topology_value: value,
                        match_num: num,
                    };
                }
            }
        }
    }
}

/// What PreFilter computes for Filter. Every vector is indexed by constraint. A state with no
/// constraints is legitimate and lets every node pass (PreFilter returns Skip then, so Filter
/// does not even run).
#[derive(Clone, Debug, Default)]
pub(crate) struct PreFilterState {
    /// The pod's `DoNotSchedule` constraints (or the default ones).
    pub constraints: Vec<Constraint>,
    /// Whether the incoming pod matches each constraint's selector (its own `+1`).
    pub(crate) self_match: Vec<bool>,
    /// kube's `CriticalPaths`.
    pub(crate) critical_paths: Vec<CriticalPaths>,
    /// kube's `TpValueToMatchNum`: topology value → matching pods in that domain, over the
    /// eligible nodes (those with every topology key that pass the inclusion policies). Each
    /// key is an eligible domain, even with 0 pods, so `len()` is the number of domains.
    /// Shared with the plugin's kept sums (copied on the first AddPod/RemovePod).
    pub(crate) tp_value_to_match_num: Arc<DomainTally>,
}

impl PreFilterState {
    /// kube's `minMatchNum`: the global minimum of constraint `i`, 0 while there are fewer
    /// eligible domains than `minDomains`.
    #[inline]
    pub(crate) fn min_match_num(&self, i: usize) -> i32 {
        let domains = self.tp_value_to_match_num.domains(i);
        if (domains as i64) < i64::from(self.constraints[i].min_domains) {
            0
        } else {
            self.critical_paths[i].0[0].match_num
        }
    }

    /// kube's `updateWithPod`: `delta` (+1/-1) for `updated` on `node`, as seen by `pod`.
    pub(crate) fn update_with_pod(
        &mut self,
        updated: &Pod,
        pod: &Pod,
        node: &NodeInfo,
        delta: i32,
    ) {
        if updated.namespace != pod.namespace {
            return;
        }
        let labels = &*node.node.labels;
        if !node_has_all_keys(labels, &self.constraints) {
            return;
        }
        let needs = PolicyNeeds::of(&self.constraints);
        let m = needs.evaluate(pod, node);
        for (i, c) in self.constraints.iter().enumerate() {
            if !c.selects(&updated.labels) || !c.includes(m) {
                continue;
            }
            let v = labels.get(c.topology_key).unwrap_or(Sym::EMPTY);
            let n = Arc::make_mut(&mut self.tp_value_to_match_num).add_pods(i, v, delta.into());
            self.critical_paths[i].update(v, n as i32);
        }
    }
}

impl PodTopologySpread {
    /// kube's `calPreFilterState`: counts the pods each hard constraint selects, per domain,
    /// over every node of the snapshot. The per-node counts and their sums are kept between
    /// cycles ([`crate::plugins::kept`]); only changed nodes are counted again.
    pub(crate) fn cal_pre_filter_state(&self, pod: &Pod, snapshot: &Snapshot) -> PreFilterState {
        let constraints = self.get_constraints(pod, UnsatisfiableConstraintAction::DoNotSchedule);
        if constraints.is_empty() {
            return PreFilterState::default();
        }
        let tally = kept_domain_counts(
            &self.kept_filter,
            pod,
            &constraints,
            true,
            |_| false,
            snapshot,
        );
        let critical_paths = (0..constraints.len())
            .map(|i| {
                let mut p = CriticalPaths::default();
                for (v, n) in tally.iter(i) {
                    p.update(v, n as i32);
                }
                p
            })
            .collect();
        let self_match = constraints.iter().map(|c| c.selects(&pod.labels)).collect();
        PreFilterState {
            constraints,
            self_match,
            critical_paths,
            tp_value_to_match_num: tally,
        }
    }

    /// kube's `getPreFilterState` error for a missing state.
    pub(crate) fn missing_state(key: &str) -> Status {
        Status::error(format!("reading {key:?} from cycleState: not found"))
    }

    pub(crate) fn filter_node(&self, state: &CycleState, node: &NodeInfo) -> Status {
        let Some(s) = state.read::<PreFilterState>(PRE_FILTER_STATE_KEY) else {
            return Self::missing_state(PRE_FILTER_STATE_KEY);
        };
        let labels = &*node.node.labels;
        for (i, c) in s.constraints.iter().enumerate() {
            let Some(v) = labels.get(c.topology_key) else {
                return Status::new(
                    Code::UnschedulableAndUnresolvable,
                    ERR_REASON_NODE_LABEL_NOT_MATCH,
                );
            };
            // 'existing matching num' + 'self-match (1 or 0)' - 'global minimum' <= maxSkew
            let min = i64::from(s.min_match_num(i));
            let self_match = i64::from(s.self_match[i]);
            let match_num = s.tp_value_to_match_num.get(i, v).unwrap_or(0);
            if match_num + self_match - min > i64::from(c.max_skew) {
                return Status::new(Code::Unschedulable, ERR_REASON_CONSTRAINTS_NOT_MATCH);
            }
        }
        Status::success()
    }

    pub(crate) fn add_or_remove(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        other: &Pod,
        node: &NodeInfo,
        delta: i32,
    ) -> Status {
        let Some(s) = state.read_mut::<PreFilterState>(PRE_FILTER_STATE_KEY) else {
            return Self::missing_state(PRE_FILTER_STATE_KEY);
        };
        s.update_with_pod(other, pod, node, delta);
        Status::success()
    }
}
