//! The pod-group scheduling cycle (kube v1.37.2's `pkg/scheduler/schedule_one_podgroup.go`,
//! for a PodGroup root; a composite tree takes `schedule_one_composite.rs`): a popped
//! [`QueuedPodGroupInfo`] is placed as a whole.
//!
//! # Protocol
//!
//! 1. **Snapshot and validation** (`schedule_one_pod_group`): the group object as the
//!    scheduler knows it now replaces the queued one (gone: an error for every member);
//!    every member, queued or already scheduled, must have the same scheduler name, the
//!    group's priority and the same preemption policy (kube's messages); members being
//!    deleted or already assumed are skipped (`skipPodGroupPodSchedule`).
//! 2. **Algorithm** (`run_root_algorithm`): without TopologyAwareWorkloadScheduling, the
//!    default algorithm over every node; with it, the placement algorithm: PlacementGenerate,
//!    then the default algorithm restricted to each placement's nodes (its changes reverted
//!    after each), and PlacementScore to pick the best feasible placement (ties broken at
//!    random, as kube's `Randomizer`).
//! 3. **Default algorithm** (`default_algorithm`): PlacementFeasible before the first member
//!    (Unschedulable: stop), then each member through the pod cycle's schedulePod (no
//!    PostFilter), assumed and reserved when it fits (so later members see it), and
//!    PlacementFeasible after each (Unschedulable: stop early; Wait at the end:
//!    Unschedulable). Everything assumed is reverted (Unreserve, forget) before results are
//!    submitted: the simulation leaves nothing behind.
//! 4. **PodGroupPostFilter** on an Unschedulable group, with the rerun of step 2.
//! 5. **Submit** (`submit`): a successful group's fitting members are assumed, reserved and
//!    permitted again and go to their binding cycles, the others to the failure handler; a
//!    rejected or failed group sends every member to the failure handler with the group's
//!    status (nothing binds). The PodGroup's `PodGroupInitiallyScheduled` condition is set
//!    (never from True back to False), the attempt is counted in
//!    `scheduler_podgroup_schedule_attempts_total` and timed, and the queue gets the group
//!    back (`add_attempted_pod_group`).

use crate::api::{Pod, Sym};
use crate::framework::cycle_state::PodGroupCycleData;
use crate::framework::metrics::{PodGroupAttempt, Series, names};
use crate::framework::pod_group::{
    Placement, PlacementProgress, PodGroupAssignments, ProposedAssignment, QueuedPodGroupInfo,
};
use crate::framework::pod_group_state::PodGroupState;
use crate::framework::{Code, CycleState, QueuedPodInfo, Status};
use ahash::AHashSet;
use rand::Rng;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::Scheduler;
use super::cycle::{CycleContext, PlacementNodes};
use super::failure::{Failure, rejection};

/// kube's `errPodGroupUnschedulable`.
const POD_GROUP_UNSCHEDULABLE: &str = "pod group is unschedulable";

/// One member's outcome (kube's `algorithmResult`).
pub(super) struct PodResult {
    /// Index into the group's `pods`.
    pub(super) index: usize,
    pub(super) host: Option<Sym>,
    pub(super) state: CycleState,
    pub(super) failure: Option<Failure>,
    pub(super) start: Instant,
}

impl PodResult {
    pub(super) fn ok(&self) -> bool {
        self.host.is_some() && self.failure.is_none()
    }
}

/// One group's outcome (kube's `podGroupAlgorithmResult`).
pub(super) struct GroupResult {
    pub(super) results: Vec<PodResult>,
    pub(super) status: Status,
    pub(super) any_scheduled: bool,
    pub(super) placement: Option<Arc<Placement>>,
    pub(super) placement_state: CycleState,
}

/// What a simulation assumed, to undo (kube's `revertFns`).
struct Revert {
    pod: Arc<Pod>,
    host: Sym,
    state_index: usize,
}

/// kube's wrapping of a PlacementFeasible error.
pub(super) fn feasibility_error(st: &Status) -> Status {
    Status::error(format!(
        "failed to evaluate placement feasibility: {}",
        st.message()
    ))
}

