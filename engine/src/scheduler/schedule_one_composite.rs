//! The composite pod-group cycle: a popped tree of CompositePodGroups over PodGroups
//! (kube v1.38.0-beta.0's `algorithm_podgroup.go` `RunRootSchedulingAlgorithm` on a composite
//! root, and `schedule_one_podgroup.go`'s tree submission) placed as one.
//!
//! # Protocol
//!
//! 1. **Validation**: every group of the tree has the root's priority; each leaf passes the
//!    PodGroup checks (scheduler name, priority, preemption policy of its members).
//! 2. **Recursive algorithm** (`recursive`): a PodGroup leaf runs the placement algorithm of
//!    `schedule_one_podgroup.rs` inside its parent's placement (its placements are generated
//!    from the parent placement's nodes; every simulation is reverted); a composite node runs
//!    `composite_placement`: PlacementGenerate over its parent's nodes, and per placement
//!    `composite_default`: PlacementFeasible on the children count before the first child,
//!    then each child recursively, PlacementFeasible after each (Unschedulable: stop), and
//!    the chosen result of a successful child that is not the last assumed and reserved in
//!    the cache so that its later siblings see it (kube's `assumeSubtreeWithRevert`). Every
//!    assumption is reverted after the placement; the feasible placements are scored with the
//!    combined assignments of their successful leaves and the best one's subtree results are
//!    kept. The composite gate needs TopologyAwareWorkloadScheduling (kube refuses the one
//!    without the other), so leaves always take the placement path.
//! 3. **Completion**: a root that succeeds without scheduling a pod is Unschedulable ("no
//!    pods were schedulable"); statuses are completed top down (kube's
//!    `completeCompositePodGroupAlgorithmResultMap`): a node not evaluated, or successful
//!    under a failed ancestor, takes the ancestor's failure.
//! 4. **Submission**, per leaf: members that fit in a leaf whose status (and every
//!    ancestor's) is Success go to their binding cycles; the others to the failure handler.
//!    The attempt is counted once for the tree, and the queue gets the tree back.
//!
//! 5. **PodGroupPostFilter** on an Unschedulable root: the plugins see the root (its
//!    preemptors every leaf's unscheduled pods) and rerun the whole tree on the cache as they
//!    changed it (`rerun_tree`); nominations go to the members, an error to every group's
//!    status, a message appended to each.

use super::Scheduler;
use super::failure::{Failure, rejection};
use super::schedule_one_podgroup::{GroupResult, feasibility_error, unschedulable};
use crate::api::{Pod, PodGroupKey, Sym};
use crate::framework::metrics::{PodGroupAttempt, Series, names};
use crate::framework::pod_group::{
    Placement, PlacementProgress, PodGroupAssignments, PodGroupInfo, ProposedAssignment,
    QueuedPodGroupInfo,
};
use crate::framework::{Code, CycleState, Status};
use ahash::AHashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// A node of the tree: its kind (true: composite) and key.
type NodeKey = (bool, PodGroupKey);

fn node_key(n: &PodGroupInfo) -> NodeKey {
    (n.is_composite(), n.key.clone())
}

/// One node's outcome (kube's `PodGroupScheduledResult` in the results map).
struct NodeResult {
    status: Status,
    any_scheduled: bool,
    /// A leaf's member results (indices into its view's `pods`).
    leaf: Option<GroupResult>,
    placement_state: CycleState,
}

type Results = AHashMap<NodeKey, NodeResult>;

/// A member assumed and reserved for later siblings to see, to undo.
struct TreeRevert {
    pod: Arc<Pod>,
    host: Sym,
    state: CycleState,
}

/// The queued members of each leaf, as a PodGroup's own queued entity would hold them.
type Views = AHashMap<PodGroupKey, QueuedPodGroupInfo>;

