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
    /// CompositePodGroups and the parent links of both kinds (kube's cache
    /// `compositePodGroupStates` with their `children`).
    forest: Mutex<Forest>,
    /// Bumped by every change that can change a hierarchy's readiness (objects, members).
    version: std::sync::atomic::AtomicU64,
    /// Readiness computed at `version` (see [`PodGroupStates::root_readiness`]).
    readiness: Mutex<Memo>,
}

/// A child of a composite group: its kind (true: composite) and name.
pub(crate) type ChildRef = (bool, Arc<str>);

/// [`PodGroupStates::root_readiness`]'s memo: per composite root its readiness, per PodGroup
/// its answer, at one version of the states.
#[derive(Default)]
struct Memo {
    version: u64,
    roots: AHashMap<PodGroupKey, bool>,
    leaves: AHashMap<PodGroupKey, RootReadiness>,
}

#[derive(Default)]
struct Forest {
    composites: AHashMap<PodGroupKey, Arc<PodGroup>>,
    children: ParentLinks,
}

/// Parent composite group → its observed children (kind, name): the links of kube's workload
/// forest, kept by the pod-group states and by the queue.
#[derive(Default)]
pub(crate) struct ParentLinks(AHashMap<PodGroupKey, std::collections::BTreeSet<ChildRef>>);

impl ParentLinks {
    /// Records `g` under its parent, if it has one.
    pub(crate) fn link(&mut self, g: &PodGroup) {
        if let Some(parent) = g.parent_key() {
            self.0
                .entry(parent)
                .or_default()
                .insert((g.composite, g.key.name.clone()));
        }
    }

    /// Forgets `g` under its parent.
    pub(crate) fn unlink(&mut self, g: &PodGroup) {
        if let Some(parent) = g.parent_key()
            && let Some(set) = self.0.get_mut(&parent)
        {
            set.remove(&(g.composite, g.key.name.clone()));
            if set.is_empty() {
                self.0.remove(&parent);
            }
        }
    }

    /// The children of `parent`, in (kind, name) order.
    pub(crate) fn of(&self, parent: &PodGroupKey) -> impl Iterator<Item = &ChildRef> {
        self.0.get(parent).into_iter().flatten()
    }
}

/// How a pod's hierarchy stands for GangScheduling's PreEnqueue (kube v1.38's
/// `HierarchyTracker.FindRootGroupReadiness`).
#[derive(Clone, Debug, PartialEq)]
pub enum RootReadiness {
    /// The pod's group or one of its composite ancestors is not known yet.
    Unresolved,
    /// The root (a composite group, or the group itself) and whether it is ready.
    Root { root: Arc<PodGroup>, ready: bool },
}

