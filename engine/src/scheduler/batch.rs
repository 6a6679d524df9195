//! Opportunistic batching (kube's `OpportunisticBatch`,
//! `pkg/scheduler/framework/runtime/batch.go`; feature gate `OpportunisticBatching`, beta and
//! on by default since v1.35): consecutive pods with the same signature
//! (`framework/signature.rs`) reuse the first one's Filter and Score results, one node each,
//! instead of filtering and scoring the cluster again.
//!
//! # Protocol (one [`OpportunisticBatch`] per profile, used by the scheduling thread only)
//!
//! * **Store** (kube's `StoreScheduleResults`, after a cycle chose a node, before assume): the
//!   last cycle becomes `(cycle, chosen node, succeeded)`. If the pod was given a hint and
//!   took it, the state stays as it is (the hint was popped from it) and the pod counts as
//!   batched. Otherwise, when the pod has a signature and Score left other nodes, the state
//!   becomes (signature, the other scored nodes in score order with their raw per-plugin
//!   scores, now); else it is dropped (`empty_list` or `pod_not_batchable`).
//! * **Hint** (kube's `GetNodeHint`, after PreFilter): usable only when the state is not
//!   empty, this cycle is the last one plus one (any pod popped in between, of any profile,
//!   failed or skipped, breaks the chain), the last cycle succeeded, the pod has no
//!   `nominatedNodeName`, its signature equals the state's, and the state is younger than
//!   [`MAX_BATCH_AGE`] (each failed check is counted in `scheduler_batch_cache_flushed_total`
//!   by reason; the state is not dropped there, the next store replaces it). Then the node
//!   the last pod took is run through Filter again: if it still fits (the pods do not fill a
//!   node each) it is re-scored (PreScore over the cached nodes and it, its raw scores,
//!   NormalizeScore over all of them) and goes back among the candidates; if a Filter fails
//!   with an error, no hint. The hint is the best remaining candidate, popped.
//! * The hint is then judged like a nominated node (`schedule_one.rs`): Filter on it alone,
//!   with the nominated pods; if it passes it is the pod's node and nothing else is filtered
//!   or scored; if not, the cycle filters and scores as usual and stores fresh results.
//!
//! Invariants: the cached candidates never include the node the last pod took (popped or
//! chosen), except after a re-score that found it feasible again; every candidate passed
//! Filter for a pod of the same signature in the state the previous cycle saw; the raw scores
//! are per plugin name, so a re-normalization uses exactly the plugins that run this cycle.
//!
//! Ties: kube's sorted list is a heap keyed on the total with a per-node `Randomizer` (0 for
//! every node unless extenders score), so equal totals come out in heap order. tidegate draws
//! a randomizer per node from the scheduler's seeded generator: equal totals come out in a
//! uniformly random order, reproducible for one `--seed`.

use crate::api::Sym;
use crate::clock::Time;
use crate::framework::runtime::Framework;
use crate::framework::signature::PodSignature;
use crate::framework::{NodeInfo, Snapshot};
use rand::Rng;
use std::time::Duration;

use crate::framework::metrics::{BatchAttempt, BatchFlush};

use super::Scheduler;
use super::cycle::CycleContext;

/// kube's `maxBatchAge`: results older than this are not reused.
pub(crate) const MAX_BATCH_AGE: Duration = Duration::from_millis(500);

/// One scored node kept for later pods: its raw scores (per plugin of
/// [`SortedScoredNodes::plugins`]), its total and its tie-breaker.
#[derive(Clone, Debug)]
pub(crate) struct Candidate {
    pub name: Sym,
    pub raw: Vec<i64>,
    pub total: i64,
    pub(crate) randomizer: u64,
}

/// kube's `SortedScoredNodes`: scored nodes, best last (popped first).
#[derive(Clone, Debug, Default)]
pub(crate) struct SortedScoredNodes {
    /// The score plugins the raw scores belong to, in column order.
    pub plugins: Vec<&'static str>,
    nodes: Vec<Candidate>,
}

impl SortedScoredNodes {
    pub(crate) fn new(plugins: Vec<&'static str>, mut nodes: Vec<Candidate>) -> SortedScoredNodes {
        nodes.sort_unstable_by_key(|c| (c.total, c.randomizer));
        SortedScoredNodes { plugins, nodes }
    }
    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
    /// The best node, removed.
    pub(crate) fn pop(&mut self) -> Option<Candidate> {
        self.nodes.pop()
    }
}

/// The batch's part in one cycle: the pod's signature and the node the batch offered it
/// (kube's `GetNodeHint` before Filter), handed back to [`Scheduler::store_schedule_results`].
#[derive(Default)]
pub(super) struct NodeHint {
    pub(super) signature: Option<PodSignature>,
    pub(super) node: Option<Sym>,
}

struct BatchState {
    signature: PodSignature,
    sorted: SortedScoredNodes,
    created: Time,
}

#[derive(Default)]
struct LastCycle {
    cycle: i64,
    chosen: Sym,
    succeeded: bool,
}

