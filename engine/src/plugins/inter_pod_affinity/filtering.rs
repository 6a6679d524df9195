//! PreFilter, its AddPod/RemovePod extensions, and Filter (kube's `filtering.go`).

use super::{
    IncomingKey, InterPodAffinity, NsLabelsCache, TopologyPair, matches_all_terms,
    selector_matches_labels, term_matches,
};
use crate::api::{Labels, Pod, PodAffinityTerm, Sym};
use crate::framework::Snapshot;
use crate::framework::cycle_state::CycleState;
use crate::framework::interface::{
    ClusterClient, FilterPlugin, PreFilterExtensions, PreFilterPlugin, PreFilterResult,
};
use crate::framework::node_info::NodeInfo;
use crate::framework::status::{Code, Status};
use crate::plugins::kept::{Item, Tally, Worker, push_on_node};
use ahash::AHashMap;
use std::sync::Arc;

/// The cycle-state key of [`PreFilterState`] (kube's `preFilterStateKey`).
pub(crate) const PRE_FILTER_STATE_KEY: &str = "PreFilterInterPodAffinity";

pub(crate) const ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH: &str =
    "node(s) didn't satisfy existing pods anti-affinity rules";
pub(crate) const ERR_REASON_AFFINITY_RULES_NOT_MATCH: &str =
    "node(s) didn't match pod affinity rules";
pub(crate) const ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH: &str =
    "node(s) didn't match pod anti-affinity rules";

/// kube's `topologyToMatchedTermCount`: topology pair → count, zero entries removed, with the
/// topology keys present (and how many entries each has) so a node is checked with one lookup
/// per key.
#[derive(Clone, Debug, Default)]
pub(crate) struct TopologyCounts {
    counts: AHashMap<TopologyPair, i64>,
    keys: Vec<(Sym, u32)>,
}

/// Equal counts (the order of `keys` depends on the order of the updates, and means nothing).
impl PartialEq for TopologyCounts {
    fn eq(&self, other: &Self) -> bool {
        self.counts == other.counts
    }
}

impl Eq for TopologyCounts {}

impl Tally for TopologyCounts {
    fn apply(&mut self, item: &Item, sign: i64) {
        self.add(item.key, item.value, item.weight * sign);
    }
    fn merge_from(&mut self, other: Self) {
        self.merge(&other);
    }
}

impl TopologyCounts {
    pub(crate) fn get(&self, key: Sym, value: Sym) -> i64 {
        self.counts.get(&(key, value)).copied().unwrap_or(0)
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.counts.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// Adds `delta` to `(key, value)`, removing the entry when it reaches 0.
    pub(crate) fn add(&mut self, key: Sym, value: Sym, delta: i64) {
        if delta == 0 {
            return;
        }
        use std::collections::hash_map::Entry;
        match self.counts.entry((key, value)) {
            Entry::Occupied(mut e) => {
                *e.get_mut() += delta;
                if *e.get() == 0 {
                    e.remove();
                    let i = self.keys.iter().position(|&(k, _)| k == key).unwrap();
                    self.keys[i].1 -= 1;
                    if self.keys[i].1 == 0 {
                        self.keys.swap_remove(i);
                    }
                }
            }
            Entry::Vacant(e) => {
                e.insert(delta);
                match self.keys.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, n)) => *n += 1,
                    None => self.keys.push((key, 1)),
                }
            }
        }
    }

    /// kube's `update`: `delta` on the pair of `key` for a node with `labels`, if it has it.
    #[inline]
    pub(crate) fn add_on_node(&mut self, labels: &Labels, key: Sym, delta: i64) {
        if let Some(v) = labels.get(key) {
            self.add(key, v, delta);
        }
    }

    pub(crate) fn merge(&mut self, other: &TopologyCounts) {
        for (&(k, v), &c) in &other.counts {
            self.add(k, v, c);
        }
    }

    /// Whether a node with `labels` is in some pair with a positive count (kube iterates the
    /// node's labels; only the keys present here can hit).
    pub(crate) fn any_positive_on(&self, labels: &Labels) -> bool {
        self.keys
            .iter()
            .any(|&(k, _)| labels.get(k).is_some_and(|v| self.get(k, v) > 0))
    }
}

