//! A workload's outcome as the kube differential's outcome check compares it
//! (`tidegate_bench::oracle::outcome`): whether every op ran, and the pod counts at the end
//! of each op, counted as scheduler_perf's executor counts them (`getScheduledPods`: a pod
//! with a node is scheduled, terminating or not; one without is pending; deleted pods are
//! gone). Recorded only when [`RunOptions::outcomes`](crate::run::RunOptions) asks for it.

use crate::cluster::store::Store;
use crate::run::ops::Op;
use serde::{Deserialize, Serialize};

/// Pod counts: `created = scheduled + pending + deleted`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PodCounts {
    pub created: u64,
    pub scheduled: u64,
    pub pending: u64,
    pub deleted: u64,
}

impl PodCounts {
    /// The store's counts now.
    pub fn of(store: &Store) -> PodCounts {
        let c = store.counts();
        let states = store.pod_states();
        let scheduled = states.iter().filter(|p| p.node.is_some()).count() as u64;
        PodCounts {
            created: c.created,
            scheduled,
            pending: states.len() as u64 - scheduled,
            deleted: c.deleted,
        }
    }
}

/// The end of one op.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpEnd {
    pub index: usize,
    pub opcode: &'static str,
    pub counts: PodCounts,
    /// How many waits the op made (one per createPods that waits, one per namespace of a
    /// barrier).
    pub waits: usize,
    /// Whether one of them passed only on the executor's lagging view (a view
    /// kube's first poll may still read; see `run::ops::wait`).
    pub stale: bool,
}

/// One workload's outcome.
#[derive(Clone, Debug)]
pub struct WorkloadOutcome {
    /// `TestCase/Workload`.
    pub name: String,
    pub ops: Vec<Op>,
    /// The ends of the ops that ran, the failed one included.
    pub ends: Vec<OpEnd>,
    /// The error that ended the workload early; None when every op ran.
    pub error: Option<String>,
}

/// Where a run puts its workloads' outcomes.
#[derive(Default)]
pub struct OutcomeLog {
    pub workloads: parking_lot::Mutex<Vec<WorkloadOutcome>>,
}
