//! Topology counts kept from one scheduling cycle to the next.
//!
//! kube's InterPodAffinity and PodTopologySpread walk every running pod for every incoming pod:
//! InterPodAffinity's PreFilter builds three pair → count maps and its PreScore a pair →
//! weight map; PodTopologySpread's PreFilter and PreScore build domain → matching-pod maps per
//! constraint. Each is a sum over the nodes of what that node's pods contribute. Between two
//! cycles of pods stamped from one template the incoming pod's terms (or constraints), labels
//! and namespace are the same, and only the nodes that changed (usually the one that took the
//! last pod) contribute something else. [`Kept`] keeps the sum and each node's contribution,
//! and redoes only the changed nodes.
//!
//! # Protocol
//!
//! * A [`Kept`] map holds at most [`Kept::MAX_ENTRIES`] entries, most recently used first.
//!   An entry belongs to a *key*: everything about the incoming pod the contributions depend
//!   on (its terms, its labels, its namespace, its namespace's labels: the caller decides, per
//!   map, which of them matter). Keys compare by value (equal `Arc`s short-cut).
//! * Per snapshot index the entry holds the `Arc<NodeInfo>` it last counted and that node's
//!   [`Item`]s, and the totals of all of them. A changed node is a different `Arc` in the
//!   snapshot (the cache copies a node on write while the snapshot shares it); holding the old
//!   `Arc` keeps its address from being reused and its contents from changing, so "same
//!   address" means "same node contents", and the old contribution can be taken back out
//!   exactly, against the old node's labels.
//! * Each refresh walks the snapshot's node list once comparing addresses, takes the changed
//!   nodes' old items out of the totals and puts their new ones in (computing them on the
//!   scheduler's pool when there are many), and drops the positions past the list's end.
//!   Afterwards `totals = Σ items(held[i])` and `held[i] = snapshot.nodes[i]` for every i,
//!   whatever the order of the list: so the totals are exactly a fresh computation's.
//! * Contributions may read namespace labels (an incoming term's `namespaceSelector` against
//!   a running pod's namespace). The entry remembers every namespace it looked at, with the
//!   labels it saw; a refresh first asks the client again and starts the entry afresh if any
//!   of them changed (or appeared, or went away).
//! * A key seen for the first time is computed afresh and not kept (a pod whose labels are
//!   its own, such as a StatefulSet's, would otherwise evict every entry and pay for holding
//!   a whole cluster's nodes); the key is remembered, and an entry is made the second time.
//! * The totals are shared with the cycle state as an `Arc`; the next refresh writes them in
//!   place when the last cycle's state is gone (`Arc::make_mut`), and copies them otherwise.
//!
//! Tests: `kept_sums_equal_fresh_sums` (`inter_pod_affinity/tests.rs`) and
//! `counts_kept_between_cycles_equal_a_fresh_count` (`pod_topology_spread/tests.rs`) drive a
//! long-lived plugin and fresh ones through random pod, node and namespace changes and compare
//! every map; `kept_sums_refresh_many_nodes_on_a_pool` covers the parallel refresh.

use crate::api::{LabelSelector, Labels, Sym};
use crate::framework::Snapshot;
use crate::framework::interface::ClusterClient;
use crate::framework::node_info::NodeInfo;
use ahash::AHashMap;
use parking_lot::Mutex;
use rayon::prelude::*;
use std::sync::Arc;

/// One node's contribution to one entry of a sum: `weight`, made of `matches` matches (or
/// eligible nodes), on the pair `(key, value)` of map `slot` (a constraint's index; 0 for
/// sums of one map). kube's score and domain maps keep a pair once anything landed there, so
/// the matches say when taking contributions back empties a pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Item {
    pub(crate) slot: u32,
    pub(crate) key: Sym,
    pub(crate) value: Sym,
    pub(crate) weight: i64,
    pub(crate) matches: u32,
}

