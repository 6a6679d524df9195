//! Score (kube's `prioritizeNodes` and `selectHost` in `pkg/scheduler/schedule_one.go`): the
//! PreScore'd plugins score the feasible nodes in blocks of [`SCORE_BLOCK`] nodes, NormalizeScore
//! and the weights make the totals, and the host is drawn uniformly among the highest.

use crate::api::Pod;
use crate::framework::interface::MAX_NODE_SCORE;
use crate::framework::interface::ScorePlugin;
use crate::framework::node_memo::{MEMO_SCORES, MemoPoint, NodeMemo, run_start};
use crate::framework::runtime::Framework;
use crate::framework::{CycleState, NodeInfo, NodeRow, Status};
use rand::Rng;
use rayon::prelude::*;
use std::sync::Arc;

use super::{PARALLEL_MIN_NODES, Scheduler};

impl Scheduler {
    /// Score, NormalizeScore and weights, and the chosen node (kube's `prioritizeNodes` and
    /// `selectHost`). Returns the index of the chosen node in `feasible`.
    ///
    /// Nodes are scored in blocks of [`SCORE_BLOCK`]: each plugin scores the whole block in one
    /// call (reading its PreScore state once), and the block's NodeInfos stay in cache while
    /// every plugin visits them. `scores` holds, per block, the block's scores of plugin 0,
    /// then of plugin 1, and so on. Blocks run on the pool when there are enough nodes.
    ///
    /// 1. Per block: score; weigh the plugins without NormalizeScore into the block's totals;
    ///    note the block's maximum of each plugin whose NormalizeScore is kube's
    ///    `DefaultNormalizeScore` ([`ScorePlugin::default_normalize`]); note the block's best
    ///    total and how many of its nodes reach it.
    /// 2. A plugin with its own NormalizeScore gets its whole column at once, as kube hands it
    ///    every feasible node.
    /// 3. Per block, only when some normalized score varies between nodes: add the normalized,
    ///    weighted scores and note the block's best again. A default-normalized plugin whose
    ///    scores are all 0 (TaintToleration on a cluster without PreferNoSchedule taints) gives
    ///    every node the same amount, which changes no comparison: it is left out, so
    ///    `totals` are kube's totals less that per-cycle constant.
    ///
    /// The choice then needs only the blocks' bests ([`Scheduler::select_host_by_blocks`]).
    ///
    /// With `memo` (the snapshot's node memo, when `feasible_index` indexes the snapshot's
    /// own node list, and the pod), a node whose raw scores the memo holds for this key is
    /// not scored again, and the nodes scored are recorded (`framework/node_memo.rs`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn score_nodes(
        &self,
        fwk: &Framework,
        state: &CycleState,
        pod: &Pod,
        feasible: &[&NodeInfo],
        (feasible_index, all_rows): (&[usize], &[NodeRow]),
        scratch: &mut ScoreScratch,
        memo: Option<(&NodeMemo, &Arc<Pod>)>,
    ) -> Result<usize, Status> {
        let plugins = fwk.active_score_plugins(state);
        let memo = memo
            .filter(|_| plugins.len() <= MEMO_SCORES)
            .and_then(|(m, pod)| {
                let key = fwk.score_memo_plugins(&plugins, pod);
                Some((m, self.memo_id(fwk, pod, MemoPoint::Score, key)?))
            });
        let f = feasible.len();
        let ScoreScratch {
            scores,
            column,
            totals,
            block_max,
            block_best,
            normalizes,
            defaults,
            max,
            rows: feasible_rows,
            raw,
            keep_raw,
        } = scratch;
        totals.clear();
        raw.clear();
        if plugins.is_empty() {
            totals.resize(f, 1);
            return Ok(self.select_host(totals));
        }
        // Every slot below is written before it is read: no need to zero.
        totals.resize(f, 0);
        let p = plugins.len();
        let blocks = f.div_ceil(SCORE_BLOCK);
        // Per plugin: whether it normalizes, and Some(reverse) when that is the default way.
        normalizes.clear();
        normalizes.extend(plugins.iter().map(|(pl, _)| pl.has_normalize()));
        defaults.clear();
        defaults.extend(
            plugins
                .iter()
                .zip(normalizes.iter())
                .map(|((pl, _), &n)| n.then(|| pl.default_normalize()).flatten()),
        );
        scores.resize(f * p, 0);
        block_max.resize(blocks * p, 0);
        block_best.resize(blocks, Best::default());
        // Every row below is written before it is read: no need to clear.
        feasible_rows.resize(f, NodeRow::default());
        let ctx = ScoreCtx {
            plugins: &plugins,
            state,
            pod,
            feasible,
            feasible_index,
            all_rows,
            // Fetch NodeInfos ahead only for plugins that read them.
            prefetch: plugins.iter().any(|(pl, _)| !pl.scores_from_rows(state)),
            normalizes,
            defaults,
            memo,
            stats: &self.stats,
        };
        let pool = self.pool.as_deref().filter(|_| f >= PARALLEL_MIN_NODES);
        let scores = &mut scores[..f * p];
        let block_best = &mut block_best[..blocks];
        ctx.score_blocks(
            pool,
            scores,
            &mut block_max[..blocks * p],
            totals,
            block_best,
            &mut feasible_rows[..f],
        )?;
        if *keep_raw {
            raw.extend_from_slice(scores);
        }
        let second_pass = ctx.normalize(scores, &block_max[..blocks * p], column, max)?;
        if second_pass {
            ctx.weigh_normalized(pool, scores, max, totals, block_best);
        }
        Ok(self.select_host_by_blocks(totals, block_best))
    }

    /// [`Scheduler::select_host`] from each block's best total and its count: the same
    /// uniform draw among all the nodes with the highest total, found by walking the blocks.
    pub(super) fn select_host_by_blocks(&self, totals: &[i64], block_best: &[Best]) -> usize {
        let Some(max) = block_best.iter().map(|b| b.total).max() else {
            return 0;
        };
        let ties: usize = block_best
            .iter()
            .filter(|b| b.total == max)
            .map(|b| b.count)
            .sum();
        let mut k = if ties > 1 {
            self.rng.lock().random_range(0..ties)
        } else {
            0
        };
        for (b, &Best { total: t, count: c }) in block_best.iter().enumerate() {
            if t != max {
                continue;
            }
            if k < c {
                let block =
                    &totals[b * SCORE_BLOCK..(b * SCORE_BLOCK + SCORE_BLOCK).min(totals.len())];
                let o = block
                    .iter()
                    .enumerate()
                    .filter(|&(_, &t)| t == max)
                    .nth(k)
                    .map_or(0, |(o, _)| o);
                return b * SCORE_BLOCK + o;
            }
            k -= c;
        }
        0
    }

    /// The node memo's id for this cycle's key at `point` (`framework/node_memo.rs`); None
    /// when the memo is off or a plugin that runs there is not node-local (`plugins` None).
    pub(super) fn memo_id(
        &self,
        fwk: &Framework,
        pod: &Arc<Pod>,
        point: MemoPoint,
        plugins: Option<u64>,
    ) -> Option<u32> {
        let plugins = plugins?;
        self.memo_keys
            .as_ref()?
            .lock()
            .id(point, fwk.scheduler_name, plugins, pod)
    }

    /// Uniform random choice among the nodes with the highest total (kube's `selectHost`
    /// draws per tie while it scans; one draw after counting the ties is the same uniform
    /// choice for one random number instead of one per tied node).
    pub(super) fn select_host(&self, totals: &[i64]) -> usize {
        let Some(&max) = totals.iter().max() else {
            return 0;
        };
        let ties = totals.iter().filter(|&&t| t == max).count();
        let k = if ties > 1 {
            self.rng.lock().random_range(0..ties)
        } else {
            0
        };
        totals
            .iter()
            .enumerate()
            .filter(|&(_, &t)| t == max)
            .nth(k)
            .map_or(0, |(i, _)| i)
    }
}

