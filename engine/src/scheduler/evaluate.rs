//! Judging a pod against the whole cluster without scheduling it: every node's Filter verdict
//! and every feasible node's total score, as a scheduling cycle with
//! `percentageOfNodesToScore: 100` would compute them. The differential oracle uses it to check
//! another scheduler's decision on the same state (was its node feasible here, was it among
//! the highest scores, did the same plugins reject the pod).
//!
//! Nothing is assumed, reserved or bound; the only side effects are those of the plugins'
//! PreFilter/PreScore caches and the host-choice random draw that Score makes.

use super::Scheduler;
use crate::api::{Pod, Sym};
use crate::framework::cycle_state::PodGroupCycleData;
use crate::framework::{CycleState, NodeInfo, Status};
use std::sync::Arc;

/// Every node's verdict for one pod on the current cluster state.
#[derive(Clone, Debug, Default)]
pub struct Evaluation {
    /// PreFilter's status when it did not succeed (then no node was filtered).
    pub pre_filter: Option<Status>,
    /// The nodes that passed Filter, with their total score (normalized and weighted, as
    /// kube's `RunScorePlugins` sums them and `selectHost` compares them), in node order.
    /// The scheduler's blocked Score leaves out a plugin whose scores are the same on every
    /// node (a reversed default normalization of all zeros gives each node 100); these
    /// totals include it, as kube's do.
    pub feasible: Vec<(Sym, i64)>,
    /// The nodes Filter rejected, with the rejecting status.
    pub rejected: Vec<(Sym, Status)>,
    /// The PreFilter plugins that narrowed the nodes to a subset (kube's `pluginsWithNodes`,
    /// part of a failure's unschedulable plugins).
    pub(crate) pre_filter_with_nodes: Vec<&'static str>,
    /// A PreScore or Score error (the feasible nodes then carry no score).
    pub score_error: Option<Status>,
    /// Each feasible node's score per active Score plugin (normalized and weighted), in
    /// `feasible` order, computed plugin by plugin as kube's `RunScorePlugins` does: what the
    /// oracle prints beside kube's own when the two sides disagree, and a cross-check of the
    /// scheduler's blocked Score (each node's sum equals its total in `feasible`).
    pub(crate) plugin_scores: Vec<Vec<(&'static str, i64)>>,
    /// Set when the scheduler's blocked Score ranks the nodes differently from the plain
    /// plugin-by-plugin one (a tidegate bug): the first node whose offset differs.
    pub blocked_score_mismatch: Option<String>,
}

impl Evaluation {
    /// The highest total score among the feasible nodes.
    pub fn top_score(&self) -> Option<i64> {
        self.feasible.iter().map(|&(_, s)| s).max()
    }

    /// The feasible nodes with the highest total score.
    pub fn top_nodes(&self) -> Vec<Sym> {
        let top = self.top_score();
        self.feasible
            .iter()
            .filter(|&&(_, s)| Some(s) == top)
            .map(|&(n, _)| n)
            .collect()
    }

    /// `node`'s score per plugin (see `Evaluation::plugin_scores`), when it is feasible.
    pub fn scores_of(&self, node: Sym) -> Option<&[(&'static str, i64)]> {
        let i = self.feasible.iter().position(|&(n, _)| n == node)?;
        self.plugin_scores.get(i).map(Vec::as_slice)
    }

    /// The plugins that rejected the pod: PreFilter's, or those of every rejected node.
    pub fn rejecting_plugins(&self) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = match &self.pre_filter {
            Some(st) => vec![st.plugin()],
            None => self.rejected.iter().map(|(_, st)| st.plugin()).collect(),
        };
        out.extend(&self.pre_filter_with_nodes);
        out.retain(|p| !p.is_empty());
        out.sort_unstable();
        out.dedup();
        out
    }
}

impl Scheduler {
    /// Judges `pod` against every node of the current cluster state: PreFilter, Filter on
    /// each node (the PreFilter result's subset when it names one; with the nominated pods'
    /// second pass), then PreScore and Score on every feasible node. Returns `None` when no
    /// profile of this scheduler is responsible for the pod.
    pub fn evaluate(&self, pod: &Pod) -> Option<Evaluation> {
        self.evaluate_with(pod, &mut CycleState::new(), None)
    }

