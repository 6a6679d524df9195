//! The structured allocator (kube v1.37.2
//! `k8s.io/dynamic-resource-allocation/structured/internal/stable/allocator_stable.go`):
//! finds devices on one node for a pod's claims, or says there are none.
//!
//! # Protocol
//!
//! 1. **Pools** of the node ([`super::pools::gather_pools`]).
//! 2. **Requests**: each claim's requests in order; a `firstAvailable` request is one of its
//!    alternatives, tried in order (the first that leads to a solution wins). Each alternative
//!    needs its DeviceClass (a missing class is an error), and knows how many devices it
//!    takes: `count`, or for `All` every selectable device of the node's pools (an incomplete
//!    or invalid pool is then an error).
//! 3. **Search** (`allocate_one`, depth first, kube's order): for the next device of the next
//!    request, walk the complete and valid pools, their slices and devices in order (within
//!    one request, from just after the request's previous device on: each set of devices is
//!    tried once, as kube's incubating and experimental allocators do, with the stable
//!    allocator's first solution; [`Location`]); take the
//!    first device that is not in use (allocated before, or taken earlier in this search; with
//!    admin access, only "taken by this claim" counts; a device allowing several allocations
//!    is never in use, under DRAConsumableCapacity), whose class and request selectors match
//!    (cached per request and device), whose capacities hold the request's share
//!    ([`super::capacity`]: what allocated shares and this search's consume counts), whose
//!    taints the request tolerates, that fits its counters (a shared device already in use
//!    has paid them), and that keeps every constraint of the claim (`matchAttribute`: one value;
//!    under DRAListTypeAttributes, as kube's experimental allocator does, a common element
//!    of the devices' value sets, [`crate::api::attribute_set`]; `distinctAttribute`: values
//!    that differ, or sets pairwise disjoint); then go on. A dead end undoes
//!    the device and tries the next one. A claim may hold at most 32 devices.
//! 4. **Result**: per claim, its devices (request or `request/subrequest`, driver, pool,
//!    device, admin access; for a share, its ID and what it consumes) and the node selector the devices imply: a device local to one
//!    node pins the claim there (`metadata.name`), node-selector slices add their terms, and
//!    devices for all nodes add nothing.
//!
//! Under DRADeviceCompatibilityGroups a device drawing counters must also share a group,
//! per counter set, with the devices already drawing from it (allocated ones and this
//! search's; [`super::compat_groups`]), checked before its counters.
//!
//! Not modelled yet (the allocator refuses what needs them rather than guessing): device
//! binding conditions.
//!
//! A share's ID is a UUID derived from the claim's UID and the result's position (kube draws
//! a random one): unique, and the same on every run.

mod constraints;
mod row_skip;

use constraints::{Constraint, DistinctAttribute, MatchAttribute};

use super::AllocatorFeatures;
use super::capacity::Consumed;
use super::compat_groups::GroupIntersection;
use super::pools::{AllSlices, Pool, PoolId, gather_pools};
use crate::api::Node;
use crate::api::attribute_set::Intersection;
use crate::api::dra::{
    AllocatedDevice, Allocation, AllocationMode, Device, DeviceClass, DeviceId, RequestAlternative,
    ResourceClaim, ResourceSlice,
};
use crate::framework::dra_manager::{AllocatedDevices, SharedUse};
use ahash::AHashMap;
use std::collections::BTreeMap;
use std::sync::Arc;

/// kube's `AllocationResultsMaxSize`: devices one claim may hold.
pub(crate) const ALLOCATION_RESULTS_MAX_SIZE: usize = 32;

/// Evaluates a device selector (a CEL expression) for a device of a slice.
pub(crate) trait SelectorEval {
    /// Whether the slice's device at `index` meets `expression`; `Err` with kube's message
    /// when the expression does not compile or fails at run time.
    fn matches(
        &self,
        expression: &str,
        slice: &ResourceSlice,
        index: usize,
    ) -> Result<bool, String>;
}

/// What the allocator reads of the cluster.
pub(crate) struct Allocator<'a> {
    pub(crate) features: AllocatorFeatures,
    /// Devices allocated to claims other than those being allocated.
    pub(crate) allocated: &'a AllocatedDevices,
    pub(crate) classes: &'a dyn Fn(&str) -> Option<Arc<DeviceClass>>,
    /// The slices that may reach the node (every slice will do). This and the next two
    /// fields are what the node's pools are gathered from; unread when `pools` is given.
    pub(crate) slices: &'a [Arc<ResourceSlice>],
    /// Every slice (pools' completeness is judged against them).
    pub(crate) all_slices: AllSlices<'a>,
    /// The pools that reach the node only through counter slices left out of `slices`
    /// ([`super::pools::remote_pools`]; empty when `slices` has every counter slice).
    pub(crate) remote_pools: &'a [Pool],
    pub(crate) selectors: &'a dyn SelectorEval,
    /// The node's pools when the caller has them already ([`super::pools::node_pools`]);
    /// `None`: gathered from `slices`, `all_slices` and `remote_pools`.
    pub(crate) pools: Option<Arc<Vec<Pool>>>,
    /// When set, only these devices may be chosen (judging another allocator's result:
    /// [`super::standalone::ClaimAllocator::check_allocation`]).
    pub(crate) only: Option<&'a ahash::AHashSet<DeviceId>>,
}

