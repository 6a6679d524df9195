//! What the scheduler knows of volume objects (kube's PV, PVC, StorageClass, CSINode and
//! CSIDriver listers, which the four volume plugins read): kept converted
//! ([`crate::api::volume`]), fed by the embedder's informer events
//! (`Scheduler::on_object_event`).
//!
//! Protocol: each event replaces or removes one object under its kind's lock; readers take
//! the lock for one lookup and keep the `Arc`. An object that does not convert is dropped and
//! counted ([`VolumeListers::rejected`]): the embedder's store validated it, so a count above
//! zero is a mismatch between the two.

use crate::api::Sym;
use crate::api::volume::{
    CsiDriver, CsiNode, CsiStorageCapacity, PersistentVolume, PersistentVolumeClaim, StorageClass,
    VolumeAttachment,
};
use crate::api::volume_convert as volume;
use crate::framework::dra_manager::apply_kind;
use crate::framework::events::{ApiObject, EventResource};
use ahash::AHashMap;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::storage::v1 as storage;
use parking_lot::RwLock;
use std::hash::Hash;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// CSIStorageCapacities by `(namespace, name)`.
type Capacities = std::collections::BTreeMap<(Sym, Arc<str>), Arc<CsiStorageCapacity>>;

/// Claims by `namespace` → `name`.
type Claims = AHashMap<Sym, AHashMap<Arc<str>, Arc<PersistentVolumeClaim>>>;

#[derive(Default)]
struct Attachments {
    by_name: AHashMap<Arc<str>, Arc<VolumeAttachment>>,
    by_node: AHashMap<Sym, Vec<Arc<VolumeAttachment>>>,
}

impl Attachments {
    fn insert(&mut self, name: Arc<str>, va: Arc<VolumeAttachment>) {
        self.remove(&name);
        self.by_node
            .entry(va.node_name)
            .or_default()
            .push(va.clone());
        self.by_name.insert(name, va);
    }

    fn remove(&mut self, name: &Arc<str>) {
        let Some(old) = self.by_name.remove(name) else {
            return;
        };
        if let Some(list) = self.by_node.get_mut(&old.node_name) {
            list.retain(|v| !Arc::ptr_eq(v, &old));
            if list.is_empty() {
                self.by_node.remove(&old.node_name);
            }
        }
    }
}

/// The volume objects, by kube's lister keys.
#[derive(Default)]
pub(crate) struct VolumeListers {
    pvs: RwLock<AHashMap<Sym, Arc<PersistentVolume>>>,
    pvcs: RwLock<Claims>,
    classes: RwLock<AHashMap<Arc<str>, Arc<StorageClass>>>,
    csi_nodes: RwLock<AHashMap<Sym, Arc<CsiNode>>>,
    csi_drivers: RwLock<AHashMap<Sym, Arc<CsiDriver>>>,
    /// VolumeAttachments by name, and their names by `spec.nodeName` (kube's index).
    attachments: RwLock<Attachments>,
    /// The number of VolumeAttachments (so that a cluster without any takes no lock).
    attachment_total: std::sync::atomic::AtomicUsize,
    /// CSIStorageCapacities by `namespace/name`, kept in name order (kube lists them in the
    /// informer's order, which Go leaves unspecified).
    capacities: RwLock<Capacities>,
    rejected: AtomicU64,
}

/// One event of a kind kept in `map` ([`apply_kind`] over the map).
fn apply_map<T: 'static, K: Eq + Hash, V>(
    map: &RwLock<AHashMap<K, Arc<V>>>,
    old: Option<&ApiObject>,
    new: Option<&ApiObject>,
    key: impl Fn(&T) -> K,
    convert: impl Fn(&T) -> Result<V, crate::api::convert::ConvertError>,
) -> bool {
    apply_kind(
        old,
        new,
        key,
        convert,
        |k, v| map.write().insert(k, v),
        |k| map.write().remove(k),
    )
}

