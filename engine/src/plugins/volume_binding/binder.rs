//! VolumeBinding's binder: which of a pod's claims are bound, and on a node, whether the
//! bound ones' volumes reach it and the unbound ones can be matched to a volume or
//! provisioned there. Source of behaviour: `pkg/scheduler/framework/plugins/volumebinding/binder.go`
//! and `k8s.io/component-helpers/storage/volume/pv_helpers.go` (kube v1.37.2;
//! `docs/volumes/kube-volume-plugins.md` section 3).

use super::assume::AssumeCache;
use crate::api::volume::{
    CsiNode, CsiStorageCapacity, PersistentVolume, PersistentVolumeClaim, PodVolumeSource,
    VolumeBindingMode,
};
use crate::api::{NodeSelector, Pod, Sym, csi_translation as csi};
use crate::framework::node_info::NodeInfo;
use crate::framework::volume_listers::VolumeListers;
use ahash::AHashMap;
use std::borrow::Cow;
use std::sync::Arc;

pub(crate) const ERR_REASON_NODE_CONFLICT: &str =
    "node(s) didn't match PersistentVolume's node affinity";
pub(crate) const ERR_REASON_BIND_CONFLICT: &str =
    "node(s) didn't find available persistent volumes to bind";
pub(crate) const ERR_REASON_NOT_ENOUGH_SPACE: &str = "node(s) did not have enough free storage";
pub(crate) const ERR_REASON_PV_NOT_EXIST: &str =
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)";

/// A pod's claims by state (kube's `PodVolumeClaims`).
#[derive(Debug, Default)]
pub(super) struct PodVolumeClaims {
    pub(super) bound: Vec<Arc<PersistentVolumeClaim>>,
    /// Each bound claim's volume, read once per cycle through the assume cache (kube reads
    /// it per node; nothing in between changes it); `None` when it does not exist.
    pub(super) bound_pvs: Vec<Option<Arc<PersistentVolume>>>,
    pub(super) unbound_delay: Vec<Arc<PersistentVolumeClaim>>,
    pub(super) unbound_immediate: Vec<Arc<PersistentVolumeClaim>>,
    /// The volumes of each class an unbound delay-binding claim names.
    pub(super) pvs_by_class: AHashMap<Arc<str>, Vec<Arc<PersistentVolume>>>,
}

/// A claim matched to an existing volume.
#[derive(Clone, Debug)]
pub(super) struct Binding {
    pub(super) pv: Arc<PersistentVolume>,
    pub(super) pvc: Arc<PersistentVolumeClaim>,
}

/// A claim to provision on the node, with the capacity object that admitted it.
#[derive(Clone, Debug)]
pub(super) struct Provision {
    pub(super) pvc: Arc<PersistentVolumeClaim>,
    pub(super) capacity: Option<Arc<CsiStorageCapacity>>,
}

/// What binding the pod's unbound claims on one node takes (kube's `PodVolumes`).
#[derive(Clone, Debug, Default)]
pub(super) struct PodVolumes {
    pub(super) static_bindings: Vec<Binding>,
    pub(super) dynamic_provisions: Vec<Provision>,
}

/// Why a node does not fit (kube's `ConflictReasons`, in its order).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Conflicts {
    pub(super) node: bool,
    pub(super) bind: bool,
    pub(super) space: bool,
    pub(super) pv_missing: bool,
}

impl Conflicts {
    pub(super) fn any(self) -> bool {
        self.node || self.bind || self.space || self.pv_missing
    }

    pub(super) fn reasons(self) -> impl Iterator<Item = &'static str> {
        [
            (self.node, ERR_REASON_NODE_CONFLICT),
            (self.bind, ERR_REASON_BIND_CONFLICT),
            (self.space, ERR_REASON_NOT_ENOUGH_SPACE),
            (self.pv_missing, ERR_REASON_PV_NOT_EXIST),
        ]
        .into_iter()
        .filter_map(|(on, r)| on.then_some(r))
    }
}

