//! NodeVolumeLimits (kube's `CSILimits`): a node attaches at most its CSINode's
//! `allocatable.count` volumes of each CSI driver.
//! Source of behaviour: `pkg/scheduler/framework/plugins/nodevolumelimits/csi.go` (kube
//! v1.37.2; `docs/volumes/kube-volume-plugins.md` section 4).
//!
//! A volume is counted as `<driver>/<handle>`, once however many pods use it:
//! - a claim bound to a CSI volume: its driver and `volumeHandle`;
//! - a claim bound to an in-tree disk kube migrates (aws-ebs, gce-pd, azure-disk, cinder,
//!   portworx), on a node with a CSINode: the translated driver and handle
//!   ([`super::csi_translation`]);
//! - a claim not bound yet, or bound to a missing volume: its class's provisioner, with a
//!   handle of its own (`<prefix>-<namespace>/<claim>`);
//! - an inline in-tree disk kube migrates, on a node with a CSINode.
//!
//! Filter: the pod's new volumes (missing claim: UnschedulableAndUnresolvable); a driver
//! whose CSIDriver sets `preventPodSchedulingIfMissing` must be on the node's CSINode
//! (VolumeLimitScaling, on by default); then, per driver with a limit, the volumes of the
//! node's pods and its VolumeAttachments plus the new ones must not exceed it.
//!
//! The pod's own volumes do not depend on the node, only on whether it has a CSINode:
//! PreFilter works out both answers once per cycle, so Filter reads the listers only for the
//! node's pods and attachments, into a per-thread scratch list (no allocation per node).

use crate::api::csi_translation as csi;
use crate::api::volume::{CsiNode, PersistentVolumeClaim, PodVolumeSource, PvSource};
use crate::api::{Pod, Sym};
use crate::framework::Snapshot;
use crate::framework::cycle_state::CycleState;
use crate::framework::events::{
    ActionType, ClusterEvent, EventObject, EventResource, QueueingHint,
};
use crate::framework::interface::{
    EnqueueExtensions, FilterPlugin, Plugin, PreFilterPlugin, PreFilterResult,
};
use crate::framework::node_info::NodeInfo;
use crate::framework::status::{Code, Status};
use crate::framework::volume_listers::VolumeListers;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::storage::v1 as storage;
use std::cell::RefCell;
use std::sync::Arc;

pub(crate) const NAME: &str = "NodeVolumeLimits";
const STATE_KEY: &str = "PreFilterNodeVolumeLimits";
pub(crate) const ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED: &str = "node(s) exceed max volume count";

/// A volume's handle: a driver's own, or the provisional one of a claim not bound yet (kube
/// writes it `<32 random characters>-<namespace>/<claim>`, so that it never equals a real
/// handle; a variant of its own does the same).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Handle {
    Text(Arc<str>),
    Claim(Sym, Arc<str>),
}

/// A volume as kube's `<driver>/<handle>` (CSI driver names hold no `/`, so the pair is
/// equivalent to the joined text).
type Unique = (Sym, Handle);

/// Why a pod's volumes could not be read: a missing object gives UnschedulableAndUnresolvable
/// (`apierrors.IsNotFound`), anything else an Error.
#[derive(Clone, Debug)]
struct VolumeError {
    not_found: bool,
    message: String,
}

impl VolumeError {
    fn status(&self) -> Status {
        if self.not_found {
            Status::new(Code::UnschedulableAndUnresolvable, self.message.clone())
        } else {
            Status::error(self.message.clone())
        }
    }
}

/// The pod's new volumes on a node with a CSINode and on one without.
#[derive(Clone, Debug)]
struct State {
    with_csi_node: Result<Vec<Unique>, VolumeError>,
    without_csi_node: Result<Vec<Unique>, VolumeError>,
}

pub(crate) struct NodeVolumeLimits {
    volumes: Arc<VolumeListers>,
}

impl NodeVolumeLimits {
    pub(crate) fn new(volumes: Arc<VolumeListers>) -> NodeVolumeLimits {
        NodeVolumeLimits { volumes }
    }

