//! InterPodAffinity: required pod affinity and anti-affinity in PreFilter/Filter (both the
//! incoming pod's terms and the required anti-affinity of the pods already running), preferred
//! terms in PreScore/Score. Source of behaviour:
//! `pkg/scheduler/framework/plugins/interpodaffinity/` (`filtering.go`, `scoring.go`,
//! `plugin.go`) of kube-scheduler 1.34.
//!
//! # The data
//!
//! Every term names a *topology key* (`zone`, `kubernetes.io/hostname`…). A node belongs to the
//! topology domain `(key, value)` when it carries the label `key=value`: such a
//! [`TopologyPair`] is the unit everything is counted in. A node without the label is in no
//! domain of that key.
//!
//! PreFilter sums over the cluster three [`TopologyCounts`] maps, pair → number of
//! matches, stored in the cycle state as [`filtering::PreFilterState`]:
//!
//! * `existing_anti_affinity_counts`: for every pod already running (only the nodes in
//!   `Snapshot::have_pods_with_required_anti_affinity` can contribute) and every one of its
//!   required anti-affinity terms that matches the incoming pod, +1 on the pair
//!   `(term.topologyKey, that pod's node's value)`. A node in a pair with a positive count is
//!   refused ("didn't satisfy existing pods anti-affinity rules").
//! * `affinity_counts`: for every running pod that matches *all* the incoming pod's required
//!   affinity terms, +1 on `(term.topologyKey, value)` for each term. A node must be in a
//!   positive pair of every term (and carry every term's key).
//! * `anti_affinity_counts`: for every running pod and every required anti-affinity term of the
//!   incoming pod it matches, +1 on the pair. A node in a positive pair is refused.
//!
//! PreScore builds [`scoring::PreScoreState`]: pair → summed weight, from the incoming pod's
//! preferred terms matched against running pods and the running pods' terms (required affinity
//! at `hardPodAffinityWeight`, preferred affinity and anti-affinity) matched against the
//! incoming pod. Score sums the pairs the node is in; NormalizeScore rescales min..max to
//! 0..100.
//!
//! # Kept between cycles
//!
//! kube builds the four maps afresh for every pod, walking every running pod. Here each map
//! is a sum of per-node contributions kept from cycle to cycle ([`crate::plugins::kept`]): an entry per
//! incoming-pod key (the terms, labels, namespace and namespace labels the map depends on),
//! refreshed by recounting only the nodes whose `NodeInfo` changed since the entry last saw
//! them. The maps are equal to kube's (a proptest drives a long-lived plugin and fresh ones
//! through random changes); only the cost changes, from every running pod per cycle to every
//! node's address plus the changed nodes' pods.
//!
//! # Invariants
//!
//! * A count map never holds a zero entry: an update that brings a pair to 0 removes it (so
//!   "the map is empty" means "nothing matched anywhere", which the self-affinity rule of
//!   Filter relies on). Scores keep zero entries, as kube's score map does.
//! * Each map keeps the list of topology keys it holds, with the number of entries per key, so
//!   Filter and Score cost one label lookup and one map lookup per key, never a scan of the
//!   node's labels.
//! * AddPod/RemovePod (preemption, nominated pods) apply exactly the update PreFilter applied
//!   for one pod, with multiplier ±1; PreFilter followed by AddPod(p) equals PreFilter on a
//!   cluster that already has p.
//! * Term matching is kube's `AffinityTerm.Matches`: the namespace part (the term's
//!   `namespaces`, its owner's namespace when it names neither namespaces nor a
//!   `namespaceSelector`, or the `namespaceSelector` over namespace labels) and the label
//!   selector with `matchLabelKeys`/`mismatchLabelKeys` resolved against the term's owner.
//!   The incoming pod's terms have their `namespaceSelector` resolved against the namespace of
//!   the pod they are matched with (kube lists the namespaces once and merges them into
//!   `namespaces`: the same answer for namespaces that exist); the running pods' terms see the
//!   incoming pod's namespace labels.

pub(crate) mod filtering;
pub(crate) mod scoring;
#[cfg(test)]
mod tests;

use crate::api::{LabelSelector, Labels, Pod, PodAffinityTerm, PodSpecInfo, Sym};
use crate::framework::events::{
    ActionType, ClusterEvent, EventObject, EventResource, QueueingHint,
};
use crate::framework::interface::{
    ClusterClient, EnqueueExtensions, FilterPlugin, Plugin, PreFilterPlugin, PreScorePlugin,
    ScorePlugin,
};
use crate::framework::registry::{PluginContext, decode_args};
use crate::framework::signature::{self, SignFragments, signer};
use crate::plugins::kept::Kept;
pub(crate) use crate::plugins::kept::NsLabelsCache;
use serde::Deserialize;
use std::sync::Arc;