/// What every Score block reads: the cycle's plugins with their weights, the pod, the feasible
/// nodes with their indices into the rows, and each plugin's normalization.
struct ScoreCtx<'a> {
    plugins: &'a [(Arc<dyn ScorePlugin>, i64)],
    state: &'a CycleState,
    pod: &'a Pod,
    feasible: &'a [&'a NodeInfo],
    feasible_index: &'a [usize],
    all_rows: &'a [NodeRow],
    prefetch: bool,
    /// Per plugin: whether it has NormalizeScore.
    normalizes: &'a [bool],
    /// Per plugin: `Some(reverse)` when it normalizes the default way.
    defaults: &'a [Option<bool>],
    /// The snapshot's node memo and this cycle's Score key, when in use.
    memo: Option<(&'a NodeMemo, u32)>,
    /// The memo's hit and miss counts go here.
    stats: &'a super::SchedulerStats,
}

/// One Score block's slices: its scores (plugin-major), per-plugin maxima, totals, best total
/// and its row buffer.
type Block<'a> = (
    usize,
    (
        (
            ((&'a mut [i64], &'a mut [i64]), &'a mut [i64]),
            &'a mut Best,
        ),
        &'a mut [NodeRow],
    ),
);

/// A block's totals, its scores and its best total, for the second (normalized) pass.
type Weigh<'a> = ((&'a mut [i64], &'a [i64]), &'a mut Best);

