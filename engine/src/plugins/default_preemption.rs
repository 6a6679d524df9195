//! DefaultPreemption (PostFilter): when no node fits, find nodes where evicting lower-priority
//! pods would make room, pick one, delete the victims and nominate the pod there.
//!
//! Behaviour after kube-scheduler 1.34, `pkg/scheduler/framework/plugins/defaultpreemption/`
//! and `pkg/scheduler/framework/preemption/preemption.go`:
//!
//! 1. **Eligibility**: `preemptionPolicy: Never` never preempts; a pod nominated to a node
//!    where lower-priority pods are still terminating waits for them (unless that node became
//!    unresolvable for it).
//! 2. **Potential nodes**: the nodes Filter rejected with `Unschedulable` (not
//!    `UnschedulableAndUnresolvable`, and not the nodes a PreFilterResult excluded): evicting
//!    pods cannot fix the others.
//! 3. **Dry run** over the potential nodes from a random offset, until
//!    `max(n × minCandidateNodesPercentage / 100, minCandidateNodesAbsolute)` (at most n)
//!    candidates are found, at least one of them violating no PodDisruptionBudget (kube keeps
//!    up to that many of each kind and looks further for a clean one). On a copy of the node and of the cycle state: remove every pod of
//!    lower priority (PreFilter RemovePod), check the pod fits (Filter with nominated pods);
//!    then reprieve the removed pods, keeping each one that still lets the pod fit: first the
//!    pods whose eviction would violate a PodDisruptionBudget (`ClusterClient::
//!    pod_disruption_budgets`, read once per attempt; each budget's `disruptionsAllowed` is
//!    spent pod by pod, `disruptedPods` are not charged), then the others, each group most
//!    important first (higher priority, then earlier start). The rest are the victims;
//!    those from the first group count as PDB violations.
//! 4. **Pick one node** (kube's `pickOneNodeForPreemption`), each criterion breaking the ties
//!    of the one before: fewest PodDisruptionBudget violations, lowest highest-victim priority, lowest sum of victim priorities (each shifted
//!    by 2^31 so negatives count), fewest victims, latest start of the highest-priority
//!    victims; then the first in dry-run order (kube: map order, i.e. random).
//! 5. **Prepare**: victims waiting at Permit are rejected, the others deleted through the
//!    client; pods of lower priority nominated to the node lose their nomination. The pod is
//!    nominated to the node and goes back to the queue; the victims' deletion events bring it
//!    back.
//!
//! Start times: the harness runs no kubelet, so pods have no `status.startTime`; as in
//! scheduler_perf, where kube falls back to "now" for every pod, start time breaks no ties, and
//! the pod key orders equal pods deterministically.

use super::pod_group_preemption::victims::{self, PodGroupLookup, Victim};
use super::pod_group_preemption::{self as group_preemption, Assignment, DomainHost};
use crate::api::pdb::split_by_pdb_violation;
use crate::api::{Pod, PodDisruptionBudget, PodKey, Sym};
use crate::framework::interface::{
    ClusterClient, Diagnosis, Handle, Plugin, PodGroupHandle, PodGroupPostFilterPlugin,
    PostFilterPlugin, PostFilterResult,
};
use crate::framework::pod_group::{PodGroupCycleState, PodGroupInfo, PodGroupPostFilterResult};
use crate::framework::pod_group_state::PodGroupStates;
use crate::framework::{Code, CycleState, NodeInfo, Status};
use parking_lot::Mutex;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use std::cmp::Ordering;
use std::sync::Arc;

pub(crate) const NAME: &str = "DefaultPreemption";

/// `DefaultPreemptionArgs`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct DefaultPreemptionArgs {
    #[serde(default = "default_pct")]
    pub(crate) min_candidate_nodes_percentage: i32,
    #[serde(default = "default_abs")]
    pub(crate) min_candidate_nodes_absolute: i32,
}

fn default_pct() -> i32 {
    10
}
fn default_abs() -> i32 {
    100
}

impl Default for DefaultPreemptionArgs {
    fn default() -> Self {
        DefaultPreemptionArgs {
            min_candidate_nodes_percentage: default_pct(),
            min_candidate_nodes_absolute: default_abs(),
        }
    }
}

impl DefaultPreemptionArgs {
    /// kube's `ValidateDefaultPreemptionArgs`.
    pub(crate) fn validate(&self) -> Result<(), String> {
        let mut errs = Vec::new();
        let pct = self.min_candidate_nodes_percentage;
        let abs = self.min_candidate_nodes_absolute;
        if !(0..=100).contains(&pct) {
            errs.push(format!(
                "minCandidateNodesPercentage: Invalid value: {pct}: not in valid range [0, 100]"
            ));
        }
        if abs < 0 {
            errs.push(format!(
                "minCandidateNodesAbsolute: Invalid value: {abs}: not in valid range [0, inf)"
            ));
        }
        if pct == 0 && abs == 0 {
            errs.push(
                "minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time \
                 as minCandidateNodesAbsolute"
                    .to_string(),
            );
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(errs.join(", "))
        }
    }
}

