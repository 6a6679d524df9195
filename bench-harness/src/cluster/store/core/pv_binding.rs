//! Volume binding as scheduler_perf's API server does it: VolumeBinding's PreBind writes
//! (a volume's `claimRef`, a claim's selected node) and the fake PV controller
//! (`test/integration/util/util.go` `StartFakePVController`, kube v1.37.2), which, on every
//! volume added or updated with a `claimRef`, completes the claim's side when it names no
//! volume yet: `spec.volumeName` and the annotation `pv.kubernetes.io/bind-completed: "yes"`.
//! It provisions nothing: a claim waiting for a provisioner stays unbound, as there.

use crate::cluster::store::{Store, StoreError, Subresource};
use k8s_openapi::api::core::v1 as core;
use tidegate_engine::api::Sym;
use tidegate_engine::api::volume::{PersistentVolume, PersistentVolumeClaim};

fn message(e: StoreError) -> String {
    e.to_string()
}

impl Store {
    /// The fake PV controller's `syncPV` for the volume named `pv` (after an add or update).
    pub(crate) fn sync_fake_pv_controller(&self, pv: &core::PersistentVolume) {
        let Some(r) = pv.spec.as_ref().and_then(|s| s.claim_ref.as_ref()) else {
            return;
        };
        let (ns, name) = (
            r.namespace.as_deref().unwrap_or(""),
            r.name.as_deref().unwrap_or(""),
        );
        let Some(claim) = self.get::<core::PersistentVolumeClaim>(ns, name) else {
            return;
        };
        let spec = claim.spec.clone().unwrap_or_default();
        if spec.volume_name.as_deref().is_some_and(|v| !v.is_empty()) {
            return;
        }
        let mut claim = (*claim).clone();
        claim.spec.get_or_insert_with(Default::default).volume_name = pv.metadata.name.clone();
        claim
            .metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert("pv.kubernetes.io/bind-completed".into(), "yes".into());
        // The controller logs a failed update and goes on.
        let _ = self.update(claim, ns, Subresource::Main);
    }

    /// kube's `bindAPIUpdate` for one static binding.
    pub(crate) fn bind_volume(
        &self,
        pv: &PersistentVolume,
        claim: &PersistentVolumeClaim,
    ) -> Result<(), String> {
        let name = pv.name.to_string_lossy();
        let stored = self
            .get::<core::PersistentVolume>("", &name)
            .ok_or_else(|| format!("persistentvolumes {name:?} not found"))?;
        if stored.metadata.resource_version.as_deref() != Some(&*pv.resource_version) {
            return Err(message(StoreError::Conflict {
                resource: "persistentvolumes",
                name,
            }));
        }
        let ns = claim.namespace.to_string_lossy();
        let mut v = (*stored).clone();
        let spec = v.spec.get_or_insert_with(Default::default);
        let pre_bound = spec.claim_ref.as_ref().is_some_and(|r| {
            r.name.as_deref() == Some(&*claim.name)
                && r.namespace.as_deref() == Some(&ns)
                && r.uid
                    .as_deref()
                    .is_none_or(|u| u.is_empty() || u == &*claim.uid)
        });
        spec.claim_ref = Some(core::ObjectReference {
            kind: Some("PersistentVolumeClaim".into()),
            api_version: Some("v1".into()),
            namespace: Some(ns),
            name: Some(claim.name.to_string()),
            uid: Some(claim.uid.to_string()),
            resource_version: Some(claim.resource_version.to_string()),
            field_path: None,
        });
        if !pre_bound {
            v.metadata
                .annotations
                .get_or_insert_with(Default::default)
                .entry("pv.kubernetes.io/bound-by-controller".into())
                .or_insert_with(|| "yes".into());
        }
        self.update(v, "", Subresource::Main).map_err(message)?;
        if let Some(now) = self.get::<core::PersistentVolume>("", &name) {
            self.sync_fake_pv_controller(&now);
        }
        Ok(())
    }

    /// The selected-node annotation on a claim to provision.
    pub(crate) fn select_node_for_claim(
        &self,
        claim: &PersistentVolumeClaim,
        node: Sym,
    ) -> Result<(), String> {
        let ns = claim.namespace.to_string_lossy();
        let stored = self
            .get::<core::PersistentVolumeClaim>(&ns, &claim.name)
            .ok_or_else(|| format!("persistentvolumeclaims \"{ns}/{}\" not found", claim.name))?;
        if stored.metadata.resource_version.as_deref() != Some(&*claim.resource_version) {
            return Err(message(StoreError::Conflict {
                resource: "persistentvolumeclaims",
                name: claim.name.to_string(),
            }));
        }
        let mut c = (*stored).clone();
        c.metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(
                "volume.kubernetes.io/selected-node".into(),
                node.to_string_lossy(),
            );
        self.update(c, &ns, Subresource::Main).map_err(message)
    }
}