    /// kube's `filterAttachableVolumes`: `pod`'s volumes into `out` (once each). For a pod
    /// already on the node (`new_pod` false) a missing claim is not counted.
    fn attachable(
        &self,
        pod: &Pod,
        csi_node: Option<&CsiNode>,
        new_pod: bool,
        out: &mut Vec<Unique>,
    ) -> Result<(), VolumeError> {
        let mut push = |u: Unique| {
            if !out.contains(&u) {
                out.push(u);
            }
        };
        for v in &pod.spec.volumes {
            let (claim_name, ephemeral): (std::borrow::Cow<str>, bool) = match &v.source {
                PodVolumeSource::Claim { claim_name, .. } => ((&**claim_name).into(), false),
                PodVolumeSource::Ephemeral => (format!("{}-{}", pod.name, v.name).into(), true),
                PodVolumeSource::Disk(d) => {
                    let Some(plugin) = csi::plugin_of(d) else {
                        continue;
                    };
                    if !csi::migration_on(csi_node, plugin) {
                        continue;
                    }
                    let handle = csi::volume_handle(d, None).map_err(|e| VolumeError {
                        not_found: false,
                        message: format!("converting volume({}) from inline to csi: {e}", v.name),
                    })?;
                    let driver = csi::csi_driver_of(plugin).unwrap_or_default();
                    push((Sym::new(driver), Handle::Text(handle)));
                    continue;
                }
                PodVolumeSource::Csi { .. } | PodVolumeSource::Other => continue,
            };
            if claim_name.is_empty() {
                return Err(VolumeError {
                    not_found: false,
                    message: "PersistentVolumeClaim had no name".into(),
                });
            }
            let Some(claim) = self.volumes.pvc(pod.namespace, &claim_name) else {
                if !new_pod {
                    continue;
                }
                return Err(VolumeError {
                    not_found: true,
                    message: format!(
                        "looking up PVC {}/{claim_name}: persistentvolumeclaim \"{claim_name}\" not found",
                        pod.namespace
                    ),
                });
            };
            if ephemeral && claim.controller_uid.as_deref() != Some(&*pod.uid) {
                return Err(VolumeError {
                    not_found: false,
                    message: format!(
                        "PVC {}/{} was not created for pod {}/{} (pod is not owner)",
                        pod.namespace, claim.name, pod.namespace, pod.name
                    ),
                });
            }
            if let Some(u) = self.driver_info(csi_node, &claim) {
                push(u);
            }
        }
        Ok(())
    }

    /// kube's `getCSIDriverInfo`: the driver and handle of a claim's volume.
    fn driver_info(
        &self,
        csi_node: Option<&CsiNode>,
        claim: &PersistentVolumeClaim,
    ) -> Option<Unique> {
        let pv = (!claim.volume.is_empty())
            .then(|| self.volumes.pv(claim.volume))
            .flatten();
        let Some(pv) = pv else {
            return self.driver_info_from_class(csi_node, claim);
        };
        match &pv.source {
            PvSource::Csi {
                driver,
                volume_handle,
            } => (!driver.is_empty() && !volume_handle.is_empty())
                .then(|| (*driver, Handle::Text(volume_handle.clone()))),
            PvSource::Disk(d) => {
                let plugin = csi::plugin_of(d)?;
                if !csi::migration_on(csi_node, plugin) {
                    return None;
                }
                // Translated once, when the volume was converted.
                let t = pv.csi.as_ref()?.as_ref().ok()?;
                Some((t.driver, Handle::Text(t.volume_handle.clone())))
            }
            PvSource::Other => None,
        }
    }

    /// kube's `getCSIDriverInfoFromSC`: an unbound claim counts under its class's provisioner.
    fn driver_info_from_class(
        &self,
        csi_node: Option<&CsiNode>,
        claim: &PersistentVolumeClaim,
    ) -> Option<Unique> {
        if claim.storage_class.is_empty() {
            return None;
        }
        let class = self.volumes.storage_class(&claim.storage_class)?;
        let handle = Handle::Claim(claim.namespace, claim.name.clone());
        let driver = match csi::csi_driver_of(&class.provisioner) {
            Some(d) if csi::migration_on(csi_node, &class.provisioner) => d,
            Some(_) => return None,
            None if class.provisioner.is_empty() => return None,
            None => &class.provisioner,
        };
        Some((Sym::new(driver), handle))
    }

    fn new_volumes(
        &self,
        pod: &Pod,
        csi_node: Option<&CsiNode>,
    ) -> Result<Vec<Unique>, VolumeError> {
        let mut v = Vec::new();
        self.attachable(pod, csi_node, true, &mut v).map(|()| v)
    }

    /// An upper bound of the volumes the node's pods and VolumeAttachments hold (each claim
    /// volume and attachment counts at most once), when reading them cannot fail: `None`
    /// when some pod's volume could give an error (kept per node by [`NodeInfo`]).
    fn attached_bound(&self, node: &NodeInfo) -> Option<usize> {
        (node.pods_with_unbounded_volumes == 0)
            .then(|| node.volume_claims as usize + self.volumes.attachment_count(node.name()))
    }

