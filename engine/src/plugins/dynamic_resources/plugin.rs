//! The DynamicResources plugin (kube v1.37.2's
//! `pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go`), for pods whose
//! `spec.resourceClaims` name ResourceClaims directly or through templates.
//!
//! # Protocol
//!
//! - **PreEnqueue**: every claim the pod names exists, is not being deleted, and (for a claim
//!   generated from a template) is owned by the pod. Otherwise the pod waits, gated, for the
//!   claim's creation or the pod status update that names it.
//! - **PreFilter** reads the pod's claims once. An allocated claim limits the nodes to its
//!   allocation's node selector; an unallocated one needs its device classes to exist and no
//!   other pod's allocation of it in flight. When some claim needs allocating, the cycle's
//!   inputs to the allocator are taken here, once: the devices held (allocations and in-flight
//!   ones) and the slices. The state is written even for a pod without claims, as kube's is.
//! - **Filter** runs the structured allocator on the node for the unallocated claims and keeps
//!   its result per node (under a lock: Filter runs on many nodes at once). A node outside an
//!   allocated claim's selector marks that claim unavailable, for PostFilter.
//! - **Score** (weight 2) rewards the preferred subrequests of `firstAvailable`; it is 0 for
//!   every other pod.
//! - **Reserve** records the chosen node's allocations as in flight in the
//!   [`DraManager`], so the next pod's PreFilter sees the devices taken; **Unreserve** drops
//!   them and takes the pod out of `reservedFor` where PreBind had put it.
//! - **PreBind** writes each claim's allocation and the pod's reservation through the
//!   [`ClusterClient`], then drops the in-flight records (the informer event has stored the
//!   allocation by then).
//! - **PostFilter** deallocates one unavailable claim that no other pod uses, so that the next
//!   attempt may allocate it elsewhere.
//!
//! A pod's extended resources that a DeviceClass backs get one more claim, after its own
//! (DRAExtendedResource, [`super::extended`]).
//!
//! Claims a PodGroup shares (DRAWorkloadResourceClaims) are reserved for the group, and its
//! members share one pending allocation within a pod-group cycle ([`super::pod_group_claims`],
//! which also holds PodGroupPostFilter).
//!
//! Not modelled yet (issue 34): binding conditions, node-allocatable resources and the
//! Filter timeout.

use super::AllocatorFeatures;
use super::allocator::{AllocError, Allocator, SelectorEval};
use super::cel::CelSelectors;
use super::extended::{self, NodeExtended};
use super::node_memo::{MemoKey, NodeMemo};
use super::state::{
    AllocatorInputs, ClaimInfo, DraState, GroupClaims, NodeAllocation, group_claims,
    group_claims_or_new,
};
use crate::api::dra::{Allocation, ClaimConsumer, ResourceClaim, ResourceSlice};
use crate::api::{ClaimSource, Pod, Sym};
use crate::framework::Snapshot;
use crate::framework::cycle_state::CycleState;
use crate::framework::dra_manager::DraManager;
use crate::framework::events::{
    ActionType, ClusterEvent, EventObject, EventResource, QueueingHint,
};
use crate::framework::interface::{
    ClusterClient, Diagnosis, EnqueueExtensions, FilterPlugin, Handle, Plugin, PostFilterPlugin,
    PostFilterResult, PreBindPlugin, PreEnqueuePlugin, PreFilterPlugin, PreFilterResult,
    ReservePlugin, ScorePlugin,
};
use crate::framework::node_info::{NodeInfo, NodeRow};
use crate::framework::pod_group_state::PodGroupStates;
use crate::framework::signature::SignFragments;
use crate::framework::status::{Code, Status};
use ahash::{AHashMap, AHashSet};
use k8s_openapi::api::resource::v1 as k;
use parking_lot::{Mutex, RwLock};
use std::sync::{Arc, OnceLock};

pub(crate) const NAME: &str = "DynamicResources";
const STATE_KEY: &str = "PreFilterDynamicResources";
/// kube's `FirstAvailableDeviceRequestMaxSize`.
const FIRST_AVAILABLE_MAX: i64 = 8;

pub(crate) struct DynamicResources {
    pub(super) dra: Arc<DraManager>,
    pub(super) client: Arc<dyn ClusterClient>,
    features: AllocatorFeatures,
    cel: CelSelectors,
    /// Selector results by expression and device, for the slices' generation they were
    /// computed on (a device's attributes change only with its slice).
    memo: RwLock<SelectorMemo>,
    /// The allocator's answers per node, kept between cycles.
    node_memo: NodeMemo,
    /// The state of every pod without claims (kube writes an empty `stateData` for them).
    /// Shared: with no claims, no extension point locks or fills its fields.
    no_claims: Arc<DraState>,
    /// The pod groups (GenericWorkload on), for claims shared by a group.
    pub(super) pod_groups: Option<Arc<PodGroupStates>>,
    /// DRAWorkloadResourceClaims: a PodGroup's `spec.resourceClaims` are the group's.
    pub(super) workload_claims: bool,
    /// TopologyAwareWorkloadScheduling (PodGroupPostFilter leaves constrained groups alone).
    pub(super) topology_aware: bool,
}