    /// [`Scheduler::evaluate`] for a member of a pod-group cycle: with the cycle's shared
    /// data (what the earlier members' Reserve left there, as kube's members see it), then
    /// Reserve on `reserve_on` (the node kube placed it on) when it is feasible here, as
    /// kube's cycle reserves each member it places before the next one is tried. The
    /// member's cycle state comes back when Reserve succeeded: kube may undo the placement
    /// later, and [`Scheduler::unreserve_volumes`] needs what VolumeBinding's Reserve kept.
    ///
    /// `placement`: the nodes of the placement kube's cycle assumed (kube's
    /// `Snapshot.AssumePlacement`), when it assumed one. PreFilter still sees the whole
    /// cluster, as kube's plugins list every node; Filter walks only the placement's nodes,
    /// and PreScore, Score and NormalizeScore see only its feasible ones, so a normalized
    /// score (InterPodAffinity, PodTopologySpread, TaintToleration) is the placement's.
    pub fn evaluate_member(
        &self,
        pod: &Pod,
        group: Arc<PodGroupCycleData>,
        reserve_on: Option<Sym>,
        placement: Option<&[Sym]>,
    ) -> Option<(Evaluation, Option<CycleState>)> {
        let mut state = CycleState::new();
        state.pod_group_cycle = true;
        state.pod_group_data = Some(group);
        let placement: Option<ahash::AHashSet<Sym>> =
            placement.map(|p| p.iter().copied().collect());
        let out = self.evaluate_with(pod, &mut state, placement.as_ref())?;
        let mut reserved = None;
        if let Some(node) = reserve_on
            && out.feasible.iter().any(|(n, _)| *n == node)
        {
            let fwk = &self.frameworks[self.framework_for(pod)?];
            // A failed Reserve leaves nothing behind for the next member; the judge
            // compares evaluations, not this.
            if fwk.run_reserve(&mut state, pod, node).is_success() {
                reserved = Some(state);
            }
        }
        Some((out, reserved))
    }

    /// The oracle follows kube's binding of `pod` to `node` in the volumes: VolumeBinding's
    /// Reserve there (its matches assumed as kube's assume cache holds them until the API
    /// shows the bindings), on a fresh cycle state, which comes back for a later
    /// [`Scheduler::unreserve_volumes`]. Non-success when tidegate's VolumeBinding does
    /// not fit the pod there.
    pub fn reserve_volumes(&self, pod: &Pod, node: Sym) -> (Status, CycleState) {
        let mut state = CycleState::new();
        let Some(i) = self.framework_for(pod) else {
            return (Status::error("no profile for the pod's scheduler"), state);
        };
        let mut snap = self.snapshot.lock();
        self.cache.update_snapshot(&mut snap);
        let name = crate::plugins::volume_binding::NAME;
        let st = self.frameworks[i].run_reserve_of(name, &mut state, pod, &snap, node);
        (st, state)
    }

    /// The oracle follows kube's undo of `pod`'s placement on `node` (a pod-group member
    /// reverted): VolumeBinding's Unreserve with the `state` its Reserve left, so the
    /// volumes it assumed are the API's again.
    pub fn unreserve_volumes(&self, pod: &Pod, node: Sym, state: &mut CycleState) {
        if let Some(i) = self.framework_for(pod) {
            let name = crate::plugins::volume_binding::NAME;
            self.frameworks[i].run_unreserve_of(name, state, pod, node);
        }
    }

