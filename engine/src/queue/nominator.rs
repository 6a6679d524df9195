//! The nominator: which pods are nominated to run on which node (`nominatedNodeName`), so
//! that Filter can account for them (kube's two-pass filter) and preemption can reserve room.
//! Source of behaviour: `pkg/scheduler/backend/queue/nominator.go`.
//!
//! - `add` always removes the pod's old nomination first. The node comes from an override
//!   (preemption's NominatingInfo) or else from the pod's `status.nominatedNodeName`; an empty
//!   node stores nothing. Assigned pods are never nominated.
//! - `update` keeps an in-memory nomination when neither the old nor the new object carries
//!   `nominatedNodeName` (the nomination was made by this scheduler and not yet written back).
//! - `delete` removes the nomination if any.
//!
//! Invariant: `by_node[n]` lists `k` iff `by_pod[k].0 == n`.

use crate::api::{Pod, PodKey, Sym};
use crate::framework::Nominating;
use crate::framework::PodNominator;
use ahash::AHashMap;
use parking_lot::Mutex;
use std::sync::Arc;

#[derive(Default)]
struct Inner {
    by_node: AHashMap<Sym, Vec<Arc<Pod>>>,
    by_pod: AHashMap<PodKey, Sym>,
}

#[derive(Default)]
pub struct Nominator {
    inner: Mutex<Inner>,
}

impl Inner {
    fn delete(&mut self, key: &PodKey) {
        if let Some(node) = self.by_pod.remove(key)
            && let Some(list) = self.by_node.get_mut(&node)
        {
            list.retain(|p| &p.key != key);
            if list.is_empty() {
                self.by_node.remove(&node);
            }
        }
    }

    fn add(&mut self, pod: &Arc<Pod>, how: Nominating) {
        self.delete(&pod.key);
        if pod.is_assigned() {
            return;
        }
        let node = match how {
            Nominating::Override(n) => n,
            Nominating::FromStatus => pod.nominated_node_name.unwrap_or(Sym::EMPTY),
        };
        if node.is_empty() {
            return;
        }
        self.by_pod.insert(pod.key.clone(), node);
        self.by_node.entry(node).or_default().push(pod.clone());
    }
}

impl Nominator {
    pub fn add(&self, pod: &Arc<Pod>, how: Nominating) {
        self.inner.lock().add(pod, how);
    }

    pub fn delete(&self, key: &PodKey) {
        self.inner.lock().delete(key);
    }

    pub fn update(&self, old: &Pod, new: &Arc<Pod>) {
        let mut inner = self.inner.lock();
        // Keep a nomination made in memory when neither object carries one.
        let keep = old.nominated_node_name.is_none() && new.nominated_node_name.is_none();
        let how = match (keep, inner.by_pod.get(&old.key)) {
            (true, Some(&n)) => Nominating::Override(n),
            _ => Nominating::FromStatus,
        };
        inner.add(new, how);
    }

    /// The node a pod is nominated to.
    pub fn node_of(&self, key: &PodKey) -> Option<Sym> {
        self.inner.lock().by_pod.get(key).copied()
    }

    /// Pods nominated to `node` (the latest objects seen).
    pub(crate) fn pods_for_node(&self, node: Sym) -> Vec<Arc<Pod>> {
        self.inner
            .lock()
            .by_node
            .get(&node)
            .cloned()
            .unwrap_or_default()
    }

    /// [`Nominator::nominated_at_least`] for one node only (the nominated node tried alone,
    /// the oracle's single-node checks): no map of every node.
    pub(crate) fn nominated_at_least_on(&self, node: Sym, pod: &Pod) -> Vec<Arc<Pod>> {
        self.inner
            .lock()
            .by_node
            .get(&node)
            .map_or_else(Vec::new, |pods| {
                pods.iter()
                    .filter(|p| p.uid != pod.uid && p.priority() >= pod.priority())
                    .cloned()
                    .collect()
            })
    }

    /// For the two-pass filter (kube's `addGENominatedPods`): per node, the pods nominated
    /// there whose priority is at least `pod`'s, other than `pod` itself. Empty (and cheap)
    /// when nothing is nominated.
    pub(crate) fn nominated_at_least(&self, pod: &Pod) -> AHashMap<Sym, Vec<Arc<Pod>>> {
        let inner = self.inner.lock();
        let mut out = AHashMap::new();
        for (node, pods) in &inner.by_node {
            let v: Vec<Arc<Pod>> = pods
                .iter()
                .filter(|p| p.uid != pod.uid && p.priority() >= pod.priority())
                .cloned()
                .collect();
            if !v.is_empty() {
                out.insert(*node, v);
            }
        }
        out
    }