/// Expression → slice (its address, stable while the slices' generation holds) → the
/// expression's results on the slice's devices.
#[derive(Default)]
struct SelectorMemo {
    generation: u64,
    results: AHashMap<Arc<str>, AHashMap<usize, Arc<SliceResults>>>,
}

/// One expression's result per device of one slice: filled over the slice's attribute
/// columns when the slice is first asked (`cel_columns`), by the interpreter for the other
/// devices as each is asked.
struct SliceResults(Box<[OnceLock<Result<bool, String>>]>);

impl SliceResults {
    fn new(cel: &CelSelectors, expression: &str, slice: &ResourceSlice) -> SliceResults {
        let by_columns = cel
            .selector(expression)
            .columns
            .map(|c| c.eval_slice(slice));
        SliceResults(
            (0..slice.devices.len())
                .map(|i| match by_columns.as_ref().and_then(|r| r[i]) {
                    Some(b) => OnceLock::from(Ok(b)),
                    None => OnceLock::new(),
                })
                .collect(),
        )
    }
}

/// The CEL selectors through the memo: each expression runs once per slice (over its
/// columns) or once per device (by the interpreter) per slices' generation, however many
/// pods and nodes ask.
struct MemoSelectors<'a> {
    cel: &'a CelSelectors,
    memo: &'a RwLock<SelectorMemo>,
    generation: u64,
}

impl SelectorEval for MemoSelectors<'_> {
    fn matches(
        &self,
        expression: &str,
        slice: &ResourceSlice,
        index: usize,
    ) -> Result<bool, String> {
        let at = slice as *const ResourceSlice as usize;
        let kept = {
            let m = self.memo.read();
            (m.generation == self.generation)
                .then(|| m.results.get(expression).and_then(|s| s.get(&at)).cloned())
                .flatten()
        };
        let results = match kept {
            Some(r) => r,
            None => {
                let fresh = Arc::new(SliceResults::new(self.cel, expression, slice));
                let mut m = self.memo.write();
                if m.generation != self.generation {
                    m.results.clear();
                    m.generation = self.generation;
                }
                (m.results.entry(Arc::from(expression)).or_default())
                    .entry(at)
                    .or_insert(fresh)
                    .clone()
            }
        };
        results.0[index]
            .get_or_init(|| {
                self.cel
                    .interpret(expression, slice.driver, &slice.devices[index])
            })
            .clone()
    }
}

impl DynamicResources {
    pub(crate) fn new(
        dra: Arc<DraManager>,
        client: Arc<dyn ClusterClient>,
        features: AllocatorFeatures,
    ) -> DynamicResources {
        DynamicResources {
            dra,
            client,
            features,
            cel: CelSelectors::new(),
            memo: RwLock::default(),
            node_memo: NodeMemo::default(),
            no_claims: Arc::new(DraState::default()),
            pod_groups: None,
            workload_claims: false,
            topology_aware: false,
        }
    }

    /// The pod groups (GenericWorkload on: `Some`), and the gates that read them.
    pub(crate) fn with_pod_groups(
        mut self,
        groups: Option<Arc<PodGroupStates>>,
        workload_claims: bool,
        topology_aware: bool,
    ) -> DynamicResources {
        self.pod_groups = groups;
        self.workload_claims = workload_claims;
        self.topology_aware = topology_aware;
        self
    }

    /// kube's `foreachPodResourceClaim`: the pod's claims in spec order (a template's claim
    /// that was intentionally not created is left out); `Err` with kube's message when one
    /// is missing, being deleted, or not the pod's own.
    fn pod_claims(&self, pod: &Pod) -> Result<Vec<Arc<ResourceClaim>>, String> {
        let mut out = Vec::with_capacity(pod.spec.resource_claims.len());
        for pc in &pod.spec.resource_claims {
            let (name, must_check_owner) = match &pc.source {
                ClaimSource::Claim(n) => (n.clone(), false),
                ClaimSource::Template(_) => {
                    let status = pod
                        .resource_claim_statuses
                        .iter()
                        .flat_map(|s| s.iter())
                        .find(|(n, _)| *n == pc.name);
                    match status {
                        Some((_, Some(n))) => (n.clone(), true),
                        Some((_, None)) => continue,
                        None => {
                            return Err(format!(
                                "pod \"{}/{}\": ResourceClaim not created yet",
                                pod.namespace, pod.name
                            ));
                        }
                    }
                }
                ClaimSource::Unsupported => {
                    return Err(format!(
                        "pod \"{}/{}\", spec.resourceClaim {:?}: none of the supported fields are set",
                        pod.namespace, pod.name, pc.name
                    ));
                }
            };
            let Some(claim) = self.dra.claim(pod.namespace, &name) else {
                return Err(format!(
                    "could not find ResourceClaim \"{}/{}\"",
                    pod.namespace, name
                ));
            };
            if claim.deleting {
                return Err(format!("resourceclaim {:?} is being deleted", claim.name));
            }
            if must_check_owner && claim.controller_uid.as_deref() != Some(&*pod.uid) {
                // kube's `IsForPod`: with DRAWorkloadResourceClaims, the pod's PodGroup may
                // own the claim (by name: a pod does not know its group's UID).
                match (&pod.spec.scheduling_group, self.workload_claims) {
                    (Some(g), true) if claim.controller_pod_group.as_ref() == Some(g) => {}
                    (Some(g), true) => {
                        return Err(format!(
                            "ResourceClaim {}/{} was not created for Pod {}/{} (neither Pod nor PodGroup {g} is the owner)",
                            claim.namespace, claim.name, pod.namespace, pod.name
                        ));
                    }
                    _ => {
                        return Err(format!(
                            "ResourceClaim {}/{} was not created for Pod {}/{} (Pod is not owner)",
                            claim.namespace, claim.name, pod.namespace, pod.name
                        ));
                    }
                }
            }
            out.push(claim);
        }
        Ok(out)
    }

