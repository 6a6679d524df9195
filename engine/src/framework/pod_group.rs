//! Pod-group types of the framework (KEP-4671 workload-aware scheduling), as kube v1.37.2
//! defines them in `k8s.io/kube-scheduler/framework` (`types.go`, `interface.go`,
//! `cycle_state.go`) and `pkg/scheduler/framework` (`types.go`: `QueuedPodGroupInfo`,
//! `interface.go`: `PlacementProgress`).
//!
//! # Protocol
//!
//! A pod group is scheduled as one entity. The queue aggregates the group's unscheduled
//! member pods into a [`QueuedPodGroupInfo`] (one [`QueuedPodInfo`] per member, in kube's
//! member order, [`member_order`]), which is popped as one and handed to the pod-group cycle
//! (`scheduler/schedule_one_podgroup.rs`). That cycle:
//!
//! 1. asks the PlacementGenerate plugin (at most one per profile) for candidate
//!    [`Placement`]s, each a subset of the nodes (no plugin: one placement of every node);
//! 2. for each placement, runs the default algorithm restricted to its nodes: every member
//!    through the usual PreFilter/Filter/Score with assume and Reserve, and after each one
//!    the PlacementFeasible plugins with the [`PlacementProgress`] so far (Success, Wait, or
//!    Unschedulable to give the placement up); the in-memory changes are reverted after each
//!    placement;
//! 3. scores the feasible placements' [`PodGroupAssignments`] with the PlacementScore plugins
//!    (each normalised by its [`PlacementScorePlugin::normalize_placement_score`], weighted)
//!    and keeps the best;
//! 4. on Unschedulable, runs the PodGroupPostFilter plugins with a closure that reruns the
//!    whole algorithm ([`PodGroupSchedulingFunc`]);
//! 5. submits: either every assigned member goes to its binding cycle, or every member goes
//!    back to the queue through the failure handler (nothing of a failed gang binds).
//!
//! Cycle states: one [`PodGroupCycleState`] per group cycle, one [`PlacementCycleState`] per
//! placement tried; each member pod keeps its own [`CycleState`] (marked with
//! `CycleState::pod_group_cycle`), which its [`ProposedAssignment`] carries to binding.

use super::cycle_state::CycleState;
use super::node_info::NodeInfo;
use super::status::Status;
use super::types::{Nominating, QueuedPodInfo};
use crate::api::{Pod, PodGroup, PodGroupKey, PodKey, Sym};
use crate::clock::Time;
use std::cmp::Ordering;
use std::sync::Arc;

/// kube's `PodGroupCycleState`: data pod-group plugins share across one group's cycle
/// (PlacementGenerate, PlacementScore's normalisation, PodGroupPostFilter). A plain
/// [`CycleState`].
pub type PodGroupCycleState = CycleState;

/// kube's `PlacementCycleState`: data scoped to one placement candidate (PlacementFeasible,
/// ScorePlacement). A plain [`CycleState`]; the group's state is handed beside it.
pub type PlacementCycleState = CycleState;

/// kube's `PodGroupInfo`: the group object with the unscheduled members considered in this
/// cycle, in [`member_order`]. A CompositePodGroup (kube v1.38's CompositePodGroup gate) has
/// `children` (PodGroups and composite groups, ordered as kube's `sortChildren`: creation
/// time, name, kind) and no members of its own: its pods are its leaves'.
#[derive(Clone, Debug)]
pub struct PodGroupInfo {
    pub key: PodGroupKey,
    /// The PodGroup (or CompositePodGroup) object; `None` when it is not (or no longer) known.
    pub pod_group: Option<Arc<PodGroup>>,
    /// kube's `GetUnscheduledPods` (a PodGroup's; empty for a composite group).
    pub unscheduled_pods: Vec<Arc<Pod>>,
    pub children: Vec<PodGroupInfo>,
}

impl PodGroupInfo {
    pub fn new(key: PodGroupKey, pod_group: Option<Arc<PodGroup>>) -> PodGroupInfo {
        PodGroupInfo {
            key,
            pod_group,
            unscheduled_pods: Vec::new(),
            children: Vec::new(),
        }
    }