impl Scheduler {
    /// kube's `scheduleOnePodGroup` for a composite root.
    pub(super) fn schedule_one_tree(&self, mut g: QueuedPodGroupInfo) {
        let start = Instant::now();
        let groups = self.cache.pod_groups().clone();
        match groups.composite(g.key()) {
            Some(cpg) => g.info.pod_group = Some(cpg),
            None => {
                let msg = format!(
                    "compositepodgroup.scheduling.k8s.io \"{}\" not found",
                    g.key().name
                );
                self.pod_group_failure_before_scheduling(g, Status::error(msg), start);
                return;
            }
        }
        // kube's skipPodGroupPodSchedule.
        let mut kept = Vec::with_capacity(g.pods.len());
        for p in std::mem::take(&mut g.pods) {
            if p.pod.deletion_timestamp || self.cache.is_assumed(&p.pod.key) {
                self.queue.done(&p.pod.key);
            } else {
                kept.push(p);
            }
        }
        g.pods = kept;
        // The leaves' lists follow the members kept.
        let leaves: Vec<PodGroupKey> = g.info.leaves().into_iter().map(|l| l.key.clone()).collect();
        for leaf in leaves {
            let keep: Vec<Arc<Pod>> = g.pods_for_group(&leaf).map(|q| q.pod.clone()).collect();
            g.set_leaf_pods(&leaf, keep);
        }
        let views = self.leaf_views(&g);
        if let Err(msg) = self.validate_tree(&g, &views) {
            self.pod_group_failure_before_scheduling(g, Status::error(msg), start);
            return;
        }
        let Some(fi) = g.pods.first().and_then(|p| self.framework_for(&p.pod)) else {
            for p in &g.pods {
                self.queue.done(&p.pod.key);
            }
            let _ = self.queue.add_attempted_pod_group(&g, &Status::success());
            return;
        };
        if g.pods.is_empty() {
            let _ = self.queue.add_attempted_pod_group(&g, &Status::success());
            return;
        }
        let mut results = Results::new();
        let mut group_state = CycleState::for_pod_group();
        group_state.record_plugin_metrics = crate::framework::metrics::sample_plugin_metrics();
        let (_, any) = self.recursive(fi, &mut group_state, &g.info, &views, None, &mut results);
        let root = node_key(&g.info);
        if let Some(r) = results.get_mut(&root)
            && r.status.is_success()
            && !any
        {
            r.status = unschedulable("no pods were schedulable");
        }
        let root_status = results
            .get(&root)
            .map_or_else(|| unschedulable(""), |r| r.status.clone());
        self.metrics.observe(
            Series::PodGroupAlgorithmDuration,
            start.elapsed().as_nanos() as u64,
        );
        let mut effective = AHashMap::new();
        complete(&g.info, None, &results, &mut effective);
        let mut nominations = AHashMap::new();
        if root_status.code() == Code::Unschedulable
            && self.frameworks[fi].has_pod_group_post_filter_plugins()
        {
            self.tree_post_filter(fi, &mut group_state, &g, &mut effective, &mut nominations);
        }
        self.submit_tree(fi, &g, views, results, &effective, &nominations);
        let profile = self.frameworks[fi].scheduler_name;
        let outcome = if root_status.is_success() {
            PodGroupAttempt::Scheduled
        } else if root_status.is_rejected() {
            PodGroupAttempt::Unschedulable
        } else {
            PodGroupAttempt::Error
        };
        self.metrics
            .observe_pod_group_attempt(outcome, profile, start.elapsed().as_nanos() as u64);
        let _ = self.queue.add_attempted_pod_group(&g, &root_status);
    }

