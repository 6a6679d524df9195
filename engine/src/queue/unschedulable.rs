//! The unschedulable pool, indexed by rejector plugin.
//!
//! kube-scheduler keeps these pods in one map and, on every cluster event, walks all of them
//! under its queue lock (kubernetes#124384, #125564). Here each pod is also filed under every
//! plugin that rejected it (its UnschedulablePlugins ∪ PendingPlugins), so an event visits only
//! the pods filed under plugins that registered it: O(pods it can help), not O(parked pods).
//!
//! Invariant: `by_plugin[p]` contains `k` iff `pods[k]` exists and `p` is one of its
//! rejectors; `no_rejector` holds the pods with none.

use super::QueuedPodInfo;
use crate::api::PodKey;
use ahash::{AHashMap, AHashSet};

#[derive(Default)]
pub struct UnschedulablePods {
    pods: AHashMap<PodKey, QueuedPodInfo>,
    by_plugin: AHashMap<&'static str, AHashSet<PodKey>>,
    no_rejector: AHashSet<PodKey>,
}

impl UnschedulablePods {
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
    pub fn values(&self) -> impl Iterator<Item = &QueuedPodInfo> {
        self.pods.values()
    }

    fn file(&mut self, q: &QueuedPodInfo) {
        let key = &q.pod.key;
        let mut any = false;
        for p in q.rejectors() {
            any = true;
            self.by_plugin.entry(p).or_default().insert(key.clone());
        }
        if !any {
            self.no_rejector.insert(key.clone());
        }
    }

    fn unfile(&mut self, q: &QueuedPodInfo) {
        let key = &q.pod.key;
        for p in q.rejectors() {
            if let Some(set) = self.by_plugin.get_mut(p) {
                set.remove(key);
                if set.is_empty() {
                    self.by_plugin.remove(p);
                }
            }
        }
        self.no_rejector.remove(key);
    }

    pub fn insert(&mut self, q: QueuedPodInfo) {
        if let Some(old) = self.pods.remove(&q.pod.key) {
            self.unfile(&old);
        }
        self.file(&q);
        self.pods.insert(q.pod.key.clone(), q);
    }

    pub fn remove(&mut self, k: &PodKey) -> Option<QueuedPodInfo> {
        let q = self.pods.remove(k)?;
        self.unfile(&q);
        Some(q)
    }

    /// Keys of the pods filed under any of `plugins` (each once), plus the pods with no
    /// rejector plugin (an event may always help those).
    pub fn candidates<'a>(&self, plugins: impl Iterator<Item = &'a str>) -> Vec<PodKey> {
        let mut seen: AHashSet<&PodKey> = AHashSet::new();
        let mut out = Vec::new();
        for p in plugins {
            if let Some(set) = self.by_plugin.get(p) {
                for k in set {
                    if seen.insert(k) {
                        out.push(k.clone());
                    }
                }
            }
        }
        for k in &self.no_rejector {
            if seen.insert(k) {
                out.push(k.clone());
            }
        }
        out
    }

    /// All keys (wildcard events, flushes).
    pub fn keys(&self) -> Vec<PodKey> {
        self.pods.keys().cloned().collect()
    }

    /// Checks the index invariant (tests).
    pub fn check(&self) -> Result<(), String> {
        for (k, q) in &self.pods {
            let mut any = false;
            for p in q.rejectors() {
                any = true;
                if !self.by_plugin.get(p).is_some_and(|s| s.contains(k)) {
                    return Err(format!("{k} not filed under {p}"));
                }
            }
            if !any && !self.no_rejector.contains(k) {
                return Err(format!("{k} not filed as rejector-less"));
            }
        }
        let filed: usize = self.by_plugin.values().map(|s| s.len()).sum::<usize>();
        let expected: usize = self
            .pods
            .values()
            .map(|q| q.rejectors().count())
            .sum::<usize>();
        if filed != expected {
            return Err(format!("{filed} filings for {expected} rejections"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Pod, PodSpecInfo};
    use proptest::prelude::*;
    use std::sync::Arc;

    fn qpi(name: &str, plugins: &[&'static str]) -> QueuedPodInfo {
        let pod = Pod::new("ns", name, Arc::new(PodSpecInfo::default()));
        let mut q = QueuedPodInfo::new(Arc::new(pod), std::time::Duration::ZERO);
        q.unschedulable_plugins = plugins.to_vec();
        q
    }

    const PLUGINS: [&str; 3] = ["A", "B", "C"];

    #[test]
    fn candidates_are_only_the_pods_an_event_can_help() {
        let mut u = UnschedulablePods::default();
        for i in 0..1000 {
            u.insert(qpi(&format!("a{i}"), &["A"]));
        }
        u.insert(qpi("b", &["B"]));
        u.insert(qpi("ab", &["A", "B"]));
        u.insert(qpi("err", &[]));
        let mut c = u.candidates(["B"].into_iter());
        c.sort();
        assert_eq!(
            c,
            vec![
                PodKey::new("ns", "ab"),
                PodKey::new("ns", "b"),
                PodKey::new("ns", "err")
            ]
        );
        u.check().unwrap();
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: if cfg!(miri) { 3 } else { 256 },
            ..ProptestConfig::default()
        })]
        #[test]
        fn index_stays_consistent(ops in proptest::collection::vec((0u8..2, 0usize..20, proptest::collection::vec(0usize..3, 0..3)), 1..200)) {
            let mut u = UnschedulablePods::default();
            for (op, k, ps) in ops {
                let name = format!("p{k}");
                if op == 0 {
                    let mut plugins: Vec<&'static str> = ps.iter().map(|&i| PLUGINS[i]).collect();
                    plugins.sort_unstable();
                    plugins.dedup();
                    u.insert(qpi(&name, &plugins));
                } else {
                    u.remove(&PodKey::new("ns", &name));
                }
                prop_assert!(u.check().is_ok(), "{:?}", u.check());
            }
        }
    }
}