pub(super) fn unschedulable(msg: impl Into<String>) -> Status {
    let msg = msg.into();
    Status::new(
        Code::Unschedulable,
        if msg.is_empty() {
            POD_GROUP_UNSCHEDULABLE.to_string()
        } else {
            msg
        },
    )
}

impl Scheduler {
    /// kube's `scheduleOnePodGroup`.
    pub(super) fn schedule_one_pod_group(&self, mut g: QueuedPodGroupInfo) {
        if g.info.is_composite() {
            self.schedule_one_tree(g);
            return;
        }
        let start = Instant::now();
        let groups = self.cache.pod_groups().clone();
        match groups.pod_group(g.key()) {
            Some(pg) => g.info.pod_group = Some(pg),
            None => {
                g.info.pod_group = None;
                let msg = format!("podgroup.scheduling.k8s.io \"{}\" not found", g.key().name);
                self.pod_group_failure_before_scheduling(g, Status::error(msg), start);
                return;
            }
        }
        let state = groups.get(g.key()).unwrap_or_default();
        if let Err(msg) = self.validate_pod_group(&g, &state) {
            self.pod_group_failure_before_scheduling(g, Status::error(msg), start);
            return;
        }
        let Some(fi) = g.pods.first().and_then(|p| self.framework_for(&p.pod)) else {
            for p in &g.pods {
                self.queue.done(&p.pod.key);
            }
            // The attempt ends: members that arrived meanwhile are requeued.
            let _ = self.queue.add_attempted_pod_group(&g, &Status::success());
            return;
        };
        // kube's skipPodGroupPodSchedule.
        let mut kept = Vec::with_capacity(g.pods.len());
        for p in std::mem::take(&mut g.pods) {
            if p.pod.deletion_timestamp || self.cache.is_assumed(&p.pod.key) {
                self.queue.done(&p.pod.key);
            } else {
                kept.push(p);
            }
        }
        g.info.unscheduled_pods = kept.iter().map(|p| p.pod.clone()).collect();
        g.pods = kept;
        if g.pods.is_empty() {
            let _ = self.queue.add_attempted_pod_group(&g, &Status::success());
            return;
        }
        self.pod_group_cycle(fi, g, start);
    }

    /// kube's `validatePodGroup`.
    pub(super) fn validate_pod_group(
        &self,
        g: &QueuedPodGroupInfo,
        state: &PodGroupState,
    ) -> Result<(), String> {
        let group_priority = g.priority();
        let pg = g.info.pod_group.as_ref();
        let policy_of = |never: bool| {
            if never {
                "Never"
            } else {
                "PreemptLowerPriority"
            }
        };
        let mut group_policy: Option<&'static str> = None;
        if self.features.pod_group_preemption_policy {
            group_policy = Some(policy_of(pg.is_some_and(|p| p.preempt_never)));
        }
        let mut scheduler_name: Option<Sym> = None;
        let members = g.pods.iter().map(|p| &p.pod).chain(state.scheduled_pods());
        for pod in members {
            let name = *scheduler_name.get_or_insert(pod.spec.scheduler_name);
            if pod.spec.scheduler_name != name {
                return Err(format!(
                    "all pods in a single pod group should have the same .spec.schedulerName set, got: {:?} and {:?}",
                    pod.spec.scheduler_name.to_string_lossy(),
                    name.to_string_lossy()
                ));
            }
            if pod.priority() != group_priority {
                return Err(format!(
                    "all pods in a single pod group should have the same priority as the pod group's priority, got {} and {}",
                    pod.priority(),
                    group_priority
                ));
            }
            let p = policy_of(pod.spec.preempt_never);
            if self.features.pod_group_preemption_policy {
                let gp = group_policy.unwrap_or("PreemptLowerPriority");
                if p != gp {
                    return Err(format!(
                        "all pods in a single pod group should have the same preemption policy as the pod group's preemption policy, got {p} and {gp}"
                    ));
                }
            } else {
                match group_policy {
                    None => group_policy = Some(p),
                    Some(gp) if gp != p => {
                        return Err(format!(
                            "all pods in a single pod group should have the same preemption policy, got {p} and {gp}"
                        ));
                    }
                    _ => {}
                }
            }
        }
        if let Some(name) = scheduler_name
            && !self.frameworks.iter().any(|f| f.scheduler_name == name)
        {
            return Err(format!(
                "profile not found for scheduler name {:?}",
                name.to_string_lossy()
            ));
        }
        Ok(())
    }

