//! VolumeBinding: a pod's claims must be bound to volumes its node can reach, or bindable
//! there, by matching an existing volume or by provisioning one (WaitForFirstConsumer).
//! Source of behaviour: `pkg/scheduler/framework/plugins/volumebinding/volume_binding.go`
//! (kube v1.37.2; `docs/volumes/kube-volume-plugins.md` sections 2 and 3).
//!
//! - PreFilter: every claim must exist, not be lost or being deleted (an ephemeral volume's
//!   claim must be the pod's); no claim: Skip. A claim not bound and not waiting for its
//!   first consumer rejects the pod ("pod has unbound immediate PersistentVolumeClaims").
//! - Filter: a bound claim's volume must exist and its node affinity (translated to CSI
//!   where the node's CSINode names the in-tree plugin as migrated) must match the node; an
//!   unbound claim needs a matching volume or a provisioner that reaches the node
//!   ([`binder`]). What binding would take on the node is kept for Score, Reserve and PreBind
//!   (only for pods with unbound claims: for the rest it is empty on every node).
//! - PreScore/Score (StorageCapacityScoring, on by default in v1.37): nodes where the pod's
//!   volumes would fill less of the capacity score higher (kube's default shape: 100 minus
//!   utilization); 0 where nothing is to bind.
//! - Reserve assumes the bindings (the [`assume`] caches); Unreserve reverts them; PreBind
//!   writes them (the volume's `claimRef`, the claim's selected node) and checks that the
//!   claims got bound. Nothing in the harness provisions volumes (scheduler_perf runs only a
//!   fake PV controller that completes static bindings), so a provisioned claim's PreBind
//!   fails at once with kube's timeout text where kube would wait for `bindTimeoutSeconds`.

mod assume;
pub(crate) mod binder;

use crate::api::Pod;
use crate::api::Sym;
use crate::framework::Snapshot;
use crate::framework::cycle_state::CycleState;
use crate::framework::events::{
    ActionType, ClusterEvent, EventObject, EventResource, QueueingHint,
};
use crate::framework::interface::{
    ClusterClient, EnqueueExtensions, FilterPlugin, Plugin, PreBindPlugin, PreFilterPlugin,
    PreFilterResult, PreScorePlugin, ReservePlugin, ScorePlugin,
};
use crate::framework::node_info::NodeInfo;
use crate::framework::status::{Code, Reason, Status};
use crate::framework::volume_listers::VolumeListers;
use binder::{Binder, PodVolumeClaims, PodVolumes, claim_of, owned_by};
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::storage::v1 as storage;
use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

pub(crate) const NAME: &str = "VolumeBinding";
const STATE_KEY: &str = "VolumeBinding";
pub(crate) const ERR_UNBOUND_IMMEDIATE: &str = "pod has unbound immediate PersistentVolumeClaims";

/// kube's `stateData`; cloning shares it, as kube's `Clone` returns the same pointer.
#[derive(Clone, Default)]
struct State(Arc<StateData>);

/// Node → its binding work. Fixed hash keys: an `AHashMap` draws random ones, and every
/// cycle of a pod without claims makes an empty state (kube writes one for PreFilter's Skip).
type ByNode =
    std::collections::HashMap<Sym, PodVolumes, std::hash::BuildHasherDefault<ahash::AHasher>>;

#[derive(Default)]
struct StateData {
    /// `None`: the pod has no claim (PreFilter skipped).
    claims: Option<PodVolumeClaims>,
    /// What binding takes on each node that passed Filter (pods with unbound claims only).
    by_node: Mutex<ByNode>,
    has_static_bindings: AtomicBool,
    all_bound: AtomicBool,
}

impl StateData {
    /// Whether some node may need binding work (and so score other than 0).
    fn binds(&self) -> bool {
        self.claims
            .as_ref()
            .is_some_and(|c| !c.unbound_delay.is_empty())
    }
}

pub(crate) struct VolumeBinding {
    binder: Binder,
    client: Arc<dyn ClusterClient>,
    /// The state of every pod without claims, shared (no allocation per cycle): such a
    /// pod's Filter is skipped, so nothing fills `by_node`, and its Reserve finds no binding
    /// work and sets `all_bound`, set here from the start, so every pod's Reserve leaves it
    /// as it found it.
    no_claims: State,
}

