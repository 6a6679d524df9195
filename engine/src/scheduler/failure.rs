//! The failure path of a scheduling attempt (kube's `handleSchedulingFailure` and the
//! `FitError` of `pkg/scheduler/schedule_one.go`): what a failed cycle (or binding cycle)
//! carries, how a fit error's message and diagnosis are built, and how the pod is requeued.
//!
//! Both cycles use it (`schedule_one.rs`, `binding.rs`); it uses neither, so the two stay
//! one-way: the scheduling cycle hands tasks to the binding cycle, never the reverse.
//!
//! Order of the handler (as kube's): PostFilter's nomination is recorded in the nominator,
//! then the attempt is counted, the pod requeued (or dropped when it is gone or bound
//! meanwhile) and its condition set, and only then is `status.nominatedNodeName` patched.

use crate::api::{Pod, Sym};
use crate::framework::QueuedPodInfo;
use crate::framework::interface::Diagnosis;
use crate::framework::metrics::{AttemptResult, Series};
use crate::framework::{Code, NodeInfo, Status};
use ahash::AHashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::Scheduler;

/// A failed attempt: the status, for a fit error the diagnosis, and PostFilter's nomination.
pub(super) struct Failure {
    pub(super) status: Status,
    pub(super) diagnosis: Option<Box<Diagnosis>>,
    /// kube's `NominatingInfo` from PostFilter: the node to nominate the pod to
    /// (`Sym::EMPTY` clears its nomination); `None`: leave the nomination as it is.
    pub(super) nominated: Option<Sym>,
}

impl Scheduler {
    /// Records a nomination from PostFilter (`Sym::EMPTY` clears it) in the nominator;
    /// `true` when the pod's status is to be patched too (kube's failure handler patches
    /// `status.nominatedNodeName`, after requeueing the pod).
    fn nominate(&self, pod: &Arc<Pod>, node: Sym) -> bool {
        use crate::framework::Nominating;
        if node.is_empty()
            && self.queue.nominator.node_of(&pod.key).is_none()
            && pod.nominated_node_name.is_none()
        {
            return false;
        }
        self.queue.nominator.add(pod, Nominating::Override(node));
        true
    }

    /// kube's `handleSchedulingFailure`: the nomination, the attempt's metrics, the pod back
    /// to the unschedulable pool (with the plugins that rejected it) and its condition.
    pub(super) fn handle_scheduling_failure(
        &self,
        mut qpi: QueuedPodInfo,
        f: Failure,
        start: Instant,
        cycle: i64,
    ) {
        let patch = f.nominated.filter(|&node| self.nominate(&qpi.pod, node));
        let rejected = f.status.is_rejected();
        let result = if rejected {
            self.stats.unschedulable.fetch_add(1, Ordering::Relaxed);
            AttemptResult::Unschedulable
        } else {
            self.stats.errors.fetch_add(1, Ordering::Relaxed);
            AttemptResult::Error
        };
        self.metrics.inc_attempt(result);
        self.metrics.observe(
            Series::AttemptDuration(result),
            start.elapsed().as_nanos() as u64,
        );
        if let Some(d) = &f.diagnosis {
            qpi.unschedulable_plugins = d.unschedulable_plugins.clone();
            qpi.pending_plugins = d.pending_plugins.clone();
        } else if rejected && !f.status.plugin().is_empty() {
            qpi.unschedulable_plugins = vec![f.status.plugin()];
        }
        let pod = qpi.pod.clone();
        let message = f.status.message();
        if self.client.pod_exists_unassigned(&pod) {
            // An error here means the pod was re-added by an update meanwhile: nothing is lost.
            let _ = self.queue.add_unschedulable_if_not_present(qpi, cycle);
        } else {
            self.queue.done(&pod.key);
        }
        let reason = if rejected {
            "Unschedulable"
        } else {
            "SchedulerError"
        };
        self.client.set_unschedulable(&pod, reason, &message);
        if let Some(node) = patch {
            // kube's failure handler patches the status after requeueing the pod.
            self.client
                .set_nominated_node_name(&pod, (!node.is_empty()).then_some(node));
        }
    }
}

