//! activeQ as sharded concurrent heaps.
//!
//! ## Protocol
//!
//! - `N` shards, each a binary heap (ordered by the QueueSort `less`, ties broken by push
//!   order: a sequence number taken at the first push, kept by updates) behind its own mutex, with
//!   its top entry cached in an atomically replaceable cell (arc-swap) that is rewritten, under the shard lock, every
//!   time the heap's top changes.
//! - A concurrent index (64 lock stripes, each an `AHashMap`, chosen by key hash) maps each pod
//!   in activeQ to its one **live** entry. An entry is
//!   live iff the index points at that very `Arc`. Delete removes the index entry (O(1), no heap
//!   work); update pushes a new entry and repoints the index. Old entries stay in their heap as
//!   *stale* and are discarded when they reach a top (lazy deletion).
//! - **Push** goes to the calling thread's home shard, so producers on different threads do not
//!   share a lock.
//! - **Pop** reads the cached tops without locking, picks the best by `less`, locks that shard and
//!   checks that the same entry is still its top. If so it pops it and claims it by removing the
//!   index entry *only if it still points at this entry*; a stale or changed top means retry.
//!
//! ## Sort keys
//!
//! When the QueueSort plugin gives an integer sort key ([`SortKeyFn`], PrioritySort does),
//! each entry carries its key, computed once at push, and each heap slot carries the key and
//! the sequence number beside the entry's pointer: sifting compares `(key, seq)` pairs held
//! in the heap's own array and never follows a pointer to a pod. The key's contract is
//! `less(a, b) == (key(a) < key(b))` for every pair, so both orders are the same; without a
//! key the heap calls `less` as before.
//!
//! ## Ordering guarantee
//!
//! When no push, update or delete runs concurrently with a pop, the pop returns a pod that no
//! other pod in activeQ is `less` than, and among pods `less` cannot tell apart the one pushed
//! first: the pop order is a total order that does not depend on which shard (which thread)
//! an entry went to, so a single-threaded run pops the same sequence every time (the best of the shard tops is the global best, and the
//! winning shard is verified under its lock). Under concurrency a pop may miss a pod pushed
//! while it runs, exactly as a single-lock queue may order the two operations either way.
//!
//! ## Invariants
//!
//! 1. `len()` equals the number of index entries (live pods).
//! 2. Every live entry is in exactly one shard heap; a popped entry is returned at most once
//!    (the index removal is the claim).
//! 3. Each shard's cached top is its heap's first element whenever the shard lock is free.
//! 4. Each shard's `stale` count equals the entries in its heap that the index no longer points
//!    at, whenever no operation is running: the delete or update that unlinks an entry counts
//!    it under the same stripe lock, and the pop or compaction that drops a stale entry from
//!    the heap uncounts it. A shard is compacted when its stale entries outnumber its live
//!    ones by more than 128, so the heaps hold at most `2 * len() + 128 * shards` entries
//!    and a queue that only sees pushes and pops is never compacted. (An earlier rule compared
//!    a shard's length with `len() / shards`; one producer thread fills one shard, so with
//!    five or more shards every push compacted: quadratic on a 16-CPU machine.)

use crate::api::PodKey;
use crate::framework::QueuedPodInfo;
use crate::sync::{ArcCell, AtomicU64, AtomicUsize, Mutex, Ordering};
use ahash::AHashMap;
use std::sync::Arc;

/// The queue-sort order.
pub type LessFn = Arc<dyn Fn(&QueuedPodInfo, &QueuedPodInfo) -> bool + Send + Sync>;

pub use crate::framework::interface::SortKeyFn;

/// An entry in a shard heap.
pub(crate) struct Entry {
    pub q: QueuedPodInfo,
    /// Push order: breaks ties of the QueueSort `less` (first pushed, first popped), so the
    /// pop order is a total order whatever shard each entry landed in. An update keeps the
    /// pod's place among equals.
    seq: u64,
    /// The shard whose heap holds this entry.
    shard: usize,
    /// The QueueSort key, when the queue has a [`SortKeyFn`] (else 0).
    key: u128,
}

