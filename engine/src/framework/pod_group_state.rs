//! Pod-group state (kube's `backend/cache/podgroupstate.go` behind the framework's
//! `PodGroupManager`): per group, its PodGroup object and every member pod the scheduler
//! knows, each unscheduled, assumed or assigned.
//!
//! # Protocol
//!
//! One [`PodGroupStates`] per scheduler, shared (`Arc`) by the cache, the event handlers,
//! the pod-group cycle and the plugins (GangScheduling's PreEnqueue, Permit and hints):
//!
//! - the event handlers record PodGroup objects (`set_pod_group`, `remove_pod_group`) and
//!   members as the informer sees them (`add_pod`: unscheduled, or assigned when bound;
//!   `delete_pod`);
//! - the cache records assumptions (`assume_pod` when it assumes a member, `forget_pod` when
//!   it forgets one); the informer's bound pod makes it assigned;
//! - readers take a consistent [`PodGroupState`] copy of one group (`get`).
//!
//! Invariant: a member pod is in exactly one of unscheduled, assumed, assigned of its group;
//! `all_pods_count = unscheduled + assumed + assigned`. A group's entry goes when it has
//! neither members nor an object. kube reads these counts from the cycle's snapshot; tidegate
//! reads them live (a member bound or deleted during a group cycle is seen at once).
//! Nothing is recorded while GenericWorkload is off (the members have no `schedulingGroup`).

use crate::api::{Pod, PodGroup, PodGroupKey, PodKey, Sym};
use ahash::AHashMap;
use parking_lot::Mutex;
use std::sync::Arc;

/// Where a member stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Member {
    Unscheduled,
    Assumed,
    Assigned,
}

#[derive(Default)]
struct Entry {
    object: Option<Arc<PodGroup>>,
    pods: AHashMap<PodKey, (Arc<Pod>, Member)>,
}

/// A copy of one group's state (kube's `PodGroupState`).
#[derive(Clone, Debug, Default)]
pub struct PodGroupState {
    pub pod_group: Option<Arc<PodGroup>>,
    /// Members neither assumed nor assigned.
    pub unscheduled: Vec<Arc<Pod>>,
    pub assumed: Vec<Arc<Pod>>,
    pub assigned: Vec<Arc<Pod>>,
}

impl PodGroupState {
    /// kube's `AllPodsCount`.
    pub fn all_pods_count(&self) -> usize {
        self.unscheduled.len() + self.assumed.len() + self.assigned.len()
    }
    /// kube's `ScheduledPodsCount`: assumed or assigned.
    pub fn scheduled_pods_count(&self) -> usize {
        self.assumed.len() + self.assigned.len()
    }
    /// kube's `ScheduledPods`.
    pub fn scheduled_pods(&self) -> impl Iterator<Item = &Arc<Pod>> {
        self.assumed.iter().chain(self.assigned.iter())
    }
}

/// The group of a pod: its namespace and `spec.schedulingGroup.podGroupName`.
pub fn group_of(pod: &Pod) -> Option<PodGroupKey> {
    pod.spec.scheduling_group.as_ref().map(|name| PodGroupKey {
        namespace: pod.namespace,
        name: name.clone(),
    })
}

/// Every group's state (kube's cache `podGroupStates`).
#[derive(Default)]
pub struct PodGroupStates {
    groups: Mutex<AHashMap<PodGroupKey, Entry>>,
}

impl PodGroupStates {
    pub fn set_pod_group(&self, pg: Arc<PodGroup>) {
        let key = pg.key.clone();
        self.groups.lock().entry(key).or_default().object = Some(pg);
    }

    pub fn remove_pod_group(&self, key: &PodGroupKey) {
        let mut g = self.groups.lock();
        if let Some(e) = g.get_mut(key) {
            e.object = None;
            if e.pods.is_empty() {
                g.remove(key);
            }
        }
    }

    /// The group object, if known (kube's `PodGroupLister.Get`).
    pub fn pod_group(&self, key: &PodGroupKey) -> Option<Arc<PodGroup>> {
        self.groups.lock().get(key)?.object.clone()
    }

    pub fn pod_group_of(&self, namespace: Sym, name: &str) -> Option<Arc<PodGroup>> {
        let key = PodGroupKey {
            namespace,
            name: Arc::from(name),
        };
        self.pod_group(&key)
    }

