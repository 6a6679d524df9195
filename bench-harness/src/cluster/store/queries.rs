//! Reads of the store: pods and namespaces listed, per-namespace counters and the waits on
//! them, the collectors' bind records, the run's counts, placements and final pod states.

use super::*;

impl Store {
    /// Pods of a namespace (optionally matching labels), sorted by name.
    pub fn list_pods(&self, namespace: &str, selector: &BTreeMap<String, String>) -> Vec<PodKey> {
        let st = self.state.lock();
        let Some(ns) = st.ns.get(namespace) else {
            return Vec::new();
        };
        let mut v: Vec<PodKey> = ns
            .pods
            .iter()
            .filter(|(_, r)| labels_match(&r.obj, selector))
            .map(|(k, _)| k.clone())
            .collect();
        v.sort();
        v
    }

    /// The unbound pods of `namespace` whose `spec.schedulingGroup` names `group`, sorted by
    /// name (the ResourceClaim controller's member index).
    pub fn unbound_group_members(&self, namespace: &str, group: &str) -> Vec<Arc<Pod>> {
        let st = self.state.lock();
        let Some(ns) = st.ns.get(namespace) else {
            return Vec::new();
        };
        let mut v: Vec<Arc<Pod>> = ns
            .pods
            .values()
            .map(|r| &r.pod)
            .filter(|p| p.node_name.is_none() && p.spec.scheduling_group.as_deref() == Some(group))
            .cloned()
            .collect();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }

    pub fn ns_stats(&self, namespace: &str) -> NsStats {
        self.state
            .lock()
            .ns
            .get(namespace)
            .map(|n| n.stats)
            .unwrap_or_default()
    }

    pub fn has_namespace(&self, name: &str) -> bool {
        self.state.lock().namespaces.contains_key(name)
    }

    pub fn namespaces(&self) -> Vec<String> {
        self.state.lock().namespaces.keys().cloned().collect()
    }

    /// [`Store::ns_stats`] over the pods whose labels match `selector` (a barrier's
    /// `labelSelector`), without waiting.
    pub fn ns_stats_matching(
        &self,
        namespace: &str,
        selector: &BTreeMap<String, String>,
    ) -> NsStats {
        Self::stats_matching(&self.state.lock(), namespace, selector)
    }

    /// The namespace's counters over the pods whose labels match `selector` (a scan of the
    /// namespace; the kept counters when the selector is empty).
    fn stats_matching(st: &State, namespace: &str, selector: &BTreeMap<String, String>) -> NsStats {
        let Some(ns) = st.ns.get(namespace) else {
            return NsStats::default();
        };
        if selector.is_empty() {
            return ns.stats;
        }
        let mut s = NsStats::default();
        for r in ns.pods.values().filter(|r| labels_match(&r.obj, selector)) {
            s.pods += 1;
            if r.node.is_some() {
                s.bound += 1;
            } else if r.condition.is_some() {
                s.attempted_unbound += 1;
            }
        }
        s
    }

    /// Waits until `done(stats)` holds for `namespace`, or `timeout` passes (false).
    pub fn wait_ns(
        &self,
        namespace: &str,
        timeout: Duration,
        done: impl Fn(&NsStats) -> bool,
    ) -> bool {
        self.wait_ns_matching(namespace, &BTreeMap::new(), timeout, done)
    }

    /// As [`Store::wait_ns`], counting only the pods whose labels match `selector` (a
    /// barrier's `labelSelector`).
    pub fn wait_ns_matching(
        &self,
        namespace: &str,
        selector: &BTreeMap<String, String>,
        timeout: Duration,
        done: impl Fn(&NsStats) -> bool,
    ) -> bool {
        let deadline = Instant::now() + timeout;
        let mut st = self.state.lock();
        loop {
            let s = Self::stats_matching(&st, namespace, selector);
            if done(&s) {
                return true;
            }
            if Instant::now() >= deadline || crate::interrupt::requested().is_some() {
                return false;
            }
            self.changed.wait_for(
                &mut st,
                Duration::from_millis(100).min(deadline - Instant::now()),
            );
        }
    }