/// A device with where it comes from.
#[derive(Clone)]
struct Candidate {
    id: DeviceId,
    slice: Arc<ResourceSlice>,
    index: usize,
    pool: usize,
}

impl Candidate {
    fn device(&self) -> &Device {
        &self.slice.devices[self.index]
    }
}

/// One request alternative being allocated (kube's `requestData`).
struct RequestData<'c> {
    /// Borrowed from the claim: nothing of it is copied per node.
    alt: &'c RequestAlternative,
    class: Arc<DeviceClass>,
    num_devices: usize,
    /// With `All`: the devices it takes.
    all: Vec<Candidate>,
    /// The request's own name, when this is an alternative of `firstAvailable`.
    parent: Option<Arc<str>>,
    /// Its index in `Search::selector_groups`.
    selector_group: usize,
}

/// `(claim, request, alternative)`.
type RequestKey = (usize, usize, usize);

/// A device the search took for a request.
#[derive(Clone)]
struct Taken {
    c: Candidate,
    key: RequestKey,
    /// A share of a device allowing several allocations: what it consumes.
    share: Option<Consumed>,
}

/// The search's state (kube's `allocator`).
struct Search<'a, 'c> {
    a: &'a Allocator<'a>,
    node: &'a Node,
    claims: &'c [&'c ResourceClaim],
    pools: Arc<Vec<Pool>>,
    requests: AHashMap<RequestKey, RequestData<'c>>,
    /// The alternative each prioritized request settled on.
    chosen: AHashMap<(usize, usize), usize>,
    constraints: Vec<Vec<Constraint>>,
    /// Selector results by (selector group, device): requests with the same class and
    /// selectors share one group, so a claim of many like requests asks once per device.
    matches: AHashMap<(usize, DeviceId), bool>,
    /// Per (selector group, slice): every device's selector result is in `matches`, none
    /// failed, and no capacity check can fail: a device the constraints refuse can then be
    /// passed over unseen ([`Search::refused_row`]).
    settled: AHashMap<(usize, *const ResourceSlice), bool>,
    /// The selector groups: (class, the request's own selectors).
    selector_groups: Vec<(Arc<str>, &'c [Arc<str>])>,
    /// Device → the claims (indexes) taking it in this search.
    taking: AHashMap<DeviceId, Vec<usize>>,
    /// Per claim: the devices taken, in order.
    result: Vec<Vec<Taken>>,
    /// Per pool: what the allocated devices left of its counters, and what this search took.
    available: AHashMap<PoolId, Counters>,
    consumed: AHashMap<PoolId, Counters>,
    /// The shares this search takes of devices allowing several allocations (kube's
    /// `allocatingCapacity`).
    allocating: AHashMap<DeviceId, SharedUse>,
    /// DRADeviceCompatibilityGroups, per pool (index) and counter set: the allocated
    /// devices' groups (computed once), and the running intersection with this search's.
    groups_baseline: AHashMap<usize, AHashMap<Arc<str>, GroupIntersection>>,
    groups: AHashMap<usize, AHashMap<Arc<str>, GroupIntersection>>,
}

/// Counter set → its intersection before a device joined (`None`: there was none).
type SavedGroups = Vec<(Arc<str>, Option<GroupIntersection>)>;

/// (counter set, counter) → value in thousandths (kube keeps exact quantities; counters are
/// whole bytes, cores and the like, which thousandths hold exactly).
type Counters = BTreeMap<(Arc<str>, Arc<str>), i64>;

/// Why [`Allocator::allocate`] failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum AllocError {
    /// This node cannot be used, others may (kube's `ErrFailedAllocationOnNode`).
    OnNode(String),
    /// Something is wrong with a claim or a class: the pod's attempt ends with an error.
    Fatal(String),
}

impl std::fmt::Display for AllocError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AllocError::OnNode(m) | AllocError::Fatal(m) => f.write_str(m),
        }
    }
}

/// Why a search ends without a solution that could still exist elsewhere.
enum Stop {
    /// The claim would hold more than 32 devices.
    MaxSize,
    Error(String),
}