impl VolumeBinding {
    pub(crate) fn new(volumes: Arc<VolumeListers>, client: Arc<dyn ClusterClient>) -> Self {
        VolumeBinding {
            binder: Binder {
                listers: volumes,
                cache: assume::AssumeCache::default(),
            },
            client,
            no_claims: State(Arc::new(StateData {
                all_bound: AtomicBool::new(true),
                ..StateData::default()
            })),
        }
    }

    /// Oracle only: the API shows volume `pv` bound, as kube's Reserve picked it; this
    /// plugin's assume cache follows that pick ([`assume::AssumeCache::follow_binding`]).
    pub(crate) fn follow_binding(&self, pv: Sym) -> Option<Sym> {
        self.binder.cache.follow_binding(&self.binder.listers, pv)
    }

    fn state<'s>(&self, cs: &'s CycleState) -> Option<&'s State> {
        cs.read::<State>(STATE_KEY)
    }

    /// kube's `podHasPVCs`: whether the pod has claims, or why it cannot be scheduled.
    fn pod_has_claims(&self, pod: &Pod) -> Result<bool, String> {
        let mut has = false;
        for v in &pod.spec.volumes {
            let Some((name, ephemeral)) = claim_of(pod, v) else {
                continue;
            };
            has = true;
            let Some(pvc) = self.binder.listers.pvc(pod.namespace, &name) else {
                return Err(if ephemeral {
                    format!(
                        "waiting for ephemeral volume controller to create the persistentvolumeclaim {name:?}"
                    )
                } else {
                    format!("persistentvolumeclaim {name:?} not found")
                });
            };
            if pvc.lost {
                return Err(format!(
                    "persistentvolumeclaim {:?} bound to non-existent persistentvolume {:?}",
                    pvc.name, pvc.volume_name
                ));
            }
            if pvc.deleting {
                return Err(format!(
                    "persistentvolumeclaim {:?} is being deleted",
                    pvc.name
                ));
            }
            if ephemeral {
                owned_by(pod, &pvc)?;
            }
        }
        Ok(has)
    }

    /// kube's `bindAPIUpdate` and `checkBindings`, once.
    fn bind_pod_volumes(&self, pod: &Pod, node: Sym, v: &PodVolumes) -> Result<(), String> {
        for b in &v.static_bindings {
            self.client.bind_volume_to_claim(&b.pv, &b.pvc)?;
        }
        for p in &v.dynamic_provisions {
            self.client.set_claim_selected_node(&p.pvc, node)?;
        }
        let listers = &self.binder.listers;
        for b in &v.static_bindings {
            let pvc = listers.pvc(b.pvc.namespace, &b.pvc.name);
            let pv = listers.pv(b.pv.name);
            let (Some(pvc), Some(pv)) = (pvc, pv) else {
                return Err(format!(
                    "failed to check binding: persistentvolume {:?} or its claim not found",
                    b.pv.name.as_arc()
                ));
            };
            if pv.claim_ref.as_ref().is_none_or(|r| r.uid.is_empty()) {
                return Err(format!("ClaimRef got reset for pv {:?}", pv.name.as_arc()));
            }
            if !Binder::fully_bound(&pvc) {
                return Err(timeout(pod));
            }
        }
        if v.dynamic_provisions.is_empty() {
            Ok(())
        } else {
            Err(timeout(pod))
        }
    }
}

/// kube's PreBind error when the claims do not get bound in `bindTimeoutSeconds`.
fn timeout(_: &Pod) -> String {
    "binding volumes: context deadline exceeded".into()
}

