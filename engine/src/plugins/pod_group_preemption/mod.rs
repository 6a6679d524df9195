//! Workload-aware preemption: a pod group that cannot be placed evicts lower-priority pods
//! and groups so that it fits (kube v1.37.2
//! `pkg/scheduler/framework/preemption/podgrouppreemption.go`, run by DefaultPreemption's
//! PodGroupPostFilter). The domain is the whole cluster; the unit of eviction is a
//! [`Victim`](victims::Victim) (a pod, or a whole `disruptionMode: all` group).
//!
//! Protocol (kube's `PodGroupEvaluator.Preempt`), on the cycle's snapshot, which the caller
//! restores afterwards (kube's `StartMutations`/`EndMutations`):
//!
//! 1. **Domain**: every node, and the victims of every pod on them
//!    ([`victims::cross_node_victims`]), computed before anything changes.
//! 2. **Eligibility**: the preemptor's policy (below) `Never` is Unschedulable
//!    `not eligible due to preemptionPolicy=Never.`
//! 3. **Ongoing preemption**: when a member is nominated to a node where a pod of lower
//!    (group) priority is terminating, the members keep their nominations (Success, `ongoing
//!    preemption on nominated nodes`; nothing is evicted).
//! 4. **Remove** every victim of priority below the group's from the snapshot and rerun the
//!    group's scheduling algorithm ([`DomainHost::schedule`]); its failure is the result.
//! 5. **Reprieve**, most important first, the budget-violating victims then the others: put
//!    the victim's pods back (PreFilter AddPod extensions in each assigned member's state),
//!    then run Filter (with nominated pods) for each assigned member on its proposed node in
//!    the algorithm's order, assuming each member on its node after it passes (taken out again
//!    after the victim is judged). A victim is kept when every member still fits; otherwise
//!    its pods are removed again (RemovePod extensions) and it is evicted.
//! 6. **Result**: the evicted victims' pods (most important first), how many of them violate a
//!    budget, how many victims are groups, and each assigned member nominated (Override) to its
//!    proposed node.
//!
//! The preemptor's policy (kube's `resolvePreemptionPolicy`): with `PodGroupPreemptionPolicy`
//! on, the group's `spec.preemptionPolicy` when set, else `PreemptLowerPriority`; with it off,
//! `Never` when any member pod says `Never`. The preemptor's priority is the group's.
//!
//! Not modelled: kube runs the Reserve plugins for each assumed member during the reprieve
//! (and Unreserve after); no in-tree plugin of tidegate has Reserve, so the outcome is the
//! same. A terminating pod is one with a deletion timestamp (kube also asks for the
//! scheduler's DisruptionTarget condition; tidegate's pods carry no conditions), as in
//! DefaultPreemption's eligibility check.

pub(crate) mod victims;

#[cfg(test)]
mod e2e_test;
#[cfg(test)]
mod tests;

use crate::api::{Pod, PodDisruptionBudget, PodGroup, PodKey, Sym};
use crate::framework::{Code, CycleState, Status};
use std::sync::Arc;
use victims::{PodGroupLookup, Victim, more_important_victim, split_victims_by_pdb_violation};

/// One member of the group with the node the scheduling algorithm proposes (`Sym::EMPTY`:
/// none) and the member's cycle state from that run (kube's `ProposedAssignment`).
pub(crate) struct Assignment {
    pub(crate) pod: Arc<Pod>,
    pub(crate) node: Sym,
    pub(crate) state: CycleState,
}

/// What group preemption needs of the cycle (kube's `Handle` with its mutable snapshot lister
/// and the `PodGroupSchedulingFunc`). Node arguments name a node of the snapshot as it
/// stands.
pub(crate) trait DomainHost {
    fn snapshot(&self) -> &crate::framework::Snapshot;
    /// The snapshot's `RemovePod`: `pod` leaves `node`.
    fn remove_pod(&mut self, pod: &Pod, node: Sym) -> Result<(), String>;
    /// The snapshot's `AddPod`: `pod` is on `node`.
    fn add_pod(&mut self, pod: &Arc<Pod>, node: Sym) -> Result<(), String>;
    /// `RunPreFilterExtensionAddPod` in `state` for `pod`: `to_add` is on `node`.
    fn pre_filter_add_pod(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        to_add: &Pod,
        node: Sym,
    ) -> Status;
    /// `RunPreFilterExtensionRemovePod` in `state` for `pod`: `to_remove` left `node`.
    fn pre_filter_remove_pod(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        to_remove: &Pod,
        node: Sym,
    ) -> Status;
    /// `RunFilterPluginsWithNominatedPods` for `pod` on `node`.
    fn filter(&self, state: &CycleState, pod: &Pod, node: Sym) -> Status;
    /// The group's scheduling algorithm rerun on the snapshot as it stands (its own changes
    /// undone): every member's assignment and the group's status.
    fn schedule(&mut self) -> (Vec<Assignment>, Status);
}