    /// A composite group's node with its children, sorted as kube's `NewPodGroupInfo`.
    pub fn with_children(
        key: PodGroupKey,
        pod_group: Option<Arc<PodGroup>>,
        mut children: Vec<PodGroupInfo>,
    ) -> PodGroupInfo {
        children.sort_by(|a, b| {
            let created = |g: &PodGroupInfo| g.pod_group.as_ref().map_or(0, |p| p.created);
            created(a)
                .cmp(&created(b))
                .then_with(|| a.key.name.cmp(&b.key.name))
                .then_with(|| a.is_composite().cmp(&b.is_composite()))
        });
        PodGroupInfo {
            key,
            pod_group,
            unscheduled_pods: Vec::new(),
            children,
        }
    }

    /// Whether this is a CompositePodGroup's node.
    pub fn is_composite(&self) -> bool {
        self.pod_group.as_ref().is_some_and(|g| g.composite) || !self.children.is_empty()
    }

    /// The PodGroup `key` in this tree (this node itself when it is that PodGroup).
    pub fn leaf(&self, key: &PodGroupKey) -> Option<&PodGroupInfo> {
        if !self.is_composite() {
            return (self.key == *key).then_some(self);
        }
        self.children.iter().find_map(|c| c.leaf(key))
    }

    fn leaf_mut(&mut self, key: &PodGroupKey) -> Option<&mut PodGroupInfo> {
        if !self.is_composite() {
            return (self.key == *key).then_some(self);
        }
        self.children.iter_mut().find_map(|c| c.leaf_mut(key))
    }

    /// The PodGroups of this tree, depth first in child order.
    pub fn leaves(&self) -> Vec<&PodGroupInfo> {
        let mut out = Vec::new();
        self.collect_leaves(&mut out);
        out
    }

    fn collect_leaves<'a>(&'a self, out: &mut Vec<&'a PodGroupInfo>) {
        if self.is_composite() {
            for c in &self.children {
                c.collect_leaves(out);
            }
        } else {
            out.push(self);
        }
    }

    /// kube's `GetAllUnscheduledPods`: a PodGroup's, or every leaf's of a composite group.
    pub fn all_unscheduled_pods(&self) -> Vec<Arc<Pod>> {
        self.leaves()
            .into_iter()
            .flat_map(|l| l.unscheduled_pods.iter().cloned())
            .collect()
    }

    pub fn name(&self) -> &str {
        &self.key.name
    }

    pub fn namespace(&self) -> Sym {
        self.key.namespace
    }
}

/// kube's `PodGroupMemberPodsOrderingFunc`: priority (higher first), attempts (more first:
/// older pods, since timestamps are renewed after each cycle), timestamp (earlier first),
/// then pod name.
pub fn member_order(a: &QueuedPodInfo, b: &QueuedPodInfo) -> Ordering {
    b.pod
        .priority()
        .cmp(&a.pod.priority())
        .then_with(|| b.attempts.cmp(&a.attempts))
        .then_with(|| a.timestamp.cmp(&b.timestamp))
        .then_with(|| a.pod.name.cmp(&b.pod.name))
}

/// kube's `QueuedPodGroupInfo`: a group as the scheduling queue holds it, with the queueing
/// bookkeeping of the group entity (kube's `QueueingParams`) and its queued members.
#[derive(Clone, Debug)]
pub struct QueuedPodGroupInfo {
    pub info: PodGroupInfo,
    /// The queued members, in [`member_order`]; `info.unscheduled_pods` holds the same pods
    /// in the same order.
    pub pods: Vec<QueuedPodInfo>,
    pub timestamp: Time,
    pub attempts: u32,
    pub unschedulable_count: u32,
    pub consecutive_errors_count: u32,
    pub initial_attempt_timestamp: Option<Time>,
    pub unschedulable_plugins: Vec<&'static str>,
    pub pending_plugins: Vec<&'static str>,
    /// The PreEnqueue plugin that keeps the group gated, if any.
    pub gating_plugin: Option<&'static str>,
    /// When the group's backoff ends (the members share it).
    pub backoff_expiration: Option<Time>,
}