impl ScoreCtx<'_> {
    /// The first pass: every plugin scores each block of [`SCORE_BLOCK`] nodes (on the pool
    /// when given), keeping the per-block maximum of default-normalized plugins and adding
    /// the weighted scores of plugins that do not normalize.
    #[inline]
    fn score_blocks(
        &self,
        pool: Option<&rayon::ThreadPool>,
        scores: &mut [i64],
        block_max: &mut [i64],
        totals: &mut [i64],
        block_best: &mut [Best],
        feasible_rows: &mut [NodeRow],
    ) -> Result<(), Status> {
        let p = self.plugins.len();
        let chunk = SCORE_BLOCK * p;
        let score_block = |b: Block<'_>| self.score_block(b);
        match pool {
            Some(pool) => pool.install(|| {
                scores
                    .par_chunks_mut(chunk)
                    .zip(block_max.par_chunks_mut(p))
                    .zip(totals.par_chunks_mut(SCORE_BLOCK))
                    .zip(block_best.par_iter_mut())
                    .zip(feasible_rows.par_chunks_mut(SCORE_BLOCK))
                    .enumerate()
                    .try_for_each(score_block)
            }),
            None => scores
                .chunks_mut(chunk)
                .zip(block_max.chunks_mut(p))
                .zip(totals.chunks_mut(SCORE_BLOCK))
                .zip(block_best.iter_mut())
                .zip(feasible_rows.chunks_mut(SCORE_BLOCK))
                .enumerate()
                .try_for_each(score_block),
        }
    }

    #[inline]
    fn score_block(
        &self,
        (b, ((((out, maxes), tot), best), rows)): Block<'_>,
    ) -> Result<(), Status> {
        let len = tot.len();
        let index = &self.feasible_index[b * SCORE_BLOCK..b * SCORE_BLOCK + len];
        let p = self.plugins.len();
        let out = &mut out[..p * len];
        // Whether the block's nodes are consecutive in the snapshot: found once per block.
        let run = run_start(index);
        match self.memo {
            None => self.score_block_raw(b, index, run, out, rows)?,
            Some((m, id)) => {
                let known = m.scored_mask(index, run, id);
                let all = u64::MAX >> (64 - len);
                if known == 0 {
                    self.score_block_raw(b, index, run, out, rows)?;
                } else {
                    m.scores_of(index, run, known, p, out);
                    if known != all {
                        self.score_unknown(b, index, known, out)?;
                    }
                }
                m.note_scores(index, all & !known, (id, p), out);
                self.stats
                    .memo
                    .note(MemoPoint::Score, known.count_ones(), len);
            }
        }
        tot.fill(0);
        for (j, ((_, w), column)) in self.plugins.iter().zip(out.chunks(len)).enumerate() {
            if self.defaults[j].is_some() {
                // kube's DefaultNormalizeScore takes the maximum from 0.
                maxes[j] = column.iter().copied().fold(0, i64::max);
            }
            if !self.normalizes[j] {
                for (t, &s) in tot.iter_mut().zip(column.iter()) {
                    *t += s * w;
                }
            }
        }
        *best = Best::of(tot);
        Ok(())
    }

    /// The raw scores of the nodes of block `b` whose bit in `known` is clear, gathered
    /// into a block of their own, scored, and put in place in `out` (plugin-major).
    #[inline(never)]
    fn score_unknown(
        &self,
        b: usize,
        index: &[usize],
        known: u64,
        out: &mut [i64],
    ) -> Result<(), Status> {
        let len = index.len();
        let block = &self.feasible[b * SCORE_BLOCK..b * SCORE_BLOCK + len];
        // On the stack: no allocation per block.
        let mut unknown = [0usize; SCORE_BLOCK];
        let mut nodes = [block[0]; SCORE_BLOCK];
        let mut rows = [NodeRow::default(); SCORE_BLOCK];
        let mut u = 0;
        for o in (0..len).filter(|o| known >> o & 1 == 0) {
            (unknown[u], nodes[u], rows[u]) = (o, block[o], self.all_rows[index[o]]);
            u += 1;
        }
        let mut column = [0i64; SCORE_BLOCK];
        for ((pl, _), out) in self.plugins.iter().zip(out.chunks_mut(len)) {
            pl.score_nodes(
                self.state,
                self.pod,
                &nodes[..u],
                &rows[..u],
                &mut column[..u],
            )
            .map_err(|s| s.with_plugin(pl.name()))?;
            for (&o, &s) in unknown[..u].iter().zip(&column[..u]) {
                out[o] = s;
            }
        }
        Ok(())
    }

    /// Every plugin's raw scores of block `b` (its nodes at `index` of the candidates, `run`
    /// its [`run_start`]), into `out` plugin-major.
    #[inline]
    fn score_block_raw(
        &self,
        b: usize,
        index: &[usize],
        run: Option<usize>,
        out: &mut [i64],
        rows: &mut [NodeRow],
    ) -> Result<(), Status> {
        let len = index.len();
        let nodes = &self.feasible[b * SCORE_BLOCK..b * SCORE_BLOCK + len];
        // The block's rows: the snapshot's own when the block's nodes are consecutive
        // (Filter passed every node of a run, the usual case), else copied next to each
        // other where this worker reads them.
        // (The parallel Filter lists its finds in no particular order: `run` checked each
        // step.)
        let rows: &[NodeRow] = if let Some(first) = run {
            &self.all_rows[first..first + len]
        } else {
            for (r, &i) in rows.iter_mut().zip(index) {
                *r = self.all_rows[i];
            }
            rows
        };
        // Ask for the whole block at once: the misses overlap instead of queueing up
        // behind the first plugin's walk.
        if self.prefetch {
            for n in nodes {
                n.prefetch();
            }
        }
        for ((pl, _), column) in self.plugins.iter().zip(out.chunks_mut(len)) {
            pl.score_nodes(self.state, self.pod, nodes, rows, column)
                .map_err(|s| s.with_plugin(pl.name()))?;
        }
        Ok(())
    }

    /// Between the passes: the cluster-wide maximum of each default-normalized plugin (into
    /// `max`), and the other normalizing plugins' columns through their own NormalizeScore,
    /// written back in place. Returns whether a second pass has anything to add.
    #[inline]
    fn normalize(
        &self,
        scores: &mut [i64],
        block_max: &[i64],
        column: &mut Vec<i64>,
        max: &mut Vec<i64>,
    ) -> Result<bool, Status> {
        let p = self.plugins.len();
        let f = self.feasible.len();
        let blocks = f.div_ceil(SCORE_BLOCK);
        let chunk = SCORE_BLOCK * p;
        max.clear();
        max.resize(p, 0);
        let mut second_pass = false;
        for (j, (pl, _)) in self.plugins.iter().enumerate() {
            if self.defaults[j].is_some() {
                max[j] = (0..blocks).map(|b| block_max[b * p + j]).fold(0, i64::max);
                second_pass |= max[j] != 0;
            } else if self.normalizes[j] {
                second_pass = true;
                column.resize(f, 0);
                let column = &mut column[..f];
                for (b, block) in scores.chunks(chunk).enumerate() {
                    let len = block.len() / p;
                    column[b * SCORE_BLOCK..b * SCORE_BLOCK + len]
                        .copy_from_slice(&block[j * len..(j + 1) * len]);
                }
                let st = pl.normalize_score(self.state, self.pod, column);
                if !st.is_success() {
                    return Err(st.with_plugin(pl.name()));
                }
                for (b, block) in scores.chunks_mut(chunk).enumerate() {
                    let len = block.len() / p;
                    block[j * len..(j + 1) * len]
                        .copy_from_slice(&column[b * SCORE_BLOCK..b * SCORE_BLOCK + len]);
                }
            }
        }
        Ok(second_pass)
    }

    /// The second pass: the normalized plugins' weighted scores added to each block's totals
    /// (default normalization from the cluster-wide `max`), and each block's best again.
    #[inline]
    fn weigh_normalized(
        &self,
        pool: Option<&rayon::ThreadPool>,
        scores: &[i64],
        max: &[i64],
        totals: &mut [i64],
        block_best: &mut [Best],
    ) {
        let chunk = SCORE_BLOCK * self.plugins.len();
        let weigh_block = |((tot, block), best): Weigh<'_>| {
            let len = tot.len();
            for (j, ((_, w), column)) in self.plugins.iter().zip(block.chunks(len)).enumerate() {
                match self.defaults[j] {
                    // All 0: the same amount on every node (see above).
                    Some(_) if max[j] == 0 => {}
                    // kube's DefaultNormalizeScore, from the cluster-wide maximum.
                    Some(reverse) => {
                        let m = max[j];
                        for (t, &s) in tot.iter_mut().zip(column) {
                            let n = MAX_NODE_SCORE * s / m;
                            *t += if reverse { MAX_NODE_SCORE - n } else { n } * w;
                        }
                    }
                    None if self.normalizes[j] => {
                        for (t, &s) in tot.iter_mut().zip(column) {
                            *t += s * w;
                        }
                    }
                    // Weighed in the first pass.
                    None => {}
                }
            }
            *best = Best::of(tot);
        };
        match pool {
            Some(pool) => pool.install(|| {
                totals
                    .par_chunks_mut(SCORE_BLOCK)
                    .zip(scores.par_chunks(chunk))
                    .zip(block_best.par_iter_mut())
                    .for_each(weigh_block)
            }),
            None => totals
                .chunks_mut(SCORE_BLOCK)
                .zip(scores.chunks(chunk))
                .zip(block_best.iter_mut())
                .for_each(weigh_block),
        }
    }
}