pub(crate) struct DefaultPreemption {
    args: DefaultPreemptionArgs,
    client: Arc<dyn ClusterClient>,
    rng: Mutex<ChaCha8Rng>,
    /// The scheduler's pool, for the dry runs; `None`: sequential.
    pool: Option<Arc<rayon::ThreadPool>>,
    /// The pod groups, read only under GenericWorkload (kube's pod-group listers): victims
    /// are then units (a pod, or a whole `disruptionMode: all` group) at their group's
    /// priority, and PodGroupPostFilter preempts for groups.
    groups: Option<Arc<PodGroupStates>>,
    /// `PodGroupPreemptionPolicy`: a preempting group's own `spec.preemptionPolicy` rules.
    pod_group_preemption_policy: bool,
}

/// A node where preemption would work, with its victims (most important first).
#[derive(Clone, Debug)]
pub struct Candidate {
    pub node: Sym,
    /// Most important first.
    pub victims: Vec<Arc<Pod>>,
    /// Victims whose eviction violates a PodDisruptionBudget.
    pub num_pdb_violations: usize,
}

/// A node's victims (most important first) and how many of them violate a budget.
pub(crate) type Victims = (Vec<Arc<Pod>>, usize);

/// kube's `MoreImportantPod`: higher priority, then earlier start (not modelled: see the
/// module doc), then the key, for a deterministic order.
pub(crate) fn more_important(a: &Pod, b: &Pod) -> Ordering {
    b.priority()
        .cmp(&a.priority())
        .then_with(|| a.key.cmp(&b.key))
}

impl DefaultPreemption {
    pub(crate) fn new(
        args: DefaultPreemptionArgs,
        client: Arc<dyn ClusterClient>,
    ) -> DefaultPreemption {
        DefaultPreemption {
            args,
            client,
            rng: Mutex::new(ChaCha8Rng::seed_from_u64(0)),
            pool: None,
            groups: None,
            pod_group_preemption_policy: false,
        }
    }

    /// Reads `groups` (GenericWorkload on; `None`: off) and, with `policy`, the
    /// PodGroupPreemptionPolicy gate.
    pub(crate) fn with_pod_groups(
        mut self,
        groups: Option<Arc<PodGroupStates>>,
        policy: bool,
    ) -> DefaultPreemption {
        self.groups = groups;
        self.pod_group_preemption_policy = policy;
        self
    }

    /// Runs the dry runs on `pool` (the scheduler's `parallelism`).
    pub(crate) fn with_pool(mut self, pool: Option<Arc<rayon::ThreadPool>>) -> DefaultPreemption {
        self.pool = pool;
        self
    }

    /// kube's `calculateNumCandidates`.
    fn num_candidates(&self, n: usize) -> usize {
        let pct = self.args.min_candidate_nodes_percentage.max(0) as usize;
        let abs = self.args.min_candidate_nodes_absolute.max(0) as usize;
        (n * pct / 100).max(abs).min(n)
    }

    /// kube's `SelectVictimsOnNode` on copies of the node and the state: the victims (most
    /// important first) and how many of them violate a PodDisruptionBudget, or why preemption
    /// cannot help on this node. `noms`: the pods nominated to this node with at least `pod`'s
    /// priority (the nominator's view, taken once per PostFilter); `pdbs`: every budget, read
    /// once per PostFilter.
    pub(crate) fn select_victims_on_node(
        &self,
        handle: &dyn Handle,
        state: &CycleState,
        pod: &Pod,
        node: &NodeInfo,
        noms: &[Arc<Pod>],
        pdbs: &[Arc<PodDisruptionBudget>],
    ) -> Result<Victims, Status> {
        let mut state = state.clone();
        let mut ni = node.clone();
        let priority = pod.priority();
        let mut potential: Vec<Arc<Pod>> = ni
            .pods
            .iter()
            .filter(|p| p.priority() < priority)
            .cloned()
            .collect();
        if potential.is_empty() {
            return Err(Status::new(
                Code::UnschedulableAndUnresolvable,
                "No preemption victims found for incoming pod",
            ));
        }
        for v in &potential {
            ni.remove_pod(v);
            let s = handle.run_pre_filter_extension_remove_pod(&mut state, pod, v, &ni);
            if !s.is_success() {
                return Err(s);
            }
        }
        let filters = handle.active_filter_plugins(&state, pod);
        let s = handle.run_filter_plugins_with_nominated_pods(&filters, &state, pod, &ni, noms);
        if !s.is_success() {
            return Err(s);
        }
        potential.sort_by(|a, b| more_important(a, b));
        // Reprieve the pods whose eviction would violate a budget first, then the others,
        // each group most important first.
        let (violating, non_violating) = split_by_pdb_violation(potential, pdbs);
        let mixed = !violating.is_empty() && !non_violating.is_empty();
        let mut victims = Vec::new();
        let mut num_violating = 0;
        for (group_violates, group) in [(true, violating), (false, non_violating)] {
            for p in group {
                ni.add_pod(&p);
                let s = handle.run_pre_filter_extension_add_pod(&mut state, pod, &p, &ni);
                if !s.is_success() {
                    return Err(s);
                }
                let fits = handle
                    .run_filter_plugins_with_nominated_pods(&filters, &state, pod, &ni, noms)
                    .is_success();
                if !fits {
                    ni.remove_pod(&p);
                    let s = handle.run_pre_filter_extension_remove_pod(&mut state, pod, &p, &ni);
                    if !s.is_success() {
                        return Err(s);
                    }
                    victims.push(p);
                    if group_violates {
                        num_violating += 1;
                    }
                }
            }
        }
        if mixed {
            // Most important first again across the two groups.
            victims.sort_by(|a, b| more_important(a, b));
        }
        Ok((victims, num_violating))
    }