    /// kube's `validateDeviceClass`.
    fn validate_class(&self, class: &str, request: &str) -> Result<(), Status> {
        if self.dra.class(class).is_none() {
            return Err(unresolvable(format!(
                "request {request}: device class {class} does not exist"
            )));
        }
        Ok(())
    }

    fn state<'a>(&self, cs: &'a CycleState) -> Option<&'a Arc<DraState>> {
        cs.read::<Arc<DraState>>(STATE_KEY)
    }
}

/// kube's `statusUnschedulable`: UnschedulableAndUnresolvable.
fn unresolvable(msg: impl Into<String>) -> Status {
    Status::new(Code::UnschedulableAndUnresolvable, msg.into())
}

impl Plugin for DynamicResources {
    fn name(&self) -> &'static str {
        NAME
    }
    fn signs_pods(&self) -> bool {
        true
    }
    fn sign_pod(&self, pod: &Pod, _: &mut SignFragments) -> Result<(), &'static str> {
        if pod.spec.resource_claims.is_empty() {
            Ok(())
        } else {
            Err("pods with dra resource claims are not signable")
        }
    }
    fn into_pre_enqueue(self: Arc<Self>) -> Option<Arc<dyn PreEnqueuePlugin>> {
        Some(self)
    }
    fn into_pre_filter(self: Arc<Self>) -> Option<Arc<dyn PreFilterPlugin>> {
        Some(self)
    }
    fn into_filter(self: Arc<Self>) -> Option<Arc<dyn FilterPlugin>> {
        Some(self)
    }
    fn into_post_filter(self: Arc<Self>) -> Option<Arc<dyn PostFilterPlugin>> {
        Some(self)
    }
    fn into_pod_group_post_filter(
        self: Arc<Self>,
    ) -> Option<Arc<dyn crate::framework::interface::PodGroupPostFilterPlugin>> {
        Some(self)
    }
    fn into_score(self: Arc<Self>) -> Option<Arc<dyn ScorePlugin>> {
        Some(self)
    }
    fn into_reserve(self: Arc<Self>) -> Option<Arc<dyn ReservePlugin>> {
        Some(self)
    }
    fn into_pre_bind(self: Arc<Self>) -> Option<Arc<dyn PreBindPlugin>> {
        Some(self)
    }
    fn into_enqueue_extensions(self: Arc<Self>) -> Option<Arc<dyn EnqueueExtensions>> {
        Some(self)
    }
}

impl PreEnqueuePlugin for DynamicResources {
    fn pre_enqueue(&self, pod: &Pod) -> Status {
        if pod.spec.resource_claims.is_empty() {
            return Status::success();
        }
        match self.pod_claims(pod) {
            Ok(_) => Status::success(),
            Err(e) => unresolvable(e),
        }
    }
}

impl PreFilterPlugin for DynamicResources {
    fn pre_filter(
        &self,
        cs: &mut CycleState,
        pod: &Pod,
        _: &Snapshot,
    ) -> (Option<PreFilterResult>, Status) {
        let group = group_claims_or_new(cs);
        let adopt = cs
            .pod_group_data
            .as_ref()
            .is_some_and(|d| d.adopts_in_flight());
        let (state, st) = self.pre_filter_state(pod, group.as_deref().map(|g| (g, adopt)));
        // kube's `podsStateData`, for PodGroupPostFilter.
        if let Some(g) = &group {
            g.pods.lock().insert(pod.key.clone(), state.clone());
        }
        cs.write(STATE_KEY, state);
        (None, st)
    }
}

impl DynamicResources {
    /// PreFilter's state and status.
    /// `group`: the pod-group cycle's shared state, and whether whatever is in flight counts
    /// as reserved by this cycle ([`crate::framework::PodGroupCycleData::adopting_in_flight`]).
    fn pre_filter_state(
        &self,
        pod: &Pod,
        group: Option<(&GroupClaims, bool)>,
    ) -> (Arc<DraState>, Status) {
        let extended_resources = extended::requests_backed_resource(&pod.spec.requests, |r| {
            self.dra.class_for_extended_resource(r).is_some()
        });
        if pod.spec.resource_claims.is_empty() && !extended_resources {
            return (self.no_claims.clone(), Status::skip());
        }
        let failed = |st: Status| (Arc::new(DraState::default()), st);
        let mut claims = match self.pod_claims(pod) {
            Ok(c) => c,
            Err(e) => return failed(unresolvable(e)),
        };
        let mut bindings = match self.bindings(pod, &claims) {
            Ok(b) => b,
            Err(e) => return failed(unresolvable(e)),
        };
        let user_claims = claims.len();
        if extended_resources {
            claims.push(
                self.dra
                    .extended_resource_claim(&pod.uid)
                    .unwrap_or_else(|| extended::in_memory_claim(pod)),
            );
            bindings.push(ClaimConsumer::Pod {
                name: pod.name.clone(),
                uid: pod.uid.clone(),
            });
        }
        match self.claim_infos(claims, bindings, user_claims, group) {
            Ok(state) => {
                let st = if state.claims.is_empty() {
                    Status::skip()
                } else {
                    Status::success()
                };
                (Arc::new(state), st)
            }
            Err(st) => failed(st),
        }
    }
}

