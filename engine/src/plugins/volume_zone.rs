//! VolumeZone: the zone and region labels of a pod's bound PersistentVolumes must match the
//! node's.
//! Source of behaviour: `pkg/scheduler/framework/plugins/volumezone/volume_zone.go` (kube
//! v1.37.2; `docs/volumes/kube-volume-plugins.md` section 6).
//!
//! - PreFilter: for each `persistentVolumeClaim` volume, in order: the claim must exist; an
//!   unbound claim of a WaitForFirstConsumer class is left for VolumeBinding; any other
//!   unbound claim rejects the pod; the bound volume must exist, and its zone and region
//!   labels (`__`-separated sets; a label with an empty piece is ignored) are recorded. None
//!   recorded: Skip.
//! - Filter: a node with none of the four topology labels fits (a single-zone cluster);
//!   otherwise each recorded label must be on the node (a beta key may match the node's GA
//!   key, not the reverse) with a value in the volume's set.

use crate::api::volume::{PersistentVolume, PodVolumeSource, VolumeBindingMode};
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
use std::collections::BTreeSet;
use std::sync::Arc;

pub(crate) const NAME: &str = "VolumeZone";
const STATE_KEY: &str = "PreFilterVolumeZone";
pub(crate) const ERR_REASON_CONFLICT: &str = "node(s) had no available volume zone";

/// kube's `topologyLabels`, in its order.
const TOPOLOGY_LABELS: [&str; 4] = [
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
];

/// kube's `translateToGALabel`.
fn to_ga(key: &str) -> &str {
    match key {
        "failure-domain.beta.kubernetes.io/region" => "topology.kubernetes.io/region",
        "failure-domain.beta.kubernetes.io/zone" => "topology.kubernetes.io/zone",
        other => other,
    }
}

/// One topology label of a volume (kube's `pvTopology`): interned, so that Filter compares
/// symbols on each node.
#[derive(Clone, Debug, PartialEq, Eq)]
struct PvTopology {
    key: Sym,
    /// `key` translated to its GA label (kube's `translateToGALabel`).
    ga_key: Sym,
    values: BTreeSet<Sym>,
}

/// [`TOPOLOGY_LABELS`] interned.
static TOPOLOGY_SYMS: std::sync::LazyLock<[Sym; 4]> =
    std::sync::LazyLock::new(|| TOPOLOGY_LABELS.map(Sym::new));

/// kube's `LabelZonesToSet`: `__`-separated, trimmed; an empty piece refuses the value.
fn zones(value: &str) -> Option<BTreeSet<Sym>> {
    value
        .split("__")
        .map(|z| {
            let z = z.trim();
            (!z.is_empty()).then(|| Sym::new(z))
        })
        .collect()
}

/// kube's `getPVTopologies`, over a volume's labels.
fn topologies(label: impl Fn(&str) -> Option<String>) -> Vec<PvTopology> {
    TOPOLOGY_LABELS
        .iter()
        .filter_map(|&key| {
            let values = zones(&label(key)?)?;
            Some(PvTopology {
                key: Sym::new(key),
                ga_key: Sym::new(to_ga(key)),
                values,
            })
        })
        .collect()
}

fn pv_topologies(pv: &PersistentVolume) -> Vec<PvTopology> {
    topologies(|k| pv.labels.get(Sym::new(k)).map(|v| v.as_arc().to_string()))
}

fn api_pv_topologies(pv: &core::PersistentVolume) -> Vec<PvTopology> {
    topologies(|k| pv.metadata.labels.as_ref().and_then(|l| l.get(k)).cloned())
}

#[derive(Clone, Debug, Default)]
struct State {
    topologies: Vec<PvTopology>,
}

pub(crate) struct VolumeZone {
    volumes: Arc<VolumeListers>,
}

impl VolumeZone {
    pub(crate) fn new(volumes: Arc<VolumeListers>) -> VolumeZone {
        VolumeZone { volumes }
    }

    /// A constant reason is borrowed, not copied: Filter rejects many nodes with one.
    fn unresolvable(msg: impl Into<std::borrow::Cow<'static, str>>) -> Status {
        Status::new(Code::UnschedulableAndUnresolvable, msg)
    }

    /// kube's `getPVbyPod`.
    fn pod_topologies(&self, pod: &Pod) -> Result<Vec<PvTopology>, Status> {
        let mut out = Vec::new();
        for v in &pod.spec.volumes {
            let PodVolumeSource::Claim { claim_name, .. } = &v.source else {
                continue;
            };
            if claim_name.is_empty() {
                return Err(Self::unresolvable("PersistentVolumeClaim had no name"));
            }
            let claim = self.volumes.pvc(pod.namespace, claim_name).ok_or_else(|| {
                Self::unresolvable(format!("persistentvolumeclaim \"{claim_name}\" not found"))
            })?;
            if claim.volume_name.is_empty() {
                let class = &claim.storage_class;
                if class.is_empty() {
                    return Err(Self::unresolvable(
                        "PersistentVolumeClaim had no pv name and storageClass name",
                    ));
                }
                let sc = self.volumes.storage_class(class).ok_or_else(|| {
                    Self::unresolvable(format!("storageclass.storage.k8s.io \"{class}\" not found"))
                })?;
                match sc.binding_mode {
                    None => {
                        return Err(Self::unresolvable(format!(
                            "VolumeBindingMode not set for StorageClass \"{class}\""
                        )));
                    }
                    Some(VolumeBindingMode::WaitForFirstConsumer) => continue,
                    Some(VolumeBindingMode::Immediate) => {
                        return Err(Self::unresolvable("PersistentVolume had no name"));
                    }
                }
            }
            let pv = self
                .volumes
                .pv(Sym::new(&claim.volume_name))
                .ok_or_else(|| {
                    Self::unresolvable(format!(
                        "persistentvolume \"{}\" not found",
                        claim.volume_name
                    ))
                })?;
            out.extend(pv_topologies(&pv));
        }
        Ok(out)
    }
}