    /// kube's `handlePodGroupFailureBeforeScheduling`.
    pub(super) fn pod_group_failure_before_scheduling(
        &self,
        g: QueuedPodGroupInfo,
        st: Status,
        start: Instant,
    ) {
        let cycle = self.queue.scheduling_cycle();
        for p in &g.pods {
            if self.framework_for(&p.pod).is_none() {
                self.queue.done(&p.pod.key);
                continue;
            }
            let f = Failure {
                status: st.clone(),
                diagnosis: None,
                nominated: Some(Sym::EMPTY),
            };
            self.handle_scheduling_failure(p.clone(), f, start, cycle);
        }
        if let Some(pg) = &g.info.pod_group {
            self.client
                .set_pod_group_scheduled(pg, false, "SchedulerError", &st.message());
        }
        let _ = self.queue.add_attempted_pod_group(&g, &st);
    }

    /// kube's `podGroupCycle`.
    fn pod_group_cycle(&self, fi: usize, g: QueuedPodGroupInfo, start: Instant) {
        let mut group_state = CycleState::for_pod_group();
        group_state.record_plugin_metrics = crate::framework::metrics::sample_plugin_metrics();
        let mut result = self.run_root_algorithm(fi, &mut group_state, &g);
        self.complete_results(&g, &mut result);
        self.metrics.observe(
            Series::PodGroupAlgorithmDuration,
            start.elapsed().as_nanos() as u64,
        );
        let root_status = result.status.clone();
        if result.status.code() == Code::Unschedulable
            && self.frameworks[fi].has_pod_group_post_filter_plugins()
        {
            self.run_pod_group_post_filter(fi, &mut group_state, &g, &mut result);
        }
        self.submit(fi, g, result, start, root_status);
    }

    /// kube's `runRootSchedulingAlgorithm`: the algorithm, then every assumption reverted.
    fn run_root_algorithm(
        &self,
        fi: usize,
        group_state: &mut CycleState,
        g: &QueuedPodGroupInfo,
    ) -> GroupResult {
        let mut reverts = Vec::new();
        let mut result = if self.features.topology_aware_workload_scheduling {
            self.placement_algorithm(fi, group_state, g, None)
        } else {
            self.default_algorithm(fi, group_state, g, None, &mut reverts)
        };
        self.revert(fi, &mut result.results, reverts);
        if result.status.is_success() && !result.any_scheduled {
            result.status = unschedulable("");
        }
        result
    }

    /// Undoes a simulation's assumptions, last first (kube's `revertFns.revert`).
    fn revert(&self, fi: usize, results: &mut [PodResult], reverts: Vec<Revert>) {
        let fwk = &self.frameworks[fi];
        for r in reverts.into_iter().rev() {
            let state = &mut results[r.state_index].state;
            fwk.run_unreserve(state, &r.pod, r.host);
            self.cache.forget_pod(&r.pod.key);
            if let Some(n) = r.pod.nominated_node_name.filter(|n| !n.is_empty()) {
                self.queue
                    .nominator
                    .add(&r.pod, crate::framework::Nominating::Override(n));
            }
        }
    }

