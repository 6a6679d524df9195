//! PreScore, Score and NormalizeScore (kube's `scoring.go`).

use super::{
    IncomingKey, InterPodAffinity, NsLabelsCache, TopologyPair, selector_matches_labels,
    term_matches,
};
use crate::api::{Labels, Pod, Sym};
use crate::framework::Snapshot;
use crate::framework::cycle_state::CycleState;
use crate::framework::interface::{MAX_NODE_SCORE, PreScorePlugin, ScorePlugin};
use crate::framework::node_info::NodeInfo;
use crate::framework::status::Status;
use crate::plugins::kept::{Item, Tally, Worker, push_on_node};
use ahash::AHashMap;
use std::sync::Arc;

/// The cycle-state key of [`PreScoreState`] (kube's `preScoreStateKey`).
pub(crate) const PRE_SCORE_STATE_KEY: &str = "PreScoreInterPodAffinity";

/// kube's `scoreMap`: topology pair → summed weight. A pair is present once something matched
/// there, even when the weights sum to 0 (kube keeps such entries); each entry counts its
/// matches so that taking contributions back removes it exactly when kube's map would not
/// have it. The keys present are listed, with their number of pairs, so Score does one lookup
/// per key.
#[derive(Clone, Debug, Default)]
pub(crate) struct TopologyScores {
    /// Pair → (summed weight, matches).
    scores: AHashMap<TopologyPair, (i64, u32)>,
    keys: Vec<(Sym, u32)>,
}

/// Equal pairs and weights (the order of `keys` means nothing).
impl PartialEq for TopologyScores {
    fn eq(&self, other: &Self) -> bool {
        self.scores == other.scores
    }
}

impl Eq for TopologyScores {}

impl TopologyScores {
    /// Adds `matches` matches summing to `delta` on `(key, value)`.
    pub(crate) fn add_matches(&mut self, key: Sym, value: Sym, delta: i64, matches: u32) {
        if matches == 0 {
            return;
        }
        let e = self.scores.entry((key, value)).or_insert_with(|| {
            match self.keys.iter_mut().find(|(k, _)| *k == key) {
                Some((_, n)) => *n += 1,
                None => self.keys.push((key, 1)),
            }
            (0, 0)
        });
        e.0 += delta;
        e.1 += matches;
    }

    /// Takes back what [`Self::add_matches`] added; the pair goes when no match is left.
    pub(crate) fn remove_matches(&mut self, key: Sym, value: Sym, delta: i64, matches: u32) {
        use std::collections::hash_map::Entry;
        let Entry::Occupied(mut e) = self.scores.entry((key, value)) else {
            debug_assert!(matches == 0, "taking back a pair never added");
            return;
        };
        let (w, n) = e.get_mut();
        *w -= delta;
        *n -= matches;
        if *n == 0 {
            e.remove();
            let i = self.keys.iter().position(|&(k, _)| k == key).unwrap();
            self.keys[i].1 -= 1;
            if self.keys[i].1 == 0 {
                self.keys.swap_remove(i);
            }
        }
    }

    pub(crate) fn get(&self, key: Sym, value: Sym) -> Option<i64> {
        self.scores.get(&(key, value)).map(|&(w, _)| w)
    }

    /// No topology key at all (kube's `len(topologyScore) == 0`).
    pub(crate) fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    pub(crate) fn merge(&mut self, other: &TopologyScores) {
        for (&(k, v), &(w, n)) in &other.scores {
            self.add_matches(k, v, w, n);
        }
    }

    /// The sum over the pairs a node with `labels` is in.
    pub(crate) fn score_on(&self, labels: &Labels) -> i64 {
        self.keys
            .iter()
            .filter_map(|&(k, _)| labels.get(k).and_then(|v| self.get(k, v)))
            .sum()
    }
}

impl Tally for TopologyScores {
    fn apply(&mut self, item: &Item, sign: i64) {
        let Item {
            key,
            value,
            weight,
            matches,
            ..
        } = *item;
        if sign > 0 {
            self.add_matches(key, value, weight, matches);
        } else {
            self.remove_matches(key, value, weight, matches);
        }
    }
    fn merge_from(&mut self, other: Self) {
        self.merge(&other);
    }
}

/// What PreScore computes for Score (kube's `preScoreState`).
#[derive(Clone, Debug, Default)]
pub(crate) struct PreScoreState {
    /// Shared with the plugin's kept sums.
    pub(crate) topology_score: Arc<TopologyScores>,
}

/// Per worker of a pass: what each kind of running pod met contributes, `(topology key,
/// weight)` (see [`ContributionKey`]); at most [`MEMO_MAX`] kinds, then `scratch`.
#[derive(Default)]
struct ScoreMemo {
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
    /// kube's `processExistingPod`: the contributions of one running pod, as items of the
    /// node it runs on.
    fn process_existing_pod(
        &self,
        w: &mut Worker<'_, ScoreMemo>,
        incoming: &Pod,
        incoming_ns: Option<&Labels>,
        existing: &Pod,
        labels: &Labels,
        out: &mut Vec<Item>,
    ) {
        let key = ContributionKey {
            spec: Arc::as_ptr(&existing.spec) as usize,
            labels: Arc::as_ptr(&existing.labels) as usize,
            namespace: existing.namespace,
        };
        let Worker {
            ns,
            memo: ScoreMemo { memo, scratch },
        } = w;
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
        for &(key, weight) in contributions.iter() {
            push_on_node(out, labels, key, weight, 1);
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

    /// Builds the PreScore state for `pod` over the whole cluster (exposed for tests), kept
    /// between cycles: it depends on the incoming pod's terms, labels, namespace and
    /// namespace labels.
    pub(crate) fn compute_pre_score_state(&self, pod: &Pod, snapshot: &Snapshot) -> PreScoreState {
        let aff = &pod.spec.pod_affinity;
        let has_constraints =
            !aff.preferred_affinity.is_empty() || !aff.preferred_anti_affinity.is_empty();
        let incoming_ns = self.client.namespace_labels(pod.namespace);
        let key = IncomingKey {
            spec: Some(pod.spec.clone()),
            labels: Some(pod.labels.clone()),
            namespace: pod.namespace,
            ns_labels: Some(incoming_ns.clone()),
        };
        let incoming_ns = incoming_ns.as_deref();
        // With preferred terms every pod may match them; without, only pods with terms of
        // their own contribute.
        let relevant = (!has_constraints).then_some(&snapshot.have_pods_with_affinity[..]);
        let topology_score = self.kept.scores.totals(
            key,
            Some(&*self.client),
            snapshot,
            self.pool.as_deref(),
            relevant,
            |w: &mut Worker<'_, ScoreMemo>, node, out| {
                if node.node.labels.is_empty() {
                    return;
                }
                let pods = if has_constraints {
                    &node.pods
                } else {
                    &node.pods_with_affinity
                };
                for existing in pods {
                    let labels = &node.node.labels;
                    self.process_existing_pod(w, pod, incoming_ns, existing, labels, out);
                }
            },
        );
        PreScoreState { topology_score }
    }
}

impl PreScorePlugin for InterPodAffinity {
    /// Only whether there are feasible nodes: the rest comes from the snapshot.
    fn pre_score_reads_nodes(&self, _: &Pod, _: &Snapshot) -> bool {
        false
    }
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
pub(crate) fn normalize(scores: &mut [i64]) {
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
