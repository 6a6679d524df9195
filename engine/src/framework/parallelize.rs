//! Parallel Filter across nodes, with kube's node-count arithmetic and early stop.
//!
//! Protocol (kube's `findNodesThatPassFilters`): node `i` of this cycle is
//! `nodes[(start + i) mod N]`. Workers claim chunks of consecutive nodes in order from one
//! counter (kube's `ParallelizeUntil`; the calling thread works from the first chunk on, the
//! pool's other threads join when they wake), buffering what they find; at the end of a chunk a worker takes as many slots as it found from an atomic counter
//! (one add per chunk, not per node), keeps those below `num_to_find` and drops the rest, as
//! kube drops nodes found after the count was reached; once the counter reaches
//! `num_to_find` it raises a stop flag that every worker checks before each block. An `Error`
//! status also stops everything. Results: up to `num_to_find` feasible node indices (in no
//! particular order when run in parallel), the statuses of rejected nodes, and how many nodes
//! were examined.
//!
//! Filter runs a block of consecutive nodes at a time ([`find_feasible_blocks`]): each plugin
//! judges the whole block (one dynamic call per plugin and block, statuses built only for
//! rejected nodes), and the block's verdicts ([`BlockVerdicts`]) are then taken in node order,
//! exactly as a per-node pass would meet them. A block never holds more nodes than could still
//! be needed on the sequential path, so when every node passes the nodes judged are exactly
//! the per-node pass's; verdicts past the point where a pass stops are dropped unseen.
//!
//! A full scan (`num_to_find` ≥ the node count: nothing can stop it early) claims chunks per
//! worker region instead of from one counter (`find_all_feasible_blocks`): the claim order
//! decides nothing there, so it is chosen for the caches, and the feasible list comes out in
//! node order.
//!
//! [`find_feasible_blocks_ordered`] is the deterministic variant (`--clock virtual` runs): workers
//! claim chunks the same way but always finish a chunk they claimed, keep every chunk's
//! statuses, and the result is assembled in node order afterwards, exactly as the sequential
//! pass would have produced it — the same nodes, in the same order, with the same rejections,
//! whatever the thread count. It costs a status per examined node.

use super::status::{Code, Status};
use crossbeam::utils::CachePadded;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// kube's `minFeasibleNodesToFind`.
pub(crate) const MIN_FEASIBLE_NODES_TO_FIND: usize = 100;
/// kube's `minFeasibleNodesPercentageToFind`.
pub(crate) const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: usize = 5;

/// kube's `numFeasibleNodesToFind(percentageOfNodesToScore, numAllNodes)`.
/// `pct` None or 0 selects the adaptive default `50 − N/125`, floored at 5 %.
pub(crate) fn num_feasible_nodes_to_find(pct: Option<u32>, num_all_nodes: usize) -> usize {
    let n = num_all_nodes;
    if n < MIN_FEASIBLE_NODES_TO_FIND {
        return n;
    }
    let mut pct = pct.unwrap_or(0) as usize;
    if pct == 0 {
        pct = 50usize.saturating_sub(n / 125);
        if pct < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND {
            pct = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND;
        }
    }
    if pct >= 100 {
        return n;
    }
    let num = n * pct / 100;
    num.max(MIN_FEASIBLE_NODES_TO_FIND)
}

/// kube's chunk size: `max(1, min(⌊√N⌋, N/parallelism + 1))`.
pub(crate) fn chunk_size(n: usize, parallelism: usize) -> usize {
    let sqrt = (n as f64).sqrt() as usize;
    sqrt.min(n / parallelism.max(1) + 1).max(1)
}

/// Nodes per claimed Filter chunk: kube's [`chunk_size`], rounded down to whole
/// [`FILTER_BLOCK`]s when it holds at least one (a 70-node chunk would run as a 64-node block
/// and a 6-node one, paying the per-block cost twice).
pub(crate) fn filter_chunk(n: usize, parallelism: usize) -> usize {
    let c = chunk_size(n, parallelism);
    if c >= FILTER_BLOCK {
        c / FILTER_BLOCK * FILTER_BLOCK
    } else {
        c
    }
}

/// What a filter pass found.
#[derive(Debug, Default)]
pub(crate) struct FilterOutcome {
    /// Indices into the node list of feasible nodes (at most `num_to_find`).
    pub feasible: Vec<usize>,
    /// `(index, status)` of rejected nodes.
    pub rejected: Vec<(usize, Status)>,
    /// The first `Error` status, if any (the pass was aborted).
    pub error: Option<Status>,
}