impl DynamicResources {
    /// PreFilter's checks of each claim, and the allocator's inputs when one needs
    /// allocating.
    fn claim_infos(
        &self,
        claims: Vec<Arc<ResourceClaim>>,
        bindings: Vec<ClaimConsumer>,
        user_claims: usize,
        group: Option<(&GroupClaims, bool)>,
    ) -> Result<DraState, Status> {
        let mut infos = Vec::with_capacity(claims.len());
        let mut prioritized = false;
        for (i, (claim, binding)) in claims.into_iter().zip(bindings).enumerate() {
            prioritized |= claim.requests.iter().any(|r| r.prioritized);
            if let Some(a) = &claim.allocation {
                infos.push(ClaimInfo {
                    available_on: a.node_selector.clone(),
                    claim,
                    to_allocate: false,
                    pending: None,
                    binding,
                });
                continue;
            }
            // An earlier member of this pod-group cycle reserved an allocation of it: share
            // that one (module doc of `pod_group_claims`).
            if let Some((g, adopt)) = group
                && (adopt || g.pending.lock().contains_key(&claim.uid))
                && let Some(a) = self.dra.pending_allocation(&claim.uid)
            {
                infos.push(ClaimInfo {
                    available_on: a.node_selector.clone(),
                    claim,
                    to_allocate: true,
                    pending: Some(a),
                    binding,
                });
                continue;
            }
            if self.dra.pending_allocation(&claim.uid).is_some() {
                return Err(unresolvable(format!(
                    "resource claim {}/{} is in the process of being allocated",
                    claim.namespace, claim.name
                )));
            }
            // The claim for extended resources gets its requests per node, in Filter.
            let requests = if i < user_claims {
                &claim.requests[..]
            } else {
                &[]
            };
            for r in requests {
                if r.prioritized && !self.features.prioritized_list {
                    return Err(unresolvable(format!(
                        "resource claim {}/{}, request {}: has subrequests, but the DRAPrioritizedList feature is disabled",
                        claim.namespace, claim.name, r.name
                    )));
                }
                for alt in &r.alternatives {
                    self.validate_class(&alt.device_class_name, &alt.name)?;
                }
            }
            infos.push(ClaimInfo {
                claim,
                available_on: None,
                to_allocate: true,
                pending: None,
                binding,
            });
        }
        let allocator = infos
            .iter()
            .any(|c| c.to_allocate)
            .then(|| AllocatorInputs {
                classes: self.dra.classes_generation(),
                allocated: self
                    .dra
                    .allocated_devices(self.features.consumable_capacity),
                slices: self.dra.slice_index(),
                shape: std::sync::OnceLock::new(),
            });
        let n = infos.len();
        Ok(DraState {
            claims: infos,
            user_claims,
            allocator: arc_swap::ArcSwapOption::from(allocator.map(Arc::new)),
            reserved: Mutex::new(vec![None; n]),
            prioritized,
            ..DraState::default()
        })
    }
}

impl DynamicResources {
    /// kube's `filterExtendedResources`: the requests and mappings of the claim for the
    /// pod's extended resources on this node; `None` when it has none to fill.
    fn filter_extended(
        &self,
        state: &DraState,
        pod: &Pod,
        node: &NodeInfo,
    ) -> Result<Option<Arc<NodeExtended>>, Status> {
        let Some(ext) = state.claims.get(state.user_claims) else {
            return Ok(None);
        };
        if !ext.claim.requests.is_empty() {
            return Err(unresolvable("cannot schedule extended resource claim"));
        }
        let backed = |r: Sym| self.dra.class_for_extended_resource(r);
        let resources = extended::node_resources(&pod.spec.requests, node.allocatable(), |r| {
            backed(r).is_some()
        })
        .map_err(|()| unresolvable("cannot fit resource"))?;
        if (state.user_claims == 0 && resources.is_empty()) || ext.claim.allocation.is_some() {
            return Ok(None);
        }
        let names: Vec<Sym> = resources.iter().map(|(r, _)| *r).collect();
        if let Some((_, e)) = state
            .extended_by_resources
            .lock()
            .iter()
            .find(|(n, _)| *n == names)
        {
            return Ok(Some(e.clone()));
        }
        let (requests, mappings) =
            extended::requests_and_mappings(&pod.spec.extended_resource_containers, &names, |r| {
                backed(r).map(|c| c.name.clone())
            });
        let e = Arc::new(NodeExtended {
            claim: extended::claim_for_node(&ext.claim, &requests),
            requests,
            mappings,
            shape: std::sync::OnceLock::new(),
        });
        state.extended_by_resources.lock().push((names, e.clone()));
        Ok(Some(e))
    }
}