    /// The oracle saw kube's API bind volume `pv` to a claim (a record's `volumes` line):
    /// kube's Reserve picked that volume, among as small ones in an order of its own, so
    /// each profile's VolumeBinding drops (or swaps) what it assumed otherwise for that claim
    /// (`AssumeCache::follow_binding`). Returns the volumes whose assumed copies changed.
    pub fn follow_volume_binding(&self, pv: &str) -> Vec<Sym> {
        use crate::plugins::volume_binding::{NAME, VolumeBinding};
        let pv = Sym::new(pv);
        self.frameworks
            .iter()
            .filter_map(|f| f.reserve_plugin::<VolumeBinding>(NAME)?.follow_binding(pv))
            .collect()
    }

    fn evaluate_with(
        &self,
        pod: &Pod,
        state: &mut CycleState,
        placement: Option<&ahash::AHashSet<Sym>>,
    ) -> Option<Evaluation> {
        let fwk = &self.frameworks[self.framework_for(pod)?];
        let mut snap = self.snapshot.lock();
        self.cache.update_snapshot(&mut snap);
        let mut out = Evaluation::default();
        let (pre, st, with_nodes) = fwk.run_pre_filter(state, pod, &snap);
        out.pre_filter_with_nodes = with_nodes;
        if !st.is_success() {
            out.pre_filter = Some(st);
            return Some(out);
        }
        let indices: Vec<usize> = match pre.and_then(|r| r.node_names) {
            Some(names) => names
                .iter()
                .filter_map(|n| snap.index.get(n).copied())
                .collect(),
            None => (0..snap.nodes.len()).collect(),
        };
        let indices: Vec<usize> = match placement {
            Some(set) => indices
                .into_iter()
                .filter(|&i| set.contains(&snap.nodes[i].name()))
                .collect(),
            None => indices,
        };
        let filters = fwk.active_filter_plugins(state, pod);
        let nominated = self.queue.nominator.nominated_at_least(pod);
        let mut feasible: Vec<usize> = Vec::new();
        for &i in &indices {
            let node = &snap.nodes[i];
            let noms = nominated.get(&node.name()).map_or(&[][..], |v| &v[..]);
            let st = fwk.run_filter_plugins_with_nominated_pods(&filters, state, pod, node, noms);
            if st.is_success() {
                feasible.push(i);
            } else {
                out.rejected.push((node.name(), st));
            }
        }
        let nodes: Vec<&NodeInfo> = feasible.iter().map(|&i| &*snap.nodes[i]).collect();
        if nodes.is_empty() {
            return Some(out);
        }
        let st = fwk.run_pre_score(state, pod, &nodes, &snap);
        if !st.is_success() {
            out.score_error = Some(st);
            return Some(out);
        }
        let mut scratch = self.score_scratch.lock();
        let scored = self.score_nodes(
            fwk,
            state,
            pod,
            &nodes,
            (&feasible, &snap.rows),
            &mut scratch,
            None,
        );
        match scored {
            Ok(_) => {
                out.feasible = nodes
                    .iter()
                    .zip(&scratch.totals)
                    .map(|(n, &t)| (n.name(), t))
                    .collect();
            }
            Err(st) => out.score_error = Some(st),
        }
        drop(scratch);
        match plain_scores(fwk, state, pod, &nodes) {
            Ok(per_node) => {
                out.blocked_score_mismatch = adopt_plain_totals(&mut out.feasible, &per_node);
                out.plugin_scores = per_node;
            }
            Err(st) => out.score_error = Some(st),
        }
        Some(out)
    }
}

/// Score plugin by plugin, the plain way (kube's `RunScorePlugins`): each active plugin scores
/// every node, normalizes the column, and its weight multiplies it. Per node, in `nodes`
/// order: (plugin, weighted score).
fn plain_scores(
    fwk: &crate::framework::Framework,
    state: &CycleState,
    pod: &Pod,
    nodes: &[&NodeInfo],
) -> Result<Vec<Vec<(&'static str, i64)>>, Status> {
    let mut out: Vec<Vec<(&'static str, i64)>> = vec![Vec::new(); nodes.len()];
    for (pl, weight) in fwk.active_score_plugins(state) {
        let mut column = nodes
            .iter()
            .map(|n| pl.score(state, pod, n))
            .collect::<Result<Vec<i64>, Status>>()?;
        if pl.has_normalize() {
            let st = pl.normalize_score(state, pod, &mut column);
            if !st.is_success() {
                return Err(st);
            }
        }
        for (row, s) in out.iter_mut().zip(column) {
            row.push((pl.name(), s * weight));
        }
    }
    Ok(out)
}

/// Replaces each blocked total by the sum of the node's plain plugin scores (kube's total).
/// The two may differ only by one constant for all nodes (a uniform plugin the blocked path
/// leaves out); returns a description of the first node where the offset differs.
fn adopt_plain_totals(
    feasible: &mut [(Sym, i64)],
    per_node: &[Vec<(&'static str, i64)>],
) -> Option<String> {
    let mut offset = None;
    let mut mismatch = None;
    for ((node, total), plugins) in feasible.iter_mut().zip(per_node) {
        let plain: i64 = plugins.iter().map(|&(_, s)| s).sum();
        let d = plain - *total;
        match offset {
            None => offset = Some(d),
            Some(o) if o != d && mismatch.is_none() => {
                mismatch = Some(format!(
                    "node {}: blocked total {} + offset {o} != plain total {plain} ({plugins:?})",
                    node.to_string_lossy(),
                    *total
                ));
            }
            Some(_) => {}
        }
        *total = plain;
    }
    mismatch
}

/// What DefaultPreemption's dry run finds for a pod no node fits (kube's `findCandidates` and
/// `pickOneNodeForPreemption`), without deleting anything.
#[derive(Clone, Debug, Default)]
pub struct PreemptionEvaluation {
    /// Every node where evicting lower-priority pods makes room, with those victims (most
    /// important first), in the dry run's order.
    pub candidates: Vec<crate::plugins::default_preemption::Candidate>,
    /// The candidate kube's criteria pick (fewest budget violations, lowest highest victim
    /// priority, lowest priority sum, fewest victims, latest start), when there is one.
    pub best: Option<Sym>,
}

impl Scheduler {
    /// DefaultPreemption's dry run (default arguments) for `pod` on the current cluster
    /// state: `None` when no profile is responsible for the pod; no candidate when a node
    /// fits it, PreFilter rejects it, or its policy is `Never`. With up to 100 potential nodes
    /// (kube's `minCandidateNodesAbsolute`) every one is tried, so the result does not depend
    /// on the random start kube's dry run takes.
    pub fn evaluate_preemption(&self, pod: &Pod) -> Option<PreemptionEvaluation> {
        use crate::framework::interface::Diagnosis;
        use crate::framework::runtime::CycleHandle;
        use crate::plugins::default_preemption::{
            DefaultPreemption, DefaultPreemptionArgs, pick_one_node_for_preemption,
        };
        let eval = self.evaluate(pod)?;
        let mut out = PreemptionEvaluation::default();
        if eval.pre_filter.is_some() || !eval.feasible.is_empty() || pod.spec.preempt_never {
            return Some(out);
        }
        let fwk = &self.frameworks[self.framework_for(pod)?];
        let mut state = CycleState::new();
        let snap = self.snapshot.lock();
        let (_, st, _) = fwk.run_pre_filter(&mut state, pod, &snap);
        if !st.is_success() {
            return Some(out);
        }
        let diagnosis = Diagnosis {
            node_statuses: eval.rejected,
            ..Diagnosis::default()
        };
        let dp = DefaultPreemption::new(DefaultPreemptionArgs::default(), self.client.clone());
        let handle = CycleHandle {
            snapshot: &snap,
            framework: fwk,
            nominator: &self.queue.nominator,
            waiting_pods: &self.waiting_pods,
        };
        let (candidates, _) = dp.find_candidates(&handle, &state, pod, &diagnosis);
        out.best = pick_one_node_for_preemption(&candidates).map(|i| candidates[i].node);
        out.candidates = candidates;
        Some(out)
    }

    /// Whether `pod` passes Filter on `node` with `extra` pods added to it, as preemption's
    /// dry run adds a reprieved victim back (PreFilter's AddPod extensions run for each):
    /// the oracle's check that another scheduler's victims are a valid choice. `None` when no
    /// profile is responsible for the pod or the node is unknown.
    pub fn fits_with(&self, pod: &Pod, node: Sym, extra: &[Arc<Pod>]) -> Option<bool> {
        self.fits_in(&mut CycleState::new(), pod, node, extra)
    }

    /// [`Scheduler::fits_with`] (no extra pods) for a member of a pod-group cycle, with the
    /// cycle's shared data; a member that fits is reserved there, as kube's cycle reserves
    /// each member before the next (the oracle replays a group's placement member by member).
    /// `volumes`: the cycle state VolumeBinding's Reserve left when this placement was
    /// evaluated (and undone): kube's commit of the chosen placement runs Reserve again on
    /// that state, where VolumeBinding finds its bindings made already and assumes nothing
    /// anew; VolumeBinding's Reserve runs on it instead of the member's fresh state.
    pub fn fits_member(
        &self,
        pod: &Pod,
        node: Sym,
        group: Arc<PodGroupCycleData>,
        volumes: Option<&mut CycleState>,
    ) -> Option<bool> {
        let mut state = CycleState::new();
        state.pod_group_cycle = true;
        state.pod_group_data = Some(group);
        let fits = self.fits_in(&mut state, pod, node, &[])?;
        if fits {
            let fwk = &self.frameworks[self.framework_for(pod)?];
            let _ = match volumes {
                Some(kept) => {
                    let name = crate::plugins::volume_binding::NAME;
                    let _ = fwk.run_reserve_except(name, &mut state, pod, node);
                    fwk.run_reserve_only(name, kept, pod, node)
                }
                None => fwk.run_reserve(&mut state, pod, node),
            };
        }
        Some(fits)
    }

    fn fits_in(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        node: Sym,
        extra: &[Arc<Pod>],
    ) -> Option<bool> {
        let fwk = &self.frameworks[self.framework_for(pod)?];
        let mut snap = self.snapshot.lock();
        self.cache.update_snapshot(&mut snap);
        let (_, st, _) = fwk.run_pre_filter(state, pod, &snap);
        if !st.is_success() {
            return Some(false);
        }
        let mut ni = (**snap.get(node)?).clone();
        for p in extra {
            let mut placed = (**p).clone();
            placed.node_name = Some(node);
            let placed = Arc::new(placed);
            ni.add_pod(&placed);
            if !fwk
                .run_pre_filter_extension_add_pod(state, pod, &placed, &ni)
                .is_success()
            {
                return Some(false);
            }
        }
        let filters = fwk.active_filter_plugins(state, pod);
        let noms = self.queue.nominator.nominated_at_least_on(node, pod);
        Some(
            fwk.run_filter_plugins_with_nominated_pods(&filters, state, pod, &ni, &noms)
                .is_success(),
        )
    }

    /// Holds `pod` as nominated to `node` (`Sym::EMPTY` clears it) in the nominator, as
    /// PostFilter's result does, without touching the cluster: the oracle replays another
    /// scheduler's nominations so that later evaluations count the nominated pods.
    pub fn hold_nomination(&self, pod: &Arc<Pod>, node: Sym) {
        self.queue
            .nominator
            .add(pod, crate::framework::Nominating::Override(node));
    }

    /// Every nomination the nominator holds, as (node, pod): the oracle compares them with
    /// the nominations another scheduler's Filter counted.
    pub fn nominations(&self) -> Vec<(Sym, Arc<Pod>)> {
        self.queue.nominator.all()
    }
}