thread_local! {
    /// A rejection list handed back after a pass (see [`recycle_rejected`]): a pass over
    /// thousands of rejecting nodes fills tens of thousands of bytes of statuses, and a fresh
    /// list each cycle costs its growth copies and, past the allocator's small sizes, the
    /// kernel's zeroing of new pages.
    static REJECTED_BUFFER: std::cell::RefCell<Vec<(usize, Status)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The calling thread's spare rejection list (empty, with its old capacity).
fn take_rejected_buffer() -> Vec<(usize, Status)> {
    REJECTED_BUFFER.with(|b| std::mem::take(&mut *b.borrow_mut()))
}

/// Hands a rejection list back once its statuses are no longer needed, for the next pass on
/// this thread (the larger of the two spares is kept; lists above a million entries are
/// dropped). Changes no result: only where the next pass's list is allocated.
pub(crate) fn recycle_rejected(mut v: Vec<(usize, Status)>) {
    const MAX: usize = 1 << 20;
    v.clear();
    if v.capacity() == 0 || v.capacity() > MAX {
        return;
    }
    REJECTED_BUFFER.with(|b| {
        let mut b = b.borrow_mut();
        if b.capacity() < v.capacity() {
            *b = v;
        }
    });
}

/// A worker's rejections appended to the pass's list; its emptied buffer kept for its next
/// pass.
fn publish_rejections(shared: &Mutex<Vec<(usize, Status)>>, mut here: Vec<(usize, Status)>) {
    if !here.is_empty() {
        shared
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .append(&mut here);
    }
    recycle_rejected(here);
}

/// `i mod n` for `i < 2n` (a start index below `n` plus an offset below `n`): a compare and a
/// subtraction per node instead of a division.
#[inline(always)]
pub(crate) fn wrap(i: usize, n: usize) -> usize {
    if i >= n { i - n } else { i }
}

/// Nodes per Filter block: each Filter plugin runs over a block before the next plugin starts
/// (fewer dynamic calls, statuses built only for rejections).
pub(crate) const FILTER_BLOCK: usize = 64;

/// The Filter verdicts of one block of consecutive nodes: `pass[o]` for the node at offset
/// `o` of the block, and for every node that did not pass, its status in `rejected`.
///
/// Contract for whoever fills it (the framework's block runner, a plugin's
/// `filter_nodes`): a node is cleared from `pass` at most once, and exactly when its status
/// is pushed to `rejected`.
#[derive(Debug, Default)]
pub struct BlockVerdicts {
    pub pass: Vec<bool>,
    /// `(offset, status)` of the nodes that did not pass, in any order.
    pub rejected: Vec<(usize, Status)>,
}

impl BlockVerdicts {
    /// Every node of a block of `len` passes until a plugin says otherwise.
    pub fn reset(&mut self, len: usize) {
        self.pass.clear();
        self.pass.resize(len, true);
        self.rejected.clear();
    }

    /// Judges the block at position `i` of a pass from `start` over `n` nodes: at most `max`
    /// nodes (and [`FILTER_BLOCK`]), never wrapping past the end of the list. Returns the
    /// block's first node index and its length.
    fn judge(
        &mut self,
        eval: &impl Fn(usize, usize, &mut BlockVerdicts),
        start: usize,
        i: usize,
        max: usize,
        n: usize,
    ) -> (usize, usize) {
        let first = wrap(start + i, n);
        let len = FILTER_BLOCK.min(max).min(n - first);
        self.reset(len);
        eval(first, len, self);
        (first, len)
    }

    /// Walks the block in node order, as the per-node pass would meet the nodes: `visit`
    /// gets the node's index (`first + offset`) and `None` when it passed, else its status;
    /// it returns false to stop.
    fn replay(&mut self, first: usize, mut visit: impl FnMut(usize, Option<Status>) -> bool) {
        // One plugin's rejections come in offset order: sort only when several plugins
        // interleaved them.
        if !self.rejected.is_sorted_by_key(|&(o, _)| o) {
            self.rejected.sort_by_key(|&(o, _)| o);
        }
        let mut rejected = self.rejected.drain(..).peekable();
        for (o, &pass) in self.pass.iter().enumerate() {
            let verdict = if pass {
                None
            } else {
                // Skip entries for earlier offsets (a second status for one node breaks the
                // contract; the first one counts).
                while rejected.next_if(|&(r, _)| r < o).is_some() {}
                Some(match rejected.next_if(|&(r, _)| r == o) {
                    Some((_, st)) => st,
                    None => Status::error("a Filter plugin rejected a node without a status"),
                })
            };
            if !visit(first + o, verdict) {
                break;
            }
        }
    }
}

/// What the workers of one parallel pass share: the block evaluator, the pass (from `start`
/// over `n` nodes), the flag that stops every worker, and the first error.
struct SharedPass<'p, E> {
    eval: &'p E,
    start: usize,
    n: usize,
    stop: &'p AtomicBool,
    error: &'p Mutex<Option<Status>>,
}