fn name_of(m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> &str {
    m.name.as_deref().unwrap_or("")
}

impl VolumeListers {
    /// One informer event of a volume kind (other kinds are not this lister's).
    pub(crate) fn apply(
        &self,
        resource: EventResource,
        old: Option<&ApiObject>,
        new: Option<&ApiObject>,
    ) {
        let ok = match resource {
            EventResource::PersistentVolume => apply_map(
                &self.pvs,
                old,
                new,
                |pv: &core::PersistentVolume| Sym::new(name_of(&pv.metadata)),
                volume::persistent_volume,
            ),
            EventResource::PersistentVolumeClaim => self.apply_claim(old, new),
            EventResource::StorageClass => apply_map(
                &self.classes,
                old,
                new,
                |s: &storage::StorageClass| Arc::from(name_of(&s.metadata)),
                volume::storage_class,
            ),
            EventResource::CSINode => apply_map(
                &self.csi_nodes,
                old,
                new,
                |n: &storage::CSINode| Sym::new(name_of(&n.metadata)),
                |n| Ok(volume::csi_node(n)),
            ),
            EventResource::CSIDriver => apply_map(
                &self.csi_drivers,
                old,
                new,
                |d: &storage::CSIDriver| Sym::new(name_of(&d.metadata)),
                |d| Ok(volume::csi_driver(d)),
            ),
            EventResource::VolumeAttachment => apply_kind(
                old,
                new,
                |v: &storage::VolumeAttachment| Arc::<str>::from(name_of(&v.metadata)),
                |v| Ok(volume::volume_attachment(v)),
                |k, v| {
                    let mut a = self.attachments.write();
                    a.insert(k, v);
                    self.attachment_total
                        .store(a.by_name.len(), Ordering::Relaxed);
                },
                |k| {
                    let mut a = self.attachments.write();
                    a.remove(k);
                    self.attachment_total
                        .store(a.by_name.len(), Ordering::Relaxed);
                    None
                },
            ),
            EventResource::CSIStorageCapacity => apply_kind(
                old,
                new,
                |c: &storage::CSIStorageCapacity| {
                    (
                        Sym::new(c.metadata.namespace.as_deref().unwrap_or("")),
                        Arc::<str>::from(name_of(&c.metadata)),
                    )
                },
                volume::csi_storage_capacity,
                |k, v| self.capacities.write().insert(k, v),
                |k| self.capacities.write().remove(k),
            ),
            _ => true,
        };
        if !ok {
            self.rejected.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn apply_claim(&self, old: Option<&ApiObject>, new: Option<&ApiObject>) -> bool {
        let key = |c: &core::PersistentVolumeClaim| {
            (
                Sym::new(c.metadata.namespace.as_deref().unwrap_or("")),
                Arc::<str>::from(name_of(&c.metadata)),
            )
        };
        if let Some(c) = new.and_then(|o| o.downcast_ref::<core::PersistentVolumeClaim>()) {
            let Ok(v) = volume::persistent_volume_claim(c) else {
                return false;
            };
            let (ns, name) = key(c);
            self.pvcs
                .write()
                .entry(ns)
                .or_default()
                .insert(name, Arc::new(v));
        } else if let Some(c) = old.and_then(|o| o.downcast_ref::<core::PersistentVolumeClaim>()) {
            let (ns, name) = key(c);
            let mut m = self.pvcs.write();
            if let Some(by_name) = m.get_mut(&ns) {
                by_name.remove(&name);
                if by_name.is_empty() {
                    m.remove(&ns);
                }
            }
        }
        true
    }

    /// Objects dropped because they did not convert.
    pub(crate) fn rejected(&self) -> u64 {
        self.rejected.load(Ordering::Relaxed)
    }
}

/// The readers (the volume plugins', which land one by one: issue 35).
#[allow(dead_code)]
impl VolumeListers {
    pub(crate) fn pv(&self, name: Sym) -> Option<Arc<PersistentVolume>> {
        self.pvs.read().get(&name).cloned()
    }

    pub(crate) fn pvc(&self, namespace: Sym, name: &str) -> Option<Arc<PersistentVolumeClaim>> {
        self.pvcs
            .read()
            .get(&namespace)
            .and_then(|m| m.get(name))
            .cloned()
    }

    pub(crate) fn storage_class(&self, name: &str) -> Option<Arc<StorageClass>> {
        self.classes.read().get(name).cloned()
    }

    pub(crate) fn csi_node(&self, node: Sym) -> Option<Arc<CsiNode>> {
        self.csi_nodes.read().get(&node).cloned()
    }

    /// The volumes of a storage class (kube's PV cache index), in name order (kube's order
    /// is its informer's).
    pub(crate) fn pvs_of_class(&self, class: &str) -> Vec<Arc<PersistentVolume>> {
        let mut v: Vec<Arc<PersistentVolume>> = (self.pvs.read().values())
            .filter(|p| &*p.storage_class == class)
            .cloned()
            .collect();
        v.sort_by_cached_key(|p| p.name.as_arc());
        v
    }

    pub(crate) fn csi_driver(&self, name: Sym) -> Option<Arc<CsiDriver>> {
        self.csi_drivers.read().get(&name).cloned()
    }

    /// The VolumeAttachments whose `spec.nodeName` is `node`, to `f`.
    pub(crate) fn with_attachments<R>(
        &self,
        node: Sym,
        f: impl FnOnce(&[Arc<VolumeAttachment>]) -> R,
    ) -> R {
        let a = self.attachments.read();
        f(a.by_node.get(&node).map_or(&[], Vec::as_slice))
    }

    /// How many VolumeAttachments name `node`.
    pub(crate) fn attachment_count(&self, node: Sym) -> usize {
        if self.attachment_total.load(Ordering::Relaxed) == 0 {
            return 0;
        }
        self.attachments
            .read()
            .by_node
            .get(&node)
            .map_or(0, Vec::len)
    }

    /// Every CSIStorageCapacity, in `namespace/name` order.
    pub(crate) fn storage_capacities(&self) -> Vec<Arc<CsiStorageCapacity>> {
        self.capacities.read().values().cloned().collect()
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
    fn events_add_replace_and_remove_objects() {
        let l = VolumeListers::default();
        let claim = |vol: &str| {
            obj::<core::PersistentVolumeClaim>(json!({
                "metadata": {"name": "pvc-0", "namespace": "ns"},
                "spec": {"accessModes": ["ReadWriteOnce"], "volumeName": vol,
                         "resources": {"requests": {"storage": "1Gi"}}}
            }))
        };
        let (a, b) = (claim(""), claim("pv-0"));
        l.apply(EventResource::PersistentVolumeClaim, None, Some(&a));
        assert_eq!(&*l.pvc(Sym::new("ns"), "pvc-0").unwrap().volume_name, "");
        l.apply(EventResource::PersistentVolumeClaim, Some(&a), Some(&b));
        assert_eq!(
            &*l.pvc(Sym::new("ns"), "pvc-0").unwrap().volume_name,
            "pv-0"
        );
        assert!(l.pvc(Sym::new("other"), "pvc-0").is_none());
        l.apply(EventResource::PersistentVolumeClaim, Some(&b), None);
        assert!(l.pvc(Sym::new("ns"), "pvc-0").is_none());
        let node = obj::<storage::CSINode>(json!({
            "metadata": {"name": "n0"},
            "spec": {"drivers": [{"name": "d", "nodeID": "n0", "allocatable": {"count": 3}}]}
        }));
        l.apply(EventResource::CSINode, None, Some(&node));
        assert_eq!(
            l.csi_node(Sym::new("n0")).unwrap().drivers[0].count,
            Some(3)
        );
        assert_eq!(l.rejected(), 0);
        // A volume whose capacity does not parse is dropped and counted.
        let bad = obj::<core::PersistentVolume>(json!({
            "metadata": {"name": "pv-bad"},
            "spec": {"capacity": {"storage": "1 Gi"}, "accessModes": ["ReadOnlyMany"]}
        }));
        l.apply(EventResource::PersistentVolume, None, Some(&bad));
        assert!(l.pv(Sym::new("pv-bad")).is_none());
        assert_eq!(l.rejected(), 1);
    }
}