    /// kube's `SelectVictimsOnNode` with GenericWorkload on: the victims are units
    /// (`pod_group_preemption::victims`): a pod, or every scheduled pod of a
    /// `disruptionMode: all` group wherever it runs, at the group's priority. Only the main
    /// node's NodeInfo changes; a group's pods on other nodes go through the PreFilter
    /// extensions alone (with their own node), as kube does. The victims' pods, victim by
    /// victim most important first, and how many of them violate a budget.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn select_group_victims_on_node(
        &self,
        handle: &dyn Handle,
        state: &CycleState,
        pod: &Pod,
        node: &NodeInfo,
        noms: &[Arc<Pod>],
        pdbs: &[Arc<PodDisruptionBudget>],
        groups: PodGroupLookup<'_>,
    ) -> Result<Victims, Status> {
        let mut state = state.clone();
        let mut ni = node.clone();
        let main = ni.name();
        let snapshot = handle.snapshot();
        let mut potential: Vec<Victim> =
            victims::cross_node_victims([node], snapshot, Some(groups))
                .into_iter()
                .filter(|v| v.priority < pod.priority())
                .collect();
        if potential.is_empty() {
            return Err(Status::new(
                Code::UnschedulableAndUnresolvable,
                "No preemption victims found for incoming pod",
            ));
        }
        // Adds (or removes) a victim's pods: on the main node in `ni`, elsewhere only in the
        // PreFilter state.
        let change = |state: &mut CycleState, ni: &mut NodeInfo, v: &Victim, add: bool| {
            for p in &v.pods {
                let on = p.node_name.unwrap_or(Sym::EMPTY);
                let s = if on == main {
                    if add {
                        ni.add_pod(p);
                        handle.run_pre_filter_extension_add_pod(state, pod, p, ni)
                    } else {
                        ni.remove_pod(p);
                        handle.run_pre_filter_extension_remove_pod(state, pod, p, ni)
                    }
                } else {
                    let Some(remote) = snapshot.get(on) else {
                        return Status::error(format!(
                            "failed to get node info for node {:?} from snapshot",
                            on.to_string_lossy()
                        ));
                    };
                    if add {
                        handle.run_pre_filter_extension_add_pod(state, pod, p, remote)
                    } else {
                        handle.run_pre_filter_extension_remove_pod(state, pod, p, remote)
                    }
                };
                if !s.is_success() {
                    return s;
                }
            }
            Status::success()
        };
        for v in &potential {
            let s = change(&mut state, &mut ni, v, false);
            if !s.is_success() {
                return Err(s);
            }
        }
        let filters = handle.active_filter_plugins(&state, pod);
        let s = handle.run_filter_plugins_with_nominated_pods(&filters, &state, pod, &ni, noms);
        if !s.is_success() {
            return Err(s);
        }
        potential.sort_by(victims::more_important_victim);
        let (violating, non_violating) = victims::split_victims_by_pdb_violation(potential, pdbs);
        let mixed = !violating.is_empty() && !non_violating.is_empty();
        let mut evicted: Vec<Victim> = Vec::new();
        let mut num_violating = 0;
        let tagged = violating
            .into_iter()
            .chain(non_violating.into_iter().map(|v| (v, 0)));
        for (v, violations) in tagged {
            let s = change(&mut state, &mut ni, &v, true);
            if !s.is_success() {
                return Err(s);
            }
            let fits = handle
                .run_filter_plugins_with_nominated_pods(&filters, &state, pod, &ni, noms)
                .is_success();
            if !fits {
                let s = change(&mut state, &mut ni, &v, false);
                if !s.is_success() {
                    return Err(s);
                }
                num_violating += violations;
                evicted.push(v);
            }
        }
        if mixed {
            evicted.sort_by(victims::more_important_victim);
        }
        Ok((
            evicted.into_iter().flat_map(|v| v.pods).collect(),
            num_violating,
        ))
    }

    /// kube's `findCandidates` + `DryRunPreemption`.
    pub(crate) fn find_candidates(
        &self,
        handle: &dyn Handle,
        state: &CycleState,
        pod: &Pod,
        diagnosis: &Diagnosis,
    ) -> (Vec<Candidate>, Vec<(Sym, Status)>) {
        let potential: Vec<&Arc<NodeInfo>> = diagnosis
            .node_statuses
            .iter()
            .filter(|(_, st)| st.code() != Code::UnschedulableAndUnresolvable)
            .filter_map(|(n, _)| handle.snapshot().get(*n))
            .collect();
        let mut statuses = Vec::new();
        if potential.is_empty() {
            return (Vec::new(), statuses);
        }
        let n = potential.len();
        let offset = self.rng.lock().random_range(0..n);
        let want = self.num_candidates(n);
        let nominated = handle.nominator().nominated_at_least(pod);
        let pdbs = self.client.pod_disruption_budgets();
        // kube keeps candidates that violate no budget apart from those that do, each list
        // holding at most `want`, and stops once it has `want` in all with at least one that
        // violates nothing: it looks past `want` for a node where preemption breaks no budget.
        let (mut clean, mut violating) = (Vec::new(), Vec::new());
        let done = |clean: &Vec<Candidate>, violating: &Vec<Candidate>| {
            !clean.is_empty() && clean.len() + violating.len() >= want
        };
        // Dry runs go in order from the offset, in chunks that run in parallel on the
        // scheduler's pool; results are taken in that order up to the stop, so the outcome
        // does not depend on the thread count (kube's parallel dry run stops at whichever
        // come first).
        let chunk = if self.pool.is_some() { want.max(32) } else { 1 };
        let mut next = 0;
        while next < n && !done(&clean, &violating) {
            let end = (next + chunk).min(n);
            let order: Vec<&Arc<NodeInfo>> =
                (next..end).map(|i| potential[(offset + i) % n]).collect();
            let run = |node: &&Arc<NodeInfo>| {
                let noms = nominated.get(&node.name()).map_or(&[][..], |v| &v[..]);
                match &self.groups {
                    Some(groups) => self.select_group_victims_on_node(
                        handle, state, pod, node, noms, &pdbs, &**groups,
                    ),
                    None => self.select_victims_on_node(handle, state, pod, node, noms, &pdbs),
                }
            };
            let results: Vec<Result<Victims, Status>> = match &self.pool {
                Some(pool) if order.len() > 1 => {
                    use rayon::prelude::*;
                    pool.install(|| order.par_iter().map(run).collect())
                }
                _ => order.iter().map(run).collect(),
            };
            for (node, r) in order.into_iter().zip(results) {
                if done(&clean, &violating) {
                    break;
                }
                match r {
                    Ok((v, num_pdb_violations)) if !v.is_empty() => {
                        let list = if num_pdb_violations == 0 {
                            &mut clean
                        } else {
                            &mut violating
                        };
                        if list.len() < want {
                            list.push(Candidate {
                                node: node.name(),
                                victims: v,
                                num_pdb_violations,
                            });
                        }
                    }
                    Ok(_) => statuses.push((
                        node.name(),
                        Status::error(format!(
                            "expected at least one victim pod on node {:?}",
                            node.name().to_string_lossy()
                        )),
                    )),
                    Err(s) => statuses.push((node.name(), s)),
                }
            }
            next = end;
        }
        clean.append(&mut violating);
        (clean, statuses)
    }
}