/// Adds one contribution to a node's items, one item per `(slot, key, value)`.
#[inline]
pub(crate) fn push_item(items: &mut Vec<Item>, add: Item) {
    match items
        .iter_mut()
        .find(|i| i.slot == add.slot && i.key == add.key && i.value == add.value)
    {
        Some(i) => {
            i.weight += add.weight;
            i.matches += add.matches;
        }
        None => items.push(add),
    }
}

/// Adds `weight` from `matches` matches on the pair of `key` for a node with `labels`, if it
/// has the key (kube's `update` of a topology count map), to map 0.
#[inline]
pub(crate) fn push_on_node(
    items: &mut Vec<Item>,
    labels: &Labels,
    key: Sym,
    weight: i64,
    matches: u32,
) {
    if let Some(value) = labels.get(key) {
        push_item(
            items,
            Item {
                slot: 0,
                key,
                value,
                weight,
                matches,
            },
        );
    }
}

/// A sum of node contributions (a count map, a score map, per-constraint domain maps).
pub(crate) trait Tally: Default + Clone + Send + Sync {
    /// Adds (`sign` 1) or takes back (−1) one item.
    fn apply(&mut self, item: &Item, sign: i64);
    /// Adds another sum (the per-worker sums of a parallel pass).
    fn merge_from(&mut self, other: Self);
}

fn apply_items<T: Tally>(totals: &mut T, items: &[Item], sign: i64) {
    for item in items {
        totals.apply(item, sign);
    }
}

/// What a contribution function may use besides the node: namespace labels through the
/// client (remembered), and a per-worker memo `M` for one pass.
pub(crate) struct Worker<'c, M> {
    pub(crate) ns: NsLabelsCache<'c>,
    pub(crate) memo: M,
}

/// The key's entry: see the module doc.
struct Entry<K, T> {
    key: K,
    /// Namespaces looked at, with the labels seen (`None`: no such namespace).
    namespaces: AHashMap<Sym, Option<Arc<Labels>>>,
    held: Vec<Option<Arc<NodeInfo>>>,
    items: Vec<Vec<Item>>,
    totals: Arc<T>,
}

impl<K, T: Tally> Entry<K, T> {
    fn new(key: K) -> Entry<K, T> {
        Entry {
            key,
            namespaces: AHashMap::new(),
            held: Vec::new(),
            items: Vec::new(),
            totals: Arc::default(),
        }
    }

    /// Whether every namespace looked at still has the labels seen.
    fn namespaces_unchanged(&self, client: Option<&dyn ClusterClient>) -> bool {
        self.namespaces.iter().all(|(&ns, seen)| {
            client.and_then(|c| c.namespace_labels(ns)).as_deref() == seen.as_deref()
        })
    }
}

/// Sums of node contributions kept per key between cycles. See the module doc.
pub(crate) struct Kept<K, T> {
    inner: Mutex<KeptInner<K, T>>,
}

struct KeptInner<K, T> {
    entries: Vec<Entry<K, T>>,
    /// Keys computed afresh once, most recent first (at most [`Kept::MAX_SEEN_ONCE`]).
    seen_once: Vec<K>,
}

impl<K, T> Default for Kept<K, T> {
    fn default() -> Self {
        Kept {
            inner: Mutex::new(KeptInner {
                entries: Vec::new(),
                seen_once: Vec::new(),
            }),
        }
    }
}

impl<K: PartialEq + Clone, T: Tally> Kept<K, T> {
    /// Eight templates taking turns each keep their entry (an entry costs two words per node).
    pub(crate) const MAX_ENTRIES: usize = 8;
    /// Keys remembered until their second sighting: enough that keys taking turns with more
    /// than `MAX_ENTRIES` others are not all forgotten before they come back.
    pub(crate) const MAX_SEEN_ONCE: usize = 16;