/// A heap slot: the entry with its order inline, so that sifting reads only the heap's array.
struct Slot {
    key: u128,
    seq: u64,
    e: Arc<Entry>,
}

impl Slot {
    fn of(e: Arc<Entry>) -> Slot {
        Slot {
            key: e.key,
            seq: e.seq,
            e,
        }
    }
}

struct Shard {
    heap: Mutex<Vec<Slot>>,
    top: ArcCell<Entry>,
    /// Entries in `heap` that the index no longer points at (deleted or replaced pods).
    /// Raised under the index stripe lock that unlinks the entry, lowered when a stale entry
    /// leaves the heap (a pop that fails to claim it, or a compaction).
    stale: AtomicUsize,
    /// `heap.len()`, stored under the lock after each change: lets a delete skip the lock
    /// when the shard needs no compaction.
    held: AtomicUsize,
}

pub struct ActiveQ {
    shards: Box<[Shard]>,
    index: Index,
    len: AtomicUsize,
    less: LessFn,
    sort_key: Option<SortKeyFn>,
    next_seq: AtomicU64,
    /// Compactions run so far (the tests read it).
    #[cfg(test)]
    compactions: AtomicUsize,
    /// Under loom: round-robin home shards (loom allows no statics or thread-locals here).
    #[cfg(loom)]
    rr: AtomicUsize,
}

#[cfg(not(loom))]
static NEXT_HOME: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
#[cfg(not(loom))]
thread_local! {
    static HOME: std::cell::Cell<usize> = const { std::cell::Cell::new(usize::MAX) };
}

const STRIPES: usize = 64;

/// One lock stripe of the index.
type Stripe = Mutex<AHashMap<PodKey, Arc<Entry>>>;

/// The concurrent index: lock stripes chosen by key hash.
struct Index {
    stripes: Box<[Stripe]>,
    hasher: ahash::RandomState,
}

impl Index {
    fn new() -> Index {
        Index {
            stripes: (0..STRIPES).map(|_| Mutex::new(AHashMap::new())).collect(),
            // loom replays each interleaving and needs every run to take the same locks:
            // fixed keys there, random ones otherwise.
            #[cfg(loom)]
            hasher: ahash::RandomState::with_seeds(1, 2, 3, 4),
            #[cfg(not(loom))]
            hasher: ahash::RandomState::new(),
        }
    }
    fn stripe(&self, k: &PodKey) -> &Stripe {
        &self.stripes[(self.hasher.hash_one(k) as usize) % STRIPES]
    }
    fn len(&self) -> usize {
        self.stripes.iter().map(|s| s.lock().len()).sum()
    }
}

/// The calling thread's home shard: threads are numbered on first use.
#[cfg(not(loom))]
fn home_shard(n: usize) -> usize {
    HOME.with(|h| {
        let mut v = h.get();
        if v == usize::MAX {
            v = NEXT_HOME.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            h.set(v);
        }
        v % n
    })
}

/// The default shard count: one per available thread, at least 2.
pub(crate) fn default_shards() -> usize {
    std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .max(2)
}

impl ActiveQ {
    pub fn new(shards: usize, less: LessFn) -> ActiveQ {
        ActiveQ::with_sort_key(shards, less, None)
    }

    /// A queue ordered by `less`, whose heaps compare `sort_key`s instead when one is given
    /// (its contract: `less(a, b) == (sort_key(a) < sort_key(b))`).
    pub fn with_sort_key(shards: usize, less: LessFn, sort_key: Option<SortKeyFn>) -> ActiveQ {
        let n = shards.max(1);
        ActiveQ {
            shards: (0..n)
                .map(|_| Shard {
                    heap: Mutex::new(Vec::new()),
                    top: ArcCell::empty(),
                    stale: AtomicUsize::new(0),
                    held: AtomicUsize::new(0),
                })
                .collect(),
            index: Index::new(),
            len: AtomicUsize::new(0),
            less,
            sort_key,
            next_seq: AtomicU64::new(0),
            #[cfg(test)]
            compactions: AtomicUsize::new(0),
            #[cfg(loom)]
            rr: AtomicUsize::new(0),
        }
    }

