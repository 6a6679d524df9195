//! Inter-pod affinity terms and topology spread constraints, in the form the scheduler uses.
//!
//! Both keep `matchLabelKeys` (and `mismatchLabelKeys`) apart from the label selector, because a
//! pod spec is shared by every pod stamped from one template while the keys resolve against each
//! pod's own labels: [`PodAffinityTerm::selector_for`] and
//! [`TopologySpreadConstraint::selector_for`] give the effective selector for one pod (what the
//! API server's merge, or kube-scheduler's own, produces).

use super::intern::Sym;
use super::labels::{LabelSelector, Labels, Operator, Requirement};
use std::borrow::Cow;

/// A pod (anti-)affinity term (`v1.PodAffinityTerm`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodAffinityTerm {
    /// `None` (the field is absent) selects no pod; an empty selector selects every pod.
    pub label_selector: Option<LabelSelector>,
    /// Namespaces named by the term.
    pub namespaces: Vec<Sym>,
    /// `None` selects no namespace; an empty selector selects all of them.
    pub namespace_selector: Option<LabelSelector>,
    pub topology_key: Sym,
    pub match_label_keys: Vec<Sym>,
    pub mismatch_label_keys: Vec<Sym>,
}

impl PodAffinityTerm {
    /// The term's label selector for the pod that carries it, with `matchLabelKeys` added as
    /// `key In (value)` and `mismatchLabelKeys` as `key NotIn (value)` for each key the pod has.
    /// `None` selects nothing.
    pub fn selector_for(&self, owner: &Labels) -> Option<Cow<'_, LabelSelector>> {
        let sel = self.label_selector.as_ref()?;
        Some(merge_keys(
            sel,
            owner,
            &self.match_label_keys,
            &self.mismatch_label_keys,
        ))
    }

    /// kube's `AffinityTerm`: the namespaces the term applies to, resolved for its owner.
    /// With neither `namespaces` nor `namespaceSelector`, that is the owner's namespace.
    pub fn namespaces_for(&self, owner_namespace: Sym) -> Cow<'_, [Sym]> {
        if self.namespaces.is_empty() && self.namespace_selector.is_none() {
            Cow::Owned(vec![owner_namespace])
        } else {
            Cow::Borrowed(&self.namespaces)
        }
    }
}

/// A weighted pod (anti-)affinity term (preferred).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WeightedPodAffinityTerm {
    pub weight: i32,
    pub term: PodAffinityTerm,
}

/// `spec.affinity.podAffinity` and `podAntiAffinity`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodAffinity {
    pub required_affinity: Vec<PodAffinityTerm>,
    pub preferred_affinity: Vec<WeightedPodAffinityTerm>,
    pub required_anti_affinity: Vec<PodAffinityTerm>,
    pub preferred_anti_affinity: Vec<WeightedPodAffinityTerm>,
}

impl PodAffinity {
    pub fn is_empty(&self) -> bool {
        self.required_affinity.is_empty()
            && self.preferred_affinity.is_empty()
            && self.required_anti_affinity.is_empty()
            && self.preferred_anti_affinity.is_empty()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnsatisfiableConstraintAction {
    DoNotSchedule,
    ScheduleAnyway,
}

/// `nodeAffinityPolicy` / `nodeTaintsPolicy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NodeInclusionPolicy {
    Honor,
    Ignore,
}

/// `v1.TopologySpreadConstraint`, defaults applied (`nodeAffinityPolicy` Honor,
/// `nodeTaintsPolicy` Ignore).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopologySpreadConstraint {
    pub max_skew: i32,
    pub topology_key: Sym,
    pub when_unsatisfiable: UnsatisfiableConstraintAction,
    /// `None` selects no pod.
    pub label_selector: Option<LabelSelector>,
    pub min_domains: Option<i32>,
    pub node_affinity_policy: NodeInclusionPolicy,
    pub node_taints_policy: NodeInclusionPolicy,
    pub match_label_keys: Vec<Sym>,
}

impl TopologySpreadConstraint {
    /// The selector for the pod carrying the constraint, `matchLabelKeys` merged in (kube
    /// ignores keys the pod does not have).
    pub fn selector_for(&self, owner: &Labels) -> Option<Cow<'_, LabelSelector>> {
        let sel = self.label_selector.as_ref()?;
        Some(merge_keys(sel, owner, &self.match_label_keys, &[]))
    }
}

fn merge_keys<'a>(
    sel: &'a LabelSelector,
    owner: &Labels,
    match_keys: &[Sym],
    mismatch_keys: &[Sym],
) -> Cow<'a, LabelSelector> {
    if match_keys.is_empty() && mismatch_keys.is_empty() {
        return Cow::Borrowed(sel);
    }
    let mut out = sel.clone();
    for (keys, op) in [(match_keys, Operator::In), (mismatch_keys, Operator::NotIn)] {
        for &k in keys {
            if let Some(v) = owner.get(k) {
                out.requirements.push(Requirement {
                    key: k,
                    op,
                    values: vec![v],
                    int_value: 0,
                });
            }
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(keys: &[&str], mismatch: &[&str]) -> PodAffinityTerm {
        PodAffinityTerm {
            label_selector: Some(LabelSelector::default()),
            namespaces: vec![],
            namespace_selector: None,
            topology_key: Sym::new("zone"),
            match_label_keys: keys.iter().map(|k| Sym::new(k)).collect(),
            mismatch_label_keys: mismatch.iter().map(|k| Sym::new(k)).collect(),
        }
    }

    #[test]
    fn match_label_keys_resolve_against_the_owner() {
        let owner = Labels::from_pairs([("app", "web"), ("tenant", "a")]);
        let t = term(&["app", "missing"], &["tenant"]);
        let sel = t.selector_for(&owner).unwrap();
        assert!(sel.matches(&Labels::from_pairs([("app", "web"), ("tenant", "b")])));
        assert!(!sel.matches(&Labels::from_pairs([("app", "web"), ("tenant", "a")])));
        assert!(!sel.matches(&Labels::from_pairs([("app", "db")])));
    }

    #[test]
    fn absent_selector_selects_nothing_and_namespaces_default_to_the_owner() {
        let mut t = term(&[], &[]);
        t.label_selector = None;
        assert!(t.selector_for(&Labels::default()).is_none());
        assert_eq!(&*t.namespaces_for(Sym::new("ns1")), &[Sym::new("ns1")]);
        t.namespace_selector = Some(LabelSelector::default());
        assert!(t.namespaces_for(Sym::new("ns1")).is_empty());
    }
}