impl<E: Fn(usize, usize, &mut BlockVerdicts)> SharedPass<'_, E> {
    /// Judges positions `[i, end)` of the pass, block by block, for a worker: `feasible(idx)`
    /// for each node that passes, in node order; rejections appended to `rejected`. Leaves
    /// early when `stop` is raised. An `Error` status raises `stop`, is kept in `error` if it
    /// is the first, and makes this return false.
    fn judge_chunk(
        &self,
        v: &mut BlockVerdicts,
        (mut i, end): (usize, usize),
        rejected: &mut Vec<(usize, Status)>,
        mut feasible: impl FnMut(usize),
    ) -> bool {
        while i < end {
            if self.stop.load(Ordering::Relaxed) {
                return true;
            }
            let (first, len) = v.judge(self.eval, self.start, i, end - i, self.n);
            let mut failed = false;
            v.replay(first, |idx, verdict| match verdict {
                None => {
                    feasible(idx);
                    true
                }
                Some(st) if st.code() == Code::Error => {
                    self.stop.store(true, Ordering::Relaxed);
                    let mut e = self.error.lock().unwrap_or_else(|p| p.into_inner());
                    if e.is_none() {
                        *e = Some(st);
                    }
                    failed = true;
                    false
                }
                Some(st) => {
                    rejected.push((idx, st));
                    true
                }
            });
            if failed {
                return false;
            }
            i += len;
        }
        true
    }
}

/// Runs `check` over the `n` nodes starting at `start`, stopping once `num_to_find` feasible
/// nodes are found. With `pool` None (or a tiny cluster) it runs inline. The tests' per-node
/// form of [`find_feasible_blocks`].
#[cfg(test)]
pub(crate) fn find_feasible(
    pool: Option<&rayon::ThreadPool>,
    n: usize,
    start: usize,
    num_to_find: usize,
    check: impl Fn(usize) -> Status + Sync,
) -> FilterOutcome {
    find_feasible_blocks(pool, n, start, num_to_find, per_node(check))
}

/// A block evaluator from a per-node check.
fn per_node(
    check: impl Fn(usize) -> Status + Sync,
) -> impl Fn(usize, usize, &mut BlockVerdicts) + Sync {
    move |first, len, v| {
        for o in 0..len {
            let st = check(first + o);
            if !st.is_success() {
                v.pass[o] = false;
                v.rejected.push((o, st));
            }
        }
    }
}

/// Runs Filter over the `n` nodes starting at `start`, stopping once `num_to_find` feasible
/// nodes are found (with `pool` None, or a tiny cluster, inline), a block at a time: `eval(first, len, verdicts)`
/// judges nodes `first..first + len` (a block never wraps around the end of the list), and
/// the verdicts are taken in node order, so the outcome is the per-node pass's. A block may
/// judge a few nodes past the one where the pass stops; their verdicts are dropped, as if
/// never made.
pub(crate) fn find_feasible_blocks(
    pool: Option<&rayon::ThreadPool>,
    n: usize,
    start: usize,
    num_to_find: usize,
    eval: impl Fn(usize, usize, &mut BlockVerdicts) + Sync,
) -> FilterOutcome {
    let mut out = FilterOutcome {
        rejected: take_rejected_buffer(),
        ..FilterOutcome::default()
    };
    if n == 0 || num_to_find == 0 {
        return out;
    }
    // Once per call, so that every node's index is a compare and a subtraction (`wrap`).
    let start = start % n;
    let parallel = pool.filter(|p| p.current_num_threads() > 1 && n >= 32);
    let Some(pool) = parallel else {
        find_feasible_blocks_inline(n, start, num_to_find, &eval, &mut out);
        return out;
    };
    if num_to_find >= n {
        return find_all_feasible_blocks(pool, n, start, eval, std::mem::take(&mut out.rejected));
    }
    find_some_feasible_blocks(pool, n, start, num_to_find, eval, out)
}