/// A profile's batching state (see the module doc).
#[derive(Default)]
pub(crate) struct OpportunisticBatch {
    state: Option<BatchState>,
    last: LastCycle,
    /// Pods placed on a hint (kube's `batchedPods`).
    pub batched_pods: u64,
}

impl OpportunisticBatch {
    fn state_empty(&self) -> bool {
        self.state.as_ref().is_none_or(|s| s.sorted.is_empty())
    }
}

impl Scheduler {
    fn batch_flushed(&self, fwk: &Framework, why: BatchFlush) {
        self.metrics.inc_batch_flush(fwk.scheduler_name, why);
    }

    /// kube's `GetNodeHint`: the pod's signature, and the node the batch offers it.
    pub(super) fn node_hint(&self, cx: &CycleContext, snap: &Snapshot) -> NodeHint {
        // Under InPlacePodVerticalScalingSchedulerPreemption kube's default profile runs
        // DeferredPodScheduling at PreFilter and Filter, which signs no pod.
        let signature = if self.resize_preemption {
            None
        } else {
            cx.fwk.sign_pod(&cx.pod)
        };
        let t = std::time::Instant::now();
        let mut b = self.batches[cx.fi].lock();
        let node = self.hint_from(&mut b, cx, signature.as_ref(), snap);
        drop(b);
        if node.is_none() {
            self.metrics
                .inc_batch_attempt(cx.fwk.scheduler_name, BatchAttempt::NoHint);
        }
        self.metrics.observe(
            crate::framework::metrics::Series::GetNodeHintDuration(node.is_some()),
            t.elapsed().as_nanos() as u64,
        );
        NodeHint { signature, node }
    }

    fn hint_from(
        &self,
        b: &mut OpportunisticBatch,
        cx: &CycleContext,
        signature: Option<&PodSignature>,
        snap: &Snapshot,
    ) -> Option<Sym> {
        let (fwk, state, pod) = (cx.fwk, &cx.state, &*cx.pod);
        // kube's batchStateCompatible, its checks in its order.
        if b.state_empty() {
            return None;
        }
        let why = if cx.cycle != b.last.cycle + 1 {
            Some(BatchFlush::PodSkipped)
        } else if !b.last.succeeded {
            Some(BatchFlush::PodFailed)
        } else if pod.nominated_node_name.is_some_and(|n| !n.is_empty()) {
            Some(BatchFlush::PodNominated)
        } else if signature != b.state.as_ref().map(|s| &s.signature) {
            Some(BatchFlush::PodIncompatible)
        } else if b
            .state
            .as_ref()
            .is_some_and(|s| self.queue.clock().now() > s.created + MAX_BATCH_AGE)
        {
            Some(BatchFlush::Expired)
        } else {
            None
        };
        if let Some(why) = why {
            self.batch_flushed(fwk, why);
            return None;
        }
        // kube's refreshHintCandidates: the last chosen node, filtered again.
        let Some(&i) = snap.index.get(&b.last.chosen) else {
            self.batch_flushed(fwk, BatchFlush::NodeMissing);
            return None;
        };
        let last = &snap.nodes[i];
        let filters = fwk.active_filter_plugins(state, pod);
        let st = fwk.run_filter_plugins_with_nominated_pods(&filters, state, pod, last, &[]);
        if st.is_success() {
            if let Err(why) = self.rescore_hinted_node(b, cx, last, snap) {
                self.batch_flushed(fwk, why);
                return None;
            }
        } else if !st.is_rejected() {
            self.batch_flushed(fwk, BatchFlush::FilterError);
            return None;
        }
        b.state.as_mut()?.sorted.pop().map(|c| c.name)
    }

