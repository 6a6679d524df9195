//! What a PodGroupPostFilter plugin sees of the scheduler (kube's `Handle` with its
//! `MutableSnapshotSharedLister` and the group's `PodGroupSchedulingFunc`).
//!
//! # Protocol
//!
//! The handle lives for one PodGroupPostFilter run on the scheduling thread. Its snapshot is
//! a copy of the cycle's, refreshed after every change. Between `start_mutations` and
//! `end_mutations` a plugin may take pods off nodes and put pods on them; tidegate applies
//! these to the scheduler's cache (a removal forgets the pod's place, an addition assumes
//! it) so that the rerun (`schedule_pod_group`, the whole group algorithm, itself reverted)
//! sees them exactly as the cycle sees the cluster, and `end_mutations` (or dropping the
//! handle) undoes them, last first. kube changes only its snapshot; the difference shows only
//! if an informer event about one of those pods arrives during the run (the undo restores
//! the pod as it was).
//!
//! The differential oracle's handle ([`GroupHandle::with_assignments`]) has no queued group:
//! its rerun is another scheduler's, replayed: each member, in the given order, gets its
//! PreFilter state on the snapshot as it stands (earlier members assumed), must pass Filter
//! on its given node and is assumed there; then the members are taken out again.

use crate::api::{Pod, PodKey, Sym};
use crate::framework::interface::{
    ActiveFilters, FilterPlugin, Handle, PodGroupHandle, PodNominator,
};
use crate::framework::node_info::NodeTraits;
use crate::framework::pod_group::{PodGroupAssignments, ProposedAssignment, QueuedPodGroupInfo};
use crate::framework::runtime::CycleHandle;
use crate::framework::{CycleState, NodeInfo, Snapshot, Status, WaitingPods};
use std::sync::Arc;

use super::Scheduler;

enum Rerun<'a> {
    Group(&'a QueuedPodGroupInfo),
    Fixed(Vec<(Arc<Pod>, Sym)>),
}

enum Undo {
    /// A bound pod taken off its node.
    Removed(Arc<Pod>),
    /// A pod put on a node (assumed).
    Added(PodKey),
}

pub(super) struct GroupHandle<'a> {
    sched: &'a Scheduler,
    fi: usize,
    /// The group rerun by `schedule_pod_group`, or the members with their nodes.
    rerun: Rerun<'a>,
    snap: Snapshot,
    undo: Vec<Undo>,
    mutating: bool,
}

impl<'a> GroupHandle<'a> {
    pub(super) fn new(sched: &'a Scheduler, fi: usize, group: &'a QueuedPodGroupInfo) -> Self {
        Self::with_rerun(sched, fi, Rerun::Group(group))
    }

    /// The oracle's handle: the rerun places `members` on their nodes, in order.
    pub(super) fn with_assignments(
        sched: &'a Scheduler,
        fi: usize,
        members: Vec<(Arc<Pod>, Sym)>,
    ) -> Self {
        Self::with_rerun(sched, fi, Rerun::Fixed(members))
    }

    fn with_rerun(sched: &'a Scheduler, fi: usize, rerun: Rerun<'a>) -> Self {
        let mut h = GroupHandle {
            sched,
            fi,
            rerun,
            snap: Snapshot::default(),
            undo: Vec::new(),
            mutating: false,
        };
        h.refresh();
        h
    }

    fn refresh(&mut self) {
        let mut snap = self.sched.snapshot.lock();
        self.sched.cache.update_snapshot(&mut snap);
        self.snap = snap.clone();
    }

    fn cycle_handle(&self) -> CycleHandle<'_> {
        CycleHandle {
            framework: &self.sched.frameworks[self.fi],
            snapshot: &self.snap,
            nominator: &self.sched.queue.nominator,
            waiting_pods: &self.sched.waiting_pods,
        }
    }

    fn undo_all(&mut self) {
        for u in std::mem::take(&mut self.undo).into_iter().rev() {
            match u {
                Undo::Removed(p) => {
                    self.sched.cache.add_pod(p.clone());
                    // The cache records only assumptions in the pod-group states: a bound
                    // member taken off, put back (assumed) and forgotten again is assigned.
                    self.sched.cache.pod_groups().add_pod(&p);
                }
                Undo::Added(k) => self.sched.cache.forget_pod(&k),
            }
        }
    }
}

impl Drop for GroupHandle<'_> {
    fn drop(&mut self) {
        self.undo_all();
    }
}

