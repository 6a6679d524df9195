//! One scheduling cycle's context: what kube hands `schedulingCycle` and each of its steps
//! (`ctx, state, fwk, podInfo, start`), bundled once instead of passed as loose arguments.
//!
//! A [`CycleContext`] is made when a pod is popped and its profile found, lives through the
//! scheduling cycle (schedulePod, PostFilter, assume, Reserve, Permit) on the scheduling
//! thread, and ends there: its cycle state moves into the binding task, or its start time
//! and cycle number into the failure handler. A step that needs more (the snapshot, the
//! batch's hint) takes it next to the context; a new step (a workload cycle, a claim
//! allocation) reads the pod, the framework and the cycle state from here.

use crate::api::Pod;
use crate::framework::CycleState;
use crate::framework::runtime::Framework;
use crate::queue::nominator::Nominator;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::Scheduler;

/// The per-cycle state of one pod's scheduling attempt.
pub(super) struct CycleContext<'a> {
    /// The profile's index (its batch; the binding task's framework).
    pub(super) fi: usize,
    /// The profile's framework.
    pub(super) fwk: &'a Framework,
    /// The pod as popped.
    pub(super) pod: Arc<Pod>,
    /// The cycle state the plugins share.
    pub(super) state: CycleState,
    /// The nominated pods, as Filter and PostFilter see them.
    pub(super) nominator: &'a Nominator,
    /// The queue's scheduling cycle when the pod was popped.
    pub(super) cycle: i64,
    /// When the attempt started (its duration metrics).
    pub(super) start: Instant,
    /// A pod-group cycle's placement: only these nodes may be chosen (`None`: any).
    pub(super) placement_nodes: Option<Arc<PlacementNodes>>,
}

/// The nodes of the placement a pod-group cycle assumed (kube's `Snapshot.AssumePlacement`):
/// Filter walks `names`, the placement's own list (kube's `ListNodesInPlacement`), and a
/// nominated node or a batch hint counts only when `set` holds it (`GetNodeInPlacement`).
pub(super) struct PlacementNodes {
    pub(super) names: Vec<crate::api::Sym>,
    pub(super) set: ahash::AHashSet<crate::api::Sym>,
    /// `names`' indices into the snapshot's nodes, valid while its `layout` is `.0`.
    pub(super) indices: (u64, Vec<usize>),
}

impl PlacementNodes {
    /// A placement's nodes; `None` when it holds every node of the snapshot (kube treats that
    /// as no placement).
    pub(super) fn of(
        p: &crate::framework::pod_group::Placement,
        snap: &crate::framework::Snapshot,
    ) -> Option<Arc<PlacementNodes>> {
        if p.nodes.len() == snap.nodes.len() {
            return None;
        }
        let names: Vec<crate::api::Sym> = p.nodes.iter().map(|n| n.name()).collect();
        let set = names.iter().copied().collect();
        let indices = names
            .iter()
            .filter_map(|n| snap.index.get(n).copied())
            .collect();
        Some(Arc::new(PlacementNodes {
            names,
            set,
            indices: (snap.layout, indices),
        }))
    }
}

impl Scheduler {
    /// Counts the attempt and opens its cycle: the start time, the queue's scheduling cycle,
    /// a fresh cycle state.
    pub(super) fn start_cycle(&self, fi: usize, pod: Arc<Pod>) -> CycleContext<'_> {
        self.stats.attempts.fetch_add(1, Ordering::Relaxed);
        let start = Instant::now();
        let cycle = self.queue.scheduling_cycle();
        let mut state = CycleState::new();
        state.record_plugin_metrics = crate::framework::metrics::sample_plugin_metrics();
        CycleContext {
            fi,
            fwk: &self.frameworks[fi],
            pod,
            state,
            nominator: &self.queue.nominator,
            cycle,
            start,
            placement_nodes: None,
        }
    }
}