/// Nodes per Score block: every score plugin scores a block before the next block starts.
pub(super) const SCORE_BLOCK: usize = 64;

/// Score's buffers, kept from one cycle to the next (a fresh zeroed allocation of
/// nodes × plugins scores per cycle cost page faults and a memset each time).
#[derive(Default)]
pub(crate) struct ScoreScratch {
    /// Per block, the block's scores of plugin 0, then of plugin 1, and so on.
    scores: Vec<i64>,
    /// One plugin's scores in node order (NormalizeScore's input).
    column: Vec<i64>,
    /// The weighted total per feasible node.
    pub(super) totals: Vec<i64>,
    /// Per block, each default-normalized plugin's maximum score (others: unused).
    block_max: Vec<i64>,
    /// Per block, its highest total and how many of its nodes reach it.
    block_best: Vec<Best>,
    /// The feasible nodes' rows, in `feasible` order (each block copies its own).
    rows: Vec<NodeRow>,
    /// Per active plugin: it has NormalizeScore; Some(reverse) when that is kube's default;
    /// the cluster-wide maximum of a default-normalized one.
    normalizes: Vec<bool>,
    defaults: Vec<Option<bool>>,
    max: Vec<i64>,
    /// When [`ScoreScratch::keep_raw`] is set: the raw scores (before NormalizeScore), laid
    /// out as `scores` (opportunistic batching keeps them for a later re-normalization).
    raw: Vec<i64>,
    /// Keep the raw scores of the next scoring.
    pub(super) keep_raw: bool,
}

