//! The node memo: Filter verdicts and raw Score results of node-local plugins, kept per node
//! from one cycle to the next, so that a pod like an earlier one is not judged again on the
//! nodes that did not change since.
//!
//! kube filters and scores every pod from scratch. With the adaptive
//! `percentageOfNodesToScore`, consecutive pods walk consecutive windows of the node list
//! (the rotating start index), and a cluster of `N` nodes is walked again every
//! `N / numFeasibleNodesToFind` pods. Between two walks of a window only the nodes that took a
//! pod (or changed otherwise) differ. Replicas of one template ask the same question of the
//! same unchanged nodes each time: the memo keeps the answer. It changes no decision, only
//! how the answer is found (tidegate's own; kube has no such cache).
//!
//! # What may be memoized
//!
//! A plugin is *node-local for a pod* ([`Plugin::node_local`](super::Plugin::node_local))
//! when its PreFilter, Filter, PreScore and Score results on a node are a function of:
//! the profile's configuration; the pod's [`NodeLocalInputs`] (requests, tolerations, node
//! selector and affinity, host ports, images, required node features, `spec.nodeName`); that
//! node's `NodeInfo`; and the snapshot's node count and image states. NodeUnschedulable,
//! NodeName, TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit (unless DRA may back
//! an extended resource the pod asks for), NodeResourcesBalancedAllocation, ImageLocality and
//! NodeDeclaredFeatures are. Plugins that count pods across nodes (PodTopologySpread,
//! InterPodAffinity), read other objects (the volume plugins, DynamicResources) or come from
//! outside the engine are not: a cycle that runs one of them at Filter does not use the Filter
//! memo, and one that runs one at Score does not use the Score memo.
//!
//! # Protocol
//!
//! * **Keys** ([`MemoKeys`]): per cycle, the scheduling thread interns `(extension point,
//!   profile, the set of plugins that run there, the pod's node-local inputs)` into a small
//!   id (never 0). Equal keys get the same id while the key stays in the table (the
//!   most recent [`MemoKeys::CAPACITY`]); an evicted key's id is never handed out again (ids
//!   only grow; when they would run out, the table and every memo entry are cleared first).
//! * **Entries** ([`NodeMemo`], one per snapshot node, by the node's index): `passed[i] = id`
//!   records that every Filter plugin of that key passed node `i` as it is now; `scored[i] =
//!   id` that `raw[j * N + i]` holds the raw (not normalized) score of that key's `j`-th
//!   Score plugin (in the profile's order) on node `i` of `N`. A verdict that is not a pass
//!   is never kept (its status is needed for the diagnosis), nor are scores outside `i32`.
//! * **Invalidation** (`Cache::update_snapshot`, the only writer of the snapshot's nodes): a
//!   node whose NodeInfo is replaced loses its entries ([`NodeMemo::forget`]); a change of the
//!   node list (layout) or of the image states clears all ([`NodeMemo::reset`]). A snapshot
//!   built or cloned any other way has an empty memo, which [`NodeMemo::covers`] no node
//!   list, so it is never read.
//! * **Use**, node by node within a block of 64: a node with `passed == id` passes without
//!   running a plugin; the runs of the others are judged by the plugins ([`filter_block`];
//!   a block mostly unknown is judged whole, with the same verdicts) and their passes
//!   recorded. A node with `scored == id` takes its raw scores from the memo; the others are
//!   gathered, scored by the plugins and recorded. NormalizeScore, the weights and the host
//!   choice run as always. The memo is used only on the snapshot's whole node list (not a
//!   PreFilter subset or a placement) and, for Filter, only when no nominated pod is to be
//!   added to any node.
//!
//! * **Summaries** (`summaries.rs`, for the window path, `scheduler/window.rs`): the nodes
//!   are also taken in aligned chunks of [`CHUNK`] snapshot indices, and the chunks in super
//!   chunks of [`SUPER`]. A chunk's summary for key `id` records that every node of it has
//!   `passed == id` (Filter), or `scored == id` with the chunk's [`SpanScores`] (per plugin
//!   the highest and lowest raw score, and the best weighted sum of the plugins that do not
//!   normalize, with how many nodes reach it). A super chunk's summary holds the same of
//!   all its chunks, set from their summaries. Only the scheduling thread sets a summary,
//!   between the pool's passes, after reading every entry (or chunk summary) it covers, or
//!   (the window path's Filter walk) after reading a whole chunk's entries and recording a
//!   pass for each node of it that they did not hold.
//!   Every write that can break a summary clears it and its super chunk's: `forget` and
//!   `reset`, and a `note_passed` or `note_scores` of another id (or of a score not kept)
//!   on one of its nodes.
//!
//! # Invariants
//!
//! 1. An entry with id `k` on node `i` was written from a judgement of node `i` in its
//!    present state by the plugins of key `k`: every replacement of the node's NodeInfo
//!    since clears it. So a hit returns exactly what running the plugins would.
//! 2. Workers of one pass write disjoint nodes (each node is judged once per pass), and a
//!    pass ends before the next cycle's invalidation: the entries are atomics written with
//!    `Relaxed` ordering, ordered by the pool's join and the snapshot's lock.
//! 3. A summary with id `k` implies that entry `k` is on every node it covers, and its
//!    scores were computed from those entries: a write that changes one of them clears the
//!    summary, and a super chunk's summary with its chunk's (concurrent writers of one pass
//!    all write the same id, and the summaries are read and set only by the scheduling
//!    thread outside the passes).

