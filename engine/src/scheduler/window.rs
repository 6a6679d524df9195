//! The window path: Filter, Score and the host choice of a cycle the node memo can answer,
//! a chunk of [`CHUNK`] nodes at a time instead of a node at a time (tidegate's own; kube
//! walks every node of the window).
//!
//! With the adaptive `percentageOfNodesToScore`, a cycle walks `numFeasibleNodesToFind`
//! nodes from the rotating start index: 50,000 of 1,000,000 nodes. When the pod is like the
//! last ones, the memo (`framework/node_memo.rs`) already knows almost every answer, and the
//! cost is the walk itself: reading a pass and the raw scores of every node, listing the
//! feasible nodes, adding their totals. The memo's chunk summaries say the same for a whole
//! aligned chunk at once: every node passed; each plugin's highest and lowest raw score; the
//! best total and how many nodes reach it. This path reads those and visits nodes only where
//! no summary holds: the window's two ends, and the chunks a node changed in since.
//!
//! # Protocol
//!
//! * **Filter** ([`Scheduler::filter_window`]), when the cycle would use the Filter memo on
//!   the snapshot's whole list with no nominated pod and no node judged alone first: from the
//!   start index, a whole chunk whose summary holds for this key counts all its nodes
//!   feasible (unless that would pass `numFeasibleNodesToFind`); any other stretch goes
//!   through `node_memo::filter_block` (the memo, then the plugins for the nodes it does not
//!   know), node by node up to the last feasible node needed, and its chunk is summarized
//!   when every node of it now passes. The walk gives up, with nothing decided, on a Filter
//!   error, on no feasible node (the usual pass then builds the diagnosis) or after judging
//!   [`MAX_JUDGED`] nodes (the pool judges big unknown stretches faster). Otherwise the
//!   feasible set, its order and the processed count (the next start index) are the
//!   sequential pass's.
//! * **PreScore** gets the first feasible node alone, and only when no PreScore plugin reads
//!   the feasible nodes for this pod ([`PreScorePlugin::pre_score_reads_nodes`]); otherwise,
//!   or when batching keeps the scored nodes, the window is listed and the usual path runs.
//! * **Score** ([`Scheduler::score_window`]), when every active Score plugin is node-local
//!   (a Score memo key), at most `MEMO_SCORES`, and each either does not normalize or
//!   normalizes kube's default way. Pass 1: each whole chunk's summary (nodes the memo does
//!   not know are scored and recorded first, then the chunk summarized), each other stretch's
//!   raw scores; the window's maximum of each default-normalized plugin. Pass 2: a chunk whose
//!   default-normalized plugins are constant in it (or whose window maximum is 0) has best
//!   total `best + Σ w·normalized(constant)` reached by `count` nodes; other chunks and
//!   stretches are totalled node by node. The host is the `k`-th node with the highest total
//!   in walk order, `k` drawn as `select_host` draws it.
//!
//! # Invariants
//!
//! 1. The feasible nodes, in order, and the processed count equal those of the sequential
//!    Filter pass (`find_feasible_blocks` inline): a summary holds only what the memo's
//!    entries hold, and those only what the plugins would say (node memo invariants 1, 3).
//! 2. Each node's total equals the usual Score path's total: the same raw scores, the same
//!    window maxima, the same integer normalization; a summarized chunk's nodes differ from
//!    its best sum by the same constant.
//! 3. One random draw per cycle when more than one node ties, over the same count, picking
//!    the same position in the same order: the host is the one the usual path would choose.
//! 4. The path writes only memo entries and summaries (true facts) until it commits; giving
//!    up leaves the cycle to the usual path as if the window path had not run.

use crate::api::Pod;
use crate::framework::interface::{FilterPlugin, MAX_NODE_SCORE, ScorePlugin};
use crate::framework::node_info::NodeTraits;
use crate::framework::node_memo::{self, CHUNK, ChunkScores, MEMO_SCORES, MemoPoint, NodeMemo};
use crate::framework::parallelize::BlockVerdicts;
use crate::framework::runtime::Framework;
use crate::framework::{Code, CycleState, NodeInfo, NodeRow, Snapshot, Status};
use rand::Rng;
use std::ops::Range;
use std::sync::Arc;

use super::Scheduler;

/// Nodes the plugins may judge in one window walk before it gives up to the usual pass.
pub(super) const MAX_JUDGED: usize = 4 * CHUNK;

