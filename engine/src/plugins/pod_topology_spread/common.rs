//! What Filter and Score share: the per-cycle form of a constraint, how a pod's constraints
//! (or the default ones) are chosen, node eligibility and pod counting.
//! Source of behaviour: `pkg/scheduler/framework/plugins/podtopologyspread/common.go`.

use crate::api::{
    LabelSelector, Labels, NodeInclusionPolicy, Pod, Sym, Taint, TopologySpreadConstraint,
    UnsatisfiableConstraintAction,
};
use crate::framework::Snapshot;
use crate::framework::node_info::NodeInfo;
use crate::plugins::kept::{Item, Kept, Tally, Worker, push_item};
use crate::plugins::{node_affinity, taint_toleration};
use ahash::AHashMap;
use std::sync::Arc;

/// `kubernetes.io/hostname`: constraints on it have one domain per node.
pub(crate) const LABEL_HOSTNAME: &str = "kubernetes.io/hostname";
/// `topology.kubernetes.io/zone`.
pub(crate) const LABEL_TOPOLOGY_ZONE: &str = "topology.kubernetes.io/zone";

/// kube's internal `topologySpreadConstraint`: one constraint of the pod (or a default one)
/// with its effective selector resolved for that pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Constraint {
    pub max_skew: i32,
    pub topology_key: Sym,
    /// The effective selector (`matchLabelKeys` merged in, or the default selector).
    /// `None` is kube's `labels.Nothing()`: it selects no pod.
    pub selector: Option<LabelSelector>,
    /// `minDomains`, 1 when unset.
    pub min_domains: i32,
    pub node_affinity_policy: NodeInclusionPolicy,
    pub node_taints_policy: NodeInclusionPolicy,
}

impl Constraint {
    /// `Selector.Matches(labels)`.
    #[inline]
    pub(crate) fn selects(&self, labels: &Labels) -> bool {
        self.selector.as_ref().is_some_and(|s| s.matches(labels))
    }

    /// kube's `matchNodeInclusionPolicies`, with the node's affinity match and untolerated
    /// taint check computed once per node by the caller.
    #[inline]
    pub(crate) fn includes(&self, node: NodeMatch) -> bool {
        (self.node_affinity_policy != NodeInclusionPolicy::Honor || node.affinity)
            && (self.node_taints_policy != NodeInclusionPolicy::Honor || node.tolerated)
    }
}

/// What the inclusion policies need to know about one node for the incoming pod.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NodeMatch {
    /// The node matches the pod's nodeSelector and required node affinity.
    pub affinity: bool,
    /// The node has no NoSchedule/NoExecute taint the pod does not tolerate.
    pub tolerated: bool,
}

/// Which node checks a set of constraints needs (so that nodes are not checked for policies
/// no constraint honours).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PolicyNeeds {
    pub(crate) affinity: bool,
    pub(crate) taints: bool,
}

impl PolicyNeeds {
    pub(crate) fn of(constraints: &[Constraint]) -> PolicyNeeds {
        PolicyNeeds {
            affinity: constraints
                .iter()
                .any(|c| c.node_affinity_policy == NodeInclusionPolicy::Honor),
            taints: constraints
                .iter()
                .any(|c| c.node_taints_policy == NodeInclusionPolicy::Honor),
        }
    }

    /// Evaluates the needed checks for `node` (the others read as satisfied).
    #[inline]
    pub(crate) fn evaluate(self, pod: &Pod, node: &NodeInfo) -> NodeMatch {
        NodeMatch {
            affinity: !self.affinity || node_affinity::matches(pod, node),
            tolerated: !self.taints || !has_untolerated_taint(pod, &node.node.taints),
        }
    }
}

/// kube's `FindMatchingUntoleratedTaint` with `DoNotScheduleTaintsFilterFunc`.
fn has_untolerated_taint(pod: &Pod, taints: &[Taint]) -> bool {
    taint_toleration::find_untolerated_do_not_schedule_taint(&pod.spec.tolerations, taints)
        .is_some()
}

/// kube's `nodeLabelsMatchSpreadConstraints`: the node has every constraint's topology key.
#[inline]
pub(crate) fn node_has_all_keys(labels: &Labels, constraints: &[Constraint]) -> bool {
    constraints.iter().all(|c| labels.has(c.topology_key))
}