/// The second half of kube's `PodEligibleToPreemptOthers`: a pod already nominated to a node
/// where lower-priority pods are still terminating (its earlier preemption's victims) waits
/// for them instead of preempting again, unless that node is now unresolvable for it.
fn not_eligible_for_terminating_victims(
    handle: &dyn Handle,
    pod: &Pod,
    diagnosis: &Diagnosis,
    groups: Option<PodGroupLookup<'_>>,
) -> Option<&'static str> {
    let nominated = pod.nominated_node_name.filter(|n| !n.is_empty())?;
    let unresolvable = diagnosis
        .node_statuses
        .iter()
        .any(|(n, s)| *n == nominated && s.code() == Code::UnschedulableAndUnresolvable);
    if unresolvable {
        return None;
    }
    let node = handle.snapshot().get(nominated)?;
    node.pods
        .iter()
        .any(|p| p.deletion_timestamp && victims::pod_priority(p, groups) < pod.priority())
        .then_some("not eligible due to a terminating pod on the nominated node.")
}

/// kube's `pickOneNodeForPreemption` (see the module doc for the order of criteria).
pub(crate) fn pick_one_node_for_preemption(candidates: &[Candidate]) -> Option<usize> {
    if candidates.is_empty() {
        return None;
    }
    let mut best: Vec<usize> = (0..candidates.len()).collect();
    let keep_max = |best: &mut Vec<usize>, score: &dyn Fn(&Candidate) -> i64| {
        let max = best
            .iter()
            .map(|&i| score(&candidates[i]))
            .max()
            .unwrap_or(0);
        best.retain(|&i| score(&candidates[i]) == max);
    };
    // Fewest PodDisruptionBudget violations.
    keep_max(&mut best, &|c| -(c.num_pdb_violations as i64));
    // Highest-priority victim: victims are most important first.
    keep_max(&mut best, &|c| {
        -(c.victims
            .first()
            .map_or(i64::MIN + 1, |v| i64::from(v.priority())))
    });
    keep_max(&mut best, &|c| {
        -c.victims
            .iter()
            .map(|v| i64::from(v.priority()) + i64::from(i32::MAX) + 1)
            .sum::<i64>()
    });
    keep_max(&mut best, &|c| -(c.victims.len() as i64));
    best.first().copied()
}

impl Plugin for DefaultPreemption {
    fn name(&self) -> &'static str {
        NAME
    }
    fn into_post_filter(self: Arc<Self>) -> Option<Arc<dyn PostFilterPlugin>> {
        Some(self)
    }
    fn into_pod_group_post_filter(self: Arc<Self>) -> Option<Arc<dyn PodGroupPostFilterPlugin>> {
        Some(self)
    }
}

/// The pod-group cycle's handle as group preemption's [`DomainHost`].
pub(crate) struct GroupHost<'a> {
    pub(crate) handle: &'a mut dyn PodGroupHandle,
}