pub(crate) use filtering::TopologyCounts;

pub(crate) const NAME: &str = "InterPodAffinity";

/// A topology domain: `(topology key, node label value)`.
pub(crate) type TopologyPair = (Sym, Sym);

/// kube's `InterPodAffinityArgs` (v1 defaults applied).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub(crate) struct InterPodAffinityArgs {
    /// The score weight of an existing pod's required affinity term that the incoming pod
    /// matches (kube's symmetric "hard" affinity). 0..=100; default 1.
    pub(crate) hard_pod_affinity_weight: i32,
    /// Skip the existing pods' preferred terms when the incoming pod has no preferred terms.
    pub(crate) ignore_preferred_terms_of_existing_pods: bool,
}

impl Default for InterPodAffinityArgs {
    fn default() -> Self {
        InterPodAffinityArgs {
            hard_pod_affinity_weight: 1,
            ignore_preferred_terms_of_existing_pods: false,
        }
    }
}

impl InterPodAffinityArgs {
    /// kube's `ValidateInterPodAffinityArgs`.
    pub(crate) fn validate(&self) -> Result<(), String> {
        let w = self.hard_pod_affinity_weight;
        if !(0..=100).contains(&w) {
            return Err(format!(
                "hardPodAffinityWeight: Invalid value: {w}: not in valid range [0-100]"
            ));
        }
        Ok(())
    }
}

pub(crate) struct InterPodAffinity {
    pub args: InterPodAffinityArgs,
    /// For namespace labels (`namespaceSelector`).
    client: Arc<dyn ClusterClient>,
    /// The scheduler's pool for the passes over all nodes; `None`: sequential.
    pub(crate) pool: Option<Arc<rayon::ThreadPool>>,
    /// The count and score maps kept between cycles.
    kept: KeptMaps,
}

/// InterPodAffinity's sums kept between cycles (see [`crate::plugins::kept`]), one per map
/// kube builds.
#[derive(Default)]
pub(crate) struct KeptMaps {
    existing_anti: Kept<IncomingKey, TopologyCounts>,
    affinity: Kept<IncomingKey, TopologyCounts>,
    anti: Kept<IncomingKey, TopologyCounts>,
    scores: Kept<IncomingKey, scoring::TopologyScores>,
}

/// The parts of the incoming pod a kept map depends on; the parts a map does not depend on
/// are left `None` (so pods that differ only there share an entry).
#[derive(Clone)]
pub(crate) struct IncomingKey {
    /// The pod's spec, compared on its pod (anti-)affinity terms.
    spec: Option<Arc<PodSpecInfo>>,
    labels: Option<Arc<Labels>>,
    namespace: Sym,
    /// The labels of the pod's namespace (`Some(None)`: no such namespace).
    ns_labels: Option<Option<Arc<Labels>>>,
}

impl PartialEq for IncomingKey {
    fn eq(&self, other: &Self) -> bool {
        let spec_eq = match (&self.spec, &other.spec) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a.pod_affinity == b.pod_affinity,
            (None, None) => true,
            _ => false,
        };
        // `Arc<T: Eq>` compares addresses first.
        spec_eq
            && self.namespace == other.namespace
            && self.labels == other.labels
            && self.ns_labels == other.ns_labels
    }
}

impl std::fmt::Debug for InterPodAffinity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InterPodAffinity")
            .field("args", &self.args)
            .finish_non_exhaustive()
    }
}

impl InterPodAffinity {
    pub(crate) fn new(
        args: InterPodAffinityArgs,
        client: Arc<dyn ClusterClient>,
    ) -> InterPodAffinity {
        InterPodAffinity {
            args,
            client,
            pool: None,
            kept: KeptMaps::default(),
        }
    }

    /// Runs the passes over all nodes on `pool` (the scheduler's `parallelism`).
    pub(crate) fn with_pool(mut self, pool: Option<Arc<rayon::ThreadPool>>) -> InterPodAffinity {
        self.pool = pool;
        self
    }
}

