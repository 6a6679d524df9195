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
use crate::api::{Sym, dra};
use crate::framework::events::{ApiObject, EventResource};
use ahash::{AHashMap, AHashSet};
use k8s_openapi::api::resource::v1 as k;
use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A claim's namespace and name.
type ClaimKey = (Sym, Arc<str>);

#[derive(Default)]
pub(crate) struct DraManager {
    classes: RwLock<AHashMap<Arc<str>, Arc<DeviceClass>>>,
    /// By name, in name order.
    slices: RwLock<BTreeMap<Arc<str>, Arc<ResourceSlice>>>,
    claims: RwLock<AHashMap<ClaimKey, Arc<ResourceClaim>>>,
    /// Claim UID → the allocation Reserve made for it, until PreBind writes it.
    in_flight: RwLock<AHashMap<Arc<str>, Arc<Allocation>>>,
    rejected: AtomicU64,
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
        let ok = match resource {
            EventResource::DeviceClass => apply_kind(
                old,
                new,
                |c: &k::DeviceClass| name(&c.metadata),
                dra::device_class,
                |key, v| self.classes.write().insert(key, v),
                |key| self.classes.write().remove(key),
            ),
            EventResource::ResourceSlice => apply_kind(
                old,
                new,
                |s: &k::ResourceSlice| name(&s.metadata),
                dra::resource_slice,
                |key, v| self.slices.write().insert(key, v),
                |key| self.slices.write().remove(key),
            ),
            EventResource::ResourceClaim => apply_kind(
                old,
                new,
                |c: &k::ResourceClaim| {
                    let ns = c.metadata.namespace.as_deref().unwrap_or("");
                    (Sym::new(ns), name(&c.metadata))
                },
                dra::resource_claim,
                |key, v| self.claims.write().insert(key, v),
                |key| self.claims.write().remove(key),
            ),
            _ => true,
        };
        if !ok {
            self.rejected.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// One event of kind `T`: the new object converted and stored under its key, or the old
/// one's key removed; false when the new object does not convert.
fn apply_kind<T: 'static, K, V, R>(
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
    pub(crate) fn slices(&self) -> Vec<Arc<ResourceSlice>> {
        self.slices.read().values().cloned().collect()
    }

    pub(crate) fn claim(&self, namespace: Sym, name: &str) -> Option<Arc<ResourceClaim>> {
        self.claims
            .read()
            .get(&(namespace, Arc::from(name)))
            .cloned()
    }

    /// The devices the claims' allocations hold (admin-access allocations hold none: kube
    /// lets them share a device with its user).
    /// The devices of in-flight allocations count too.
    pub(crate) fn allocated_devices(&self) -> AHashSet<DeviceId> {
        let in_flight = self.in_flight.read();
        let claims = self.claims.read();
        claims
            .values()
            .filter_map(|c| c.allocation.as_ref())
            .chain(in_flight.values().map(|a| &**a))
            .flat_map(|a| a.devices.iter())
            .filter(|d| !d.admin_access)
            .map(|d| d.device.clone())
            .collect()
    }

    /// Reserve's allocation for the claim `uid` (kube's `SignalClaimPendingAllocation`).
    pub(crate) fn signal_pending_allocation(&self, uid: Arc<str>, allocation: Arc<Allocation>) {
        self.in_flight.write().insert(uid, allocation);
    }

    /// Whether an allocation of the claim `uid` is in flight.
    pub(crate) fn pending_allocation(&self, uid: &str) -> Option<Arc<Allocation>> {
        self.in_flight.read().get(uid).cloned()
    }

    /// Replaces every in-flight allocation (a replay of a recorded state).
    pub(crate) fn replace_pending_allocations(&self, pending: AHashMap<Arc<str>, Arc<Allocation>>) {
        *self.in_flight.write() = pending;
    }

    /// Drops the in-flight allocation of the claim `uid`; whether there was one.
    pub(crate) fn remove_pending_allocation(&self, uid: &str) -> bool {
        self.in_flight.write().remove(uid).is_some()
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
        ApiObject(Arc::new(serde_json::from_value::<T>(v).unwrap()))
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
            .allocated_devices()
            .iter()
            .map(|d| d.to_string())
            .collect();
        assert_eq!(held, ["d/p/x"], "admin access holds no device");
        assert!(m.claim(Sym::new("ns"), "c-x").is_some());
        m.apply(EventResource::ResourceClaim, Some(&claim("x", false)), None);
        assert!(m.allocated_devices().is_empty());
        m.apply(EventResource::DeviceClass, Some(&class), None);
        assert!(m.class("gpu").is_none());
        assert_eq!(m.rejected(), 0);
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
}