    /// kube's PodGroupPostFilter call site for a composite root (`applyPodGroupPostFilterResult`):
    /// the plugins see the whole tree and rerun it (`rerun_tree`); their nominations go to
    /// the members, an error to every group's status, a message appended to every group's.
    fn tree_post_filter(
        &self,
        fi: usize,
        group_state: &mut CycleState,
        g: &QueuedPodGroupInfo,
        effective: &mut AHashMap<NodeKey, Status>,
        nominations: &mut AHashMap<crate::api::PodKey, Sym>,
    ) {
        let fwk = &self.frameworks[fi];
        let mut handle = super::pod_group_handle::GroupHandle::new(self, fi, g);
        let (r, st) = fwk.run_pod_group_post_filter(&mut handle, group_state, &g.info);
        drop(handle);
        for (key, nom) in r.map(|r| r.nominating_infos).unwrap_or_default() {
            if let crate::framework::Nominating::Override(n) = nom {
                nominations.insert(key, n);
            }
        }
        for status in effective.values_mut() {
            if st.code() == Code::Error {
                *status = st.clone();
            } else {
                // kube's `AppendReason(status.String())`.
                let mut reasons = status.reasons().to_vec();
                reasons.push(st.message().into());
                *status = Status::with_reasons(status.code(), reasons).with_plugin(status.plugin());
            }
        }
    }

    /// The rerun a PodGroupPostFilter plugin asks for on a composite root: the tree's
    /// algorithm on the cache as it stands, every assumption undone, with the members the
    /// successful leaves place.
    pub(super) fn rerun_tree(
        &self,
        fi: usize,
        g: &QueuedPodGroupInfo,
    ) -> (PodGroupAssignments, Status) {
        let views = self.leaf_views(g);
        let mut results = Results::new();
        let mut group_state = CycleState::for_pod_group();
        let (_, any) = self.recursive(fi, &mut group_state, &g.info, &views, None, &mut results);
        let mut status = results
            .get(&node_key(&g.info))
            .map_or_else(|| unschedulable(""), |r| r.status.clone());
        if status.is_success() && !any {
            status = unschedulable("no pods were schedulable");
        }
        let proposed_assignments = successful_assignments(&g.info, &results, &views);
        (
            PodGroupAssignments {
                placement: None,
                proposed_assignments,
            },
            status,
        )
    }

    /// Each leaf's queued members as a PodGroup entity of their own (the tree's bookkeeping).
    fn leaf_views(&self, g: &QueuedPodGroupInfo) -> Views {
        let groups = self.cache.pod_groups();
        let mut views = Views::new();
        for leaf in g.info.leaves() {
            let mut info = leaf.clone();
            if let Some(pg) = groups.pod_group(&leaf.key) {
                info.pod_group = Some(pg);
            }
            let mut v = QueuedPodGroupInfo::new(info, g.timestamp);
            v.pods = g.pods_for_group(&leaf.key).cloned().collect();
            v.info.unscheduled_pods = v.pods.iter().map(|p| p.pod.clone()).collect();
            v.attempts = g.attempts;
            v.initial_attempt_timestamp = g.initial_attempt_timestamp;
            views.insert(leaf.key.clone(), v);
        }
        views
    }

    /// kube's `validatePodGroupHierarchy`: one priority across the tree, and each leaf's
    /// members as a PodGroup's.
    fn validate_tree(&self, g: &QueuedPodGroupInfo, views: &Views) -> Result<(), String> {
        let root_priority = g.priority();
        fn walk(n: &PodGroupInfo, want: i32) -> Result<(), String> {
            let p = n.pod_group.as_ref().map_or(0, |g| g.priority);
            if p != want {
                return Err(format!(
                    "all pod groups in a hierarchy should have the same priority as the root, got {p} and {want}"
                ));
            }
            n.children.iter().try_for_each(|c| walk(c, want))
        }
        walk(&g.info, root_priority)?;
        let groups = self.cache.pod_groups();
        for v in views.values() {
            let state = groups.get(v.key()).unwrap_or_default();
            self.validate_pod_group(v, &state)?;
        }
        Ok(())
    }