impl Plugin for VolumeBinding {
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
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
    fn into_pre_filter(self: Arc<Self>) -> Option<Arc<dyn PreFilterPlugin>> {
        Some(self)
    }
    fn into_filter(self: Arc<Self>) -> Option<Arc<dyn FilterPlugin>> {
        Some(self)
    }
    fn into_pre_score(self: Arc<Self>) -> Option<Arc<dyn PreScorePlugin>> {
        Some(self)
    }
    fn into_score(self: Arc<Self>) -> Option<Arc<dyn ScorePlugin>> {
        Some(self)
    }
    fn into_reserve(self: Arc<Self>) -> Option<Arc<dyn ReservePlugin>> {
        Some(self)
    }
    fn into_pre_bind(self: Arc<Self>) -> Option<Arc<dyn PreBindPlugin>> {
        Some(self)
    }
    fn into_enqueue_extensions(self: Arc<Self>) -> Option<Arc<dyn EnqueueExtensions>> {
        Some(self)
    }
}

impl PreFilterPlugin for VolumeBinding {
    fn pre_filter(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        _: &Snapshot,
    ) -> (Option<PreFilterResult>, Status) {
        if pod.is_resize_deferred() {
            return (None, Status::skip());
        }
        match self.pod_has_claims(pod) {
            Err(e) => return (None, Status::new(Code::UnschedulableAndUnresolvable, e)),
            Ok(false) => {
                state.write(STATE_KEY, self.no_claims.clone());
                return (None, Status::skip());
            }
            Ok(true) => {}
        }
        let claims = match self.binder.pod_volume_claims(pod) {
            Ok(c) => c,
            Err(e) => return (None, Status::error(e)),
        };
        if !claims.unbound_immediate.is_empty() {
            return (
                None,
                Status::new(Code::UnschedulableAndUnresolvable, ERR_UNBOUND_IMMEDIATE),
            );
        }
        state.write(
            STATE_KEY,
            State(Arc::new(StateData {
                claims: Some(claims),
                ..StateData::default()
            })),
        );
        (None, Status::success())
    }
}

impl FilterPlugin for VolumeBinding {
    fn filter(&self, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        if pod.is_resize_deferred() {
            return Status::success();
        }
        let Some(s) = self.state(state) else {
            return Status::error(format!("reading {STATE_KEY:?} from cycle state: not found"));
        };
        let Some(claims) = &s.0.claims else {
            return Status::success();
        };
        let (volumes, conflicts) = match self.binder.find_pod_volumes(claims, node) {
            Ok(r) => r,
            Err(e) => return Status::error(e),
        };
        if conflicts.any() {
            let reasons: Vec<Reason> = conflicts.reasons().map(Reason::from).collect();
            return Status::with_reasons(Code::UnschedulableAndUnresolvable, reasons);
        }
        if s.0.binds() {
            if !volumes.static_bindings.is_empty() {
                s.0.has_static_bindings.store(true, Ordering::Relaxed);
            }
            s.0.by_node.lock().insert(node.name(), volumes);
        }
        Status::success()
    }
}

impl PreScorePlugin for VolumeBinding {
    /// Reads the pod and the snapshot, never the feasible nodes.
    fn pre_score_reads_nodes(&self, _: &Pod, _: &Snapshot) -> bool {
        false
    }
    /// With StorageCapacityScoring on (kube v1.37's default), always Success.
    fn pre_score(&self, state: &mut CycleState, _: &Pod, _: &[&NodeInfo], _: &Snapshot) -> Status {
        match self.state(state) {
            Some(_) => Status::success(),
            None => Status::error(format!("reading {STATE_KEY:?} from cycle state: not found")),
        }
    }
}

/// The default shape (`utilization 0 → 10, 100 → 0`, scaled by 10): 100 minus utilization.
fn shape(utilization: i64) -> i64 {
    100 - utilization.clamp(0, 100)
}

