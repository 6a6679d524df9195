//! VolumeRestrictions: a pod's in-tree disks must not clash with those of the pods on the
//! node, and a ReadWriteOncePod claim must not be in use by another pod.
//! Source of behaviour: `pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions.go`
//! (kube v1.37.2; `docs/volumes/kube-volume-plugins.md` section 5).
//!
//! - PreFilter: each `persistentVolumeClaim` volume's claim must exist (else
//!   UnschedulableAndUnresolvable with the lister's `persistentvolumeclaim "<name>" not found`);
//!   the pod's ReadWriteOncePod claims are counted where assigned pods use them. No in-tree
//!   disk to compare and no claim in use: Skip.
//! - AddPod/RemovePod: the count follows a pod added or removed (by claim name, as kube).
//! - Filter: a disk conflict with a pod on the node (GCE PD, AWS EBS, RBD, ISCSI) rejects the
//!   node; a claim in use rejects every node.

use crate::api::Pod;
use crate::api::volume::{AccessModes, InTreeDisk, PodVolumeSource};
use crate::framework::Snapshot;
use crate::framework::cycle_state::CycleState;
use crate::framework::events::{
    ActionType, ClusterEvent, EventObject, EventResource, QueueingHint,
};
use crate::framework::interface::{
    EnqueueExtensions, FilterPlugin, Plugin, PreFilterExtensions, PreFilterPlugin, PreFilterResult,
};
use crate::framework::node_info::NodeInfo;
use crate::framework::status::{Code, Status};
use crate::framework::volume_listers::VolumeListers;
use ahash::AHashSet;
use k8s_openapi::api::core::v1 as core;
use std::sync::Arc;

pub(crate) const NAME: &str = "VolumeRestrictions";
const STATE_KEY: &str = "PreFilterVolumeRestrictions";
pub(crate) const ERR_REASON_DISK_CONFLICT: &str = "node(s) had no available disk";
pub(crate) const ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT: &str = "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod";

pub(crate) struct VolumeRestrictions {
    volumes: Arc<VolumeListers>,
}

impl VolumeRestrictions {
    pub(crate) fn new(volumes: Arc<VolumeListers>) -> VolumeRestrictions {
        VolumeRestrictions { volumes }
    }
}

/// The cycle's state: the names of the pod's ReadWriteOncePod claims and how many of them
/// pods use (kube's `preFilterState`).
#[derive(Clone, Debug, Default)]
struct State {
    read_write_once_pod: AHashSet<Arc<str>>,
    conflicting: i64,
}

impl State {
    /// How many of `other`'s claims are among the pod's ReadWriteOncePod claims (by name).
    fn uses(&self, other: &Pod) -> i64 {
        claims(other)
            .filter(|c| self.read_write_once_pod.contains(*c))
            .count() as i64
    }
}

fn claims(pod: &Pod) -> impl Iterator<Item = &Arc<str>> {
    pod.spec.volumes.iter().filter_map(|v| match &v.source {
        PodVolumeSource::Claim { claim_name, .. } => Some(claim_name),
        _ => None,
    })
}

/// The in-tree disks kube compares (`needsRestrictionsCheck`).
fn checked_disks(pod: &Pod) -> impl Iterator<Item = &InTreeDisk> {
    pod.spec.volumes.iter().filter_map(|v| match &v.source {
        PodVolumeSource::Disk(
            d @ (InTreeDisk::GcePersistentDisk { .. }
            | InTreeDisk::AwsElasticBlockStore { .. }
            | InTreeDisk::Rbd { .. }
            | InTreeDisk::Iscsi { .. }),
        ) => Some(d),
        _ => None,
    })
}

/// kube's `isVolumeConflict`: the two disks are the same and at least one writes (EBS: the
/// same volume, read-only or not).
fn conflict(a: &InTreeDisk, b: &InTreeDisk) -> bool {
    use InTreeDisk as D;
    match (a, b) {
        (
            D::GcePersistentDisk {
                pd_name: x,
                read_only: rx,
            },
            D::GcePersistentDisk {
                pd_name: y,
                read_only: ry,
            },
        ) => x == y && !(*rx && *ry),
        (
            D::AwsElasticBlockStore { volume_id: x, .. },
            D::AwsElasticBlockStore { volume_id: y, .. },
        ) => x == y,
        (
            D::Iscsi {
                iqn: x,
                read_only: rx,
            },
            D::Iscsi {
                iqn: y,
                read_only: ry,
            },
        ) => x == y && !(*rx && *ry),
        (
            D::Rbd {
                monitors: mx,
                pool: px,
                image: ix,
                read_only: rx,
            },
            D::Rbd {
                monitors: my,
                pool: py,
                image: iy,
                read_only: ry,
            },
        ) => mx.iter().any(|m| my.contains(m)) && px == py && ix == iy && !(*rx && *ry),
        _ => false,
    }
}

/// Whether any of `pod`'s checked disks clashes with one of `other`'s volumes.
fn disk_conflict(pod: &Pod, other: &Pod) -> bool {
    checked_disks(pod).any(|d| {
        other.spec.volumes.iter().any(|v| match &v.source {
            PodVolumeSource::Disk(o) => conflict(d, o),
            _ => false,
        })
    })
}