/// A failure with `st` alone: no diagnosis, no nomination.
pub(super) fn rejection(st: Status) -> Failure {
    Failure {
        status: st,
        diagnosis: None,
        nominated: None,
    }
}

/// The snapshot has no node at all.
pub(super) fn no_nodes_available() -> Failure {
    rejection(Status::new(
        Code::UnschedulableAndUnresolvable,
        "no nodes available to schedule pods",
    ))
}

/// A PreFilter that did not succeed: a rejection reads `0/N nodes are available: <msg>.` and
/// carries the plugin as the diagnosis; an error is returned as is.
pub(super) fn pre_filter_failure(st: Status, all: usize, with_nodes: Vec<&'static str>) -> Failure {
    if !st.is_rejected() {
        return rejection(st);
    }
    let msg = st.message();
    // kube's diagnosis: the plugins that narrowed the nodes, and the rejecting one (none for
    // an empty intersection of their subsets).
    let mut unschedulable_plugins = with_nodes;
    if !st.plugin().is_empty() && !unschedulable_plugins.contains(&st.plugin()) {
        unschedulable_plugins.push(st.plugin());
    }
    let diagnosis = Diagnosis {
        unschedulable_plugins,
        pre_filter_msg: msg.clone(),
        ..Default::default()
    };
    Failure {
        status: Status::new(st.code(), format!("0/{all} nodes are available: {msg}."))
            .with_plugin(st.plugin()),
        diagnosis: Some(Box::new(diagnosis)),
        nominated: None,
    }
}

/// kube's FitError message: `0/N nodes are available: <count> <reason>, ...` with the reason
/// strings sorted.
pub(super) fn fit_error(
    all: usize,
    (mut excluded, with_nodes): (usize, &[&'static str]),
    rejected: Vec<(usize, Status)>,
    nodes: &[Arc<NodeInfo>],
    alone: Option<(Sym, Status)>,
) -> Failure {
    let mut counts: AHashMap<crate::framework::status::Reason, usize> = AHashMap::new();
    let mut diagnosis = Diagnosis::default();
    // The node rejected alone first (nominated or hinted) has its own status in kube's
    // diagnosis; counted here when the full pass did not judge it (outside PreFilter's
    // subset: then it is no longer one of the excluded).
    let mut statuses: Vec<(Sym, Status)> = rejected
        .into_iter()
        .map(|(i, st)| (nodes[i].name(), st))
        .collect();
    if let Some((n, st)) = alone
        && !statuses.iter().any(|(m, _)| *m == n)
    {
        if !nodes.iter().any(|x| x.name() == n) {
            excluded = excluded.saturating_sub(1);
        }
        statuses.push((n, st));
    }
    for (name, st) in statuses {
        for r in st.reasons() {
            *counts.entry(r.clone()).or_default() += 1;
        }
        let plugin = st.plugin();
        if st.code() == Code::Pending {
            if !diagnosis.pending_plugins.contains(&plugin) {
                diagnosis.pending_plugins.push(plugin);
            }
        } else if !diagnosis.unschedulable_plugins.contains(&plugin) {
            diagnosis.unschedulable_plugins.push(plugin);
        }
        diagnosis.node_statuses.push((name, st));
    }
    // kube: the nodes outside PreFilter's subset get "node(s) didn't satisfy plugin(s)
    // [<the plugins that narrowed them, sorted>]", and those plugins are unschedulable ones.
    if excluded > 0 {
        let mut names = with_nodes.to_vec();
        names.sort_unstable();
        *counts
            .entry(format!("node(s) didn't satisfy plugin(s) [{}]", names.join(" ")).into())
            .or_default() += excluded;
    }
    for p in with_nodes {
        if !diagnosis.unschedulable_plugins.contains(p) {
            diagnosis.unschedulable_plugins.push(p);
        }
    }
    let mut parts: Vec<String> = counts
        .into_iter()
        .map(|(r, c)| format!("{c} {r}"))
        .collect();
    parts.sort();
    let msg = format!("0/{all} nodes are available: {}.", parts.join(", "));
    Failure {
        status: Status::new(Code::Unschedulable, msg),
        diagnosis: Some(Box::new(diagnosis)),
        nominated: None,
    }
}
