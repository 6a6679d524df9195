//! GangScheduling (KEP-4671): all-or-nothing scheduling of the pods of a PodGroup with a
//! `gang` policy. Source of behaviour:
//! `pkg/scheduler/framework/plugins/gangscheduling/gangscheduling.go` (v1.37.2); for a member
//! of a composite tree, v1.38.0-beta.0's `hierarchy_tracker.go` readiness and events.
//!
//! - **PreEnqueue**: a pod of a group waits (UnschedulableAndUnresolvable) until its PodGroup
//!   object exists and, for a gang, until the scheduler knows at least `minCount` of its
//!   pods (unscheduled, assumed or assigned).
//! - **PlacementFeasible** (the pod-group cycle): Unschedulable once `scheduled + remaining`
//!   cannot reach the quorum, Wait until `scheduled` does, then Success (a basic group's
//!   quorum is 1).
//! - **Permit**: a gang member waits (5 minutes at most) until `minCount` members are
//!   scheduled, and asks for the group's unscheduled members to be activated; the member
//!   that completes the quorum allows every assumed member waiting.
//! - **Events**: UnscheduledPod/Add and AssignedPod/Add of a member of the same group,
//!   PodGroup/Add of the group, PodGroup/Update lowering a gang's `minCount`.
//! - **Composite trees** (a group with `parentCompositePodGroupName`): PreEnqueue waits until
//!   every ancestor is known and the root is ready (its quorum of ready children, recursively;
//!   [`PodGroupStates::root_readiness`]); a pod or group added anywhere in the same tree, and
//!   CompositePodGroup/Add or an Update lowering `minGroupCount` of an ancestor, requeue.

use crate::api::{Pod, PodGroup, PodGroupKey, PodGroupPolicy, Sym};
use crate::framework::events::{
    ActionType, ClusterEvent, EventObject, EventResource, QueueingHint,
};
use crate::framework::interface::{
    EnqueueExtensions, PermitPlugin, PlacementFeasiblePlugin, Plugin, PreEnqueuePlugin,
};
use crate::framework::pod_group::{
    PlacementCycleState, PlacementProgress, PodGroupCycleState, PodGroupInfo,
};
use crate::framework::pod_group_state::{PodGroupStates, RootReadiness, group_of};
use crate::framework::status::{Code, Status};
use crate::framework::{CycleState, WaitingPods};
use std::sync::Arc;
use std::time::Duration;

pub(crate) const NAME: &str = "GangScheduling";

/// kube's `permitTimeoutDuration`.
const PERMIT_TIMEOUT: Duration = Duration::from_secs(5 * 60);

pub(crate) struct GangScheduling {
    groups: Arc<PodGroupStates>,
    waiting_pods: WaitingPods,
    /// A composite tree member's PreEnqueue status per PodGroup at one version of the states
    /// (every member of a group gets the same answer; a group's members are asked one after
    /// another each time its queued tree moves).
    hierarchy: parking_lot::Mutex<(u64, ahash::AHashMap<PodGroupKey, Status>)>,
}

impl GangScheduling {
    pub(crate) fn new(waiting_pods: WaitingPods) -> GangScheduling {
        GangScheduling {
            groups: waiting_pods.pod_groups().clone(),
            waiting_pods,
            hierarchy: parking_lot::Mutex::new((0, ahash::AHashMap::new())),
        }
    }
}

/// kube's `getMinCount`: a gang's `minCount`, 1 for a basic group.
fn min_count(pg: Option<&PodGroup>) -> usize {
    match pg.map(|g| g.policy) {
        Some(PodGroupPolicy::Gang { min_count }) => min_count.max(0) as usize,
        _ => 1,
    }
}

