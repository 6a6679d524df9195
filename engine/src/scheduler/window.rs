//! The window path: Filter, Score and the host choice of a cycle the node memo can answer,
//! a chunk of [`CHUNK`] nodes at a time instead of a node at a time (tidegate's own; kube
//! walks every node of the window).
//!
//! With the adaptive `percentageOfNodesToScore`, a cycle walks `numFeasibleNodesToFind`
//! nodes from the rotating start index: 50,000 of 1,000,000 nodes. When the pod is like the
//! last ones, the memo (`framework/node_memo.rs`) already knows almost every answer, and the
//! cost is the walk itself: reading a pass and the raw scores of every node, listing the
//! feasible nodes, adding their totals. The memo's summaries say the same for a whole
//! aligned chunk (64 nodes) or super chunk (1,024) at once: every node passed; each plugin's
//! highest and lowest raw score; the best total and how many nodes reach it. This path reads
//! those and visits nodes only where no summary holds: the window's two ends, and the chunks
//! a node changed in since. A window of 50,000 nodes is about 50 super chunks.
//!
//! # Protocol
//!
//! * **Filter** ([`Scheduler::filter_window`]), when the cycle would use the Filter memo on
//!   the snapshot's whole list with no nominated pod and no node judged alone first: from the
//!   start index, a whole super chunk or chunk whose summary holds for this key counts all
//!   its nodes feasible (unless that would pass `numFeasibleNodesToFind`; a super chunk's
//!   summary is set there from its chunks' when each holds); any other stretch goes
//!   through `node_memo::filter_block` (the memo, then the plugins for the nodes it does not
//!   know), node by node up to the last feasible node needed, and its chunk is summarized
//!   when every node of it now passes. A whole chunk judged so (every node passed, all of
//!   them needed) is taken as a chunk piece, so Score reads its summary too. The walk gives
//!   up, with nothing decided, on a Filter error, on no feasible node (the usual pass then
//!   builds the diagnosis) or before judging more than [`MAX_JUDGED`] nodes (the pool
//!   judges big unknown stretches faster). A first walk over the summaries and entries
//!   alone, judging nothing, gives up at once when more nodes than that are unknown (a
//!   rejection is never memoized: judged here, it would be judged again by the usual pass).
//!   Otherwise the feasible set, its order and the processed count (the next start index)
//!   are the sequential pass's.
//! * **PreScore** gets the first feasible node alone, and only when no PreScore plugin reads
//!   the feasible nodes for this pod ([`PreScorePlugin::pre_score_reads_nodes`]); otherwise,
//!   or when batching keeps the scored nodes, the window is listed and the usual path runs.
//! * **Score** ([`Scheduler::score_window`]), when every active Score plugin is node-local
//!   (a Score memo key), at most `MEMO_SCORES`, and each either does not normalize or
//!   normalizes kube's default way. Pass 1: each whole span's summary (nodes the memo does
//!   not know are scored and recorded first, then the chunks summarized, then the super
//!   chunk from them), each other stretch's raw scores; the window's maximum of each
//!   default-normalized plugin. Pass 2: a span whose default-normalized plugins are constant
//!   in it (or whose window maximum is 0) has best total `best + Σ w·normalized(constant)`
//!   reached by `count` nodes; other spans and stretches are totalled node by node. The host
//!   is the `k`-th node with the highest total in walk order, `k` drawn as `select_host`
//!   draws it; within a super chunk the chunks' summaries skip to the chunk that holds it.
//!
//! # Invariants
//!
//! 1. The feasible nodes, in order, and the processed count equal those of the sequential
//!    Filter pass (`find_feasible_blocks` inline, as in deterministic mode or on one
//!    thread): a summary holds only what the memo's entries hold, and those only what the
//!    plugins would say (node memo invariants 1, 3). The pool's pass (kube's parallel one,
//!    when not deterministic) may find another valid set; the window path's is the
//!    sequential one, a set kube's pass may also find.
//! 2. Each node's total equals the usual Score path's total: the same raw scores, the same
//!    window maxima, the same integer normalization; a summarized span's nodes differ from
//!    its best sum by the same constant.
//! 3. One random draw per cycle when more than one node ties, over the same count, picking
//!    the same position in the same order: the host is the one the usual path would choose.
//! 4. The path writes only memo entries and summaries (true facts) until it commits; giving
//!    up leaves the cycle to the usual path as if the window path had not run. When two
//!    Score plugins fail on different nodes, the error reported may be another one than the
//!    usual path's (it scores unknown nodes grouped by chunk); the cycle fails either way.

