//! Pod groups (KEP-4671 workload-aware scheduling): `scheduling.k8s.io/v1beta1` PodGroup and,
//! behind the alpha CompositePodGroup gate, `v1alpha3` CompositePodGroup, in the compact form
//! the scheduler reads. A pod joins a group through `spec.schedulingGroup.podGroupName`
//! ([`super::PodSpecInfo::scheduling_group`]); the group lives in the pod's namespace.

use super::intern::Sym;
use super::pod::{ClaimSource, ClaimStatus, PodResourceClaim};
use std::sync::Arc;

/// A group's identity: namespace and name (kube's `EntityKey` without its type: the type is
/// carried by the struct that holds the key).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PodGroupKey {
    pub namespace: Sym,
    pub name: Arc<str>,
}

impl PodGroupKey {
    pub fn new(namespace: &str, name: &str) -> Self {
        PodGroupKey {
            namespace: Sym::new(namespace),
            name: Arc::from(name),
        }
    }
}

impl std::fmt::Display for PodGroupKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// `spec.schedulingPolicy`: exactly one of `basic` and `gang`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PodGroupPolicy {
    /// `basic: {}`: the group's pods are scheduled together when possible, with no quorum.
    Basic,
    /// `gang: {minCount}` (for a composite group, `minGroupCount` child groups): nothing of
    /// the group binds unless at least `min_count` members can.
    Gang { min_count: i32 },
}

/// `spec.disruptionMode` (PreemptionPodGroupDisruptionMode): how preemption may treat the
/// group's members as victims. Exactly one of `single` and `all`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DisruptionMode {
    /// Unset, or `single: {}`: members are victims one by one, as ever.
    #[default]
    Single,
    /// `all: {}`: the members can only be disrupted together.
    All,
}

/// A PodGroup (or, with `composite`, a CompositePodGroup) as the scheduler reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct PodGroup {
    pub key: PodGroupKey,
    pub uid: Arc<str>,
    /// True for a CompositePodGroup (its members are child groups, not pods).
    pub composite: bool,
    pub policy: PodGroupPolicy,
    /// `spec.schedulingConstraints.topology[*].key`, in order.
    pub topology_keys: Vec<Sym>,
    /// `spec.priority` (kube's admission fills it from `priorityClassName`; scheduler_perf
    /// runs without that admission plugin, so it is what the object says, else 0).
    pub priority: i32,
    pub priority_class_name: Option<Arc<str>>,
    /// `spec.preemptionPolicy: Never`.
    pub preempt_never: bool,
    /// Whether `spec.preemptionPolicy` is set at all (kube's PodGroupPreemptionPolicy gate
    /// compares the group's policy with each pod's only when it is).
    pub preemption_policy_set: bool,
    pub disruption_mode: DisruptionMode,
    /// `spec.parentCompositePodGroupName` (a child of a composite group, same namespace).
    pub parent: Option<Arc<str>>,
    /// `metadata.generation` (conditions carry it as `observedGeneration`).
    pub generation: i64,
    /// `metadata.creationTimestamp` in Unix seconds (kube orders a composite group's
    /// children by it, then by name, then by kind).
    pub created: i64,
    /// `metadata.resourceVersion` as a number.
    pub resource_version: u64,
    /// Whether `status.conditions` holds `PodGroupInitiallyScheduled` with status True (a
    /// terminal state: kube never sets it back to False).
    pub scheduled: bool,
    /// `spec.resourceClaims` (DRAWorkloadResourceClaims): claims reserved for the whole
    /// group. A member pod's claim entry with the same name and source is the group's
    /// ([`PodGroup::binds`]). The store drops the field with the gate off.
    pub resource_claims: Vec<PodResourceClaim>,
    /// `status.resourceClaimStatuses`: the claim the ResourceClaim controller made for each
    /// template entry (`None`: none was needed).
    pub resource_claim_statuses: Vec<ClaimStatus>,
}

impl PodGroup {
    /// A group as a fresh object with only its name and policy set (uid the name,
    /// generation and resourceVersion 1, everything else at its default), for tools and
    /// tests to build on with struct update syntax.
    pub fn new(key: PodGroupKey, policy: PodGroupPolicy) -> PodGroup {
        PodGroup {
            uid: key.name.clone(),
            key,
            composite: false,
            policy,
            topology_keys: Vec::new(),
            priority: 0,
            priority_class_name: None,
            preempt_never: false,
            preemption_policy_set: false,
            disruption_mode: DisruptionMode::default(),
            parent: None,
            generation: 1,
            created: 0,
            resource_version: 1,
            scheduled: false,
            resource_claims: Vec::new(),
            resource_claim_statuses: Vec::new(),
        }
    }

    /// The gang's quorum: `minCount` for a gang, 0 for a basic group.
    pub fn min_count(&self) -> i32 {
        match self.policy {
            PodGroupPolicy::Gang { min_count } => min_count,
            PodGroupPolicy::Basic => 0,
        }
    }

    /// kube's `GenericPodGroup.GetMinCount` as the hierarchy tracker reads it: a gang's
    /// `minCount` (a composite's `minGroupCount`), 1 for a basic group.
    pub fn quorum(&self) -> usize {
        match self.policy {
            PodGroupPolicy::Gang { min_count } => min_count.max(0) as usize,
            PodGroupPolicy::Basic => 1,
        }
    }

    /// The parent composite group's key (same namespace), if any.
    pub fn parent_key(&self) -> Option<PodGroupKey> {
        self.parent.as_ref().map(|name| PodGroupKey {
            namespace: self.key.namespace,
            name: name.clone(),
        })
    }

    pub fn is_gang(&self) -> bool {
        matches!(self.policy, PodGroupPolicy::Gang { .. })
    }

    /// kube's `resourceclaim.BindTo` for a member's claim entry: whether the entry is one of
    /// the group's (same name, same claim or template), so that the claim is reserved for
    /// the group rather than the pod.
    pub fn binds(&self, entry: &PodResourceClaim) -> bool {
        self.resource_claims.iter().any(|c| c == entry)
    }

    /// kube's `resourceclaim.NameFromPodGroup`: the name of the claim behind one of the
    /// group's entries, and whether its owner must be checked (a claim made from a
    /// template); `Ok(None)` when the controller made none on purpose, `Err` with kube's
    /// message when it has made none yet.
    pub fn claim_name(&self, entry: &PodResourceClaim) -> Result<Option<(Arc<str>, bool)>, String> {
        match &entry.source {
            ClaimSource::Claim(n) => Ok(Some((n.clone(), false))),
            ClaimSource::Template(_) => {
                match self
                    .resource_claim_statuses
                    .iter()
                    .find(|(n, _)| *n == entry.name)
                {
                    Some((_, Some(c))) => Ok(Some((c.clone(), true))),
                    Some((_, None)) => Ok(None),
                    None => Err(format!(
                        "PodGroup {}/{}: ResourceClaim not created yet",
                        self.key.namespace, self.key.name
                    )),
                }
            }
            ClaimSource::Unsupported => Err(format!(
                "PodGroup {}/{}, spec.resourceClaim {}: none of the supported fields are set",
                self.key.namespace, self.key.name, entry.name
            )),
        }
    }
}