impl PodGroupStates {
    /// Called by every mutator while it still holds the lock it mutated under, so that
    /// [`PodGroupStates::root_readiness`] (which reads the version holding both locks) never
    /// memoises a state older than its version.
    fn bump(&self) {
        self.version
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn set_pod_group(&self, pg: Arc<PodGroup>) {
        let key = pg.key.clone();
        let old = self
            .groups
            .lock()
            .entry(key)
            .or_default()
            .object
            .replace(pg.clone());
        let mut f = self.forest.lock();
        if let Some(o) = old {
            f.children.unlink(&o);
        }
        f.children.link(&pg);
        self.bump();
    }

    pub fn remove_pod_group(&self, key: &PodGroupKey) {
        let mut g = self.groups.lock();
        if let Some(e) = g.get_mut(key) {
            if let Some(o) = e.object.take() {
                self.forest.lock().children.unlink(&o);
            }
            if e.pods.is_empty() {
                g.remove(key);
            }
        }
        self.bump();
    }

    /// A CompositePodGroup added or updated.
    pub fn set_composite(&self, cpg: Arc<PodGroup>) {
        let mut f = self.forest.lock();
        if let Some(o) = f.composites.insert(cpg.key.clone(), cpg.clone()) {
            f.children.unlink(&o);
        }
        f.children.link(&cpg);
        self.bump();
    }

    pub fn remove_composite(&self, key: &PodGroupKey) {
        let mut f = self.forest.lock();
        if let Some(o) = f.composites.remove(key) {
            f.children.unlink(&o);
        }
        self.bump();
    }

    /// The CompositePodGroup object, if known.
    pub fn composite(&self, key: &PodGroupKey) -> Option<Arc<PodGroup>> {
        self.forest.lock().composites.get(key).cloned()
    }

    /// The leaf PodGroups under a composite group (kube's `GetPodGroupStates` walk), or
    /// the group itself when it is a PodGroup.
    pub fn leaves(&self, key: &PodGroupKey, composite: bool) -> Vec<PodGroupKey> {
        if !composite {
            return vec![key.clone()];
        }
        let f = self.forest.lock();
        let mut out = Vec::new();
        let mut stack = vec![key.clone()];
        let mut seen = ahash::AHashSet::new();
        while let Some(k) = stack.pop() {
            if !seen.insert(k.clone()) {
                continue;
            }
            for (c, name) in f.children.of(&k) {
                let ck = PodGroupKey {
                    namespace: k.namespace,
                    name: name.clone(),
                };
                if *c {
                    stack.push(ck);
                } else {
                    out.push(ck);
                }
            }
        }
        out
    }

    /// kube v1.38's `HierarchyTracker.FindRootGroupReadiness` for the PodGroup `key`: its
    /// root (walking `parentCompositePodGroupName` through known composite groups) and
    /// whether the root is ready. A PodGroup is ready with at least its quorum of members
    /// known (`minCount`, 1 for a basic group); a composite group with at least its quorum
    /// of ready children (`minGroupCount`, 1 for basic). A cycle is an error. Memoised per
    /// change of the states, so a group's members asking one after another cost one walk.
    pub fn root_readiness(&self, key: &PodGroupKey) -> Result<RootReadiness, String> {
        let g = self.groups.lock();
        let f = self.forest.lock();
        let version = self.version.load(std::sync::atomic::Ordering::Relaxed);
        let mut memo = self.readiness.lock();
        if memo.version != version {
            *memo = Memo {
                version,
                ..Memo::default()
            };
        }
        if let Some(r) = memo.leaves.get(key) {
            return Ok(r.clone());
        }
        let Some(leaf) = g.get(key).and_then(|e| e.object.clone()) else {
            return Ok(RootReadiness::Unresolved);
        };
        let mut root = leaf;
        let mut visited = vec![root.key.clone()];
        while let Some(pk) = root.parent_key() {
            if visited.contains(&pk) {
                visited.push(pk);
                let names: Vec<&str> = visited.iter().map(|k| &*k.name).collect();
                return Err(format!("cycle detected in the hierarchy: {names:?}"));
            }
            visited.push(pk.clone());
            match f.composites.get(&pk) {
                Some(p) => root = p.clone(),
                None => {
                    memo.leaves.insert(key.clone(), RootReadiness::Unresolved);
                    return Ok(RootReadiness::Unresolved);
                }
            }
        }
        let ready = match memo.roots.get(&root.key).filter(|_| root.composite) {
            Some(&r) => r,
            None => {
                let r = ready_of(&g, &f, &root, &mut Vec::new());
                if root.composite {
                    memo.roots.insert(root.key.clone(), r);
                }
                r
            }
        };
        let out = RootReadiness::Root { root, ready };
        memo.leaves.insert(key.clone(), out.clone());
        Ok(out)
    }

    /// The states' version: it changes with every change that can change a readiness.
    pub fn version(&self) -> u64 {
        self.version.load(std::sync::atomic::Ordering::Relaxed)
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
        self.bump();
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
        self.bump();
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

/// Whether `g` is ready (see [`PodGroupStates::root_readiness`]); `path` guards cycles.
fn ready_of(
    groups: &AHashMap<PodGroupKey, Entry>,
    f: &Forest,
    g: &PodGroup,
    path: &mut Vec<PodGroupKey>,
) -> bool {
    if !g.composite {
        return groups.get(&g.key).map_or(0, |e| e.pods.len()) >= g.quorum();
    }
    if path.contains(&g.key) {
        return false;
    }
    path.push(g.key.clone());
    let mut ready = 0;
    for (c, name) in f.children.of(&g.key) {
        let ck = PodGroupKey {
            namespace: g.key.namespace,
            name: name.clone(),
        };
        let child = if *c {
            f.composites.get(&ck).cloned()
        } else {
            groups.get(&ck).and_then(|e| e.object.clone())
        };
        if child.is_some_and(|c| ready_of(groups, f, &c, path)) {
            ready += 1;
        }
    }
    path.pop();
    ready >= g.quorum()
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

    fn group(name: &str, parent: Option<&str>, composite: bool, min: Option<i32>) -> Arc<PodGroup> {
        let policy = match min {
            Some(min_count) => PodGroupPolicy::Gang { min_count },
            None => PodGroupPolicy::Basic,
        };
        Arc::new(PodGroup {
            composite,
            parent: parent.map(Arc::from),
            ..PodGroup::new(PodGroupKey::new("default", name), policy)
        })
    }

    fn ready(s: &PodGroupStates, leaf: &str) -> Option<bool> {
        match s
            .root_readiness(&PodGroupKey::new("default", leaf))
            .unwrap()
        {
            RootReadiness::Unresolved => None,
            RootReadiness::Root { ready, .. } => Some(ready),
        }
    }

    /// kube v1.38's hierarchy tracker (gangscheduling/hierarchy_tracker_test.go's cases in
    /// outline): a gang root of minGroupCount 2 over two gangs of minCount 2 is ready once
    /// both children have two members; a missing ancestor leaves the root unresolved; a
    /// cycle is an error.
    #[test]
    fn a_composite_root_is_ready_when_enough_children_are() {
        let s = PodGroupStates::default();
        s.set_pod_group(group("a", Some("root"), false, Some(2)));
        s.set_pod_group(group("b", Some("root"), false, Some(2)));
        assert_eq!(ready(&s, "a"), None, "the root is not known yet");
        s.set_composite(group("root", None, true, Some(2)));
        assert_eq!(ready(&s, "a"), Some(false));
        for (p, g) in [("a1", "a"), ("a2", "a"), ("b1", "b")] {
            s.add_pod(&pod(p, g, None));
        }
        assert_eq!(ready(&s, "b"), Some(false), "b has 1 of 2");
        s.add_pod(&pod("b2", "b", None));
        assert_eq!(ready(&s, "a"), Some(true));
        assert_eq!(ready(&s, "b"), Some(true));
        s.delete_pod(&pod("a2", "a", None));
        assert_eq!(ready(&s, "b"), Some(false), "the memo follows every change");
        // A basic root needs one ready child.
        s.set_composite(group("root", None, true, None));
        assert_eq!(ready(&s, "a"), Some(true));
        let mut leaves = s.leaves(&PodGroupKey::new("default", "root"), true);
        leaves.sort();
        assert_eq!(
            leaves,
            vec![
                PodGroupKey::new("default", "a"),
                PodGroupKey::new("default", "b")
            ]
        );
        // A cycle of composite parents.
        s.set_composite(group("root", Some("loop"), true, None));
        s.set_composite(group("loop", Some("root"), true, None));
        assert!(s.root_readiness(&PodGroupKey::new("default", "a")).is_err());
    }

    // Provenance: pkg/scheduler/framework/plugins/gangscheduling/hierarchy_tracker_test.go
    // (k8s.io/kubernetes@v1.38.0-beta.0), TestHierarchyTracker_FindRootGroupReadiness: the rows
    // that look a PodGroup up with the CompositePodGroup gate on (tidegate asks for a pod's
    // group only; with the gate off the store drops the parent link).
    #[test]
    fn find_root_group_readiness_table() {
        type G = (&'static str, Option<&'static str>, bool, Option<i32>);
        /// (name, groups, each pod's group, the group looked up, want root, want ready)
        type Row = (
            &'static str,
            Vec<G>,
            Vec<&'static str>,
            &'static str,
            &'static str,
            bool,
        );
        let root_cpg: G = ("root-cpg", None, true, Some(2));
        let mid_cpg: G = ("mid-cpg", Some("root-cpg"), true, Some(2));
        let pg1: G = ("pg1", Some("mid-cpg"), false, Some(2));
        let pg2: G = ("pg2", Some("mid-cpg"), false, Some(2));
        let pg3: G = ("pg3", Some("root-cpg"), false, Some(1));
        let standalone: G = ("standalone-pg", None, false, Some(2));
        let basic_root: G = ("basic-root-cpg", None, true, None);
        let basic_child: G = ("basic-child-pg", Some("basic-root-cpg"), false, None);
        let basic_standalone: G = ("basic-standalone-pg", None, false, None);
        let pg4: G = ("pg4", Some("basic-root-cpg"), false, Some(2));
        let rows: Vec<Row> = vec![
            (
                "Standalone PodGroup returns itself when CPG enabled",
                vec![standalone],
                vec!["standalone-pg", "standalone-pg"],
                "standalone-pg",
                "standalone-pg",
                true,
            ),
            (
                "Standalone PodGroup returns unready when below minCount",
                vec![standalone],
                vec!["standalone-pg"],
                "standalone-pg",
                "standalone-pg",
                false,
            ),
            (
                "Leaf PodGroup returns root CompositePodGroup when CPG enabled",
                vec![root_cpg, mid_cpg, pg1, pg2],
                vec!["pg1", "pg1", "pg2", "pg2"],
                "pg1",
                "root-cpg",
                false,
            ),
            (
                "Leaf PodGroup returns ready root CompositePodGroup when quorum met",
                vec![root_cpg, mid_cpg, pg1, pg2, pg3],
                vec!["pg1", "pg1", "pg2", "pg2", "pg3"],
                "pg1",
                "root-cpg",
                true,
            ),
            (
                "Basic standalone PodGroup is unready with 0 pods",
                vec![basic_standalone],
                vec![],
                "basic-standalone-pg",
                "basic-standalone-pg",
                false,
            ),
            (
                "Basic standalone PodGroup is ready with 1 pod",
                vec![basic_standalone],
                vec!["basic-standalone-pg"],
                "basic-standalone-pg",
                "basic-standalone-pg",
                true,
            ),
            (
                "Basic root CompositePodGroup is ready with 1 ready child",
                vec![basic_root, basic_child],
                vec!["basic-child-pg"],
                "basic-child-pg",
                "basic-root-cpg",
                true,
            ),
            (
                "Basic root CompositePodGroup is not ready with 0 ready children",
                vec![basic_root, pg4],
                vec!["pg4"],
                "pg4",
                "basic-root-cpg",
                false,
            ),
        ];
        for (name, groups, pods, lookup, want_root, want_ready) in rows {
            let s = PodGroupStates::default();
            for (g, parent, composite, min) in groups {
                let obj = group(g, parent, composite, min);
                if composite {
                    s.set_composite(obj);
                } else {
                    s.set_pod_group(obj);
                }
            }
            for (i, g) in pods.iter().enumerate() {
                s.add_pod(&pod(&format!("p{i}"), g, None));
            }
            match s
                .root_readiness(&PodGroupKey::new("default", lookup))
                .unwrap()
            {
                RootReadiness::Root { root, ready } => {
                    assert_eq!((&*root.key.name, ready), (want_root, want_ready), "{name}");
                }
                RootReadiness::Unresolved => panic!("{name}: unresolved"),
            }
        }
    }
}