impl FilterPlugin for DynamicResources {
    fn filter(&self, cs: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        let Some(state) = self.state(cs) else {
            return Status::error(
                "reading \"PreFilterDynamicResources\" from cycleState: not found",
            );
        };
        if state.claims.is_empty() {
            return Status::success();
        }
        let extended = match self.filter_extended(state, pod, node) {
            Ok(e) => e,
            Err(st) => return st,
        };
        // Only extended resources, all offered by the node itself: nothing to allocate.
        if extended.is_none() && state.user_claims == 0 {
            return Status::success();
        }
        let n = &node.node;
        let unavailable: Vec<usize> = state
            .claims
            .iter()
            .enumerate()
            .filter(|(_, c)| {
                c.available_on
                    .as_ref()
                    .is_some_and(|s| !s.matches(n.name, &n.labels))
            })
            .map(|(i, _)| i)
            .collect();
        let mut allocations = None;
        let inputs = state.allocator.load();
        if let Some(inputs) = inputs.as_deref() {
            let to_allocate = claims_to_allocate(state, extended.as_deref());
            // Every claim to allocate shares an earlier member's allocation in flight: kube
            // still runs the allocator, which finds nothing to do and cannot fail with no
            // claims (pools are gathered, never judged). Skipping it saves gathering every
            // pool the node reaches, per member and node.
            let result = if to_allocate.is_empty() {
                Ok(Some(Vec::new()))
            } else {
                self.allocate_on(inputs, node, &to_allocate, extended.as_deref())
            };
            match result {
                Ok(Some(mut r)) if r.len() == to_allocate.len() => {
                    // kube's order: the new allocations, then those shared from an earlier
                    // member (Reserve pairs them with the claims to allocate in claim order,
                    // as kube does).
                    r.extend(state.claims.iter().filter_map(|c| c.pending.clone()));
                    allocations = Some(r);
                }
                Ok(_) => return unresolvable("cannot allocate all claims"),
                Err(AllocError::OnNode(e)) => return unresolvable(e),
                Err(AllocError::Fatal(e)) => return Status::error(e),
            }
        }
        if !unavailable.is_empty() {
            state.unavailable.lock().extend(unavailable);
            return unresolvable("resourceclaim not available on the node");
        }
        if let Some(r) = allocations {
            let na = NodeAllocation {
                allocations: r,
                extended,
            };
            state.node_allocations.lock().insert(n.name, Arc::new(na));
        }
        Status::success()
    }
}

impl DynamicResources {
    /// The allocator's answer for `to_allocate` on `node`, from the node memo when nothing it
    /// reads there has changed since it was kept ([`super::node_memo`]).
    fn allocate_on(
        &self,
        inputs: &AllocatorInputs,
        node: &NodeInfo,
        to_allocate: &[&ResourceClaim],
        extended: Option<&NodeExtended>,
    ) -> Result<Option<Vec<Arc<Allocation>>>, AllocError> {
        let n = &node.node;
        let pools = super::pools::node_pools(&inputs.slices, n, self.features);
        let shape = match extended {
            Some(e) => &e.shape,
            None => &inputs.shape,
        };
        let key = MemoKey {
            slices: inputs.slices.generation,
            classes: inputs.classes,
            shape: *shape.get_or_init(|| self.node_memo.shape_id(to_allocate)),
        };
        let versions = pools
            .iter()
            .map(|p| inputs.allocated.pool_version(p.id.0, p.sym()));
        // A kept answer's shares carry the IDs of the claim it was found for: Reserve derives
        // them for this pod's claims ([`super::node_memo::for_claims`]), on one node only.
        if let Some(answer) = self.node_memo.get(n, key, versions.clone()) {
            return Ok(answer.map(|a| a.to_vec()));
        }
        let versions: Vec<u64> = versions.collect();
        let classes = |name: &str| self.dra.class(name);
        let selectors = MemoSelectors {
            cel: &self.cel,
            memo: &self.memo,
            generation: inputs.slices.generation,
        };
        let a = Allocator {
            features: self.features,
            allocated: &inputs.allocated,
            classes: &classes,
            slices: &[],
            all_slices: super::pools::AllSlices::ByPool(&inputs.slices.by_pool),
            remote_pools: &[],
            selectors: &selectors,
            only: None,
            pools: Some(pools),
        };
        let result = a.allocate(n, to_allocate)?;
        let found = result.map(|r| r.into_iter().map(Arc::new).collect::<Vec<_>>());
        let answer = found.as_ref().map(|r| Arc::from(r.as_slice()));
        self.node_memo.put(n, key, versions, answer);
        Ok(found)
    }
}

/// The claims the allocator allocates for the pod of `state`, in order: those not allocated
/// and not shared from an earlier member's allocation in flight, with the claim for extended
/// resources as built for the node (`extended`).
fn claims_to_allocate<'a>(
    state: &'a DraState,
    extended: Option<&'a NodeExtended>,
) -> Vec<&'a ResourceClaim> {
    state
        .claims
        .iter()
        .enumerate()
        .filter(|(_, c)| c.to_allocate && c.pending.is_none())
        .map(|(i, c)| match extended {
            Some(e) if i == state.user_claims => &*e.claim,
            _ => &*c.claim,
        })
        .collect()
}

