//! Preemption victims under workload-aware preemption (kube v1.37.2
//! `pkg/scheduler/framework/preemption/types.go` and `util.go`): the unit preemption evicts
//! is a [`Victim`], one pod or, for a pod group with `spec.disruptionMode: all`
//! (PreemptionPodGroupDisruptionMode), every scheduled pod of the group across the cluster:
//! such a group is evicted whole or not at all.
//!
//! - **Priority** of a pod as a victim (kube's `GetPodPriority`): with a pod-group lister
//!   (GenericWorkload on) and the pod in a group that exists, the group's `spec.priority`;
//!   otherwise the pod's own.
//! - **Kind** (kube's `EntityKeyType`): a whole group is `PodGroup`; a single pod is `Pod`,
//!   except that a pod with `spec.schedulingGroup` (GenericWorkload on) is marked `PodGroup`
//!   even alone, as kube does for its metrics (and so for the ordering below).
//! - **Importance** (kube's `MoreImportantVictim`): higher priority; then a group kind before a
//!   pod; then more pods; then the earlier start. tidegate's pods carry no start time (no
//!   kubelet; kube falls back to "now" for every pod in scheduler_perf), so the last tie
//!   breaks on the first pod's key, as `default_preemption::more_important` does.
//! - **Budgets** (kube's `FilterVictimsWithPDBViolation`): a victim violates when any of its
//!   pods would take a PodDisruptionBudget below zero; each budget's allowance is spent pod by
//!   pod, and a pod stops charging budgets at the first one it takes below zero (kube returns
//!   there). The count of violating pods is the victim's violation count.
//! - **Cross-node victims** (kube's `getCrossNodesVictims`): the pods of the given nodes, each
//!   its own victim, except those of an `all` group, which make one victim of all the group's
//!   scheduled pods (kube's `PodGroupState.ScheduledPods`: assigned and assumed) wherever they
//!   run, once per group. The nodes a victim's pods run on are its affected nodes.
//!
//! CompositePodGroup hierarchies: a pod of a tree is a victim as its PodGroup makes it (kube
//! v1.38 walks up to the highest composite ancestor in `all` mode and evicts that whole
//! subtree as one victim; tidegate stops at the PodGroup, which is the same for trees whose
//! composite groups keep the default `single` mode, as every `cpg/` workload's do).

use crate::api::{DisruptionMode, Pod, PodDisruptionBudget, PodGroup, PodGroupKey, Sym};
use crate::framework::{NodeInfo, Snapshot};
use ahash::AHashMap;
use std::cmp::Ordering;
use std::sync::Arc;

/// What preemption reads of the pod groups (kube's `PodGroupLister` and the snapshot's
/// `PodGroupStates`).
pub(crate) trait PodGroupSource {
    /// The group `name` in `namespace`, if it exists.
    fn pod_group(&self, namespace: Sym, name: &str) -> Option<Arc<PodGroup>>;
    /// The group's scheduled (assigned or assumed) members as `snapshot` holds them (kube's
    /// `PodGroupState.ScheduledPods`).
    fn scheduled_members(&self, key: &PodGroupKey, snapshot: &Snapshot) -> Vec<Arc<Pod>>;
}

/// The scheduler's pod-group states: members found through the group's state, each taken
/// as the snapshot holds it on its node (a member the snapshot does not hold yet is left
/// out).
impl PodGroupSource for crate::framework::pod_group_state::PodGroupStates {
    fn pod_group(&self, namespace: Sym, name: &str) -> Option<Arc<PodGroup>> {
        self.pod_group_of(namespace, name)
    }
    fn scheduled_members(&self, key: &PodGroupKey, snapshot: &Snapshot) -> Vec<Arc<Pod>> {
        let Some(state) = self.get(key) else {
            return Vec::new();
        };
        state
            .scheduled_pods()
            .filter_map(|m| {
                let ni = snapshot.get(m.node_name?)?;
                ni.pods.iter().find(|p| p.key == m.key).cloned()
            })
            .collect()
    }
}

/// Groups read from a list, members found by scanning the snapshot (tests, tools).
#[cfg(test)]
pub(crate) struct ListedGroups(pub(crate) Vec<Arc<PodGroup>>);

#[cfg(test)]
impl PodGroupSource for ListedGroups {
    fn pod_group(&self, namespace: Sym, name: &str) -> Option<Arc<PodGroup>> {
        self.0
            .iter()
            .find(|g| g.key.namespace == namespace && &*g.key.name == name)
            .cloned()
    }
    fn scheduled_members(&self, key: &PodGroupKey, snapshot: &Snapshot) -> Vec<Arc<Pod>> {
        scheduled_members(snapshot, key)
    }
}

/// A [`PodGroupSource`] as preemption takes it.
pub(crate) type PodGroupLookup<'a> = &'a dyn PodGroupSource;

/// kube's `EntityKeyType` of a victim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum VictimKind {
    Pod,
    PodGroup,
}

