//! What the scheduler knows of Dynamic Resource Allocation objects (kube's
//! `SharedDRAManager`: the DeviceClass and ResourceSlice listers and the ResourceClaim
//! tracker), kept from the informer events the embedder delivers through
//! `Scheduler::on_object_event`.
//!
//! # Protocol
//!
//! - Each event's object (k8s-openapi's `resource.k8s.io/v1` type) is converted once
//!   (`api::dra`); an add or update replaces the object by name, a delete removes it. An
//!   object that does not convert is dropped, and counted (`rejected`): the embedder's
//!   store validates at its boundary, so this is a mismatch between the two, not input to
//!   schedule by.
//! - Readers take snapshots (`Arc`s): the slices in name order, a class by name, a claim by
//!   namespace and name, and the devices the claims' allocations hold (kube's
//!   `AllocatedState`), which the allocator must not hand out again.
//! - **In-flight allocations** (kube's `inFlightAllocations`): Reserve records the
//!   allocation a pod's claim will get, by claim UID, before PreBind writes it to the API.
//!   Its devices count as allocated from then on, and PreFilter refuses a second pod that
//!   wants the same unallocated claim meanwhile. PreBind drops the record once the claim's
//!   update is written (the informer event has then stored the allocation, so the devices
//!   never look free in between); Unreserve drops it when the pod fails.

use crate::api::convert as dra_convert;
use crate::api::dra::{Allocation, DeviceClass, DeviceId, ResourceClaim, ResourceSlice};
use crate::api::dra_taint_rule::{self, DeviceTaintRule};
use crate::api::quantity::Quantity;
use crate::api::{Sym, dra};
use crate::framework::events::{ApiObject, EventResource};
use crate::framework::extended_resource_cache::ExtendedResourceCache;
use ahash::{AHashMap, AHashSet};
use k8s_openapi::api::resource::v1 as k;
use parking_lot::RwLock;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A claim's namespace and name.
type ClaimKey = (Sym, Arc<str>);

/// An allocation in flight and the number of pods sharing it (kube's `inFlightAllocation`).
type InFlight = (Arc<Allocation>, u32);

#[derive(Default)]
pub(crate) struct DraManager {
    classes: RwLock<AHashMap<Arc<str>, Arc<DeviceClass>>>,
    /// Which class backs an extended resource (DRAExtendedResource).
    extended_resources: RwLock<ExtendedResourceCache>,
    /// The claims made for pods' extended resources, by the owning pod's UID.
    extended_claims: RwLock<AHashMap<Arc<str>, ClaimKey>>,
    /// By name, in name order, as the scheduler reads them: with the taints of the
    /// DeviceTaintRules that select their devices (kube's ResourceSlice tracker).
    slices: RwLock<BTreeMap<Arc<str>, Arc<ResourceSlice>>>,
    /// The slices as their drivers wrote them, and the DeviceTaintRules. Locked before
    /// `slices` when both are.
    tracker: RwLock<SliceTracker>,
    claims: RwLock<AHashMap<ClaimKey, Arc<ResourceClaim>>>,
    /// The devices the stored claims' allocations hold (admin access holds none), each with
    /// the number of claims holding it, kept from the claim events (module doc).
    held: RwLock<Arc<AHashMap<DeviceId, u32>>>,
    /// The shares of devices allocated with a share ID (DRAConsumableCapacity), by device.
    shared: RwLock<Arc<AHashMap<DeviceId, SharedUse>>>,
    /// Claim UID → the allocation Reserve made for it, until PreBind writes it, with the
    /// number of pods sharing it (kube's `inFlightAllocation.sharers`: the members of one
    /// pod-group cycle that use a group's claim).
    in_flight: RwLock<AHashMap<Arc<str>, InFlight>>,
    /// The slices indexed by node, built on first use after they change (`None`: stale).
    index: RwLock<Option<Arc<SliceIndex>>>,
    /// Bumped on every slice event: what was derived from the slices (the index, selector
    /// results) is stale when it changed.
    slices_generation: AtomicU64,
    /// Bumped on every DeviceClass event.
    classes_generation: AtomicU64,
    /// Per pool, a count of the changes to what its devices hold (claims' allocations and
    /// in-flight ones): bumped under the lock of the state that changed, read with them
    /// ([`AllocatedDevices::pool_version`]).
    versions: RwLock<Arc<PoolVersions>>,
    rejected: AtomicU64,
}

/// A pool (driver, pool name) → how often what its devices hold changed.
pub(crate) type PoolVersions = AHashMap<(Sym, Sym), u64>;

impl std::fmt::Debug for DraManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DraManager")
            .field("classes", &self.classes.read().len())
            .field("slices", &self.slices.read().len())
            .field("claims", &self.claims.read().len())
            .finish_non_exhaustive()
    }
}