    /// kube's `podGroupSchedulingDefaultAlgorithm` on `placement`'s nodes (all: `None`).
    fn default_algorithm(
        &self,
        fi: usize,
        group_state: &CycleState,
        g: &QueuedPodGroupInfo,
        placement: Option<Arc<Placement>>,
        reverts: &mut Vec<Revert>,
    ) -> GroupResult {
        let fwk = &self.frameworks[fi];
        let mut placement_state = CycleState::new();
        // The indices are checked against the snapshot's layout at each member attempt, so
        // the snapshot need not be refreshed here (each attempt refreshes it).
        let nodes = placement
            .as_ref()
            .and_then(|p| PlacementNodes::of(p, &self.snapshot.lock()));
        let scheduled = self.cache.pod_groups().scheduled_pods_count(g.key());
        let mut progress = PlacementProgress {
            remaining: g.pods.len(),
            scheduled,
        };
        let mut out = GroupResult {
            results: Vec::with_capacity(g.pods.len()),
            status: unschedulable(""),
            any_scheduled: false,
            placement,
            placement_state: CycleState::new(),
        };
        let st = fwk.run_placement_feasible(group_state, &mut placement_state, &g.info, progress);
        let first_reverts = reverts.len();
        if st.code() == Code::Error {
            out.status = feasibility_error(&st);
            out.placement_state = placement_state;
            return out;
        }
        if st.code() == Code::Unschedulable {
            out.status = unschedulable(st.message());
            out.placement_state = placement_state;
            return out;
        }
        out.status = st;
        let mut any = false;
        for (index, q) in g.pods.iter().enumerate() {
            let group = group_state.pod_group_data.clone();
            let r = self.member_algorithm(fi, q, nodes.clone(), group, index, reverts);
            let ok = r.ok();
            let failed_hard = r
                .failure
                .as_ref()
                .is_some_and(|f| !f.status.is_success() && !f.status.is_rejected());
            let err = r.failure.as_ref().map(|f| f.status.message());
            out.results.push(r);
            if failed_hard {
                out.status = Status::error(format!(
                    "failed to schedule other pod from a pod group: {}",
                    err.unwrap_or_default()
                ));
                break;
            }
            progress.remaining -= 1;
            if ok {
                progress.scheduled += 1;
            }
            let st =
                fwk.run_placement_feasible(group_state, &mut placement_state, &g.info, progress);
            if st.code() == Code::Error {
                out.status = feasibility_error(&st);
                break;
            }
            let stop = st.code() == Code::Unschedulable;
            out.status = st;
            if stop {
                break;
            }
            any |= ok;
        }
        if out.status.is_wait() || out.status.code() == Code::Unschedulable {
            out.status = unschedulable(out.status.message());
        }
        if !out.status.is_success() {
            // kube's deferred revert on failure: this group's assumptions go now.
            let mine = reverts.split_off(first_reverts);
            self.revert(fi, &mut out.results, mine);
            any = false;
        }
        out.any_scheduled = any;
        out.placement_state = placement_state;
        out
    }

    /// kube's `podGroupPodSchedulingAlgorithm`: one member through schedulePod, then assume
    /// and Reserve so that the next members see it.
    fn member_algorithm(
        &self,
        fi: usize,
        q: &QueuedPodInfo,
        nodes: Option<Arc<PlacementNodes>>,
        group: Option<Arc<PodGroupCycleData>>,
        index: usize,
        reverts: &mut Vec<Revert>,
    ) -> PodResult {
        let start = Instant::now();
        let mut cx = self.member_cycle(fi, q.pod.clone(), nodes);
        cx.state.pod_group_data = group;
        let host = match self.schedule_pod(&mut cx) {
            Ok(h) => h,
            Err(f) => {
                return PodResult {
                    index,
                    host: None,
                    state: cx.state,
                    failure: Some(f),
                    start,
                };
            }
        };
        let assumed = match self.assume(&cx.pod, host) {
            Ok(a) => a,
            Err(f) => {
                return PodResult {
                    index,
                    host: None,
                    state: cx.state,
                    failure: Some(f),
                    start,
                };
            }
        };
        let st = cx.fwk.run_reserve(&mut cx.state, &assumed, host);
        if !st.is_success() {
            let f = self.unreserve(&mut cx, &assumed, host, st);
            return PodResult {
                index,
                host: None,
                state: cx.state,
                failure: Some(f),
                start,
            };
        }
        self.queue.nominator.delete(&q.pod.key);
        reverts.push(Revert {
            pod: q.pod.clone(),
            host,
            state_index: index,
        });
        PodResult {
            index,
            host: Some(host),
            state: cx.state,
            failure: None,
            start,
        }
    }