impl QueuedPodGroupInfo {
    pub fn new(info: PodGroupInfo, now: Time) -> QueuedPodGroupInfo {
        QueuedPodGroupInfo {
            info,
            pods: Vec::new(),
            timestamp: now,
            attempts: 0,
            unschedulable_count: 0,
            consecutive_errors_count: 0,
            initial_attempt_timestamp: None,
            unschedulable_plugins: Vec::new(),
            pending_plugins: Vec::new(),
            gating_plugin: None,
            backoff_expiration: None,
        }
    }

    pub fn key(&self) -> &PodGroupKey {
        &self.info.key
    }

    /// kube's `GetPriority`: the group's `spec.priority` (0 without the object).
    pub fn priority(&self) -> i32 {
        self.info.pod_group.as_ref().map_or(0, |g| g.priority)
    }

    /// kube's `Size`: the number of queued members.
    pub fn size(&self) -> usize {
        self.pods.len()
    }

    pub fn gated(&self) -> bool {
        self.gating_plugin.is_some()
    }

    /// kube's `AddPod`: inserts a member in [`member_order`] (a pod of a group outside this
    /// tree is ignored; one already there is replaced). In a composite tree the members of
    /// all leaves are in one list (kube keeps one per leaf and visits the leaves in no set
    /// order), each leaf's `unscheduled_pods` in member order too.
    pub fn add_pod(&mut self, p: QueuedPodInfo) {
        let Some(group) = self.group_of_member(&p.pod) else {
            return;
        };
        self.remove_pod(&p.pod.key);
        let i = self
            .pods
            .partition_point(|q| member_order(q, &p) == Ordering::Less);
        if self.info.is_composite() {
            let before = self.pods[..i]
                .iter()
                .filter(|q| q.pod.spec.scheduling_group == p.pod.spec.scheduling_group)
                .count();
            if let Some(l) = self.info.leaf_mut(&group) {
                l.unscheduled_pods.insert(before, p.pod.clone());
            }
        } else {
            self.info.unscheduled_pods.insert(i, p.pod.clone());
        }
        self.pods.insert(i, p);
    }

    /// The leaf of this tree `pod` belongs to.
    fn group_of_member(&self, pod: &Pod) -> Option<PodGroupKey> {
        if pod.namespace != self.info.key.namespace {
            return None;
        }
        let name = pod.spec.scheduling_group.as_ref()?;
        let key = PodGroupKey {
            namespace: pod.namespace,
            name: name.clone(),
        };
        self.info.leaf(&key).map(|_| key)
    }

    /// kube's `RemovePod`: takes a member out, if queued.
    pub fn remove_pod(&mut self, key: &PodKey) -> Option<QueuedPodInfo> {
        let i = self.pods.iter().position(|q| q.pod.key == *key)?;
        let q = self.pods.remove(i);
        if self.info.is_composite() {
            if let Some(group) = self.group_of_member(&q.pod)
                && let Some(l) = self.info.leaf_mut(&group)
            {
                l.unscheduled_pods.retain(|p| p.key != *key);
            }
        } else {
            self.info.unscheduled_pods.remove(i);
        }
        Some(q)
    }

    /// kube's `Update`: replaces a queued member's pod, keeping its place and bookkeeping.
    pub fn update_pod(&mut self, pod: Arc<Pod>) -> bool {
        match self.pods.iter().position(|q| q.pod.key == pod.key) {
            Some(i) => {
                if self.info.is_composite() {
                    if let Some(group) = self.group_of_member(&pod)
                        && let Some(l) = self.info.leaf_mut(&group)
                        && let Some(x) = l.unscheduled_pods.iter_mut().find(|p| p.key == pod.key)
                    {
                        *x = pod.clone();
                    }
                } else {
                    self.info.unscheduled_pods[i] = pod.clone();
                }
                self.pods[i].pod = pod;
                true
            }
            None => false,
        }
    }

    /// Sets the unscheduled pods of leaf `key` (of this group itself when it is no tree).
    pub fn set_leaf_pods(&mut self, key: &PodGroupKey, pods: Vec<Arc<Pod>>) {
        if let Some(l) = self.info.leaf_mut(key) {
            l.unscheduled_pods = pods;
        }
    }