    /// kube's `rescoreHintedNode`: the last chosen node, still feasible, scored again and put
    /// back among the cached candidates, all of them normalized again.
    fn rescore_hinted_node(
        &self,
        b: &mut OpportunisticBatch,
        cx: &CycleContext,
        last: &NodeInfo,
        snap: &Snapshot,
    ) -> Result<(), BatchFlush> {
        let (fwk, state, pod) = (cx.fwk, &cx.state, &*cx.pod);
        self.metrics.inc_batch_rescore(fwk.scheduler_name);
        let t = std::time::Instant::now();
        let bs = b.state.as_mut().ok_or(BatchFlush::NodeMissing)?;
        let mut nodes: Vec<&NodeInfo> = Vec::with_capacity(bs.sorted.len() + 1);
        for c in &bs.sorted.nodes {
            let &i = snap.index.get(&c.name).ok_or(BatchFlush::NodeMissing)?;
            nodes.push(&snap.nodes[i]);
        }
        nodes.push(last);
        // PreScore sees every candidate; its writes stay in a copy of the cycle's state.
        let mut rescore_state = state.clone();
        if !fwk
            .run_pre_score(&mut rescore_state, pod, &nodes, snap)
            .is_success()
        {
            return Err(BatchFlush::PreScoreError);
        }
        let plugins = fwk.active_score_plugins(&rescore_state);
        let fresh: Vec<i64> = plugins
            .iter()
            .map(|(pl, _)| pl.score(&rescore_state, pod, last))
            .collect::<Result<_, _>>()
            .map_err(|_| BatchFlush::RescoreError)?;
        let n = nodes.len();
        let mut totals = vec![0i64; n];
        let mut raws: Vec<Vec<i64>> = vec![Vec::with_capacity(plugins.len()); n];
        for (j, (pl, w)) in plugins.iter().enumerate() {
            // The cached column of this plugin (kube looks raw scores up by plugin name; a
            // plugin the cached cycle did not run scores 0).
            let cached = bs.sorted.plugins.iter().position(|&p| p == pl.name());
            let mut column: Vec<i64> = bs
                .sorted
                .nodes
                .iter()
                .map(|c| cached.and_then(|k| c.raw.get(k).copied()).unwrap_or(0))
                .collect();
            column.push(fresh[j]);
            for (r, &s) in raws.iter_mut().zip(&column) {
                r.push(s);
            }
            if pl.has_normalize()
                && !pl
                    .normalize_score(&rescore_state, pod, &mut column)
                    .is_success()
            {
                return Err(BatchFlush::NormalizeError);
            }
            for (t, s) in totals.iter_mut().zip(column) {
                *t += s * w;
            }
        }
        let mut rng = self.rng.lock();
        let mut cands: Vec<Candidate> = std::mem::take(&mut bs.sorted.nodes);
        cands.push(Candidate {
            name: last.name(),
            raw: Vec::new(),
            total: 0,
            randomizer: rng.random(),
        });
        drop(rng);
        for ((c, raw), total) in cands.iter_mut().zip(raws).zip(totals) {
            c.raw = raw;
            c.total = total;
        }
        bs.sorted = SortedScoredNodes::new(plugins.iter().map(|(p, _)| p.name()).collect(), cands);
        self.metrics.observe(
            crate::framework::metrics::Series::BatchRescoreDuration,
            t.elapsed().as_nanos() as u64,
        );
        Ok(())
    }

    /// kube's `StoreScheduleResults`: what this cycle leaves for the next pod (`others`: the
    /// other scored nodes, when kept; `others_count`: how many other nodes were feasible).
    pub(super) fn store_schedule_results(
        &self,
        cx: &CycleContext,
        hint: NodeHint,
        chosen: Sym,
        others: Option<SortedScoredNodes>,
        others_count: usize,
    ) {
        let t = std::time::Instant::now();
        let fwk = cx.fwk;
        let NodeHint {
            signature,
            node: hint,
        } = hint;
        let mut b = self.batches[cx.fi].lock();
        b.last = LastCycle {
            cycle: cx.cycle,
            chosen,
            succeeded: true,
        };
        if hint == Some(chosen) {
            self.metrics
                .inc_batch_attempt(fwk.scheduler_name, BatchAttempt::HintUsed);
            b.batched_pods += 1;
            drop(b);
            self.metrics.observe(
                crate::framework::metrics::Series::StoreScheduleResultsDuration,
                t.elapsed().as_nanos() as u64,
            );
            return;
        }
        if hint.is_some() {
            self.metrics
                .inc_batch_attempt(fwk.scheduler_name, BatchAttempt::HintNotUsed);
        }
        match (signature, others) {
            (Some(signature), Some(sorted)) if !sorted.is_empty() => {
                b.state = Some(BatchState {
                    signature,
                    sorted,
                    created: self.queue.clock().now(),
                });
            }
            _ => {
                let why = if others_count == 0 {
                    BatchFlush::EmptyList
                } else {
                    BatchFlush::PodNotBatchable
                };
                self.batch_flushed(fwk, why);
                b.state = None;
            }
        }
        drop(b);
        self.metrics.observe(
            crate::framework::metrics::Series::StoreScheduleResultsDuration,
            t.elapsed().as_nanos() as u64,
        );
    }

    /// Pods placed on a batch hint so far, over all profiles.
    pub fn batched_pods(&self) -> u64 {
        self.batches.iter().map(|b| b.lock().batched_pods).sum()
    }

    /// The other scored nodes of a cycle that kept raw scores, for the batch (the chosen one
    /// left out).
    pub(super) fn sorted_others(
        &self,
        plugins: Vec<&'static str>,
        names: impl Iterator<Item = Sym>,
        chosen: usize,
        raw: impl Fn(usize, usize) -> i64,
        totals: &[i64],
    ) -> SortedScoredNodes {
        let p = plugins.len();
        let mut rng = self.rng.lock();
        let nodes = names
            .enumerate()
            .filter(|&(i, _)| i != chosen)
            .map(|(i, name)| Candidate {
                name,
                raw: (0..p).map(|j| raw(i, j)).collect(),
                total: totals[i],
                randomizer: rng.random(),
            })
            .collect();
        drop(rng);
        SortedScoredNodes::new(plugins, nodes)
    }
}