/// The registry factory: decodes and validates the args.
pub(crate) fn factory(
    ctx: &PluginContext,
    args: Option<&serde_json::Value>,
) -> Result<Arc<dyn Plugin>, String> {
    let args: InterPodAffinityArgs = decode_args(args)?;
    args.validate()?;
    Ok(Arc::new(
        InterPodAffinity::new(args, ctx.client.clone()).with_pool(ctx.pool.clone()),
    ))
}

impl Plugin for InterPodAffinity {
    fn signs_pods(&self) -> bool {
        true
    }
    fn sign_pod(&self, pod: &crate::api::Pod, sig: &mut SignFragments) -> Result<(), &'static str> {
        // kube: pod (anti-)affinity depends on where other pods run, not on one node.
        if pod.spec.pod_affinity_present || !pod.spec.pod_affinity.is_empty() {
            return Err("pods with InterPodAffinity are not signable");
        }
        // Without this option, existing pods' preferred terms may select the pod's labels.
        if !self.args.ignore_preferred_terms_of_existing_pods {
            sig.put(signer::LABELS, || signature::labels(pod));
        }
        Ok(())
    }
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

// ---- term matching ------------------------------------------------------------------------

/// The namespace part of a term, before any namespace label is looked at.
enum NsVerdict<'t> {
    In,
    Out,
    /// Decided by this (non-empty) `namespaceSelector` over the target's namespace labels.
    Selector(&'t LabelSelector),
}

fn ns_verdict(term: &PodAffinityTerm, owner_ns: Sym, target_ns: Sym) -> NsVerdict<'_> {
    if term.namespaces.is_empty() && term.namespace_selector.is_none() {
        return if target_ns == owner_ns {
            NsVerdict::In
        } else {
            NsVerdict::Out
        };
    }
    if term.namespaces.contains(&target_ns) {
        return NsVerdict::In;
    }
    match &term.namespace_selector {
        None => NsVerdict::Out,
        // An empty selector selects every namespace.
        Some(s) if s.requirements.is_empty() => NsVerdict::In,
        Some(s) => NsVerdict::Selector(s),
    }
}

/// The label part of a term owned by a pod with `owner` labels: the selector plus
/// `matchLabelKeys` (`key In (owner's value)`) and `mismatchLabelKeys` (`key NotIn (…)`), keys
/// the owner lacks ignored. Allocation-free equivalent of [`PodAffinityTerm::selector_for`].
fn labels_match(term: &PodAffinityTerm, owner: &Labels, target: &Labels) -> bool {
    let Some(sel) = &term.label_selector else {
        return false;
    };
    if !sel.matches(target) {
        return false;
    }
    let match_ok = term
        .match_label_keys
        .iter()
        .all(|&k| owner.get(k).is_none_or(|v| target.get(k) == Some(v)));
    match_ok
        && term
            .mismatch_label_keys
            .iter()
            .all(|&k| owner.get(k).is_none_or(|v| target.get(k) != Some(v)))
}

/// kube's `AffinityTerm.Matches(target, nsLabels)` for a term carried by `owner`.
/// `ns_selector` decides a non-empty `namespaceSelector` (called only when needed).
#[inline]
pub(crate) fn term_matches(
    term: &PodAffinityTerm,
    owner: &Pod,
    target: &Pod,
    ns_selector: impl FnOnce(&LabelSelector) -> bool,
) -> bool {
    let verdict = ns_verdict(term, owner.namespace, target.namespace);
    if matches!(verdict, NsVerdict::Out) || !labels_match(term, &owner.labels, &target.labels) {
        return false;
    }
    match verdict {
        NsVerdict::Selector(s) => ns_selector(s),
        _ => true,
    }
}

/// A selector over namespace labels where the labels are known (or absent: kube's nil set).
pub(crate) fn selector_matches_labels(sel: &LabelSelector, labels: Option<&Labels>) -> bool {
    match labels {
        Some(l) => sel.matches(l),
        None => sel.matches(&Labels::default()),
    }
}

/// kube's `podMatchesAllAffinityTerms` with the namespace selectors seen through
/// `ns_selector`: false for no terms.
pub(crate) fn matches_all_terms(
    terms: &[PodAffinityTerm],
    owner: &Pod,
    target: &Pod,
    mut ns_selector: impl FnMut(&LabelSelector) -> bool,
) -> bool {
    !terms.is_empty()
        && terms
            .iter()
            .all(|t| term_matches(t, owner, target, &mut ns_selector))
}

// ---- events -------------------------------------------------------------------------------

fn hint(queue: bool) -> QueueingHint {
    QueueingHint::queue_if(queue)
}