/// [`find_feasible_blocks`] on the calling thread alone.
fn find_feasible_blocks_inline(
    n: usize,
    start: usize,
    num_to_find: usize,
    eval: &(impl Fn(usize, usize, &mut BlockVerdicts) + Sync),
    out: &mut FilterOutcome,
) {
    out.feasible.reserve_exact(num_to_find.min(n));
    let mut v = BlockVerdicts::default();
    let mut i = 0;
    let mut done = false;
    while i < n && !done {
        // No more nodes than could still be needed: when every node passes, the pass
        // judges exactly the nodes the per-node pass would.
        let need = num_to_find - out.feasible.len();
        let (first, len) = v.judge(&eval, start, i, need.min(n - i), n);
        // Room for the rejections still to come, at this block's rate: a cluster where
        // most nodes reject the pod (one node of 5,000 has its extended resource) gets one
        // allocation instead of a dozen doublings, each copying every status so far.
        let rejected_here = v.rejected.len();
        if rejected_here > 0 && out.rejected.capacity() - out.rejected.len() < rejected_here {
            let remaining = n - i;
            out.rejected.reserve(remaining * rejected_here / len);
        }
        v.replay(first, |idx, verdict| {
            match verdict {
                None => {
                    out.feasible.push(idx);
                    done = out.feasible.len() >= num_to_find;
                }
                Some(st) if st.code() == Code::Error => {
                    out.error = Some(st);
                    done = true;
                }
                Some(st) => out.rejected.push((idx, st)),
            }
            !done
        });
        i += len;
    }
}

/// [`find_feasible_blocks`] on the pool when it may stop early (`num_to_find` < `n`).
fn find_some_feasible_blocks(
    pool: &rayon::ThreadPool,
    n: usize,
    start: usize,
    num_to_find: usize,
    eval: impl Fn(usize, usize, &mut BlockVerdicts) + Sync,
    mut out: FilterOutcome,
) -> FilterOutcome {
    // Workers claim chunks of consecutive nodes in order from one counter, as kube's
    // `ParallelizeUntil` hands out pieces: the nodes examined are the first ones after `start`
    // whichever thread is free, and a worker that wakes late finds the work taken instead of
    // owning half of it. The calling thread works from the first chunk on; the others join
    // when they wake. Each worker buffers what it finds and publishes once per chunk: one
    // atomic add for the feasible count; its rejections are appended once at the end.
    //
    // `stop` is read before every block, so it sits on a cache line of its own, away from the
    // counters every chunk bumps and from the caller's stack frame.
    let next = CachePadded::new(AtomicUsize::new(0));
    let found = CachePadded::new(AtomicUsize::new(0));
    let stop = CachePadded::new(AtomicBool::new(false));
    let slots: Vec<AtomicUsize> = (0..num_to_find).map(|_| AtomicUsize::new(0)).collect();
    let rejected = Mutex::new(std::mem::take(&mut out.rejected));
    let error = Mutex::new(None);
    let chunk = filter_chunk(n, pool.current_num_threads());
    let chunks = n.div_ceil(chunk);
    let pass = SharedPass {
        eval: &eval,
        start,
        n,
        stop: &stop,
        error: &error,
    };
    let work = || {
        let mut local = Vec::with_capacity(chunk);
        let mut rejected_here = take_rejected_buffer();
        let mut v = BlockVerdicts::default();
        'chunks: while !stop.load(Ordering::Relaxed) {
            let c = next.fetch_add(1, Ordering::Relaxed);
            if c >= chunks {
                break;
            }
            local.clear();
            let range = (c * chunk, ((c + 1) * chunk).min(n));
            let ok = pass.judge_chunk(&mut v, range, &mut rejected_here, |idx| local.push(idx));
            if !ok {
                break 'chunks;
            }
            let k = local.len();
            if k > 0 {
                // Slots [before, before + k) are this chunk's; past num_to_find they are
                // dropped, as kube drops the nodes found after the count was reached.
                let before = found.fetch_add(k, Ordering::AcqRel);
                if before + k >= num_to_find {
                    stop.store(true, Ordering::Relaxed);
                }
                let keep = num_to_find.saturating_sub(before).min(k);
                for (j, &idx) in local[..keep].iter().enumerate() {
                    slots[before + j].store(idx, Ordering::Relaxed);
                }
            }
        }
        publish_rejections(&rejected, rejected_here);
    };
    let helpers = pool.current_num_threads().min(chunks) - 1;
    pool.install(|| {
        rayon::scope(|s| {
            for _ in 0..helpers {
                s.spawn(|_| work());
            }
            work();
        })
    });
    let k = found.load(Ordering::Acquire).min(num_to_find);
    out.feasible = slots[..k]
        .iter()
        .map(|s| s.load(Ordering::Relaxed))
        .collect();
    out.rejected = rejected.into_inner().unwrap_or_else(|p| p.into_inner());
    out.error = error.into_inner().unwrap_or_else(|p| p.into_inner());
    out
}