    /// VolumeLimitScaling: a driver that asks for it must be installed on the node.
    fn driver_missing(&self, new: &[Unique], csi_node: Option<&CsiNode>) -> Option<Sym> {
        new.iter().map(|(d, _)| *d).find(|&d| {
            let Some(driver) = self.volumes.csi_driver(d) else {
                return false;
            };
            driver.prevent_pod_scheduling_if_missing
                && !csi_node.is_some_and(|n| n.drivers.iter().any(|x| x.name == d))
        })
    }

    /// The node's VolumeAttachments of CSI volumes not already in `attached`, per attacher.
    fn attachments_into(&self, node: Sym, attached: &[Unique], extra: &mut Vec<Unique>) {
        self.volumes.with_attachments(node, |vas| {
            for va in vas {
                let Some(pv_name) = va.persistent_volume.filter(|_| !va.attacher.is_empty()) else {
                    continue;
                };
                let Some(pv) = self.volumes.pv(pv_name) else {
                    continue;
                };
                let PvSource::Csi { volume_handle, .. } = &pv.source else {
                    continue;
                };
                let u = (va.attacher, Handle::Text(volume_handle.clone()));
                if !attached.contains(&u) && !extra.contains(&u) {
                    extra.push(u);
                }
            }
        });
    }
}