/// A pod volume's claim name, and whether it is a generic ephemeral volume's.
pub(crate) fn claim_of<'p>(
    pod: &'p Pod,
    v: &'p crate::api::volume::PodVolume,
) -> Option<(Cow<'p, str>, bool)> {
    match &v.source {
        PodVolumeSource::Claim { claim_name, .. } => Some(((&**claim_name).into(), false)),
        PodVolumeSource::Ephemeral => Some((format!("{}-{}", pod.name, v.name).into(), true)),
        _ => None,
    }
}

/// `ephemeral.VolumeIsForPod`.
pub(crate) fn owned_by(pod: &Pod, pvc: &PersistentVolumeClaim) -> Result<(), String> {
    if pvc.namespace != pod.namespace || pvc.controller_uid.as_deref() != Some(&*pod.uid) {
        return Err(format!(
            "PVC {}/{} was not created for pod {}/{} (pod is not owner)",
            pvc.namespace, pvc.name, pod.namespace, pod.name
        ));
    }
    Ok(())
}

/// `CheckNodeAffinity`: against a node that carries only the labels.
fn affinity_ok(affinity: Option<&NodeSelector>, node: &NodeInfo) -> bool {
    affinity.is_none_or(|s| s.matches(Sym::EMPTY, &node.node.labels))
}

/// `IsVolumeBoundToClaim`.
fn bound_to(pv: &PersistentVolume, pvc: &PersistentVolumeClaim) -> bool {
    pv.claim_ref.as_ref().is_some_and(|r| {
        *r.name == *pvc.name
            && r.namespace == pvc.namespace
            && (r.uid.is_empty() || r.uid == pvc.uid)
    })
}

pub(super) struct Binder {
    pub(super) listers: Arc<VolumeListers>,
    pub(super) cache: AssumeCache,
}