impl ScorePlugin for DynamicResources {
    fn score(&self, cs: &CycleState, _pod: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        let Some(state) = self.state(cs) else {
            return Ok(0);
        };
        if !state.prioritized || !self.features.prioritized_list {
            return Ok(0);
        }
        let Some(na) = state.node_allocations.lock().get(&node.node.name).cloned() else {
            return Ok(0);
        };
        compute_score(state, &na.allocations)
    }

    fn score_nodes(
        &self,
        cs: &CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        _: &[NodeRow],
        scores: &mut [i64],
    ) -> Result<(), Status> {
        if self.scores_nothing(cs) {
            scores.fill(0);
            return Ok(());
        }
        for (s, n) in scores.iter_mut().zip(nodes) {
            *s = self.score(cs, pod, n)?;
        }
        Ok(())
    }

    fn scores_from_rows(&self, cs: &CycleState) -> bool {
        self.scores_nothing(cs)
    }

    /// Every node scores 0 (and normalizes to 0) unless a claim has a `firstAvailable`
    /// request and DRAPrioritizedList is on.
    fn scores_nothing(&self, cs: &CycleState) -> bool {
        self.state(cs)
            .is_none_or(|s| !s.prioritized || !self.features.prioritized_list)
    }

    fn has_normalize(&self) -> bool {
        true
    }

    fn default_normalize(&self) -> Option<bool> {
        Some(false)
    }

    /// kube's `NormalizeScore`: `DefaultNormalizeScore(MaxNodeScore, false)`.
    fn normalize_score(&self, _: &CycleState, _: &Pod, scores: &mut [i64]) -> Status {
        crate::plugins::helper::default_normalize_score(scores, false);
        Status::success()
    }
}

/// kube's `computeScore`: for each claim, `8 - i` for the `i`-th subrequest of a
/// `firstAvailable` request that the allocation used.
fn compute_score(state: &DraState, allocs: &[Arc<Allocation>]) -> Result<i64, Status> {
    let mut score = 0;
    let mut next = 0;
    for c in &state.claims {
        let allocation = match &c.claim.allocation {
            Some(a) => a,
            None => {
                let Some(a) = allocs.get(next) else {
                    return Err(Status::error(format!(
                        "number of allocations {} is smaller than number of claims needing allocation",
                        allocs.len()
                    )));
                };
                next += 1;
                &**a
            }
        };
        let used: AHashSet<&str> = allocation
            .devices
            .iter()
            .map(|d| &*d.request)
            .filter(|r| r.contains('/'))
            .collect();
        for r in c.claim.requests.iter().filter(|r| r.prioritized) {
            for (i, alt) in r.alternatives.iter().enumerate() {
                if used.contains(&*alt.name) {
                    score += FIRST_AVAILABLE_MAX - i as i64;
                }
            }
        }
    }
    Ok(score)
}

impl ReservePlugin for DynamicResources {
    fn reserve(&self, cs: &mut CycleState, pod: &Pod, node: Sym) -> Status {
        let Some(state) = self.state(cs).cloned() else {
            return Status::success();
        };
        if state.allocator.load().is_none() {
            return Status::success();
        }
        let want = state.claims.iter().filter(|c| c.to_allocate).count();
        let user_to_allocate = state.claims[..state.user_claims]
            .iter()
            .any(|c| c.to_allocate);
        let found = state.node_allocations.lock().get(&node).cloned();
        let allocs = match found {
            Some(na) if !na.allocations.is_empty() => na,
            // Only extended resources, which the node offers itself.
            _ if !user_to_allocate => return Status::success(),
            _ => return Status::error("claim allocation not found for node"),
        };
        if allocs.allocations.len() != want {
            return Status::error(format!(
                "internal error, have {} allocations, {want} claims to allocate, want {want} claims",
                allocs.allocations.len()
            ));
        }
        // The new allocations (before those shared from an earlier member), with their
        // shares' IDs derived for this pod's claims (a node memo answer may carry another's).
        let to_allocate = claims_to_allocate(&state, allocs.extended.as_deref());
        let mut allocations = super::node_memo::for_claims(&allocs.allocations, &to_allocate);
        allocations.extend(allocs.allocations[to_allocate.len()..].iter().cloned());
        let group = group_claims(cs);
        let mut reserved = state.reserved.lock();
        for ((i, c), a) in state
            .claims
            .iter()
            .enumerate()
            .filter(|(_, c)| c.to_allocate)
            .zip(allocations.iter())
        {
            reserved[i] = Some(a.clone());
            self.dra.signal_pending_allocation(&c.claim, a.clone());
            if let Some(g) = &group {
                g.pending
                    .lock()
                    .entry(c.claim.uid.clone())
                    .or_default()
                    .insert(pod.uid.clone());
            }
        }
        drop(reserved);
        // What the rest of the pod's cycles read is in `reserved` and the chosen node's
        // entry; the snapshot and the other nodes' answers go now (state.rs).
        state.allocator.store(None);
        state.node_allocations.lock().retain(|n, _| *n == node);
        Status::success()
    }

