//! The node memo's summaries (see the module doc of `node_memo`): per aligned chunk of
//! [`CHUNK`] nodes, and per super chunk of [`SUPER`] chunks, whether every node passed a key
//! and the key's Score summary ([`SpanScores`]).
//!
//! A super chunk's summary holds only while each of its chunks' does: it is set from them, and
//! every write that clears a chunk's summary clears its super chunk's too.

use super::MEMO_SCORES;
use std::ops::Range;
use std::sync::atomic::{AtomicI64, AtomicU32, Ordering::Relaxed};

/// Nodes per chunk: chunk `c` holds snapshot indices `c * CHUNK..(c + 1) * CHUNK` (the last
/// one may be shorter).
pub(crate) const CHUNK: usize = 64;

/// Chunks per super chunk: super chunk `s` holds chunks `s * SUPER..(s + 1) * SUPER`.
pub(crate) const SUPER: usize = 16;

/// Values kept per span: per plugin its highest and lowest raw score, then the best sum and
/// its count.
const STATS: usize = 2 * MEMO_SCORES + 2;

/// A span's Score summary for one key: per plugin `j` the highest (`max[j]`) and lowest
/// (`min[j]`) raw score of its nodes, and the best sum of `w_j * raw_j` over the plugins that
/// do not normalize (`best`), reached by `count` of its nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SpanScores {
    pub max: [i64; MEMO_SCORES],
    pub min: [i64; MEMO_SCORES],
    pub best: i64,
    pub count: i64,
}

impl Default for SpanScores {
    /// The summary of no node: every maximum and the best sum as low as can be.
    fn default() -> SpanScores {
        SpanScores {
            max: [i64::MIN; MEMO_SCORES],
            min: [i64::MAX; MEMO_SCORES],
            best: i64::MIN,
            count: 0,
        }
    }
}

impl SpanScores {
    /// Adds a node's raw scores (`raw[j]`, `p` plugins) and its best sum.
    #[inline]
    #[cfg(test)]
    pub(crate) fn add_node(&mut self, raw: &[i64], sum: i64) {
        for (j, &r) in raw.iter().enumerate() {
            self.max[j] = self.max[j].max(r);
            self.min[j] = self.min[j].min(r);
        }
        self.add_best(sum, 1);
    }

    /// Adds another span's summary (`p` plugins).
    pub(crate) fn merge(&mut self, other: &SpanScores, p: usize) {
        for j in 0..p {
            self.max[j] = self.max[j].max(other.max[j]);
            self.min[j] = self.min[j].min(other.min[j]);
        }
        self.add_best(other.best, other.count);
    }

    /// Counts `count` nodes whose best sum is `best`.
    #[inline]
    pub(crate) fn add_best(&mut self, best: i64, count: i64) {
        match best.cmp(&self.best) {
            std::cmp::Ordering::Greater => (self.best, self.count) = (best, count),
            std::cmp::Ordering::Equal => self.count += count,
            std::cmp::Ordering::Less => {}
        }
    }
}

/// One level of summaries: per span (chunk or super chunk) the key every node passed, the
/// key every node was scored by, and that key's [`SpanScores`].
#[derive(Default)]
struct Level {
    passed: Vec<AtomicU32>,
    scored: Vec<AtomicU32>,
    stats: Vec<AtomicI64>,
}

impl Level {
    fn reset(&mut self, spans: usize) {
        for v in [&mut self.passed, &mut self.scored] {
            v.clear();
            v.resize_with(spans, || AtomicU32::new(0));
        }
        self.stats.clear();
        self.stats.resize_with(spans * STATS, || AtomicI64::new(0));
    }

    fn clear(&mut self, s: usize) {
        if let (Some(p), Some(c)) = (self.passed.get_mut(s), self.scored.get_mut(s)) {
            *p.get_mut() = 0;
            *c.get_mut() = 0;
        }
    }