impl DraManager {
    /// Applies one informer event of a DRA kind (others are ignored). `new` is `None` for a
    /// delete; then `old` names the object.
    pub(crate) fn apply(
        &self,
        resource: EventResource,
        old: Option<&ApiObject>,
        new: Option<&ApiObject>,
    ) {
        let name = |m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
            Arc::<str>::from(m.name.as_deref().unwrap_or(""))
        };
        // A DeviceClass stored in v1beta2 (the same fields) is read as v1.
        let (old_v1, new_v1) = (as_v1_class(old), as_v1_class(new));
        let (old, new) = (old_v1.as_ref().or(old), new_v1.as_ref().or(new));
        let ok = match resource {
            EventResource::DeviceClass => {
                let ok = apply_kind(
                    old,
                    new,
                    |c: &k::DeviceClass| name(&c.metadata),
                    dra::device_class,
                    |key, v| {
                        let old = self.classes.write().insert(key, v.clone());
                        self.extended_resources.write().upsert(&v, old.as_deref());
                        old
                    },
                    |key| {
                        let old = self.classes.write().remove(key);
                        if let Some(o) = &old {
                            self.extended_resources.write().remove(o);
                        }
                        old
                    },
                );
                // After the change, so whoever reads this generation reads the change.
                self.classes_generation.fetch_add(1, Ordering::Release);
                ok
            }
            EventResource::ResourceSlice => {
                let ok = apply_kind(
                    old,
                    new,
                    |s: &k::ResourceSlice| name(&s.metadata),
                    dra::resource_slice,
                    // The generation moves under the slices' lock: an index built from
                    // them carries the generation of exactly what it read.
                    |key, v| {
                        let mut t = self.tracker.write();
                        let patched = t.patch(&v);
                        t.raw.insert(key.clone(), v);
                        let mut w = self.slices.write();
                        self.slices_generation.fetch_add(1, Ordering::Release);
                        w.insert(key, patched)
                    },
                    |key| {
                        let mut t = self.tracker.write();
                        t.raw.remove(key);
                        let mut w = self.slices.write();
                        self.slices_generation.fetch_add(1, Ordering::Release);
                        w.remove(key)
                    },
                );
                *self.index.write() = None;
                ok
            }
            EventResource::ResourceClaim => apply_kind(
                old,
                new,
                |c: &k::ResourceClaim| {
                    let ns = c.metadata.namespace.as_deref().unwrap_or("");
                    (Sym::new(ns), name(&c.metadata))
                },
                dra::resource_claim,
                |key, v| {
                    let new = v.clone();
                    let old = self.claims.write().insert(key.clone(), v);
                    self.index_extended_claim(&key, old.as_deref(), Some(&new));
                    self.hold(old.as_deref(), Some(&new));
                    old
                },
                |key| {
                    let old = self.claims.write().remove(key);
                    self.index_extended_claim(key, old.as_deref(), None);
                    self.hold(old.as_deref(), None);
                    old
                },
            ),
            _ => true,
        };
        if !ok {
            self.rejected.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// kube's ResourceSlice tracker: the slices as written, and the rules whose taints it
/// adds to them ([`crate::api::dra_taint_rule`]).
#[derive(Default)]
struct SliceTracker {
    raw: AHashMap<Arc<str>, Arc<ResourceSlice>>,
    rules: BTreeMap<Arc<str>, Arc<DeviceTaintRule>>,
}

impl SliceTracker {
    /// The slice with the rules' taints (itself when no rule selects its devices).
    fn patch(&self, raw: &Arc<ResourceSlice>) -> Arc<ResourceSlice> {
        if self.rules.is_empty() {
            return raw.clone();
        }
        dra_taint_rule::with_taint_rules(raw, &self.rules).map_or_else(|| raw.clone(), Arc::new)
    }
}

impl DraManager {
    /// Applies one DeviceTaintRule event (`new` `None`: a delete) as kube's tracker does:
    /// re-taints the slices the old or new rule reaches. Returns how many slices' taints
    /// changed; the caller sends each a ResourceSlice update event, as the tracker does.
    pub(crate) fn apply_taint_rule(
        &self,
        old: Option<&ApiObject>,
        new: Option<&ApiObject>,
    ) -> usize {
        let rule = |o: Option<&ApiObject>| {
            o.and_then(|o| o.downcast_ref::<k::DeviceTaintRule>())
                .map(|r| Arc::new(dra_taint_rule::device_taint_rule(r)))
        };
        let (old, new) = (rule(old), rule(new));
        let mut t = self.tracker.write();
        match (&old, &new) {
            (_, Some(r)) => t.rules.insert(r.name.clone(), r.clone()),
            (Some(r), None) => t.rules.remove(&r.name),
            (None, None) => return 0,
        };
        let reached = |s: &ResourceSlice| [&old, &new].into_iter().flatten().any(|r| r.reaches(s));
        let mut names: Vec<&Arc<str>> = (t.raw.iter())
            .filter(|(_, s)| reached(s))
            .map(|(n, _)| n)
            .collect();
        names.sort();
        let patched: Vec<_> = names.iter().map(|n| (*n, t.patch(&t.raw[*n]))).collect();
        let mut w = self.slices.write();
        let mut changed = 0;
        for (name, p) in patched {
            let same = w.get(name).is_some_and(|cur| {
                (cur.devices.iter().zip(&p.devices)).all(|(a, b)| a.taints == b.taints)
            });
            if !same {
                w.insert(name.clone(), p);
                changed += 1;
            }
        }
        if changed > 0 {
            self.slices_generation.fetch_add(1, Ordering::Release);
            drop(w);
            *self.index.write() = None;
        }
        changed
    }
}

/// The devices the allocator must not hand out: those the claims hold (a snapshot shared
/// with the manager, copied only when a claim changes while a cycle holds it) and those of
/// in-flight allocations; and the shares of devices that allow several allocations
/// (DRAConsumableCapacity: kube's `AllocatedSharedDeviceIDs` and `AggregatedCapacity`).
#[derive(Clone, Debug, Default)]
pub(crate) struct AllocatedDevices {
    held: Arc<AHashMap<DeviceId, u32>>,
    in_flight: AHashSet<DeviceId>,
    shared: Arc<AHashMap<DeviceId, SharedUse>>,
    in_flight_shared: AHashMap<DeviceId, SharedUse>,
    /// The pools' versions, read with the rest (empty outside the manager's snapshots).
    versions: Arc<PoolVersions>,
}

/// A device's shares (allocation results with a share ID), and what they consume.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct SharedUse {
    shares: u32,
    /// Capacity name (as the slice writes it) → the shares' sum.
    pub(crate) consumed: BTreeMap<Arc<str>, Quantity>,
}

impl SharedUse {
    pub(crate) fn add(&mut self, consumed: &BTreeMap<Arc<str>, Quantity>) {
        self.shares += 1;
        for (name, q) in consumed {
            let sum = self.consumed.entry(name.clone()).or_insert(Quantity::ZERO);
            *sum = sum.checked_add(q).unwrap_or(*sum);
        }
    }