/// What PreFilter computes for Filter (kube's `preFilterState`).
#[derive(Clone, Debug)]
pub(crate) struct PreFilterState {
    /// Pairs → running pods whose required anti-affinity terms match the incoming pod.
    pub(crate) existing_anti_affinity_counts: Arc<TopologyCounts>,
    /// Pairs → running pods matching all the incoming pod's required affinity terms (counted
    /// once per term).
    pub(crate) affinity_counts: Arc<TopologyCounts>,
    /// Pairs → running pods matching each of the incoming pod's required anti-affinity terms.
    pub(crate) anti_affinity_counts: Arc<TopologyCounts>,
    /// The incoming pod (its terms).
    pod: Pod,
    /// The incoming pod's namespace labels (`None`: no such namespace).
    namespace_labels: Option<Arc<Labels>>,
    /// The incoming pod matches all its own required affinity terms.
    self_affinity: bool,
}

impl PreFilterState {
    fn required_affinity(&self) -> &[PodAffinityTerm] {
        &self.pod.spec.pod_affinity.required_affinity
    }
    fn required_anti_affinity(&self) -> &[PodAffinityTerm] {
        &self.pod.spec.pod_affinity.required_anti_affinity
    }

    /// kube's `updateWithPod`: the counts as if `other` (on `node`) were added (`mult` 1) or
    /// removed (−1). The maps are shared with the plugin's kept sums: they are copied first.
    fn update_with_pod(
        &mut self,
        client: &dyn ClusterClient,
        other: &Pod,
        node: &NodeInfo,
        mult: i64,
    ) {
        let labels = &*node.node.labels;
        let incoming_ns = self.namespace_labels.clone();
        for t in &other.spec.pod_affinity.required_anti_affinity {
            if term_matches(t, other, &self.pod, |s| {
                selector_matches_labels(s, incoming_ns.as_deref())
            }) {
                Arc::make_mut(&mut self.existing_anti_affinity_counts).add_on_node(
                    labels,
                    t.topology_key,
                    mult,
                );
            }
        }
        let mut ns = NsLabelsCache::new(client);
        let pod = &self.pod;
        let aff = &pod.spec.pod_affinity;
        if matches_all_terms(&aff.required_affinity, pod, other, |s| {
            ns.selects(other.namespace, s)
        }) {
            for t in &aff.required_affinity {
                Arc::make_mut(&mut self.affinity_counts).add_on_node(labels, t.topology_key, mult);
            }
        }
        for t in &aff.required_anti_affinity {
            if term_matches(t, pod, other, |s| ns.selects(other.namespace, s)) {
                Arc::make_mut(&mut self.anti_affinity_counts).add_on_node(
                    labels,
                    t.topology_key,
                    mult,
                );
            }
        }
    }

    /// kube's `satisfyPodAffinity`.
    fn satisfies_pod_affinity(&self, labels: &Labels) -> bool {
        let mut pods_exist = true;
        for t in self.required_affinity() {
            match labels.get(t.topology_key) {
                Some(v) => {
                    if self.affinity_counts.get(t.topology_key, v) <= 0 {
                        pods_exist = false;
                    }
                }
                // Every topology key must be on the node.
                None => return false,
            }
        }
        // The first of a group of pods with affinity to each other: nothing matches anywhere
        // yet, and the pod matches its own terms.
        pods_exist || (self.affinity_counts.is_empty() && self.self_affinity)
    }

    /// kube's `satisfyPodAntiAffinity`.
    fn satisfies_pod_anti_affinity(&self, labels: &Labels) -> bool {
        if self.anti_affinity_counts.is_empty() {
            return true;
        }
        !self.required_anti_affinity().iter().any(|t| {
            labels
                .get(t.topology_key)
                .is_some_and(|v| self.anti_affinity_counts.get(t.topology_key, v) > 0)
        })
    }