/// [`find_feasible_blocks`] on the pool when every node is to be examined (`num_to_find` ≥
/// `n`: `percentageOfNodesToScore` 100, or a small cluster). No early stop can happen, so the
/// order in which chunks are claimed decides nothing, and it is chosen for the caches: the
/// chunks are cut into one region per worker, and worker `k` (the caller is worker 0) works
/// through region `k` first, in order, before helping the others from their fronts. With the
/// start node fixed (it is at 100 %), a node falls in the same region every cycle, so its
/// lines are still in the cache of the thread that judged it last time, and Score, which
/// splits the feasible list the same way (the caller takes the front half), finds them there
/// too.
///
/// The feasible nodes come out in node order from `start`, as the sequential pass lists them
/// (each chunk writes its finds at its own offset; the caller compacts). Rejections come in
/// no particular order; an `Error` stops every worker and is returned.
fn find_all_feasible_blocks(
    pool: &rayon::ThreadPool,
    n: usize,
    start: usize,
    eval: impl Fn(usize, usize, &mut BlockVerdicts) + Sync,
    rejected: Vec<(usize, Status)>,
) -> FilterOutcome {
    let threads = pool.current_num_threads();
    let chunk = filter_chunk(n, threads);
    let chunks = n.div_ceil(chunk);
    let regions = threads.min(chunks);
    // Region r holds chunks [bounds[r], bounds[r + 1]); next[r] is its next unclaimed chunk.
    let bounds: Vec<usize> = (0..=regions).map(|r| r * chunks / regions).collect();
    let next: Vec<CachePadded<AtomicUsize>> = bounds[..regions]
        .iter()
        .map(|&b| CachePadded::new(AtomicUsize::new(b)))
        .collect();
    let stop = CachePadded::new(AtomicBool::new(false));
    // Chunk c's feasible nodes at [c·chunk, c·chunk + found[c]).
    let slots: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
    let found: Vec<AtomicUsize> = (0..chunks).map(|_| AtomicUsize::new(0)).collect();
    let rejected = Mutex::new(rejected);
    let error = Mutex::new(None);
    let claim = |worker: usize| {
        (0..regions).map(|k| (worker + k) % regions).find_map(|r| {
            let c = next[r].fetch_add(1, Ordering::Relaxed);
            (c < bounds[r + 1]).then_some(c)
        })
    };
    let pass = SharedPass {
        eval: &eval,
        start,
        n,
        stop: &stop,
        error: &error,
    };
    let work = |worker: usize| {
        let mut rejected_here = take_rejected_buffer();
        let mut v = BlockVerdicts::default();
        'chunks: while !stop.load(Ordering::Relaxed) {
            let Some(c) = claim(worker) else { break };
            let range = (c * chunk, ((c + 1) * chunk).min(n));
            let mut k = 0;
            let ok = pass.judge_chunk(&mut v, range, &mut rejected_here, |idx| {
                slots[c * chunk + k].store(idx, Ordering::Relaxed);
                k += 1;
            });
            if !ok {
                break 'chunks;
            }
            found[c].store(k, Ordering::Release);
        }
        publish_rejections(&rejected, rejected_here);
    };
    pool.install(|| {
        rayon::scope(|s| {
            for worker in 1..regions {
                let work = &work;
                s.spawn(move |_| work(worker));
            }
            work(0);
        })
    });
    let mut out = FilterOutcome {
        error: error.into_inner().unwrap_or_else(|p| p.into_inner()),
        rejected: rejected.into_inner().unwrap_or_else(|p| p.into_inner()),
        ..FilterOutcome::default()
    };
    if out.error.is_none() {
        out.feasible.reserve_exact(n - out.rejected.len());
        for (c, k) in found.iter().enumerate() {
            let k = k.load(Ordering::Acquire);
            out.feasible.extend(
                slots[c * chunk..c * chunk + k]
                    .iter()
                    .map(|i| i.load(Ordering::Relaxed)),
            );
        }
    }
    out
}

/// [`find_feasible_blocks_in_mode`] with a per-node check.
pub(crate) fn find_feasible_in_mode(
    ordered: bool,
    pool: Option<&rayon::ThreadPool>,
    n: usize,
    start: usize,
    num_to_find: usize,
    check: impl Fn(usize) -> Status + Sync,
) -> FilterOutcome {
    find_feasible_blocks_in_mode(ordered, pool, n, start, num_to_find, per_node(check))
}

/// [`find_feasible_blocks_ordered`] when `ordered`, else [`find_feasible_blocks`].
pub(crate) fn find_feasible_blocks_in_mode(
    ordered: bool,
    pool: Option<&rayon::ThreadPool>,
    n: usize,
    start: usize,
    num_to_find: usize,
    eval: impl Fn(usize, usize, &mut BlockVerdicts) + Sync,
) -> FilterOutcome {
    if ordered {
        find_feasible_blocks_ordered(pool, n, start, num_to_find, eval)
    } else {
        find_feasible_blocks(pool, n, start, num_to_find, eval)
    }
}