use super::parallelize::BlockVerdicts;
use crate::api::{Pod, Sym};
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering::Relaxed};

mod summaries;
pub(crate) use summaries::{CHUNK, SUPER, SpanScores, Summaries};

/// Raw scores kept per node: a cycle with more active Score plugins does not use the memo.
pub(crate) const MEMO_SCORES: usize = 8;

/// Per snapshot node, the last Filter pass and raw scores of a memo key, and their
/// [`Summaries`] per chunk and super chunk (see the module doc). Cloning gives an empty memo:
/// a copy of a snapshot is not kept up to date by the cache, so it must not read entries.
#[derive(Default)]
pub(crate) struct NodeMemo {
    passed: Vec<AtomicU32>,
    scored: Vec<AtomicU32>,
    raw: Vec<AtomicI32>,
    /// The chunks' and super chunks' summaries.
    pub(crate) sums: Summaries,
}

impl Clone for NodeMemo {
    fn clone(&self) -> NodeMemo {
        NodeMemo::default()
    }
}

impl std::fmt::Debug for NodeMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NodeMemo({} nodes)", self.passed.len())
    }
}

impl NodeMemo {
    /// Empty entries for `n` nodes (a new node list, or everything forgotten).
    pub(crate) fn reset(&mut self, n: usize) {
        let zero_u32 = |v: &mut Vec<AtomicU32>, len: usize| {
            v.clear();
            v.resize_with(len, || AtomicU32::new(0));
        };
        zero_u32(&mut self.passed, n);
        zero_u32(&mut self.scored, n);
        self.raw.clear();
        self.raw.resize_with(n * MEMO_SCORES, || AtomicI32::new(0));
        self.sums.reset(n);
    }

    /// Node `i` changed: its entries, and its chunk's summaries, no longer hold.
    pub(crate) fn forget(&mut self, i: usize) {
        if let (Some(p), Some(s)) = (self.passed.get_mut(i), self.scored.get_mut(i)) {
            *p.get_mut() = 0;
            *s.get_mut() = 0;
            self.sums.forget(i);
        }
    }

    /// Snapshot indices of chunk `c`.
    #[inline]
    pub(crate) fn chunk_range(&self, c: usize) -> std::ops::Range<usize> {
        self.sums.chunk_range(c)
    }

    /// Sets chunk `c`'s Filter summary when every one of its nodes passed key `id`; returns
    /// whether it did. Scheduling thread only, outside the pool's passes.
    pub(crate) fn summarize_passed(&self, c: usize, id: u32) -> bool {
        let r = self.chunk_range(c);
        let all = self.passed_mask(r.start, r.len(), id) == u64::MAX >> (64 - r.len());
        if all {
            self.sums.set_chunk_passed(c, id);
        }
        all
    }