    fn unreserve(&self, cs: &mut CycleState, pod: &Pod, _node: Sym) {
        let Some(state) = self.state(cs).cloned() else {
            return;
        };
        let group = group_claims(cs);
        for c in &state.claims[..state.user_claims] {
            // The last sharer of an allocation in flight drops it.
            if self
                .dra
                .maybe_remove_pending_allocation(&c.claim.uid, false)
                && let Some(g) = &group
            {
                g.pending.lock().remove(&c.claim.uid);
            }
            // PreBind may have written the reservation before a later step failed. A
            // reservation for the pod's group stays: other members may need the claim.
            if let Some(now) = self.dra.claim(c.claim.namespace, &c.claim.name)
                && now.allocation.is_some()
                && now.is_reserved_for(pod, false)
            {
                self.client.unreserve_resource_claim(&now, pod);
            }
        }
        // kube's `unreserveExtendedResourceClaim`.
        if let Some(ext) = state.claims.get(state.user_claims) {
            self.dra
                .maybe_remove_pending_allocation(&ext.claim.uid, false);
            if let Some(created) = state.created_extended.lock().take() {
                // kube logs a failed delete and goes on.
                let _ = self.client.delete_resource_claim(&created);
            }
        }
    }
}

impl PreBindPlugin for DynamicResources {
    /// kube's `PreBindPreFlight`: PreBind has work when the pod has claims. (kube's PreFilter
    /// always leaves state; ours leaves none for a pod without claims, which is the same.)
    fn pre_bind_pre_flight(&self, cs: &CycleState, _: &Pod, _: Sym) -> Status {
        match self.state(cs) {
            Some(state) if !state.claims.is_empty() => Status::success(),
            _ => Status::skip(),
        }
    }

    fn pre_bind(&self, cs: &mut CycleState, pod: &Pod, node: Sym) -> Status {
        let Some(state) = self.state(cs).cloned() else {
            return Status::success();
        };
        if state.claims.is_empty() {
            return Status::success();
        }
        let reserved = state.reserved.lock().clone();
        for (i, (c, allocation)) in state.claims.iter().zip(&reserved).enumerate() {
            if c.claim.is_reserved_for(pod, self.workload_claims) {
                continue;
            }
            if let Err(e) = self.bind_claim(&state, i, allocation.as_deref(), pod, node) {
                return Status::error(e);
            }
        }
        // kube's `prebindSuccessCleanup`: the allocations written leave the in-flight set.
        let group = group_claims(cs);
        for (c, allocation) in state.claims.iter().zip(&reserved) {
            if allocation.is_some()
                && self.dra.maybe_remove_pending_allocation(&c.claim.uid, true)
                && let Some(g) = &group
            {
                g.pending.lock().remove(&c.claim.uid);
            }
        }
        Status::success()
    }
}

impl DynamicResources {
    /// kube's `bindClaim`: the claim's allocation (if new) and the pod's reservation
    /// written; the claim for extended resources is created first, and the pod's status
    /// then says which request serves which container.
    fn bind_claim(
        &self,
        state: &DraState,
        i: usize,
        allocation: Option<&Allocation>,
        pod: &Pod,
        node: Sym,
    ) -> Result<(), String> {
        let mut claim = state.claims[i].claim.clone();
        let is_extended = i >= state.user_claims;
        if is_extended && allocation.is_none() && claim.requests.is_empty() {
            return Ok(());
        }
        let extended = is_extended
            .then(|| state.node_allocations.lock().get(&node).cloned())
            .flatten();
        let (requests, mappings) = extended
            .as_ref()
            .and_then(|na| na.extended.as_ref())
            .map_or((&[][..], &[][..]), |e| (&e.requests[..], &e.mappings[..]));
        if is_extended && &*claim.name == extended::IN_MEMORY_NAME {
            if extended.is_none() {
                return Err(format!("extended resource claim not found for node {node}"));
            }
            claim = self
                .client
                .create_resource_claim(extended::api_claim(pod, requests))
                .map_err(|e| {
                    format!(
                        "create claim for extended resources {}/{}: {e}",
                        claim.namespace, claim.name
                    )
                })?;
            *state.created_extended.lock() = Some(claim.clone());
        }
        self.client
            .reserve_resource_claim(&claim, allocation, &state.claims[i].binding)?;
        if is_extended {
            if mappings.is_empty() {
                return Err(format!(
                    "nil or empty request mappings, no update of pod {}/{} ExtendedResourceClaimStatus",
                    pod.namespace, pod.name
                ));
            }
            self.client
                .set_extended_resource_claim_status(
                    pod,
                    extended::pod_status(&claim.name, mappings),
                )
                .map_err(|e| {
                    format!(
                        "update pod {}/{} ExtendedResourceClaimStatus: {e}",
                        pod.namespace, pod.name
                    )
                })?;
        }
        Ok(())
    }
}

