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

use crate::api::{Pod, PodKey, Sym};
use crate::framework::interface::{
    ActiveFilters, FilterPlugin, Handle, PodGroupHandle, PodNominator,
};
use crate::framework::node_info::NodeTraits;
use crate::framework::pod_group::{PodGroupAssignments, QueuedPodGroupInfo};
use crate::framework::runtime::CycleHandle;
use crate::framework::{CycleState, NodeInfo, Snapshot, Status, WaitingPods};
use std::sync::Arc;

use super::Scheduler;

enum Undo {
    /// A bound pod taken off its node.
    Removed(Arc<Pod>),
    /// A pod put on a node (assumed).
    Added(PodKey),
}

pub(super) struct GroupHandle<'a> {
    sched: &'a Scheduler,
    fi: usize,
    group: &'a QueuedPodGroupInfo,
    snap: Snapshot,
    undo: Vec<Undo>,
    mutating: bool,
}

impl<'a> GroupHandle<'a> {
    pub(super) fn new(sched: &'a Scheduler, fi: usize, group: &'a QueuedPodGroupInfo) -> Self {
        let mut h = GroupHandle {
            sched,
            fi,
            group,
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
        let out = self.sched.rerun_pod_group(self.fi, self.group);
        self.refresh();
        out
    }
}
