//! What Filter and Score share: the per-cycle form of a constraint, how a pod's constraints
//! (or the default ones) are chosen, node eligibility and pod counting.
//! Source of behaviour: `pkg/scheduler/framework/plugins/podtopologyspread/common.go`.

use crate::api::{
    LabelSelector, Labels, NodeInclusionPolicy, Pod, Sym, Taint, TopologySpreadConstraint,
    UnsatisfiableConstraintAction,
};
use crate::framework::node_info::NodeInfo;
use crate::plugins::{node_affinity, taint_toleration};
use std::sync::Arc;

/// `kubernetes.io/hostname`: constraints on it have one domain per node.
pub const LABEL_HOSTNAME: &str = "kubernetes.io/hostname";
/// `topology.kubernetes.io/zone`.
pub const LABEL_TOPOLOGY_ZONE: &str = "topology.kubernetes.io/zone";

/// kube's internal `topologySpreadConstraint`: one constraint of the pod (or a default one)
/// with its effective selector resolved for that pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Constraint {
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
    pub fn selects(&self, labels: &Labels) -> bool {
        self.selector.as_ref().is_some_and(|s| s.matches(labels))
    }

    /// kube's `matchNodeInclusionPolicies`, with the node's affinity match and untolerated
    /// taint check computed once per node by the caller.
    #[inline]
    pub fn includes(&self, node: NodeMatch) -> bool {
        (self.node_affinity_policy != NodeInclusionPolicy::Honor || node.affinity)
            && (self.node_taints_policy != NodeInclusionPolicy::Honor || node.tolerated)
    }
}

/// What the inclusion policies need to know about one node for the incoming pod.
#[derive(Clone, Copy, Debug)]
pub struct NodeMatch {
    /// The node matches the pod's nodeSelector and required node affinity.
    pub affinity: bool,
    /// The node has no NoSchedule/NoExecute taint the pod does not tolerate.
    pub tolerated: bool,
}

/// Which node checks a set of constraints needs (so that nodes are not checked for policies
/// no constraint honours).
#[derive(Clone, Copy, Debug, Default)]
pub struct PolicyNeeds {
    affinity: bool,
    taints: bool,
}

impl PolicyNeeds {
    pub fn of(constraints: &[Constraint]) -> PolicyNeeds {
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
    pub fn evaluate(self, pod: &Pod, node: &NodeInfo) -> NodeMatch {
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
pub fn node_has_all_keys(labels: &Labels, constraints: &[Constraint]) -> bool {
    constraints.iter().all(|c| labels.has(c.topology_key))
}

/// kube's `filterTopologySpreadConstraints`: the constraints with `when_unsatisfiable ==
/// action`, selectors resolved against the owner's labels (`matchLabelKeys`), `minDomains`
/// defaulted to 1.
pub fn filter_constraints(
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
pub fn count_pods_match_selector(
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

/// Per-node counts of the pods a selector matches in a namespace, kept from one cycle to the
/// next. PreFilter and PreScore count the matching pods of every node each cycle (kube's
/// algorithm); between two cycles only the nodes that changed have other counts, and a changed
/// node is a different `Arc<NodeInfo>` in the snapshot (the cache copies a node on write while
/// the snapshot shares it). So an entry remembers, per snapshot index, the `NodeInfo` it
/// counted, holding a clone of that `Arc` (its address cannot be reused while held, and its
/// contents cannot change while shared), and counts again only where the snapshot holds a
/// different one. At most [`MatchCountCache::MAX_ENTRIES`] (selector, namespace) keys are
/// kept, most recently used first.
#[derive(Default)]
pub(crate) struct MatchCountCache {
    entries: parking_lot::Mutex<Vec<CountEntry>>,
}

/// The counts of one (selector, namespace) key.
pub(crate) struct CountEntry {
    selector: Option<LabelSelector>,
    namespace: Sym,
    /// Per snapshot index: the node version counted, and its count.
    nodes: Vec<Option<(Arc<NodeInfo>, i32)>>,
}

impl CountEntry {
    /// [`count_pods_match_selector`] on node `i` of the pass's node list.
    #[inline]
    pub(crate) fn count(&mut self, i: usize, ni: &Arc<NodeInfo>) -> i32 {
        if self.nodes.len() <= i {
            self.nodes.resize(i + 1, None);
        }
        if let Some((held, n)) = &self.nodes[i]
            && Arc::ptr_eq(held, ni)
        {
            return *n;
        }
        let n = count_pods_match_selector(&ni.pods, self.selector.as_ref(), self.namespace);
        self.nodes[i] = Some((ni.clone(), n));
        n
    }

    fn is(&self, selector: Option<&LabelSelector>, namespace: Sym) -> bool {
        self.namespace == namespace && self.selector.as_ref() == selector
    }
}

impl MatchCountCache {
    pub(crate) const MAX_ENTRIES: usize = 8;

    /// One entry per key, in order, taken out for a pass (a key met twice gets a fresh
    /// entry the second time). Hand them back with [`MatchCountCache::give_back`].
    pub(crate) fn take<'a>(
        &self,
        keys: impl Iterator<Item = (Option<&'a LabelSelector>, Sym)>,
    ) -> Vec<CountEntry> {
        let mut all = self.entries.lock();
        keys.map(|(sel, ns)| match all.iter().position(|e| e.is(sel, ns)) {
            Some(p) => all.remove(p),
            None => CountEntry {
                selector: sel.cloned(),
                namespace: ns,
                nodes: Vec::new(),
            },
        })
        .collect()
    }

    /// Returns a pass's entries, most recently used first; one entry per key is kept.
    pub(crate) fn give_back(&self, used: Vec<CountEntry>) {
        let mut all = self.entries.lock();
        for e in used.into_iter().rev() {
            if !all.iter().any(|o| o.is(e.selector.as_ref(), e.namespace)) {
                all.insert(0, e);
            }
        }
        all.truncate(Self::MAX_ENTRIES);
    }
}

/// kube's `podLabelsMatchSpreadConstraints`: any constraint's selector matches `labels`.
pub fn any_constraint_selects(constraints: &[Constraint], labels: &Labels) -> bool {
    constraints.iter().any(|c| c.selects(labels))
}

/// kube's `checkTopologyKeyLabelsChanged`.
pub fn topology_labels_changed(old: &Labels, new: &Labels, constraints: &[Constraint]) -> bool {
    constraints
        .iter()
        .any(|c| old.get(c.topology_key) != new.get(c.topology_key))
}