    /// Sets chunk `c`'s Score summary for key `id` when every one of its nodes holds that
    /// key's raw scores: `plugins[j]` is plugin `j`'s weight, and whether it normalizes (it
    /// then stays out of the best sum). Returns the summary set. Scheduling thread only,
    /// outside the pool's passes.
    pub(crate) fn summarize_scores(
        &self,
        c: usize,
        id: u32,
        plugins: &[(i64, bool)],
    ) -> Option<SpanScores> {
        let r = self.chunk_range(c);
        if self.scored[r.clone()].iter().any(|s| s.load(Relaxed) != id) {
            return None;
        }
        let p = plugins.len();
        let mut sums = SpanScores::default();
        // A plugin at a time: its raw scores are one row of `raw`. Maxima, minima and the
        // integer sums come out as node by node; the best sum is then taken in node order.
        let mut best = [0i64; CHUNK];
        let best = &mut best[..r.len()];
        for (j, &(w, normalizes)) in plugins.iter().enumerate() {
            let (mut max, mut min) = (sums.max[j], sums.min[j]);
            for (b, i) in best.iter_mut().zip(r.clone()) {
                let x = self.raw(j, i);
                (max, min) = (max.max(x), min.min(x));
                if !normalizes {
                    *b += w * x;
                }
            }
            (sums.max[j], sums.min[j]) = (max, min);
        }
        for &b in best.iter() {
            sums.add_best(b, 1);
        }
        self.sums.set_chunk_scores(c, id, p, &sums);
        Some(sums)
    }

    /// Whether the memo holds key `id`'s raw scores of node `i`.
    #[inline]
    pub(crate) fn is_scored(&self, i: usize, id: u32) -> bool {
        self.scored[i].load(Relaxed) == id
    }

    /// The raw score of the key's `j`-th plugin on node `i` (valid when [`NodeMemo::is_scored`]).
    #[inline]
    pub(crate) fn raw(&self, j: usize, i: usize) -> i64 {
        i64::from(self.raw[j * self.scored.len() + i].load(Relaxed))
    }

    /// Whether the memo is kept for a node list of `n` nodes (the snapshot's own, kept up
    /// to date by the cache). An empty list has nothing to keep.
    pub(crate) fn covers(&self, n: usize) -> bool {
        n > 0 && self.passed.len() == n
    }

    /// Bit `o` set: key `id` passed node `first + o` as it is now (`len` ≤ 64).
    #[inline]
    pub(crate) fn passed_mask(&self, first: usize, len: usize, id: u32) -> u64 {
        debug_assert!(len <= 64);
        let mut mask = 0;
        for (o, p) in self.passed[first..first + len].iter().enumerate() {
            mask |= u64::from(p.load(Relaxed) == id) << o;
        }
        mask
    }

    /// Records that key `id` passed node `i`.
    #[inline]
    pub(crate) fn note_passed(&self, i: usize, id: u32) {
        self.passed[i].store(id, Relaxed);
        self.sums.touch_passed(i, id);
    }

    /// Bit `o` set: the memo holds key `id`'s raw scores of node `index[o]` (snapshot
    /// indices, at most 64; `run`: [`run_start`] of `index`).
    #[inline]
    pub(crate) fn scored_mask(&self, index: &[usize], run: Option<usize>, id: u32) -> u64 {
        debug_assert!(index.len() <= 64);
        debug_assert_eq!(run, run_start(index));
        let len = index.len();
        let mut mask = 0;
        if let Some(first) = run {
            for (o, s) in self.scored[first..first + len].iter().enumerate() {
                mask |= u64::from(s.load(Relaxed) == id) << o;
            }
            return mask;
        }
        for (o, &i) in index.iter().enumerate() {
            mask |= u64::from(self.scored[i].load(Relaxed) == id) << o;
        }
        mask
    }