impl Allocator<'_> {
    /// kube's `Allocate`: one allocation per claim (in order) on `node`; `Ok(None)` when the
    /// node has no solution, `Err` for what kube reports as an error.
    pub(crate) fn allocate(
        &self,
        node: &Node,
        claims: &[&ResourceClaim],
    ) -> Result<Option<Vec<Allocation>>, AllocError> {
        let pools = match &self.pools {
            Some(p) => p.clone(),
            None => Arc::new(gather_pools(
                self.slices,
                self.all_slices,
                node,
                self.features,
                self.remote_pools,
            )),
        };
        let mut s = Search {
            a: self,
            node,
            claims,
            pools,
            requests: map(),
            chosen: map(),
            constraints: Vec::new(),
            matches: map(),
            settled: map(),
            selector_groups: Vec::new(),
            taking: map(),
            result: vec![Vec::new(); claims.len()],
            available: map(),
            consumed: map(),
            allocating: map(),
            groups_baseline: map(),
            groups: map(),
        };
        s.prepare().map_err(AllocError::Fatal)?;
        match s.allocate_one((0, 0, 0, 0), false, Location::FIRST) {
            Err(Stop::Error(e)) => Err(AllocError::Fatal(e)),
            Ok(true) => Ok(Some(s.results())),
            Ok(false) | Err(Stop::MaxSize) => {
                if s.pools.iter().any(|p| p.invalid.is_some()) {
                    return Err(AllocError::OnNode(
                        "invalid resource pools were encountered".into(),
                    ));
                }
                Ok(None)
            }
        }
    }
}