impl ScorePlugin for VolumeBinding {
    fn score(&self, state: &CycleState, _: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        let Some(s) = self.state(state) else {
            return Ok(0);
        };
        let by_node = s.0.by_node.lock();
        let Some(v) = by_node.get(&node.name()) else {
            return Ok(0);
        };
        // Per storage class: (requested, capacity) in bytes.
        let mut classes: Vec<(Arc<str>, i64, i64)> = Vec::new();
        let mut add = |class: &Arc<str>, req: i64, cap: Option<i64>| match classes
            .iter_mut()
            .find(|c| c.0 == *class)
        {
            Some(c) => {
                c.1 += req;
                c.2 = cap.map_or(c.2, |x| c.2 + x);
            }
            None => classes.push((class.clone(), req, cap.unwrap_or(0))),
        };
        if !v.static_bindings.is_empty() {
            for b in &v.static_bindings {
                add(
                    &b.pv.storage_class,
                    b.pvc.request.value(),
                    Some(b.pv.capacity.value()),
                );
            }
        } else {
            for p in &v.dynamic_provisions {
                let Some(cap) = &p.capacity else { continue };
                let c = cap.capacity.map_or(0, |q| q.value());
                let class = &p.pvc.storage_class;
                match classes.iter_mut().find(|x| x.0 == *class) {
                    Some(x) => {
                        x.1 += p.pvc.request.value();
                        x.2 = c;
                    }
                    None => classes.push((class.clone(), p.pvc.request.value(), c)),
                }
            }
        }
        if classes.is_empty() {
            return Ok(0);
        }
        let total: i64 = classes
            .iter()
            .map(|&(_, req, cap)| {
                if cap == 0 || req > cap {
                    shape(100)
                } else {
                    shape(((req as i128 * 100) / cap as i128) as i64)
                }
            })
            .sum();
        // Round half away from zero.
        let n = classes.len() as f64;
        Ok((total as f64 / n).round() as i64)
    }

    fn scores_nothing(&self, state: &CycleState) -> bool {
        self.state(state).is_none_or(|s| !s.0.binds())
    }
}

impl ReservePlugin for VolumeBinding {
    fn reserve(&self, state: &mut CycleState, pod: &Pod, node: Sym) -> Status {
        let Some(s) = self.state(state).cloned() else {
            return Status::error(format!("reading {STATE_KEY:?} from cycle state: not found"));
        };
        let mut by_node = s.0.by_node.lock();
        let Some(v) = by_node.get_mut(&node) else {
            s.0.all_bound.store(true, Ordering::Relaxed);
            return Status::success();
        };
        match self.binder.assume(pod, node, v) {
            Ok(all) => {
                s.0.all_bound.store(all, Ordering::Relaxed);
                Status::success()
            }
            Err(e) => Status::error(e),
        }
    }

    fn unreserve(&self, state: &mut CycleState, _: &Pod, node: Sym) {
        if let Some(s) = self.state(state)
            && let Some(v) = s.0.by_node.lock().get(&node)
        {
            self.binder.revert(v);
        }
    }
}

impl PreBindPlugin for VolumeBinding {
    fn pre_bind_pre_flight(&self, state: &CycleState, _: &Pod, node: Sym) -> Status {
        let Some(s) = self.state(state) else {
            return Status::error(format!("reading {STATE_KEY:?} from cycle state: not found"));
        };
        if s.0.all_bound.load(Ordering::Relaxed) {
            return Status::skip();
        }
        if !s.0.by_node.lock().contains_key(&node) {
            return Status::error(format!("no pod volume found for node {:?}", node.as_arc()));
        }
        Status::success()
    }

    fn pre_bind(&self, state: &mut CycleState, pod: &Pod, node: Sym) -> Status {
        let Some(s) = self.state(state).cloned() else {
            return Status::error(format!("reading {STATE_KEY:?} from cycle state: not found"));
        };
        if s.0.all_bound.load(Ordering::Relaxed) {
            return Status::success();
        }
        let Some(v) = s.0.by_node.lock().get(&node).cloned() else {
            return Status::error(format!("no pod volume found for node {:?}", node.as_arc()));
        };
        match self.bind_pod_volumes(pod, node, &v) {
            Ok(()) => Status::success(),
            Err(e) => Status::error(e),
        }
    }
}

fn object<T: 'static>(o: &EventObject) -> Option<&T> {
    match o {
        EventObject::Object(o) => o.downcast_ref::<T>(),
        _ => None,
    }
}