impl Plugin for GangScheduling {
    fn name(&self) -> &'static str {
        NAME
    }
    fn into_pre_enqueue(self: Arc<Self>) -> Option<Arc<dyn PreEnqueuePlugin>> {
        Some(self)
    }
    fn into_permit(self: Arc<Self>) -> Option<Arc<dyn PermitPlugin>> {
        Some(self)
    }
    fn into_placement_feasible(self: Arc<Self>) -> Option<Arc<dyn PlacementFeasiblePlugin>> {
        Some(self)
    }
    fn into_enqueue_extensions(self: Arc<Self>) -> Option<Arc<dyn EnqueueExtensions>> {
        Some(self)
    }
}

impl PreEnqueuePlugin for GangScheduling {
    fn pre_enqueue(&self, pod: &Pod) -> Status {
        let Some(key) = group_of(pod) else {
            return Status::success();
        };
        let Some(pg) = self.groups.pod_group(&key) else {
            return Status::new(
                Code::UnschedulableAndUnresolvable,
                format!(
                    "waiting for pods's pod group {:?} to appear in scheduling queue",
                    &*key.name
                ),
            );
        };
        if pg.parent.is_some() {
            // The version read first: a status kept under it was computed at that state or
            // a later one.
            let version = self.groups.version();
            if let Some(st) = {
                let m = self.hierarchy.lock();
                (m.0 == version).then(|| m.1.get(&key).cloned()).flatten()
            } {
                return st;
            }
            let st = self.pre_enqueue_hierarchy(&key);
            let mut m = self.hierarchy.lock();
            if m.0 != version {
                *m = (version, ahash::AHashMap::new());
            }
            m.1.insert(key, st.clone());
            return st;
        }
        let PodGroupPolicy::Gang { min_count } = pg.policy else {
            return Status::success();
        };
        if self.groups.all_pods_count(&key) < min_count.max(0) as usize {
            return Status::new(
                Code::UnschedulableAndUnresolvable,
                "waiting for minCount pods from a gang to appear in scheduling queue",
            );
        }
        Status::success()
    }
}

impl GangScheduling {
    /// kube v1.38's PreEnqueue for a member of a composite hierarchy: the root must be
    /// known and ready (at least its quorum of ready children, recursively).
    fn pre_enqueue_hierarchy(&self, key: &PodGroupKey) -> Status {
        match self.groups.root_readiness(key) {
            Err(e) => Status::error(e),
            Ok(RootReadiness::Unresolved) => Status::new(
                Code::UnschedulableAndUnresolvable,
                format!(
                    "pod group {:?} or one of its composite pod group ancestors has not been created yet",
                    &*key.name
                ),
            ),
            Ok(RootReadiness::Root { ready: true, .. }) => Status::success(),
            Ok(RootReadiness::Root { root, .. }) => {
                let kind = if root.composite {
                    "compositepodgroup"
                } else {
                    "podgroup"
                };
                let entity = format!("{kind}/{}/{}", root.key.namespace, root.key.name);
                let msg = if root.is_gang() {
                    format!("waiting for {entity} to meet its quorum")
                } else {
                    format!("waiting for {entity} tree to have at least one ready child group")
                };
                Status::new(Code::UnschedulableAndUnresolvable, msg)
            }
        }
    }

    /// Whether two PodGroups share a root (kube v1.38's `AreSameHierarchy`); a group
    /// without a parent is its own root.
    fn same_hierarchy(&self, a: &PodGroupKey, b: &PodGroupKey) -> bool {
        if a == b {
            return true;
        }
        let root = |k: &PodGroupKey| match self.groups.root_readiness(k) {
            Ok(RootReadiness::Root { root, .. }) => Some((root.key.clone(), root.composite)),
            _ => None,
        };
        matches!((root(a), root(b)), (Some(x), Some(y)) if x == y)
    }

    /// Whether the composite group `cpg` is an ancestor of PodGroup `leaf`.
    fn is_ancestor(&self, cpg: &PodGroupKey, leaf: &PodGroupKey) -> bool {
        let mut cur = self.groups.pod_group(leaf).and_then(|g| g.parent_key());
        let mut depth = 0;
        while let Some(k) = cur {
            if k == *cpg {
                return true;
            }
            depth += 1;
            if depth > 64 {
                return false;
            }
            cur = self.groups.composite(&k).and_then(|g| g.parent_key());
        }
        false
    }
}