    /// Drops one share; whether none is left.
    pub(crate) fn remove(&mut self, consumed: &BTreeMap<Arc<str>, Quantity>) -> bool {
        self.shares = self.shares.saturating_sub(1);
        for (name, q) in consumed {
            if let Some(sum) = self.consumed.get_mut(name) {
                *sum = sum.checked_sub(q).unwrap_or(*sum);
            }
        }
        self.shares == 0
    }
}

impl AllocatedDevices {
    /// Whether the device is held whole (or, with DRAConsumableCapacity off, shared).
    pub(crate) fn contains(&self, d: &DeviceId) -> bool {
        self.held.contains_key(d) || self.in_flight.contains(d)
    }

    /// Whether some share of the device is allocated (kube's `deviceCapacityInUse`, less
    /// the search's own shares).
    pub(crate) fn shared(&self, d: &DeviceId) -> bool {
        self.shared.contains_key(d) || self.in_flight_shared.contains_key(d)
    }

    /// What the device's allocated shares consume (kube's `AggregatedCapacity` entry).
    pub(crate) fn consumed(&self, d: &DeviceId) -> Option<Cow<'_, BTreeMap<Arc<str>, Quantity>>> {
        match (self.shared.get(d), self.in_flight_shared.get(d)) {
            (Some(a), None) | (None, Some(a)) => Some(Cow::Borrowed(&a.consumed)),
            (Some(a), Some(b)) => {
                let mut sum = a.clone();
                sum.add(&b.consumed);
                Some(Cow::Owned(sum.consumed))
            }
            (None, None) => None,
        }
    }

    /// How often what the devices of the pool (`driver`, `pool`) hold had changed when this
    /// snapshot was taken: two snapshots with one version hold the same of the pool.
    pub(crate) fn pool_version(&self, driver: Sym, pool: Sym) -> u64 {
        self.versions.get(&(driver, pool)).copied().unwrap_or(0)
    }

    /// Every device held whole, in no order (tests).
    #[cfg(test)]
    pub(crate) fn iter(&self) -> impl Iterator<Item = &DeviceId> {
        self.held.keys().chain(self.in_flight.iter())
    }

    /// A set of `devices` (tests).
    #[cfg(test)]
    pub(crate) fn from_set(devices: AHashSet<DeviceId>) -> AllocatedDevices {
        AllocatedDevices {
            in_flight: devices,
            ..AllocatedDevices::default()
        }
    }

    /// Adds an allocated device (an allocation made outside the scheduler's cycle): a
    /// share when it has a share ID and DRAConsumableCapacity is on, else the whole device
    /// (admin access holds nothing).
    pub(crate) fn insert(&mut self, d: &dra::AllocatedDevice, consumable_capacity: bool) {
        if d.admin_access {
            return;
        }
        if consumable_capacity && d.share_id.is_some() {
            (self.in_flight_shared.entry(d.device).or_default()).add(&d.consumed_capacity);
        } else {
            self.in_flight.insert(d.device);
        }
    }
}