/// kube's `DomainVictim`: an atomic unit of eviction. Its affected nodes (kube's
/// `affectedNodes`) are its pods' nodes, looked up in the snapshot where needed.
#[derive(Clone, Debug)]
pub(crate) struct Victim {
    pub(crate) pods: Vec<Arc<Pod>>,
    pub(crate) priority: i32,
    pub(crate) kind: VictimKind,
}

impl Victim {
    fn new(pods: Vec<Arc<Pod>>, priority: i32, kind: VictimKind) -> Victim {
        Victim {
            pods,
            priority,
            kind,
        }
    }

    /// kube's `IsGroup`.
    pub(crate) fn is_group(&self) -> bool {
        self.kind == VictimKind::PodGroup
    }
}

/// kube's `GetPodPriority` (no composite groups): the group's priority for a pod of an
/// existing group when groups are read at all, else the pod's.
pub(crate) fn pod_priority(pod: &Pod, groups: Option<PodGroupLookup<'_>>) -> i32 {
    match (&pod.spec.scheduling_group, groups) {
        (Some(name), Some(groups)) => groups
            .pod_group(pod.namespace, name)
            .map_or(pod.priority(), |g| g.priority),
        _ => pod.priority(),
    }
}

/// kube's `NewPodVictim`.
pub(crate) fn pod_victim(pod: &Arc<Pod>, groups: Option<PodGroupLookup<'_>>) -> Victim {
    let kind = if pod.spec.scheduling_group.is_some() && groups.is_some() {
        VictimKind::PodGroup
    } else {
        VictimKind::Pod
    };
    Victim::new(vec![pod.clone()], pod_priority(pod, groups), kind)
}

/// kube's `getHighestAllAncestor` (no composite groups): the pod's group when it exists and
/// its disruption mode is `all`.
fn all_group(pod: &Pod, groups: Option<PodGroupLookup<'_>>) -> Option<PodGroupKey> {
    let name = pod.spec.scheduling_group.as_deref()?;
    let g = groups?.pod_group(pod.namespace, name)?;
    (g.disruption_mode == DisruptionMode::All).then(|| g.key.clone())
}

/// The scheduled (assigned or assumed) pods of group `key` in `snapshot`, node by node
/// (kube's `PodGroupState.ScheduledPods`), by scanning every node.
#[cfg(test)]
pub(crate) fn scheduled_members(snapshot: &Snapshot, key: &PodGroupKey) -> Vec<Arc<Pod>> {
    snapshot
        .nodes
        .iter()
        .flat_map(|n| n.pods.iter())
        .filter(|p| {
            p.namespace == key.namespace && p.spec.scheduling_group.as_deref() == Some(&*key.name)
        })
        .cloned()
        .collect()
}

/// kube's `getCrossNodesVictims` over `nodes` (see the module doc); `snapshot` supplies the
/// members of `all` groups on other nodes.
pub(crate) fn cross_node_victims<'n>(
    nodes: impl IntoIterator<Item = &'n NodeInfo>,
    snapshot: &Snapshot,
    groups: Option<PodGroupLookup<'_>>,
) -> Vec<Victim> {
    let mut out = Vec::new();
    let mut seen_groups: AHashMap<PodGroupKey, ()> = AHashMap::new();
    for node in nodes {
        for pod in node.pods.iter() {
            let Some(key) = all_group(pod, groups) else {
                out.push(pod_victim(pod, groups));
                continue;
            };
            if seen_groups.insert(key.clone(), ()).is_some() {
                continue;
            }
            let members = groups.map_or_else(Vec::new, |g| g.scheduled_members(&key, snapshot));
            if members.is_empty() {
                out.push(pod_victim(pod, groups));
            } else {
                out.push(Victim::new(
                    members,
                    pod_priority(pod, groups),
                    VictimKind::PodGroup,
                ));
            }
        }
    }
    out
}

/// kube's `MoreImportantVictim` as an ordering: `Less` when `a` is more important (sorts
/// first). See the module doc for the start-time tie.
pub(crate) fn more_important_victim(a: &Victim, b: &Victim) -> Ordering {
    more_important_but_start(a, b).then_with(|| {
        a.pods
            .first()
            .map(|p| &p.key)
            .cmp(&b.pods.first().map(|p| &p.key))
    })
}

/// kube's `MoreImportantVictim` up to the start times: priority, kind, size.
pub(crate) fn more_important_but_start(a: &Victim, b: &Victim) -> Ordering {
    b.priority
        .cmp(&a.priority)
        .then_with(|| b.kind.cmp(&a.kind))
        .then_with(|| b.pods.len().cmp(&a.pods.len()))
}

