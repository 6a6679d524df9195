//! backoffQ as kube 1.33+ keeps it: two heaps behind one interface.
//!
//! - `rejected`: pods rejected by plugins (their UnschedulablePlugins ∪ PendingPlugins is
//!   non-empty), ordered by backoff expiry; with `SchedulerPopFromBackoffQ` the expiries are
//!   1 s windows and ties within a window are broken by the QueueSort order, and this heap is
//!   where `Pop` takes a pod from when activeQ is empty;
//! - `errors`: pods that failed with an error (no rejector plugins), ordered by expiry.
//!
//! A pod is in at most one of the two.

use super::heap::KeyedHeap;
use crate::api::PodKey;
use crate::clock::Time;
use crate::framework::QueuedPodInfo;
use std::sync::Arc;

type Entry = (Time, QueuedPodInfo);

/// The QueueSort order, for ties within a backoff window.
pub(crate) type TieBreak = Arc<dyn Fn(&QueuedPodInfo, &QueuedPodInfo) -> bool + Send + Sync>;

pub(crate) struct BackoffQueue {
    rejected: KeyedHeap<PodKey, Entry>,
    errors: KeyedHeap<PodKey, Entry>,
}

impl Default for BackoffQueue {
    fn default() -> Self {
        BackoffQueue::new(None)
    }
}

impl BackoffQueue {
    /// Heaps by expiry; with `ties`, rejected pods of equal expiry (the same window) in the
    /// QueueSort order.
    pub(crate) fn new(ties: Option<TieBreak>) -> BackoffQueue {
        let by_expiry = || -> KeyedHeap<PodKey, Entry> {
            KeyedHeap::new(Arc::new(|a: &Entry, b: &Entry| a.0 < b.0))
        };
        let rejected = match ties {
            None => by_expiry(),
            Some(less) => KeyedHeap::new(Arc::new(move |a: &Entry, b: &Entry| {
                a.0 < b.0 || (a.0 == b.0 && less(&a.1, &b.1))
            })),
        };
        BackoffQueue {
            rejected,
            errors: by_expiry(),
        }
    }

    /// The first rejected pod, backing off or not (`Pop` with `SchedulerPopFromBackoffQ`
    /// when activeQ is empty). Pods that failed with an error are never taken early.
    pub(crate) fn pop_rejected(&mut self) -> Option<QueuedPodInfo> {
        self.rejected.pop().map(|(_, q)| q)
    }

    pub(crate) fn len(&self) -> usize {
        self.rejected.len() + self.errors.len()
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// `(rejected by plugins, failed with an error)`.
    #[cfg(test)]
    pub(crate) fn lens(&self) -> (usize, usize) {
        (self.rejected.len(), self.errors.len())
    }
    /// The pod queued longest (smallest `timestamp`), for the queue dump.
    pub(crate) fn oldest(&self) -> Option<(PodKey, crate::clock::Time)> {
        self.rejected
            .iter()
            .chain(self.errors.iter())
            .map(|e| (e.1.pod.key.clone(), e.1.timestamp))
            .min_by_key(|(_, t)| *t)
    }

    pub(crate) fn contains(&self, k: &PodKey) -> bool {
        self.rejected.contains(k) || self.errors.contains(k)
    }
    pub(crate) fn get(&self, k: &PodKey) -> Option<&Entry> {
        self.rejected.get(k).or_else(|| self.errors.get(k))
    }

    /// Adds (or replaces) a pod with its expiry, in the heap its rejectors select.
    pub(crate) fn push(&mut self, expiry: Time, q: QueuedPodInfo) {
        let key = q.pod.key.clone();
        self.remove(&key);
        if q.rejectors().next().is_some() {
            self.rejected.push(key, (expiry, q));
        } else {
            self.errors.push(key, (expiry, q));
        }
    }

    /// Replaces the pod object of an entry, keeping heap and expiry.
    pub(crate) fn update_pod(&mut self, k: &PodKey, pod: Arc<crate::api::Pod>) -> bool {
        for h in [&mut self.rejected, &mut self.errors] {
            if let Some((exp, q)) = h.get(k) {
                let (exp, mut q) = (*exp, q.clone());
                q.pod = pod;
                h.push(k.clone(), (exp, q));
                return true;
            }
        }
        false
    }

    pub(crate) fn remove(&mut self, k: &PodKey) -> Option<QueuedPodInfo> {
        self.rejected
            .remove(k)
            .or_else(|| self.errors.remove(k))
            .map(|(_, q)| q)
    }

    /// Every pod whose expiry is before `limit`, from both heaps.
    pub(crate) fn pop_expired_before(&mut self, limit: Time) -> Vec<QueuedPodInfo> {
        let mut out: Vec<QueuedPodInfo> = self
            .rejected
            .pop_while(|(exp, _)| *exp < limit)
            .into_iter()
            .map(|(_, q)| q)
            .collect();
        out.extend(
            self.errors
                .pop_while(|(exp, _)| *exp < limit)
                .into_iter()
                .map(|(_, q)| q),
        );
        out
    }
}