impl<'c> Search<'_, 'c> {
    fn claim_name(&self, c: usize) -> String {
        format!("{}/{}", self.claims[c].namespace, self.claims[c].name)
    }

    /// Step 2 of the module doc.
    fn prepare(&mut self) -> Result<(), String> {
        for (ci, claim) in self.claims.iter().enumerate() {
            let mut min_claim = 0usize;
            for (ri, req) in claim.requests.iter().enumerate() {
                if req.prioritized && !self.a.features.prioritized_list {
                    return Err(format!(
                        "claim {}, request {}: has subrequests, but the DRAPrioritizedList feature is disabled",
                        self.claim_name(ci),
                        req.name
                    ));
                }
                if !self.a.features.consumable_capacity
                    && let Some(alt) = req.alternatives.iter().find(|a| !a.capacity.is_empty())
                {
                    let (what, name) = match alt.name.split_once('/') {
                        Some((_, sub)) => ("subrequest", sub),
                        None => ("request", &*alt.name),
                    };
                    return Err(format!(
                        "claim {}, {what} {name}: has capacity requests, but the DRAConsumableCapacity feature is disabled",
                        self.claim_name(ci)
                    ));
                }
                let mut min_req = usize::MAX;
                for (ai, alt) in req.alternatives.iter().enumerate() {
                    let parent = req.prioritized.then(|| req.name.clone());
                    let data = self.request_data(ci, alt, parent)?;
                    min_req = min_req.min(data.num_devices);
                    self.requests.insert((ci, ri, ai), data);
                }
                if min_req > ALLOCATION_RESULTS_MAX_SIZE - min_claim {
                    return Err(format!(
                        "claim {}, request {}: adding {min_req} devices exceeds the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}, with {min_claim} already accounted for",
                        self.claim_name(ci),
                        req.name
                    ));
                }
                min_claim += min_req;
            }
            let mut cs = Vec::new();
            for (i, c) in claim.constraints.iter().enumerate() {
                match (&c.match_attribute, &c.distinct_attribute) {
                    (Some(attr), _) => cs.push(Constraint::Match(MatchAttribute {
                        requests: c.requests.clone(),
                        attribute: attr.clone(),
                        value: None,
                        devices: 0,
                        sets: self
                            .a
                            .features
                            .list_type_attributes
                            .then(Intersection::default),
                        first: None,
                    })),
                    (None, Some(attr)) => cs.push(Constraint::Distinct(DistinctAttribute {
                        requests: c.requests.clone(),
                        attribute: attr.clone(),
                        values: Vec::new(),
                        list_type_attributes: self.a.features.list_type_attributes,
                    })),
                    (None, None) => {
                        return Err(format!(
                            "claim {}, constraint #{i}: empty constraint (unsupported constraint type?)",
                            self.claim_name(ci)
                        ));
                    }
                }
            }
            self.constraints.push(cs);
        }
        Ok(())
    }

    /// kube's `validateDeviceRequest`.
    fn request_data(
        &mut self,
        ci: usize,
        alt: &'c RequestAlternative,
        parent: Option<Arc<str>>,
    ) -> Result<RequestData<'c>, String> {
        if alt.admin_access && !self.a.features.admin_access {
            return Err(format!(
                "claim {}, request {}: admin access is requested, but the feature is disabled",
                self.claim_name(ci),
                alt.name
            ));
        }
        let class = (self.a.classes)(&alt.device_class_name).ok_or_else(|| {
            format!(
                "claim {}, request {}: could not retrieve device class {}: deviceclass.resource.k8s.io \"{}\" not found",
                self.claim_name(ci),
                alt.name,
                alt.device_class_name,
                alt.device_class_name
            )
        })?;
        let group = match self
            .selector_groups
            .iter()
            .position(|(c, sel)| *c == class.name && *sel == &alt.selectors[..])
        {
            Some(g) => g,
            None => {
                let g = (class.name.clone(), &alt.selectors[..]);
                self.selector_groups.push(g);
                self.selector_groups.len() - 1
            }
        };
        let mut data = RequestData {
            alt,
            class,
            num_devices: 0,
            all: Vec::new(),
            parent,
            selector_group: group,
        };
        match alt.mode {
            AllocationMode::ExactCount(n) => data.num_devices = n as usize,
            AllocationMode::All => {
                for pi in 0..self.pools.len() {
                    let pool = &self.pools[pi];
                    if pool.incomplete {
                        return Err(format!(
                            "claim {}, request {}: asks for all devices, but resource pool {}/{} is currently being updated",
                            self.claim_name(ci),
                            alt.name,
                            pool.id.0,
                            pool.id.1
                        ));
                    }
                    if pool.invalid.is_some() {
                        return Err(format!(
                            "claim {}, request {}: asks for all devices, but resource pool {}/{} is currently invalid",
                            self.claim_name(ci),
                            alt.name,
                            pool.id.0,
                            pool.id.1
                        ));
                    }
                    for slice in pool.targeting.clone() {
                        for index in 0..slice.devices.len() {
                            let c = self.candidate(pi, &slice, index);
                            // Static capacity only: what shares use is checked when the
                            // device is taken, so a device they fill makes `All` fail.
                            if self.selectable(ci, &data, &c)?
                                && self.capacity_fits(ci, data.alt, &c, false)?
                            {
                                data.all.push(c);
                            }
                        }
                    }
                }
                data.num_devices = data.all.len();
            }
        }
        Ok(data)
    }

    fn candidate(&self, pool: usize, slice: &Arc<ResourceSlice>, index: usize) -> Candidate {
        Candidate {
            id: device_id(slice, index),
            slice: slice.clone(),
            index,
            pool,
        }
    }

    /// kube's `isSelectable` (uncached; the search caches by request).
    fn selectable(&self, ci: usize, data: &RequestData<'_>, c: &Candidate) -> Result<bool, String> {
        if self.a.only.is_some_and(|only| !only.contains(&c.id)) {
            return Ok(false);
        }
        let device = c.device();
        for (label, exprs) in [
            ("class", &data.class.selectors),
            ("claim", &data.alt.selectors),
        ] {
            for (i, e) in exprs.iter().enumerate() {
                let ok = self
                    .a
                    .selectors
                    .matches(e, &c.slice, c.index)
                    .map_err(|err| {
                        if label == "class" {
                            format!(
                                "class {}: selector #{i} on device {}: {err}",
                                data.class.name, c.id
                            )
                        } else {
                            format!(
                                "claim {}: selector #{i} on device {}: {err}",
                                self.claim_name(ci),
                                c.id
                            )
                        }
                    })?;
                if !ok {
                    return Ok(false);
                }
            }
        }
        if matches!(c.slice.nodes, crate::api::dra::NodeSelection::PerDevice) {
            return Ok(device
                .nodes
                .as_ref()
                .is_some_and(|n| super::pools::node_matches(self.node, n)));
        }
        Ok(true)
    }

    fn selectable_cached(&mut self, key: RequestKey, c: &Candidate) -> Result<bool, String> {
        let data = &self.requests[&key];
        let group = data.selector_group;
        if let Some(m) = self.matches.get(&(group, c.id)) {
            return Ok(*m);
        }
        let m = self.selectable(key.0, data, c)?;
        self.matches.insert((group, c.id), m);
        Ok(m)
    }

    fn in_use(&self, id: &DeviceId) -> bool {
        self.a.allocated.contains(id) || self.taking.get(id).is_some_and(|v| !v.is_empty())
    }

    fn taken_by_claim(&self, id: &DeviceId, ci: usize) -> bool {
        self.taking.get(id).is_some_and(|v| v.contains(&ci))
    }
}

/// What allocating one device changed, to undo it (kube's `deviceRollbackState`).
struct Undo {
    counters: bool,
    constraints: usize,
    /// The compatibility-group intersections the device changed.
    groups: SavedGroups,
}

/// How [`Search::take_share`] takes a device.
enum Share {
    /// Taken whole (no other claim may have it).
    Whole,
    /// A share (the device allows several allocations), consuming this.
    Of(Consumed),
    /// Its capacities do not hold the request.
    Refused,
}

/// A share of a device's capacity as a UUID (module doc): FNV-1a over the claim's UID and
/// the result's position, twice with different offsets, in the version-4 layout.
pub(super) fn share_id(claim_uid: &str, position: usize) -> Arc<str> {
    let hash = |offset: u64| {
        let bytes = claim_uid.bytes().chain(position.to_le_bytes());
        bytes.fold(offset, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
    };
    let (a, b) = (hash(0xcbf2_9ce4_8422_2325), hash(0x8422_2325_cbf2_9ce4));
    Arc::from(format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        0x8000 | (b >> 48) & 0x3fff,
        b & 0xffff_ffff_ffff
    ))
}