/// As `find_feasible`, but the outcome is the sequential pass's whatever the pool's size:
/// the first `num_to_find` feasible nodes from `start` in node order, the rejections met before
/// the last of them, and an `Error` only if the sequential pass would have met it first.
#[cfg(test)]
pub(crate) fn find_feasible_ordered(
    pool: Option<&rayon::ThreadPool>,
    n: usize,
    start: usize,
    num_to_find: usize,
    check: impl Fn(usize) -> Status + Sync,
) -> FilterOutcome {
    find_feasible_blocks_ordered(pool, n, start, num_to_find, per_node(check))
}

/// [`find_feasible_ordered`] over blocks (see [`find_feasible_blocks`]).
pub(crate) fn find_feasible_blocks_ordered(
    pool: Option<&rayon::ThreadPool>,
    n: usize,
    start: usize,
    num_to_find: usize,
    eval: impl Fn(usize, usize, &mut BlockVerdicts) + Sync,
) -> FilterOutcome {
    let parallel = pool.filter(|p| p.current_num_threads() > 1 && n >= 32);
    let Some(pool) = parallel else {
        return find_feasible_blocks(None, n, start, num_to_find, eval);
    };
    if num_to_find == 0 {
        return FilterOutcome::default();
    }
    let start = start % n;
    let chunk = chunk_size(n, pool.current_num_threads());
    let chunks = n.div_ceil(chunk);
    let next = CachePadded::new(AtomicUsize::new(0));
    let found = CachePadded::new(AtomicUsize::new(0));
    let stop = CachePadded::new(AtomicBool::new(false));
    // Every claimed chunk is finished, so the chunks below any claimed one are complete.
    let results: Vec<Mutex<Vec<(usize, Status)>>> =
        (0..chunks).map(|_| Mutex::new(Vec::new())).collect();
    let work = || {
        let mut v = BlockVerdicts::default();
        while !stop.load(Ordering::Relaxed) {
            let c = next.fetch_add(1, Ordering::Relaxed);
            if c >= chunks {
                break;
            }
            let mut local = Vec::with_capacity(chunk);
            let mut k = 0;
            let end = ((c + 1) * chunk).min(n);
            let mut i = c * chunk;
            let mut failed = false;
            while i < end && !failed {
                let (first, len) = v.judge(&eval, start, i, end - i, n);
                v.replay(first, |idx, verdict| {
                    let st = verdict.unwrap_or_default();
                    match st.code() {
                        Code::Success => k += 1,
                        // Nothing after an error in this chunk matters to the sequential pass.
                        Code::Error => failed = true,
                        _ => {}
                    }
                    local.push((idx, st));
                    !failed
                });
                i += len;
            }
            if failed {
                stop.store(true, Ordering::Relaxed);
            }
            *results[c].lock().unwrap_or_else(|p| p.into_inner()) = local;
            if found.fetch_add(k, Ordering::AcqRel) + k >= num_to_find {
                stop.store(true, Ordering::Relaxed);
            }
        }
    };
    let helpers = pool.current_num_threads().min(chunks) - 1;
    pool.install(|| {
        rayon::scope(|s| {
            for _ in 0..helpers {
                s.spawn(|_| work());
            }
            work();
        })
    });
    // Replay the chunks in order as the sequential pass visits the nodes.
    let mut out = FilterOutcome::default();
    'replay: for r in results {
        for (idx, st) in r.into_inner().unwrap_or_else(|p| p.into_inner()) {
            match st.code() {
                Code::Success => {
                    out.feasible.push(idx);
                    if out.feasible.len() >= num_to_find {
                        break 'replay;
                    }
                }
                Code::Error => {
                    out.error = Some(st);
                    break 'replay;
                }
                _ => out.rejected.push((idx, st)),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rejection list handed back is the next pass's (same allocation), and the pass's
    /// outcome is the same as with a fresh list.
    #[test]
    fn recycled_rejection_list_is_reused_and_changes_nothing() {
        // Every third node passes.
        let check = |i: usize| {
            if i.is_multiple_of(3) {
                Status::success()
            } else {
                Status::new(Code::Unschedulable, "no")
            }
        };
        let first = find_feasible_blocks(None, 600, 7, 50, per_node(check));
        let want_feasible = first.feasible.clone();
        let want_rejected: Vec<(usize, Code)> =
            first.rejected.iter().map(|(i, s)| (*i, s.code())).collect();
        assert!(!want_rejected.is_empty());
        let ptr = first.rejected.as_ptr();
        recycle_rejected(first.rejected);
        let second = find_feasible_blocks(None, 600, 7, 50, per_node(check));
        assert_eq!(second.rejected.as_ptr(), ptr, "the recycled list is reused");
        assert_eq!(second.feasible, want_feasible);
        let got: Vec<(usize, Code)> = second
            .rejected
            .iter()
            .map(|(i, s)| (*i, s.code()))
            .collect();
        assert_eq!(got, want_rejected);
    }

    // Ported from kubernetes/kubernetes pkg/scheduler/schedule_one_test.go (TestNumFeasibleNodesToFind)
    #[test]
    fn num_feasible_nodes_table() {
        let cases = [
            (None, 10, 10),
            (Some(40), 10, 10),
            (None, 1000, 420),
            (Some(40), 1000, 400),
            (None, 6000, 300),
            (Some(40), 6000, 2400),
            (None, 500, 230),
            (None, 5000, 500),
            (None, 15000, 750),
            (None, 20000, 1000),
            (Some(100), 5000, 5000),
            (Some(1), 1000, 100),
        ];
        for (pct, n, want) in cases {
            assert_eq!(
                num_feasible_nodes_to_find(pct, n),
                want,
                "pct {pct:?} n {n}"
            );
        }
    }

    #[test]
    fn chunk_sizes() {
        // Filter chunks hold whole blocks once kube's size reaches one.
        assert_eq!(filter_chunk(5000, 2), 64);
        assert_eq!(filter_chunk(50_000, 2), 192);
        assert_eq!(filter_chunk(100, 16), 7);
        assert_eq!(chunk_size(5000, 16), 70);
        assert_eq!(chunk_size(100, 16), 7);
        assert_eq!(chunk_size(1, 16), 1);
    }

    #[test]
    fn parallel_and_sequential_find_the_same_count_and_stop_early() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        let check = |i: usize| {
            if i.is_multiple_of(3) {
                Status::new(Code::Unschedulable, "no")
            } else {
                Status::success()
            }
        };
        for p in [None, Some(&pool)] {
            let out = find_feasible(p, 1000, 17, 100, check);
            assert_eq!(out.feasible.len(), 100);
            assert!(out.feasible.iter().all(|i| i % 3 != 0));
            let mut dedup = out.feasible.clone();
            dedup.sort_unstable();
            dedup.dedup();
            assert_eq!(dedup.len(), 100, "no node counted twice");
            assert!(out.error.is_none());
        }
        let all = find_feasible(Some(&pool), 1000, 0, 1000, check);
        assert_eq!(all.feasible.len(), 666);
        assert_eq!(all.rejected.len(), 334);
        let err = find_feasible(Some(&pool), 1000, 0, 1000, |i| {
            if i == 500 {
                Status::error("boom")
            } else {
                Status::success()
            }
        });
        assert_eq!(err.error.map(|s| s.message()), Some("boom".to_string()));
    }

    /// Chunks are handed out in order, as kube's `ParallelizeUntil` does: with an early stop,
    /// every node examined lies within the first chunks after `start`, whichever thread took
    /// them (a divide-and-conquer split would send a worker to the far half of the cluster).
    #[test]
    fn parallel_workers_take_chunks_in_order_from_start() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        let n = 10_000;
        let start = 9_000;
        let chunk = chunk_size(n, 4);
        for _ in 0..20 {
            let seen = Mutex::new(Vec::new());
            let out = find_feasible(Some(&pool), n, start, 500, |i| {
                seen.lock().unwrap().push(i);
                Status::success()
            });
            assert_eq!(out.feasible.len(), 500);
            // Position of each examined node in this cycle's order.
            let pos = |i: usize| (i + n - start) % n;
            let furthest = seen
                .into_inner()
                .unwrap()
                .into_iter()
                .map(pos)
                .max()
                .unwrap();
            // At most one chunk in progress per worker past the 500th node.
            assert!(
                furthest < 500 + 4 * chunk,
                "examined a node {furthest} positions after start"
            );
            assert!(out.feasible.iter().all(|&i| pos(i) < 500 + 4 * chunk));
        }
    }

    /// A per-node check from generated codes: 0 an error, 1..=7 a rejection, else success.
    fn check_from(codes: &[u8]) -> impl Fn(usize) -> Status + Sync + Copy + '_ {
        |i| match codes[i] {
            0 => Status::error(format!("error at {i}")),
            1..=7 => Status::new(Code::Unschedulable, format!("no {i}")),
            _ => Status::success(),
        }
    }

    /// `(node, message)` of every rejection, in outcome order.
    fn messages(o: &FilterOutcome) -> Vec<(usize, String)> {
        o.rejected.iter().map(|(i, s)| (*i, s.message())).collect()
    }

    /// The per-node pass the block machinery must reproduce: visit nodes from `start` in order,
    /// stop at the `num_to_find`-th feasible node or at the first error.
    fn per_node_reference(
        n: usize,
        start: usize,
        num_to_find: usize,
        check: impl Fn(usize) -> Status,
    ) -> (FilterOutcome, usize) {
        let mut out = FilterOutcome::default();
        let mut judged = 0;
        for i in 0..n {
            if out.feasible.len() >= num_to_find {
                break;
            }
            let idx = (start + i) % n;
            let st = check(idx);
            judged += 1;
            match st.code() {
                Code::Success => out.feasible.push(idx),
                Code::Error => {
                    out.error = Some(st);
                    break;
                }
                _ => out.rejected.push((idx, st)),
            }
        }
        (out, judged)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: if cfg!(miri) { 2 } else { 64 },
            ..Default::default()
        })]
        /// The sequential block pass equals the per-node pass: same feasible nodes in the same
        /// order, same rejections, same error, whatever order a block's rejections come in;
        /// and when every node passes it judges no node the per-node pass would not.
        #[test]
        fn block_pass_equals_per_node_pass(
            codes in proptest::collection::vec(0u8..20, 1..400),
            start_frac in 0.0f64..1.0,
            want_frac in 0.0f64..1.2,
            reversed in proptest::bool::ANY,
        ) {
            let n = codes.len();
            let start = ((n as f64) * start_frac) as usize % n;
            let want = (((n as f64) * want_frac) as usize).max(1);
            let check = check_from(&codes);
            let (reference, judged) = per_node_reference(n, start, want, check);
            let calls = AtomicUsize::new(0);
            let blocks = find_feasible_blocks(None, n, start, want, |first, len, v| {
                calls.fetch_add(len, Ordering::Relaxed);
                // Hand the rejections over last node first when `reversed`.
                let order: Vec<usize> = if reversed { (0..len).rev().collect() } else { (0..len).collect() };
                for o in order {
                    let st = check(first + o);
                    if !st.is_success() {
                        v.pass[o] = false;
                        v.rejected.push((o, st));
                    }
                }
            });
            proptest::prop_assert_eq!(&blocks.feasible, &reference.feasible);
            proptest::prop_assert_eq!(messages(&blocks), messages(&reference));
            proptest::prop_assert_eq!(blocks.error.map(|s| s.message()), reference.error.map(|s| s.message()));
            if codes.iter().all(|&c| c >= 8) {
                proptest::prop_assert_eq!(calls.load(Ordering::Relaxed), judged);
            }
        }

        /// A full scan on the pool (every node wanted, chunks claimed by region) lists the
        /// sequential pass's feasible nodes in the same order, with the same rejections, and
        /// reports an error when the sequential pass meets one.
        #[test]
        fn full_scan_parallel_equals_sequential(
            codes in proptest::collection::vec(0u8..20, 32..600),
            start_frac in 0.0f64..1.0,
            extra in 0usize..3,
            threads in 2usize..5,
            with_error in proptest::bool::ANY,
        ) {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let n = codes.len();
            let start = ((n as f64) * start_frac) as usize % n;
            let codes: Vec<u8> = codes.iter().map(|&c| if c == 0 && !with_error { 1 } else { c }).collect();
            let check = check_from(&codes);
            let seq = find_feasible(None, n, start, n + extra, check);
            let par = find_feasible(Some(&pool), n, start, n + extra, check);
            proptest::prop_assert_eq!(par.error.is_some(), seq.error.is_some());
            if seq.error.is_none() {
                proptest::prop_assert_eq!(&par.feasible, &seq.feasible);
                let mut a = messages(&par);
                let mut b = messages(&seq);
                a.sort();
                b.sort();
                proptest::prop_assert_eq!(a, b);
            }
        }

        /// The ordered variant returns exactly the sequential pass's outcome (same feasible
        /// nodes in the same order, same rejections, same error) on any pool size.
        #[test]
        fn ordered_parallel_equals_sequential(
            codes in proptest::collection::vec(0u8..20, 32..600),
            start_frac in 0.0f64..1.0,
            want_frac in 0.0f64..1.2,
            threads in 2usize..5,
        ) {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let n = codes.len();
            let start = ((n as f64) * start_frac) as usize % n;
            let want = (((n as f64) * want_frac) as usize).max(1);
            let check = check_from(&codes);
            let seq = find_feasible(None, n, start, want, check);
            let par = find_feasible_ordered(Some(&pool), n, start, want, check);
            proptest::prop_assert_eq!(&par.feasible, &seq.feasible);
            proptest::prop_assert_eq!(messages(&par), messages(&seq));
            proptest::prop_assert_eq!(par.error.map(|s| s.message()), seq.error.map(|s| s.message()));
        }
    }
}
