//! createPods with `persistentVolumeClaimTemplatePath` (and `persistentVolumeTemplatePath`):
//! upstream's `CreatePodWithPersistentVolume` (`test/integration/scheduler_perf/runners.go`,
//! kube v1.37.2), which gives every pod a volume and a claim of its own, bound to each other.
//!
//! For pod `i` of an op in namespace `ns`:
//! - the claim: the claim template named `pvc-<i>`, `spec.volumeName` the volume's name, then
//!   `status.phase: Bound` (a status update, as the API server resets status on create);
//! - the volume: the volume template named `<ns>-vol-<i>`; an AWS EBS source gets the
//!   `volumeID` `vol-<i>` (not namespaced, as upstream's factory sets it before the rename), a
//!   CSI source the `volumeHandle` `<ns>-vol-<i>`; `spec.claimRef` names the claim (no UID),
//!   then `status.phase: Bound`;
//! - the pod: its `spec.volumes` replaced by one volume `vol` naming the claim.
//!
//! The order is upstream's: claim, claim status, volume, volume status, pod.

use crate::cluster::store::{Store, StoreError, Subresource};
use crate::error::InputError;
use crate::workload::manifest::{self, ObjectTemplate};
use k8s_openapi::api::core::v1 as core;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tidegate_engine::api::PodSpecInfo;

/// The op's two template paths.
#[derive(Clone, Debug, PartialEq)]
pub struct VolumeTemplates {
    pub volume: PathBuf,
    pub claim: PathBuf,
    /// A template file that does not exist, reported when the workload is planned (as
    /// upstream fails only the test case that reads it), not when the config is read.
    pub missing: Option<InputError>,
}

/// The templates read and parsed once, at planning.
#[derive(Clone, Debug)]
pub(crate) struct LoadedVolumes {
    volume: core::PersistentVolume,
    claim: core::PersistentVolumeClaim,
}

/// Upstream reads these templates as plain YAML (no template actions); a template without
/// actions renders to itself, so the same loader serves.
fn load<T: serde::de::DeserializeOwned>(path: &Path, kind: &str) -> Result<T, InputError> {
    ObjectTemplate::load(path)?
        .render(0, 1, &serde_json::Map::new())?
        .typed(kind)
}

impl LoadedVolumes {
    pub(crate) fn load(t: &VolumeTemplates) -> Result<LoadedVolumes, InputError> {
        if let Some(e) = &t.missing {
            return Err(e.clone());
        }
        Ok(LoadedVolumes {
            volume: load(&t.volume, "PersistentVolume")?,
            claim: load(&t.claim, "PersistentVolumeClaim")?,
        })
    }

    /// Pod `i`'s claim and volume, as upstream makes them (before their status updates).
    pub(crate) fn objects(
        &self,
        namespace: &str,
        i: usize,
    ) -> (core::PersistentVolumeClaim, core::PersistentVolume) {
        let claim_name = format!("pvc-{i}");
        let volume_name = format!("{namespace}-vol-{i}");
        let mut pv = self.volume.clone();
        pv.metadata.name = Some(volume_name.clone());
        let spec = pv.spec.get_or_insert_with(Default::default);
        if let Some(csi) = spec.csi.as_mut() {
            csi.volume_handle = volume_name.clone();
        } else if let Some(ebs) = spec.aws_elastic_block_store.as_mut() {
            ebs.volume_id = format!("vol-{i}");
        }
        spec.claim_ref = Some(core::ObjectReference {
            kind: Some("PersistentVolumeClaim".into()),
            namespace: Some(namespace.into()),
            name: Some(claim_name.clone()),
            api_version: Some("v1".into()),
            ..Default::default()
        });
        let mut pvc = self.claim.clone();
        pvc.metadata.name = Some(claim_name);
        pvc.spec.get_or_insert_with(Default::default).volume_name = Some(volume_name);
        (pvc, pv)
    }