/// Where the search for a request's next device starts (kube's `deviceLocation`, in the
/// incubating and experimental allocators): the pool, the slice among the pool's slices
/// for the node, and the device in it. The devices of one request are taken in the order of
/// the pools, so each set of devices is tried once, not once per ordering.
///
/// kube's stable allocator starts every device's search at the first pool. Both find the
/// same first solution: a set of devices that fits one request fits in any order (its
/// counters, capacities and constraints are sums and equalities over the set), and of
/// every ordering of a set the ascending one comes first in the depth-first order, so the
/// first solution the stable allocator reaches is already ascending within each request.
/// Starting further on only skips orderings that repeat a set, which can be exponentially
/// many (`PartitionableBacktracking`: 7 of 8 devices, where one device's counters rule it
/// out only at the seventh).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Location {
    pool: usize,
    slice: usize,
    device: usize,
}

impl Location {
    /// Every device is a candidate.
    const FIRST: Location = Location {
        pool: 0,
        slice: 0,
        device: 0,
    };

    /// Where the search for the same request's next device starts after the device at
    /// `(pool, slice, device)`.
    fn after(pool: usize, slice: usize, device: usize) -> Location {
        #[cfg(test)]
        if every_ordering::ON.with(std::cell::Cell::get) {
            return Location::FIRST;
        }
        Location {
            pool,
            slice,
            device: device + 1,
        }
    }
}

impl Search<'_, '_> {
    /// kube's `allocateOne` at `(claim, request, alternative, device)`.
    fn allocate_one(
        &mut self,
        r: (usize, usize, usize, usize),
        in_alternative: bool,
        start: Location,
    ) -> Result<bool, Stop> {
        let (ci, ri, ai, di) = r;
        if ci >= self.claims.len() {
            return Ok(true);
        }
        if ri >= self.claims[ci].requests.len() {
            return match self.allocate_one((ci + 1, 0, 0, 0), false, Location::FIRST) {
                Err(Stop::MaxSize) => Ok(false),
                other => other,
            };
        }
        let key = (ci, ri, ai);
        if !in_alternative && self.requests[&key].parent.is_some() {
            let mut all_exceeded = true;
            for alt in 0.. {
                if !self.requests.contains_key(&(ci, ri, alt)) {
                    return if all_exceeded {
                        Err(Stop::MaxSize)
                    } else {
                        Ok(false)
                    };
                }
                match self.allocate_one((ci, ri, alt, di), true, Location::FIRST) {
                    Err(Stop::MaxSize) => continue,
                    Err(e) => return Err(e),
                    Ok(true) => {
                        self.chosen.insert((ci, ri), alt);
                        return Ok(true);
                    }
                    Ok(false) => all_exceeded = false,
                }
            }
        }
        let (all_mode, num) = {
            let d = &self.requests[&key];
            (matches!(d.alt.mode, AllocationMode::All), d.num_devices)
        };
        if all_mode && num == 0 {
            return Ok(false);
        }
        if di >= num {
            return self.allocate_one((ci, ri + 1, 0, 0), false, Location::FIRST);
        }
        if num - di > ALLOCATION_RESULTS_MAX_SIZE - self.result[ci].len() {
            return Err(Stop::MaxSize);
        }
        if all_mode {
            let c = self.requests[&key].all[di].clone();
            let Some(undo) = self.allocate_device(key, &c, true)? else {
                return Ok(false);
            };
            let done = self.allocate_one((ci, ri, ai, di + 1), in_alternative, Location::FIRST);
            if !matches!(done, Ok(true)) {
                self.rollback(key, &c, undo);
            }
            return done;
        }
        self.try_devices(r, in_alternative, start)
    }