impl Plugin for VolumeZone {
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

impl PreFilterPlugin for VolumeZone {
    fn pre_filter(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        _: &Snapshot,
    ) -> (Option<PreFilterResult>, Status) {
        if pod.is_resize_deferred() {
            return (None, Status::skip());
        }
        match self.pod_topologies(pod) {
            Err(s) => (None, s),
            Ok(t) if t.is_empty() => (None, Status::skip()),
            Ok(topologies) => {
                state.write(STATE_KEY, State { topologies });
                (None, Status::success())
            }
        }
    }
}

impl FilterPlugin for VolumeZone {
    fn filter(&self, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        if pod.is_resize_deferred() || pod.spec.volumes.is_empty() {
            return Status::success();
        }
        let computed;
        let topologies = match state.read::<State>(STATE_KEY) {
            Some(s) => &s.topologies,
            None => match self.pod_topologies(pod) {
                Ok(t) => {
                    computed = t;
                    &computed
                }
                Err(s) => return s,
            },
        };
        let labels = &node.node.labels;
        if !TOPOLOGY_SYMS.iter().any(|k| labels.has(*k)) {
            return Status::success();
        }
        for t in topologies {
            let v = labels.get(t.key).or_else(|| labels.get(t.ga_key));
            if !v.is_some_and(|v| t.values.contains(&v)) {
                return Self::unresolvable(ERR_REASON_CONFLICT);
            }
        }
        Status::success()
    }
}

impl EnqueueExtensions for VolumeZone {
    fn queueing_hint(
        &self,
        event: &ClusterEvent,
        pod: &Pod,
        old: &EventObject,
        new: &EventObject,
    ) -> Result<QueueingHint, String> {
        let obj = |o: &EventObject| match o {
            EventObject::Object(a) => Some(a.clone()),
            _ => None,
        };
        let unexpected = || format!("unexpected objects in {event:?}");
        match event.resource {
            EventResource::StorageClass => {
                let new = obj(new).ok_or_else(unexpected)?;
                let sc = new
                    .downcast_ref::<storage::StorageClass>()
                    .ok_or_else(unexpected)?;
                Ok(QueueingHint::queue_if(
                    sc.volume_binding_mode.as_deref() == Some("WaitForFirstConsumer"),
                ))
            }
            EventResource::PersistentVolumeClaim => {
                let new = obj(new).ok_or_else(unexpected)?;
                let c = new
                    .downcast_ref::<core::PersistentVolumeClaim>()
                    .ok_or_else(unexpected)?;
                let same_ns =
                    (c.metadata.namespace.as_deref()).and_then(Sym::lookup) == Some(pod.namespace);
                let name = c.metadata.name.as_deref().unwrap_or("");
                let named = pod.spec.volumes.iter().any(|v| {
                    matches!(&v.source, PodVolumeSource::Claim { claim_name, .. } if &**claim_name == name)
                });
                Ok(QueueingHint::queue_if(same_ns && named))
            }
            EventResource::PersistentVolume => {
                let Some(old) = obj(old) else {
                    return Ok(QueueingHint::Queue);
                };
                let new = obj(new).ok_or_else(unexpected)?;
                let (o, n) = (
                    old.downcast_ref::<core::PersistentVolume>()
                        .ok_or_else(unexpected)?,
                    new.downcast_ref::<core::PersistentVolume>()
                        .ok_or_else(unexpected)?,
                );
                Ok(QueueingHint::queue_if(
                    api_pv_topologies(o) != api_pv_topologies(n),
                ))
            }
            _ => Ok(QueueingHint::Queue),
        }
    }

    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![
            ClusterEvent::new(EventResource::StorageClass, ActionType::ADD),
            ClusterEvent::new(
                EventResource::Node,
                ActionType(ActionType::ADD.0 | ActionType::UPDATE_NODE_LABEL.0),
            ),
            ClusterEvent::new(
                EventResource::PersistentVolumeClaim,
                ActionType(ActionType::ADD.0 | ActionType::UPDATE.0),
            ),
            ClusterEvent::new(
                EventResource::PersistentVolume,
                ActionType(ActionType::ADD.0 | ActionType::UPDATE.0),
            ),
        ]
    }
}

#[cfg(test)]
#[path = "volume_zone_tests.rs"]
mod tests;