impl PlacementFeasiblePlugin for GangScheduling {
    fn placement_feasible(
        &self,
        _group_state: &PodGroupCycleState,
        _state: &mut PlacementCycleState,
        pod_group: &PodGroupInfo,
        progress: PlacementProgress,
    ) -> Status {
        placement_feasible(min_count(pod_group.pod_group.as_deref()), progress)
    }
}

/// kube's `PlacementFeasible` on a quorum.
fn placement_feasible(min: usize, p: PlacementProgress) -> Status {
    if p.remaining + p.scheduled < min {
        return Status::new(
            Code::Unschedulable,
            format!(
                "minCount ({min}) cannot be satisfied: {} scheduled, {} remaining",
                p.scheduled, p.remaining
            ),
        );
    }
    if p.scheduled < min {
        return Status::new(
            Code::Wait,
            format!(
                "minCount ({min}) is not yet satisfied: {} scheduled, {} remaining",
                p.scheduled, p.remaining
            ),
        );
    }
    Status::success()
}

impl PermitPlugin for GangScheduling {
    fn permit(&self, state: &mut CycleState, pod: &Pod, _node: Sym) -> (Status, Duration) {
        let Some(key) = group_of(pod) else {
            return (Status::success(), Duration::ZERO);
        };
        let Some(st) = self.groups.get(&key) else {
            return (
                Status::error(format!(
                    "failed to get podGroup {}/{}: not found",
                    key.namespace, &*key.name
                )),
                Duration::ZERO,
            );
        };
        let Some(PodGroupPolicy::Gang { min_count }) = st.pod_group.as_ref().map(|g| g.policy)
        else {
            if st.pod_group.is_none() {
                return (
                    Status::error(format!(
                        "failed to get podGroup {}/{}: not found",
                        key.namespace, &*key.name
                    )),
                    Duration::ZERO,
                );
            }
            return (Status::success(), Duration::ZERO);
        };
        if st.scheduled_pods_count() < min_count.max(0) as usize {
            state
                .pods_to_activate
                .extend(st.unscheduled.iter().map(|p| p.key.clone()));
            return (
                Status::new(
                    Code::Wait,
                    "waiting for minCount pods from a gang to be scheduled",
                ),
                PERMIT_TIMEOUT,
            );
        }
        for p in &st.assumed {
            if let Some(w) = self.waiting_pods.get(&p.key) {
                w.allow(NAME);
            }
        }
        (Status::success(), Duration::ZERO)
    }
}

/// The group named by a pod's `spec.schedulingGroup`, in its namespace.
fn same_group(pod: &Pod, key: &PodGroupKey) -> bool {
    pod.namespace == key.namespace && pod.spec.scheduling_group.as_deref() == Some(&*key.name)
}