    /// kube's `satisfyExistingPodsAntiAffinity`.
    fn satisfies_existing_pods_anti_affinity(&self, labels: &Labels) -> bool {
        !self.existing_anti_affinity_counts.any_positive_on(labels)
    }
}

/// Term verdicts of the running pods met in one pass, by a key naming everything they depend
/// on (addresses of the pod's shared `Arc`s, and its namespace). Pods stamped from one
/// template share those `Arc`s, so a pass over thousands of pods from a hundred templates
/// and namespaces matches the terms a hundred times instead of thousands. Addresses are
/// compared, never dereferenced: the snapshot keeps every pod alive for the whole pass, so
/// no address is reused within it. The map stops growing at [`VerdictMemo::MAX`] keys
/// (pods that share nothing), and up to 64 verdicts are kept per key.
pub(crate) struct VerdictMemo<K> {
    map: AHashMap<K, u64>,
}

impl<K> Default for VerdictMemo<K> {
    fn default() -> Self {
        VerdictMemo {
            map: AHashMap::new(),
        }
    }
}

/// A pod's verdicts: known (bit j for verdict j) or to be computed on demand.
#[derive(Clone, Copy)]
pub(crate) enum Verdicts {
    Known(u64),
    Unknown,
}

impl Verdicts {
    #[inline]
    pub(crate) fn get(self, j: usize, compute: impl FnOnce(usize) -> bool) -> bool {
        match self {
            Verdicts::Known(bits) => bits >> j & 1 == 1,
            Verdicts::Unknown => compute(j),
        }
    }
}

impl<K: std::hash::Hash + Eq + Copy> VerdictMemo<K> {
    const MAX: usize = 4096;

    /// Verdicts `0..n` for `key`, computed by `compute` the first time.
    pub(crate) fn verdicts(
        &mut self,
        key: K,
        n: usize,
        mut compute: impl FnMut(usize) -> bool,
    ) -> Verdicts {
        if n > 64 {
            return Verdicts::Unknown;
        }
        if let Some(&bits) = self.map.get(&key) {
            return Verdicts::Known(bits);
        }
        if self.map.len() >= Self::MAX {
            return Verdicts::Unknown;
        }
        let mut bits = 0u64;
        for j in 0..n {
            bits |= u64::from(compute(j)) << j;
        }
        self.map.insert(key, bits);
        Verdicts::Known(bits)
    }
}