    /// kube's `podGroupSchedulingRecursiveAlgorithm`: (status, any scheduled). Both kinds of
    /// node revert their own simulations (the placement path), so nothing is left for the
    /// caller to undo.
    fn recursive(
        &self,
        fi: usize,
        group_state: &mut CycleState,
        node: &PodGroupInfo,
        views: &Views,
        parent: Option<&Arc<Placement>>,
        results: &mut Results,
    ) -> (Status, bool) {
        if !node.is_composite() {
            let Some(v) = views.get(&node.key) else {
                return (unschedulable(""), false);
            };
            let r = self.placement_algorithm(fi, group_state, v, parent);
            let status = r.status.clone();
            let any = r.any_scheduled;
            results.insert(
                node_key(node),
                NodeResult {
                    status: status.clone(),
                    any_scheduled: any,
                    leaf: Some(r),
                    placement_state: CycleState::new(),
                },
            );
            return (status, any);
        }
        self.composite_placement(fi, group_state, node, views, parent, results)
    }

    /// kube's `compositePodGroupSchedulingPlacementAlgorithm`.
    fn composite_placement(
        &self,
        fi: usize,
        group_state: &mut CycleState,
        node: &PodGroupInfo,
        views: &Views,
        parent: Option<&Arc<Placement>>,
        results: &mut Results,
    ) -> (Status, bool) {
        let fwk = &self.frameworks[fi];
        let all_nodes = self.placement_nodes(parent);
        group_state.record_plugin_metrics = true;
        let (placements, st) = fwk.run_placement_generate(group_state, node, all_nodes);
        let fail = |results: &mut Results, status: Status| {
            results.insert(
                node_key(node),
                NodeResult {
                    status: status.clone(),
                    any_scheduled: false,
                    leaf: None,
                    placement_state: CycleState::new(),
                },
            );
            (status, false)
        };
        if !st.is_success() {
            return fail(results, st);
        }
        let profile = fwk.scheduler_name;
        self.metrics.add_pod_group_counter(
            names::GENERATED_PLACEMENTS,
            profile,
            None,
            placements.len() as u64,
        );
        let mut first_failed: Option<Results> = None;
        let mut feasible: Vec<(Arc<Placement>, Results)> = Vec::new();
        for p in &placements {
            let t = Instant::now();
            let mut sub = Results::new();
            let mut placement_state = CycleState::new();
            let (status, _, reverts) = self.composite_default(
                fi,
                group_state,
                &mut placement_state,
                node,
                views,
                p,
                &mut sub,
            );
            self.revert_tree(fi, reverts);
            if status.code() == Code::Error {
                results.extend(sub);
                return (status, false);
            }
            let ok = status.is_success();
            self.observe_placement_evaluation(profile, ok, t);
            if ok {
                feasible.push((p.clone(), sub));
            } else if first_failed.is_none() {
                first_failed = Some(sub);
            }
        }
        let me = node_key(node);
        if feasible.is_empty() {
            let mut sub = first_failed.unwrap_or_default();
            let first = sub
                .remove(&me)
                .map_or_else(String::new, |r| r.status.message());
            results.extend(sub);
            return fail(
                results,
                unschedulable(format!(
                    "0/{} placements are available, first placement status: {first}",
                    placements.len()
                )),
            );
        }
        let best = match self.best_placement(fi, group_state, node, &feasible, views) {
            Ok(b) => b,
            Err(st) => return fail(results, st),
        };
        let (_, sub) = feasible.swap_remove(best);
        results.extend(sub);
        let r = &results[&me];
        (r.status.clone(), r.any_scheduled)
    }

    /// kube's `findBestCompositePodGroupPlacement`: the only feasible placement, or the one
    /// the PlacementScore plugins score highest over its successful leaves' assignments
    /// (ties broken at random, as kube's `Randomizer`).
    fn best_placement(
        &self,
        fi: usize,
        group_state: &mut CycleState,
        node: &PodGroupInfo,
        feasible: &[(Arc<Placement>, Results)],
        views: &Views,
    ) -> Result<usize, Status> {
        if feasible.len() == 1 {
            return Ok(0);
        }
        let me = node_key(node);
        let assignments: Vec<PodGroupAssignments> = feasible
            .iter()
            .map(|(p, sub)| PodGroupAssignments {
                placement: Some(p.clone()),
                proposed_assignments: successful_assignments(node, sub, views),
            })
            .collect();
        let states: Vec<CycleState> = feasible
            .iter()
            .map(|(_, sub)| {
                sub.get(&me)
                    .map_or_else(CycleState::new, |r| r.placement_state.clone())
            })
            .collect();
        let (scores, st) =
            self.frameworks[fi].run_placement_score(group_state, node, &assignments, &states);
        if !st.is_success() {
            return Err(st);
        }
        let best = self.best_placement_score(&scores);
        Ok(best)
    }