/// kube's `filterTopologySpreadConstraints`: the constraints with `when_unsatisfiable ==
/// action`, selectors resolved against the owner's labels (`matchLabelKeys`), `minDomains`
/// defaulted to 1.
pub(crate) fn filter_constraints(
    constraints: &[TopologySpreadConstraint],
    owner_labels: &Labels,
    action: UnsatisfiableConstraintAction,
) -> Vec<Constraint> {
    constraints
        .iter()
        .filter(|c| c.when_unsatisfiable == action)
        .map(|c| Constraint {
            max_skew: c.max_skew,
            topology_key: c.topology_key,
            selector: c.selector_for(owner_labels).map(|s| s.into_owned()),
            min_domains: c.min_domains.unwrap_or(1),
            node_affinity_policy: c.node_affinity_policy,
            node_taints_policy: c.node_taints_policy,
        })
        .collect()
}

/// kube's `countPodsMatchSelector`: the node's pods in `namespace`, not terminating, that the
/// selector matches.
///
/// Kubernetes 1.34 returns 0 at once for a selector without requirements (its
/// `selector.Empty()` short-cut, meant for the null selector, also catches `labelSelector:
/// {}`), so an empty selector counts no existing pod; this keeps that.
#[inline]
pub(crate) fn count_pods_match_selector(
    pods: &crate::framework::node_info::PodList,
    selector: Option<&LabelSelector>,
    namespace: Sym,
) -> i32 {
    let Some(sel) = selector else { return 0 };
    if sel.requirements.is_empty() {
        return 0;
    }
    let mut n = 0;
    for p in pods {
        if p.deletion_timestamp || p.namespace != namespace {
            continue;
        }
        if sel.matches(&p.labels) {
            n += 1;
        }
    }
    n
}

/// What the spreading counts of one incoming pod depend on: its constraints (selectors
/// resolved), its namespace, and, when a constraint honours an inclusion policy, its spec
/// (node affinity and tolerations; compared by address, the key holding it).
#[derive(Clone)]
pub(crate) struct SpreadKey {
    pub(crate) constraints: Vec<Constraint>,
    pub(crate) namespace: Sym,
    pub(crate) require_all: bool,
    pub(crate) spec: Option<Arc<crate::api::PodSpecInfo>>,
}

impl PartialEq for SpreadKey {
    fn eq(&self, other: &Self) -> bool {
        let spec_eq = match (&self.spec, &other.spec) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        spec_eq
            && self.namespace == other.namespace
            && self.require_all == other.require_all
            && self.constraints == other.constraints
    }
}

impl SpreadKey {
    pub(crate) fn new(pod: &Pod, constraints: &[Constraint], require_all: bool) -> SpreadKey {
        let needs = PolicyNeeds::of(constraints);
        SpreadKey {
            constraints: constraints.to_vec(),
            namespace: pod.namespace,
            require_all,
            spec: (needs.affinity || needs.taints).then(|| pod.spec.clone()),
        }
    }
}

/// Per constraint: domain → (matching pods, eligible nodes), summed over the nodes (kube's
/// `TpValueToMatchNum` and `TopologyValueToPodCounts`, with the eligible nodes that keep a
/// domain present). A domain is present while an eligible node is in it, even with 0 pods
/// (kube creates the entry for every eligible node).
#[derive(Clone, Debug, Default)]
pub(crate) struct DomainTally {
    per_constraint: Vec<AHashMap<Sym, (i64, u32)>>,
}

impl DomainTally {
    /// The matching pods of domain `value` of constraint `i`, if the domain is present.
    #[inline]
    pub(crate) fn get(&self, i: usize, value: Sym) -> Option<i64> {
        self.per_constraint
            .get(i)
            .and_then(|m| m.get(&value))
            .map(|&(n, _)| n)
    }

    /// How many domains constraint `i` has.
    pub(crate) fn domains(&self, i: usize) -> usize {
        self.per_constraint.get(i).map_or(0, |m| m.len())
    }