    /// Every nomination held, as (node, pod): a copy, for inspection.
    pub fn all(&self) -> Vec<(Sym, Arc<Pod>)> {
        let inner = self.inner.lock();
        inner
            .by_node
            .iter()
            .flat_map(|(n, pods)| pods.iter().map(|p| (*n, p.clone())))
            .collect()
    }

    pub fn len(&self) -> usize {
        self.inner.lock().by_pod.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl PodNominator for Nominator {
    fn add_nominated_pod(&self, pod: &Arc<Pod>, how: Nominating) {
        self.add(pod, how);
    }

    fn delete_nominated_pod_if_exists(&self, key: &PodKey) {
        self.delete(key);
    }

    fn update_nominated_pod(&self, old: &Pod, new: &Arc<Pod>) {
        self.update(old, new);
    }

    fn nominated_pods_for_node(&self, node: Sym) -> Vec<Arc<Pod>> {
        self.pods_for_node(node)
    }

    fn nominated_at_least(&self, pod: &Pod) -> AHashMap<Sym, Vec<Arc<Pod>>> {
        Nominator::nominated_at_least(self, pod)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::PodSpecInfo;

    fn pod(name: &str, nominated: Option<&str>, node: Option<&str>) -> Arc<Pod> {
        Arc::new(Pod {
            key: PodKey::new("ns", name),
            namespace: Sym::new("ns"),
            name: Arc::from(name),
            uid: Arc::from(name),
            labels: Arc::default(),
            spec: Arc::new(PodSpecInfo::default()),
            node_name: node.map(Sym::new),
            nominated_node_name: nominated.map(Sym::new),
            deletion_timestamp: false,
            resource_version: 0,
            resize: None,
            resource_claim_statuses: None,
        })
    }

    // Cases after kubernetes/kubernetes pkg/scheduler/backend/queue/scheduling_queue_test.go
    // (TestPriorityQueue_NominatedPodsForNode, TestPriorityQueue_UpdateNominatedPodForNode).
    #[test]
    fn add_update_delete() {
        let n = Nominator::default();
        let n1 = Sym::new("node1");
        n.add(&pod("a", Some("node1"), None), Nominating::FromStatus);
        n.add(&pod("b", None, None), Nominating::FromStatus);
        assert_eq!(n.len(), 1, "no nominatedNodeName stores nothing");
        assert_eq!(n.pods_for_node(n1).len(), 1);
        // Override (preemption) moves the nomination.
        n.add(
            &pod("b", None, None),
            Nominating::Override(Sym::new("node2")),
        );
        assert_eq!(n.node_of(&PodKey::new("ns", "b")), Some(Sym::new("node2")));
        // An update where neither object carries a nomination keeps the in-memory one.
        n.update(&pod("b", None, None), &pod("b", None, None));
        assert_eq!(n.node_of(&PodKey::new("ns", "b")), Some(Sym::new("node2")));
        // An update that carries one wins.
        n.update(&pod("b", None, None), &pod("b", Some("node1"), None));
        assert_eq!(n.pods_for_node(n1).len(), 2);
        // Assigned pods are not nominated; delete removes.
        n.update(
            &pod("a", Some("node1"), None),
            &pod("a", Some("node1"), Some("node1")),
        );
        assert_eq!(n.node_of(&PodKey::new("ns", "a")), None);
        n.delete(&PodKey::new("ns", "b"));
        assert!(n.is_empty());
        assert!(n.pods_for_node(n1).is_empty());
    }

    // kube's UpdateNominatedPod, case (3): an update whose old object carried
    // nominatedNodeName and whose new one does not (an API write removed it: the preemption
    // executor clearing a lower-priority pod's, or a status replaced wholesale, as
    // scheduler_perf's updateAny does) drops the nomination, even one PostFilter made in memory.
    #[test]
    fn an_update_that_removes_nominated_node_name_drops_the_nomination() {
        let n = Nominator::default();
        let p = pod("p", None, None);
        n.add(&p, Nominating::Override(Sym::new("node1")));
        n.update(&p, &pod("p", Some("node1"), None));
        assert_eq!(n.node_of(&p.key), Some(Sym::new("node1")));
        n.update(&pod("p", Some("node1"), None), &pod("p", None, None));
        assert_eq!(n.node_of(&p.key), None);
        assert!(n.pods_for_node(Sym::new("node1")).is_empty());
    }
}
