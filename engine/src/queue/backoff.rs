//! backoffQ as kube 1.33+ keeps it: two heaps behind one interface.
//!
//! - `rejected`: pods rejected by plugins (their UnschedulablePlugins ∪ PendingPlugins is
//!   non-empty), ordered by backoff expiry;
//! - `errors`: pods that failed with an error (no rejector plugins), ordered by expiry.
//!
//! A pod is in at most one of the two.

use super::QueuedPodInfo;
use super::clock::Time;
use super::heap::KeyedHeap;
use crate::api::PodKey;
use std::sync::Arc;

type Entry = (Time, QueuedPodInfo);

pub struct BackoffQueue {
    rejected: KeyedHeap<PodKey, Entry>,
    errors: KeyedHeap<PodKey, Entry>,
}

impl Default for BackoffQueue {
    fn default() -> Self {
        let by_expiry = || -> KeyedHeap<PodKey, Entry> {
            KeyedHeap::new(Arc::new(|a: &Entry, b: &Entry| a.0 < b.0))
        };
        BackoffQueue {
            rejected: by_expiry(),
            errors: by_expiry(),
        }
    }
}

impl BackoffQueue {
    pub fn len(&self) -> usize {
        self.rejected.len() + self.errors.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// `(rejected by plugins, failed with an error)`.
    pub fn lens(&self) -> (usize, usize) {
        (self.rejected.len(), self.errors.len())
    }
    pub fn contains(&self, k: &PodKey) -> bool {
        self.rejected.contains(k) || self.errors.contains(k)
    }
    pub fn get(&self, k: &PodKey) -> Option<&Entry> {
        self.rejected.get(k).or_else(|| self.errors.get(k))
    }

    /// Adds (or replaces) a pod with its expiry, in the heap its rejectors select.
    pub fn push(&mut self, expiry: Time, q: QueuedPodInfo) {
        let key = q.pod.key.clone();
        self.remove(&key);
        if q.rejectors().next().is_some() {
            self.rejected.push(key, (expiry, q));
        } else {
            self.errors.push(key, (expiry, q));
        }
    }

    /// Replaces the pod object of an entry, keeping heap and expiry.
    pub fn update_pod(&mut self, k: &PodKey, pod: Arc<crate::api::Pod>) -> bool {
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

    pub fn remove(&mut self, k: &PodKey) -> Option<QueuedPodInfo> {
        self.rejected
            .remove(k)
            .or_else(|| self.errors.remove(k))
            .map(|(_, q)| q)
    }

    /// Every pod whose backoff expired at `now`, from both heaps.
    pub fn pop_expired(&mut self, now: Time) -> Vec<QueuedPodInfo> {
        let mut out: Vec<QueuedPodInfo> = self
            .rejected
            .pop_while(|(exp, _)| *exp <= now)
            .into_iter()
            .map(|(_, q)| q)
            .collect();
        out.extend(
            self.errors
                .pop_while(|(exp, _)| *exp <= now)
                .into_iter()
                .map(|(_, q)| q),
        );
        out
    }
}