impl Binder {
    /// `isVolumeBound` over every volume: whether each claim is fully bound (through the
    /// assume cache), with the claim.
    fn claims<'p>(
        &'p self,
        pod: &'p Pod,
    ) -> impl Iterator<Item = Result<Arc<PersistentVolumeClaim>, String>> + 'p {
        pod.spec.volumes.iter().filter_map(move |v| {
            let (name, ephemeral) = claim_of(pod, v)?;
            let pvc = match self.cache.pvc(&self.listers, pod.namespace, &name) {
                Ok(c) => c,
                Err(e) => {
                    return Some(Err(format!(
                        "error getting PVC \"{}/{name}\": {e}",
                        pod.namespace
                    )));
                }
            };
            if ephemeral && let Err(e) = owned_by(pod, &pvc) {
                return Some(Err(e));
            }
            Some(Ok(pvc))
        })
    }

    /// `isPVCFullyBound`.
    pub(super) fn fully_bound(pvc: &PersistentVolumeClaim) -> bool {
        !pvc.volume_name.is_empty() && pvc.bind_completed
    }

    /// `IsDelayBindingMode`.
    fn delay_binding(&self, pvc: &PersistentVolumeClaim) -> Result<bool, String> {
        if pvc.storage_class.is_empty() {
            return Ok(false);
        }
        let Some(class) = self.listers.storage_class(&pvc.storage_class) else {
            return Ok(false);
        };
        match class.binding_mode {
            None => Err(format!(
                "VolumeBindingMode not set for StorageClass {:?}",
                pvc.storage_class
            )),
            Some(m) => Ok(m == VolumeBindingMode::WaitForFirstConsumer),
        }
    }

    /// `GetPodVolumeClaims`.
    pub(super) fn pod_volume_claims(&self, pod: &Pod) -> Result<PodVolumeClaims, String> {
        let mut c = PodVolumeClaims::default();
        for pvc in self.claims(pod) {
            let pvc = pvc?;
            if Self::fully_bound(&pvc) {
                c.bound.push(pvc);
            } else if self.delay_binding(&pvc)? && pvc.volume_name.is_empty() {
                c.unbound_delay.push(pvc);
            } else {
                c.unbound_immediate.push(pvc);
            }
        }
        c.bound_pvs = (c.bound.iter())
            .map(|pvc| self.cache.pv(&self.listers, pvc.volume).ok())
            .collect();
        for pvc in &c.unbound_delay {
            let class = &pvc.storage_class;
            if !c.pvs_by_class.contains_key(class) {
                let pvs = (self.listers.pvs_of_class(class).into_iter())
                    .map(|pv| self.cache.current_pv(pv))
                    .collect();
                c.pvs_by_class.insert(class.clone(), pvs);
            }
        }
        Ok(c)
    }

    /// `arePodVolumesBound`.
    pub(super) fn all_bound(&self, pod: &Pod) -> bool {
        self.claims(pod)
            .all(|c| c.is_ok_and(|c| Self::fully_bound(&c)))
    }

    /// `FindPodVolumes` on one node.
    pub(super) fn find_pod_volumes(
        &self,
        claims: &PodVolumeClaims,
        node: &NodeInfo,
    ) -> Result<(PodVolumes, Conflicts), String> {
        let mut out = PodVolumes::default();
        let mut c = Conflicts::default();
        if !claims.bound.is_empty() {
            (c.node, c.pv_missing) = self.check_bound_claims(&claims.bound_pvs, node)?;
        }
        if claims.unbound_delay.is_empty() {
            return Ok((out, c));
        }
        let name = node.name();
        let mut to_provision = Vec::new();
        let mut to_match = Vec::new();
        for pvc in &claims.unbound_delay {
            match pvc.selected_node {
                Some(n) if n != name => {
                    c.bind = true;
                    return Ok((out, c));
                }
                Some(_) => to_provision.push(pvc.clone()),
                None => to_match.push(pvc.clone()),
            }
        }
        if !to_match.is_empty() {
            let unmatched = self.find_matching_volumes(claims, to_match, node, &mut out)?;
            c.bind = !unmatched.is_empty();
            to_provision.extend(unmatched);
        }
        if !to_provision.is_empty() {
            let (satisfied, sufficient) = self.check_provisions(&to_provision, node, &mut out)?;
            c.bind = !satisfied;
            c.space = !sufficient;
        }
        Ok((out, c))
    }

    /// `checkBoundClaims`: (affinity conflict, volume missing).
    fn check_bound_claims(
        &self,
        pvs: &[Option<Arc<PersistentVolume>>],
        node: &NodeInfo,
    ) -> Result<(bool, bool), String> {
        // The node's CSINode matters only to in-tree volumes (their translation).
        let mut csi_node: Option<Option<Arc<CsiNode>>> = None;
        for pv in pvs {
            let Some(pv) = pv else {
                return Ok((false, true));
            };
            let affinity = if pv.csi.is_some() {
                let n = csi_node.get_or_insert_with(|| self.listers.csi_node(node.name()));
                translated_affinity(pv, n.as_deref())?
            } else {
                pv.node_affinity.as_ref()
            };
            if !affinity_ok(affinity, node) {
                return Ok((true, false));
            }
        }
        Ok((false, false))
    }

    /// `findMatchingVolumes`: each claim, smallest request first, to the smallest volume
    /// that fits; returns the claims left unmatched.
    fn find_matching_volumes(
        &self,
        claims: &PodVolumeClaims,
        mut to_match: Vec<Arc<PersistentVolumeClaim>>,
        node: &NodeInfo,
        out: &mut PodVolumes,
    ) -> Result<Vec<Arc<PersistentVolumeClaim>>, String> {
        // kube's sort is not stable; equal requests keep the pod's order here.
        to_match.sort_by_key(|a| a.request);
        let mut unmatched = Vec::new();
        for pvc in to_match {
            let pvs = claims
                .pvs_by_class
                .get(&pvc.storage_class)
                .map_or(&[][..], Vec::as_slice);
            match find_matching_volume(&pvc, pvs, node, &out.static_bindings) {
                Some(pv) => out.static_bindings.push(Binding { pv, pvc }),
                None => unmatched.push(pvc),
            }
        }
        Ok(unmatched)
    }

    /// `checkVolumeProvisions`: (satisfied, sufficient storage).
    fn check_provisions(
        &self,
        claims: &[Arc<PersistentVolumeClaim>],
        node: &NodeInfo,
        out: &mut PodVolumes,
    ) -> Result<(bool, bool), String> {
        let mut provisions = Vec::new();
        for pvc in claims {
            if pvc.storage_class.is_empty() {
                return Err(format!(
                    "no class for claim \"{}/{}\"",
                    pvc.namespace, pvc.name
                ));
            }
            let Some(class) = self.listers.storage_class(&pvc.storage_class) else {
                return Err(format!(
                    "failed to find storage class {:?}",
                    pvc.storage_class
                ));
            };
            let p = &*class.provisioner;
            if p.is_empty() || p == "kubernetes.io/no-provisioner" {
                return Ok((false, true));
            }
            if !affinity_ok(class.allowed_topologies.as_ref(), node) {
                return Ok((false, true));
            }
            match self.enough_capacity(p, pvc, node) {
                None => return Ok((true, false)),
                Some(capacity) => provisions.push(Provision {
                    pvc: pvc.clone(),
                    capacity,
                }),
            }
        }
        out.dynamic_provisions = provisions;
        Ok((true, true))
    }

    /// `hasEnoughCapacity`: `None` when the driver tracks capacity and no object admits the
    /// claim on the node; `Some(the admitting object)` otherwise.
    fn enough_capacity(
        &self,
        provisioner: &str,
        pvc: &PersistentVolumeClaim,
        node: &NodeInfo,
    ) -> Option<Option<Arc<CsiStorageCapacity>>> {
        if !pvc.has_request {
            return Some(None);
        }
        let tracked = Sym::lookup(provisioner)
            .and_then(|d| self.listers.csi_driver(d))
            .is_some_and(|d| d.storage_capacity);
        if !tracked {
            return Some(None);
        }
        let size = pvc.request.value();
        self.listers
            .storage_capacities()
            .into_iter()
            .find(|c| {
                *c.storage_class == *pvc.storage_class
                    && c.limit().is_some_and(|l| l.value() >= size)
                    && c.node_topology
                        .as_ref()
                        .is_some_and(|s| s.matches(&node.node.labels))
            })
            .map(Some)
    }

    /// `AssumePodVolumes`: the node's bindings and provisions assumed in the caches.
    /// Returns whether every claim was bound already.
    pub(super) fn assume(
        &self,
        pod: &Pod,
        node: Sym,
        volumes: &mut PodVolumes,
    ) -> Result<bool, String> {
        if self.all_bound(pod) {
            return Ok(true);
        }
        let mut bindings = Vec::with_capacity(volumes.static_bindings.len());
        for b in &volumes.static_bindings {
            let pv = bind_volume_to_claim(&b.pv, &b.pvc);
            if !Arc::ptr_eq(&pv, &b.pv)
                && let Err(e) = self.cache.assume_pv(&self.listers, pv.clone())
            {
                self.revert(&PodVolumes {
                    static_bindings: bindings,
                    dynamic_provisions: Vec::new(),
                });
                return Err(e);
            }
            bindings.push(Binding {
                pv,
                pvc: b.pvc.clone(),
            });
        }
        let mut provisions = Vec::with_capacity(volumes.dynamic_provisions.len());
        for p in &volumes.dynamic_provisions {
            let mut pvc = (*p.pvc).clone();
            pvc.selected_node = Some(node);
            let pvc = Arc::new(pvc);
            if let Err(e) = self.cache.assume_pvc(&self.listers, pvc.clone()) {
                self.revert(&PodVolumes {
                    static_bindings: bindings,
                    dynamic_provisions: provisions,
                });
                return Err(e);
            }
            provisions.push(Provision {
                pvc,
                capacity: p.capacity.clone(),
            });
        }
        volumes.static_bindings = bindings;
        volumes.dynamic_provisions = provisions;
        Ok(false)
    }

    /// `RevertAssumedPodVolumes`.
    pub(super) fn revert(&self, volumes: &PodVolumes) {
        for b in &volumes.static_bindings {
            self.cache.restore_pv(&b.pv);
        }
        for p in &volumes.dynamic_provisions {
            self.cache.restore_pvc(&p.pvc);
        }
    }
}

