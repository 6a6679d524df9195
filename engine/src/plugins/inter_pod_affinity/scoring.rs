//! PreScore, Score and NormalizeScore (kube's `scoring.go`).

use super::filtering::fold_nodes;
use super::{InterPodAffinity, NsLabelsCache, TopologyPair, selector_matches_labels, term_matches};
use crate::api::{Labels, Pod, Sym};
use crate::cache::Snapshot;
use crate::framework::cycle_state::CycleState;
use crate::framework::interface::{MAX_NODE_SCORE, PreScorePlugin, ScorePlugin};
use crate::framework::node_info::NodeInfo;
use crate::framework::status::Status;
use ahash::AHashMap;
use std::sync::Arc;

/// The cycle-state key of [`PreScoreState`] (kube's `preScoreStateKey`).
pub const PRE_SCORE_STATE_KEY: &str = "PreScoreInterPodAffinity";

/// kube's `scoreMap`: topology pair → summed weight. Entries that sum to 0 stay (kube keeps
/// them); the keys present are listed so Score does one lookup per key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopologyScores {
    scores: AHashMap<TopologyPair, i64>,
    keys: Vec<Sym>,
}

impl TopologyScores {
    pub fn add(&mut self, key: Sym, value: Sym, delta: i64) {
        let e = self.scores.entry((key, value)).or_insert_with(|| {
            if !self.keys.contains(&key) {
                self.keys.push(key);
            }
            0
        });
        *e += delta;
    }

    pub fn get(&self, key: Sym, value: Sym) -> Option<i64> {
        self.scores.get(&(key, value)).copied()
    }

    /// No topology key at all (kube's `len(topologyScore) == 0`).
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    pub fn merge(&mut self, other: &TopologyScores) {
        for (&(k, v), &s) in &other.scores {
            self.add(k, v, s);
        }
    }

    /// The sum over the pairs a node with `labels` is in.
    pub fn score_on(&self, labels: &Labels) -> i64 {
        self.keys
            .iter()
            .filter_map(|&k| labels.get(k).and_then(|v| self.get(k, v)))
            .sum()
    }
}

/// What PreScore computes for Score (kube's `preScoreState`).
#[derive(Clone, Debug, Default)]
pub struct PreScoreState {
    pub topology_score: TopologyScores,
}

struct ScoreAcc<'c> {
    scores: TopologyScores,
    ns: NsLabelsCache<'c>,
    /// What each kind of running pod met in this pass contributes, `(topology key, weight)`
    /// (see [`ContributionKey`]); at most [`MEMO_MAX`] kinds, then `scratch`.
    memo: AHashMap<ContributionKey, Vec<(Sym, i64)>>,
    scratch: Vec<(Sym, i64)>,
}

/// Kinds of running pods remembered per pass (pods that share no `Arc` would otherwise grow
/// the map to the cluster's pod count).
const MEMO_MAX: usize = 4096;

/// What a running pod's contributions depend on, for a given incoming pod: its terms (its
/// spec), its labels (matched by the incoming pod's terms, and the owner side of its own
/// `matchLabelKeys`) and its namespace. Pods stamped from one template share the spec and the
/// labels (`Arc`s), so the pods of a hundred templates and namespaces have a hundred keys, and
/// their terms are matched once per key and cycle rather than once per pod. Equal pointers mean equal contents; unequal ones
/// only cost a recomputation.
///
/// The addresses are compared, never dereferenced: they name `Arc`s of pods the snapshot holds
/// for the whole pass, so an address cannot be reused for other contents during it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct ContributionKey {
    spec: usize,
    labels: usize,
    namespace: Sym,
}