impl EnqueueExtensions for GangScheduling {
    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![
            ClusterEvent::new(EventResource::UnscheduledPod, ActionType::ADD),
            ClusterEvent::new(EventResource::AssignedPod, ActionType::ADD),
            ClusterEvent::new(EventResource::PodGroup, ActionType::ADD),
            ClusterEvent::new(EventResource::PodGroup, ActionType::UPDATE),
            ClusterEvent::new(EventResource::CompositePodGroup, ActionType::ADD),
            ClusterEvent::new(EventResource::CompositePodGroup, ActionType::UPDATE),
        ]
    }

    fn queueing_hint(
        &self,
        event: &ClusterEvent,
        pod: &Pod,
        old: &EventObject,
        new: &EventObject,
    ) -> Result<QueueingHint, String> {
        if pod.spec.scheduling_group.is_none() {
            return Ok(QueueingHint::QueueSkip);
        }
        let Some(mine) = group_of(pod) else {
            return Ok(QueueingHint::QueueSkip);
        };
        match event.resource {
            EventResource::CompositePodGroup => {
                tree_group_hint(event, old, new, "CompositePodGroup", |n| {
                    self.is_ancestor(&n.key, &mine)
                })
            }
            EventResource::PodGroup if n_has_parent(new) || self.has_parent(&mine) => {
                tree_group_hint(event, old, new, "PodGroup", |n| {
                    self.same_hierarchy(&n.key, &mine)
                })
            }
            EventResource::PodGroup if event.action.0 & ActionType::UPDATE.0 != 0 => {
                let (Some(o), Some(n)) = (pod_group(old), pod_group(new)) else {
                    return Err("GangScheduling: the event carries no PodGroup".into());
                };
                Ok(after_pod_group_updated(pod, o, n))
            }
            EventResource::PodGroup => {
                let Some(n) = pod_group(new) else {
                    return Err("GangScheduling: the event carries no PodGroup".into());
                };
                Ok(hint(same_group(pod, &n.key)))
            }
            _ => {
                let Some(added) = new.pod() else {
                    return Err("GangScheduling: the event carries no pod".into());
                };
                let Some(theirs) = group_of(added) else {
                    return Ok(QueueingHint::QueueSkip);
                };
                if same_group(pod, &theirs) {
                    return Ok(QueueingHint::Queue);
                }
                // A member of a sibling group may complete the tree's quorum.
                Ok(hint(
                    self.has_parent(&mine) && self.same_hierarchy(&theirs, &mine),
                ))
            }
        }
    }
}

impl GangScheduling {
    fn has_parent(&self, key: &PodGroupKey) -> bool {
        self.groups
            .pod_group(key)
            .is_some_and(|g| g.parent.is_some())
    }
}

fn n_has_parent(o: &EventObject) -> bool {
    pod_group(o).is_some_and(|g| g.parent.is_some())
}

fn hint(queue: bool) -> QueueingHint {
    if queue {
        QueueingHint::Queue
    } else {
        QueueingHint::QueueSkip
    }
}

fn pod_group(o: &EventObject) -> Option<&PodGroup> {
    match o {
        EventObject::Object(a) => a.downcast_ref::<PodGroup>(),
        _ => None,
    }
}

/// kube's `isSchedulableAfterPodGroupUpdated`: only a gang whose `minCount` went down.
fn after_pod_group_updated(pod: &Pod, old: &PodGroup, new: &PodGroup) -> QueueingHint {
    hint(same_group(pod, &new.key) && quorum_lowered(old, new))
}

/// Whether an update lowered a gang's quorum (`minCount`, or a composite's `minGroupCount`).
fn quorum_lowered(old: &PodGroup, new: &PodGroup) -> bool {
    matches!(
        (old.policy, new.policy),
        (PodGroupPolicy::Gang { min_count: o }, PodGroupPolicy::Gang { min_count: n }) if n < o
    )
}

/// kube v1.38's hints for a group event in a composite tree: nothing unless the group is
/// `related` to the waiting pod's (same tree, or an ancestor); an add queues, an update only
/// when it lowered the quorum.
fn tree_group_hint(
    event: &ClusterEvent,
    old: &EventObject,
    new: &EventObject,
    kind: &str,
    related: impl Fn(&PodGroup) -> bool,
) -> Result<QueueingHint, String> {
    let Some(n) = pod_group(new) else {
        return Err(format!("GangScheduling: the event carries no {kind}"));
    };
    if !related(n) {
        return Ok(QueueingHint::QueueSkip);
    }
    if event.action.0 & ActionType::UPDATE.0 != 0 {
        let Some(o) = pod_group(old) else {
            return Err(format!("GangScheduling: the event carries no {kind}"));
        };
        return Ok(hint(quorum_lowered(o, n)));
    }
    Ok(QueueingHint::Queue)
}

#[cfg(test)]
mod tests;