    /// The heap order: QueueSort's `less` (or its key), then push order among equals.
    fn before(&self, a: &Entry, b: &Entry) -> bool {
        if self.sort_key.is_some() {
            return (a.key, a.seq) < (b.key, b.seq);
        }
        (self.less)(&a.q, &b.q) || (a.seq < b.seq && !(self.less)(&b.q, &a.q))
    }

    /// [`Self::before`] on heap slots: with a key, from the slots alone.
    #[inline]
    fn slot_before(&self, a: &Slot, b: &Slot) -> bool {
        if self.sort_key.is_some() {
            (a.key, a.seq) < (b.key, b.seq)
        } else {
            self.before(&a.e, &b.e)
        }
    }

    pub fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn contains(&self, k: &PodKey) -> bool {
        self.index.stripe(k).lock().contains_key(k)
    }

    /// The live info of a pod in activeQ.
    /// The pod queued longest (smallest `timestamp`), for the queue dump: walks every
    /// stripe, O(pods).
    pub fn oldest(&self) -> Option<(PodKey, crate::clock::Time)> {
        self.index
            .stripes
            .iter()
            .filter_map(|s| {
                s.lock()
                    .values()
                    .map(|e| (e.q.pod.key.clone(), e.q.timestamp))
                    .min_by_key(|(_, t)| *t)
            })
            .min_by_key(|(_, t)| *t)
    }

    pub fn get(&self, k: &PodKey) -> Option<QueuedPodInfo> {
        self.index.stripe(k).lock().get(k).map(|e| e.q.clone())
    }

    /// Inserts a pod, or replaces the one with the same key (its old entry becomes stale).
    pub fn push(&self, q: QueuedPodInfo) {
        let key = q.pod.key.clone();
        let home = self.home();
        let (e, replaced) = {
            let mut stripe = self.index.stripe(&key).lock();
            let seq = match stripe.get(&key) {
                Some(old) => old.seq,
                None => {
                    self.len.fetch_add(1, Ordering::AcqRel);
                    self.next_seq.fetch_add(1, Ordering::Relaxed)
                }
            };
            let order = self.sort_key.map_or(0, |f| f(&q));
            let e = Arc::new(Entry {
                q,
                seq,
                shard: home,
                key: order,
            });
            let replaced = stripe.insert(key, e.clone()).map(|old| {
                self.shards[old.shard].stale.fetch_add(1, Ordering::AcqRel);
                old.shard
            });
            (e, replaced)
        };
        let shard = &self.shards[home];
        {
            let mut heap = shard.heap.lock();
            heap.push(Slot::of(e));
            let i = heap.len() - 1;
            if sift_up(&mut heap, i, |a, b| self.slot_before(a, b)) == 0 {
                // The new entry is the shard's top now.
                shard.top.store(Some(heap[0].e.clone()));
            }
            shard.held.store(heap.len(), Ordering::Relaxed);
        }
        if let Some(old_shard) = replaced {
            self.maybe_compact(old_shard);
        }
    }

    /// Deletes and updates leave stale entries behind; when they make up most of a shard's
    /// heap, drop them. A shard is compacted only after at least its live size plus 128
    /// entries went stale since its last compaction, so the O(heap) pass is amortised O(1)
    /// per delete or update, and a shard that only ever sees pushes (one producer thread
    /// filling a many-shard queue) is never scanned.
    fn maybe_compact(&self, i: usize) {
        let shard = &self.shards[i];
        // stale > (live + stale) / 2 + 64, i.e. stale > live + 128.
        let too_many = |stale: usize, held: usize| stale > held / 2 + 64;
        if !too_many(
            shard.stale.load(Ordering::Acquire),
            shard.held.load(Ordering::Relaxed),
        ) {
            return;
        }
        let mut heap = shard.heap.lock();
        if too_many(shard.stale.load(Ordering::Acquire), heap.len()) {
            self.compact(i, &mut heap);
            shard.top.store(heap.first().map(|s| s.e.clone()));
            shard.held.store(heap.len(), Ordering::Relaxed);
        }
    }