impl PostFilterPlugin for DynamicResources {
    fn post_filter(
        &self,
        _: &dyn Handle,
        cs: &mut CycleState,
        pod: &Pod,
        _: &Diagnosis,
    ) -> (Option<PostFilterResult>, Status) {
        let Some(state) = self.state(cs).cloned() else {
            return (None, Status::code_only(Code::Unschedulable));
        };
        if state.claims.is_empty() {
            return (None, Status::code_only(Code::Unschedulable));
        }
        (None, self.deallocate_or_delete(pod, &state).1)
    }
}

impl DynamicResources {
    /// kube's `deallocateOrDeletePodClaims`: deallocates one unavailable claim that no one
    /// else uses, else deletes the claim for extended resources made in an earlier cycle;
    /// whether it found one to free.
    pub(super) fn deallocate_or_delete(&self, pod: &Pod, state: &DraState) -> (bool, Status) {
        let extended = state
            .claims
            .get(state.user_claims)
            .map(|c| &c.claim)
            .filter(|c| &*c.name != extended::IN_MEMORY_NAME);
        // kube picks one at random (map order); the lowest index here.
        let unavailable = state.unavailable.lock().clone();
        for i in unavailable {
            if i >= state.user_claims {
                if extended.is_some() {
                    break;
                }
                continue;
            }
            let claim = &state.claims[i].claim;
            let free = match &claim.reserved_for[..] {
                [] => true,
                [only] => *only == pod.uid,
                _ => false,
            };
            if free {
                return match self.client.deallocate_resource_claim(claim) {
                    Ok(()) => (
                        true,
                        Status::new(
                            Code::Unschedulable,
                            "deallocation of ResourceClaim completed",
                        ),
                    ),
                    Err(e) => (true, Status::error(e)),
                };
            }
        }
        if let Some(claim) = extended {
            return match self.client.delete_resource_claim(claim) {
                Ok(()) => (
                    true,
                    Status::new(Code::Unschedulable, "deletion of ResourceClaim completed"),
                ),
                Err(e) => (true, Status::error(e)),
            };
        }
        (false, Status::code_only(Code::Unschedulable))
    }
}

impl EnqueueExtensions for DynamicResources {
    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![
            ClusterEvent::new(
                EventResource::Node,
                ActionType(
                    ActionType::ADD.0
                        | ActionType::UPDATE_NODE_LABEL.0
                        | ActionType::UPDATE_NODE_ALLOCATABLE.0,
                ),
            ),
            ClusterEvent::new(
                EventResource::ResourceClaim,
                ActionType(ActionType::ADD.0 | ActionType::UPDATE.0 | ActionType::DELETE.0),
            ),
            ClusterEvent::new(
                EventResource::Pod,
                ActionType::UPDATE_POD_GENERATED_RESOURCE_CLAIM,
            ),
            ClusterEvent::new(
                EventResource::DeviceClass,
                ActionType(ActionType::ADD.0 | ActionType::UPDATE.0),
            ),
            ClusterEvent::new(
                EventResource::ResourceSlice,
                ActionType(ActionType::ADD.0 | ActionType::UPDATE.0),
            ),
        ]
    }

    fn queueing_hint(
        &self,
        event: &ClusterEvent,
        pod: &Pod,
        old: &EventObject,
        new: &EventObject,
    ) -> Result<QueueingHint, String> {
        match event.resource {
            EventResource::ResourceClaim => self.after_claim_change(pod, old, new),
            EventResource::Pod | EventResource::UnscheduledPod => {
                // kube's `isSchedulableAfterTargetPodUpdate`: the pod's own update.
                let EventObject::Pod(p) = new else {
                    return Ok(QueueingHint::Queue);
                };
                if p.key != pod.key {
                    return Ok(QueueingHint::QueueSkip);
                }
                Ok(QueueingHint::queue_if(self.pod_claims(p).is_ok()))
            }
            _ => Ok(QueueingHint::Queue),
        }
    }
}

impl DynamicResources {
    /// kube's `isSchedulableAfterClaimChange`.
    fn after_claim_change(
        &self,
        pod: &Pod,
        old: &EventObject,
        new: &EventObject,
    ) -> Result<QueueingHint, String> {
        fn as_claim(o: &EventObject) -> Option<&k::ResourceClaim> {
            match o {
                EventObject::Object(a) => a.downcast_ref::<k::ResourceClaim>(),
                _ => None,
            }
        }
        let (old, new) = (as_claim(old), as_claim(new));
        let allocated =
            |c: &k::ResourceClaim| c.status.as_ref().is_some_and(|s| s.allocation.is_some());
        let Some(new) = new else {
            // Deleted: only the deletion of an allocated claim frees devices.
            return Ok(QueueingHint::queue_if(old.is_none_or(allocated)));
        };
        let Ok(claims) = self.pod_claims(pod) else {
            return Ok(QueueingHint::QueueSkip);
        };
        if old.is_some_and(allocated) && !allocated(new) {
            return Ok(QueueingHint::Queue);
        }
        let uid = new.metadata.uid.as_deref().unwrap_or("");
        if !claims.iter().any(|c| &*c.uid == uid) {
            return Ok(QueueingHint::QueueSkip);
        }
        let Some(old) = old else {
            return Ok(QueueingHint::Queue);
        };
        Ok(QueueingHint::queue_if(old.status != new.status))
    }
}