impl GroupHost<'_> {
    fn node(&self, node: Sym) -> Result<&NodeInfo, Status> {
        self.handle
            .snapshot()
            .get(node)
            .map(|n| &**n)
            .ok_or_else(|| {
                Status::error(format!(
                    "nodeinfo not found for node name {:?}",
                    node.to_string_lossy()
                ))
            })
    }
}

impl DomainHost for GroupHost<'_> {
    fn snapshot(&self) -> &crate::framework::Snapshot {
        self.handle.snapshot()
    }
    fn remove_pod(&mut self, pod: &Pod, node: Sym) -> Result<(), String> {
        self.handle.remove_pod_from_snapshot(pod, node)
    }
    fn add_pod(&mut self, pod: &Arc<Pod>, node: Sym) -> Result<(), String> {
        self.handle.add_pod_to_snapshot(pod, node)
    }
    fn pre_filter_add_pod(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        to_add: &Pod,
        node: Sym,
    ) -> Status {
        match self.node(node) {
            Ok(ni) => self
                .handle
                .run_pre_filter_extension_add_pod(state, pod, to_add, ni),
            Err(st) => st,
        }
    }
    fn pre_filter_remove_pod(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        to_remove: &Pod,
        node: Sym,
    ) -> Status {
        match self.node(node) {
            Ok(ni) => self
                .handle
                .run_pre_filter_extension_remove_pod(state, pod, to_remove, ni),
            Err(st) => st,
        }
    }
    fn filter(&self, state: &CycleState, pod: &Pod, node: Sym) -> Status {
        let ni = match self.node(node) {
            Ok(ni) => ni,
            Err(st) => return st,
        };
        let filters = self.handle.active_filter_plugins(state, pod);
        let noms = self
            .handle
            .nominator()
            .nominated_at_least(pod)
            .remove(&node)
            .unwrap_or_default();
        self.handle
            .run_filter_plugins_with_nominated_pods(&filters, state, pod, ni, &noms)
    }
    fn schedule(&mut self) -> (Vec<Assignment>, Status) {
        let (a, st) = self.handle.schedule_pod_group();
        let assignments = a
            .proposed_assignments
            .into_iter()
            .map(|pa| Assignment {
                pod: pa.pod,
                node: pa.node_name,
                state: (*pa.cycle_state).clone(),
            })
            .collect();
        (assignments, st)
    }
}

fn nominations(noms: Vec<(PodKey, Sym)>) -> PodGroupPostFilterResult {
    PodGroupPostFilterResult {
        nominating_infos: noms
            .into_iter()
            .map(|(k, n)| (k, crate::framework::Nominating::Override(n)))
            .collect(),
    }
}

impl PodGroupPostFilterPlugin for DefaultPreemption {
    /// kube's `PodGroupPostFilter` (workload-aware preemption, `pod_group_preemption`): the
    /// evaluation runs inside the handle's mutation session; the victims are deleted after
    /// it ends (tidegate's mutations go through the scheduler's cache, and the session's undo
    /// must not put back pods already deleted; kube changes only its snapshot, so the order
    /// makes no difference there). Messages carry kube's `pod group preemption: ` prefix.
    fn pod_group_post_filter(
        &self,
        handle: &mut dyn PodGroupHandle,
        _state: &mut PodGroupCycleState,
        pod_group: &PodGroupInfo,
    ) -> (Option<PodGroupPostFilterResult>, Status) {
        let prefixed = |st: Status| {
            let msg = st.message();
            if msg.is_empty() {
                st
            } else {
                Status::new(st.code(), format!("pod group preemption: {msg}"))
                    .with_plugin(st.plugin())
            }
        };
        let Some(groups) = &self.groups else {
            return (
                None,
                Status::new(
                    Code::Unschedulable,
                    "pod group preemption: GenericWorkload is off",
                ),
            );
        };
        let preemptor = group_preemption::PodGroupPreemptor::new(
            pod_group.pod_group.as_deref(),
            // A composite root's preemptors are every leaf's unscheduled pods.
            pod_group.all_unscheduled_pods(),
            self.pod_group_preemption_policy,
        );
        let pdbs = self.client.pod_disruption_budgets();
        handle.start_mutations();
        let outcome = {
            let mut host = GroupHost {
                handle: &mut *handle,
            };
            group_preemption::evaluate(&mut host, &preemptor, &**groups, &pdbs)
        };
        handle.end_mutations();
        match outcome {
            Err(st) => (None, prefixed(st)),
            Ok(group_preemption::Outcome::Ongoing(noms)) => (
                Some(nominations(noms)),
                prefixed(Status::new(
                    Code::Success,
                    "ongoing preemption on nominated nodes",
                )),
            ),
            Ok(group_preemption::Outcome::Preempt(sel)) => {
                // kube's prepareCandidate: victims waiting at Permit are rejected, those
                // already terminating are left alone, the others deleted.
                for v in &sel.pods {
                    if v.deletion_timestamp {
                        continue;
                    }
                    if let Some(wp) = handle.waiting_pods().get(&v.key) {
                        wp.reject(NAME, "preempted");
                        continue;
                    }
                    if let Err(e) = self.client.delete_pod(v) {
                        return (
                            None,
                            Status::error(format!("pod group preemption: deleting {}: {e}", v.key)),
                        );
                    }
                }
                let msg = format!(
                    "found a placement for podgroup, preempting {} victims",
                    sel.pods.len()
                );
                (
                    Some(nominations(sel.nominations)),
                    prefixed(Status::new(Code::Success, msg)),
                )
            }
        }
    }
}