impl EnqueueExtensions for VolumeBinding {
    /// kube's `isSchedulableAfter{StorageClass,PersistentVolumeClaim,CSINode,CSIDriver,
    /// CSIStorageCapacity}Change`; the other events always queue.
    fn queueing_hint(
        &self,
        event: &ClusterEvent,
        pod: &Pod,
        old: &EventObject,
        new: &EventObject,
    ) -> Result<QueueingHint, String> {
        let unexpected = || format!("unexpected objects in {event:?}");
        let added = matches!(old, EventObject::None);
        match event.resource {
            EventResource::StorageClass => {
                let n = object::<storage::StorageClass>(new).ok_or_else(unexpected)?;
                let Some(o) = object::<storage::StorageClass>(old) else {
                    return Ok(QueueingHint::Queue);
                };
                // Semantic equality: an empty list is no list.
                let topologies =
                    |c: &storage::StorageClass| c.allowed_topologies.clone().unwrap_or_default();
                Ok(QueueingHint::queue_if(topologies(o) != topologies(n)))
            }
            EventResource::PersistentVolumeClaim => {
                let c = object::<core::PersistentVolumeClaim>(new).ok_or_else(unexpected)?;
                let same_ns =
                    c.metadata.namespace.as_deref() == Some(pod.namespace.as_arc().as_ref());
                let name = c.metadata.name.as_deref().unwrap_or("");
                Ok(QueueingHint::queue_if(
                    same_ns
                        && (pod.spec.volumes.iter())
                            .filter_map(|v| claim_of(pod, v))
                            .any(|(n, _)| n == name),
                ))
            }
            EventResource::CSINode if !added => {
                let (Some(o), Some(n)) = (
                    object::<storage::CSINode>(old),
                    object::<storage::CSINode>(new),
                ) else {
                    return Err(unexpected());
                };
                // A missing annotation reads as "", as Go's map index does.
                let ann = |x: &storage::CSINode| {
                    (x.metadata.annotations.as_ref())
                        .and_then(|a| a.get(crate::api::volume::MIGRATED_PLUGINS).cloned())
                        .unwrap_or_default()
                };
                Ok(QueueingHint::queue_if(ann(o) != ann(n)))
            }
            EventResource::CSIDriver => {
                let (Some(o), Some(n)) = (
                    object::<storage::CSIDriver>(old),
                    object::<storage::CSIDriver>(new),
                ) else {
                    return Err(unexpected());
                };
                let name = n.metadata.name.as_deref().unwrap_or("");
                let uses = pod.spec.volumes.iter().any(|v| {
                    matches!(&v.source, crate::api::volume::PodVolumeSource::Csi { driver }
                        if &*driver.as_arc() == name)
                });
                let turned_off =
                    o.spec.storage_capacity == Some(true) && n.spec.storage_capacity != Some(true);
                Ok(QueueingHint::queue_if(uses && turned_off))
            }
            EventResource::CSIStorageCapacity if !added => {
                let (Some(o), Some(n)) = (
                    object::<storage::CSIStorageCapacity>(old),
                    object::<storage::CSIStorageCapacity>(new),
                ) else {
                    return Err(unexpected());
                };
                let limit = |c: &storage::CSIStorageCapacity| {
                    (c.maximum_volume_size.as_ref().or(c.capacity.as_ref()))
                        .and_then(|q| crate::api::Quantity::parse(&q.0).ok())
                };
                Ok(QueueingHint::queue_if(match (limit(o), limit(n)) {
                    (_, None) => false,
                    (None, Some(_)) => true,
                    (Some(a), Some(b)) => b > a,
                }))
            }
            _ => Ok(QueueingHint::Queue),
        }
    }

    fn events_to_register(&self) -> Vec<ClusterEvent> {
        let add_update = ActionType(ActionType::ADD.0 | ActionType::UPDATE.0);
        vec![
            ClusterEvent::new(EventResource::StorageClass, add_update),
            ClusterEvent::new(EventResource::PersistentVolumeClaim, add_update),
            ClusterEvent::new(EventResource::PersistentVolume, add_update),
            ClusterEvent::new(
                EventResource::Node,
                ActionType(ActionType::ADD.0 | ActionType::UPDATE_NODE_LABEL.0),
            ),
            ClusterEvent::new(EventResource::CSINode, add_update),
            ClusterEvent::new(EventResource::CSIDriver, ActionType::UPDATE),
            ClusterEvent::new(EventResource::CSIStorageCapacity, add_update),
        ]
    }
}

#[cfg(test)]
mod tests;
