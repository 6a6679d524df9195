//! One scheduling cycle (kube's `pkg/scheduler/schedule_one.go`): a popped pod through
//! PreFilter and Filter (PostFilter on a fit error), the choice of a node, assume, Reserve and
//! Permit, then the binding task for the binder; and the failure handler that requeues a pod.

use crate::api::{Pod, Sym};
use crate::framework::QueuedPodInfo;
use crate::framework::interface::Diagnosis;
use crate::framework::metrics::{AttemptResult, ExtensionPoint, Series};
use crate::framework::parallelize::{
    FilterOutcome, find_feasible_blocks_in_mode, find_feasible_in_mode, num_feasible_nodes_to_find,
};
use crate::framework::runtime::CycleHandle;
use crate::framework::runtime::Framework;
use crate::framework::{Code, CycleState, NodeInfo, NodeRow, Snapshot, Status};
use ahash::AHashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::batch::SortedScoredNodes;
use super::binding::BindingTask;
use super::{PARALLEL_MIN_NODES, Scheduler};

/// A failed attempt: the status, and for a fit error the diagnosis.
pub(super) struct Failure {
    pub(super) status: Status,
    pub(super) diagnosis: Option<Box<Diagnosis>>,
}

impl Scheduler {
    /// Schedules a pod that was already popped (used by `schedule_one` and by tests that drive
    /// the queue with `try_pop`).
    pub fn schedule_popped(&self, qpi: QueuedPodInfo) {
        let pod = qpi.pod.clone();
        let Some(fi) = self.framework_for(&pod) else {
            self.queue.done(&pod.key);
            return;
        };
        let fwk = &self.frameworks[fi];
        if pod.deletion_timestamp || self.cache.is_assumed(&pod.key) {
            self.queue.done(&pod.key);
            return;
        }
        if self.resize_preemption && pod.is_assigned() && pod.is_resize_deferred() {
            self.schedule_deferred_resize(qpi);
            return;
        }
        self.stats.attempts.fetch_add(1, Ordering::Relaxed);
        let start = Instant::now();
        let cycle = self.queue.scheduling_cycle();
        let mut state = CycleState::new();
        state.record_plugin_metrics = crate::framework::metrics::sample_plugin_metrics();
        let host = match self.schedule_pod(fi, &mut state, &pod, cycle) {
            Ok(h) => h,
            Err(mut f) => {
                // kube runs PostFilter (preemption) on a FitError only.
                if let Some(d) = f.diagnosis.as_deref()
                    && fwk.has_post_filter_plugins()
                {
                    let snap = self.snapshot.lock();
                    let handle = CycleHandle {
                        snapshot: &snap,
                        framework: fwk,
                        nominator: &self.queue.nominator,
                        waiting_pods: &self.waiting_pods,
                    };
                    let (r, st) = fwk.run_post_filter(&handle, &mut state, &pod, d);
                    drop(snap);
                    let post = st.message();
                    if !post.is_empty() {
                        // kube v1.37's FitError.Error: " <PostFilterMsg>", nothing after it.
                        let msg = format!("{} {post}", f.status.message());
                        f.status = Status::new(f.status.code(), msg);
                    }
                    let nominated = r.and_then(|r| r.nominated_node_name);
                    let patch = nominated.filter(|&node| self.nominate(&pod, node));
                    self.handle_failure(qpi, f, start, cycle);
                    if let Some(node) = patch {
                        // kube's failure handler patches the status after requeueing the pod.
                        self.client
                            .set_nominated_node_name(&pod, (!node.is_empty()).then_some(node));
                    }
                    return;
                }
                self.handle_failure(qpi, f, start, cycle);
                return;
            }
        };
        self.metrics
            .observe(Series::AlgorithmDuration, start.elapsed().as_nanos() as u64);

        // Assume, Reserve, Permit.
        let mut assumed = (*pod).clone();
        assumed.node_name = Some(host);
        let assumed = Arc::new(assumed);
        if !self.cache.assume_pod(&assumed, host) {
            let f = Failure {
                status: Status::error(format!("pod {} could not be assumed", pod.key)),
                diagnosis: None,
            };
            self.handle_failure(qpi, f, start, cycle);
            return;
        }
        let st = fwk.run_reserve(&mut state, &assumed, host);
        if !st.is_success() {
            fwk.run_unreserve(&mut state, &assumed, host);
            self.cache.forget_pod(&pod.key);
            self.handle_failure(qpi, rejection(st), start, cycle);
            return;
        }
        let (st, waits) = fwk.run_permit(&mut state, &assumed, host);
        if !st.is_success() && !st.is_wait() {
            fwk.run_unreserve(&mut state, &assumed, host);
            self.cache.forget_pod(&pod.key);
            self.handle_failure(qpi, rejection(st), start, cycle);
            return;
        }
        if !state.pods_to_activate.is_empty() {
            self.queue
                .activate(&std::mem::take(&mut state.pods_to_activate));
        }
        let task = BindingTask {
            fwk: fi,
            state,
            qpi,
            assumed: assumed.clone(),
            host,
            start,
            cycle,
            permit: None,
        };
        if st.is_wait() {
            // The binding cycle continues when the pod is allowed, rejected or times out.
            let me = self.me.clone();
            let mut task = task;
            self.waiting_pods.add(
                assumed,
                host,
                waits,
                Box::new(move |outcome| {
                    if let Some(s) = me.upgrade() {
                        task.permit = Some(outcome);
                        s.submit_binding(task, true);
                    }
                }),
            );
            return;
        }
        self.submit_binding(task, false);
    }