    fn scores(&self, s: usize, id: u32, p: usize) -> Option<SpanScores> {
        if self.scored[s].load(Relaxed) != id {
            return None;
        }
        let v = &self.stats[s * STATS..(s + 1) * STATS];
        let mut out = SpanScores::default();
        for j in 0..p {
            out.max[j] = v[2 * j].load(Relaxed);
            out.min[j] = v[2 * j + 1].load(Relaxed);
        }
        out.best = v[2 * MEMO_SCORES].load(Relaxed);
        out.count = v[2 * MEMO_SCORES + 1].load(Relaxed);
        Some(out)
    }

    fn set_scores(&self, s: usize, id: u32, p: usize, sums: &SpanScores) {
        let v = &self.stats[s * STATS..(s + 1) * STATS];
        for j in 0..p {
            v[2 * j].store(sums.max[j], Relaxed);
            v[2 * j + 1].store(sums.min[j], Relaxed);
        }
        v[2 * MEMO_SCORES].store(sums.best, Relaxed);
        v[2 * MEMO_SCORES + 1].store(sums.count, Relaxed);
        self.scored[s].store(id, Relaxed);
    }
}

/// Clears `v[s]` unless it is `id` (node of span `s` about to hold key `id`'s entry, or none
/// with `id` 0).
#[inline]
fn touch(v: &[AtomicU32], s: usize, id: u32) {
    if let Some(x) = v.get(s)
        && x.load(Relaxed) != id
    {
        x.store(0, Relaxed);
    }
}

/// Both levels of summaries of `n` nodes.
#[derive(Default)]
pub(crate) struct Summaries {
    n: usize,
    chunks: Level,
    supers: Level,
}

impl Summaries {
    /// No summary, for `n` nodes.
    pub(crate) fn reset(&mut self, n: usize) {
        self.n = n;
        let chunks = n.div_ceil(CHUNK);
        self.chunks.reset(chunks);
        self.supers.reset(chunks.div_ceil(SUPER));
    }

    /// Node `i` changed.
    pub(crate) fn forget(&mut self, i: usize) {
        self.chunks.clear(i / CHUNK);
        self.supers.clear(i / (CHUNK * SUPER));
    }

    /// Node `i`'s pass is about to become key `id`'s (0: none).
    #[inline]
    pub(crate) fn touch_passed(&self, i: usize, id: u32) {
        touch(&self.chunks.passed, i / CHUNK, id);
        touch(&self.supers.passed, i / (CHUNK * SUPER), id);
    }

    /// Node `i`'s raw scores are about to become key `id`'s (0: none).
    #[inline]
    pub(crate) fn touch_scored(&self, i: usize, id: u32) {
        touch(&self.chunks.scored, i / CHUNK, id);
        touch(&self.supers.scored, i / (CHUNK * SUPER), id);
    }

    /// Snapshot indices of chunk `c`.
    #[inline]
    pub(crate) fn chunk_range(&self, c: usize) -> Range<usize> {
        c * CHUNK..((c + 1) * CHUNK).min(self.n)
    }

    /// Snapshot indices of super chunk `s`.
    #[inline]
    pub(crate) fn super_range(&self, s: usize) -> Range<usize> {
        s * CHUNK * SUPER..((s + 1) * CHUNK * SUPER).min(self.n)
    }

    /// Chunks of super chunk `s`.
    #[inline]
    pub(crate) fn chunks_of(&self, s: usize) -> Range<usize> {
        s * SUPER..((s + 1) * SUPER).min(self.n.div_ceil(CHUNK))
    }

    /// Whether every node of chunk `c` passed key `id`.
    #[inline]
    pub(crate) fn chunk_passed(&self, c: usize, id: u32) -> bool {
        self.chunks.passed[c].load(Relaxed) == id
    }

    /// Records that every node of chunk `c` passed key `id`.
    pub(crate) fn set_chunk_passed(&self, c: usize, id: u32) {
        self.chunks.passed[c].store(id, Relaxed);
    }

    /// Whether every node of super chunk `s` passed key `id`: its summary, or else every one
    /// of its chunks' (which then sets its summary).
    pub(crate) fn super_passed(&self, s: usize, id: u32) -> bool {
        if self.supers.passed[s].load(Relaxed) == id {
            return true;
        }
        let all = self.chunks_of(s).all(|c| self.chunk_passed(c, id));
        if all {
            self.supers.passed[s].store(id, Relaxed);
        }
        all
    }