impl InterPodAffinity {
    /// kube's `getExistingAntiAffinityCounts`, kept between cycles (it depends on the incoming
    /// pod's labels, namespace and namespace labels).
    fn existing_anti_affinity_counts(
        &self,
        pod: &Pod,
        ns_labels: Option<&Arc<Labels>>,
        snapshot: &Snapshot,
    ) -> Arc<TopologyCounts> {
        let key = IncomingKey {
            spec: None,
            labels: Some(pod.labels.clone()),
            namespace: pod.namespace,
            ns_labels: Some(ns_labels.cloned()),
        };
        let ns_labels = ns_labels.map(|l| &**l);
        self.kept.existing_anti.totals(
            key,
            Some(&*self.client),
            snapshot,
            self.pool.as_deref(),
            Some(&snapshot.have_pods_with_required_anti_affinity),
            |w: &mut Worker<'_, VerdictMemo<(usize, usize, Sym)>>, node, out| {
                for existing in &node.pods_with_required_anti_affinity {
                    let terms = &existing.spec.pod_affinity.required_anti_affinity;
                    let matches = |j: usize| {
                        term_matches(&terms[j], existing, pod, |s| {
                            selector_matches_labels(s, ns_labels)
                        })
                    };
                    // The verdicts depend on the running pod's terms, labels (matchLabelKeys)
                    // and namespace only: pods stamped from one template share them.
                    let key = (
                        Arc::as_ptr(&existing.spec) as usize,
                        Arc::as_ptr(&existing.labels) as usize,
                        existing.namespace,
                    );
                    let bits = w.memo.verdicts(key, terms.len(), matches);
                    for (j, t) in terms.iter().enumerate() {
                        if bits.get(j, matches) {
                            push_on_node(out, &node.node.labels, t.topology_key, 1, 1);
                        }
                    }
                }
            },
        )
    }

    /// The key of the incoming pod's own counts: its terms, its namespace (the default of
    /// its terms) and, when a term has `matchLabelKeys`/`mismatchLabelKeys`, its labels.
    fn incoming_key(pod: &Pod) -> IncomingKey {
        let aff = &pod.spec.pod_affinity;
        let uses_labels = aff
            .required_affinity
            .iter()
            .chain(&aff.required_anti_affinity)
            .any(|t| !t.match_label_keys.is_empty() || !t.mismatch_label_keys.is_empty());
        IncomingKey {
            spec: Some(pod.spec.clone()),
            labels: uses_labels.then(|| pod.labels.clone()),
            namespace: pod.namespace,
            ns_labels: None,
        }
    }

    /// kube's `getIncomingAffinityAntiAffinityCounts`, kept between cycles: `(affinity,
    /// anti-affinity)`.
    fn incoming_counts(
        &self,
        pod: &Pod,
        snapshot: &Snapshot,
    ) -> (Arc<TopologyCounts>, Arc<TopologyCounts>) {
        let aff = &pod.spec.pod_affinity;
        let (terms, anti) = (&aff.required_affinity, &aff.required_anti_affinity);
        let client = Some(&*self.client);
        let pool = self.pool.as_deref();
        // A running pod's verdicts are remembered by the address of its labels and its
        // namespace, all the incoming pod's terms look at.
        type Memo = VerdictMemo<(usize, Sym)>;
        let key = Self::incoming_key(pod);
        let affinity = if terms.is_empty() {
            Arc::default()
        } else {
            self.kept.affinity.totals(
                key.clone(),
                client,
                snapshot,
                pool,
                None,
                |w: &mut Worker<'_, Memo>, node, out| {
                    let labels = &*node.node.labels;
                    // A node with none of the keys adds nothing: skip its pods.
                    if !terms.iter().any(|t| labels.has(t.topology_key)) {
                        return;
                    }
                    let Worker { ns, memo } = w;
                    let mut n = 0u32;
                    for existing in &node.pods {
                        let mut matches = |_: usize| {
                            matches_all_terms(terms, pod, existing, |s| {
                                ns.selects(existing.namespace, s)
                            })
                        };
                        let key = (Arc::as_ptr(&existing.labels) as usize, existing.namespace);
                        n += u32::from(memo.verdicts(key, 1, &mut matches).get(0, &mut matches));
                    }
                    if n > 0 {
                        for t in terms {
                            push_on_node(out, labels, t.topology_key, i64::from(n), n);
                        }
                    }
                },
            )
        };
        let anti_counts = if anti.is_empty() {
            Arc::default()
        } else {
            self.kept.anti.totals(
                key,
                client,
                snapshot,
                pool,
                None,
                |w: &mut Worker<'_, Memo>, node, out| {
                    let labels = &*node.node.labels;
                    if !anti.iter().any(|t| labels.has(t.topology_key)) {
                        return;
                    }
                    let Worker { ns, memo } = w;
                    for existing in &node.pods {
                        let mut matches = |j: usize| {
                            term_matches(&anti[j], pod, existing, |s| {
                                ns.selects(existing.namespace, s)
                            })
                        };
                        let key = (Arc::as_ptr(&existing.labels) as usize, existing.namespace);
                        let bits = memo.verdicts(key, anti.len(), &mut matches);
                        for (j, t) in anti.iter().enumerate() {
                            if bits.get(j, &mut matches) {
                                push_on_node(out, labels, t.topology_key, 1, 1);
                            }
                        }
                    }
                },
            )
        };
        (affinity, anti_counts)
    }

    /// Builds the PreFilter state for `pod` (exposed for tests and tools).
    pub(crate) fn compute_pre_filter_state(
        &self,
        pod: &Pod,
        snapshot: &Snapshot,
    ) -> PreFilterState {
        let namespace_labels = self.client.namespace_labels(pod.namespace);
        let existing = self.existing_anti_affinity_counts(pod, namespace_labels.as_ref(), snapshot);
        let (affinity, anti) = self.incoming_counts(pod, snapshot);
        let mut ns = NsLabelsCache::new(&*self.client);
        let self_affinity =
            matches_all_terms(&pod.spec.pod_affinity.required_affinity, pod, pod, |s| {
                ns.selects(pod.namespace, s)
            });
        PreFilterState {
            existing_anti_affinity_counts: existing,
            affinity_counts: affinity,
            anti_affinity_counts: anti,
            pod: pod.clone(),
            namespace_labels,
            self_affinity,
        }
    }
}