/// A pool's identity: driver and pool name.
pub(crate) type PoolKey = (Sym, Arc<str>);

/// The slices as the allocator reads them for one node: the device slices on the node (by
/// name) and those that may reach any node (a node selector, all nodes, per-device
/// selection), with the counter slices of their pools. kube reads every pool's counter
/// slices on every node; a pool that reaches a node only through them is the same pool on
/// every node, so the allocator derives those once per index (`memo`).
pub(crate) struct SliceIndex {
    pub(crate) generation: u64,
    pub(crate) by_node: AHashMap<Sym, Vec<Arc<ResourceSlice>>>,
    pub(crate) other: Vec<Arc<ResourceSlice>>,
    /// Slices with shared counters, by pool.
    pub(crate) counters: AHashMap<PoolKey, Vec<Arc<ResourceSlice>>>,
    /// Every slice, by pool.
    pub(crate) by_pool: AHashMap<PoolKey, Vec<Arc<ResourceSlice>>>,
    /// What the allocator derives from the index once (its type is the allocator's).
    pub(crate) memo: std::sync::OnceLock<Box<dyn std::any::Any + Send + Sync>>,
    /// What the allocator derives from the index once per node (its type is the
    /// allocator's): the node's pools, which depend on nothing else that changes between
    /// cycles while the index stands.
    pub(crate) node_memo: parking_lot::RwLock<AHashMap<Sym, Arc<dyn std::any::Any + Send + Sync>>>,
}

impl SliceIndex {
    /// The slices the allocator on `node` reads (borrowed when nothing is shared).
    /// The device slices that may reach `node`, and the counter slices of their pools, in
    /// name order.
    pub(crate) fn for_node(&self, node: Sym) -> std::borrow::Cow<'_, [Arc<ResourceSlice>]> {
        let local = self.by_node.get(&node).map_or(&[][..], Vec::as_slice);
        if self.other.is_empty() && self.counters.is_empty() {
            return std::borrow::Cow::Borrowed(local);
        }
        let mut v = local.to_vec();
        v.extend(self.other.iter().cloned());
        let mut pools: Vec<PoolKey> = v.iter().map(|s| (s.driver, s.pool.clone())).collect();
        pools.sort();
        pools.dedup();
        for p in &pools {
            v.extend(self.counters.get(p).into_iter().flatten().cloned());
        }
        v.sort_by(|a, b| a.name.cmp(&b.name));
        std::borrow::Cow::Owned(v)
    }
}

/// A v1beta2 DeviceClass as the v1 object (their fields are the same); `None` for anything
/// else.
fn as_v1_class(o: Option<&ApiObject>) -> Option<ApiObject> {
    let c = o?.downcast_ref::<k8s_openapi::api::resource::v1beta2::DeviceClass>()?;
    let mut v = serde_json::to_value(c).ok()?;
    v["apiVersion"] = serde_json::Value::from("resource.k8s.io/v1");
    let v1: k::DeviceClass = serde_json::from_value(v).ok()?;
    Some(ApiObject(Arc::new(v1)))
}

/// One event of kind `T`: the new object converted and stored under its key, or the old
/// one's key removed; false when the new object does not convert (the volume listers'
/// too).
pub(crate) fn apply_kind<T: 'static, K, V, R>(
    old: Option<&ApiObject>,
    new: Option<&ApiObject>,
    key: impl Fn(&T) -> K,
    convert: impl Fn(&T) -> Result<V, dra_convert::ConvertError>,
    insert: impl FnOnce(K, Arc<V>) -> R,
    remove: impl FnOnce(&K) -> Option<Arc<V>>,
) -> bool {
    match new.and_then(|o| o.downcast_ref::<T>()) {
        Some(obj) => match convert(obj) {
            Ok(v) => {
                insert(key(obj), Arc::new(v));
                true
            }
            Err(_) => false,
        },
        None => match old.and_then(|o| o.downcast_ref::<T>()) {
            Some(obj) => {
                remove(&key(obj));
                true
            }
            None => new.is_none(),
        },
    }
}

/// The readers (the DynamicResources plugin's).
impl DraManager {
    pub(crate) fn class(&self, name: &str) -> Option<Arc<DeviceClass>> {
        self.classes.read().get(name).cloned()
    }

    /// Every slice, in name order.
    #[cfg(test)]
    pub(crate) fn slices(&self) -> Vec<Arc<ResourceSlice>> {
        self.slices.read().values().cloned().collect()
    }

    /// Counts the DeviceClass events: what was derived from the classes is stale when it
    /// changed.
    pub(crate) fn classes_generation(&self) -> u64 {
        self.classes_generation.load(Ordering::Acquire)
    }