    /// The device loop of kube's `allocateOne` for the next device of an `ExactCount`
    /// request, from `start` on (module doc, step 3).
    fn try_devices(
        &mut self,
        r: (usize, usize, usize, usize),
        in_alternative: bool,
        start: Location,
    ) -> Result<bool, Stop> {
        let (ci, ri, ai, di) = r;
        let key = (ci, ri, ai);
        let admin = self.requests[&key].alt.admin_access;
        for pi in start.pool..self.pools.len() {
            if self.pools[pi].incomplete || self.pools[pi].invalid.is_some() {
                continue;
            }
            let first_slice = if pi == start.pool { start.slice } else { 0 };
            for si in first_slice..self.pools[pi].targeting.len() {
                let slice = self.pools[pi].targeting[si].clone();
                let row = self.refused_row(key, pi, &slice);
                let first_device = if (pi, si) == (start.pool, start.slice) {
                    start.device
                } else {
                    0
                };
                for index in first_device..slice.devices.len() {
                    if row
                        .as_ref()
                        .is_some_and(|(first, o)| !o.meet(*first, index))
                    {
                        continue;
                    }
                    // Judged by its ID first: a device in use costs no candidate.
                    let id = device_id(&slice, index);
                    if (admin && self.taken_by_claim(&id, ci)) || (!admin && self.in_use(&id)) {
                        continue;
                    }
                    let c = self.candidate(pi, &slice, index);
                    if !self.selectable_cached(key, &c).map_err(Stop::Error)? {
                        continue;
                    }
                    let alt = &self.requests[&key].alt;
                    if !self.capacity_fits(ci, alt, &c, true).map_err(Stop::Error)? {
                        continue;
                    }
                    let Some(undo) = self.allocate_device(key, &c, false)? else {
                        continue;
                    };
                    let next = Location::after(pi, si, index);
                    match self.allocate_one((ci, ri, ai, di + 1), in_alternative, next) {
                        Ok(true) => return Ok(true),
                        Ok(false) => self.rollback(key, &c, undo),
                        Err(e) => {
                            self.rollback(key, &c, undo);
                            return Err(e);
                        }
                    }
                }
            }
        }
        Ok(false)
    }

    /// kube's `allocateDevice`: `None` when the device cannot be taken (in use, a taint not
    /// tolerated, counters exhausted, a constraint broken).
    fn allocate_device(
        &mut self,
        key: RequestKey,
        c: &Candidate,
        must: bool,
    ) -> Result<Option<Undo>, Stop> {
        let ci = key.0;
        let (admin, name, parent) = {
            let d = &self.requests[&key];
            (d.alt.admin_access, d.alt.name.clone(), d.parent.clone())
        };
        if (admin && self.taken_by_claim(&c.id, ci)) || (!admin && self.in_use(&c.id)) {
            return Ok(None);
        }
        // A sub-request's name here is `request/sub`; constraints name either.
        let base = parent.unwrap_or_else(|| name.clone());
        // A device a list-attribute constraint refuses outright is refused before the
        // counter and taint checks (which only refuse too); with `must` the constraint
        // loop below gives kube's error.
        let refused = self.constraints[ci].iter().any(|k| match k {
            Constraint::Match(m) => m.refuses(&name, Some(&base), c),
            Constraint::Distinct(_) => false,
        });
        if refused && !must {
            return Ok(None);
        }
        let device = c.device();
        if !device.consumes_counters.is_empty() && !self.a.features.partitionable_devices {
            return Ok(None);
        }
        let multiple = self.a.features.consumable_capacity && device.allow_multiple_allocations;
        // A shared device already in use has paid its counters.
        let skip_counters =
            multiple && (self.a.allocated.shared(&c.id) || self.allocating.contains_key(&c.id));
        let mut undo = Undo {
            counters: false,
            constraints: 0,
            groups: Vec::new(),
        };
        if !skip_counters && !device.consumes_counters.is_empty() {
            if self.a.features.compatibility_groups {
                match self.take_groups(c) {
                    Some(saved) => undo.groups = saved,
                    None => return Ok(None),
                }
            }
            if !self.take_counters(c) {
                self.rollback_partial(key, c, &undo);
                return Ok(None);
            }
            undo.counters = true;
        }
        let tolerations = &self.requests[&key].alt.tolerations;
        let tainted = self.a.features.device_taints
            && device.taints.iter().any(|t| {
                matches!(&*t.effect, "NoSchedule" | "NoExecute")
                    && !tolerations.iter().any(|tol| tol.tolerates(t))
            });
        if tainted {
            self.rollback_partial(key, c, &undo);
            return Ok(None);
        }
        for i in 0..self.constraints[ci].len() {
            let ok = self.constraints[ci][i].add(&name, Some(&base), c);
            if !ok {
                self.rollback_partial(key, c, &undo);
                if must {
                    return Err(Stop::Error(format!(
                        "claim {}, request {}: cannot add device {} because a claim constraint would not be satisfied",
                        self.claim_name(ci),
                        name,
                        c.id
                    )));
                }
                return Ok(None);
            }
            undo.constraints += 1;
        }
        let share = match self.take_share(key, c, multiple, &undo)? {
            Share::Refused => return Ok(None),
            Share::Whole => {
                self.taking.entry(c.id).or_default().push(ci);
                None
            }
            Share::Of(consumed) => Some(consumed),
        };
        self.result[ci].push(Taken {
            c: c.clone(),
            key,
            share,
        });
        Ok(Some(undo))
    }