/// One stretch of the walk, in walk order.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    /// Chunk `c`, every node of it feasible (its summary).
    Chunk(usize),
    /// Feasible nodes `Window::nodes[range]`, found node by node.
    Nodes(Range<usize>),
}

/// The feasible nodes of a window walk: chunks whole, and the nodes found one by one.
#[derive(Debug, Default)]
pub(super) struct Window {
    pieces: Vec<Piece>,
    nodes: Vec<usize>,
    count: usize,
}

impl Window {
    /// How many nodes are feasible.
    pub(super) fn count(&self) -> usize {
        self.count
    }

    /// The snapshot indices of the feasible nodes, in walk order.
    pub(super) fn indices<'a>(&'a self, memo: &'a NodeMemo) -> impl Iterator<Item = usize> + 'a {
        self.pieces
            .iter()
            .flat_map(move |piece| piece_nodes(piece, self, memo))
    }

    /// The first feasible node.
    pub(super) fn first(&self, memo: &NodeMemo) -> Option<usize> {
        self.indices(memo).next()
    }

    /// Appends `i..i + len`, judged by `verdicts`, up to `need` feasible nodes; returns how
    /// many nodes it took (feasible and rejected).
    fn take_judged(&mut self, i: usize, verdicts: &BlockVerdicts, need: usize) -> usize {
        let a = self.nodes.len();
        let mut taken = 0;
        for (o, &pass) in verdicts.pass.iter().enumerate() {
            taken += 1;
            if pass {
                self.nodes.push(i + o);
                if self.nodes.len() - a == need {
                    break;
                }
            }
        }
        let found = self.nodes.len() - a;
        if found > 0 {
            self.pieces.push(Piece::Nodes(a..self.nodes.len()));
        }
        self.count += found;
        taken
    }
}

/// Per active Score plugin: its weight, whether it normalizes, and `Some(reverse)` when that
/// is kube's default way.
#[derive(Clone, Copy, Default)]
struct PluginSpec {
    weight: i64,
    normalizes: bool,
    default: Option<bool>,
}