/// kube's `podGroupPreemptor`.
#[derive(Clone, Debug)]
pub(crate) struct PodGroupPreemptor {
    pub(crate) priority: i32,
    /// The group's unscheduled members.
    pub(crate) pods: Vec<Arc<Pod>>,
    pub(crate) preempt_never: bool,
}

impl PodGroupPreemptor {
    /// kube's `newPodGroupPreemptor` (see the module doc for the policy).
    pub(crate) fn new(
        group: Option<&PodGroup>,
        pods: Vec<Arc<Pod>>,
        pod_group_preemption_policy: bool,
    ) -> PodGroupPreemptor {
        let preempt_never = if pod_group_preemption_policy {
            group.is_some_and(|g| g.preemption_policy_set && g.preempt_never)
        } else {
            pods.iter().any(|p| p.spec.preempt_never)
        };
        PodGroupPreemptor {
            priority: group.map_or(0, |g| g.priority),
            pods,
            preempt_never,
        }
    }
}

/// kube's `selectVictimsResult`.
#[derive(Clone, Debug, Default)]
pub(crate) struct SelectedVictims {
    /// The pods to evict, victim by victim, most important victim first.
    pub(crate) pods: Vec<Arc<Pod>>,
    /// kube reads this and the next only for its metrics (PDB violations, workload
    /// disruptions), which tidegate does not export; the ported table checks them.
    #[cfg_attr(not(test), expect(dead_code, reason = "kube's metrics only"))]
    pub(crate) num_pdb_violations: usize,
    /// How many evicted victims are groups (kube's `numPodGroupDisruptions`).
    #[cfg_attr(not(test), expect(dead_code, reason = "kube's metrics only"))]
    pub(crate) num_pod_group_disruptions: usize,
    /// Every assigned member with its proposed node.
    pub(crate) nominations: Vec<(PodKey, Sym)>,
}

/// What the evaluation decides.
#[derive(Clone, Debug)]
pub(crate) enum Outcome {
    /// A member waits for victims still terminating: every member keeps its nomination
    /// (`Sym::EMPTY` for none).
    Ongoing(Vec<(PodKey, Sym)>),
    /// Evict these.
    Preempt(SelectedVictims),
}

/// kube's `PodGroupEvaluator.Preempt` up to actuation: steps 1 to 6 of the module doc.
/// `groups` reads the pod groups (for victims' priorities and disruption modes).
pub(crate) fn evaluate(
    host: &mut dyn DomainHost,
    preemptor: &PodGroupPreemptor,
    groups: PodGroupLookup<'_>,
    pdbs: &[Arc<PodDisruptionBudget>],
) -> Result<Outcome, Status> {
    let snapshot = host.snapshot();
    let all =
        victims::cross_node_victims(snapshot.nodes.iter().map(|n| &**n), snapshot, Some(groups));
    if preemptor.preempt_never {
        return Err(Status::new(
            Code::Unschedulable,
            "not eligible due to preemptionPolicy=Never.",
        ));
    }
    if ongoing_preemption(host.snapshot(), preemptor, groups) {
        let noms = preemptor
            .pods
            .iter()
            .map(|p| (p.key.clone(), p.nominated_node_name.unwrap_or(Sym::EMPTY)))
            .collect();
        return Ok(Outcome::Ongoing(noms));
    }
    select_victims_on_domain(host, preemptor, all, pdbs, &more_important_victim)
        .map(Outcome::Preempt)
}