    /// The slices by node (module doc of [`SliceIndex`]).
    pub(crate) fn slice_index(&self) -> Arc<SliceIndex> {
        if let Some(i) = self.index.read().as_ref() {
            return i.clone();
        }
        let mut w = self.index.write();
        if let Some(i) = w.as_ref() {
            return i.clone();
        }
        let (generation, all) = {
            let slices = self.slices.read();
            let generation = self.slices_generation.load(Ordering::Acquire);
            (generation, slices.values().cloned().collect::<Vec<_>>())
        };
        let mut by_node: AHashMap<Sym, Vec<Arc<ResourceSlice>>> = AHashMap::new();
        let (mut other, mut counters, mut by_pool) = (Vec::new(), AHashMap::new(), AHashMap::new());
        for s in &all {
            let pool: PoolKey = (s.driver, s.pool.clone());
            by_pool
                .entry(pool.clone())
                .or_insert_with(Vec::new)
                .push(s.clone());
            match &s.nodes {
                _ if !s.shared_counters.is_empty() => {
                    counters
                        .entry(pool)
                        .or_insert_with(Vec::new)
                        .push(s.clone());
                }
                dra::NodeSelection::Node(n) => by_node.entry(*n).or_default().push(s.clone()),
                _ => other.push(s.clone()),
            }
        }
        let i = Arc::new(SliceIndex {
            generation,
            by_node,
            other,
            counters,
            by_pool,
            memo: std::sync::OnceLock::new(),
            node_memo: Default::default(),
        });
        *w = Some(i.clone());
        i
    }

    /// kube's `DeviceClassResolver.GetDeviceClass`: the class backing extended resource
    /// `resource`, if any.
    pub(crate) fn class_for_extended_resource(&self, resource: Sym) -> Option<Arc<DeviceClass>> {
        let cache = self.extended_resources.read();
        if cache.is_empty() {
            return None;
        }
        cache.class_for(resource).cloned()
    }

    /// kube's `findExtendedResourceClaim`: the claim made for the extended resources of the
    /// pod with UID `pod_uid` (annotated, controlled by the pod).
    pub(crate) fn extended_resource_claim(&self, pod_uid: &str) -> Option<Arc<ResourceClaim>> {
        let key = self.extended_claims.read().get(pod_uid).cloned()?;
        self.claims.read().get(&key).cloned()
    }

    fn index_extended_claim(
        &self,
        key: &ClaimKey,
        old: Option<&ResourceClaim>,
        new: Option<&ResourceClaim>,
    ) {
        let owner = |c: Option<&ResourceClaim>| {
            c.filter(|c| c.extended)
                .and_then(|c| c.controller_uid.clone())
        };
        let (was, is) = (owner(old), owner(new));
        if was == is {
            return;
        }
        let mut idx = self.extended_claims.write();
        if let Some(w) = was
            && idx.get(&w) == Some(key)
        {
            idx.remove(&w);
        }
        if let Some(i) = is {
            idx.insert(i, key.clone());
        }
    }

    pub(crate) fn claim(&self, namespace: Sym, name: &str) -> Option<Arc<ResourceClaim>> {
        self.claims
            .read()
            .get(&(namespace, Arc::from(name)))
            .cloned()
    }

    /// The devices the claims' allocations hold (admin-access allocations hold none: kube
    /// lets them share a device with its user), and the shares of shared devices; with
    /// DRAConsumableCapacity off (`consumable_capacity`), as kube's `GatherAllocatedState`,
    /// a shared device counts as held whole. The devices of in-flight allocations count too.
    /// How many snapshots ([`Self::allocated_devices`]) are alive: the holders of the held
    /// devices' map besides the manager.
    pub(crate) fn snapshots_held(&self) -> usize {
        Arc::strong_count(&self.held.read()) - 1
    }

    pub(crate) fn allocated_devices(&self, consumable_capacity: bool) -> AllocatedDevices {
        // Every part under its lock at once (in the mutators' order: held, shared, in
        // flight, versions), so the versions describe exactly this snapshot.
        let (held, shared, in_flight) =
            (self.held.read(), self.shared.read(), self.in_flight.read());
        let mut out = AllocatedDevices {
            held: held.clone(),
            shared: shared.clone(),
            versions: self.versions.read().clone(),
            ..AllocatedDevices::default()
        };
        for (a, _) in in_flight.values() {
            for d in &a.devices {
                out.insert(d, consumable_capacity);
            }
        }
        drop((held, shared, in_flight));
        if !consumable_capacity && !out.shared.is_empty() {
            out.in_flight.extend(out.shared.keys().copied());
            out.shared = Arc::default();
        }
        out
    }