    /// Writes the raw scores of the nodes of `index` whose bit is set in `mask` into `out`,
    /// plugin-major (`out[j * len + o]`, `len = index.len()`, `p` plugins; `run`:
    /// [`run_start`] of `index`).
    #[inline]
    pub(crate) fn scores_of(
        &self,
        index: &[usize],
        run: Option<usize>,
        mask: u64,
        p: usize,
        out: &mut [i64],
    ) {
        debug_assert_eq!(run, run_start(index));
        let (len, n) = (index.len(), self.scored.len());
        let all = mask == u64::MAX >> (64 - len);
        // The usual block: every node known, consecutive in the snapshot (Filter passed a
        // whole run). A straight copy of each plugin's slice, no lookups.
        let first = run.filter(|_| all);
        for (j, out) in out[..p * len].chunks_mut(len).enumerate() {
            let raw = &self.raw[j * n..(j + 1) * n];
            if let Some(first) = first {
                for (s, r) in out.iter_mut().zip(&raw[first..first + len]) {
                    *s = i64::from(r.load(Relaxed));
                }
                continue;
            }
            for (o, (s, &i)) in out.iter_mut().zip(index).enumerate() {
                if all || mask >> o & 1 == 1 {
                    *s = i64::from(raw[i].load(Relaxed));
                }
            }
        }
    }

    /// Records key `id`'s raw scores of the nodes of `index` whose bit is set in `mask`, from
    /// `scores` laid out as [`NodeMemo::scores_of`] writes them. A node with a score outside
    /// `i32` is not recorded.
    #[inline]
    pub(crate) fn note_scores(
        &self,
        index: &[usize],
        mask: u64,
        (id, p): (u32, usize),
        scores: &[i64],
    ) {
        let (len, n) = (index.len(), self.scored.len());
        'node: for (o, &i) in index.iter().enumerate() {
            if mask >> o & 1 == 0 {
                continue;
            }
            self.sums.touch_scored(i, id);
            for j in 0..p {
                let Ok(s) = i32::try_from(scores[j * len + o]) else {
                    self.scored[i].store(0, Relaxed);
                    self.sums.touch_scored(i, 0);
                    continue 'node;
                };
                self.raw[j * n + i].store(s, Relaxed);
            }
            self.scored[i].store(id, Relaxed);
        }
    }
}

thread_local! {
    /// A run of nodes the memo could not answer, judged apart from its block.
    static RUN: std::cell::RefCell<BlockVerdicts> = std::cell::RefCell::new(BlockVerdicts::default());
}

/// The first snapshot index of `index` when its indices are consecutive and rising (a
/// block Filter passed whole, the usual case): the block's rows and memo slots are then one
/// slice each.
#[inline]
pub(crate) fn run_start(index: &[usize]) -> Option<usize> {
    let first = *index.first()?;
    index.windows(2).all(|w| w[1] == w[0] + 1).then_some(first)
}

/// One Filter block of `len` nodes from `first` through the memo, for key `id`: the nodes the
/// memo knows passed (`known`: [`NodeMemo::passed_mask`] of the block, read by the caller)
/// pass; each run of the others is judged by `judge(a, b, run)` (block
/// offsets `a..b`, verdicts relative to `a`), its verdicts put in place in `verdicts` and its
/// passes recorded. `verdicts` comes in with every node passing (`BlockVerdicts::reset`).
/// Returns how many nodes the memo answered.
pub(crate) fn filter_block(
    memo: &NodeMemo,
    id: u32,
    (first, len): (usize, usize),
    known: u64,
    verdicts: &mut BlockVerdicts,
    judge: impl Fn(usize, usize, &mut BlockVerdicts),
) -> u32 {
    debug_assert_eq!(known, memo.passed_mask(first, len, id));
    let count = known.count_ones();
    if count as usize == len {
        return count;
    }
    // Mostly unknown: judging the whole block in one pass costs less than judging its runs
    // apart (a known node's verdict comes out the same either way).
    if (count as usize) * 2 < len {
        judge(0, len, verdicts);
        for (o, _) in verdicts.pass.iter().enumerate().filter(|(_, p)| **p) {
            memo.note_passed(first + o, id);
        }
        return count;
    }
    let mut record = |a: usize, run: &mut BlockVerdicts| {
        for (k, &pass) in run.pass.iter().enumerate() {
            verdicts.pass[a + k] = pass;
            if pass {
                memo.note_passed(first + a + k, id);
            }
        }
        let moved = run.rejected.drain(..).map(|(k, st)| (a + k, st));
        verdicts.rejected.extend(moved);
    };
    RUN.with(|run| {
        let run = &mut *run.borrow_mut();
        let mut o = 0;
        while o < len {
            if known >> o & 1 == 1 {
                o += 1;
                continue;
            }
            let a = o;
            while o < len && known >> o & 1 == 0 {
                o += 1;
            }
            run.reset(o - a);
            judge(a, o, run);
            record(a, run);
        }
    });
    count
}