impl Plugin for VolumeRestrictions {
    /// kube's `SignPod`: the pod's volume sources other than ConfigMap and Secret.
    fn signs_pods(&self) -> bool {
        true
    }
    fn sign_pod(
        &self,
        pod: &Pod,
        sig: &mut crate::framework::signature::SignFragments,
    ) -> Result<(), &'static str> {
        use crate::framework::signature::{self, signer};
        sig.put(signer::VOLUMES, || signature::volumes(pod));
        Ok(())
    }
    fn name(&self) -> &'static str {
        NAME
    }
    fn into_pre_filter(self: Arc<Self>) -> Option<Arc<dyn PreFilterPlugin>> {
        Some(self)
    }
    fn into_filter(self: Arc<Self>) -> Option<Arc<dyn FilterPlugin>> {
        Some(self)
    }
    fn into_enqueue_extensions(self: Arc<Self>) -> Option<Arc<dyn EnqueueExtensions>> {
        Some(self)
    }
}

impl PreFilterPlugin for VolumeRestrictions {
    fn pre_filter(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        snapshot: &Snapshot,
    ) -> (Option<PreFilterResult>, Status) {
        if pod.is_resize_deferred() {
            return (None, Status::skip());
        }
        let needs_check = checked_disks(pod).next().is_some();
        let mut s = State::default();
        for name in claims(pod) {
            let Some(claim) = self.volumes.pvc(pod.namespace, name) else {
                return (
                    None,
                    Status::new(
                        Code::UnschedulableAndUnresolvable,
                        format!("persistentvolumeclaim \"{name}\" not found"),
                    ),
                );
            };
            if claim
                .access_modes
                .contains(AccessModes::READ_WRITE_ONCE_POD)
            {
                s.read_write_once_pod.insert(name.clone());
            }
        }
        // kube's snapshot counts each `namespace/claim` its assigned pods use.
        s.conflicting = s
            .read_write_once_pod
            .iter()
            .filter(|c| {
                snapshot.nodes.iter().any(|n| {
                    n.pods
                        .iter()
                        .any(|p| p.namespace == pod.namespace && claims(p).any(|x| x == *c))
                })
            })
            .count() as i64;
        if !needs_check && s.conflicting == 0 {
            return (None, Status::skip());
        }
        state.write(STATE_KEY, s);
        (None, Status::success())
    }

    fn pre_filter_extensions(&self) -> Option<&dyn PreFilterExtensions> {
        Some(self)
    }
}

impl PreFilterExtensions for VolumeRestrictions {
    fn add_pod(&self, state: &mut CycleState, _: &Pod, to_add: &Pod, _: &NodeInfo) -> Status {
        match state.read_mut::<State>(STATE_KEY) {
            Some(s) => {
                s.conflicting += s.uses(to_add);
                Status::success()
            }
            None => Status::error(format!("cannot read {STATE_KEY:?} from cycleState")),
        }
    }

    fn remove_pod(&self, state: &mut CycleState, _: &Pod, to_remove: &Pod, _: &NodeInfo) -> Status {
        match state.read_mut::<State>(STATE_KEY) {
            Some(s) => {
                s.conflicting -= s.uses(to_remove);
                Status::success()
            }
            None => Status::error(format!("cannot read {STATE_KEY:?} from cycleState")),
        }
    }
}

impl FilterPlugin for VolumeRestrictions {
    fn filter(&self, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        if pod.is_resize_deferred() {
            return Status::success();
        }
        if node.pods.iter().any(|p| disk_conflict(pod, p)) {
            return Status::new(Code::Unschedulable, ERR_REASON_DISK_CONFLICT);
        }
        match state.read::<State>(STATE_KEY) {
            None => Status::error(format!("cannot read {STATE_KEY:?} from cycleState")),
            Some(s) if s.conflicting > 0 => {
                Status::new(Code::Unschedulable, ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)
            }
            Some(_) => Status::success(),
        }
    }
}

impl EnqueueExtensions for VolumeRestrictions {
    /// kube's `isSchedulableAfterAssignedPodDeleted` and
    /// `isSchedulableAfterPersistentVolumeClaimAdded`; a node added always queues.
    fn queueing_hint(
        &self,
        event: &ClusterEvent,
        pod: &Pod,
        old: &EventObject,
        new: &EventObject,
    ) -> Result<QueueingHint, String> {
        match event.resource {
            EventResource::AssignedPod => {
                let EventObject::Pod(deleted) = old else {
                    return Ok(QueueingHint::Queue);
                };
                if deleted.namespace != pod.namespace {
                    return Ok(QueueingHint::QueueSkip);
                }
                let shares_claim = claims(deleted).any(|c| claims(pod).any(|x| x == c));
                Ok(QueueingHint::queue_if(
                    disk_conflict(pod, deleted) || shares_claim,
                ))
            }
            EventResource::PersistentVolumeClaim => {
                let added = match new {
                    EventObject::Object(o) => o.downcast_ref::<core::PersistentVolumeClaim>(),
                    _ => None,
                };
                let Some(c) = added else {
                    return Err(format!("unexpected objects in {event:?}"));
                };
                let same_ns = (c.metadata.namespace.as_deref()).and_then(crate::api::Sym::lookup)
                    == Some(pod.namespace);
                let name = c.metadata.name.as_deref().unwrap_or("");
                Ok(QueueingHint::queue_if(
                    same_ns && claims(pod).any(|x| &**x == name),
                ))
            }
            _ => Ok(QueueingHint::Queue),
        }
    }

    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![
            ClusterEvent::new(EventResource::AssignedPod, ActionType::DELETE),
            ClusterEvent::new(EventResource::Node, ActionType::ADD),
            ClusterEvent::new(EventResource::PersistentVolumeClaim, ActionType::ADD),
        ]
    }
}

#[cfg(test)]
#[path = "volume_restrictions_tests.rs"]
mod tests;