impl PostFilterPlugin for DefaultPreemption {
    fn post_filter(
        &self,
        handle: &dyn Handle,
        state: &mut CycleState,
        pod: &Pod,
        diagnosis: &Diagnosis,
    ) -> (Option<PostFilterResult>, Status) {
        if pod.spec.preempt_never {
            return (
                None,
                Status::new(
                    Code::Unschedulable,
                    "not eligible due to preemptionPolicy=Never.",
                ),
            );
        }
        let groups = self.groups.as_deref().map(|g| g as PodGroupLookup<'_>);
        if let Some(msg) = not_eligible_for_terminating_victims(handle, pod, diagnosis, groups) {
            return (None, Status::new(Code::Unschedulable, msg));
        }
        let (candidates, statuses) = self.find_candidates(handle, state, pod, diagnosis);
        if let Some((_, st)) = statuses.iter().find(|(_, s)| s.code() == Code::Error)
            && candidates.is_empty()
        {
            return (None, st.clone());
        }
        let Some(best) = pick_one_node_for_preemption(&candidates) else {
            // kube clears the pod's nomination and reports why, per node.
            let all = handle.snapshot().nodes.len();
            let mut counts: ahash::AHashMap<crate::framework::status::Reason, usize> =
                ahash::AHashMap::new();
            let tried: Vec<Sym> = statuses.iter().map(|(n, _)| *n).collect();
            for (_, s) in &statuses {
                for r in s.reasons() {
                    *counts.entry(r.clone()).or_default() += 1;
                }
            }
            let unresolvable = all - tried.len();
            if unresolvable > 0 {
                *counts
                    .entry("Preemption is not helpful for scheduling".into())
                    .or_default() += unresolvable;
            }
            let mut parts: Vec<String> = counts
                .into_iter()
                .map(|(r, c)| format!("{c} {r}"))
                .collect();
            parts.sort();
            let msg = format!(
                "preemption: 0/{all} nodes are available: {}.",
                parts.join(", ")
            );
            return (
                Some(PostFilterResult {
                    nominated_node_name: Some(Sym::EMPTY),
                }),
                Status::new(Code::Unschedulable, msg),
            );
        };
        let c = &candidates[best];
        // kube's prepareCandidate.
        for v in &c.victims {
            if let Some(wp) = handle.waiting_pods().get(&v.key) {
                wp.reject(NAME, "preempted");
                continue;
            }
            if let Err(e) = self.client.delete_pod(v) {
                return (
                    None,
                    Status::error(format!("preemption: deleting {}: {e}", v.key)),
                );
            }
        }
        for p in handle.nominator().nominated_pods_for_node(c.node) {
            if p.priority() < pod.priority() {
                handle
                    .nominator()
                    .add_nominated_pod(&p, crate::framework::Nominating::Override(Sym::EMPTY));
                self.client.set_nominated_node_name(&p, None);
            }
        }
        (
            Some(PostFilterResult {
                nominated_node_name: Some(c.node),
            }),
            Status::success(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::PodSpecInfo;
    use crate::plugins::pod_group_preemption::victims::ListedGroups;

    fn victim(name: &str, priority: i32) -> Arc<Pod> {
        let spec = PodSpecInfo {
            priority,
            ..PodSpecInfo::default()
        };
        Arc::new(Pod::new("ns", name, Arc::new(spec)))
    }

    fn cand(node: &str, prios: &[i32]) -> Candidate {
        let mut victims: Vec<Arc<Pod>> = prios
            .iter()
            .enumerate()
            .map(|(i, &p)| victim(&format!("{node}-{i}"), p))
            .collect();
        victims.sort_by(|a, b| more_important(a, b));
        Candidate {
            node: Sym::new(node),
            victims,
            num_pdb_violations: 0,
        }
    }

    fn with_violations(mut c: Candidate, n: usize) -> Candidate {
        c.num_pdb_violations = n;
        c
    }

    /// After TestPickOneNodeForPreemption
    /// (pkg/scheduler/framework/preemption/preemption_test.go, kubernetes/kubernetes).
    #[test]
    fn pick_one_node_for_preemption_orders_the_criteria_as_kube() {
        let cases: &[(&str, Vec<Candidate>, &str)] = &[
            (
                "fewest PDB violations first, even with more important victims",
                vec![
                    with_violations(cand("n1", &[1]), 1),
                    with_violations(cand("n2", &[9, 9]), 0),
                ],
                "n2",
            ),
            (
                "lowest highest-priority victim",
                vec![cand("n1", &[5, 1]), cand("n2", &[3, 3, 3])],
                "n2",
            ),
            (
                "then the lowest sum of priorities",
                vec![cand("n1", &[5, 4]), cand("n2", &[5, 1])],
                "n2",
            ),
            (
                "negative priorities count by their shift, so fewer pods win there",
                vec![cand("n1", &[-5, -5]), cand("n2", &[-5])],
                "n2",
            ),
            (
                "then the fewest victims (equal sums)",
                vec![cand("n1", &[0, 0]), cand("n2", &[0])],
                "n2",
            ),
            (
                "ties keep dry-run order",
                vec![cand("n1", &[1]), cand("n2", &[1])],
                "n1",
            ),
        ];
        for (name, cs, want) in cases {
            let got = pick_one_node_for_preemption(cs).map(|i| cs[i].node);
            assert_eq!(got, Some(Sym::new(want)), "{name}");
        }
        assert_eq!(pick_one_node_for_preemption(&[]), None);
    }

    /// After TestValidateDefaultPreemptionArgs
    /// (pkg/scheduler/apis/config/validation/validation_pluginargs_test.go).
    #[test]
    fn args_are_validated_as_kube() {
        let a = |pct, abs| DefaultPreemptionArgs {
            min_candidate_nodes_percentage: pct,
            min_candidate_nodes_absolute: abs,
        };
        assert!(a(10, 100).validate().is_ok());
        assert!(a(0, 1).validate().is_ok());
        assert!(a(101, 1).validate().unwrap_err().contains("[0, 100]"));
        assert!(a(10, -1).validate().unwrap_err().contains("[0, inf)"));
        assert!(a(0, 0).validate().unwrap_err().contains("cannot be zero"));
        let d: DefaultPreemptionArgs = crate::framework::registry::decode_args(Some(
            &serde_json::json!({"minCandidateNodesAbsolute": 5}),
        ))
        .unwrap();
        assert_eq!(d, a(10, 5));
        assert!(
            crate::framework::registry::decode_args::<DefaultPreemptionArgs>(Some(
                &serde_json::json!({"minCandidates": 5})
            ))
            .is_err()
        );
    }

    /// A Handle whose Filter fits pods by a `size` label against a per-node capacity
    /// (kube's `mockFilterPlugin` in podgrouppreemption_test.go).
    struct CapacityHandle {
        snapshot: crate::framework::Snapshot,
        capacity: i64,
        waiting: crate::framework::WaitingPods,
        removed_remote: Mutex<Vec<(String, Sym)>>,
    }

    struct NoNominations;
    impl crate::framework::PodNominator for NoNominations {
        fn add_nominated_pod(&self, _: &Arc<Pod>, _: crate::framework::Nominating) {}
        fn delete_nominated_pod_if_exists(&self, _: &crate::api::PodKey) {}
        fn update_nominated_pod(&self, _: &Pod, _: &Arc<Pod>) {}
        fn nominated_pods_for_node(&self, _: Sym) -> Vec<Arc<Pod>> {
            Vec::new()
        }
        fn nominated_at_least(&self, _: &Pod) -> ahash::AHashMap<Sym, Vec<Arc<Pod>>> {
            ahash::AHashMap::new()
        }
    }

    impl Handle for CapacityHandle {
        fn snapshot(&self) -> &crate::framework::Snapshot {
            &self.snapshot
        }
        fn nominator(&self) -> &dyn crate::framework::PodNominator {
            &NoNominations
        }
        fn waiting_pods(&self) -> &crate::framework::WaitingPods {
            &self.waiting
        }
        fn active_filter_plugins(
            &self,
            _: &CycleState,
            _: &Pod,
        ) -> crate::framework::ActiveFilters<'_> {
            Vec::new()
        }
        fn run_filter_plugins_with_nominated_pods(
            &self,
            _: &[(
                &dyn crate::framework::FilterPlugin,
                crate::framework::node_info::NodeTraits,
            )],
            _: &CycleState,
            pod: &Pod,
            node: &NodeInfo,
            _: &[Arc<Pod>],
        ) -> Status {
            let size = |p: &Pod| {
                p.labels
                    .get(Sym::new("size"))
                    .and_then(|s| s.to_string_lossy().parse::<i64>().ok())
                    .unwrap_or(1)
            };
            let used: i64 = node.pods.iter().map(|p| size(p)).sum();
            if used + size(pod) > self.capacity {
                Status::new(Code::Unschedulable, "not enough capacity")
            } else {
                Status::success()
            }
        }
        fn run_pre_filter_extension_add_pod(
            &self,
            _: &mut CycleState,
            _: &Pod,
            _: &Pod,
            _: &NodeInfo,
        ) -> Status {
            Status::success()
        }
        fn run_pre_filter_extension_remove_pod(
            &self,
            _: &mut CycleState,
            _: &Pod,
            to_remove: &Pod,
            node: &NodeInfo,
        ) -> Status {
            if to_remove.node_name != Some(node.name()) {
                return Status::error("a victim's pod went to the wrong node");
            }
            self.removed_remote
                .lock()
                .push((to_remove.name.to_string(), node.name()));
            Status::success()
        }
    }

    fn grouped(name: &str, node: &str, priority: i32, group: Option<&str>) -> Arc<Pod> {
        let spec = PodSpecInfo {
            priority,
            scheduling_group: group.map(Arc::from),
            ..PodSpecInfo::default()
        };
        let mut p = Pod::new("default", name, Arc::new(spec));
        p.node_name = Some(Sym::new(node));
        Arc::new(p)
    }

    fn pod_group(name: &str, priority: i32, all: bool) -> Arc<crate::api::PodGroup> {
        use crate::api::{DisruptionMode, PodGroup, PodGroupKey, PodGroupPolicy};
        Arc::new(PodGroup {
            priority,
            disruption_mode: if all {
                DisruptionMode::All
            } else {
                DisruptionMode::Single
            },
            ..PodGroup::new(PodGroupKey::new("default", name), PodGroupPolicy::Basic)
        })
    }

    fn capacity_handle(pods: &[Arc<Pod>], nodes: &[&str], capacity: i64) -> CapacityHandle {
        let mut snapshot = crate::framework::Snapshot::default();
        for (i, n) in nodes.iter().enumerate() {
            let mut ni = NodeInfo::new(Arc::new(crate::api::Node::named(n)));
            for p in pods.iter().filter(|p| p.node_name == Some(Sym::new(n))) {
                ni.add_pod(p);
            }
            snapshot.index.insert(Sym::new(n), i);
            snapshot.nodes.push(Arc::new(ni));
        }
        CapacityHandle {
            snapshot,
            capacity,
            waiting: crate::framework::WaitingPods::new(),
            removed_remote: Mutex::new(Vec::new()),
        }
    }

    /// After TestCustomSelection "filter for matching pod group: all affected nodes eligible"
    /// (pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go, v1.37.2,
    /// GenericWorkload on): a `disruptionMode: all` group is one victim on either of its
    /// nodes, evicted whole; its member on the other node goes through the PreFilter
    /// extension with that node.
    #[test]
    fn a_group_in_all_mode_is_a_victim_whole_on_every_node() {
        let pods = [
            grouped("v1", "node1", 0, Some("pg1")),
            grouped("v2", "node2", 0, Some("pg1")),
        ];
        let lookup = ListedGroups(vec![pod_group("pg1", 0, true)]);
        let h = capacity_handle(&pods, &["node1", "node2"], 1);
        let dp = DefaultPreemption::new(
            DefaultPreemptionArgs::default(),
            Arc::new(crate::framework::NoopClient),
        );
        let preemptor = grouped("p1", "", 1000, None);
        for node in ["node1", "node2"] {
            h.removed_remote.lock().clear();
            let ni = h.snapshot.get(Sym::new(node)).unwrap().clone();
            let (victims, violations) = dp
                .select_group_victims_on_node(
                    &h,
                    &CycleState::new(),
                    &preemptor,
                    &ni,
                    &[],
                    &[],
                    &lookup,
                )
                .unwrap();
            let mut names: Vec<&str> = victims.iter().map(|p| &*p.name).collect();
            names.sort_unstable();
            assert_eq!(names, ["v1", "v2"], "on {node}");
            assert_eq!(violations, 0);
            assert!(
                h.removed_remote
                    .lock()
                    .iter()
                    .all(|(p, n)| (p == "v1") == (*n == Sym::new("node1"))),
                "each member's extension runs with its own node"
            );
        }
        // In `single` mode each member is its own victim: only the local one goes.
        let lookup = ListedGroups(vec![pod_group("pg1", 0, false)]);
        let ni = h.snapshot.get(Sym::new("node1")).unwrap().clone();
        let (victims, _) = dp
            .select_group_victims_on_node(
                &h,
                &CycleState::new(),
                &preemptor,
                &ni,
                &[],
                &[],
                &lookup,
            )
            .unwrap();
        assert_eq!(victims.len(), 1);
        assert_eq!(&*victims[0].name, "v1");
    }

    /// The victim's priority is its group's (kube's GetPodPriority): a high-priority pod of a
    /// low-priority group is preemptible, a low-priority pod of a high-priority group is not.
    #[test]
    fn victims_take_their_group_priority() {
        let pods = [
            grouped("hi-pod-lo-group", "node1", 2000, Some("lo")),
            grouped("lo-pod-hi-group", "node2", 0, Some("hi")),
        ];
        let lookup = ListedGroups(vec![
            pod_group("lo", 0, false),
            pod_group("hi", 5000, false),
        ]);
        let h = capacity_handle(&pods, &["node1", "node2"], 1);
        let dp = DefaultPreemption::new(
            DefaultPreemptionArgs::default(),
            Arc::new(crate::framework::NoopClient),
        );
        let preemptor = grouped("p", "", 1000, None);
        let on = |n: &str| h.snapshot.get(Sym::new(n)).unwrap().clone();
        let (v, _) = dp
            .select_group_victims_on_node(
                &h,
                &CycleState::new(),
                &preemptor,
                &on("node1"),
                &[],
                &[],
                &lookup,
            )
            .unwrap();
        assert_eq!(&*v[0].name, "hi-pod-lo-group");
        let err = dp
            .select_group_victims_on_node(
                &h,
                &CycleState::new(),
                &preemptor,
                &on("node2"),
                &[],
                &[],
                &lookup,
            )
            .unwrap_err();
        assert_eq!(err.code(), Code::UnschedulableAndUnresolvable);
    }

    #[test]
    fn the_number_of_candidates_follows_kube() {
        let p = DefaultPreemption::new(
            DefaultPreemptionArgs::default(),
            Arc::new(crate::framework::NoopClient),
        );
        assert_eq!(p.num_candidates(50), 50);
        assert_eq!(p.num_candidates(5000), 500);
        assert_eq!(p.num_candidates(500), 100);
    }
}