impl Scheduler {
    /// The Filter walk of the window path (see the module doc): the feasible nodes from
    /// `start` until `num_to_find` pass, and the processed count; None to leave the cycle to
    /// the usual pass.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn filter_window(
        &self,
        filters: &[(&dyn FilterPlugin, NodeTraits)],
        state: &CycleState,
        pod: &Pod,
        snap: &Snapshot,
        id: u32,
        start: usize,
        num_to_find: usize,
    ) -> Option<(Window, usize)> {
        let (nodes, rows, memo) = (&snap.nodes, &snap.rows, &snap.memo);
        let n = nodes.len();
        let mut w = Window::default();
        let mut v = BlockVerdicts::default();
        let (mut visited, mut judged, mut i) = (0, 0, start % n.max(1));
        while visited < n && w.count < num_to_find {
            let c = i / CHUNK;
            let chunk = memo.chunk_range(c);
            let len = (chunk.end - i).min(n - visited);
            let need = num_to_find - w.count;
            if i == chunk.start && len == chunk.len() && len <= need && memo.chunk_passed(c, id) {
                w.pieces.push(Piece::Chunk(c));
                self.stats.memo.note(MemoPoint::Filter, len as u32, len);
                w.count += len;
                visited += len;
                i = if chunk.end == n { 0 } else { chunk.end };
                continue;
            }
            let len = len.min(need);
            v.reset(len);
            let judge = |a: usize, b: usize, run: &mut BlockVerdicts| {
                let (nodes, rows) = (&nodes[i + a..i + b], &rows[i + a..i + b]);
                Framework::run_filter_plugins_block(filters, state, pod, nodes, rows, run);
            };
            let known = node_memo::filter_block(memo, id, (i, len), &mut v, judge) as usize;
            self.stats.memo.note(MemoPoint::Filter, known as u32, len);
            judged += len - known;
            if judged > MAX_JUDGED || v.rejected.iter().any(|(_, st)| st.code() == Code::Error) {
                return None;
            }
            let taken = w.take_judged(i, &v, need);
            visited += taken;
            if !memo.chunk_passed(c, id) {
                memo.summarize_passed(c, id);
            }
            i = if i + taken == n { 0 } else { i + taken };
        }
        (w.count > 0).then_some((w, visited))
    }

    /// Score and the host choice of the window path (see the module doc): the chosen node's
    /// snapshot index; None when the cycle does not qualify (the caller lists the window and
    /// scores it the usual way).
    pub(super) fn score_window(
        &self,
        fwk: &Framework,
        state: &CycleState,
        cx_pod: &Arc<Pod>,
        snap: &Snapshot,
        w: &Window,
    ) -> Option<Result<usize, Status>> {
        let plugins = fwk.active_score_plugins(state);
        let p = plugins.len();
        if p == 0 || p > MEMO_SCORES {
            return None;
        }
        let mut spec = [PluginSpec::default(); MEMO_SCORES];
        for (s, (pl, weight)) in spec.iter_mut().zip(&plugins) {
            let (normalizes, default) = (pl.has_normalize(), pl.default_normalize());
            if normalizes && default.is_none() {
                return None;
            }
            *s = PluginSpec {
                weight: *weight,
                normalizes,
                default,
            };
        }
        let spec = &spec[..p];
        let key = fwk.score_memo_plugins(&plugins, cx_pod);
        let id = self.memo_id(fwk, cx_pod, MemoPoint::Score, key)?;
        let memo = &snap.memo;
        let weights: Vec<(i64, bool)> = spec.iter().map(|s| (s.weight, s.normalizes)).collect();
        // Pass 1: every piece's raw scores known, the chunks summarized, the window maxima.
        let mut sums: Vec<Option<ChunkScores>> = Vec::with_capacity(w.pieces.len());
        let mut max = [0i64; MEMO_SCORES];
        let scorer = Scorer {
            plugins: &plugins,
            state,
            pod: cx_pod,
            snap,
            id,
        };
        for piece in &w.pieces {
            let sum = match piece {
                Piece::Chunk(c) => match memo.chunk_scores(*c, id, p) {
                    Some(s) => {
                        let len = memo.chunk_range(*c).len();
                        self.stats.memo.note(MemoPoint::Score, len as u32, len);
                        Some(s)
                    }
                    None => {
                        let r = memo.chunk_range(*c);
                        if let Err(st) = scorer.ensure(r.clone(), &self.stats) {
                            return Some(Err(st));
                        }
                        memo.summarize_scores(*c, id, &weights)
                    }
                },
                Piece::Nodes(r) => {
                    if let Err(st) = scorer.ensure_at(&w.nodes[r.clone()], &self.stats) {
                        return Some(Err(st));
                    }
                    None
                }
            };
            match (&sum, piece) {
                (Some(s), _) => {
                    for (m, &x) in max.iter_mut().zip(&s.max).take(p) {
                        *m = (*m).max(x);
                    }
                }
                (None, piece) => {
                    for i in piece_nodes(piece, w, memo) {
                        if !memo.is_scored(i, id) {
                            // A score outside i32 is not kept: the usual path scores it.
                            return None;
                        }
                        for (j, m) in max.iter_mut().enumerate().take(p) {
                            *m = (*m).max(memo.raw(j, i));
                        }
                    }
                }
            }
            sums.push(sum);
        }
        // Pass 2: each piece's best total and its count, then one draw among the ties.
        let totals = Totals { spec, max, memo };
        let bests: Vec<(i64, usize)> = w
            .pieces
            .iter()
            .zip(&sums)
            .map(
                |(piece, sum)| match sum.and_then(|s| totals.chunk_best(&s)) {
                    Some(b) => b,
                    None => best_of(piece_nodes(piece, w, memo).map(|i| totals.of(i))),
                },
            )
            .collect();
        let top = bests.iter().map(|b| b.0).max()?;
        let ties: usize = bests.iter().filter(|b| b.0 == top).map(|b| b.1).sum();
        let mut k = if ties > 1 {
            self.rng.lock().random_range(0..ties)
        } else {
            0
        };
        for (piece, &(best, count)) in w.pieces.iter().zip(&bests) {
            if best != top {
                continue;
            }
            if k < count {
                let found = piece_nodes(piece, w, memo)
                    .filter(|&i| totals.of(i) == top)
                    .nth(k);
                return found.map(Ok);
            }
            k -= count;
        }
        None
    }
}

/// The feasible nodes of one piece, in walk order.
fn piece_nodes<'a>(
    piece: &'a Piece,
    w: &'a Window,
    memo: &'a NodeMemo,
) -> Box<dyn Iterator<Item = usize> + 'a> {
    match piece {
        Piece::Chunk(c) => Box::new(memo.chunk_range(*c)),
        Piece::Nodes(r) => Box::new(w.nodes[r.clone()].iter().copied()),
    }
}