    /// Constraint `i`'s domains and their matching pods, in no order.
    pub(crate) fn iter(&self, i: usize) -> impl Iterator<Item = (Sym, i64)> + '_ {
        self.per_constraint
            .get(i)
            .into_iter()
            .flat_map(|m| m.iter().map(|(&v, &(n, _))| (v, n)))
    }

    /// kube's `TpValueToMatchNum[i][value] += delta` (the entry is created if missing, as a
    /// Go map's is); returns the new count.
    pub(crate) fn add_pods(&mut self, i: usize, value: Sym, delta: i64) -> i64 {
        if self.per_constraint.len() <= i {
            self.per_constraint.resize_with(i + 1, AHashMap::new);
        }
        let e = self.per_constraint[i].entry(value).or_insert((0, 0));
        e.0 += delta;
        e.0
    }
}

impl Tally for DomainTally {
    fn apply(&mut self, item: &Item, sign: i64) {
        let slot = item.slot as usize;
        if self.per_constraint.len() <= slot {
            self.per_constraint.resize_with(slot + 1, AHashMap::new);
        }
        let m = &mut self.per_constraint[slot];
        let e = m.entry(item.value).or_insert((0, 0));
        e.0 += item.weight * sign;
        if sign > 0 {
            e.1 += item.matches;
        } else {
            e.1 -= item.matches;
            if e.1 == 0 {
                m.remove(&item.value);
            }
        }
    }
    fn merge_from(&mut self, other: Self) {
        for (slot, m) in other.per_constraint.into_iter().enumerate() {
            for (value, (weight, matches)) in m {
                let item = Item {
                    slot: slot as u32,
                    key: Sym::EMPTY,
                    value,
                    weight,
                    matches,
                };
                self.apply(&item, 1);
            }
        }
    }
}

/// The domain counts of `constraints` for `pod` over the snapshot's nodes (the sum of
/// [`spread_contribution`]), kept in `kept` between cycles ([`crate::plugins::kept`]).
pub(crate) fn kept_domain_counts(
    kept: &Kept<SpreadKey, DomainTally>,
    pod: &Pod,
    constraints: &[Constraint],
    require_all: bool,
    skip: impl Fn(&Constraint) -> bool + Sync,
    snapshot: &Snapshot,
) -> Arc<DomainTally> {
    let key = SpreadKey::new(pod, constraints, require_all);
    kept.totals(
        key,
        None,
        snapshot,
        None,
        None,
        |_: &mut Worker<'_, ()>, node, out| {
            spread_contribution(pod, constraints, require_all, &skip, node, out)
        },
    )
}

/// One node's contribution to the spreading counts of `constraints`: for each constraint
/// whose inclusion policies admit the node, its matching pods in `namespace` on the node's
/// domain (the node counts as one eligible node of that domain). Nodes missing a topology key
/// contribute nothing when `require_all` (kube's `nodeLabelsMatchSpreadConstraints`);
/// otherwise a missing label reads as "" (system default constraints). Constraints skipped by
/// `skip` contribute nothing.
pub(crate) fn spread_contribution(
    pod: &Pod,
    constraints: &[Constraint],
    require_all: bool,
    skip: impl Fn(&Constraint) -> bool,
    node: &NodeInfo,
    out: &mut Vec<Item>,
) {
    let labels = &*node.node.labels;
    if require_all && !node_has_all_keys(labels, constraints) {
        return;
    }
    let needs = PolicyNeeds::of(constraints);
    let mut m = None;
    for (i, c) in constraints.iter().enumerate() {
        if skip(c) {
            continue;
        }
        let m = *m.get_or_insert_with(|| needs.evaluate(pod, node));
        if !c.includes(m) {
            continue;
        }
        let value = labels.get(c.topology_key).unwrap_or(Sym::EMPTY);
        let n = count_pods_match_selector(&node.pods, c.selector.as_ref(), pod.namespace);
        push_item(
            out,
            Item {
                slot: i as u32,
                key: c.topology_key,
                value,
                weight: i64::from(n),
                matches: 1,
            },
        );
    }
}

/// kube's `podLabelsMatchSpreadConstraints`: any constraint's selector matches `labels`.
pub(crate) fn any_constraint_selects(constraints: &[Constraint], labels: &Labels) -> bool {
    constraints.iter().any(|c| c.selects(labels))
}

/// kube's `checkTopologyKeyLabelsChanged`.
pub(crate) fn topology_labels_changed(
    old: &Labels,
    new: &Labels,
    constraints: &[Constraint],
) -> bool {
    constraints
        .iter()
        .any(|c| old.get(c.topology_key) != new.get(c.topology_key))
}