    /// Creates pod `i`'s claim and volume, bound, in `store`; returns the claim's name.
    pub(crate) fn create(
        &self,
        store: &Store,
        namespace: &str,
        i: usize,
    ) -> Result<String, StoreError> {
        let (pvc, pv) = self.objects(namespace, i);
        let claim_name = pvc.metadata.name.clone().unwrap_or_default();
        let volume_name = pv.metadata.name.clone().unwrap_or_default();
        store.create(pvc, namespace)?;
        let mut pvc = (*store
            .get::<core::PersistentVolumeClaim>(namespace, &claim_name)
            .expect("just created"))
        .clone();
        pvc.status.get_or_insert_with(Default::default).phase = Some("Bound".into());
        store.update(pvc, namespace, Subresource::Status)?;
        store.create(pv, "")?;
        let mut pv = (*store
            .get::<core::PersistentVolume>("", &volume_name)
            .expect("just created"))
        .clone();
        pv.status.get_or_insert_with(Default::default).phase = Some("Bound".into());
        store.update(pv, "", Subresource::Status)?;
        Ok(claim_name)
    }
}

/// The pod with its volumes replaced by the one volume `vol` naming `claim`.
pub(crate) fn with_claim(
    pod: &core::Pod,
    claim: &str,
) -> Result<(Arc<core::Pod>, Arc<PodSpecInfo>), InputError> {
    let mut pod = pod.clone();
    pod.spec.get_or_insert_with(Default::default).volumes = Some(vec![core::Volume {
        name: "vol".into(),
        persistent_volume_claim: Some(core::PersistentVolumeClaimVolumeSource {
            claim_name: claim.into(),
            read_only: None,
        }),
        ..Default::default()
    }]);
    let spec = manifest::pod_spec_info(None, &pod)?;
    Ok((Arc::new(pod), Arc::new(spec)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loaded(volume: &str) -> LoadedVolumes {
        let dir = tempfile::tempdir().unwrap();
        let (pv, pvc) = (dir.path().join("pv.yaml"), dir.path().join("pvc.yaml"));
        std::fs::write(&pv, volume).unwrap();
        std::fs::write(
            &pvc,
            "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  annotations:\n    \
             pv.kubernetes.io/bind-completed: \"true\"\nspec:\n  accessModes:\n  - ReadOnlyMany\n  \
             resources:\n    requests:\n      storage: 1Gi\n",
        )
        .unwrap();
        LoadedVolumes::load(&VolumeTemplates {
            volume: pv,
            claim: pvc,
            missing: None,
        })
        .unwrap()
    }

    #[test]
    fn names_handles_and_references_follow_upstreams_factory() {
        let ebs = loaded(
            "apiVersion: v1\nkind: PersistentVolume\nspec:\n  accessModes:\n  - ReadOnlyMany\n  \
             awsElasticBlockStore:\n    volumeID: <volume-id>\n  capacity:\n    storage: 1Gi\n",
        );
        let (pvc, pv) = ebs.objects("ns-1", 3);
        assert_eq!(pvc.metadata.name.as_deref(), Some("pvc-3"));
        assert_eq!(
            pvc.spec.as_ref().unwrap().volume_name.as_deref(),
            Some("ns-1-vol-3")
        );
        assert_eq!(pv.metadata.name.as_deref(), Some("ns-1-vol-3"));
        let spec = pv.spec.unwrap();
        // The EBS id is not namespaced: upstream sets it before the rename.
        assert_eq!(spec.aws_elastic_block_store.unwrap().volume_id, "vol-3");
        let r = spec.claim_ref.unwrap();
        assert_eq!(
            (r.namespace.as_deref(), r.name.as_deref(), r.uid),
            (Some("ns-1"), Some("pvc-3"), None)
        );
        let csi = loaded(
            "apiVersion: v1\nkind: PersistentVolume\nspec:\n  accessModes:\n  - ReadOnlyMany\n  \
             csi:\n    driver: ebs.csi.aws.com\n  capacity:\n    storage: 1Gi\n",
        );
        let (_, pv) = csi.objects("ns-1", 3);
        assert_eq!(pv.spec.unwrap().csi.unwrap().volume_handle, "ns-1-vol-3");
    }

    #[test]
    fn the_pods_volumes_are_replaced_by_the_claim() {
        let pod: core::Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "i"}],
                     "volumes": [{"name": "s", "secret": {"secretName": "x"}}]}
        }))
        .unwrap();
        let (pod, spec) = with_claim(&pod, "pvc-7").unwrap();
        let vols = pod.spec.as_ref().unwrap().volumes.as_ref().unwrap();
        assert_eq!(vols.len(), 1);
        assert_eq!(vols[0].name, "vol");
        assert_eq!(
            vols[0].persistent_volume_claim.as_ref().unwrap().claim_name,
            "pvc-7"
        );
        assert_eq!(spec.volumes.len(), 1);
    }
}