/// Slots of [`MemoCounts`]: one per pool thread (by rayon's index, plus one for threads
/// outside a pool), taken modulo.
const COUNT_SLOTS: usize = 17;

/// Nodes the memo answered and nodes it could not answer in the cycles that used it, at
/// Filter and at Score. Each thread counts in its own cache line (one shared counter, bumped
/// per block by every worker, cost more than the memo saved at 100,000 nodes).
#[derive(Default)]
pub struct MemoCounts {
    slots: [crossbeam::utils::CachePadded<[AtomicU64; 4]>; COUNT_SLOTS],
}

impl std::fmt::Debug for MemoCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoCounts")
            .field("filter", &self.filter())
            .field("score", &self.score())
            .finish()
    }
}

impl MemoCounts {
    /// Counts a block of `len` nodes of which the memo answered `known`.
    #[inline]
    pub(crate) fn note(&self, point: MemoPoint, known: u32, len: usize) {
        let slot = rayon::current_thread_index().map_or(0, |i| i + 1) % COUNT_SLOTS;
        let at = match point {
            MemoPoint::Filter => 0,
            MemoPoint::Score => 2,
        };
        let c = &self.slots[slot];
        c[at].fetch_add(u64::from(known), Relaxed);
        c[at + 1].fetch_add(len as u64 - u64::from(known), Relaxed);
    }

    fn sum(&self, at: usize) -> (u64, u64) {
        self.slots.iter().fold((0, 0), |(h, m), c| {
            (h + c[at].load(Relaxed), m + c[at + 1].load(Relaxed))
        })
    }

    /// Filter: (nodes answered, nodes judged) in the cycles that used the memo.
    pub fn filter(&self) -> (u64, u64) {
        self.sum(0)
    }

    /// Score: (nodes answered, nodes scored) in the cycles that used the memo.
    pub fn score(&self) -> (u64, u64) {
        self.sum(2)
    }
}

/// The extension point a memo key is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MemoPoint {
    Filter,
    Score,
}

/// What a key is made of: the point, the profile, which of the profile's plugins run there
/// (bit `k`: its `k`-th plugin of that point) and the pod whose node-local inputs it holds.
struct MemoKey {
    point: MemoPoint,
    profile: Sym,
    plugins: u64,
    pod: Arc<Pod>,
}

/// The memo keys in use, most recent first, with their ids (see the module doc).
#[derive(Default)]
pub(crate) struct MemoKeys {
    keys: Vec<(MemoKey, u32)>,
    last: u32,
}

impl MemoKeys {
    /// Keys kept: more distinct pod shapes in flight than this share nothing anyway.
    pub(crate) const CAPACITY: usize = 32;

    /// Whether ids have run out: the caller clears every memo entry, then [`MemoKeys::restart`].
    pub(crate) fn exhausted(&self) -> bool {
        self.last == u32::MAX
    }

    /// Forgets every key; ids start again from 1.
    pub(crate) fn restart(&mut self) {
        self.keys.clear();
        self.last = 0;
    }

    /// The id of the key; a new id when no kept key is equal. None when ids have run out.
    pub(crate) fn id(
        &mut self,
        point: MemoPoint,
        profile: Sym,
        plugins: u64,
        pod: &Arc<Pod>,
    ) -> Option<u32> {
        let found = self.keys.iter().position(|(k, _)| {
            k.point == point
                && k.profile == profile
                && k.plugins == plugins
                && NodeLocalInputs(&k.pod) == NodeLocalInputs(pod)
        });
        if let Some(at) = found {
            // Most recent first: a run of one shape finds its key at once.
            self.keys[..=at].rotate_right(1);
            return Some(self.keys[0].1);
        }
        if self.exhausted() {
            return None;
        }
        self.last += 1;
        if self.keys.len() == Self::CAPACITY {
            self.keys.pop();
        }
        let key = MemoKey {
            point,
            profile,
            plugins,
            pod: pod.clone(),
        };
        self.keys.insert(0, (key, self.last));
        Some(self.last)
    }
}

