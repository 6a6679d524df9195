//! The DynamicResources plugin's cycle state (kube's `stateData`, `informationForClaim`,
//! `nodeAllocation`) and, for a pod-group cycle, the state its members share (kube's
//! `podGroupStateData`; protocol in [`super::pod_group_claims`]).

use super::extended::NodeExtended;
use crate::api::dra::{Allocation, ClaimConsumer, ResourceClaim};
use crate::api::{NodeSelector, PodKey, Sym};
use crate::framework::CycleState;
use crate::framework::dra_manager::{AllocatedDevices, SliceIndex};
use ahash::{AHashMap, AHashSet};
use parking_lot::Mutex;
use std::collections::BTreeSet;
use std::sync::Arc;

/// One claim of the pod in this cycle (kube's `informationForClaim` with the claim).
pub(super) struct ClaimInfo {
    pub(super) claim: Arc<ResourceClaim>,
    /// An allocated claim's node selector: the nodes it can be used from.
    pub(super) available_on: Option<NodeSelector>,
    /// Not allocated yet: the allocator must find it devices, or (with `pending`) PreBind
    /// must write the allocation another member of this pod-group cycle reserved.
    pub(super) to_allocate: bool,
    /// The allocation in flight that this pod shares with an earlier member of its pod-group
    /// cycle (kube's `informationForClaim.allocation` set in PreFilter).
    pub(super) pending: Option<Arc<Allocation>>,
    /// What the claim is reserved for: the pod, or its PodGroup.
    pub(super) binding: ClaimConsumer,
}

/// What the allocator reads in this cycle, taken once in PreFilter.
pub(super) struct AllocatorInputs {
    pub(super) allocated: AllocatedDevices,
    pub(super) slices: Arc<SliceIndex>,
    /// The classes' generation when the cycle began ([`super::node_memo`]).
    pub(super) classes: u64,
    /// The shape id of the claims to allocate when no claim for extended resources joins
    /// them ([`super::node_memo::NodeMemo::shape_id`]), taken on first use.
    pub(super) shape: std::sync::OnceLock<u64>,
}

/// What Filter found for one node (kube's `nodeAllocation`).
pub(super) struct NodeAllocation {
    /// In the order of the claims to allocate.
    pub(super) allocations: Vec<Arc<Allocation>>,
    /// The requests of the claim for extended resources on this node, and which request
    /// serves each container's resource.
    pub(super) extended: Option<Arc<NodeExtended>>,
}

/// The cycle's state (kube's `stateData`).
#[derive(Default)]
pub(super) struct DraState {
    /// The pod's claims, then the claim for its extended resources (if any).
    pub(super) claims: Vec<ClaimInfo>,
    /// How many of `claims` the pod names itself (kube's `numUserOwned`).
    pub(super) user_claims: usize,
    /// Set in PreFilter when a claim needs devices; dropped when Reserve took the chosen
    /// node's allocations (a pod waiting to bind must not keep its snapshot of every
    /// allocated device alive: hundreds of pods in flight would each hold one).
    pub(super) allocator: arc_swap::ArcSwapOption<AllocatorInputs>,
    /// Filter's result, per node (after Reserve, the chosen node's only).
    pub(super) node_allocations: Mutex<AHashMap<Sym, Arc<NodeAllocation>>>,
    /// The claim for extended resources PreBind created (Unreserve deletes it).
    pub(super) created_extended: Mutex<Option<Arc<ResourceClaim>>>,
    /// The claim for extended resources per set of resources a node leaves to DRA (nearly
    /// always one set: every node of the cluster alike), built once.
    pub(super) extended_by_resources: Mutex<Vec<(Vec<Sym>, Arc<NodeExtended>)>>,
    /// Claims (indexes) some node could not use.
    pub(super) unavailable: Mutex<BTreeSet<usize>>,
    /// Per claim: the allocation Reserve took for it.
    pub(super) reserved: Mutex<Vec<Option<Arc<Allocation>>>>,
    /// Some claim has a `firstAvailable` request (only then does Score count).
    pub(super) prioritized: bool,
}

/// The key of [`GroupClaims`] in a pod-group cycle's shared data.
const GROUP_STATE_KEY: &str = "PreFilterDynamicResourcesPodGroup";

/// kube's `podGroupStateData`: what the members' cycles of one pod-group cycle share.
#[derive(Default)]
pub(super) struct GroupClaims {
    /// Claim UID → the members sharing its allocation in flight, made in this cycle.
    pub(super) pending: Mutex<AHashMap<Arc<str>, AHashSet<Arc<str>>>>,
    /// Each member's cycle state of this plugin (for PodGroupPostFilter).
    pub(super) pods: Mutex<AHashMap<PodKey, Arc<DraState>>>,
}

/// The group cycle's [`GroupClaims`], `None` outside a group's synchronous cycle.
pub(super) fn group_claims(cs: &CycleState) -> Option<Arc<GroupClaims>> {
    cs.pod_group_data.as_ref()?.get(GROUP_STATE_KEY)
}

/// The group cycle's [`GroupClaims`] as PodGroupPostFilter reads them (kube's
/// `getPodGroupStateDataFromPodGroupCycleState`): `Ok(None)` outside a group's cycle, and
/// `Err` when the cycle holds none because no member's PreFilter reached this plugin (an
/// earlier PreFilter rejected every one: kube's `fwk.ErrNotFound`, an error status).
pub(super) fn group_claims_of_cycle(cs: &CycleState) -> Result<Option<Arc<GroupClaims>>, ()> {
    match cs.pod_group_data.as_ref() {
        None => Ok(None),
        Some(d) => d.get(GROUP_STATE_KEY).map(Some).ok_or(()),
    }
}

/// kube's `getOrCreatePodGroupStateData`.
pub(super) fn group_claims_or_new(cs: &CycleState) -> Option<Arc<GroupClaims>> {
    Some(
        cs.pod_group_data
            .as_ref()?
            .get_or_insert(GROUP_STATE_KEY, GroupClaims::default),
    )
}