    #[cfg(not(loom))]
    fn home(&self) -> usize {
        home_shard(self.shards.len())
    }

    #[cfg(loom)]
    fn home(&self) -> usize {
        self.rr.fetch_add(1, Ordering::Relaxed) % self.shards.len()
    }

    /// Removes stale entries from shard `i`'s heap (locked by the caller) and restores the
    /// heap order.
    fn compact(&self, i: usize, heap: &mut Vec<Slot>) {
        let before = heap.len();
        heap.retain(|Slot { e, .. }| {
            let key = &e.q.pod.key;
            self.index
                .stripe(key)
                .lock()
                .get(key)
                .is_some_and(|v| Arc::ptr_eq(v, e))
        });
        // Each dropped entry was unlinked (and counted) before its check above took the
        // stripe lock; entries unlinked since stay counted and in the heap.
        self.shards[i]
            .stale
            .fetch_sub(before - heap.len(), Ordering::AcqRel);
        #[cfg(test)]
        self.compactions.fetch_add(1, Ordering::Relaxed);
        for j in (0..heap.len() / 2).rev() {
            sift_down(heap, j, |a, b| self.slot_before(a, b));
        }
    }

    /// Compactions run so far.
    #[cfg(test)]
    pub(crate) fn compactions(&self) -> usize {
        self.compactions.load(Ordering::Relaxed)
    }

    /// Removes a pod; its heap entry becomes stale.
    pub fn remove(&self, k: &PodKey) -> Option<QueuedPodInfo> {
        let e = {
            let mut stripe = self.index.stripe(k).lock();
            let e = stripe.remove(k)?;
            self.shards[e.shard].stale.fetch_add(1, Ordering::AcqRel);
            e
        };
        self.len.fetch_sub(1, Ordering::AcqRel);
        self.maybe_compact(e.shard);
        Some(e.q.clone())
    }