    /// Chunk `c`'s Score summary for key `id` (`p` plugins), when it has one.
    #[inline]
    pub(crate) fn chunk_scores(&self, c: usize, id: u32, p: usize) -> Option<SpanScores> {
        self.chunks.scores(c, id, p)
    }

    /// Sets chunk `c`'s Score summary for key `id`.
    pub(crate) fn set_chunk_scores(&self, c: usize, id: u32, p: usize, sums: &SpanScores) {
        self.chunks.set_scores(c, id, p, sums);
    }

    /// Super chunk `s`'s Score summary for key `id` (`p` plugins), when it has one.
    #[inline]
    pub(crate) fn super_scores(&self, s: usize, id: u32, p: usize) -> Option<SpanScores> {
        self.supers.scores(s, id, p)
    }

    /// Sets super chunk `s`'s Score summary from its chunks', when each has one for key `id`.
    pub(crate) fn summarize_super(&self, s: usize, id: u32, p: usize) -> Option<SpanScores> {
        let mut sums = SpanScores::default();
        for c in self.chunks_of(s) {
            sums.merge(&self.chunk_scores(c, id, p)?, p);
        }
        self.supers.set_scores(s, id, p, &sums);
        Some(sums)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_super_chunk_holds_while_each_of_its_chunks_does() {
        let mut s = Summaries::default();
        let n = CHUNK * SUPER + 10;
        s.reset(n);
        assert_eq!(s.chunks_of(0), 0..SUPER);
        assert_eq!(s.chunks_of(1), SUPER..SUPER + 1);
        assert_eq!(s.super_range(1), CHUNK * SUPER..n);
        assert_eq!(s.chunk_range(SUPER), CHUNK * SUPER..n);
        for c in 0..SUPER - 1 {
            s.set_chunk_passed(c, 3);
        }
        assert!(!s.super_passed(0, 3), "one chunk is not known");
        s.set_chunk_passed(SUPER - 1, 3);
        assert!(s.super_passed(0, 3));
        assert!(!s.super_passed(0, 4), "another key's");
        // Another key's pass on one node: its chunk and super chunk no longer hold.
        s.touch_passed(5, 4);
        assert!(!s.chunk_passed(0, 3) && s.chunk_passed(1, 3));
        assert!(!s.super_passed(0, 3));
        // The same key's write leaves them.
        s.set_chunk_passed(0, 3);
        assert!(s.super_passed(0, 3));
        s.touch_passed(70, 3);
        assert!(s.super_passed(0, 3));
        s.forget(70);
        assert!(!s.chunk_passed(1, 3));
        assert!(s.supers.passed[0].load(Relaxed) == 0);
    }

    #[test]
    fn super_scores_merge_their_chunks() {
        let mut s = Summaries::default();
        s.reset(CHUNK * 2);
        let node = |raw: [i64; 2], sum: i64| {
            let mut x = SpanScores::default();
            x.add_node(&raw, sum);
            x
        };
        let mut a = node([5, 0], 50);
        a.add_node(&[7, 0], 70);
        a.add_node(&[6, 0], 70);
        assert_eq!((a.max[0], a.min[0], a.best, a.count), (7, 5, 70, 2));
        let b = node([9, 0], 70);
        s.set_chunk_scores(0, 2, 2, &a);
        assert_eq!(s.summarize_super(0, 2, 2), None, "chunk 1 has none");
        s.set_chunk_scores(1, 2, 2, &b);
        let sup = s.summarize_super(0, 2, 2).unwrap();
        assert_eq!((sup.max[0], sup.min[0], sup.best, sup.count), (9, 5, 70, 3));
        assert_eq!(s.super_scores(0, 2, 2), Some(sup));
        s.touch_scored(CHUNK + 1, 0);
        assert_eq!(s.super_scores(0, 2, 2), None);
        assert_eq!(s.chunk_scores(0, 2, 2), Some(a));
    }
}
