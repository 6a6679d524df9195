//! The volume state of a record (`kube-reference/perf/volumes.go`): each `volumes` line
//! carries the PersistentVolumes, PersistentVolumeClaims, StorageClasses, CSINodes,
//! CSIDrivers, VolumeAttachments and CSIStorageCapacities that are new or changed since the
//! last, and those that left. The replay hands them to tidegate's scheduler as its informers
//! would (add, update, delete events), so the attempt after the line reads the volume state
//! kube's attempt read.
//!
//! Between those lines the replay follows kube's VolumeBinding Reserve of each pod kube
//! placed (the assume cache holds the matches until the API shows the bindings), and, for a
//! pod-group member kube placed and later undid (`reverted`), its Unreserve with the cycle
//! state that Reserve left, as kube's undo runs it.
//!
//! kube's Reserve picks the smallest volume that fits a claim, and among equally small ones
//! whichever its map lists first: a pick tidegate cannot predict. When a line shows the API
//! bound a volume to a claim for which tidegate's Reserve assumed another, the replay follows
//! kube's pick ([`Scheduler::follow_volume_binding`]), so the next attempt sees the volumes
//! kube's cache held.

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::storage::v1 as storage;
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::Arc;
use tidegate_engine::api::{Pod, Sym};
use tidegate_engine::{ActionType, ApiObject, CycleState, EventResource, Scheduler};

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
    /// Pod-group members kube placed, by namespace/name: the node and the cycle state of
    /// their VolumeBinding Reserve, until kube binds them (`assigned`) or undoes the
    /// placement (`reverted`).
    reserved: HashMap<String, (Sym, CycleState)>,
    /// The same for placements kube undid, until the pod's next decision or its group's
    /// `podGroup` line: kube commits the chosen placement by running Reserve again on the
    /// state its evaluation left.
    undone: HashMap<String, (Sym, CycleState)>,
}

fn key(kind: &str, m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
    format!(
        "{kind}/{}/{}",
        m.namespace.as_deref().unwrap_or(""),
        m.name.as_deref().unwrap_or("")
    )
}

impl VolumeObjects {
    /// Hands the line's objects to the scheduler. Returns, for each volume the API now shows
    /// bound where tidegate's Reserve had assumed another one for that claim, what was
    /// followed ([`Scheduler::follow_volume_binding`]: kube picks among equally small
    /// volumes at random).
    pub(super) fn apply(&mut self, sched: &Scheduler, line: VolumeLine) -> Vec<String> {
        let bound: Vec<(String, String)> = line
            .persistent_volumes
            .iter()
            .filter_map(|pv| {
                let c = pv.spec.as_ref()?.claim_ref.as_ref()?;
                Some((
                    pv.metadata.name.clone()?,
                    format!(
                        "{}/{}",
                        c.namespace.as_deref().unwrap_or(""),
                        c.name.as_deref().unwrap_or("")
                    ),
                ))
            })
            .collect();
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
        let mut followed = Vec::new();
        for (pv, claim) in bound {
            for other in sched.follow_volume_binding(&pv) {
                followed.push(format!(
                    "kube's Reserve bound {pv} to {claim}; tidegate's had assumed {other} for it, as small (kube's pick among equals is random): followed kube's"
                ));
            }
        }
        followed
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

    /// kube placed `pod` (`key`) on `node`: VolumeBinding's Reserve there, as kube's; `state`
    /// is the cycle state a pod-group member's own Reserve left (that Reserve ran
    /// VolumeBinding's already). A member's state is kept for its undo.
    pub(super) fn reserve(
        &mut self,
        sched: &Scheduler,
        key: &str,
        pod: &Pod,
        node: Sym,
        member: bool,
        state: Option<CycleState>,
    ) {
        let state = match state {
            Some(s) => s,
            // A non-success leaves nothing assumed: the judge has said where tidegate's
            // Filter rejects kube's node.
            None => sched.reserve_volumes(pod, node).1,
        };
        self.undone.remove(key);
        if member {
            self.reserved.insert(key.to_string(), (node, state));
        }
    }

    /// kube undid `pod`'s placement (a `reverted` line): VolumeBinding's Unreserve with what
    /// its Reserve kept, so the volumes it assumed are the API's again.
    pub(super) fn unreserve(&mut self, sched: &Scheduler, key: &str, pod: &Pod) {
        if let Some((node, mut state)) = self.reserved.remove(key) {
            sched.unreserve_volumes(pod, node, &mut state);
            self.undone.insert(key.to_string(), (node, state));
        }
    }

    /// The cycle state of kube's undone placement of `key` on `node`, for its commit
    /// ([`Scheduler::fits_member`]).
    pub(super) fn undone_on(&mut self, key: &str, node: Sym) -> Option<CycleState> {
        match self.undone.remove(key) {
            Some((n, state)) if n == node => Some(state),
            _ => None,
        }
    }

    /// kube bound or deleted the pod `key`: nothing of its Reserve is undone any more.
    /// (A group's members are bound before its `podGroup` line: what was undone stays
    /// for that line.)
    pub(super) fn settled(&mut self, key: &str) {
        self.reserved.remove(key);
    }

    /// The pod `key` is gone: nothing of it is kept.
    pub(super) fn forget(&mut self, key: &str) {
        self.reserved.remove(key);
        self.undone.remove(key);
    }
}