    /// Under DRAConsumableCapacity, rechecks the device's capacities after the constraints
    /// (kube's order) and, for a shared device, takes the share. A refusal undoes `undo`.
    fn take_share(
        &mut self,
        key: RequestKey,
        c: &Candidate,
        multiple: bool,
        undo: &Undo,
    ) -> Result<Share, Stop> {
        if !self.a.features.consumable_capacity {
            return Ok(Share::Whole);
        }
        let ci = key.0;
        let alt = &self.requests[&key].alt;
        let fits = self.capacity_fits(ci, alt, c, true).map_err(|e| {
            Stop::Error(e.replacen(": checking capacity", ": rechecking capacity", 1))
        });
        match fits {
            Ok(true) => {}
            Ok(false) | Err(_) => {
                self.rollback_partial(key, c, undo);
                return fits.map(|_| Share::Refused);
            }
        }
        if !multiple {
            return Ok(Share::Whole);
        }
        let fractional = self.a.features.fractional_capacity_range;
        let consumed =
            super::capacity::consumed_capacity(&alt.capacity, &c.device().capacities, fractional)
                .map_err(|e| {
                    format!(
                        "claim {}, request {}: computing consumed capacity for device {}: {e}",
                        self.claim_name(ci),
                        alt.name,
                        c.id
                    )
                });
        let consumed = match consumed {
            Ok(v) => v,
            Err(e) => {
                self.rollback_partial(key, c, undo);
                return Err(Stop::Error(e));
            }
        };
        self.allocating.entry(c.id).or_default().add(&consumed);
        Ok(Share::Of(consumed))
    }

    /// kube's `CmpRequestOverCapacity` for `alt` on `c` (no-op without DRAConsumableCapacity):
    /// `in_search` counts allocated shares and this search's; without it only the device's
    /// own capacities (an `All` request's static check).
    fn capacity_fits(
        &self,
        ci: usize,
        alt: &RequestAlternative,
        c: &Candidate,
        in_search: bool,
    ) -> Result<bool, String> {
        if !self.a.features.consumable_capacity {
            return Ok(true);
        }
        let (current, allocating) = if in_search {
            let allocating = self.allocating.get(&c.id).map(|u| &u.consumed);
            (self.a.allocated.consumed(&c.id), allocating)
        } else {
            (None, None)
        };
        let fractional = self.a.features.fractional_capacity_range;
        let capacities = &c.device().capacities;
        super::capacity::fits(
            current.as_deref(),
            &alt.capacity,
            capacities,
            allocating,
            fractional,
        )
        .map_err(|e| {
            let device = if in_search {
                c.id.to_string()
            } else {
                c.device().name.to_string()
            };
            format!(
                "claim {}, request {}: checking capacity for device {device}: {e}",
                self.claim_name(ci),
                alt.name
            )
        })
    }

    /// Undoes a device `allocate_device` took.
    fn rollback(&mut self, key: RequestKey, c: &Candidate, undo: Undo) {
        let ci = key.0;
        let taken = self.result[ci].pop();
        if let Some(share) = taken.and_then(|t| t.share) {
            if let Some(u) = self.allocating.get_mut(&c.id)
                && u.remove(&share)
            {
                self.allocating.remove(&c.id);
            }
        } else if let Some(v) = self.taking.get_mut(&c.id)
            && let Some(i) = v.iter().rposition(|x| *x == ci)
        {
            v.remove(i);
        }
        self.rollback_partial(key, c, &undo);
    }

    fn rollback_partial(&mut self, key: RequestKey, c: &Candidate, undo: &Undo) {
        let ci = key.0;
        let (name, parent) = {
            let d = &self.requests[&key];
            (d.alt.name.clone(), d.parent.clone())
        };
        let base = parent.as_deref().unwrap_or(&name).to_string();
        for i in (0..undo.constraints).rev() {
            self.constraints[ci][i].remove(&name, Some(&base));
        }
        if undo.counters {
            self.give_back_counters(c);
        }
        if !undo.groups.is_empty() {
            self.give_back_groups(c.pool, &undo.groups);
        }
    }

    /// kube's `checkAndConsumeCompatibilityGroups`: for each counter set the device draws
    /// from, its groups must meet the running intersection (seeded with the allocated
    /// devices'); then they narrow it. `None` (nothing changed) when a set refuses it.
    fn take_groups(&mut self, c: &Candidate) -> Option<SavedGroups> {
        if !self.groups_baseline.contains_key(&c.pool) {
            let baseline = self.groups_of_allocated(c.pool);
            self.groups_baseline.insert(c.pool, baseline);
        }
        let baseline = &self.groups_baseline[&c.pool];
        let running = self.groups.entry(c.pool).or_default();
        let mut saved: SavedGroups = Vec::new();
        for cc in &c.device().consumes_counters {
            let prev = running.get(&cc.counter_set).cloned();
            let cur = (prev.as_ref().or_else(|| baseline.get(&cc.counter_set)))
                .cloned()
                .unwrap_or_default();
            if !cur.admits(&cc.compatibility_groups) {
                self.give_back_groups(c.pool, &saved);
                return None;
            }
            running.insert(cc.counter_set.clone(), cur.add(&cc.compatibility_groups));
            saved.push((cc.counter_set.clone(), prev));
        }
        Some(saved)
    }