/// The parts of a pod that node-local plugins read (see the module doc). Two pods with
/// equal inputs get the same verdict and raw scores from them on the same node.
pub(crate) struct NodeLocalInputs<'a>(pub(crate) &'a Pod);

impl PartialEq for NodeLocalInputs<'_> {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.0, other.0);
        if a.requests() != b.requests() || a.non_zero_requests() != b.non_zero_requests() {
            return false;
        }
        if Arc::ptr_eq(&a.spec, &b.spec) {
            return true;
        }
        let (a, b) = (&*a.spec, &*b.spec);
        a.node_name == b.node_name
            && a.tolerations == b.tolerations
            && a.node_selector == b.node_selector
            && a.required_node_affinity == b.required_node_affinity
            && a.preferred_node_affinity == b.preferred_node_affinity
            && a.host_ports == b.host_ports
            && a.images == b.images
            && a.required_node_features == b.required_node_features
            && a.extended_resource_containers == b.extended_resource_containers
            && a.resource_claims == b.resource_claims
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{PodSpecInfo, Resource, Toleration};
    use crate::framework::{Code, Status};

    fn pod(name: &str, cpu: i64, tolerate: bool) -> Arc<Pod> {
        let requests = Resource {
            milli_cpu: cpu,
            ..Resource::default()
        };
        let tolerations = if tolerate {
            vec![Toleration {
                key: Sym::new("k"),
                exists: true,
                value: Sym::new(""),
                effect: None,
            }]
        } else {
            vec![]
        };
        let spec = PodSpecInfo {
            requests: requests.clone(),
            non_zero_requests: requests,
            tolerations,
            ..PodSpecInfo::default()
        };
        Arc::new(Pod::new("ns", name, Arc::new(spec)))
    }

    #[test]
    fn a_run_is_consecutive_rising_indices() {
        assert_eq!(run_start(&[3, 4, 5]), Some(3));
        assert_eq!(run_start(&[7]), Some(7));
        assert_eq!(run_start(&[]), None);
        assert_eq!(run_start(&[3, 5, 6]), None);
        assert_eq!(run_start(&[4, 3]), None);
        assert_eq!(run_start(&[3, 4, 4]), None);
    }

    #[test]
    fn equal_inputs_share_an_id_and_different_ones_do_not() {
        let mut keys = MemoKeys::default();
        let profile = Sym::new("default-scheduler");
        let (a, b) = (pod("a", 100, false), pod("b", 100, false));
        let id = |k: &mut MemoKeys, point, plugins, p: &Arc<Pod>| {
            k.id(point, profile, plugins, p).unwrap()
        };
        let first = id(&mut keys, MemoPoint::Filter, 0b11, &a);
        assert_ne!(first, 0, "0 means no entry");
        // Another pod, the same inputs (its own spec object): the same id.
        assert_eq!(id(&mut keys, MemoPoint::Filter, 0b11, &b), first);
        // Each part of the key tells keys apart.
        let others = [
            id(&mut keys, MemoPoint::Score, 0b11, &a),
            id(&mut keys, MemoPoint::Filter, 0b01, &a),
            id(&mut keys, MemoPoint::Filter, 0b11, &pod("c", 200, false)),
            id(&mut keys, MemoPoint::Filter, 0b11, &pod("d", 100, true)),
        ];
        let mut all = vec![first];
        all.extend(others);
        let distinct: std::collections::BTreeSet<u32> = all.iter().copied().collect();
        assert_eq!(distinct.len(), all.len(), "{all:?}");
        assert_eq!(
            keys.id(MemoPoint::Filter, Sym::new("other"), 0b11, &a),
            Some(6)
        );
    }

    #[test]
    fn an_evicted_key_gets_a_new_id_and_exhaustion_stops_new_ids() {
        let mut keys = MemoKeys::default();
        let profile = Sym::new("p");
        let first = keys.id(MemoPoint::Filter, profile, 1, &pod("a", 1, false));
        for cpu in 2..=MemoKeys::CAPACITY as i64 + 1 {
            keys.id(MemoPoint::Filter, profile, 1, &pod("x", cpu, false));
        }
        let again = keys.id(MemoPoint::Filter, profile, 1, &pod("a", 1, false));
        assert_ne!(
            again, first,
            "an evicted key's id is never handed out again"
        );
        keys.last = u32::MAX;
        assert!(keys.exhausted());
        assert_eq!(
            keys.id(MemoPoint::Filter, profile, 1, &pod("n", 999, false)),
            None
        );
        keys.restart();
        assert_eq!(
            keys.id(MemoPoint::Filter, profile, 1, &pod("n", 999, false)),
            Some(1)
        );
    }

    #[test]
    fn entries_hold_until_their_node_changes() {
        let mut memo = NodeMemo::default();
        assert!(!memo.covers(4), "an empty memo covers no node list");
        memo.reset(4);
        assert!(memo.covers(4) && !memo.covers(5));
        memo.note_passed(1, 7);
        memo.note_passed(2, 7);
        assert_eq!(memo.passed_mask(0, 4, 7), 0b0110);
        assert_eq!(
            memo.passed_mask(0, 4, 8),
            0,
            "another key's passes are not this one's"
        );
        // Scores of nodes 3 and 1, two plugins; node 1's second score does not fit an i32.
        let index = [3, 1];
        let scores = [10, 20, 30, i64::from(i32::MAX) + 1];
        memo.note_scores(&index, 0b11, (7, 2), &scores);
        let run = run_start(&index);
        assert_eq!(
            memo.scored_mask(&index, run, 7),
            0b01,
            "node 1 is not recorded"
        );
        let mut out = [0; 4];
        memo.scores_of(&index, run, 0b01, 2, &mut out);
        assert_eq!(out, [10, 0, 30, 0]);
        memo.forget(3);
        assert_eq!(memo.scored_mask(&index, run, 7), 0);
        assert_eq!(
            memo.passed_mask(0, 4, 7),
            0b0110,
            "forgetting 3 leaves 1 and 2"
        );
        memo.forget(2);
        assert_eq!(memo.passed_mask(0, 4, 7), 0b0010);
        memo.reset(4);
        assert_eq!(memo.passed_mask(0, 4, 7), 0);
        assert!(!memo.clone().covers(4), "a clone starts empty");
    }

    #[test]
    fn a_filter_block_judges_only_what_the_memo_does_not_know() {
        // Block of nodes 1..9; the judge rejects node 5 and passes the rest.
        let run = |known: &[usize]| {
            let mut memo = NodeMemo::default();
            memo.reset(10);
            for &i in known {
                memo.note_passed(i, 1);
            }
            let judged = std::sync::Mutex::new(vec![]);
            let mut v = BlockVerdicts::default();
            v.reset(8);
            let known = memo.passed_mask(1, 8, 1);
            let count = filter_block(&memo, 1, (1, 8), known, &mut v, |a, b, run| {
                judged.lock().unwrap().push((a, b));
                for o in 0..b - a {
                    if 1 + a + o == 5 {
                        run.pass[o] = false;
                        run.rejected
                            .push((o, Status::new(Code::Unschedulable, "no")));
                    }
                }
            });
            assert_eq!(v.pass, [true, true, true, true, false, true, true, true]);
            assert_eq!(v.rejected.iter().map(|(o, _)| *o).collect::<Vec<_>>(), [4]);
            // The passes judged now are kept; the rejection is not.
            assert_eq!(memo.passed_mask(1, 8, 1), 0b1110_1111);
            (count, judged.into_inner().unwrap())
        };
        // Mostly known: only the runs of unknown nodes are judged.
        assert_eq!(run(&[2, 3, 6, 7, 8]), (5, vec![(0, 1), (3, 5)]));
        // Mostly unknown: the whole block in one pass, the same verdicts.
        assert_eq!(run(&[2, 3, 6]), (3, vec![(0, 8)]));
    }
}
