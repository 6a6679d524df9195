//! The DRA state of a record (`kube-reference/perf/dra.go`): each `dra` line carries the
//! DeviceClasses, ResourceSlices and ResourceClaims that are new or changed since the last,
//! those that left, and (when it changed) the set of in-flight allocations. The replay hands
//! them to tidegate's scheduler as its informers would (add, update, delete events), and sets
//! its in-flight allocations to kube's, so the attempt after the line sees the DRA state
//! kube's attempt saw.

use k8s_openapi::api::resource::v1 as k;
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::Arc;
use tidegate_engine::{ActionType, ApiObject, EventResource, Scheduler};

/// A `dra` line's `dra` field (`DRAState` in `dra.go`).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct DraLine {
    device_classes: Vec<k::DeviceClass>,
    resource_slices: Vec<k::ResourceSlice>,
    resource_claims: Vec<k::ResourceClaim>,
    /// `kind/namespace/name`.
    deleted: Vec<String>,
    pending: Vec<Pending>,
    pending_set: bool,
}

#[derive(Debug, Deserialize)]
struct Pending {
    /// `namespace/name`.
    claim: String,
    allocation: k::AllocationResult,
}

/// The DRA objects replayed so far, by `kind/namespace/name` (the `old` of the next update),
/// and each claim's UID by `namespace/name`.
#[derive(Default)]
pub(super) struct DraObjects {
    objects: HashMap<String, (EventResource, ApiObject)>,
    claim_uids: HashMap<String, String>,
    /// Objects replayed (the report counts them).
    pub(super) applied: usize,
}

impl DraObjects {
    pub(super) fn apply(&mut self, sched: &Scheduler, line: DraLine) -> Result<(), String> {
        for c in line.device_classes {
            let key = format!("DeviceClass//{}", c.metadata.name.as_deref().unwrap_or(""));
            self.put(sched, key, EventResource::DeviceClass, Arc::new(c));
        }
        for s in line.resource_slices {
            let key = format!(
                "ResourceSlice//{}",
                s.metadata.name.as_deref().unwrap_or("")
            );
            self.put(sched, key, EventResource::ResourceSlice, Arc::new(s));
        }
        for c in line.resource_claims {
            let nn = format!(
                "{}/{}",
                c.metadata.namespace.as_deref().unwrap_or(""),
                c.metadata.name.as_deref().unwrap_or("")
            );
            self.claim_uids
                .insert(nn.clone(), c.metadata.uid.clone().unwrap_or_default());
            self.put(
                sched,
                format!("ResourceClaim/{nn}"),
                EventResource::ResourceClaim,
                Arc::new(c),
            );
        }
        for key in line.deleted {
            if let Some((resource, old)) = self.objects.remove(&key) {
                sched.on_object_event(resource, ActionType::DELETE, Some(old), None);
            }
            if let Some(nn) = key.strip_prefix("ResourceClaim/") {
                self.claim_uids.remove(nn);
            }
        }
        if line.pending_set {
            let mut pending = Vec::with_capacity(line.pending.len());
            for p in line.pending {
                let uid = self
                    .claim_uids
                    .get(&p.claim)
                    .ok_or_else(|| format!("in-flight allocation of unknown claim {}", p.claim))?;
                pending.push((uid.clone(), p.allocation));
            }
            sched.replace_pending_claim_allocations(&pending)?;
        }
        Ok(())
    }

    fn put<T: Send + Sync + 'static>(
        &mut self,
        sched: &Scheduler,
        key: String,
        resource: EventResource,
        obj: Arc<T>,
    ) {
        self.applied += 1;
        let new = ApiObject(obj);
        match self.objects.insert(key, (resource, new.clone())) {
            None => sched.on_object_event(resource, ActionType::ADD, None, Some(new)),
            Some((_, old)) => {
                sched.on_object_event(resource, ActionType::UPDATE, Some(old), Some(new))
            }
        }
    }
}