/// kube's `isOngoingPreemption`: a member's nominated node holds a terminating pod of lower
/// (group) priority.
fn ongoing_preemption(
    snapshot: &crate::framework::Snapshot,
    preemptor: &PodGroupPreemptor,
    groups: PodGroupLookup<'_>,
) -> bool {
    let mut nominated: Vec<Sym> = preemptor
        .pods
        .iter()
        .filter_map(|p| p.nominated_node_name.filter(|n| !n.is_empty()))
        .collect();
    nominated.sort_unstable();
    nominated.dedup();
    nominated.into_iter().any(|n| {
        snapshot.get(n).is_some_and(|ni| {
            ni.pods.iter().any(|p| {
                p.deletion_timestamp && victims::pod_priority(p, Some(groups)) < preemptor.priority
            })
        })
    })
}

fn as_status(e: String) -> Status {
    Status::error(e)
}

/// The order victims are reprieved in, most important first: kube's
/// [`more_important_victim`]; the differential oracle passes one that breaks kube's own
/// nondeterministic ties (start times) its way.
pub(crate) type VictimOrder<'a> = &'a dyn Fn(&Victim, &Victim) -> std::cmp::Ordering;

/// kube's `selectVictimsOnDomain` (steps 4 to 6 of the module doc) over the domain's victims
/// `all`, reprieved in `order`.
pub(crate) fn select_victims_on_domain(
    host: &mut dyn DomainHost,
    preemptor: &PodGroupPreemptor,
    all: Vec<Victim>,
    pdbs: &[Arc<PodDisruptionBudget>],
    order: VictimOrder<'_>,
) -> Result<SelectedVictims, Status> {
    let mut potential: Vec<Victim> = all
        .into_iter()
        .filter(|v| v.priority < preemptor.priority)
        .collect();
    if potential.is_empty() {
        return Err(Status::new(
            Code::UnschedulableAndUnresolvable,
            "No preemption victims found for incoming preemptor",
        ));
    }
    for v in &potential {
        for p in &v.pods {
            host.remove_pod(p, node_of(p)).map_err(as_status)?;
        }
    }
    let (assignments, st) = host.schedule();
    if !st.is_success() {
        return Err(st);
    }
    potential.sort_by(order);
    let (violating, non_violating) = split_victims_by_pdb_violation(potential, pdbs);
    let mut valid: Vec<Assignment> = assignments
        .into_iter()
        .filter(|a| !a.node.is_empty())
        .collect();
    let mut evicted: Vec<Victim> = Vec::new();
    let mut num_violating = 0;
    let tagged = violating
        .into_iter()
        .chain(non_violating.into_iter().map(|v| (v, 0)));
    for (v, violations) in tagged {
        if !reprieve(host, &v, &mut valid)? {
            num_violating += violations;
            evicted.push(v);
        }
    }
    evicted.sort_by(order);
    Ok(SelectedVictims {
        num_pod_group_disruptions: evicted.iter().filter(|v| v.is_group()).count(),
        pods: evicted.into_iter().flat_map(|v| v.pods).collect(),
        num_pdb_violations: num_violating,
        nominations: valid.iter().map(|a| (a.pod.key.clone(), a.node)).collect(),
    })
}

fn node_of(p: &Pod) -> Sym {
    p.node_name.unwrap_or(Sym::EMPTY)
}

/// kube's `reprieveVictim`: whether every assigned member still fits with `v` back; the
/// snapshot and the members' states keep `v` when it does.
fn reprieve(
    host: &mut dyn DomainHost,
    v: &Victim,
    valid: &mut [Assignment],
) -> Result<bool, Status> {
    for p in &v.pods {
        host.add_pod(p, node_of(p)).map_err(as_status)?;
        for a in valid.iter_mut() {
            let st = host.pre_filter_add_pod(&mut a.state, &a.pod, p, node_of(p));
            if !st.is_success() {
                return Err(Status::error(st.message()));
            }
        }
    }
    let mut assumed = 0;
    let mut fits = true;
    for a in valid.iter() {
        if !host.filter(&a.state, &a.pod, a.node).is_success() {
            fits = false;
            break;
        }
        host.add_pod(&a.pod, a.node).map_err(as_status)?;
        assumed += 1;
    }
    if !fits {
        for p in &v.pods {
            host.remove_pod(p, node_of(p)).map_err(as_status)?;
            for a in valid.iter_mut() {
                let st = host.pre_filter_remove_pod(&mut a.state, &a.pod, p, node_of(p));
                if !st.is_success() {
                    return Err(Status::error(st.message()));
                }
            }
        }
    }
    for a in valid[..assumed].iter().rev() {
        host.remove_pod(&a.pod, a.node).map_err(as_status)?;
    }
    Ok(fits)
}