impl PreFilterPlugin for InterPodAffinity {
    fn pre_filter(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        snapshot: &Snapshot,
    ) -> (Option<PreFilterResult>, Status) {
        // Fast path for the common pod: no terms of its own and no running pod with required
        // anti-affinity anywhere (the Skip below, without building anything).
        let aff = &pod.spec.pod_affinity;
        if aff.required_affinity.is_empty()
            && aff.required_anti_affinity.is_empty()
            && snapshot.have_pods_with_required_anti_affinity.is_empty()
        {
            return (None, Status::skip());
        }
        let s = self.compute_pre_filter_state(pod, snapshot);
        if s.existing_anti_affinity_counts.is_empty()
            && s.required_affinity().is_empty()
            && s.required_anti_affinity().is_empty()
        {
            return (None, Status::skip());
        }
        state.write(PRE_FILTER_STATE_KEY, s);
        (None, Status::success())
    }

    fn pre_filter_extensions(&self) -> Option<&dyn PreFilterExtensions> {
        Some(self)
    }
}

fn missing_state() -> Status {
    Status::error(format!(
        "error reading {PRE_FILTER_STATE_KEY:?} from cycleState: not found"
    ))
}

impl PreFilterExtensions for InterPodAffinity {
    fn add_pod(&self, state: &mut CycleState, _: &Pod, to_add: &Pod, node: &NodeInfo) -> Status {
        let Some(s) = state.read_mut::<PreFilterState>(PRE_FILTER_STATE_KEY) else {
            return missing_state();
        };
        s.update_with_pod(&*self.client, to_add, node, 1);
        Status::success()
    }

    fn remove_pod(
        &self,
        state: &mut CycleState,
        _: &Pod,
        to_remove: &Pod,
        node: &NodeInfo,
    ) -> Status {
        let Some(s) = state.read_mut::<PreFilterState>(PRE_FILTER_STATE_KEY) else {
            return missing_state();
        };
        s.update_with_pod(&*self.client, to_remove, node, -1);
        Status::success()
    }
}

impl FilterPlugin for InterPodAffinity {
    fn filter(&self, state: &CycleState, _: &Pod, node: &NodeInfo) -> Status {
        let Some(s) = state.read::<PreFilterState>(PRE_FILTER_STATE_KEY) else {
            return missing_state();
        };
        let labels = &*node.node.labels;
        if !s.satisfies_pod_affinity(labels) {
            return Status::new(
                Code::UnschedulableAndUnresolvable,
                ERR_REASON_AFFINITY_RULES_NOT_MATCH,
            );
        }
        if !s.satisfies_pod_anti_affinity(labels) {
            return Status::new(
                Code::Unschedulable,
                ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
            );
        }
        if !s.satisfies_existing_pods_anti_affinity(labels) {
            return Status::new(
                Code::Unschedulable,
                ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
            );
        }
        Status::success()
    }
}