impl ScoreScratch {
    /// The raw score of feasible node `i` by active plugin `j` (of `p`) among `f` feasible
    /// nodes, from the last scoring with [`ScoreScratch::keep_raw`].
    pub(super) fn raw_score(&self, i: usize, j: usize, p: usize, f: usize) -> i64 {
        let b = i / SCORE_BLOCK;
        let len = SCORE_BLOCK.min(f - b * SCORE_BLOCK);
        self.raw[b * SCORE_BLOCK * p + j * len + i % SCORE_BLOCK]
    }
}

/// A block's highest total and how many of its nodes reach it.
#[derive(Clone, Copy, Default)]
pub(crate) struct Best {
    total: i64,
    count: usize,
}

impl Best {
    pub(super) fn of(totals: &[i64]) -> Best {
        let total = totals.iter().copied().max().unwrap_or(i64::MIN);
        let count = totals.iter().filter(|&&t| t == total).count();
        Best { total, count }
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::framework::interface::ClusterClient;

    struct Client;
    impl ClusterClient for Client {
        fn bind(&self, _: &Pod, _: Sym) -> Result<(), String> {
            Ok(())
        }
        fn pod_exists_unassigned(&self, _: &Pod) -> bool {
            true
        }
    }

    /// kube's selectHost: the highest total wins; among ties every one is equally likely.
    #[test]
    fn select_host_picks_uniformly_among_the_highest() {
        let s = Scheduler::new(
            SchedulerConfig::default(),
            &Registry::in_tree(),
            Arc::new(Client),
            None,
        )
        .unwrap();
        assert_eq!(s.select_host(&[]), 0);
        assert_eq!(s.select_host(&[4]), 0);
        for _ in 0..50 {
            assert_eq!(s.select_host(&[3, 8, 1, 7]), 1);
        }
        let totals = [5, 9, 3, 9, 9, 1];
        let mut hits = [0usize; 6];
        let draws = 6000;
        for _ in 0..draws {
            hits[s.select_host(&totals)] += 1;
        }
        assert_eq!(
            hits[0] + hits[2] + hits[5],
            0,
            "only the best may win: {hits:?}"
        );
        for i in [1, 3, 4] {
            let share = hits[i] as f64 / draws as f64;
            assert!(
                (0.29..0.38).contains(&share),
                "tie {i} won {share:.3}: {hits:?}"
            );
        }
    }
}