    /// kube's `compositePodGroupSchedulingDefaultAlgorithm` inside `placement`.
    #[allow(clippy::too_many_arguments)]
    fn composite_default(
        &self,
        fi: usize,
        group_state: &mut CycleState,
        placement_state: &mut CycleState,
        node: &PodGroupInfo,
        views: &Views,
        placement: &Arc<Placement>,
        results: &mut Results,
    ) -> (Status, bool, Vec<TreeRevert>) {
        let fwk = &self.frameworks[fi];
        let mut reverts = Vec::new();
        let mut progress = PlacementProgress {
            remaining: node.children.len(),
            scheduled: 0,
        };
        let mut status = fwk.run_placement_feasible(group_state, placement_state, node, progress);
        let mut any = false;
        if status.code() == Code::Error {
            status = feasibility_error(&status);
        } else if status.code() != Code::Unschedulable {
            let last = node.children.len().saturating_sub(1);
            for (i, child) in node.children.iter().enumerate() {
                let mut child_state = CycleState::for_pod_group();
                let (cst, cany) =
                    self.recursive(fi, &mut child_state, child, views, Some(placement), results);
                if cst.code() == Code::Error {
                    status = Status::error(format!(
                        "composite pod group {:?} evaluation failed due to child {:?} error: {}",
                        &*node.key.name,
                        &*child.key.name,
                        cst.message()
                    ));
                    break;
                }
                any |= cany;
                progress.remaining -= 1;
                if cst.is_success() {
                    progress.scheduled += 1;
                }
                status = fwk.run_placement_feasible(group_state, placement_state, node, progress);
                if status.code() == Code::Error {
                    status = feasibility_error(&status);
                    break;
                }
                if status.code() == Code::Unschedulable {
                    break;
                }
                if i < last && cst.is_success() && cany {
                    match self.assume_subtree(fi, child, results, views) {
                        Ok(mut r) => reverts.append(&mut r),
                        Err(e) => {
                            status = Status::error(format!(
                                "composite pod group {:?} evaluation failed due to child {:?} error: failed to assume child subtree in snapshot: {e}",
                                &*node.key.name, &*child.key.name
                            ));
                            break;
                        }
                    }
                }
            }
        }
        if status.is_wait() || status.code() == Code::Unschedulable {
            status = unschedulable(status.message());
        }
        if !status.is_success() {
            self.revert_tree(fi, std::mem::take(&mut reverts));
            any = false;
        }
        results.insert(
            node_key(node),
            NodeResult {
                status: status.clone(),
                any_scheduled: any,
                leaf: None,
                placement_state: placement_state.clone(),
            },
        );
        (status, any, reverts)
    }

    /// kube's `assumeSubtreeWithRevert`: the fitting members of the successful leaves under
    /// `node` assumed and reserved, so that later siblings see them.
    fn assume_subtree(
        &self,
        fi: usize,
        node: &PodGroupInfo,
        results: &Results,
        views: &Views,
    ) -> Result<Vec<TreeRevert>, String> {
        let fwk = &self.frameworks[fi];
        let mut done = Vec::new();
        for (leaf, r) in successful_leaves(node, results) {
            let Some(v) = views.get(&leaf.key) else {
                continue;
            };
            for p in r.results.iter().filter(|p| p.ok()) {
                let host = p.host.expect("ok");
                let pod = v.pods[p.index].pod.clone();
                let assumed = match self.assume(&pod, host) {
                    Ok(a) => a,
                    Err(f) => {
                        self.revert_tree(fi, done);
                        return Err(f.status.message());
                    }
                };
                let mut state = p.state.clone();
                let st = fwk.run_reserve(&mut state, &assumed, host);
                if !st.is_success() {
                    fwk.run_unreserve(&mut state, &assumed, host);
                    self.cache.forget_pod(&pod.key);
                    self.revert_tree(fi, done);
                    return Err(st.message());
                }
                self.queue.nominator.delete(&pod.key);
                done.push(TreeRevert { pod, host, state });
            }
        }
        Ok(done)
    }

