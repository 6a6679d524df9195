//! One scheduling cycle (kube's `pkg/scheduler/schedule_one.go`), split along kube's steps:
//!
//! - `schedule_popped` (kube's `scheduleOne`): the pod's profile, the pods skipped, the cycle
//!   context (`cycle.rs`); then the scheduling cycle, and the binding cycle's task
//!   (`binding.rs`) or the failure handler (`failure.rs`);
//! - `scheduling_cycle` (`schedulingCycle`): schedulePod, PostFilter on a fit error, assume,
//!   Reserve, Permit;
//! - `schedule_pod` (`schedulePod`): the snapshot, `find_nodes_that_fit_pod` (PreFilter, the
//!   nominated node or the batch's hint alone, `find_nodes_that_pass_filters`), then
//!   `prioritize` (PreScore, and Score and selectHost in `score.rs`) when more than one node
//!   fits, and what the cycle found stored for the batch (`batch.rs`).
//!
//! A new step of the cycle (a workload cycle before schedulePod, a claim allocation at
//! Reserve) goes into `scheduling_cycle`, with what it needs in the cycle context.

use crate::api::{Pod, Sym};
use crate::framework::metrics::{ExtensionPoint, Series};
use crate::framework::node_memo::{self, MemoPoint};
use crate::framework::parallelize::{
    BlockVerdicts, FilterOutcome, find_feasible_blocks_in_mode, find_feasible_in_mode,
    num_feasible_nodes_to_find,
};
use crate::framework::runtime::CycleHandle;
use crate::framework::runtime::Framework;
use crate::framework::{Code, NodeInfo, NodeRow, QueuedPodInfo, Snapshot, Status};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::batch::{NodeHint, SortedScoredNodes};
use super::binding::BindingTask;
use super::cycle::CycleContext;
use super::failure::{Failure, fit_error, no_nodes_available, pre_filter_failure, rejection};
use super::window::Window;
use super::{PARALLEL_MIN_NODES, Scheduler};

/// A pod through the scheduling cycle: assumed on `host`, reserved, and permitted or
/// (`waits`) waiting at Permit on those plugins.
pub(super) struct Assumed {
    pod: Arc<Pod>,
    host: Sym,
    waits: Option<Vec<(&'static str, Duration)>>,
}

/// The nodes a cycle filters (kube's `nodes` in `findNodesThatFitPod`): the snapshot's, or
/// those PreFilter's result names, in its order (unknown names skipped).
struct CandidateNodes<'s> {
    snap: &'s Snapshot,
    subset: Option<(Vec<Arc<NodeInfo>>, Vec<NodeRow>)>,
}

impl<'s> CandidateNodes<'s> {
    fn new(snap: &'s Snapshot, names: Option<Vec<Sym>>) -> Self {
        let subset = names.map(|names| {
            names
                .iter()
                .filter_map(|n| {
                    snap.index
                        .get(n)
                        .map(|&i| (snap.nodes[i].clone(), snap.rows[i]))
                })
                .unzip()
        });
        CandidateNodes { snap, subset }
    }

    /// The snapshot's nodes at `indices` (taken at the snapshot's current layout).
    fn at(snap: &'s Snapshot, indices: &[usize]) -> Self {
        let nodes = indices.iter().map(|&i| snap.nodes[i].clone()).collect();
        let rows = indices.iter().map(|&i| snap.rows[i]).collect();
        CandidateNodes {
            snap,
            subset: Some((nodes, rows)),
        }
    }

    fn nodes(&self) -> (&[Arc<NodeInfo>], &[NodeRow]) {
        match &self.subset {
            Some((nodes, rows)) => (nodes, rows),
            None => (&self.snap.nodes, &self.snap.rows),
        }
    }

    /// Every node of the snapshot.
    fn all(&self) -> usize {
        self.snap.nodes.len()
    }

    /// The snapshot's list itself, not a PreFilter subset: the start index moves on.
    fn whole_list(&self) -> bool {
        self.subset.is_none()
    }
}