    /// The totals of `contribution` over every node of `snapshot` for `key`.
    ///
    /// `contribution(worker, node, out)` appends the node's items to `out` (empty on entry);
    /// it must depend only on the node, the key, and namespace labels read through
    /// `worker.ns`. `relevant`, when given, lists the only node indices whose contribution can
    /// be non-empty (used when computing afresh).
    pub(crate) fn totals<M: Default + Send>(
        &self,
        key: K,
        client: Option<&dyn ClusterClient>,
        snapshot: &Snapshot,
        pool: Option<&rayon::ThreadPool>,
        relevant: Option<&[usize]>,
        contribution: impl Fn(&mut Worker<'_, M>, &NodeInfo, &mut Vec<Item>) + Sync,
    ) -> Arc<T> {
        let taken = {
            let mut inner = self.inner.lock();
            match inner.entries.iter().position(|e| e.key == key) {
                Some(p) => Some(inner.entries.remove(p)),
                None => match inner.seen_once.iter().position(|k| *k == key) {
                    Some(p) => {
                        inner.seen_once.remove(p);
                        Some(Entry::new(key.clone()))
                    }
                    None => {
                        inner.seen_once.insert(0, key.clone());
                        inner.seen_once.truncate(Self::MAX_SEEN_ONCE);
                        None
                    }
                },
            }
        };
        let Some(mut entry) = taken else {
            return Arc::new(fresh(client, snapshot, pool, relevant, &contribution));
        };
        if !entry.namespaces_unchanged(client) {
            entry = Entry::new(entry.key);
        }
        refresh(&mut entry, client, snapshot, pool, &contribution);
        let totals = entry.totals.clone();
        let mut inner = self.inner.lock();
        inner.entries.retain(|e| e.key != entry.key);
        inner.entries.insert(0, entry);
        inner.entries.truncate(Self::MAX_ENTRIES);
        totals
    }
}

/// The totals computed from scratch, nothing kept.
fn fresh<M: Default + Send, T: Tally>(
    client: Option<&dyn ClusterClient>,
    snapshot: &Snapshot,
    pool: Option<&rayon::ThreadPool>,
    relevant: Option<&[usize]>,
    contribution: &(impl Fn(&mut Worker<'_, M>, &NodeInfo, &mut Vec<Item>) + Sync),
) -> T {
    let init = || {
        (
            T::default(),
            Worker {
                ns: NsLabelsCache::over(client, None),
                memo: M::default(),
            },
            Vec::new(),
        )
    };
    let step = |(totals, worker, items): &mut (T, Worker<'_, M>, Vec<Item>), node: &NodeInfo| {
        items.clear();
        contribution(worker, node, items);
        apply_items(totals, items, 1);
    };
    let merge = |a: &mut (T, Worker<'_, M>, Vec<Item>), b: (T, Worker<'_, M>, Vec<Item>)| {
        a.0.merge_from(b.0)
    };
    match relevant {
        Some(indices) => {
            fold_nodes(
                pool,
                indices,
                init,
                |acc, &i| step(acc, &snapshot.nodes[i]),
                merge,
            )
            .0
        }
        None => fold_nodes(pool, &snapshot.nodes, init, |acc, n| step(acc, n), merge).0,
    }
}

/// Brings `entry` up to `snapshot` (see the module doc).
fn refresh<K, M: Default + Send, T: Tally>(
    entry: &mut Entry<K, T>,
    client: Option<&dyn ClusterClient>,
    snapshot: &Snapshot,
    pool: Option<&rayon::ThreadPool>,
    contribution: &(impl Fn(&mut Worker<'_, M>, &NodeInfo, &mut Vec<Item>) + Sync),
) {
    let nodes = &snapshot.nodes;
    let changed: Vec<usize> = (0..nodes.len())
        .filter(|&i| {
            !entry
                .held
                .get(i)
                .and_then(Option::as_ref)
                .is_some_and(|h| Arc::ptr_eq(h, &nodes[i]))
        })
        .collect();
    if changed.is_empty() && entry.held.len() == nodes.len() {
        return;
    }
    // The changed nodes' new items (on the pool when there are many), each worker reading
    // the namespace labels already seen and noting the ones it looks up.
    let known = &entry.namespaces;
    let (recomputed, w, mut seen) = fold_nodes(
        pool,
        &changed,
        || {
            let ns = NsLabelsCache::over(client, Some(known));
            (
                Vec::new(),
                Worker {
                    ns,
                    memo: M::default(),
                },
                Vec::new(),
            )
        },
        |(out, w, _), &i| {
            let mut items = Vec::new();
            contribution(w, &nodes[i], &mut items);
            out.push((i, items));
        },
        |a, b| {
            a.0.extend(b.0);
            a.2.push(b.1.ns.into_map());
            a.2.extend(b.2);
        },
    );
    seen.push(w.ns.into_map());
    for map in seen {
        entry.namespaces.extend(map);
    }
    let totals = Arc::make_mut(&mut entry.totals);
    // Positions past the end of the node list: take their items back.
    for i in nodes.len()..entry.held.len() {
        if entry.held[i].take().is_some() {
            apply_items(totals, &entry.items[i], -1);
        }
    }
    entry.held.resize(nodes.len(), None);
    entry.items.resize_with(nodes.len(), Vec::new);
    for (i, items) in recomputed {
        if entry.held[i].is_some() {
            apply_items(totals, &entry.items[i], -1);
        }
        apply_items(totals, &items, 1);
        entry.held[i] = Some(nodes[i].clone());
        entry.items[i] = items;
    }
}

/// Below this many nodes to visit a pass runs inline: fanning out costs more than it saves.
const PARALLEL_MIN_NODES: usize = 256;

/// Runs `step` over `items`, in parallel on `pool` (the scheduler's) when there are many,
/// folding into accumulators made by `init` and merged by `merge`.
pub(crate) fn fold_nodes<T: Sync, A: Send>(
    pool: Option<&rayon::ThreadPool>,
    items: &[T],
    init: impl Fn() -> A + Sync + Send,
    step: impl Fn(&mut A, &T) + Sync + Send,
    merge: impl Fn(&mut A, A) + Sync + Send,
) -> A {
    let Some(pool) = pool.filter(|_| items.len() >= PARALLEL_MIN_NODES) else {
        let mut acc = init();
        for it in items {
            step(&mut acc, it);
        }
        return acc;
    };
    pool.install(|| {
        items
            .par_iter()
            .with_min_len(64)
            .fold(&init, |mut acc, it| {
                step(&mut acc, it);
                acc
            })
            .reduce(&init, |mut a, b| {
                merge(&mut a, b);
                a
            })
    })
}

/// Namespace labels looked up through the client, memoised (one per worker of a parallel
/// pass). It answers an incoming pod's `namespaceSelector` the way kube's merge of the listed
/// namespaces does: a namespace that does not exist is not selected.
pub(crate) struct NsLabelsCache<'c> {
    /// `None`: no namespace exists.
    client: Option<&'c dyn ClusterClient>,
    /// Namespaces looked up before (read only; a kept entry's).
    known: Option<&'c AHashMap<Sym, Option<Arc<Labels>>>>,
    /// Namespaces this cache looked up.
    map: AHashMap<Sym, Option<Arc<Labels>>>,
}

impl<'c> NsLabelsCache<'c> {
    pub(crate) fn new(client: &'c dyn ClusterClient) -> NsLabelsCache<'c> {
        Self::over(Some(client), None)
    }

    /// Answering from `known` first, then from the client.
    pub(crate) fn over(
        client: Option<&'c dyn ClusterClient>,
        known: Option<&'c AHashMap<Sym, Option<Arc<Labels>>>>,
    ) -> NsLabelsCache<'c> {
        NsLabelsCache {
            client,
            known,
            map: AHashMap::new(),
        }
    }

    /// The namespaces this cache looked up (not the known ones), with their labels.
    pub(crate) fn into_map(self) -> AHashMap<Sym, Option<Arc<Labels>>> {
        self.map
    }

    /// Whether namespace `ns` exists and `sel` selects it.
    pub(crate) fn selects(&mut self, ns: Sym, sel: &LabelSelector) -> bool {
        let labels = match self.known.and_then(|k| k.get(&ns)) {
            Some(seen) => seen,
            None => {
                let client = self.client;
                self.map
                    .entry(ns)
                    .or_insert_with(|| client.and_then(|c| c.namespace_labels(ns)))
            }
        };
        labels.as_deref().is_some_and(|l| sel.matches(l))
    }
}