impl Handle for GroupHandle<'_> {
    fn snapshot(&self) -> &Snapshot {
        &self.snap
    }
    fn nominator(&self) -> &dyn PodNominator {
        &self.sched.queue.nominator
    }
    fn waiting_pods(&self) -> &WaitingPods {
        &self.sched.waiting_pods
    }
    fn active_filter_plugins(&self, state: &CycleState, pod: &Pod) -> ActiveFilters<'_> {
        self.sched.frameworks[self.fi].active_filter_plugins(state, pod)
    }
    fn run_filter_plugins_with_nominated_pods(
        &self,
        filters: &[(&dyn FilterPlugin, NodeTraits)],
        state: &CycleState,
        pod: &Pod,
        node: &NodeInfo,
        nominated: &[Arc<Pod>],
    ) -> Status {
        self.cycle_handle()
            .run_filter_plugins_with_nominated_pods(filters, state, pod, node, nominated)
    }
    fn run_pre_filter_extension_add_pod(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        to_add: &Pod,
        node: &NodeInfo,
    ) -> Status {
        self.cycle_handle()
            .run_pre_filter_extension_add_pod(state, pod, to_add, node)
    }
    fn run_pre_filter_extension_remove_pod(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        to_remove: &Pod,
        node: &NodeInfo,
    ) -> Status {
        self.cycle_handle()
            .run_pre_filter_extension_remove_pod(state, pod, to_remove, node)
    }
}

impl PodGroupHandle for GroupHandle<'_> {
    fn start_mutations(&mut self) {
        self.mutating = true;
    }

    fn end_mutations(&mut self) {
        self.mutating = false;
        self.undo_all();
        self.refresh();
    }

    fn add_pod_to_snapshot(&mut self, pod: &Arc<Pod>, node: Sym) -> Result<(), String> {
        if !self.mutating {
            return Err("AddPod called outside a mutation session".into());
        }
        let mut p = (**pod).clone();
        p.node_name = Some(node);
        if !self.sched.cache.assume_pod(&Arc::new(p), node) {
            return Err(format!("pod {} could not be added to node {node}", pod.key));
        }
        self.undo.push(Undo::Added(pod.key.clone()));
        self.refresh();
        Ok(())
    }

    fn remove_pod_from_snapshot(&mut self, pod: &Pod, node: Sym) -> Result<(), String> {
        if !self.mutating {
            return Err("RemovePod called outside a mutation session".into());
        }
        let Some(ni) = self.snap.get(node) else {
            return Err(format!("node {node} not found"));
        };
        let Some(held) = ni.pods.iter().find(|p| p.key == pod.key).cloned() else {
            return Err(format!("pod {} not found on node {node}", pod.key));
        };
        // A pod this session put on a node (a member the reprieve assumes and takes out
        // again): taking it off undoes that addition, so nothing is left to undo. Recording
        // it as Removed would have the undo add it to the cache as a bound pod that no event
        // ever takes away (it held the node's resources, and the group never fitted again).
        if let Some(i) = self
            .undo
            .iter()
            .rposition(|u| matches!(u, Undo::Added(k) if *k == pod.key))
        {
            self.sched.cache.forget_pod(&pod.key);
            self.undo.remove(i);
            self.refresh();
            return Ok(());
        }
        if self.sched.cache.is_assumed(&pod.key) {
            self.sched.cache.forget_pod(&pod.key);
        } else {
            self.sched.cache.remove_pod(&pod.key);
        }
        self.undo.push(Undo::Removed(held));
        self.refresh();
        Ok(())
    }

    fn schedule_pod_group(&mut self) -> (PodGroupAssignments, Status) {
        let out = match &self.rerun {
            Rerun::Group(g) => self.sched.rerun_pod_group(self.fi, g),
            Rerun::Fixed(members) => {
                let members = members.clone();
                self.replay_assignments(&members)
            }
        };
        self.refresh();
        out
    }
}

impl GroupHandle<'_> {
    /// The oracle's rerun (module doc): an Error status names the member that does not fit.
    fn replay_assignments(&mut self, members: &[(Arc<Pod>, Sym)]) -> (PodGroupAssignments, Status) {
        let fwk = &self.sched.frameworks[self.fi];
        let mut out = PodGroupAssignments {
            placement: None,
            proposed_assignments: Vec::with_capacity(members.len()),
        };
        let mut status = Status::success();
        for (pod, node) in members {
            let mut state = CycleState::new();
            let (_, st, _) = fwk.run_pre_filter(&mut state, pod, &self.snap);
            let st = if !st.is_success() {
                st
            } else {
                match self.snap.get(*node).cloned() {
                    None => Status::error(format!("node {node} not found")),
                    Some(ni) => {
                        let filters = fwk.active_filter_plugins(&state, pod);
                        let noms = self.sched.queue.nominator.nominated_at_least_on(*node, pod);
                        self.cycle_handle().run_filter_plugins_with_nominated_pods(
                            &filters, &state, pod, &ni, &noms,
                        )
                    }
                }
            };
            if !st.is_success() {
                status = Status::error(format!(
                    "{} does not fit on {node} with every potential victim gone: {}",
                    pod.key,
                    st.message()
                ));
                break;
            }
            if let Err(e) = self.add_pod_to_snapshot(pod, *node) {
                status = Status::error(e);
                break;
            }
            out.proposed_assignments.push(ProposedAssignment {
                pod: pod.clone(),
                node_name: *node,
                cycle_state: Arc::new(state),
            });
        }
        for a in out.proposed_assignments.iter().rev() {
            if let Err(e) = self.remove_pod_from_snapshot(&a.pod, a.node_name) {
                status = Status::error(e);
            }
        }
        (out, status)
    }
}