    /// Undoes assumptions, last first.
    fn revert_tree(&self, fi: usize, reverts: Vec<TreeRevert>) {
        let fwk = &self.frameworks[fi];
        for mut r in reverts.into_iter().rev() {
            fwk.run_unreserve(&mut r.state, &r.pod, r.host);
            self.cache.forget_pod(&r.pod.key);
            if let Some(n) = r.pod.nominated_node_name.filter(|n| !n.is_empty()) {
                self.queue
                    .nominator
                    .add(&r.pod, crate::framework::Nominating::Override(n));
            }
        }
    }

    /// kube's `submitPodGroupAlgorithmResult` for a tree: each leaf on its own.
    fn submit_tree(
        &self,
        fi: usize,
        g: &QueuedPodGroupInfo,
        mut views: Views,
        mut results: Results,
        effective: &AHashMap<NodeKey, Status>,
        nominations: &AHashMap<crate::api::PodKey, Sym>,
    ) {
        let cycle = self.queue.scheduling_cycle();
        for leaf in g.info.leaves() {
            let Some(v) = views.remove(&leaf.key) else {
                continue;
            };
            let k = node_key(leaf);
            let status = effective
                .get(&k)
                .cloned()
                .unwrap_or_else(|| unschedulable(""));
            let mut r = results
                .remove(&k)
                .and_then(|n| n.leaf)
                .unwrap_or_else(|| GroupResult {
                    results: Vec::new(),
                    status: status.clone(),
                    any_scheduled: false,
                    placement: None,
                    placement_state: CycleState::new(),
                });
            r.status = status.clone();
            self.complete_results(&v, &mut r);
            self.stats
                .attempts
                .fetch_add(r.results.len() as u64, Ordering::Relaxed);
            for p in r.results {
                let q = v.pods[p.index].clone();
                if status.is_success() && p.ok() {
                    self.submit_member(fi, q, p, cycle);
                    continue;
                }
                let mut f = member_failure(&status, p.failure, p.host.is_some());
                if let Some(n) = nominations.get(&q.pod.key) {
                    f.nominated = Some(*n);
                }
                self.handle_scheduling_failure(q, f, p.start, cycle);
            }
            let (scheduled, reason) = condition_of(&status);
            if let Some(pg) = &v.info.pod_group
                && (scheduled || !pg.scheduled)
            {
                self.client
                    .set_pod_group_scheduled(pg, scheduled, reason, &status.message());
            }
        }
        // kube's submitCompositePodGroupResult: each composite group's
        // CompositePodGroupInitiallyScheduled condition.
        let mut stack = vec![&g.info];
        while let Some(n) = stack.pop() {
            if !n.is_composite() {
                continue;
            }
            stack.extend(n.children.iter());
            let status = effective
                .get(&node_key(n))
                .cloned()
                .unwrap_or_else(|| unschedulable(""));
            let (scheduled, reason) = condition_of(&status);
            if let Some(pg) = &n.pod_group
                && (scheduled || !pg.scheduled)
            {
                self.client
                    .set_pod_group_scheduled(pg, scheduled, reason, &status.message());
            }
        }
    }
}

/// The InitiallyScheduled condition's status and reason for a group's outcome.
fn condition_of(status: &Status) -> (bool, &'static str) {
    if status.is_success() {
        (true, "Scheduled")
    } else if status.is_rejected() {
        (false, "Unschedulable")
    } else {
        (false, "SchedulerError")
    }
}