/// `GetBindVolumeToClaim`: the volume with a full reference to the claim (the same `Arc`
/// when it has one already).
fn bind_volume_to_claim(
    pv: &Arc<PersistentVolume>,
    pvc: &PersistentVolumeClaim,
) -> Arc<PersistentVolume> {
    let full = pv
        .claim_ref
        .as_ref()
        .is_some_and(|r| *r.name == *pvc.name && r.namespace == pvc.namespace && r.uid == pvc.uid);
    if full {
        return pv.clone();
    }
    let mut v = (**pv).clone();
    v.claim_ref = Some(crate::api::volume::ClaimRef {
        namespace: pvc.namespace,
        name: pvc.name.clone(),
        uid: pvc.uid.clone(),
    });
    Arc::new(v)
}

/// The node affinity VolumeBinding checks: the translated one when the node's CSINode names
/// the volume's in-tree plugin as migrated (`tryTranslatePVToCSI`).
pub(super) fn translated_affinity<'v>(
    pv: &'v PersistentVolume,
    csi_node: Option<&CsiNode>,
) -> Result<Option<&'v NodeSelector>, String> {
    let migrated = match (&pv.source, csi_node) {
        (crate::api::volume::PvSource::Disk(d), Some(n)) => csi::plugin_of(d).is_some_and(|p| {
            csi::migration_on(Some(n), p) && n.migrated_plugins.contains(&csi::plugin_sym(p))
        }),
        _ => false,
    };
    if !migrated {
        return Ok(pv.node_affinity.as_ref());
    }
    match &pv.csi {
        Some(Ok(t)) => Ok(t.node_affinity.as_ref()),
        Some(Err(e)) => Err(format!("could not translate pv: {e}")),
        None => Ok(pv.node_affinity.as_ref()),
    }
}