use crate::api::Pod;
use crate::framework::interface::{FilterPlugin, MAX_NODE_SCORE, ScorePlugin};
use crate::framework::node_info::NodeTraits;
use crate::framework::node_memo::{
    self, CHUNK, MEMO_SCORES, MemoPoint, NodeMemo, SUPER, SpanScores,
};
use crate::framework::parallelize::BlockVerdicts;
use crate::framework::runtime::Framework;
use crate::framework::{Code, CycleState, NodeInfo, NodeRow, Snapshot, Status};
use rand::Rng;
use std::ops::Range;
use std::sync::Arc;

use super::Scheduler;

/// Nodes the plugins may judge in one window walk: it gives up to the usual pass before a
/// stretch would take it past this.
pub(super) const MAX_JUDGED: usize = 4 * CHUNK;

/// One stretch of the walk, in walk order.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    /// Super chunk `s`, every node of it feasible (its summary).
    Super(usize),
    /// Chunk `c`, every node of it feasible (its summary, or judged so in this walk).
    Chunk(usize),
    /// Feasible nodes `Window::nodes[range]`, found node by node.
    Nodes(Range<usize>),
}

/// The feasible nodes of a window walk: chunks and super chunks whole, and the nodes found
/// one by one. Its buffers come from the thread's spares and go back there when it drops
/// ([`Spares`]).
#[derive(Debug, Default)]
pub(super) struct Window {
    pieces: Vec<Piece>,
    nodes: Vec<usize>,
    count: usize,
}

/// The buffers a window-path cycle fills, kept per thread from one cycle to the next: a cycle
/// allocated four of them (the walk's pieces and nodes, Score's summaries and bests), and,
/// with binding cycles holding the scheduling thread's other allocations for a while, fresh
/// ones often landed on fresh pages that the kernel zeroes first.
#[derive(Default)]
struct Spares {
    pieces: Vec<Piece>,
    nodes: Vec<usize>,
    sums: Vec<Option<SpanScores>>,
    bests: Vec<(i64, usize)>,
}

thread_local! {
    static SPARES: std::cell::RefCell<Spares> = std::cell::RefCell::new(Spares::default());
}

/// A spare is kept only up to this many entries (a walk that listed a huge window once
/// should not pin its buffer).
const SPARE_MAX: usize = 1 << 16;

/// Puts `v` back as the thread's spare in `slot`, emptied, unless it is too big or the slot
/// already holds one at least as big.
fn give_back<T>(slot: &mut Vec<T>, mut v: Vec<T>) {
    v.clear();
    if v.capacity() <= SPARE_MAX && v.capacity() > slot.capacity() {
        *slot = v;
    }
}

impl Window {
    /// An empty window on the thread's spare buffers (sized for a usual walk when there are
    /// none: a few pieces, the two ends' nodes; growing from empty reallocated about eight
    /// times a cycle).
    fn new() -> Window {
        let (mut pieces, mut nodes) = SPARES.with(|s| {
            let mut s = s.borrow_mut();
            (std::mem::take(&mut s.pieces), std::mem::take(&mut s.nodes))
        });
        pieces.reserve(16);
        nodes.reserve(2 * CHUNK);
        Window {
            pieces,
            nodes,
            count: 0,
        }
    }

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