    /// Bumps the versions of the pools of `devices` (the caller holds the lock of the state
    /// they changed).
    fn bump<'d>(&self, devices: impl IntoIterator<Item = &'d dra::AllocatedDevice>) {
        let mut v = self.versions.write();
        let v = Arc::make_mut(&mut v);
        for d in devices {
            *v.entry((d.device.driver, d.device.pool)).or_insert(0) += 1;
        }
    }

    /// Moves the held devices and shares from `old`'s allocation to `new`'s (a claim event).
    fn hold(&self, old: Option<&ResourceClaim>, new: Option<&ResourceClaim>) {
        let devices = |c: Option<&ResourceClaim>| -> Vec<dra::AllocatedDevice> {
            c.and_then(|c| c.allocation.as_ref())
                .into_iter()
                .flat_map(|a| a.devices.iter())
                .filter(|d| !d.admin_access)
                .cloned()
                .collect()
        };
        let (gone, came) = (devices(old), devices(new));
        if gone == came {
            return;
        }
        let (mut held, mut shared) = (self.held.write(), self.shared.write());
        self.bump(gone.iter().chain(&came));
        let (held, shared) = (Arc::make_mut(&mut held), Arc::make_mut(&mut shared));
        for d in gone {
            if d.share_id.is_some() {
                if let Some(u) = shared.get_mut(&d.device)
                    && u.remove(&d.consumed_capacity)
                {
                    shared.remove(&d.device);
                }
            } else if let Some(n) = held.get_mut(&d.device) {
                *n -= 1;
                if *n == 0 {
                    held.remove(&d.device);
                }
            }
        }
        for d in came {
            if d.share_id.is_some() {
                shared
                    .entry(d.device)
                    .or_default()
                    .add(&d.consumed_capacity);
            } else {
                *held.entry(d.device).or_insert(0) += 1;
            }
        }
    }

    /// Reserve's allocation for `claim` (kube's `SignalClaimPendingAllocation`): one more
    /// sharer when one is in flight already; none when the stored claim is allocated by
    /// now (the caller's view was stale; the claim for extended resources, which is never
    /// shared, is not looked up).
    pub(crate) fn signal_pending_allocation(
        &self,
        claim: &ResourceClaim,
        allocation: Arc<Allocation>,
    ) {
        let mut in_flight = self.in_flight.write();
        if let Some((_, sharers)) = in_flight.get_mut(&claim.uid) {
            *sharers += 1;
            return;
        }
        if !claim.extended
            && self
                .claim(claim.namespace, &claim.name)
                .is_some_and(|c| c.uid == claim.uid && c.allocation.is_some())
        {
            return;
        }
        self.bump(&allocation.devices);
        in_flight.insert(claim.uid.clone(), (allocation, 1));
    }

    /// The allocation of the claim `uid` in flight, if any (kube's `GetPendingAllocation`).
    pub(crate) fn pending_allocation(&self, uid: &str) -> Option<Arc<Allocation>> {
        self.in_flight.read().get(uid).map(|(a, _)| a.clone())
    }

    /// Replaces every in-flight allocation (a replay of a recorded state).
    pub(crate) fn replace_pending_allocations(&self, pending: AHashMap<Arc<str>, Arc<Allocation>>) {
        let mut in_flight = self.in_flight.write();
        let devices = |m: &AHashMap<Arc<str>, InFlight>| -> Vec<dra::AllocatedDevice> {
            m.values()
                .flat_map(|(a, _)| a.devices.iter().cloned())
                .collect()
        };
        let gone = devices(&in_flight);
        *in_flight = pending.into_iter().map(|(k, a)| (k, (a, 1))).collect();
        self.bump(gone.iter().chain(&devices(&in_flight)));
    }

    /// kube's `MaybeRemoveClaimPendingAllocation`: drops one sharer of the claim's in-flight
    /// allocation, and the allocation with the last one (or at once with `force`: PreBind
    /// wrote it); whether it was dropped.
    pub(crate) fn maybe_remove_pending_allocation(&self, uid: &str, force: bool) -> bool {
        let mut in_flight = self.in_flight.write();
        let Some((_, sharers)) = in_flight.get_mut(uid) else {
            return false;
        };
        if force || *sharers <= 1 {
            if let Some((a, _)) = in_flight.remove(uid) {
                self.bump(&a.devices);
            }
            return true;
        }
        *sharers -= 1;
        false
    }

    /// Objects dropped because they did not convert.
    pub(crate) fn rejected(&self) -> u64 {
        self.rejected.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj<T: serde::de::DeserializeOwned + Send + Sync + 'static>(
        v: serde_json::Value,
    ) -> ApiObject {
        ApiObject::from_json::<T>(v)
    }

    #[test]
    fn events_keep_classes_slices_and_claims_and_the_devices_claims_hold() {
        let m = DraManager::default();
        let class = obj::<k::DeviceClass>(json!({"metadata": {"name": "gpu"}, "spec": {}}));
        m.apply(EventResource::DeviceClass, None, Some(&class));
        assert!(m.class("gpu").is_some());
        let slice = |name: &str, generation: i64| {
            obj::<k::ResourceSlice>(json!({
                "metadata": {"name": name},
                "spec": {"driver": "d", "nodeName": "n0",
                         "pool": {"name": "p", "generation": generation, "resourceSliceCount": 1},
                         "devices": [{"name": "x"}, {"name": "y"}]}
            }))
        };
        m.apply(EventResource::ResourceSlice, None, Some(&slice("b", 1)));
        m.apply(EventResource::ResourceSlice, None, Some(&slice("a", 1)));
        let names: Vec<String> = m.slices().iter().map(|s| s.name.to_string()).collect();
        assert_eq!(names, ["a", "b"]);
        m.apply(
            EventResource::ResourceSlice,
            Some(&slice("b", 1)),
            Some(&slice("b", 2)),
        );
        assert_eq!(m.slices()[1].pool_generation, 2);
        m.apply(EventResource::ResourceSlice, Some(&slice("a", 1)), None);
        assert_eq!(m.slices().len(), 1);

        let claim = |device: &str, admin: bool| {
            obj::<k::ResourceClaim>(json!({
                "metadata": {"name": format!("c-{device}"), "namespace": "ns"},
                "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
                "status": {"allocation": {"devices": {"results": [
                    {"request": "r", "driver": "d", "pool": "p", "device": device, "adminAccess": admin}
                ]}}}
            }))
        };
        m.apply(EventResource::ResourceClaim, None, Some(&claim("x", false)));
        m.apply(EventResource::ResourceClaim, None, Some(&claim("y", true)));
        let held: Vec<String> = m
            .allocated_devices(true)
            .iter()
            .map(|d| d.to_string())
            .collect();
        assert_eq!(held, ["d/p/x"], "admin access holds no device");
        assert!(m.claim(Sym::new("ns"), "c-x").is_some());
        m.apply(EventResource::ResourceClaim, Some(&claim("x", false)), None);
        assert_eq!(
            m.allocated_devices(true).iter().count(),
            0,
            "a deleted claim frees its devices"
        );
        m.apply(EventResource::DeviceClass, Some(&class), None);
        assert!(m.class("gpu").is_none());
        assert_eq!(m.rejected(), 0);
    }

    #[test]
    fn held_devices_follow_each_claims_allocation_and_in_flight_ones_count_until_dropped() {
        let m = DraManager::default();
        let claim = |status: serde_json::Value| {
            obj::<k::ResourceClaim>(json!({
                "metadata": {"name": "c", "namespace": "ns", "uid": "u"},
                "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
                "status": status
            }))
        };
        let on = |device: &str| {
            claim(json!({"allocation": {"devices": {"results": [
                {"request": "r", "driver": "d", "pool": "p", "device": device}]}}}))
        };
        let held = |m: &DraManager| {
            let mut v: Vec<String> = m
                .allocated_devices(true)
                .iter()
                .map(|d| d.to_string())
                .collect();
            v.sort();
            v
        };
        let (free, x, y) = (claim(json!({})), on("x"), on("y"));
        m.apply(EventResource::ResourceClaim, None, Some(&free));
        assert!(held(&m).is_empty());
        m.apply(EventResource::ResourceClaim, Some(&free), Some(&x));
        assert_eq!(held(&m), ["d/p/x"]);
        // A snapshot taken now keeps what it saw while the claim moves on.
        let snapshot = m.allocated_devices(true);
        m.apply(EventResource::ResourceClaim, Some(&x), Some(&y));
        assert_eq!(held(&m), ["d/p/y"]);
        assert_eq!(snapshot.iter().count(), 1);
        assert!(snapshot.contains(&DeviceId {
            driver: Sym::new("d"),
            pool: Sym::new("p"),
            device: Sym::new("x"),
        }));
        m.apply(EventResource::ResourceClaim, Some(&y), Some(&free));
        assert!(held(&m).is_empty(), "deallocated: nothing held");
        let mut c = dra::resource_claim(y.downcast_ref::<k::ResourceClaim>().unwrap()).unwrap();
        let a = Arc::new(c.allocation.take().unwrap());
        m.signal_pending_allocation(&c, a.clone());
        assert_eq!(
            held(&m),
            ["d/p/y"],
            "an in-flight allocation holds its devices"
        );
        // A second pod of the same group cycle shares it; the first Unreserve keeps it.
        m.signal_pending_allocation(&c, a.clone());
        assert!(!m.maybe_remove_pending_allocation("u", false));
        assert_eq!(held(&m), ["d/p/y"], "one sharer is left");
        assert!(m.maybe_remove_pending_allocation("u", false));
        assert!(held(&m).is_empty());
        // PreBind's removal drops it whatever the sharers.
        m.signal_pending_allocation(&c, a.clone());
        m.signal_pending_allocation(&c, a.clone());
        assert!(m.maybe_remove_pending_allocation("u", true));
        assert!(m.pending_allocation("u").is_none());
        // A claim stored as allocated by now gets no in-flight allocation.
        m.apply(EventResource::ResourceClaim, Some(&free), Some(&y));
        m.signal_pending_allocation(&c, a);
        assert!(m.pending_allocation("u").is_none(), "the view was stale");
    }

    /// The node memo's item 5 (`plugins/dynamic_resources/node_memo.rs`): a pool's version
    /// moves with every change to what its devices hold, and only its own.
    #[test]
    fn a_pools_version_moves_with_what_its_devices_hold_and_a_snapshot_keeps_its_own() {
        let m = DraManager::default();
        let on = |pool: &str| {
            obj::<k::ResourceClaim>(json!({
                "metadata": {"name": "c", "namespace": "ns", "uid": "u"},
                "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
                "status": {"allocation": {"devices": {"results": [
                    {"request": "r", "driver": "d", "pool": pool, "device": "x"}]}}}
            }))
        };
        let (d, p, q) = (Sym::new("d"), Sym::new("p"), Sym::new("q"));
        let version = |pool| m.allocated_devices(false).pool_version(d, pool);
        let (vp, vq) = (version(p), version(q));
        m.apply(EventResource::ResourceClaim, None, Some(&on("p")));
        assert!(version(p) > vp, "allocated on p");
        assert_eq!(version(q), vq, "q holds what it held");
        let before = m.allocated_devices(false);
        m.apply(EventResource::ResourceClaim, Some(&on("p")), Some(&on("q")));
        assert!(version(q) > vq && version(p) > before.pool_version(d, p));
        assert_eq!(
            before.pool_version(d, q),
            vq,
            "a snapshot keeps the versions of what it holds"
        );
        // In flight: Reserve's allocation and its removal.
        let mut c =
            dra::resource_claim(on("p").downcast_ref::<k::ResourceClaim>().unwrap()).unwrap();
        c.uid = "other".into();
        c.name = "other".into();
        let a = Arc::new(c.allocation.take().unwrap());
        let v = version(p);
        m.signal_pending_allocation(&c, a);
        assert!(version(p) > v);
        let v = version(p);
        assert!(m.maybe_remove_pending_allocation("other", true));
        assert!(version(p) > v);
        // A claim event that changes no allocation moves nothing.
        let (vp, vq) = (version(p), version(q));
        m.apply(EventResource::ResourceClaim, Some(&on("q")), Some(&on("q")));
        assert_eq!((version(p), version(q)), (vp, vq));
    }

    #[test]
    fn a_v1beta2_device_class_is_read_as_v1() {
        let m = DraManager::default();
        let class = obj::<k8s_openapi::api::resource::v1beta2::DeviceClass>(json!({
            "metadata": {"name": "shared"},
            "spec": {"selectors": [{"cel": {"expression": "device.driver == \"d\""}}]}
        }));
        m.apply(EventResource::DeviceClass, None, Some(&class));
        let c = m.class("shared").expect("stored");
        assert_eq!(c.selectors.len(), 1);
        assert_eq!(m.rejected(), 0);
        m.apply(EventResource::DeviceClass, Some(&class), None);
        assert!(m.class("shared").is_none());
    }

    #[test]
    fn an_object_that_does_not_convert_is_dropped_and_counted() {
        let m = DraManager::default();
        let bad = obj::<k::ResourceSlice>(json!({
            "metadata": {"name": "s"},
            "spec": {"driver": "d", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}}
        }));
        m.apply(EventResource::ResourceSlice, None, Some(&bad));
        assert!(m.slices().is_empty());
        assert_eq!(m.rejected(), 1);
    }

    /// kube's `allocatedDevices` tracker and `GatherAllocatedState` with shared devices
    /// (pkg/scheduler/framework/plugins/dynamicresources/allocateddevices.go): results with
    /// a share ID add up per device; with DRAConsumableCapacity off the device is held whole.
    #[test]
    fn shares_of_a_device_add_up_and_leave_with_their_claims() {
        let m = DraManager::default();
        let claim = |name: &str, amount: &str| {
            obj::<k::ResourceClaim>(json!({
                "metadata": {"name": name, "namespace": "ns", "uid": name},
                "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "nic"}}]}},
                "status": {"allocation": {"devices": {"results": [{
                    "request": "r", "driver": "d", "pool": "p", "device": "nic",
                    "shareID": format!("{name}-share"), "consumedCapacity": {"bw": amount}
                }]}}}
            }))
        };
        let nic = DeviceId {
            driver: Sym::new("d"),
            pool: Sym::new("p"),
            device: Sym::new("nic"),
        };
        let (a, b) = (claim("a", "2G"), claim("b", "500M"));
        m.apply(EventResource::ResourceClaim, None, Some(&a));
        m.apply(EventResource::ResourceClaim, None, Some(&b));
        let state = m.allocated_devices(true);
        assert!(!state.contains(&nic) && state.shared(&nic));
        let consumed = state.consumed(&nic).unwrap();
        assert_eq!(consumed.get("bw"), Some(&Quantity::parse("2.5G").unwrap()));
        assert!(
            m.allocated_devices(false).contains(&nic),
            "gate off: held whole"
        );
        m.apply(EventResource::ResourceClaim, Some(&a), None);
        let state = m.allocated_devices(true);
        let consumed = state.consumed(&nic).unwrap();
        assert_eq!(consumed.get("bw"), Some(&Quantity::parse("500M").unwrap()));
        m.apply(EventResource::ResourceClaim, Some(&b), None);
        assert!(
            !m.allocated_devices(true).shared(&nic),
            "the last share frees the device"
        );
    }
}