/// What `find_nodes_that_fit_pod` found: the nominated or hinted node that passed alone
/// (nothing else was filtered), or the feasible nodes (indices into the candidates).
struct Fit<'s> {
    hint: NodeHint,
    candidates: CandidateNodes<'s>,
    alone: Option<Sym>,
    feasible: Vec<usize>,
    /// The window path's feasible nodes (`window.rs`), instead of `feasible`.
    window: Option<Window>,
}

impl Scheduler {
    /// Schedules a pod that was already popped (kube's `scheduleOne`; used by `schedule_one`
    /// and by tests that drive the queue with `try_pop`).
    pub fn schedule_popped(&self, qpi: QueuedPodInfo) {
        let pod = qpi.pod.clone();
        let Some(fi) = self.framework_for(&pod) else {
            self.queue.done(&pod.key);
            return;
        };
        // kube's skipPodSchedule.
        if pod.deletion_timestamp || self.cache.is_assumed(&pod.key) {
            self.queue.done(&pod.key);
            return;
        }
        if self.resize_preemption && pod.is_assigned() && pod.is_resize_deferred() {
            self.schedule_deferred_resize(qpi);
            return;
        }
        let mut cx = self.start_cycle(fi, pod);
        match self.scheduling_cycle(&mut cx) {
            Ok(assumed) => self.start_binding_cycle(cx, qpi, assumed),
            Err(f) => self.handle_scheduling_failure(qpi, f, cx.start, cx.cycle),
        }
    }

    /// kube's `schedulingCycle`: schedulePod (PostFilter on a fit error), then assume,
    /// Reserve and Permit, and the pods a plugin asked to activate.
    fn scheduling_cycle(&self, cx: &mut CycleContext) -> Result<Assumed, Failure> {
        let host = match self.schedule_pod(cx) {
            Ok(h) => h,
            Err(f) => return Err(self.run_post_filter(cx, f)),
        };
        self.metrics.observe(
            Series::AlgorithmDuration,
            cx.start.elapsed().as_nanos() as u64,
        );
        self.reserve_and_permit(cx, host)
    }

    /// The tail of the scheduling cycle once a host is chosen (kube's
    /// `prepareForBindingCycle`): assume, Reserve, Permit, and the pods to activate.
    pub(super) fn reserve_and_permit(
        &self,
        cx: &mut CycleContext,
        host: Sym,
    ) -> Result<Assumed, Failure> {
        let assumed = self.assume(&cx.pod, host)?;
        let st = cx.fwk.run_reserve(&mut cx.state, &assumed, host);
        if !st.is_success() {
            return Err(self.unreserve(cx, &assumed, host, st));
        }
        let (st, waits) = cx.fwk.run_permit(&mut cx.state, &assumed, host);
        if !st.is_success() && !st.is_wait() {
            return Err(self.unreserve(cx, &assumed, host, st));
        }
        if !cx.state.pods_to_activate.is_empty() {
            self.queue
                .activate(&std::mem::take(&mut cx.state.pods_to_activate));
        }
        Ok(Assumed {
            pod: assumed,
            host,
            waits: st.is_wait().then_some(waits),
        })
    }

    /// PostFilter (preemption) on a fit error only, as kube runs it: its message joins the
    /// failure's, its nomination goes with the failure to the handler.
    fn run_post_filter(&self, cx: &mut CycleContext, mut f: Failure) -> Failure {
        let Some(d) = f.diagnosis.as_deref() else {
            return f;
        };
        if !cx.fwk.has_post_filter_plugins() {
            return f;
        }
        let snap = self.snapshot.lock();
        let handle = CycleHandle {
            snapshot: &snap,
            framework: cx.fwk,
            nominator: cx.nominator,
            waiting_pods: &self.waiting_pods,
        };
        let (r, st) = cx.fwk.run_post_filter(&handle, &mut cx.state, &cx.pod, d);
        drop(snap);
        let post = st.message();
        if !post.is_empty() {
            // kube v1.37's FitError.Error: " <PostFilterMsg>", nothing after it.
            let msg = format!("{} {post}", f.status.message());
            f.status = Status::new(f.status.code(), msg);
        }
        f.nominated = r.and_then(|r| r.nominated_node_name);
        f
    }