    /// Records a nomination from PostFilter (`Sym::EMPTY` clears it) in the nominator;
    /// `true` when the pod's status is to be patched too (kube's failure handler patches
    /// `status.nominatedNodeName`, after requeueing the pod).
    pub(super) fn nominate(&self, pod: &Arc<Pod>, node: Sym) -> bool {
        use crate::framework::Nominating;
        if node.is_empty() && self.queue.nominator.node_of(&pod.key).is_none() {
            return false;
        }
        self.queue.nominator.add(pod, Nominating::Override(node));
        true
    }

    pub(super) fn handle_failure(
        &self,
        mut qpi: QueuedPodInfo,
        f: Failure,
        start: Instant,
        cycle: i64,
    ) {
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
    }

    /// kube's `schedulePod`: PreFilter; the pod's nominated node, or else the batch's hint,
    /// alone through Filter first (it is the pod's node when it passes); else Filter over the
    /// nodes (the PreFilter result's subset when it names one), and when more than one node is
    /// feasible, Score and the host choice. With batching, what the cycle found is stored for
    /// the next pod (`scheduler/batch.rs`).
    pub(super) fn schedule_pod(
        &self,
        fi: usize,
        state: &mut CycleState,
        pod: &Pod,
        cycle: i64,
    ) -> Result<Sym, Failure> {
        let fwk = &self.frameworks[fi];
        let mut snap = self.snapshot.lock();
        self.cache.update_snapshot(&mut snap);
        let all = snap.nodes.len();
        self.keep_helpers_warm(fwk, all);
        if all == 0 {
            return Err(Failure {
                status: Status::new(
                    Code::UnschedulableAndUnresolvable,
                    "no nodes available to schedule pods",
                ),
                diagnosis: None,
            });
        }

        // PreFilter.
        let (pre, st, with_nodes) = fwk.run_pre_filter(state, pod, &snap);
        if !st.is_success() {
            return Err(pre_filter_failure(st, all, with_nodes));
        }
        let subset: Option<(Vec<Arc<NodeInfo>>, Vec<NodeRow>)> = pre
            .and_then(|r| r.node_names)
            .map(|names| nodes_named(&snap, &names));
        let (nodes, rows): (&[Arc<NodeInfo>], &[NodeRow]) = match &subset {
            Some((nodes, rows)) => (nodes, rows),
            None => (&snap.nodes, &snap.rows),
        };
        let excluded = all - nodes.len();

        // kube's findNodesThatFitPod: the nominated node (set after preemption), or the
        // batch's hint, tried alone first; PreFilter's subset does not apply to it.
        let batching = self.opportunistic_batching;
        // Under InPlacePodVerticalScalingSchedulerPreemption kube's default profile runs
        // DeferredPodScheduling at PreFilter and Filter, which signs no pod.
        let signature = if batching && !self.resize_preemption {
            fwk.sign_pod(pod)
        } else {
            None
        };
        let hint = if batching {
            self.node_hint(fi, fwk, state, pod, signature.as_ref(), cycle, &snap)
        } else {
            None
        };
        // A node rejected alone stays in kube's diagnosis (it counts for the next start index
        // and in a fit error) even when the full pass does not reach it.
        let mut alone: Option<(Sym, Status)> = None;
        if let Some(first) = pod.nominated_node_name.filter(|n| !n.is_empty()).or(hint) {
            match self.filter_alone(fwk, state, pod, &snap, first) {
                Some(st) if st.is_success() => {
                    if batching {
                        self.store_schedule_results(fi, signature, hint, first, None, 0, cycle);
                    }
                    return Ok(first);
                }
                Some(st) if st.is_rejected() => alone = Some((first, st)),
                _ => {}
            }
        }

        // Filter.
        let outcome = self.find_nodes_that_pass_filters(
            fwk,
            state,
            pod,
            (nodes, rows),
            all,
            subset.is_none(),
            alone.as_ref().map(|(n, _)| *n),
        );
        if let Some(e) = outcome.error {
            return Err(rejection(e));
        }
        if outcome.feasible.is_empty() {
            return Err(fit_error(
                all,
                (excluded, &with_nodes),
                outcome.rejected,
                nodes,
                alone,
            ));
        }
        // The statuses are for a failure's diagnosis only.
        crate::framework::parallelize::recycle_rejected(outcome.rejected);
        if outcome.feasible.len() == 1 {
            let host = nodes[outcome.feasible[0]].name();
            if batching {
                self.store_schedule_results(fi, signature, hint, host, None, 0, cycle);
            }
            return Ok(host);
        }

        // Score.
        let keep = batching && signature.is_some();
        let (host, others) = self.prioritize(
            fwk,
            state,
            pod,
            &snap,
            (nodes, rows),
            &outcome.feasible,
            keep,
        )?;
        if batching {
            let count = outcome.feasible.len() - 1;
            self.store_schedule_results(fi, signature, hint, host, others, count, cycle);
        }
        Ok(host)
    }