    /// A member seen by the informer (added or updated): assigned when it has a node, else
    /// unscheduled unless it is assumed.
    pub fn add_pod(&self, pod: &Arc<Pod>) {
        let Some(key) = group_of(pod) else { return };
        let mut g = self.groups.lock();
        let e = g.entry(key).or_default();
        let state = match (pod.node_name.is_some(), e.pods.get(&pod.key)) {
            (true, _) => Member::Assigned,
            (false, Some((_, Member::Assumed))) => Member::Assumed,
            (false, _) => Member::Unscheduled,
        };
        e.pods.insert(pod.key.clone(), (pod.clone(), state));
    }

    pub fn delete_pod(&self, pod: &Pod) {
        let Some(key) = group_of(pod) else { return };
        let mut g = self.groups.lock();
        if let Some(e) = g.get_mut(&key) {
            e.pods.remove(&pod.key);
            if e.pods.is_empty() && e.object.is_none() {
                g.remove(&key);
            }
        }
    }

    /// The cache assumed a member on a node.
    pub fn assume_pod(&self, pod: &Arc<Pod>) {
        let Some(key) = group_of(pod) else { return };
        let mut g = self.groups.lock();
        let e = g.entry(key).or_default();
        e.pods
            .insert(pod.key.clone(), (pod.clone(), Member::Assumed));
    }

    /// The cache forgot an assumed member: unscheduled again.
    pub fn forget_pod(&self, pod: &Pod) {
        let Some(key) = group_of(pod) else { return };
        let mut g = self.groups.lock();
        if let Some(e) = g.get_mut(&key)
            && let Some((p, m)) = e.pods.get_mut(&pod.key)
            && *m == Member::Assumed
        {
            let mut un = (**p).clone();
            un.node_name = None;
            *p = Arc::new(un);
            *m = Member::Unscheduled;
        }
    }

    /// A copy of one group's state; `None` when nothing is known of it.
    pub fn get(&self, key: &PodGroupKey) -> Option<PodGroupState> {
        let g = self.groups.lock();
        let e = g.get(key)?;
        let mut s = PodGroupState {
            pod_group: e.object.clone(),
            ..Default::default()
        };
        for (p, m) in e.pods.values() {
            match m {
                Member::Unscheduled => s.unscheduled.push(p.clone()),
                Member::Assumed => s.assumed.push(p.clone()),
                Member::Assigned => s.assigned.push(p.clone()),
            }
        }
        for v in [&mut s.unscheduled, &mut s.assumed, &mut s.assigned] {
            v.sort_by(|a, b| a.key.as_str().cmp(b.key.as_str()));
        }
        Some(s)
    }

    /// kube's `AllPodsCount` without copying the members.
    pub fn all_pods_count(&self, key: &PodGroupKey) -> usize {
        self.groups.lock().get(key).map_or(0, |e| e.pods.len())
    }

    /// kube's `ScheduledPodsCount` without copying the members.
    pub fn scheduled_pods_count(&self, key: &PodGroupKey) -> usize {
        self.groups.lock().get(key).map_or(0, |e| {
            e.pods
                .values()
                .filter(|(_, m)| *m != Member::Unscheduled)
                .count()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{PodGroupPolicy, PodSpecInfo};

    fn pod(name: &str, group: &str, node: Option<&str>) -> Arc<Pod> {
        let spec = PodSpecInfo {
            scheduling_group: Some(Arc::from(group)),
            ..Default::default()
        };
        let mut p = Pod::new("default", name, Arc::new(spec));
        p.node_name = node.map(Sym::new);
        Arc::new(p)
    }

    #[test]
    fn members_move_between_unscheduled_assumed_and_assigned() {
        let s = PodGroupStates::default();
        let key = PodGroupKey::new("default", "g");
        let a = pod("a", "g", None);
        let b = pod("b", "g", None);
        s.add_pod(&a);
        s.add_pod(&b);
        assert_eq!(s.all_pods_count(&key), 2);
        assert_eq!(s.scheduled_pods_count(&key), 0);
        s.assume_pod(&pod("a", "g", Some("n1")));
        assert_eq!(s.scheduled_pods_count(&key), 1);
        // An informer update of the unbound pod keeps it assumed.
        s.add_pod(&a);
        assert_eq!(s.scheduled_pods_count(&key), 1);
        s.forget_pod(&a);
        assert_eq!(s.scheduled_pods_count(&key), 0);
        s.add_pod(&pod("b", "g", Some("n1")));
        let st = s.get(&key).unwrap();
        assert_eq!(st.assigned.len(), 1);
        assert_eq!(st.unscheduled.len(), 1);
        assert_eq!(st.all_pods_count(), 2);
        s.delete_pod(&a);
        s.delete_pod(&b);
        assert!(s.get(&key).is_none());
        let _ = PodGroupPolicy::Basic;
    }
}