    /// kube's `assume`: the pod, on `host`, counted in the cache before it binds.
    pub(super) fn assume(&self, pod: &Pod, host: Sym) -> Result<Arc<Pod>, Failure> {
        let mut assumed = pod.clone();
        assumed.node_name = Some(host);
        let assumed = Arc::new(assumed);
        if !self.cache.assume_pod(&assumed, host) {
            let st = Status::error(format!("pod {} could not be assumed", pod.key));
            return Err(rejection(st));
        }
        Ok(assumed)
    }

    /// A Reserve or Permit that said no: Unreserve, and the assumed pod forgotten.
    pub(super) fn unreserve(
        &self,
        cx: &mut CycleContext,
        assumed: &Pod,
        host: Sym,
        st: Status,
    ) -> Failure {
        cx.fwk.run_unreserve(&mut cx.state, assumed, host);
        self.cache.forget_pod(&cx.pod.key);
        rejection(st)
    }

    /// The binding cycle's task, handed to the binder now, or when Permit's wait ends.
    pub(super) fn start_binding_cycle(&self, cx: CycleContext, qpi: QueuedPodInfo, a: Assumed) {
        let mut task = BindingTask {
            fwk: cx.fi,
            state: cx.state,
            qpi,
            assumed: a.pod.clone(),
            host: a.host,
            start: cx.start,
            cycle: cx.cycle,
            permit: None,
            pre_flight: None,
        };
        let Some(waits) = a.waits else {
            self.submit_binding(task, false);
            return;
        };
        // kube's binding cycle starts now and writes the nomination before it waits.
        let pre_flight = self.pre_bind_pre_flight(&mut task, true);
        if !pre_flight.is_success() && !pre_flight.is_skip() {
            // kube's binding cycle returns this error before WaitOnPermit; here the pod does
            // not wait at all.
            task.pre_flight = Some(pre_flight);
            self.submit_binding(task, true);
            return;
        }
        task.pre_flight = Some(pre_flight);
        // The binding cycle continues when the pod is allowed, rejected or times out.
        let me = self.me.clone();
        self.waiting_pods.add(
            a.pod,
            a.host,
            waits,
            Box::new(move |outcome| {
                if let Some(s) = me.upgrade() {
                    task.permit = Some(outcome);
                    s.submit_binding(task, true);
                }
            }),
        );
    }

    /// kube's `schedulePod`: the snapshot brought up to date; the nodes that fit; when more
    /// than one does, PreScore, Score and the host choice. With batching, what the cycle found
    /// is stored for the next pod (`scheduler/batch.rs`).
    pub(super) fn schedule_pod(&self, cx: &mut CycleContext) -> Result<Sym, Failure> {
        let mut snap = self.snapshot.lock();
        self.cache.update_snapshot(&mut snap);
        if let Some(keys) = &self.memo_keys {
            let mut keys = keys.lock();
            if keys.exhausted() {
                let n = snap.nodes.len();
                snap.memo.reset(n);
                keys.restart();
            }
        }
        self.keep_helpers_warm(cx.fwk, snap.nodes.len());
        if snap.nodes.is_empty() {
            return Err(no_nodes_available());
        }
        let fit = self.find_nodes_that_fit_pod(cx, &snap)?;
        let (host, others) = match (fit.alone, &fit.window, &fit.feasible[..]) {
            (Some(host), _, _) => (host, None),
            (None, Some(w), _) => self.prioritize_window(cx, &fit, w)?,
            (None, None, &[i]) => (fit.candidates.nodes().0[i].name(), None),
            _ => self.prioritize(cx, &fit, &fit.feasible, false)?,
        };
        if self.opportunistic_batching {
            let found = fit
                .window
                .as_ref()
                .map_or(fit.feasible.len(), Window::count);
            self.store_schedule_results(cx, fit.hint, host, others, found.saturating_sub(1));
        }
        Ok(host)
    }