    /// Restores the intersections `saved` recorded, latest first.
    fn give_back_groups(&mut self, pool: usize, saved: &SavedGroups) {
        let running = self.groups.entry(pool).or_default();
        for (set, prev) in saved.iter().rev() {
            match prev {
                Some(p) => running.insert(set.clone(), p.clone()),
                None => running.remove(set),
            };
        }
    }

    /// kube's `compatibilityGroupsBaselineForPool`: the allocated devices' groups per
    /// counter set (read from the slices, as their counters are).
    fn groups_of_allocated(&self, pool: usize) -> AHashMap<Arc<str>, GroupIntersection> {
        let mut baseline: AHashMap<Arc<str>, GroupIntersection> = AHashMap::new();
        for d in self.allocated_in(&self.pools[pool]) {
            for cc in &d.consumes_counters {
                let cur = baseline.entry(cc.counter_set.clone()).or_default();
                *cur = cur.add(&cc.compatibility_groups);
            }
        }
        baseline
    }

    /// The pool's devices that allocated claims hold, whole or shared (kube's
    /// `IsDeviceAllocated`), as the counter and group baselines read them.
    fn allocated_in<'p>(&'p self, pool: &'p Pool) -> impl Iterator<Item = &'p Device> + 'p {
        (pool.targeting.iter().chain(&pool.not_targeting)).flat_map(move |s| {
            s.devices.iter().filter(move |d| {
                let did = DeviceId {
                    driver: s.driver,
                    pool: s.pool_sym,
                    device: d.name_sym,
                };
                self.a.allocated.contains(&did) || self.a.allocated.shared(&did)
            })
        })
    }

    /// kube's `checkAvailableCounters`: takes the device's counters when every counter of
    /// the pool stays within what the allocated devices left.
    fn take_counters(&mut self, c: &Candidate) -> bool {
        let pool = &self.pools[c.pool];
        let id = pool.id.clone();
        if !self.available.contains_key(&id) {
            let mut left: Counters = pool
                .counter_sets
                .iter()
                .flat_map(|(set, cs)| {
                    cs.iter()
                        .map(move |(n, q)| ((set.clone(), n.clone()), q.milli_value()))
                })
                .collect();
            for cc in self.allocated_in(pool).flat_map(|d| &d.consumes_counters) {
                for (n, q) in &cc.counters {
                    if let Some(v) = left.get_mut(&(cc.counter_set.clone(), n.clone())) {
                        *v -= q.milli_value();
                    }
                }
            }
            self.available.insert(id.clone(), left);
        }
        let consumed = self.consumed.entry(id.clone()).or_default();
        for cc in &c.device().consumes_counters {
            for (n, q) in &cc.counters {
                *consumed
                    .entry((cc.counter_set.clone(), n.clone()))
                    .or_default() += q.milli_value();
            }
        }
        let available = &self.available[&id];
        let fits = available
            .iter()
            .all(|(k, v)| *v >= consumed.get(k).copied().unwrap_or(0));
        if !fits {
            self.give_back_counters(c);
        }
        fits
    }

    fn give_back_counters(&mut self, c: &Candidate) {
        let id = self.pools[c.pool].id.clone();
        let consumed = self.consumed.entry(id).or_default();
        for cc in &c.device().consumes_counters {
            for (n, q) in &cc.counters {
                *consumed
                    .entry((cc.counter_set.clone(), n.clone()))
                    .or_default() -= q.milli_value();
            }
        }
    }

    /// Step 4 of the module doc.
    fn results(&self) -> Vec<Allocation> {
        self.result
            .iter()
            .enumerate()
            .map(|(ci, devices)| Allocation {
                devices: devices
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        let d = &self.requests[&t.key];
                        AllocatedDevice {
                            request: d.alt.name.clone(),
                            device: t.c.id,
                            admin_access: d.alt.admin_access,
                            share_id: t.share.is_some().then(|| share_id(&self.claims[ci].uid, i)),
                            consumed_capacity: t.share.clone().unwrap_or_default(),
                        }
                    })
                    .collect(),
                node_selector: super::pools::allocation_node_selector(
                    devices.iter().map(|t| (&*t.c.slice, t.c.device())),
                ),
            })
            .collect()
    }
}

/// The ID of a slice's device.
fn device_id(slice: &ResourceSlice, index: usize) -> DeviceId {
    DeviceId {
        driver: slice.driver,
        pool: slice.pool_sym,
        device: slice.devices[index].name_sym,
    }
}

/// A search's map, hashed with fixed keys: one search runs per node per pod, and fresh
/// random keys for each map cost more than a search for one small claim.
fn map<K, V>() -> AHashMap<K, V> {
    AHashMap::with_hasher(ahash::RandomState::with_seeds(1, 2, 3, 4))
}

/// Tests only: search every ordering of a request's devices, as kube's stable allocator
/// does, to check that both find the same first solution ([`Location`]).
#[cfg(test)]
pub(super) mod every_ordering {
    thread_local! {
        pub(in super::super) static ON: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
}