    /// Appends the nodes from `i` that `verdicts` passed, up to `need` of them; returns how
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

    /// Appends a summarized span of `len` feasible nodes.
    fn take_whole(&mut self, piece: Piece, len: usize) {
        self.pieces.push(piece);
        self.count += len;
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

/// Why Score left the window path: the usual path scores the listed window, or a plugin
/// failed.
enum Stop {
    Usual,
    Failed(Status),
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
        let sums = &memo.sums;
        let n = nodes.len();
        if !mostly_known(memo, id, start, num_to_find, n) {
            return None;
        }
        let mut w = Window::new();
        let mut v = BlockVerdicts::default();
        let (mut visited, mut judged, mut i) = (0, 0, start % n.max(1));
        let next = |end: usize| if end == n { 0 } else { end };
        while visited < n && w.count < num_to_find {
            let need = num_to_find - w.count;
            if let Some((piece, span)) = whole_span(memo, id, i, need, n - visited) {
                w.take_whole(piece, span.len());
                let len = span.len();
                self.stats.memo.note(MemoPoint::Filter, len as u32, len);
                (visited, i) = (visited + len, next(span.end));
                continue;
            }
            let chunk = sums.chunk_range(i / CHUNK);
            let c = i / CHUNK;
            let len = (chunk.end - i).min(n - visited).min(need);
            // Give up before judging past the limit (a rejection is never memoized: judging
            // it here would be lost work when the usual pass follows).
            let mask = memo.passed_mask(i, len, id);
            let unknown = len - mask.count_ones() as usize;
            if judged + unknown > MAX_JUDGED {
                return None;
            }
            v.reset(len);
            let judge = |a: usize, b: usize, run: &mut BlockVerdicts| {
                let (nodes, rows) = (&nodes[i + a..i + b], &rows[i + a..i + b]);
                Framework::run_filter_plugins_block(filters, state, pod, nodes, rows, run);
            };
            let known = node_memo::filter_block(memo, id, (i, len), mask, &mut v, judge) as usize;
            self.stats.memo.note(MemoPoint::Filter, known as u32, len);
            judged += len - known;
            if v.rejected.iter().any(|(_, st)| st.code() == Code::Error) {
                return None;
            }
            // A whole chunk whose every node passed: each now holds a pass of `id` (known,
            // or just recorded by `filter_block`). Its summary is set without a second read of
            // the entries, and Score takes it as a chunk (its summary, not node by node).
            let whole = chunk == (i..i + len) && v.pass.iter().all(|&p| p);
            let taken = if whole {
                sums.set_chunk_passed(c, id);
                w.take_whole(Piece::Chunk(c), len);
                len
            } else {
                if !sums.chunk_passed(c, id) {
                    memo.summarize_passed(c, id);
                }
                w.take_judged(i, &v, need)
            };
            (visited, i) = (visited + taken, next(i + taken));
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
            // As `score.rs`: the default way counts only for a plugin that normalizes.
            let normalizes = pl.has_normalize();
            let default = normalizes.then(|| pl.default_normalize()).flatten();
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
        let scorer = Scorer {
            plugins: &plugins,
            state,
            pod: cx_pod,
            snap,
            id,
        };
        // Pass 1: every piece's raw scores known, its summary when it has one, the window's
        // maxima.
        let mut bufs = ScoreBuffers::new();
        let (sums, bests) = (&mut bufs.sums, &mut bufs.bests);
        let mut max = [0i64; MEMO_SCORES];
        for piece in &w.pieces {
            let sum = match self.piece_scores(&scorer, piece, w, spec) {
                Ok(sum) => sum,
                Err(Stop::Usual) => return None,
                Err(Stop::Failed(st)) => return Some(Err(st)),
            };
            match &sum {
                Some(s) => {
                    for (m, &x) in max.iter_mut().zip(&s.max).take(p) {
                        *m = (*m).max(x);
                    }
                }
                None => {
                    for i in piece_nodes(piece, w, memo) {
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
        bests.extend(w.pieces.iter().zip(sums.iter()).map(|(piece, sum)| {
            match sum.and_then(|s| totals.span_best(&s)) {
                Some(b) => b,
                None => totals.piece_best(piece, w),
            }
        }));
        let top = bests.iter().map(|b| b.0).max()?;
        let ties: usize = bests.iter().filter(|b| b.0 == top).map(|b| b.1).sum();
        let mut k = if ties > 1 {
            self.rng.lock().random_range(0..ties)
        } else {
            0
        };
        // The draw is made: no way back to the usual path (it would draw again). The
        // summaries' counts make the tie found (invariant 3); an error if they did not.
        let lost = || Status::error("window path: the drawn tie was not found");
        for (piece, &(best, count)) in w.pieces.iter().zip(bests.iter()) {
            if best != top {
                continue;
            }
            if k >= count {
                k -= count;
                continue;
            }
            return Some(totals.pick(piece, w, id, top, &mut k).ok_or_else(lost));
        }
        Some(Err(lost()))
    }

    /// Pass 1 of [`Scheduler::score_window`] on one piece: its nodes' raw scores known to
    /// the memo (scored and recorded when not), and its summary when it is a chunk or a super
    /// chunk (set when missing).
    fn piece_scores(
        &self,
        scorer: &Scorer,
        piece: &Piece,
        w: &Window,
        spec: &[PluginSpec],
    ) -> Result<Option<SpanScores>, Stop> {
        let (memo, id, p) = (&scorer.snap.memo, scorer.id, spec.len());
        let sums = &memo.sums;
        let weights: [(i64, bool); MEMO_SCORES] =
            std::array::from_fn(|j| spec.get(j).map_or((0, false), |s| (s.weight, s.normalizes)));
        let chunk = |c: usize| -> Result<SpanScores, Stop> {
            if let Some(s) = sums.chunk_scores(c, id, p) {
                let len = sums.chunk_range(c).len();
                self.stats.memo.note(MemoPoint::Score, len as u32, len);
                return Ok(s);
            }
            scorer.ensure(sums.chunk_range(c), &self.stats)?;
            // None: a score outside i32 was not kept.
            memo.summarize_scores(c, id, &weights[..p])
                .ok_or(Stop::Usual)
        };
        match piece {
            Piece::Super(s) => {
                if let Some(x) = sums.super_scores(*s, id, p) {
                    let len = sums.super_range(*s).len();
                    self.stats.memo.note(MemoPoint::Score, len as u32, len);
                    return Ok(Some(x));
                }
                for c in sums.chunks_of(*s) {
                    chunk(c)?;
                }
                sums.summarize_super(*s, id, p).map(Some).ok_or(Stop::Usual)
            }
            Piece::Chunk(c) => chunk(*c).map(Some),
            Piece::Nodes(r) => {
                let nodes = &w.nodes[r.clone()];
                scorer.ensure_at(nodes, &self.stats)?;
                if nodes.iter().any(|&i| !memo.is_scored(i, id)) {
                    return Err(Stop::Usual);
                }
                Ok(None)
            }
        }
    }
}

impl Drop for Window {
    fn drop(&mut self) {
        let (pieces, nodes) = (
            std::mem::take(&mut self.pieces),
            std::mem::take(&mut self.nodes),
        );
        // (`try_with`: a window dropped while the thread's locals are torn down is freed.)
        let _ = SPARES.try_with(|s| {
            let mut s = s.borrow_mut();
            give_back(&mut s.pieces, pieces);
            give_back(&mut s.nodes, nodes);
        });
    }
}

/// Score's per-piece summaries and bests on the thread's spare buffers, given back when the
/// cycle's Score ends (on every return path).
struct ScoreBuffers {
    sums: Vec<Option<SpanScores>>,
    bests: Vec<(i64, usize)>,
}

impl ScoreBuffers {
    fn new() -> ScoreBuffers {
        SPARES.with(|s| {
            let mut s = s.borrow_mut();
            ScoreBuffers {
                sums: std::mem::take(&mut s.sums),
                bests: std::mem::take(&mut s.bests),
            }
        })
    }
}

impl Drop for ScoreBuffers {
    fn drop(&mut self) {
        let (sums, bests) = (
            std::mem::take(&mut self.sums),
            std::mem::take(&mut self.bests),
        );
        let _ = SPARES.try_with(|s| {
            let mut s = s.borrow_mut();
            give_back(&mut s.sums, sums);
            give_back(&mut s.bests, bests);
        });
    }
}

/// The super chunk, else the chunk, that starts at node `i`, fits in the `need` feasible
/// nodes still wanted and the `left` nodes not yet walked, and whose summary says every node
/// passed key `id`; with its snapshot indices.
fn whole_span(
    memo: &NodeMemo,
    id: u32,
    i: usize,
    need: usize,
    left: usize,
) -> Option<(Piece, Range<usize>)> {
    let sums = &memo.sums;
    let fits = |r: &Range<usize>| i == r.start && r.len() <= need && r.len() <= left;
    let s = i / (CHUNK * SUPER);
    let sup = sums.super_range(s);
    if fits(&sup) && sums.super_passed(s, id) {
        return Some((Piece::Super(s), sup));
    }
    let c = i / CHUNK;
    let chunk = sums.chunk_range(c);
    (fits(&chunk) && sums.chunk_passed(c, id)).then_some((Piece::Chunk(c), chunk))
}

/// Whether the walk from `start` for `num_to_find` feasible nodes would judge at most
/// [`MAX_JUDGED`] nodes, counting each node the memo does not know as one that passes: read
/// from the summaries and the memo's entries alone, nothing judged. A rejection is never
/// memoized, so without this a pod that many nodes reject would have some judged here, and
/// again by the usual pass, every cycle.
fn mostly_known(memo: &NodeMemo, id: u32, start: usize, num_to_find: usize, n: usize) -> bool {
    let sums = &memo.sums;
    let (mut visited, mut found, mut unknown, mut i) = (0, 0, 0, start % n.max(1));
    while visited < n && found < num_to_find {
        let need = num_to_find - found;
        let len = if let Some((_, span)) = whole_span(memo, id, i, need, n - visited) {
            span.len()
        } else {
            let chunk = sums.chunk_range(i / CHUNK);
            let len = (chunk.end - i).min(n - visited).min(need);
            unknown += len - memo.passed_mask(i, len, id).count_ones() as usize;
            if unknown > MAX_JUDGED {
                return false;
            }
            len
        };
        found += len;
        visited += len;
        i = if i + len == n { 0 } else { i + len };
    }
    true
}

/// The feasible nodes of one piece, in walk order.
fn piece_nodes<'a>(piece: &'a Piece, w: &'a Window, memo: &'a NodeMemo) -> PieceNodes<'a> {
    match piece {
        Piece::Super(s) => PieceNodes::Span(memo.sums.super_range(*s)),
        Piece::Chunk(c) => PieceNodes::Span(memo.sums.chunk_range(*c)),
        Piece::Nodes(r) => PieceNodes::Listed(w.nodes[r.clone()].iter()),
    }
}

/// [`piece_nodes`]' iterator (no allocation per piece).
enum PieceNodes<'a> {
    Span(Range<usize>),
    Listed(std::slice::Iter<'a, usize>),
}

impl Iterator for PieceNodes<'_> {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        match self {
            PieceNodes::Span(r) => r.next(),
            PieceNodes::Listed(it) => it.next().copied(),
        }
    }
}

/// The highest of `totals` and how many reach it.
fn best_of(totals: impl Iterator<Item = i64>) -> (i64, usize) {
    totals.fold((i64::MIN, 0), |acc, t| join_best(acc, (t, 1)))
}

/// Two `(best, count)` pairs as one: the higher best, counts added on a tie.
fn join_best((best, count): (i64, usize), (b, c): (i64, usize)) -> (i64, usize) {
    match b.cmp(&best) {
        std::cmp::Ordering::Greater => (b, c),
        std::cmp::Ordering::Equal => (best, count + c),
        std::cmp::Ordering::Less => (best, count),
    }
}

/// The snapshot indices of `r` (at most [`CHUNK`]) as a list, and its length.
fn listed(r: Range<usize>) -> ([usize; CHUNK], usize) {
    let mut index = [0usize; CHUNK];
    let len = r.len();
    for (slot, i) in index.iter_mut().zip(r) {
        *slot = i;
    }
    (index, len)
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

    /// A summarized span's best total and count, when its normalized plugins add the same
    /// to each of its nodes.
    fn span_best(&self, s: &SpanScores) -> Option<(i64, usize)> {
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

    /// The totals of `nodes` (at most [`CHUNK`]) into `out`, a plugin at a time: each
    /// plugin's way of weighing is chosen once, and its raw scores are read in a row.
    /// Integer sums, so the same as [`Self::of`] per node in any order.
    fn block_totals(&self, nodes: &[usize], out: &mut [i64]) {
        let out = &mut out[..nodes.len()];
        out.fill(0);
        for (j, sp) in self.spec.iter().enumerate() {
            match sp.default {
                None => {
                    for (t, &i) in out.iter_mut().zip(nodes) {
                        *t += self.memo.raw(j, i) * sp.weight;
                    }
                }
                Some(_) if self.max[j] == 0 => {}
                Some(_) => {
                    for (t, &i) in out.iter_mut().zip(nodes) {
                        *t += self.weighed(j, self.memo.raw(j, i));
                    }
                }
            }
        }
    }

    /// The best total of a piece without a usable summary, and how many of its nodes reach
    /// it.
    fn piece_best(&self, piece: &Piece, w: &Window) -> (i64, usize) {
        let Piece::Nodes(r) = piece else {
            return best_of(piece_nodes(piece, w, self.memo).map(|i| self.of(i)));
        };
        let mut out = [0i64; CHUNK];
        w.nodes[r.clone()]
            .chunks(CHUNK)
            .fold((i64::MIN, 0), |acc, block| {
                self.block_totals(block, &mut out);
                join_best(acc, best_of(out[..block.len()].iter().copied()))
            })
    }

    /// The `k`-th node (from 0, in walk order) of `nodes` whose total is `top`, a block at
    /// a time; when there are fewer, `k` less their count.
    fn nth_top(&self, nodes: &[usize], top: i64, k: &mut usize) -> Option<usize> {
        let mut out = [0i64; CHUNK];
        for block in nodes.chunks(CHUNK) {
            self.block_totals(block, &mut out);
            for (&i, &t) in block.iter().zip(&out) {
                if t == top {
                    if *k == 0 {
                        return Some(i);
                    }
                    *k -= 1;
                }
            }
        }
        None
    }

    /// The `k`-th node of `piece` whose total is `top`: a super chunk's chunks are skipped
    /// by their summaries, and only the chunk that holds it is visited node by node.
    fn pick(&self, piece: &Piece, w: &Window, id: u32, top: i64, k: &mut usize) -> Option<usize> {
        let sums = &self.memo.sums;
        let chunks = match piece {
            Piece::Super(s) => sums.chunks_of(*s),
            Piece::Chunk(c) => *c..*c + 1,
            Piece::Nodes(r) => return self.nth_top(&w.nodes[r.clone()], top, k),
        };
        let p = self.spec.len();
        for c in chunks {
            let best = sums.chunk_scores(c, id, p).and_then(|s| self.span_best(&s));
            match best {
                Some((b, _)) if b != top => continue,
                Some((_, count)) if *k >= count => *k -= count,
                _ => {
                    let (index, len) = listed(sums.chunk_range(c));
                    if let Some(i) = self.nth_top(&index[..len], top, k) {
                        return Some(i);
                    }
                }
            }
        }
        None
    }
}

/// [`Scorer::ensure_at`]'s small scratch: up to this many unknown nodes of a block.
const FEW: usize = 8;

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
    fn ensure(&self, range: Range<usize>, stats: &super::SchedulerStats) -> Result<(), Stop> {
        let (index, len) = listed(range);
        self.ensure_at(&index[..len], stats)
    }

    /// The nodes at `index` known to the memo, scored a block of [`CHUNK`] at a time when not.
    fn ensure_at(&self, index: &[usize], stats: &super::SchedulerStats) -> Result<(), Stop> {
        let memo = &self.snap.memo;
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
            // Usually one node changed since the last cycle: scratch sized for a few nodes
            // (zeroing a whole block's rows and scores cost more than scoring the node).
            if u <= FEW {
                self.score_unknown::<FEW>(unknown, &mut [0; FEW * MEMO_SCORES])?;
            } else {
                self.score_unknown::<CHUNK>(unknown, &mut [0; CHUNK * MEMO_SCORES])?;
            }
        }
        Ok(())
    }