thread_local! {
    /// Filter's scratch: the node's attached volumes, then its other attachments.
    static SCRATCH: RefCell<(Vec<Unique>, Vec<Unique>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// kube's `IsInlineMigratable` or a claim: what PreFilter looks for.
fn counted_kind(v: &PodVolumeSource) -> bool {
    match v {
        PodVolumeSource::Claim { .. } | PodVolumeSource::Ephemeral => true,
        PodVolumeSource::Disk(d) => csi::plugin_of(d).is_some(),
        PodVolumeSource::Csi { .. } | PodVolumeSource::Other => false,
    }
}

impl Plugin for NodeVolumeLimits {
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

impl PreFilterPlugin for NodeVolumeLimits {
    fn pre_filter(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        _: &Snapshot,
    ) -> (Option<PreFilterResult>, Status) {
        if pod.is_resize_deferred() || !pod.spec.volumes.iter().any(|v| counted_kind(&v.source)) {
            return (None, Status::skip());
        }
        // Only "is there a CSINode" matters to the pod's own volumes; any CSINode will do.
        let some_node = CsiNode {
            name: Sym::new(""),
            drivers: Vec::new(),
            migrated_plugins: Vec::new(),
        };
        state.write(
            STATE_KEY,
            State {
                with_csi_node: self.new_volumes(pod, Some(&some_node)),
                without_csi_node: self.new_volumes(pod, None),
            },
        );
        (None, Status::success())
    }
}

impl FilterPlugin for NodeVolumeLimits {
    fn filter(&self, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        if pod.is_resize_deferred() || pod.spec.volumes.is_empty() {
            return Status::success();
        }
        let csi_node = self.volumes.csi_node(node.name());
        let csi_node = csi_node.as_deref();
        let computed;
        let new = match state.read::<State>(STATE_KEY) {
            Some(s) if csi_node.is_some() => &s.with_csi_node,
            Some(s) => &s.without_csi_node,
            None => {
                computed = self.new_volumes(pod, csi_node);
                &computed
            }
        };
        let new = match new {
            Ok(v) if v.is_empty() => return Status::success(),
            Ok(v) => v.as_slice(),
            Err(e) => return e.status(),
        };
        if let Some(d) = self.driver_missing(new, csi_node) {
            return Status::new(
                Code::Unschedulable,
                format!("{d} CSI driver is not installed on the node"),
            );
        }
        let Some(csi_node) = csi_node.filter(|n| n.drivers.iter().any(|d| d.count.is_some()))
        else {
            return Status::success();
        };
        // Most nodes are far from their limits: when the node's pods and attachments cannot
        // hold more volumes than the limits leave room for, counting them exactly (lister
        // reads per volume) answers the same.
        if let Some(bound) = self.attached_bound(node) {
            let fits = csi_node.drivers.iter().all(|d| {
                let Some(limit) = d.count else { return true };
                let new = new.iter().filter(|u| u.0 == d.name).count();
                new + bound <= limit.max(0) as usize
            });
            if fits {
                return Status::success();
            }
        }
        SCRATCH.with_borrow_mut(|(attached, extra)| {
            attached.clear();
            extra.clear();
            for p in node.pods.iter() {
                if let Err(e) = self.attachable(p, Some(csi_node), false, attached) {
                    return Status::error(e.message);
                }
            }
            self.attachments_into(node.name(), attached, extra);
            for limited in csi_node.drivers.iter().filter(|d| d.count.is_some()) {
                let (driver, limit) = (limited.name, limited.count.unwrap_or(0) as usize);
                let fresh = new
                    .iter()
                    .filter(|u| u.0 == driver && !attached.contains(u))
                    .count();
                if fresh == 0 {
                    continue;
                }
                let in_use = attached
                    .iter()
                    .chain(extra.iter())
                    .filter(|u| u.0 == driver)
                    .count();
                if in_use + fresh > limit {
                    return Status::new(Code::Unschedulable, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED);
                }
            }
            Status::success()
        })
    }
}

fn claim_names(pod: &Pod) -> impl Iterator<Item = std::borrow::Cow<'_, str>> {
    pod.spec
        .volumes
        .iter()
        .filter_map(move |v| match &v.source {
            PodVolumeSource::Claim { claim_name, .. } => Some((&**claim_name).into()),
            PodVolumeSource::Ephemeral => Some(format!("{}-{}", pod.name, v.name).into()),
            _ => None,
        })
}

fn object<T: 'static>(o: &EventObject) -> Option<&T> {
    match o {
        EventObject::Object(o) => o.downcast_ref::<T>(),
        _ => None,
    }
}

/// A CSINode's `allocatable.count` per driver (absent: 0).
fn count_of(n: &storage::CSINode, driver: &str) -> i32 {
    n.spec
        .drivers
        .iter()
        .find(|d| d.name == driver)
        .and_then(|d| d.allocatable.as_ref()?.count)
        .unwrap_or(0)
}

impl EnqueueExtensions for NodeVolumeLimits {
    /// kube's `isSchedulableAfterCSINodeUpdated`, `isSchedulableAfterAssignedPodDeleted`,
    /// `isSchedulableAfterPVCAdded` and `isSchedulableAfterVolumeAttachmentDeleted`.
    fn queueing_hint(
        &self,
        event: &ClusterEvent,
        pod: &Pod,
        old: &EventObject,
        new: &EventObject,
    ) -> Result<QueueingHint, String> {
        let unexpected = || format!("unexpected objects in {event:?}");
        match event.resource {
            EventResource::CSINode if event.action.0 & ActionType::UPDATE.0 != 0 => {
                let (Some(o), Some(n)) = (
                    object::<storage::CSINode>(old),
                    object::<storage::CSINode>(new),
                ) else {
                    return Err(unexpected());
                };
                let raised = n.spec.drivers.iter().any(|d| {
                    d.allocatable.as_ref().and_then(|a| a.count).unwrap_or(0) > count_of(o, &d.name)
                });
                Ok(QueueingHint::queue_if(raised))
            }
            EventResource::AssignedPod => {
                let EventObject::Pod(deleted) = old else {
                    return Err(unexpected());
                };
                let placed = deleted.node_name.is_some() || deleted.nominated_node_name.is_some();
                Ok(QueueingHint::queue_if(
                    placed && deleted.spec.volumes.iter().any(|v| counted_kind(&v.source)),
                ))
            }
            EventResource::PersistentVolumeClaim => {
                let Some(c) = object::<core::PersistentVolumeClaim>(new) else {
                    return Err(unexpected());
                };
                let same_ns =
                    c.metadata.namespace.as_deref() == Some(pod.namespace.as_arc().as_ref());
                let name = c.metadata.name.as_deref().unwrap_or("");
                Ok(QueueingHint::queue_if(
                    same_ns && claim_names(pod).any(|x| x == name),
                ))
            }
            EventResource::VolumeAttachment => {
                let Some(va) = object::<storage::VolumeAttachment>(old) else {
                    return Err(unexpected());
                };
                let helps = pod.spec.volumes.iter().any(|v| match &v.source {
                    PodVolumeSource::Claim { .. } => true,
                    PodVolumeSource::Disk(d) => csi::plugin_of(d)
                        .and_then(csi::csi_driver_of)
                        .is_some_and(|driver| driver == va.spec.attacher),
                    _ => false,
                });
                Ok(QueueingHint::queue_if(helps))
            }
            _ => Ok(QueueingHint::Queue),
        }
    }

    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![
            ClusterEvent::new(EventResource::CSINode, ActionType::ADD),
            ClusterEvent::new(EventResource::CSINode, ActionType::UPDATE),
            ClusterEvent::new(EventResource::AssignedPod, ActionType::DELETE),
            ClusterEvent::new(EventResource::PersistentVolumeClaim, ActionType::ADD),
            ClusterEvent::new(EventResource::VolumeAttachment, ActionType::DELETE),
        ]
    }
}

#[cfg(test)]
#[path = "node_volume_limits_tests.rs"]
mod tests;