    /// kube's `evaluateNominatedNode`: `node` alone through Filter, with the nominated pods.
    /// `None` for a node not in the snapshot (kube logs the error and filters every node).
    fn filter_alone(
        &self,
        fwk: &Framework,
        state: &CycleState,
        pod: &Pod,
        snap: &Snapshot,
        node: Sym,
    ) -> Option<Status> {
        let &i = snap.index.get(&node)?;
        let t = Instant::now();
        let filters = fwk.active_filter_plugins(state, pod);
        let noms = self.queue.nominator.nominated_at_least_on(node, pod);
        let st =
            fwk.run_filter_plugins_with_nominated_pods(&filters, state, pod, &snap.nodes[i], &noms);
        let code = if st.is_success() || st.is_rejected() {
            Code::Success
        } else {
            Code::Error
        };
        fwk.observe_phase(ExtensionPoint::Filter, code, t.elapsed());
        Some(st)
    }

    /// Has the pool's helpers awake when this cycle's Filter and Score will fan out.
    #[inline]
    fn keep_helpers_warm(&self, fwk: &Framework, all: usize) {
        if let Some(w) = &self.warm {
            let pct = fwk.percentage_of_nodes_to_score.or(self.global_pct);
            if num_feasible_nodes_to_find(pct, all) >= PARALLEL_MIN_NODES
                || self.last_filter_scan.load(Ordering::Relaxed) >= PARALLEL_MIN_NODES
            {
                w.keep_warm();
            }
        }
    }