/// kube's `FilterVictimsWithPDBViolation`: `victims` (in their order) split into those with a
/// pod that would violate a budget, each with its count of violating pods, and the others.
pub(crate) fn split_victims_by_pdb_violation(
    victims: Vec<Victim>,
    pdbs: &[Arc<PodDisruptionBudget>],
) -> (Vec<(Victim, usize)>, Vec<Victim>) {
    let mut allowed: Vec<i32> = pdbs.iter().map(|p| p.disruptions_allowed).collect();
    let mut violates = |pod: &Pod| {
        for (i, pdb) in pdbs.iter().enumerate() {
            if pdb.charges(pod) {
                allowed[i] -= 1;
                if allowed[i] < 0 {
                    return true;
                }
            }
        }
        false
    };
    let (mut violating, mut non_violating) = (Vec::new(), Vec::new());
    for v in victims {
        let n = v.pods.iter().filter(|p| violates(p)).count();
        if n > 0 {
            violating.push((v, n));
        } else {
            non_violating.push(v);
        }
    }
    (violating, non_violating)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{DisruptionMode, PodGroupPolicy, PodSpecInfo};

    fn pod(name: &str, node: &str, priority: i32, group: Option<&str>) -> Arc<Pod> {
        let spec = PodSpecInfo {
            priority,
            scheduling_group: group.map(Arc::from),
            ..PodSpecInfo::default()
        };
        let mut p = Pod::new("default", name, Arc::new(spec));
        p.node_name = Some(Sym::new(node));
        Arc::new(p)
    }

    fn group(name: &str, priority: i32, mode: DisruptionMode) -> Arc<PodGroup> {
        Arc::new(PodGroup {
            priority,
            disruption_mode: mode,
            ..PodGroup::new(PodGroupKey::new("default", name), PodGroupPolicy::Basic)
        })
    }

    fn victim(pods: &[&Arc<Pod>], priority: i32, kind: VictimKind) -> Victim {
        Victim::new(pods.iter().map(|p| (*p).clone()).collect(), priority, kind)
    }

    // After TestMoreImportantVictim (pkg/scheduler/framework/preemption/util_test.go, v1.37.2):
    // priority, then kind, then size; start times are not modelled (module doc).
    #[test]
    fn more_important_victim_orders_as_kube() {
        let a = pod("a", "n", 1, None);
        let b = pod("b", "n", 1, Some("g"));
        let c = pod("c", "n", 1, Some("g"));
        let hi = victim(&[&a], 10, VictimKind::Pod);
        let lo_group = victim(&[&b, &c], 1, VictimKind::PodGroup);
        assert_eq!(more_important_victim(&hi, &lo_group), Ordering::Less);
        let single = victim(&[&a], 1, VictimKind::Pod);
        let grouped = victim(&[&b], 1, VictimKind::PodGroup);
        assert_eq!(more_important_victim(&grouped, &single), Ordering::Less);
        let big = victim(&[&b, &c], 1, VictimKind::PodGroup);
        assert_eq!(more_important_victim(&big, &grouped), Ordering::Less);
    }

    #[test]
    fn cross_node_victims_group_all_mode_pods_cluster_wide() {
        let lookup = ListedGroups(vec![
            group("all", 5, DisruptionMode::All),
            group("single", 7, DisruptionMode::Single),
        ]);
        let mk = |name: &str, pods: &[Arc<Pod>]| {
            let mut ni = NodeInfo::new(Arc::new(crate::api::Node::named(name)));
            for p in pods {
                ni.add_pod(p);
            }
            Arc::new(ni)
        };
        let a1 = pod("a1", "n1", 0, Some("all"));
        let a2 = pod("a2", "n2", 0, Some("all"));
        let s1 = pod("s1", "n1", 0, Some("single"));
        let m1 = pod("m1", "n1", 3, Some("missing"));
        let p1 = pod("p1", "n1", 2, None);
        let n1 = mk("n1", &[a1.clone(), s1.clone(), m1.clone(), p1.clone()]);
        let n2 = mk("n2", std::slice::from_ref(&a2));
        let mut snap = Snapshot::default();
        for (i, n) in [&n1, &n2].into_iter().enumerate() {
            snap.index.insert(n.name(), i);
            snap.nodes.push(n.clone());
        }
        let vs = cross_node_victims([&*n1], &snap, Some(&lookup));
        let got: Vec<(Vec<String>, i32, VictimKind)> = vs
            .iter()
            .map(|v| {
                (
                    v.pods.iter().map(|p| p.name.to_string()).collect(),
                    v.priority,
                    v.kind,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (vec!["a1".into(), "a2".into()], 5, VictimKind::PodGroup),
                (vec!["s1".into()], 7, VictimKind::PodGroup),
                (vec!["m1".into()], 3, VictimKind::PodGroup),
                (vec!["p1".into()], 2, VictimKind::Pod),
            ]
        );
        // Without a lister (GenericWorkload off) every pod is its own victim at its priority.
        let plain = cross_node_victims([&*n1], &snap, None);
        assert!(
            plain
                .iter()
                .all(|v| v.kind == VictimKind::Pod && v.pods.len() == 1)
        );
        assert_eq!(plain[0].priority, 0);
    }
}