    /// kube's `PodInfosForGroup`: the queued members of the PodGroup `key`, in member order.
    pub fn pods_for_group<'a>(
        &'a self,
        key: &'a PodGroupKey,
    ) -> impl Iterator<Item = &'a QueuedPodInfo> + 'a {
        self.pods.iter().filter(move |q| {
            q.pod.namespace == key.namespace
                && q.pod.spec.scheduling_group.as_deref() == Some(&*key.name)
        })
    }

    /// kube's `IncAttempts`: the group's and every member's.
    pub fn inc_attempts(&mut self) {
        self.attempts += 1;
        for p in &mut self.pods {
            p.attempts += 1;
        }
    }

    /// kube's `SetInitialAttemptTimestamp`: the group's once, and every member's that has
    /// none yet (members may join after the first attempt).
    pub fn set_initial_attempt_timestamp(&mut self, t: Time) {
        self.initial_attempt_timestamp.get_or_insert(t);
        for p in &mut self.pods {
            p.initial_attempt_timestamp.get_or_insert(t);
        }
    }

    pub(crate) fn rejectors(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.unschedulable_plugins
            .iter()
            .chain(self.pending_plugins.iter())
            .copied()
    }
}

/// kube's `Placement`: a named set of nodes the group may be scheduled on.
#[derive(Clone, Debug)]
pub struct Placement {
    /// Identifies the placement (the generating plugin's choice; diagnostics only).
    pub name: String,
    pub nodes: Vec<Arc<NodeInfo>>,
}

/// kube's `GeneratePlacementsResult`.
#[derive(Clone, Debug, Default)]
pub struct GeneratePlacementsResult {
    /// The candidates (they may overlap); empty: no valid placement.
    pub placements: Vec<Arc<Placement>>,
}

/// kube's `ProposedAssignment`: one member with the node the cycle proposes for it.
#[derive(Clone)]
pub struct ProposedAssignment {
    pub pod: Arc<Pod>,
    pub node_name: Sym,
    /// The pod's cycle state from the pod-group cycle.
    pub cycle_state: Arc<CycleState>,
}

/// kube's `PodGroupAssignments`: a placement with the proposed assignments of its members.
#[derive(Clone)]
pub struct PodGroupAssignments {
    /// `None` for the rerun that PodGroupPostFilter asks for (kube leaves it nil).
    pub placement: Option<Arc<Placement>>,
    pub proposed_assignments: Vec<ProposedAssignment>,
}

/// kube's `PlacementProgress`: what PlacementFeasible plugins read after each member.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlacementProgress {
    /// Members not evaluated yet in this cycle (for a group: its unscheduled pods left).
    pub remaining: usize,
    /// Members scheduled so far for this group and placement: assigned or assumed before
    /// the cycle, plus those assumed in it.
    pub scheduled: usize,
}

/// kube's `PlacementScore`: one plugin's score for one placement.
#[derive(Clone, Debug)]
pub struct PlacementScore {
    pub placement: Arc<Placement>,
    pub score: i64,
}

/// kube's `PluginScore` of a placement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacementPluginScore {
    pub name: &'static str,
    pub score: i64,
}

/// kube's `PlacementPluginScores`: every plugin's weighted score for one placement.
#[derive(Clone, Debug)]
pub struct PlacementPluginScores {
    pub placement: Option<Arc<Placement>>,
    pub scores: Vec<PlacementPluginScore>,
    pub total_score: i64,
}

/// kube's `PodGroupPostFilterResult`: nominations for members (only those with one).
#[derive(Clone, Debug, Default)]
pub struct PodGroupPostFilterResult {
    pub nominating_infos: Vec<(PodKey, Nominating)>,
}

/// kube's `PodGroupSchedulingFunc`: reruns the group's scheduling algorithm on the cycle's
/// snapshot as it stands (a PodGroupPostFilter plugin may have removed victims from it) and
/// returns the assignments with the group's status.
pub type PodGroupSchedulingFunc<'a> = dyn FnMut() -> (PodGroupAssignments, Status) + 'a;