    /// Pops the best pod, if any.
    pub fn try_pop(&self) -> Option<QueuedPodInfo> {
        loop {
            // 1. Pick the best cached top without locking.
            let mut best: Option<(usize, Arc<Entry>)> = None;
            for (i, s) in self.shards.iter().enumerate() {
                if let Some(t) = s.top.load_full() {
                    let better = match &best {
                        None => true,
                        Some((_, b)) => self.before(&t, b),
                    };
                    if better {
                        best = Some((i, t));
                    }
                }
            }
            let (i, cand) = best?;
            // 2. Lock its shard and verify.
            let shard = &self.shards[i];
            let mut heap = shard.heap.lock();
            let same = heap.first().is_some_and(|t| Arc::ptr_eq(&t.e, &cand));
            if !same {
                drop(heap);
                continue;
            }
            let e = pop_heap(&mut heap, |a, b| self.slot_before(a, b)).e;
            shard.top.store(heap.first().map(|s| s.e.clone()));
            shard.held.store(heap.len(), Ordering::Relaxed);
            drop(heap);
            // 3. Claim it: only if the index still points at this entry.
            let key = &e.q.pod.key;
            let claimed = {
                let mut stripe = self.index.stripe(key).lock();
                let live = stripe.get(key).is_some_and(|v| Arc::ptr_eq(v, &e));
                if live {
                    stripe.remove(key);
                }
                live
            };
            if claimed {
                self.len.fetch_sub(1, Ordering::AcqRel);
                return Some(e.q.clone());
            }
            // Stale (deleted or replaced, and counted when it was unlinked): discarded; try
            // again.
            self.shards[i].stale.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Entries held by the heaps, stale ones included (for tests and memory reports; at most
    /// `2 * len() + 128` per shard, invariant 4).
    #[cfg(test)]
    pub(crate) fn heap_entries(&self) -> usize {
        self.shards.iter().map(|s| s.heap.lock().len()).sum()
    }

    /// Checks invariants 1 and 3 (tests; call when quiescent).
    pub fn check(&self) -> Result<(), String> {
        let live = self.index.len();
        if live != self.len() {
            return Err(format!("len {} but {live} live entries", self.len()));
        }
        for (i, s) in self.shards.iter().enumerate() {
            let heap = s.heap.lock();
            let top = s.top.load_full();
            match (heap.first(), top) {
                (None, None) => {}
                (Some(a), Some(b)) if Arc::ptr_eq(&a.e, &b) => {}
                _ => return Err(format!("shard {i}: cached top is not the heap top")),
            }
            for c in 1..heap.len() {
                if self.slot_before(&heap[c], &heap[(c - 1) / 2]) {
                    return Err(format!("shard {i}: heap order broken at {c}"));
                }
            }
            if heap.iter().any(|s| s.key != s.e.key || s.seq != s.e.seq) {
                return Err(format!("shard {i}: a slot's order is not its entry's"));
            }
            let stale = heap
                .iter()
                .map(|s| &s.e)
                .filter(|e| {
                    let key = &e.q.pod.key;
                    !(self.index.stripe(key).lock().get(key)).is_some_and(|v| Arc::ptr_eq(v, e))
                })
                .count();
            let counted = s.stale.load(Ordering::Acquire);
            if stale != counted {
                return Err(format!(
                    "shard {i}: {stale} stale entries, {counted} counted"
                ));
            }
            if s.held.load(Ordering::Relaxed) != heap.len() {
                return Err(format!("shard {i}: held is not the heap's length"));
            }
            if heap.iter().any(|s| s.e.shard != i) {
                return Err(format!("shard {i}: holds an entry of another shard"));
            }
        }
        Ok(())
    }
}

/// Moves `h[i]` up to its place; returns where it ended.
fn sift_up(h: &mut [Slot], mut i: usize, less: impl Fn(&Slot, &Slot) -> bool) -> usize {
    while i > 0 {
        let p = (i - 1) / 2;
        if !less(&h[i], &h[p]) {
            break;
        }
        h.swap(i, p);
        i = p;
    }
    i
}

fn sift_down(h: &mut [Slot], mut i: usize, less: impl Fn(&Slot, &Slot) -> bool) {
    let n = h.len();
    loop {
        let l = 2 * i + 1;
        if l >= n {
            return;
        }
        let mut c = l;
        if l + 1 < n && less(&h[l + 1], &h[l]) {
            c = l + 1;
        }
        if !less(&h[c], &h[i]) {
            return;
        }
        h.swap(i, c);
        i = c;
    }
}

fn pop_heap(h: &mut Vec<Slot>, less: impl Fn(&Slot, &Slot) -> bool) -> Slot {
    let last = h.len() - 1;
    h.swap(0, last);
    let e = h.pop().expect("non-empty");
    if !h.is_empty() {
        sift_down(h, 0, less);
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Pod, PodSpecInfo};
    use crate::framework::interface::QueueSortPlugin;
    use proptest::prelude::*;
    use std::time::Duration;

    fn q(name: &str, priority: i32, ts: u64) -> QueuedPodInfo {
        let pod = Pod::new(
            "ns",
            name,
            Arc::new(PodSpecInfo {
                priority,
                ..Default::default()
            }),
        );
        QueuedPodInfo::new(Arc::new(pod), Duration::from_nanos(ts))
    }

    fn prio_less() -> LessFn {
        Arc::new(|a: &QueuedPodInfo, b: &QueuedPodInfo| {
            let (pa, pb) = (a.pod.priority(), b.pod.priority());
            pa > pb || (pa == pb && (a.timestamp, &a.pod.key) < (b.timestamp, &b.pod.key))
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: if cfg!(miri) { 3 } else { 256 },
            ..ProptestConfig::default()
        })]
        /// Single-threaded, the sharded queue behaves exactly like an ordered map (the model).
        #[test]
        fn matches_a_sorted_model(ops in proptest::collection::vec((0u8..4, 0u32..40, -3i32..3), 1..300), shards in 1usize..5, keyed: bool) {
            // Keyed: PrioritySort's own order and key (the timestamps here are unique, so
            // the model's name tie-break never decides).
            let aq = if keyed {
                let p = Arc::new(crate::plugins::priority_sort::PrioritySort);
                let key = p.sort_key();
                prop_assert!(key.is_some());
                ActiveQ::with_sort_key(shards, Arc::new(move |a: &QueuedPodInfo, b: &QueuedPodInfo| p.less(a, b)), key)
            } else {
                ActiveQ::new(shards, prio_less())
            };
            // model: key -> (priority, ts)
            let mut model: std::collections::BTreeMap<u32, (i32, u64)> = Default::default();
            let mut ts = 0u64;
            for (op, k, p) in ops {
                ts += 1;
                let name = format!("p{k:03}");
                match op {
                    0 | 1 => { aq.push(q(&name, p, ts)); model.insert(k, (p, ts)); }
                    2 => { prop_assert_eq!(aq.remove(&PodKey::new("ns", &name)).is_some(), model.remove(&k).is_some()); }
                    _ => {
                        let want = model.iter().min_by(|a, b| (-(a.1.0), a.1.1, a.0).cmp(&(-(b.1.0), b.1.1, b.0))).map(|(k, _)| *k);
                        let got = aq.try_pop().map(|x| x.pod.name.to_string());
                        prop_assert_eq!(got, want.map(|k| format!("p{k:03}")));
                        if let Some(k) = want { model.remove(&k); }
                    }
                }
                prop_assert_eq!(aq.len(), model.len());
                prop_assert!(aq.check().is_ok(), "{:?}", aq.check());
            }
        }
    }

    #[test]
    fn concurrent_producers_and_a_consumer_lose_and_duplicate_nothing() {
        let n_threads = 4;
        let per: usize = if cfg!(miri) { 50 } else { 20_000 };
        let aq = Arc::new(ActiveQ::new(4, prio_less()));
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let consumer = {
            let aq = aq.clone();
            let done = done.clone();
            std::thread::spawn(move || {
                let mut seen: std::collections::HashMap<PodKey, usize> = Default::default();
                loop {
                    match aq.try_pop() {
                        Some(x) => *seen.entry(x.pod.key.clone()).or_default() += 1,
                        None if done.load(Ordering::Acquire) && aq.is_empty() => break,
                        None => std::thread::yield_now(),
                    }
                }
                seen
            })
        };
        let producers: Vec<_> = (0..n_threads)
            .map(|t| {
                let aq = aq.clone();
                std::thread::spawn(move || {
                    let mut removed = std::collections::HashSet::new();
                    for i in 0..per {
                        let key = PodKey::new("ns", &format!("t{t}-{i}"));
                        aq.push(q(&format!("t{t}-{i}"), (i % 7) as i32, i as u64));
                        if i % 10 == 0 {
                            // Delete some (the consumer may win the race).
                            if aq.remove(&key).is_some() {
                                removed.insert(key);
                            }
                        } else if i % 10 == 1 {
                            // A second push of the same key: replaces the entry if it is still
                            // queued, or queues it again if it was popped meanwhile.
                            aq.push(q(&format!("t{t}-{i}"), 100, i as u64));
                        }
                    }
                    removed
                })
            })
            .collect();
        let removed: std::collections::HashSet<PodKey> = producers
            .into_iter()
            .flat_map(|p| p.join().unwrap())
            .collect();
        done.store(true, Ordering::Release);
        let seen = consumer.join().unwrap();
        for t in 0..n_threads {
            for i in 0..per {
                let key = PodKey::new("ns", &format!("t{t}-{i}"));
                let n = seen.get(&key).copied().unwrap_or(0);
                if removed.contains(&key) {
                    assert_eq!(n, 0, "{key} was removed, then popped");
                } else if i % 10 == 1 {
                    assert!((1..=2).contains(&n), "{key} popped {n} times");
                } else {
                    assert_eq!(n, 1, "{key} popped {n} times");
                }
            }
        }
        assert_eq!(aq.len(), 0);
        aq.check().unwrap();
    }

    /// Entries `less` cannot order pop first-pushed first, whichever shard each went to,
    /// and an update keeps the pod's place among them.
    #[test]
    fn ties_pop_in_push_order_across_shards() {
        let by_priority: LessFn =
            Arc::new(|a: &QueuedPodInfo, b: &QueuedPodInfo| a.pod.priority() > b.pod.priority());
        let aq = Arc::new(ActiveQ::new(4, by_priority));
        for i in 0..40u64 {
            // Each push from a fresh thread: the pushes spread over the shards.
            let aq2 = aq.clone();
            std::thread::spawn(move || aq2.push(q(&format!("p{i:02}"), 0, 40 - i)))
                .join()
                .unwrap();
        }
        aq.push(q("p05", 0, 0)); // an update: keeps p05's place
        aq.push(q("high", 1, 99));
        let order: Vec<String> = std::iter::from_fn(|| aq.try_pop())
            .map(|x| x.pod.name.to_string())
            .collect();
        let mut want = vec!["high".to_string()];
        want.extend((0..40).map(|i| format!("p{i:02}")));
        assert_eq!(order, want);
    }

    #[test]
    fn stale_entries_are_compacted_away() {
        for shards in [1, 2, 16] {
            let aq = ActiveQ::new(shards, prio_less());
            for round in 0..2_000u64 {
                aq.push(q("churn", 0, round));
                aq.remove(&PodKey::new("ns", "churn"));
            }
            assert_eq!(aq.len(), 0);
            assert!(
                aq.heap_entries() <= 129 * shards,
                "{shards} shards: {} stale entries kept",
                aq.heap_entries()
            );
            assert!(aq.compactions() > 0);
            aq.check().unwrap();
        }
    }

    /// Updates from another thread leave stale entries in the shard that first took the
    /// pod; that shard is compacted although the pushes land elsewhere.
    #[test]
    fn stale_entries_in_another_threads_shard_are_compacted_away() {
        let aq = Arc::new(ActiveQ::new(4, prio_less()));
        let aq2 = aq.clone();
        std::thread::spawn(move || {
            for i in 0..1_000u64 {
                aq2.push(q(&format!("p{i}"), 0, i));
            }
        })
        .join()
        .unwrap();
        for i in 0..1_000u64 {
            aq.remove(&PodKey::new("ns", &format!("p{i}")));
        }
        assert_eq!(aq.len(), 0);
        assert!(aq.heap_entries() <= 129 * 4, "{} kept", aq.heap_entries());
        aq.check().unwrap();
    }

    /// One producer thread filling a queue of many shards: nothing is stale, so nothing is
    /// compacted (every push used to scan the whole shard once the queue held a few hundred
    /// pods on a machine with five or more CPUs).
    #[test]
    fn pushes_alone_never_compact() {
        for shards in [2, 5, 16, 64] {
            let aq = ActiveQ::new(shards, prio_less());
            for i in 0..5_000u64 {
                aq.push(q(&format!("p{i}"), (i % 3) as i32, i));
            }
            assert_eq!(aq.compactions(), 0, "{shards} shards");
            assert_eq!(aq.heap_entries(), 5_000);
            let mut popped = 0;
            while aq.try_pop().is_some() {
                popped += 1;
            }
            assert_eq!(popped, 5_000);
            assert_eq!(aq.compactions(), 0, "{shards} shards");
            aq.check().unwrap();
        }
    }
}
