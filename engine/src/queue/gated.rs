//! The gated set: pods that a PreEnqueue plugin keeps out of activeQ.
//!
//! Gated pods are held apart from activeQ, backoffQ and the unschedulable pool, so no cluster
//! event, flush or scan ever touches the pods SchedulingGates gates: only the pod's own update
//! or delete does. Pods another PreEnqueue plugin gates (DynamicResources, until a claim
//! exists) are indexed by that plugin too, for the cluster events it registered. The set is
//! a lock-free hash map (papaya), so admitting a gated pod takes no queue lock, and it keeps a
//! count per gate name for the `tidegate_gated_pods{gate}` gauge.
//!
//! Protocol: the informer delivers one pod's add, updates and delete in order, so two
//! operations on the same key never overlap; operations on different keys run concurrently.
//! `insert` adds the new gate counts before it subtracts those of a replaced entry, so a gauge
//! never dips below the true count of a gate that stays.
//!
//! Each entry holds its `QueuedPodInfo` in an uncontended cell, and `remove` takes it out
//! rather than cloning it: the caller owns the pod's queue record with no allocation, and the
//! entry papaya retires (freed later, in batches, by its collector) holds nothing that costs
//! anything to drop. Only the pod's own operations touch the cell, so its lock never waits.

use crate::api::PodKey;
use crate::framework::QueuedPodInfo;
use ahash::{AHashMap, AHashSet};
use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};

/// A gated pod's record; `None` once `remove` has taken it.
type Entry = Mutex<Option<QueuedPodInfo>>;

pub(crate) struct GatedPods {
    pods: papaya::HashMap<PodKey, Entry, ahash::RandomState>,
    per_gate: papaya::HashMap<Arc<str>, AtomicI64, ahash::RandomState>,
    /// The pods gated by a plugin other than SchedulingGates, by that plugin (DynamicResources
    /// waits for a claim to exist): cluster events can ungate these, so the queue finds them
    /// here. `event_gated_len` counts them, so that events cost nothing while there are none.
    event_gated: Mutex<AHashMap<&'static str, AHashSet<PodKey>>>,
    event_gated_len: AtomicUsize,
}

/// The plugin whose gated pods only their own updates release (the set's common case).
const SCHEDULING_GATES: &str = "SchedulingGates";

impl Default for GatedPods {
    fn default() -> Self {
        GatedPods {
            // Blocking resizes: the insert that grows the map pays for the copy, instead of
            // spreading migration work over later operations (ungates) as incremental mode does.
            pods: papaya::HashMap::builder()
                .hasher(ahash::RandomState::new())
                .resize_mode(papaya::ResizeMode::Blocking)
                .build(),
            per_gate: papaya::HashMap::builder()
                .hasher(ahash::RandomState::new())
                .build(),
            event_gated: Mutex::default(),
            event_gated_len: AtomicUsize::new(0),
        }
    }
}

impl GatedPods {
    pub(crate) fn len(&self) -> usize {
        self.pods.len()
    }
    pub(crate) fn contains(&self, k: &PodKey) -> bool {
        self.pods.pin().contains_key(k)
    }
    /// The pod gated longest (smallest `timestamp`), for the queue dump: O(pods).
    pub(crate) fn oldest(&self) -> Option<(PodKey, crate::clock::Time)> {
        let m = self.pods.pin();
        m.iter()
            .filter_map(|(k, e)| e.lock().as_ref().map(|q| (k.clone(), q.timestamp)))
            .min_by_key(|(_, t)| *t)
    }

    pub(crate) fn get(&self, k: &PodKey) -> Option<QueuedPodInfo> {
        self.pods.pin().get(k).and_then(|e| e.lock().clone())
    }

    fn count(&self, q: &QueuedPodInfo, delta: i64) {
        let m = self.per_gate.pin();
        for g in &q.pod.spec.scheduling_gates {
            match m.get(g) {
                Some(n) => n,
                None => m.get_or_insert_with(g.clone(), || AtomicI64::new(0)),
            }
            .fetch_add(delta, Ordering::Relaxed);
        }
    }

    pub(crate) fn insert(&self, q: QueuedPodInfo) {
        self.count(&q, 1);
        let key = q.pod.key.clone();
        if let Some(p) = q.gating_plugin.filter(|p| *p != SCHEDULING_GATES)
            && self
                .event_gated
                .lock()
                .entry(p)
                .or_default()
                .insert(key.clone())
        {
            self.event_gated_len.fetch_add(1, Ordering::Relaxed);
        }
        let pin = self.pods.pin();
        if let Some(old) = pin.insert(key, Mutex::new(Some(q)))
            && let Some(old) = old.lock().take()
        {
            self.count(&old, -1);
        }
    }

    pub(crate) fn remove(&self, k: &PodKey) -> Option<QueuedPodInfo> {
        let pin = self.pods.pin();
        let q = pin.remove(k)?.lock().take()?;
        self.count(&q, -1);
        if let Some(p) = q.gating_plugin.filter(|p| *p != SCHEDULING_GATES)
            && self
                .event_gated
                .lock()
                .get_mut(p)
                .is_some_and(|set| set.remove(k))
        {
            self.event_gated_len.fetch_sub(1, Ordering::Relaxed);
        }
        Some(q)
    }

    /// Whether any pod is gated by a plugin other than SchedulingGates (so that events may
    /// move it); a relaxed read, re-checked under the index's lock by [`Self::gated_by`].
    pub(crate) fn any_event_gated(&self) -> bool {
        self.event_gated_len.load(Ordering::Relaxed) != 0
    }

    /// The pods gated by `plugin` (a plugin other than SchedulingGates), sorted.
    pub(crate) fn gated_by(&self, plugin: &str) -> Vec<PodKey> {
        if !self.any_event_gated() {
            return Vec::new();
        }
        let mut v: Vec<PodKey> = self
            .event_gated
            .lock()
            .get(plugin)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default();
        v.sort();
        v
    }

    /// Gated pods per gate name (names with a zero count left out), sorted by name.
    pub(crate) fn per_gate(&self) -> Vec<(Arc<str>, i64)> {
        let mut v: Vec<_> = self
            .per_gate
            .pin()
            .iter()
            .map(|(k, v)| (k.clone(), v.load(Ordering::Relaxed)))
            .filter(|(_, n)| *n != 0)
            .collect();
        v.sort();
        v
    }
}
