//! What a run gives back, and what the outputs read: per workload its outcome
//! ([`WorkloadReport`], [`Outcome`]) and, for one that ran, its data items, counts,
//! placements and pods ([`RunResult`]). The run (`run::execute`) fills them; they live here,
//! below the run, so that the table and the files ([`super::table`], [`super::files`],
//! [`super::sink`]) can be written from them by any caller of the library.

use crate::output::flame::Profile;
use crate::output::report::{self, DataItem, ThresholdFailure};
use std::time::Duration;

/// Counts at the end of a workload. `created = bound + deleted + pending (all queues)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub created: u64,
    pub bound: u64,
    pub deleted: u64,
    /// Deleted but still there, with a deletionTimestamp: finalizers remain, or the pod is
    /// bound with a grace period and waits for a kubelet, which these clusters have none of.
    pub terminating: u64,
    pub pending_active: u64,
    pub pending_backoff: u64,
    pub pending_unschedulable: u64,
    pub pending_gated: u64,
    /// Pod-group members waiting for their group (kube's `pending` and `incomplete` queue
    /// labels: the group's attempt has not ended, or its PodGroup object is unknown).
    pub pending_pod_group: u64,
    /// Unbound pods that no profile of ours is responsible for (other schedulerName).
    pub pending_other_scheduler: u64,
    pub attempts: u64,
    pub binds: u64,
    /// Pods placed on an opportunistic batching hint (no Filter pass over the cluster, no
    /// Score).
    pub batched: u64,
    /// The workload's PodGroups.
    pub pod_groups: GroupCounts,
}

/// PodGroups at the end of a workload. `created = scheduled + pending + deleted`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GroupCounts {
    pub created: u64,
    pub deleted: u64,
    /// Live groups whose `PodGroupInitiallyScheduled` condition is True.
    pub scheduled: u64,
    /// Live groups not scheduled (yet).
    pub pending: u64,
    /// Live groups never scheduled that have bound members: the scheduler never binds a
    /// member outside its group's successful cycle, so this stays 0.
    pub bound_unscheduled: u64,
    /// Live gangs with some, but fewer than `minCount`, members bound. The scheduler binds a
    /// gang whole (a quorum at least); members deleted later, as preemption victims with
    /// `disruptionMode: single` or by the workload, can leave one below it.
    pub below_quorum: u64,
}

impl GroupCounts {
    pub fn adds_up(&self) -> bool {
        self.created == self.scheduled + self.pending + self.deleted
    }
}

impl Summary {
    pub fn pending(&self) -> u64 {
        self.pending_active
            + self.pending_backoff
            + self.pending_unschedulable
            + self.pending_gated
            + self.pending_pod_group
            + self.pending_other_scheduler
    }
    /// Pods and PodGroups are all accounted for.
    pub fn adds_up(&self) -> bool {
        self.created == self.bound + self.deleted + self.terminating + self.pending()
            && self.pod_groups.adds_up()
    }
    /// The counts as the summary data item writes them (the PodGroup ones only where the
    /// workload has PodGroups, and `pending_pod_group` only where a member pends).
    pub fn as_pairs(&self) -> Vec<(&'static str, u64)> {
        let mut v = vec![
            ("created", self.created),
            ("bound", self.bound),
            ("deleted", self.deleted),
            ("terminating", self.terminating),
            ("pending_active", self.pending_active),
            ("pending_backoff", self.pending_backoff),
            ("pending_unschedulable", self.pending_unschedulable),
            ("pending_gated", self.pending_gated),
            ("pending_other_scheduler", self.pending_other_scheduler),
            ("attempts", self.attempts),
            ("binds", self.binds),
        ];
        if self.pending_pod_group > 0 || self.pod_groups.created > 0 {
            v.insert(8, ("pending_pod_group", self.pending_pod_group));
        }
        if self.pod_groups.created > 0 {
            let g = &self.pod_groups;
            v.extend([
                ("pod_groups_created", g.created),
                ("pod_groups_scheduled", g.scheduled),
                ("pod_groups_pending", g.pending),
                ("pod_groups_deleted", g.deleted),
                ("pod_groups_below_quorum", g.below_quorum),
            ]);
        }
        v
    }
}

/// What happened to one workload.
#[derive(Debug)]
pub struct WorkloadReport {
    pub test_case: String,
    pub workload: String,
    pub outcome: Outcome,
    /// Feature gates set that change nothing kube-scheduler decides for this workload
    /// (`Gate=value`; the reasons are in `docs/feature-gates.md`).
    pub identical_gates: Vec<String>,
}

#[derive(Debug)]
pub enum Outcome {
    Ran(Box<RunResult>),
    Skipped(String),
    /// The run failed (a timeout, lost pods); only with `RunOptions::keep_going`, which goes
    /// on with the next workload as upstream's subtests do.
    Failed(String),
}

#[derive(Debug)]
pub struct RunResult {
    /// Throughput and pending pods over time, per collection window.
    pub series: Vec<report::WindowSeries>,
    /// The CPU samples of the collection windows (with `RunOptions::flamegraph`).
    pub profile: Option<Profile>,
    /// The scheduler's metrics at the end (with `RunOptions::prometheus`).
    pub prometheus: Option<crate::output::prom::Snapshot>,
    pub items: Vec<DataItem>,
    pub summary: Summary,
    pub threshold_failures: Vec<ThresholdFailure>,
    pub placements: Vec<(String, String, String)>,
    pub wall: Duration,
    /// Every pod at the end (only with `RunOptions::dump_pods`).
    pub pods: Vec<PodDump>,
    /// The process's peak resident set during the workload, in MB (`VmHWM`, reset when the
    /// workload starts where the kernel allows it; None where /proc is not available).
    pub peak_rss_mb: Option<f64>,
    /// With `--flamegraph`: the profiler's sample table (MB), not counted in `peak_rss_mb`.
    pub profiler_mb: Option<f64>,
}

/// One pod at the end of a workload, as `--dump-pods` writes it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct PodDump {
    pub namespace: String,
    pub name: String,
    /// As kubectl prints it: `Bound`, `SchedulingGated`, `Pending` or `Terminating`.
    pub status: &'static str,
    pub node: Option<String>,
    /// The queue holding a pending pod (`active`, `backoff`, `unschedulable`, `gated`, …).
    pub queue: Option<&'static str>,
    pub gates: Vec<String>,
    /// The plugins that rejected a pending pod in its last attempt.
    pub rejectors: Vec<&'static str>,
    /// The last PodScheduled=False message.
    pub message: Option<String>,
    /// The PodGroup the pod belongs to (`spec.schedulingGroup.podGroupName`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pod_group: Option<String>,
}

/// A FNV-1a hash of the sorted `(namespace, name, node)` list: equal placements give equal
/// digests on every machine and build.
pub fn placements_digest(placements: &[(String, String, String)]) -> u64 {
    let mut sorted: Vec<&(String, String, String)> = placements.iter().collect();
    sorted.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (ns, name, node) in sorted {
        for part in [
            ns.as_bytes(),
            b"/",
            name.as_bytes(),
            b"=",
            node.as_bytes(),
            b"\n",
        ] {
            for &b in part {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
    }
    h
}