    /// Scores `unknown` (at most `N` nodes) by every plugin, into `scores` (plugin-major,
    /// at least `p × N` long), and records them in the memo.
    fn score_unknown<const N: usize>(
        &self,
        unknown: &[usize],
        scores: &mut [i64],
    ) -> Result<(), Stop> {
        let (u, p) = (unknown.len(), self.plugins.len());
        let first: &NodeInfo = &self.snap.nodes[unknown[0]];
        let mut nodes = [first; N];
        let mut rows = [NodeRow::default(); N];
        for (o, &i) in unknown.iter().enumerate() {
            (nodes[o], rows[o]) = (&self.snap.nodes[i], self.snap.rows[i]);
        }
        for ((pl, _), out) in self.plugins.iter().zip(scores.chunks_mut(u)) {
            pl.score_nodes(self.state, self.pod, &nodes[..u], &rows[..u], out)
                .map_err(|s| Stop::Failed(s.with_plugin(pl.name())))?;
        }
        self.snap.memo.note_scores(
            unknown,
            u64::MAX >> (64 - u),
            (self.id, p),
            &scores[..p * u],
        );
        Ok(())
    }
}

#[cfg(test)]
mod spare_tests {
    use super::{Piece, ScoreBuffers, Window};

    // Capacities, not addresses: a freed buffer of the same size class may come back at the
    // same address from the allocator, but a fresh window starts at the usual walk's size.
    #[test]
    fn a_dropped_window_hands_its_buffers_to_the_next_one() {
        let mut w = Window::new();
        w.nodes.extend(0..500);
        w.pieces.extend((0..100).map(Piece::Chunk));
        drop(w);
        let w = Window::new();
        assert!(w.nodes.capacity() >= 500, "the spare node list is reused");
        assert!(w.pieces.capacity() >= 100, "the spare piece list is reused");
        assert!(w.nodes.is_empty() && w.pieces.is_empty() && w.count() == 0);
        // A second window while the first lives starts at the usual size.
        let other = Window::new();
        assert!(other.nodes.capacity() < 500 && other.pieces.capacity() < 100);
    }

    #[test]
    fn score_buffers_come_back_empty_on_every_path() {
        {
            let mut b = ScoreBuffers::new();
            b.bests.extend((0..1000).map(|i| (i, 1)));
        }
        let b = ScoreBuffers::new();
        assert!(b.bests.capacity() >= 1000, "the spare bests are reused");
        assert!(b.bests.is_empty() && b.sums.is_empty());
    }
}
