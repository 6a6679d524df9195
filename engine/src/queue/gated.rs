//! The gated set: pods that a PreEnqueue plugin keeps out of activeQ.
//!
//! Gated pods are held apart from activeQ, backoffQ and the unschedulable pool, so no cluster
//! event, flush or scan ever touches them: only the pod's own update or delete does. The set
//! also keeps a per-gate-name count for the `tidegate_gated_pods{gate}` gauge.
//!
//! This first version lives under the queue lock; the lock-free version replaces it behind the
//! same methods.

use super::QueuedPodInfo;
use crate::api::PodKey;
use ahash::AHashMap;
use std::sync::Arc;

#[derive(Default)]
pub struct GatedPods {
    pods: AHashMap<PodKey, QueuedPodInfo>,
    per_gate: AHashMap<Arc<str>, i64>,
}

impl GatedPods {
    pub fn len(&self) -> usize {
        self.pods.len()
    }
    pub fn is_empty(&self) -> bool {
        self.pods.is_empty()
    }
    pub fn contains(&self, k: &PodKey) -> bool {
        self.pods.contains_key(k)
    }
    pub fn get(&self, k: &PodKey) -> Option<&QueuedPodInfo> {
        self.pods.get(k)
    }

    fn count(&mut self, q: &QueuedPodInfo, delta: i64) {
        for g in &q.pod.spec.scheduling_gates {
            let e = self.per_gate.entry(g.clone()).or_default();
            *e += delta;
            if *e == 0 {
                self.per_gate.remove(g);
            }
        }
    }

    pub fn insert(&mut self, q: QueuedPodInfo) {
        self.count(&q, 1);
        if let Some(old) = self.pods.insert(q.pod.key.clone(), q) {
            self.count(&old, -1);
        }
    }

    pub fn remove(&mut self, k: &PodKey) -> Option<QueuedPodInfo> {
        let q = self.pods.remove(k)?;
        self.count(&q, -1);
        Some(q)
    }

    /// Gated pods per gate name, sorted by name.
    pub fn per_gate(&self) -> Vec<(Arc<str>, i64)> {
        let mut v: Vec<_> = self.per_gate.iter().map(|(k, v)| (k.clone(), *v)).collect();
        v.sort();
        v
    }

    pub fn iter(&self) -> impl Iterator<Item = &QueuedPodInfo> {
        self.pods.values()
    }
}
