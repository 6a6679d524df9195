//! The volume state of a record (`kube-reference/perf/volumes.go`): each `volumes` line
//! carries the PersistentVolumes, PersistentVolumeClaims, StorageClasses, CSINodes,
//! CSIDrivers, VolumeAttachments and CSIStorageCapacities that are new or changed since the
//! last, and those that left. The replay hands them to tidegate's scheduler as its informers
//! would (add, update, delete events), so the attempt after the line reads the volume state
//! kube's attempt read.

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::storage::v1 as storage;
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::Arc;
use tidegate_engine::{ActionType, ApiObject, EventResource, Scheduler};

/// A `volumes` line's `volumes` field (`VolumeState` in `volumes.go`).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct VolumeLine {
    persistent_volumes: Vec<core::PersistentVolume>,
    persistent_volume_claims: Vec<core::PersistentVolumeClaim>,
    storage_classes: Vec<storage::StorageClass>,
    #[serde(rename = "csiNodes")]
    csi_nodes: Vec<storage::CSINode>,
    #[serde(rename = "csiDrivers")]
    csi_drivers: Vec<storage::CSIDriver>,
    volume_attachments: Vec<storage::VolumeAttachment>,
    #[serde(rename = "csiStorageCapacities")]
    csi_storage_capacities: Vec<storage::CSIStorageCapacity>,
    /// `kind/namespace/name`.
    deleted: Vec<String>,
}

/// The volume objects replayed so far, by `kind/namespace/name` (the `old` of the next
/// update).
#[derive(Default)]
pub(super) struct VolumeObjects {
    objects: HashMap<String, (EventResource, ApiObject)>,
}

fn key(kind: &str, m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
    format!(
        "{kind}/{}/{}",
        m.namespace.as_deref().unwrap_or(""),
        m.name.as_deref().unwrap_or("")
    )
}

impl VolumeObjects {
    pub(super) fn apply(&mut self, sched: &Scheduler, line: VolumeLine) {
        for o in line.storage_classes {
            self.put(
                sched,
                key("StorageClass", &o.metadata),
                EventResource::StorageClass,
                o,
            );
        }
        for o in line.csi_drivers {
            self.put(
                sched,
                key("CSIDriver", &o.metadata),
                EventResource::CSIDriver,
                o,
            );
        }
        for o in line.csi_nodes {
            self.put(
                sched,
                key("CSINode", &o.metadata),
                EventResource::CSINode,
                o,
            );
        }
        for o in line.persistent_volume_claims {
            let k = key("PersistentVolumeClaim", &o.metadata);
            self.put(sched, k, EventResource::PersistentVolumeClaim, o);
        }
        for o in line.persistent_volumes {
            let k = key("PersistentVolume", &o.metadata);
            self.put(sched, k, EventResource::PersistentVolume, o);
        }
        for o in line.volume_attachments {
            let k = key("VolumeAttachment", &o.metadata);
            self.put(sched, k, EventResource::VolumeAttachment, o);
        }
        for o in line.csi_storage_capacities {
            let k = key("CSIStorageCapacity", &o.metadata);
            self.put(sched, k, EventResource::CSIStorageCapacity, o);
        }
        for k in line.deleted {
            if let Some((resource, old)) = self.objects.remove(&k) {
                sched.on_object_event(resource, ActionType::DELETE, Some(old), None);
            }
        }
    }

    fn put<T: Send + Sync + 'static>(
        &mut self,
        sched: &Scheduler,
        key: String,
        resource: EventResource,
        obj: T,
    ) {
        // One object per event, as an informer hands it.
        let new = ApiObject(Arc::new(obj));
        match self.objects.insert(key, (resource, new.clone())) {
            Some((_, old)) => {
                sched.on_object_event(resource, ActionType::UPDATE, Some(old), Some(new))
            }
            None => sched.on_object_event(resource, ActionType::ADD, None, Some(new)),
        }
    }
}