    /// kube's `findNodesThatPassFilters`: Filter from the rotating start index until
    /// `numFeasibleNodesToFind` nodes pass, inline or on the pool, with the nominated pods'
    /// second pass when any are nominated. `whole_list`: `nodes` is the snapshot's list (not a
    /// PreFilter subset), so the start index moves on.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn find_nodes_that_pass_filters(
        &self,
        fwk: &Framework,
        state: &CycleState,
        pod: &Pod,
        (nodes, rows): (&[Arc<NodeInfo>], &[NodeRow]),
        all: usize,
        whole_list: bool,
        rejected_alone: Option<Sym>,
    ) -> FilterOutcome {
        let pct = fwk.percentage_of_nodes_to_score.or(self.global_pct);
        let num_to_find = if fwk.has_score_plugins() {
            num_feasible_nodes_to_find(pct, nodes.len())
        } else {
            1
        };
        let t = Instant::now();
        let n = nodes.len();
        let start_index = if n == 0 {
            0
        } else {
            self.next_start_node_index.load(Ordering::Relaxed) % n
        };
        let filters = fwk.active_filter_plugins(state, pod);
        // Fanning out costs a few microseconds of wake-ups; it pays only for big evaluations:
        // many feasible nodes wanted, or (most nodes rejected) many walked last time.
        let pool = self.pool.as_deref().filter(|_| {
            num_to_find >= PARALLEL_MIN_NODES
                || self.last_filter_scan.load(Ordering::Relaxed) >= PARALLEL_MIN_NODES
        });
        // (No map at all in the usual case: even an empty AHashMap draws random keys.)
        let nominated = if self.queue.nominator.is_empty() {
            None
        } else {
            Some(self.queue.nominator.nominated_at_least(pod)).filter(|m| !m.is_empty())
        };
        let ordered = self.deterministic;
        let outcome = if let Some(nominated) = &nominated {
            find_feasible_in_mode(ordered, pool, n, start_index, num_to_find, |i| {
                let noms = nominated.get(&nodes[i].name()).map_or(&[][..], |v| &v[..]);
                fwk.run_filter_plugins_with_nominated_pods(&filters, state, pod, &nodes[i], noms)
            })
        } else {
            find_feasible_blocks_in_mode(
                ordered,
                pool,
                n,
                start_index,
                num_to_find,
                |first, len, verdicts| {
                    let (block, block_rows) =
                        (&nodes[first..first + len], &rows[first..first + len]);
                    Framework::run_filter_plugins_block(
                        &filters, state, pod, block, block_rows, verdicts,
                    )
                },
            )
        };
        let phase_code = if outcome.error.is_some() {
            Code::Error
        } else {
            Code::Success
        };
        fwk.observe_phase(ExtensionPoint::Filter, phase_code, t.elapsed());
        // kube counts the statuses of its diagnosis: the node rejected alone first (nominated
        // or hinted) once, whether or not this pass reached it.
        let reached = |n: Sym| {
            outcome.feasible.iter().any(|&i| nodes[i].name() == n)
                || outcome.rejected.iter().any(|(i, _)| nodes[*i].name() == n)
        };
        let extra = rejected_alone.is_some_and(|n| !reached(n));
        let processed = outcome.feasible.len() + outcome.rejected.len() + usize::from(extra);
        self.last_filter_scan.store(processed, Ordering::Relaxed);
        if n > 0 && whole_list {
            self.next_start_node_index
                .store((start_index + processed) % all, Ordering::Relaxed);
        }
        outcome
    }

    /// PreScore, then Score and the host choice over the feasible nodes (`feasible`: indices
    /// into `nodes`).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn prioritize(
        &self,
        fwk: &Framework,
        state: &mut CycleState,
        pod: &Pod,
        snap: &Snapshot,
        (nodes, rows): (&[Arc<NodeInfo>], &[NodeRow]),
        feasible_idx: &[usize],
        keep: bool,
    ) -> Result<(Sym, Option<SortedScoredNodes>), Failure> {
        let feasible: Vec<&NodeInfo> = feasible_idx.iter().map(|&i| &*nodes[i]).collect();
        let st = fwk.run_pre_score(state, pod, &feasible, snap);
        if !st.is_success() {
            return Err(rejection(st));
        }
        let t = Instant::now();
        let mut scratch = self.score_scratch.lock();
        scratch.keep_raw = keep;
        let scored = self.score_nodes(
            fwk,
            state,
            pod,
            &feasible,
            (feasible_idx, rows),
            &mut scratch,
        );
        scratch.keep_raw = false;
        match scored {
            Ok(chosen) => {
                fwk.observe_phase(ExtensionPoint::Score, Code::Success, t.elapsed());
                let others = keep.then(|| {
                    let plugins: Vec<&'static str> = fwk
                        .active_score_plugins(state)
                        .iter()
                        .map(|(p, _)| p.name())
                        .collect();
                    let (p, f) = (plugins.len(), feasible.len());
                    let s = &*scratch;
                    self.sorted_others(
                        plugins,
                        feasible.iter().map(|n| n.name()),
                        chosen,
                        |i, j| s.raw_score(i, j, p, f),
                        &s.totals,
                    )
                });
                Ok((feasible[chosen].name(), others))
            }
            Err(st) => {
                fwk.observe_phase(ExtensionPoint::Score, Code::Error, t.elapsed());
                Err(rejection(st))
            }
        }
    }
}

/// A PreFilter that did not succeed: a rejection reads `0/N nodes are available: <msg>.` and
/// carries the plugin as the diagnosis; an error is returned as is.
fn pre_filter_failure(st: Status, all: usize, with_nodes: Vec<&'static str>) -> Failure {
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
    }
}

/// The snapshot's nodes and rows named by a PreFilter result, in its order (unknown names
/// skipped).
fn nodes_named(snap: &Snapshot, names: &[Sym]) -> (Vec<Arc<NodeInfo>>, Vec<NodeRow>) {
    names
        .iter()
        .filter_map(|n| {
            snap.index
                .get(n)
                .map(|&i| (snap.nodes[i].clone(), snap.rows[i]))
        })
        .unzip()
}

pub(super) fn rejection(st: Status) -> Failure {
    Failure {
        status: st,
        diagnosis: None,
    }
}

/// kube's FitError message: `0/N nodes are available: <count> <reason>, ...` with the reason
/// strings sorted.
pub(super) fn fit_error(
    all: usize,
    (mut excluded, with_nodes): (usize, &[&'static str]),
    rejected: Vec<(usize, Status)>,
    nodes: &[Arc<crate::framework::NodeInfo>],
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
    }
}