    /// Starts recording bind times of pods in `namespaces` whose labels match `selector`.
    pub fn start_collecting(
        &self,
        namespaces: &[String],
        selector: &BTreeMap<String, String>,
    ) -> usize {
        let mut st = self.state.lock();
        st.collectors.push(Some(Collector {
            namespaces: namespaces.iter().cloned().collect(),
            selector: selector.clone(),
            start: Some(self.clock.now()),
            binds: Vec::new(),
        }));
        st.collectors.len() - 1
    }

    /// Stops a collector: bind times since its start, and its duration.
    pub fn stop_collecting(&self, id: usize) -> (Vec<Duration>, Duration) {
        let mut st = self.state.lock();
        let c = st
            .collectors
            .get_mut(id)
            .and_then(Option::take)
            .unwrap_or_default();
        let now = self.clock.now();
        let d = c.start.map_or(Duration::ZERO, |s| now.saturating_sub(s));
        (c.binds, d)
    }

    /// (created, binds, deleted) so far: O(1), for the progress bar.
    pub fn progress(&self) -> (u64, u64, u64) {
        let st = self.state.lock();
        (st.created, st.binds, st.deleted)
    }

    pub fn counts(&self) -> StoreCounts {
        let st = self.state.lock();
        let live = || st.all_pods().map(|(_, r)| r).filter(|r| !r.terminating);
        let bound = live().filter(|r| r.node.is_some()).count() as u64;
        let unbound = live().filter(|r| r.node.is_none()).count() as u64;
        StoreCounts {
            created: st.created,
            deleted: st.deleted,
            bound,
            terminating: st.ns.values().map(|n| n.pods.len() as u64).sum::<u64>() - bound - unbound,
            binds: st.binds,
            unbound,
        }
    }

    /// The pods bound to node `name` (terminating ones included), sorted: kube's
    /// pods-by-node index.
    pub fn pods_on_node(&self, name: &str) -> Vec<PodKey> {
        let st = self.state.lock();
        let mut v: Vec<PodKey> = st
            .pods_by_node
            .get(&Sym::new(name))
            .into_iter()
            .flatten()
            .cloned()
            .collect();
        v.sort();
        v
    }

    /// `(namespace, name, node)` of every bound pod, sorted.
    pub fn placements(&self) -> Vec<(String, String, String)> {
        let st = self.state.lock();
        let mut v: Vec<_> = st
            .all_pods()
            .filter_map(|(k, r)| {
                let (ns, name) = k.split();
                r.node
                    .map(|n| (ns.to_string(), name.to_string(), n.to_string_lossy()))
            })
            .collect();
        v.sort();
        v
    }

    /// Every stored pod, sorted by namespace and name, for `--dump-pods`.
    pub fn pod_states(&self) -> Vec<PodState> {
        let st = self.state.lock();
        let mut v: Vec<PodState> = st
            .all_pods()
            .map(|(k, r)| PodState {
                key: k.clone(),
                node: r.node.map(|n| n.to_string_lossy()),
                gates: r
                    .pod
                    .spec
                    .scheduling_gates
                    .iter()
                    .map(|g| g.to_string())
                    .collect(),
                condition: r.condition.as_deref().cloned(),
                terminating: r.terminating,
                pod_group: r.pod.spec.scheduling_group.as_deref().map(str::to_string),
            })
            .collect();
        v.sort_by(|a, b| a.key.cmp(&b.key));
        v
    }

    /// Unbound pods, for the pending report: key and PodScheduled condition.
    pub fn unbound_pods(&self) -> Vec<(PodKey, Option<(String, String)>)> {
        let st = self.state.lock();
        let mut v: Vec<_> = st
            .all_pods()
            .filter(|(_, r)| r.node.is_none())
            .map(|(k, r)| (k.clone(), r.condition.as_deref().cloned()))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }
}