impl InterPodAffinity {
    /// kube's `processExistingPod`: the contributions of one running pod on `node`.
    fn process_existing_pod(
        &self,
        acc: &mut ScoreAcc<'_>,
        incoming: &Pod,
        incoming_ns: Option<&Labels>,
        existing: &Pod,
        node: &NodeInfo,
    ) {
        let labels = &*node.node.labels;
        if labels.is_empty() {
            return;
        }
        let key = ContributionKey {
            spec: Arc::as_ptr(&existing.spec) as usize,
            labels: Arc::as_ptr(&existing.labels) as usize,
            namespace: existing.namespace,
        };
        let ScoreAcc {
            scores,
            ns,
            memo,
            scratch,
        } = acc;
        let full = memo.len() >= MEMO_MAX;
        let contributions = match memo.entry(key) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) if !full => {
                let mut c = Vec::new();
                self.contributions(ns, incoming, incoming_ns, existing, &mut c);
                e.insert(c)
            }
            std::collections::hash_map::Entry::Vacant(_) => {
                scratch.clear();
                self.contributions(ns, incoming, incoming_ns, existing, scratch);
                scratch
            }
        };
        for &(key, w) in contributions.iter() {
            if let Some(v) = labels.get(key) {
                scores.add(key, v, w);
            }
        }
    }

    /// The `(topology key, weight)` contributions of a running pod, for the incoming pod
    /// (kube's `processExistingPod` before it looks at the node).
    fn contributions(
        &self,
        ns: &mut NsLabelsCache<'_>,
        incoming: &Pod,
        incoming_ns: Option<&Labels>,
        existing: &Pod,
        out: &mut Vec<(Sym, i64)>,
    ) {
        let mut add = |key: Sym, w: i64| out.push((key, w));
        let mine = &incoming.spec.pod_affinity;
        // The incoming pod's preferred terms that the running pod matches: + (affinity) or
        // − (anti-affinity) on the running pod's domain.
        for (terms, sign) in [
            (&mine.preferred_affinity, 1),
            (&mine.preferred_anti_affinity, -1),
        ] {
            for w in terms {
                if term_matches(&w.term, incoming, existing, |s| {
                    ns.selects(existing.namespace, s)
                }) {
                    add(w.term.topology_key, i64::from(w.weight * sign));
                }
            }
        }
        let theirs = &existing.spec.pod_affinity;
        let ns_sel = |s: &crate::api::LabelSelector| selector_matches_labels(s, incoming_ns);
        // The running pod's required affinity terms the incoming pod matches count at
        // hardPodAffinityWeight.
        let hard = self.args.hard_pod_affinity_weight;
        if hard > 0 {
            for t in &theirs.required_affinity {
                if term_matches(t, existing, incoming, ns_sel) {
                    add(t.topology_key, i64::from(hard));
                }
            }
        }
        // Its preferred terms the incoming pod matches.
        for (terms, sign) in [
            (&theirs.preferred_affinity, 1),
            (&theirs.preferred_anti_affinity, -1),
        ] {
            for w in terms {
                if term_matches(&w.term, existing, incoming, ns_sel) {
                    add(w.term.topology_key, i64::from(w.weight * sign));
                }
            }
        }
    }

    /// Builds the PreScore state for `pod` over the whole cluster (exposed for tests).
    pub fn compute_pre_score_state(&self, pod: &Pod, snapshot: &Snapshot) -> PreScoreState {
        let aff = &pod.spec.pod_affinity;
        let has_constraints =
            !aff.preferred_affinity.is_empty() || !aff.preferred_anti_affinity.is_empty();
        let incoming_ns = self.client.namespace_labels(pod.namespace);
        let incoming_ns = incoming_ns.as_deref();
        let client = &*self.client;
        let init = || ScoreAcc {
            scores: TopologyScores::default(),
            ns: NsLabelsCache::new(client),
            memo: AHashMap::new(),
            scratch: Vec::new(),
        };
        let merge = |a: &mut ScoreAcc<'_>, b: ScoreAcc<'_>| a.scores.merge(&b.scores);
        let acc = if has_constraints {
            // Every pod may match the incoming pod's preferred terms.
            fold_nodes(
                self.pool.as_deref(),
                &snapshot.nodes,
                init,
                |acc, node| {
                    for existing in &node.pods {
                        self.process_existing_pod(acc, pod, incoming_ns, existing, node);
                    }
                },
                merge,
            )
        } else {
            // Only pods with terms of their own contribute.
            fold_nodes(
                self.pool.as_deref(),
                &snapshot.have_pods_with_affinity,
                init,
                |acc, &i| {
                    let node = &snapshot.nodes[i];
                    for existing in &node.pods_with_affinity {
                        self.process_existing_pod(acc, pod, incoming_ns, existing, node);
                    }
                },
                merge,
            )
        };
        PreScoreState {
            topology_score: acc.scores,
        }
    }
}

impl PreScorePlugin for InterPodAffinity {
    fn pre_score(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        snapshot: &Snapshot,
    ) -> Status {
        if nodes.is_empty() {
            return Status::skip();
        }
        let aff = &pod.spec.pod_affinity;
        let has_constraints =
            !aff.preferred_affinity.is_empty() || !aff.preferred_anti_affinity.is_empty();
        if self.args.ignore_preferred_terms_of_existing_pods && !has_constraints {
            return Status::skip();
        }
        // Nothing can contribute: no preferred terms and no running pod with terms.
        if !has_constraints && snapshot.have_pods_with_affinity.is_empty() {
            return Status::skip();
        }
        let s = self.compute_pre_score_state(pod, snapshot);
        if s.topology_score.is_empty() {
            return Status::skip();
        }
        state.write(PRE_SCORE_STATE_KEY, s);
        Status::success()
    }
}

impl ScorePlugin for InterPodAffinity {
    fn score(&self, state: &CycleState, _: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        let Some(s) = state.read::<PreScoreState>(PRE_SCORE_STATE_KEY) else {
            return Err(Status::error(format!(
                "error reading {PRE_SCORE_STATE_KEY:?} from cycleState: not found"
            )));
        };
        Ok(s.topology_score.score_on(&node.node.labels))
    }

    fn has_normalize(&self) -> bool {
        true
    }

    /// kube's NormalizeScore: `MaxNodeScore * (s - min) / (max - min)` in floating point,
    /// truncated; all 0 when every node has the same score.
    fn normalize_score(&self, state: &CycleState, _: &Pod, scores: &mut [i64]) -> Status {
        let Some(s) = state.read::<PreScoreState>(PRE_SCORE_STATE_KEY) else {
            return Status::error(format!(
                "error reading {PRE_SCORE_STATE_KEY:?} from cycleState: not found"
            ));
        };
        if s.topology_score.is_empty() {
            return Status::success();
        }
        normalize(scores);
        Status::success()
    }
}

/// The min–max rescaling of NormalizeScore.
pub fn normalize(scores: &mut [i64]) {
    let (Some(&min), Some(&max)) = (scores.iter().min(), scores.iter().max()) else {
        return;
    };
    let diff = max - min;
    for s in scores.iter_mut() {
        let f = if diff > 0 {
            MAX_NODE_SCORE as f64 * ((*s - min) as f64 / diff as f64)
        } else {
            0.0
        };
        *s = f as i64;
    }
}