/// The highest of `totals` and how many reach it.
fn best_of(totals: impl Iterator<Item = i64>) -> (i64, usize) {
    totals.fold((i64::MIN, 0), |(best, count), t| match t.cmp(&best) {
        std::cmp::Ordering::Greater => (t, 1),
        std::cmp::Ordering::Equal => (best, count + 1),
        std::cmp::Ordering::Less => (best, count),
    })
}

/// kube's totals from the memo's raw scores and the window's maxima.
struct Totals<'a> {
    spec: &'a [PluginSpec],
    max: [i64; MEMO_SCORES],
    memo: &'a NodeMemo,
}

impl Totals<'_> {
    /// Plugin `j`'s weighted contribution of raw score `s` (a default-normalized plugin with
    /// window maximum 0 adds the same to every node: left out, as the usual path does).
    #[inline]
    fn weighed(&self, j: usize, s: i64) -> i64 {
        let sp = &self.spec[j];
        match sp.default {
            None => s * sp.weight,
            Some(_) if self.max[j] == 0 => 0,
            Some(reverse) => {
                let n = MAX_NODE_SCORE * s / self.max[j];
                (if reverse { MAX_NODE_SCORE - n } else { n }) * sp.weight
            }
        }
    }

    /// Node `i`'s total.
    #[inline]
    fn of(&self, i: usize) -> i64 {
        (0..self.spec.len())
            .map(|j| self.weighed(j, self.memo.raw(j, i)))
            .sum()
    }

    /// A summarized chunk's best total and count, when its normalized plugins add the same
    /// to each of its nodes.
    fn chunk_best(&self, s: &ChunkScores) -> Option<(i64, usize)> {
        let mut best = s.best;
        for (j, sp) in self.spec.iter().enumerate() {
            if sp.normalizes {
                if s.min[j] != s.max[j] && self.max[j] != 0 {
                    return None;
                }
                best += self.weighed(j, s.max[j]);
            }
        }
        Some((best, s.count as usize))
    }
}

/// Scores nodes the memo does not know for the window path's key, and records them.
struct Scorer<'a> {
    plugins: &'a [(Arc<dyn ScorePlugin>, i64)],
    state: &'a CycleState,
    pod: &'a Pod,
    snap: &'a Snapshot,
    id: u32,
}

impl Scorer<'_> {
    /// The nodes of `range` (at most [`CHUNK`]) known to the memo, scored when not.
    fn ensure(&self, range: Range<usize>, stats: &super::SchedulerStats) -> Result<(), Status> {
        let mut index = [0usize; CHUNK];
        let len = range.len();
        for (slot, i) in index.iter_mut().zip(range) {
            *slot = i;
        }
        self.ensure_at(&index[..len], stats)
    }

    /// The nodes at `index` known to the memo, scored a block of [`CHUNK`] at a time when not.
    fn ensure_at(&self, index: &[usize], stats: &super::SchedulerStats) -> Result<(), Status> {
        let memo = &self.snap.memo;
        let p = self.plugins.len();
        for block in index.chunks(CHUNK) {
            let mut unknown = [0usize; CHUNK];
            let mut u = 0;
            for &i in block.iter().filter(|&&i| !memo.is_scored(i, self.id)) {
                unknown[u] = i;
                u += 1;
            }
            stats
                .memo
                .note(MemoPoint::Score, (block.len() - u) as u32, block.len());
            if u == 0 {
                continue;
            }
            let unknown = &unknown[..u];
            let first: &NodeInfo = &self.snap.nodes[unknown[0]];
            let mut nodes = [first; CHUNK];
            let mut rows = [NodeRow::default(); CHUNK];
            for (o, &i) in unknown.iter().enumerate() {
                (nodes[o], rows[o]) = (&self.snap.nodes[i], self.snap.rows[i]);
            }
            let mut scores = [0i64; CHUNK * MEMO_SCORES];
            for ((pl, _), out) in self.plugins.iter().zip(scores.chunks_mut(u)) {
                pl.score_nodes(self.state, self.pod, &nodes[..u], &rows[..u], out)
                    .map_err(|s| s.with_plugin(pl.name()))?;
            }
            memo.note_scores(
                unknown,
                u64::MAX >> (64 - u),
                (self.id, p),
                &scores[..p * u],
            );
        }
        Ok(())
    }
}