/// The terms of the queued pod seen by the hints: kube builds them afresh, with no namespace
/// labels at hand (a non-empty `namespaceSelector` sees an empty label set).
fn matches_all_no_ns(terms: &[PodAffinityTerm], owner: &Pod, target: &Pod) -> bool {
    matches_all_terms(terms, owner, target, |s| selector_matches_labels(s, None))
}

impl InterPodAffinity {
    /// kube's `isSchedulableAfterPodChange`.
    pub(crate) fn is_schedulable_after_pod_change(
        &self,
        pod: &Pod,
        original: Option<&Pod>,
        modified: Option<&Pod>,
    ) -> QueueingHint {
        if modified.is_some_and(|p| !p.is_assigned()) || original.is_some_and(|p| !p.is_assigned())
        {
            return QueueingHint::QueueSkip;
        }
        let aff = &pod.spec.pod_affinity;
        let terms = &aff.required_affinity;
        let anti = &aff.required_anti_affinity;
        match (original, modified) {
            (Some(old), Some(new)) => {
                // Updated: it may now match the affinity, or no longer match the anti-affinity.
                let to_affinity =
                    !matches_all_no_ns(terms, pod, old) && matches_all_no_ns(terms, pod, new);
                let from_anti =
                    matches_all_no_ns(anti, pod, old) && !matches_all_no_ns(anti, pod, new);
                hint(to_affinity || from_anti)
            }
            // Added: it may satisfy the affinity.
            (None, Some(new)) => hint(matches_all_no_ns(terms, pod, new)),
            // Deleted: it may have been what the anti-affinity refused.
            (Some(old), None) => hint(matches_all_no_ns(anti, pod, old)),
            (None, None) => QueueingHint::Queue,
        }
    }

    /// kube's `isSchedulableAfterNodeChange`.
    pub(crate) fn is_schedulable_after_node_change(
        &self,
        pod: &Pod,
        original: Option<&crate::api::Node>,
        modified: &crate::api::Node,
    ) -> QueueingHint {
        let aff = &pod.spec.pod_affinity;
        for t in &aff.required_affinity {
            let key = t.topology_key;
            let new_v = modified.labels.get(key);
            match original {
                // A new node in a domain of the key.
                None => {
                    if new_v.is_some() {
                        return QueueingHint::Queue;
                    }
                }
                Some(o) => {
                    let old_v = o.labels.get(key);
                    // The node gained the key, or moved to another domain.
                    if new_v.is_some() && old_v != new_v {
                        return QueueingHint::Queue;
                    }
                }
            }
        }
        for t in &aff.required_anti_affinity {
            let Some(o) = original else {
                // Any new node may do: without the key it takes the pod, with it the domain
                // may be free of the pods the pod refuses.
                return QueueingHint::Queue;
            };
            let old_v = o.labels.get(t.topology_key);
            let new_v = modified.labels.get(t.topology_key);
            // The node left the key's domains, or moved to another domain.
            if old_v.is_some() && old_v != new_v {
                return QueueingHint::Queue;
            }
        }
        QueueingHint::QueueSkip
    }
}

impl EnqueueExtensions for InterPodAffinity {
    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![
            // Add: a pod the incoming pod needs; UpdatePodLabel: a pod starts or stops
            // matching; Delete: a pod the incoming pod (or whose anti-affinity) refused.
            ClusterEvent::new(
                EventResource::Pod,
                ActionType::ADD
                    .union(ActionType::UPDATE_POD_LABEL)
                    .union(ActionType::DELETE),
            ),
            ClusterEvent::new(
                EventResource::Node,
                ActionType::ADD.union(ActionType::UPDATE_NODE_LABEL),
            ),
        ]
    }

    fn queueing_hint(
        &self,
        _event: &ClusterEvent,
        pod: &Pod,
        old: &EventObject,
        new: &EventObject,
    ) -> Result<QueueingHint, String> {
        match (old, new) {
            (EventObject::Node(_) | EventObject::None, EventObject::Node(n)) => {
                let original = match old {
                    EventObject::Node(o) => Some(&**o),
                    _ => None,
                };
                Ok(self.is_schedulable_after_node_change(pod, original, n))
            }
            (EventObject::Pod(_), _) | (_, EventObject::Pod(_)) => {
                Ok(self.is_schedulable_after_pod_change(pod, old.pod(), new.pod()))
            }
            // No object to judge by.
            _ => Ok(QueueingHint::Queue),
        }
    }
}