/// `FindMatchingVolume` for a delay-binding claim on a node.
fn find_matching_volume(
    pvc: &PersistentVolumeClaim,
    pvs: &[Arc<PersistentVolume>],
    node: &NodeInfo,
    chosen: &[Binding],
) -> Option<Arc<PersistentVolume>> {
    let mut smallest: Option<&Arc<PersistentVolume>> = None;
    for pv in pvs {
        if chosen.iter().any(|b| b.pv.name == pv.name)
            || (pv.claim_ref.is_some() && !bound_to(pv, pvc))
            || pv.capacity < pvc.request
            || pv.block != pvc.block
            || pv.volume_attributes_class != pvc.volume_attributes_class
            || pv.deleting
        {
            continue;
        }
        let affinity = affinity_ok(pv.node_affinity.as_ref(), node);
        if bound_to(pv, pvc) {
            return affinity.then(|| pv.clone());
        }
        if &*pv.phase != "Available"
            || pvc
                .selector
                .as_ref()
                .is_some_and(|s| !s.matches(&pv.labels))
            || pv.storage_class != pvc.storage_class
            || !affinity
            || !pv.access_modes.contains(pvc.access_modes)
        {
            continue;
        }
        if smallest.is_none_or(|s| s.capacity > pv.capacity) {
            smallest = Some(pv);
        }
    }
    smallest.cloned()
}

#[cfg(test)]
#[path = "binder_tests.rs"]
mod tests;