/// A member's failure from its leaf's status (as the PodGroup cycle's submit).
fn member_failure(status: &Status, own: Option<Failure>, fits: bool) -> Failure {
    if !status.is_success() && !status.is_rejected() {
        return match own {
            Some(f) if !f.status.is_success() && !f.status.is_rejected() => f,
            _ => Failure {
                status: status.clone(),
                diagnosis: None,
                nominated: Some(Sym::EMPTY),
            },
        };
    }
    if fits && own.is_none() {
        return Failure {
            status: Status::new(Code::Unschedulable, status.message()).with_plugin(status.plugin()),
            diagnosis: None,
            nominated: Some(Sym::EMPTY),
        };
    }
    own.unwrap_or_else(|| rejection(unschedulable(status.message())))
}

/// kube's `SuccessfulLeafResults`: the leaves under `node` whose result and every
/// ancestor's (from `node` down) are Success, with their results.
fn successful_leaves<'a>(
    node: &'a PodGroupInfo,
    results: &'a Results,
) -> Vec<(&'a PodGroupInfo, &'a GroupResult)> {
    let mut out = Vec::new();
    fn walk<'a>(
        n: &'a PodGroupInfo,
        results: &'a Results,
        out: &mut Vec<(&'a PodGroupInfo, &'a GroupResult)>,
    ) {
        let Some(r) = results.get(&node_key(n)) else {
            return;
        };
        if !r.status.is_success() {
            return;
        }
        for c in &n.children {
            walk(c, results, out);
        }
        if let Some(l) = &r.leaf
            && !l.results.is_empty()
        {
            out.push((n, l));
        }
    }
    walk(node, results, &mut out);
    out
}

/// kube's `makeCompositePodGroupAssignments` for one placement's subtree.
fn successful_assignments(
    node: &PodGroupInfo,
    results: &Results,
    views: &Views,
) -> Vec<ProposedAssignment> {
    let mut out = Vec::new();
    for (leaf, r) in successful_leaves(node, results) {
        let Some(v) = views.get(&leaf.key) else {
            continue;
        };
        out.extend(
            r.results
                .iter()
                .filter(|p| p.ok())
                .map(|p| ProposedAssignment {
                    pod: v.pods[p.index].pod.clone(),
                    node_name: p.host.expect("ok"),
                    cycle_state: Arc::new(p.state.clone()),
                }),
        );
    }
    out
}

/// kube's `completeCompositePodGroupAlgorithmResultMap`: each node's effective status, top
/// down: a node not evaluated, or successful under a failed ancestor, takes the nearest
/// failed ancestor's failure; an ancestor's error overrides a node's own rejection; a node
/// that failed on its own is the failed ancestor of its subtree.
fn complete(
    n: &PodGroupInfo,
    failed_ancestor: Option<(Arc<str>, Status)>,
    results: &Results,
    out: &mut AHashMap<NodeKey, Status>,
) {
    let own = results.get(&node_key(n)).map(|r| &r.status);
    let inherited = |name: &str, st: &Status| {
        if !st.is_success() && !st.is_rejected() {
            Status::error(format!(
                "ancestor composite pod group {name:?} encountered an error"
            ))
        } else {
            Status::new(
                st.code(),
                format!("ancestor composite pod group {name:?} is unschedulable"),
            )
            .with_plugin(st.plugin())
        }
    };
    let (eff, own_failure) = match (own, &failed_ancestor) {
        (_, Some((name, st))) if !st.is_success() && !st.is_rejected() => {
            (inherited(name, st), false)
        }
        (Some(o), Some(_)) if !o.is_success() => (o.clone(), true),
        (_, Some((name, st))) => (inherited(name, st), false),
        (Some(o), None) => (o.clone(), !o.is_success()),
        (None, None) => (unschedulable(""), true),
    };
    let next = if own_failure {
        Some((n.key.name.clone(), eff.clone()))
    } else {
        failed_ancestor
    };
    out.insert(node_key(n), eff);
    for c in &n.children {
        complete(c, next.clone(), results, out);
    }
}