    /// A member's cycle context: a fresh cycle state marked as a pod-group cycle, restricted
    /// to a placement's nodes.
    pub(super) fn member_cycle(
        &self,
        fi: usize,
        pod: Arc<Pod>,
        nodes: Option<Arc<PlacementNodes>>,
    ) -> CycleContext<'_> {
        let mut state = CycleState::new();
        state.record_plugin_metrics = crate::framework::metrics::sample_plugin_metrics();
        state.pod_group_cycle = true;
        CycleContext {
            fi,
            fwk: &self.frameworks[fi],
            pod,
            state,
            nominator: &self.queue.nominator,
            cycle: self.queue.scheduling_cycle(),
            start: Instant::now(),
            placement_nodes: nodes,
        }
    }

    /// kube's `podGroupSchedulingPlacementAlgorithm`.
    /// `parent`: the nodes of the placement the group's composite parent is being tried
    /// in (kube's `ListNodesInPlacement`); `None`: every node of the snapshot.
    pub(super) fn placement_algorithm(
        &self,
        fi: usize,
        group_state: &mut CycleState,
        g: &QueuedPodGroupInfo,
        parent: Option<&Arc<Placement>>,
    ) -> GroupResult {
        let fwk = &self.frameworks[fi];
        let all_nodes = self.placement_nodes(parent);
        group_state.record_plugin_metrics = true;
        let (placements, st) = fwk.run_placement_generate(group_state, &g.info, all_nodes);
        let empty = |status: Status| GroupResult {
            results: Vec::new(),
            status,
            any_scheduled: false,
            placement: None,
            placement_state: CycleState::new(),
        };
        if !st.is_success() {
            return empty(st);
        }
        let profile = fwk.scheduler_name;
        self.metrics.add_pod_group_counter(
            names::GENERATED_PLACEMENTS,
            profile,
            None,
            placements.len() as u64,
        );
        let mut first: Option<GroupResult> = None;
        let mut feasible: Vec<GroupResult> = Vec::new();
        for p in &placements {
            let t = Instant::now();
            let mut reverts = Vec::new();
            let mut r = self.default_algorithm(fi, group_state, g, Some(p.clone()), &mut reverts);
            self.revert(fi, &mut r.results, reverts);
            if r.status.code() == Code::Error {
                return r;
            }
            let ok = r.status.is_success();
            self.observe_placement_evaluation(profile, ok, t);
            if ok {
                feasible.push(r);
            } else if first.is_none() {
                first = Some(r);
            }
        }
        if feasible.is_empty() {
            let mut r = first.unwrap_or_else(|| empty(unschedulable("")));
            r.status = unschedulable(format!(
                "0/{} placements are available, first placement status: {}",
                placements.len(),
                r.status.message()
            ));
            return r;
        }
        if feasible.len() == 1 {
            return feasible.pop().expect("one");
        }
        let g2 = &g.info;
        let assignments: Vec<PodGroupAssignments> =
            feasible.iter().map(|r| Self::assignments(g, r)).collect();
        let states: Vec<CycleState> = feasible.iter().map(|r| r.placement_state.clone()).collect();
        let (scores, st) = fwk.run_placement_score(group_state, g2, &assignments, &states);
        if !st.is_success() {
            return empty(st);
        }
        let best = self.best_placement_score(&scores);
        feasible.swap_remove(best)
    }

    /// kube's `ListNodesInPlacement`: the current snapshot's nodes of the placement the
    /// caller is tried in (with what earlier siblings assumed), or every node.
    pub(super) fn placement_nodes(
        &self,
        parent: Option<&Arc<Placement>>,
    ) -> Vec<Arc<crate::framework::NodeInfo>> {
        let mut snap = self.snapshot.lock();
        self.cache.update_snapshot(&mut snap);
        match parent {
            Some(p) => p
                .nodes
                .iter()
                .filter_map(|n| snap.get(n.name()).cloned())
                .collect(),
            None => snap.nodes.clone(),
        }
    }

    /// kube's `ObservePlacementEvaluation`: one placement tried, feasible or not, and how
    /// long it took.
    pub(super) fn observe_placement_evaluation(&self, profile: Sym, ok: bool, t: Instant) {
        self.metrics.observe(
            Series::PlacementEvaluationDuration(ok),
            t.elapsed().as_nanos() as u64,
        );
        let result = if ok { "feasible" } else { "infeasible" };
        self.metrics
            .add_pod_group_counter(names::PLACEMENT_EVALUATIONS, profile, Some(result), 1);
    }

    /// kube's `findBestPlacement` choice: the highest total score, ties broken at random
    /// (kube's `Randomizer`).
    pub(super) fn best_placement_score(
        &self,
        scores: &[crate::framework::pod_group::PlacementPluginScores],
    ) -> usize {
        let mut rng = self.rng.lock();
        let mut best = 0;
        let mut best_rand: u64 = rng.random();
        for (i, s) in scores.iter().enumerate().skip(1) {
            let r: u64 = rng.random();
            if s.total_score > scores[best].total_score
                || (s.total_score == scores[best].total_score && r > best_rand)
            {
                best = i;
                best_rand = r;
            }
        }
        best
    }

    /// kube's `makeProposedAssignments` for one result.
    pub(super) fn assignments(g: &QueuedPodGroupInfo, r: &GroupResult) -> PodGroupAssignments {
        PodGroupAssignments {
            placement: r.placement.clone(),
            proposed_assignments: r
                .results
                .iter()
                .filter(|p| p.ok())
                .map(|p| ProposedAssignment {
                    pod: g.pods[p.index].pod.clone(),
                    node_name: p.host.expect("ok"),
                    cycle_state: Arc::new(p.state.clone()),
                })
                .collect(),
        }
    }

    /// kube's `completePodGroupAlgorithmResult`: a result for every member (those not tried
    /// carry the group's status).
    pub(super) fn complete_results(&self, g: &QueuedPodGroupInfo, r: &mut GroupResult) {
        let tried: AHashSet<usize> = r.results.iter().map(|p| p.index).collect();
        for index in 0..g.pods.len() {
            if !tried.contains(&index) {
                let mut state = CycleState::new();
                state.pod_group_cycle = true;
                r.results.push(PodResult {
                    index,
                    host: None,
                    state,
                    failure: Some(rejection(r.status.clone())),
                    start: Instant::now(),
                });
            }
        }
        r.results.sort_by_key(|p| p.index);
    }

    /// kube's PodGroupPostFilter call site: the plugins may change the snapshot and rerun
    /// the algorithm; their nominations go to the members, their message to the status.
    fn run_pod_group_post_filter(
        &self,
        fi: usize,
        group_state: &mut CycleState,
        g: &QueuedPodGroupInfo,
        result: &mut GroupResult,
    ) {
        let fwk = &self.frameworks[fi];
        let mut handle = super::pod_group_handle::GroupHandle::new(self, fi, g);
        let (r, st) = fwk.run_pod_group_post_filter(&mut handle, group_state, &g.info);
        drop(handle);
        if let Some(r) = r {
            for (key, nom) in r.nominating_infos {
                if let Some(p) = result
                    .results
                    .iter_mut()
                    .find(|p| g.pods[p.index].pod.key == key)
                    && let Some(f) = p.failure.as_mut()
                    && let crate::framework::Nominating::Override(n) = nom
                {
                    f.nominated = Some(n);
                }
            }
        }
        if st.code() == Code::Error {
            result.status = st;
        } else {
            // kube's `AppendReason(status.String())`: the plugins' reasons, joined, become
            // one more reason of the group's status (its message joins them with ", ").
            let mut reasons = result.status.reasons().to_vec();
            reasons.push(st.message().into());
            result.status = Status::with_reasons(result.status.code(), reasons)
                .with_plugin(result.status.plugin());
        }
    }

    /// The rerun a PodGroupPostFilter plugin asks for (kube's `pgSchedulingFunc`).
    pub(super) fn rerun_pod_group(
        &self,
        fi: usize,
        g: &QueuedPodGroupInfo,
    ) -> (PodGroupAssignments, Status) {
        if g.info.is_composite() {
            return self.rerun_tree(fi, g);
        }
        let mut group_state = CycleState::for_pod_group();
        let r = self.run_root_algorithm(fi, &mut group_state, g);
        let mut a = Self::assignments(g, &r);
        a.placement = None;
        (a, r.status)
    }

    /// kube's `submitPodGroupAlgorithmResult`.
    fn submit(
        &self,
        fi: usize,
        g: QueuedPodGroupInfo,
        result: GroupResult,
        start: Instant,
        root_status: Status,
    ) {
        let cycle = self.queue.scheduling_cycle();
        let status = result.status.clone();
        // One attempt per member, as a pod's own cycle counts one (the summary's `attempts`).
        self.stats
            .attempts
            .fetch_add(result.results.len() as u64, Ordering::Relaxed);
        for r in result.results {
            let q = g.pods[r.index].clone();
            if status.is_success() && r.ok() {
                self.submit_member(fi, q, r, cycle);
                continue;
            }
            let f = if !status.is_success() && !status.is_rejected() {
                // The group failed with an error: each member with its own error, or the group's.
                match r.failure {
                    Some(f) if !f.status.is_success() && !f.status.is_rejected() => f,
                    _ => Failure {
                        status: status.clone(),
                        diagnosis: None,
                        nominated: Some(Sym::EMPTY),
                    },
                }
            } else if r.ok() {
                // Fits, but the group does not: Unschedulable with the group's message.
                Failure {
                    status: Status::new(Code::Unschedulable, status.message())
                        .with_plugin(status.plugin()),
                    diagnosis: None,
                    nominated: Some(Sym::EMPTY),
                }
            } else {
                r.failure
                    .unwrap_or_else(|| rejection(unschedulable(status.message())))
            };
            self.handle_scheduling_failure(q, f, r.start, cycle);
        }
        let profile = self.frameworks[fi].scheduler_name;
        let (outcome, scheduled, reason) = if status.is_success() {
            (PodGroupAttempt::Scheduled, true, "Scheduled")
        } else if status.is_rejected() {
            (PodGroupAttempt::Unschedulable, false, "Unschedulable")
        } else {
            (PodGroupAttempt::Error, false, "SchedulerError")
        };
        if let Some(pg) = &g.info.pod_group
            && (scheduled || !pg.scheduled)
        {
            self.client
                .set_pod_group_scheduled(pg, scheduled, reason, &status.message());
        }
        self.metrics
            .observe_pod_group_attempt(outcome, profile, start.elapsed().as_nanos() as u64);
        let _ = self.queue.add_attempted_pod_group(&g, &root_status);
    }

    /// kube's `prepareForBindingCycle` and the binding cycle for a member of a group that
    /// fits: assume, Reserve, Permit again (the simulation was undone).
    pub(super) fn submit_member(&self, fi: usize, q: QueuedPodInfo, r: PodResult, cycle: i64) {
        let host = r.host.expect("a member that fits has a host");
        let mut cx = self.member_cycle(fi, q.pod.clone(), None);
        cx.state = r.state;
        cx.state.pod_group_cycle = false;
        cx.state.pod_group_data = None;
        cx.cycle = cycle;
        cx.start = r.start;
        match self.reserve_and_permit(&mut cx, host) {
            Ok(a) => self.start_binding_cycle(cx, q, a),
            Err(f) => self.handle_scheduling_failure(q, f, r.start, cycle),
        }
    }
}