    /// kube's `findNodesThatFitPod`: PreFilter; the pod's nominated node, or else the
    /// batch's hint, alone through Filter first (it is the pod's node when it passes;
    /// PreFilter's subset does not apply to it); else Filter over the nodes (the PreFilter
    /// result's subset when it names one). No node fits: a fit error.
    fn find_nodes_that_fit_pod<'s>(
        &self,
        cx: &mut CycleContext,
        snap: &'s Snapshot,
    ) -> Result<Fit<'s>, Failure> {
        let all = snap.nodes.len();
        let (pre, st, with_nodes) = cx.fwk.run_pre_filter(&mut cx.state, &cx.pod, snap);
        if !st.is_success() {
            return Err(pre_filter_failure(st, all, with_nodes));
        }
        let names = pre.and_then(|r| r.node_names);
        let candidates = match (&cx.placement_nodes, names) {
            // A pod-group placement: only its nodes, in its own order (kube's
            // `ListNodesInPlacement`), or PreFilter's subset of them in PreFilter's order.
            (Some(pl), Some(n)) => CandidateNodes::new(
                snap,
                Some(n.into_iter().filter(|x| pl.set.contains(x)).collect()),
            ),
            (Some(pl), None) if pl.indices.0 == snap.layout => {
                CandidateNodes::at(snap, &pl.indices.1)
            }
            (Some(pl), None) => CandidateNodes::new(snap, Some(pl.names.clone())),
            (None, names) => CandidateNodes::new(snap, names),
        };
        let hint = if self.opportunistic_batching {
            self.node_hint(cx, snap)
        } else {
            NodeHint::default()
        };
        // A node rejected alone stays in kube's diagnosis (it counts for the next start index
        // and in a fit error) even when the full pass does not reach it.
        let mut alone: Option<(Sym, Status)> = None;
        let nominated = cx.pod.nominated_node_name.filter(|n| !n.is_empty());
        let in_placement = |n: &Sym| {
            cx.placement_nodes
                .as_ref()
                .is_none_or(|p| p.set.contains(n))
        };
        if let Some(first) = nominated.or(hint.node).filter(in_placement) {
            match self.filter_alone(cx, snap, first) {
                Some(st) if st.is_success() => {
                    let (alone, feasible) = (Some(first), Vec::new());
                    return Ok(Fit {
                        hint,
                        candidates,
                        alone,
                        feasible,
                        window: None,
                    });
                }
                Some(st) if st.is_rejected() => alone = Some((first, st)),
                _ => {}
            }
        }
        if alone.is_none()
            && let Some(window) = self.try_filter_window(cx, &candidates)
        {
            return Ok(Fit {
                hint,
                candidates,
                alone: None,
                feasible: Vec::new(),
                window: Some(window),
            });
        }
        let outcome =
            self.find_nodes_that_pass_filters(cx, &candidates, alone.as_ref().map(|(n, _)| *n));
        if let Some(e) = outcome.error {
            return Err(rejection(e));
        }
        let nodes = candidates.nodes().0;
        if outcome.feasible.is_empty() {
            let excluded = (all - nodes.len(), &with_nodes[..]);
            return Err(fit_error(all, excluded, outcome.rejected, nodes, alone));
        }
        // The statuses are for a failure's diagnosis only.
        crate::framework::parallelize::recycle_rejected(outcome.rejected);
        let feasible = outcome.feasible;
        Ok(Fit {
            hint,
            candidates,
            alone: None,
            feasible,
            window: None,
        })
    }

    /// kube's `evaluateNominatedNode`: `node` alone through Filter, with the nominated pods.
    /// `None` for a node not in the snapshot (kube logs the error and filters every node).
    fn filter_alone(&self, cx: &CycleContext, snap: &Snapshot, node: Sym) -> Option<Status> {
        let &i = snap.index.get(&node)?;
        let t = Instant::now();
        let (fwk, state, pod) = (cx.fwk, &cx.state, &*cx.pod);
        let filters = fwk.active_filter_plugins(state, pod);
        let noms = cx.nominator.nominated_at_least_on(node, pod);
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
        if let Some(w) = &self.warm
            && !self.last_cycle_windowed.load(Ordering::Relaxed)
        {
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
    /// second pass when any are nominated. The start index moves on when the candidates are
    /// the snapshot's whole list.
    #[inline]
    fn find_nodes_that_pass_filters(
        &self,
        cx: &CycleContext,
        candidates: &CandidateNodes,
        rejected_alone: Option<Sym>,
    ) -> FilterOutcome {
        let (fwk, state, pod) = (cx.fwk, &cx.state, &*cx.pod);
        let (nodes, rows) = candidates.nodes();
        let t = Instant::now();
        let n = nodes.len();
        self.last_cycle_windowed.store(false, Ordering::Relaxed);
        let (num_to_find, start_index) = self.filter_plan(fwk, n);
        let filters = fwk.active_filter_plugins(state, pod);
        // Fanning out costs a few microseconds of wake-ups; it pays only for big evaluations:
        // many feasible nodes wanted, or (most nodes rejected) many walked last time.
        let pool = self.pool.as_deref().filter(|_| {
            num_to_find >= PARALLEL_MIN_NODES
                || self.last_filter_scan.load(Ordering::Relaxed) >= PARALLEL_MIN_NODES
        });
        // (No map at all in the usual case: even an empty AHashMap draws random keys.)
        let nominated = if cx.nominator.is_empty() {
            None
        } else {
            Some(cx.nominator.nominated_at_least(pod)).filter(|m| !m.is_empty())
        };
        let ordered = self.deterministic;
        let snap = candidates.snap;
        let memo = (candidates.whole_list() && nominated.is_none() && snap.memo.covers(n))
            .then(|| {
                let plugins = fwk.filter_memo_plugins(&filters, pod);
                self.memo_id(fwk, &cx.pod, MemoPoint::Filter, plugins)
            })
            .flatten()
            .map(|id| (&snap.memo, id));
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
                    let judge = |a: usize, b: usize, v: &mut BlockVerdicts| {
                        let (nodes, rows) = (&block[a..b], &block_rows[a..b]);
                        Framework::run_filter_plugins_block(&filters, state, pod, nodes, rows, v)
                    };
                    match memo {
                        None => judge(0, len, verdicts),
                        Some((m, id)) => {
                            let mask = m.passed_mask(first, len, id);
                            let known =
                                node_memo::filter_block(m, id, (first, len), mask, verdicts, judge);
                            self.stats.memo.note(MemoPoint::Filter, known, len);
                        }
                    }
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
        if n > 0 && candidates.whole_list() {
            self.next_start_node_index.store(
                (start_index + processed) % candidates.all(),
                Ordering::Relaxed,
            );
        }
        outcome
    }

    /// `numFeasibleNodesToFind` and the start index of a Filter pass over `n` candidates.
    fn filter_plan(&self, fwk: &Framework, n: usize) -> (usize, usize) {
        let pct = fwk.percentage_of_nodes_to_score.or(self.global_pct);
        let num_to_find = if fwk.has_score_plugins() {
            num_feasible_nodes_to_find(pct, n)
        } else {
            1
        };
        let start_index = if n == 0 {
            0
        } else {
            self.next_start_node_index.load(Ordering::Relaxed) % n
        };
        (num_to_find, start_index)
    }

    /// The window path's Filter (`window.rs`), where it applies: the snapshot's whole list,
    /// the memo kept and keyed for this pod's filters, no nominated pod to add. Moves the
    /// start index on as `find_nodes_that_pass_filters` does. None: the usual pass runs.
    fn try_filter_window(&self, cx: &CycleContext, candidates: &CandidateNodes) -> Option<Window> {
        let snap = candidates.snap;
        let n = snap.nodes.len();
        let usable = self.memo_window && candidates.whole_list() && snap.memo.covers(n);
        if !usable
            || !(cx.nominator.is_empty() || cx.nominator.nominated_at_least(&cx.pod).is_empty())
        {
            return None;
        }
        let (fwk, state, pod) = (cx.fwk, &cx.state, &*cx.pod);
        let filters = fwk.active_filter_plugins(state, pod);
        let plugins = fwk.filter_memo_plugins(&filters, pod);
        let id = self.memo_id(fwk, &cx.pod, MemoPoint::Filter, plugins)?;
        let t = Instant::now();
        let (num_to_find, start_index) = self.filter_plan(fwk, n);
        let (window, processed) =
            self.filter_window(&filters, state, pod, snap, id, start_index, num_to_find)?;
        fwk.observe_phase(ExtensionPoint::Filter, Code::Success, t.elapsed());
        self.last_filter_scan.store(processed, Ordering::Relaxed);
        self.next_start_node_index
            .store((start_index + processed) % n, Ordering::Relaxed);
        Some(window)
    }

    /// kube's `prioritizeNodes` and `selectHost` over the window path's feasible nodes:
    /// PreScore with the first of them (when no PreScore plugin reads them) and Score from
    /// the memo (`window.rs`); otherwise the window listed and the usual path.
    fn prioritize_window(
        &self,
        cx: &mut CycleContext,
        fit: &Fit,
        w: &Window,
    ) -> Result<(Sym, Option<SortedScoredNodes>), Failure> {
        let snap = fit.candidates.snap;
        let first = w.first(&snap.memo).unwrap_or(0);
        if w.count() == 1 {
            return Ok((snap.nodes[first].name(), None));
        }
        let keep = self.opportunistic_batching && fit.hint.signature.is_some();
        if keep || cx.fwk.pre_score_reads_nodes(&cx.pod, snap) {
            let listed: Vec<usize> = w.indices(&snap.memo).collect();
            return self.prioritize(cx, fit, &listed, false);
        }
        let st = cx
            .fwk
            .run_pre_score(&mut cx.state, &cx.pod, &[&*snap.nodes[first]], snap);
        if !st.is_success() {
            return Err(rejection(st));
        }
        let t = Instant::now();
        match self.score_window(cx.fwk, &cx.state, &cx.pod, snap, w) {
            Some(Ok(i)) => {
                cx.fwk
                    .observe_phase(ExtensionPoint::Score, Code::Success, t.elapsed());
                self.stats.window_cycles.fetch_add(1, Ordering::Relaxed);
                self.last_cycle_windowed.store(true, Ordering::Relaxed);
                Ok((snap.nodes[i].name(), None))
            }
            Some(Err(st)) => {
                cx.fwk
                    .observe_phase(ExtensionPoint::Score, Code::Error, t.elapsed());
                Err(rejection(st))
            }
            None => {
                let listed: Vec<usize> = w.indices(&snap.memo).collect();
                self.prioritize(cx, fit, &listed, true)
            }
        }
    }

    /// kube's `prioritizeNodes` and `selectHost` over the feasible nodes (`idx`, into the
    /// candidates): PreScore unless `pre_scored`, then Score and the host choice
    /// (`score.rs`); with batching and a signed pod, the other scored nodes kept for the
    /// next pod.
    #[inline]
    fn prioritize(
        &self,
        cx: &mut CycleContext,
        fit: &Fit,
        idx: &[usize],
        pre_scored: bool,
    ) -> Result<(Sym, Option<SortedScoredNodes>), Failure> {
        let keep = self.opportunistic_batching && fit.hint.signature.is_some();
        let (nodes, rows) = fit.candidates.nodes();
        self.last_cycle_windowed.store(false, Ordering::Relaxed);
        let feasible: Vec<&NodeInfo> = idx.iter().map(|&i| &*nodes[i]).collect();
        if !pre_scored {
            let st = cx
                .fwk
                .run_pre_score(&mut cx.state, &cx.pod, &feasible, fit.candidates.snap);
            if !st.is_success() {
                return Err(rejection(st));
            }
        }
        let (fwk, state, pod) = (cx.fwk, &cx.state, &*cx.pod);
        let t = Instant::now();
        let mut scratch = self.score_scratch.lock();
        scratch.keep_raw = keep;
        // The node memo reads the feasible nodes' snapshot indices: only on the whole list.
        let snap = fit.candidates.snap;
        let memo = (fit.candidates.whole_list() && snap.memo.covers(snap.nodes.len()))
            .then_some((&snap.memo, &cx.pod));
        let scored = self.score_nodes(fwk, state, pod, &feasible, (idx, rows), &mut scratch, memo);
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
