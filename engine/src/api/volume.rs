//! Volumes at the API boundary (issue 35): the objects kube-scheduler's four volume plugins
//! read, in the compact form they read them.
//!
//! - [`PodVolume`]: a pod's volume as VolumeRestrictions, VolumeZone, NodeVolumeLimits and
//!   VolumeBinding see it (a claim, a generic ephemeral volume, an in-tree disk, an inline CSI
//!   volume, or something none of them reads);
//! - [`PersistentVolume`], [`PersistentVolumeClaim`], [`StorageClass`], [`CsiNode`],
//!   [`CsiDriver`]: converted from k8s-openapi's types in [`super::volume_convert`]. The
//!   embedder's store validated them (kube's API server rules); conversion only reads.
//!
//! Names follow kube's (`pkg/apis/core/types.go`, `pkg/apis/storage/types.go`).

use super::{Labels, NodeSelector, Quantity, Sym};
use k8s_openapi::api::core::v1 as core;
use std::sync::Arc;

/// A set of access modes (`spec.accessModes`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AccessModes(u8);

impl AccessModes {
    pub const READ_WRITE_ONCE: AccessModes = AccessModes(1);
    pub const READ_ONLY_MANY: AccessModes = AccessModes(2);
    pub const READ_WRITE_MANY: AccessModes = AccessModes(4);
    pub const READ_WRITE_ONCE_POD: AccessModes = AccessModes(8);

    /// The modes named in `modes` (an unknown name adds nothing: the store refused it).
    pub fn parse<'a>(modes: impl IntoIterator<Item = &'a str>) -> AccessModes {
        AccessModes(modes.into_iter().fold(0, |bits, m| {
            bits | match m {
                "ReadWriteOnce" => 1,
                "ReadOnlyMany" => 2,
                "ReadWriteMany" => 4,
                "ReadWriteOncePod" => 8,
                _ => 0,
            }
        }))
    }

    /// Whether every mode of `other` is in `self`.
    pub fn contains(self, other: AccessModes) -> bool {
        self.0 & other.0 == other.0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// An in-tree disk, inline in a pod or the source of a PersistentVolume: what
/// VolumeRestrictions compares and NodeVolumeLimits translates to CSI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InTreeDisk {
    GcePersistentDisk {
        pd_name: Arc<str>,
        read_only: bool,
    },
    AwsElasticBlockStore {
        volume_id: Arc<str>,
        read_only: bool,
    },
    Rbd {
        monitors: Arc<[Arc<str>]>,
        pool: Arc<str>,
        image: Arc<str>,
        read_only: bool,
    },
    Iscsi {
        iqn: Arc<str>,
        read_only: bool,
    },
    AzureDisk {
        disk_name: Arc<str>,
        /// `diskURI`: the CSI volume handle after translation.
        disk_uri: Arc<str>,
        /// `kind` is unset or `Managed` (the only kind CSI migration translates).
        managed: bool,
    },
    Cinder {
        volume_id: Arc<str>,
    },
    PortworxVolume {
        volume_id: Arc<str>,
    },
}

/// A pod's volume, as the volume plugins read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PodVolumeSource {
    /// `persistentVolumeClaim`.
    Claim {
        claim_name: Arc<str>,
        read_only: bool,
    },
    /// A generic ephemeral volume: its claim is `<pod name>-<volume name>`.
    Ephemeral,
    /// An in-tree disk inline in the pod.
    Disk(InTreeDisk),
    /// An inline CSI volume (`csi`).
    Csi { driver: Sym },
    /// A source no volume plugin reads (ConfigMap, Secret, emptyDir, hostPath, ...).
    Other,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodVolume {
    pub name: Arc<str>,
    pub source: PodVolumeSource,
}

pub(super) fn text(s: &Option<String>) -> Arc<str> {
    Arc::from(s.as_deref().unwrap_or(""))
}

pub(super) fn gce(v: &core::GCEPersistentDiskVolumeSource) -> InTreeDisk {
    InTreeDisk::GcePersistentDisk {
        pd_name: Arc::from(v.pd_name.as_str()),
        read_only: v.read_only.unwrap_or(false),
    }
}

pub(super) fn ebs(v: &core::AWSElasticBlockStoreVolumeSource) -> InTreeDisk {
    InTreeDisk::AwsElasticBlockStore {
        volume_id: Arc::from(v.volume_id.as_str()),
        read_only: v.read_only.unwrap_or(false),
    }
}

pub(super) fn azure_disk(name: &str, uri: &str, kind: Option<&str>) -> InTreeDisk {
    InTreeDisk::AzureDisk {
        disk_name: Arc::from(name),
        disk_uri: Arc::from(uri),
        managed: kind.is_none_or(|k| k.eq_ignore_ascii_case("Managed")),
    }
}

pub(super) fn rbd(
    monitors: &[String],
    pool: &Option<String>,
    image: &str,
    ro: Option<bool>,
) -> InTreeDisk {
    InTreeDisk::Rbd {
        monitors: monitors.iter().map(|m| Arc::from(m.as_str())).collect(),
        // kube defaults the pool to "rbd".
        pool: Arc::from(pool.as_deref().unwrap_or("rbd")),
        image: Arc::from(image),
        read_only: ro.unwrap_or(false),
    }
}

/// A pod's `spec.volumes` entry.
pub fn pod_volume(v: &core::Volume) -> PodVolume {
    let source = if let Some(c) = &v.persistent_volume_claim {
        PodVolumeSource::Claim {
            claim_name: Arc::from(c.claim_name.as_str()),
            read_only: c.read_only.unwrap_or(false),
        }
    } else if v.ephemeral.is_some() {
        PodVolumeSource::Ephemeral
    } else if let Some(g) = &v.gce_persistent_disk {
        PodVolumeSource::Disk(gce(g))
    } else if let Some(a) = &v.aws_elastic_block_store {
        PodVolumeSource::Disk(ebs(a))
    } else if let Some(r) = &v.rbd {
        PodVolumeSource::Disk(rbd(&r.monitors, &r.pool, &r.image, r.read_only))
    } else if let Some(i) = &v.iscsi {
        PodVolumeSource::Disk(InTreeDisk::Iscsi {
            iqn: Arc::from(i.iqn.as_str()),
            read_only: i.read_only.unwrap_or(false),
        })
    } else if let Some(a) = &v.azure_disk {
        PodVolumeSource::Disk(azure_disk(&a.disk_name, &a.disk_uri, a.kind.as_deref()))
    } else if let Some(c) = &v.cinder {
        PodVolumeSource::Disk(InTreeDisk::Cinder {
            volume_id: Arc::from(c.volume_id.as_str()),
        })
    } else if let Some(p) = &v.portworx_volume {
        PodVolumeSource::Disk(InTreeDisk::PortworxVolume {
            volume_id: Arc::from(p.volume_id.as_str()),
        })
    } else if let Some(c) = &v.csi {
        PodVolumeSource::Csi {
            driver: Sym::new(&c.driver),
        }
    } else {
        PodVolumeSource::Other
    };
    PodVolume {
        name: Arc::from(v.name.as_str()),
        source,
    }
}

/// A PersistentVolume's source, as the plugins read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PvSource {
    Csi {
        driver: Sym,
        volume_handle: Arc<str>,
    },
    Disk(InTreeDisk),
    Other,
}

/// A PersistentVolume's in-tree source as its CSI driver sees it (`TranslateInTreePVToCSI`;
/// made by [`super::csi_translation`] at conversion).
#[derive(Clone, Debug, PartialEq)]
pub struct CsiTranslation {
    pub driver: Sym,
    pub volume_handle: Arc<str>,
    /// The volume's required node affinity with its zones under the driver's key.
    pub node_affinity: Option<NodeSelector>,
}

/// `spec.claimRef`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimRef {
    pub namespace: Sym,
    pub name: Arc<str>,
    /// Empty when the reference carries none (scheduler_perf's pre-bound volumes).
    pub uid: Arc<str>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PersistentVolume {
    pub name: Sym,
    /// `metadata.resourceVersion` (VolumeBinding's assume cache compares it).
    pub resource_version: Arc<str>,
    pub labels: Labels,
    pub capacity: Quantity,
    pub access_modes: AccessModes,
    /// `spec.storageClassName` (kube's `GetPersistentVolumeClass`, the beta annotation first).
    pub storage_class: Arc<str>,
    pub claim_ref: Option<ClaimRef>,
    pub node_affinity: Option<NodeSelector>,
    pub source: PvSource,
    /// `spec.volumeMode` is Block (Filesystem otherwise).
    pub block: bool,
    /// `status.phase`.
    pub phase: Arc<str>,
    /// `spec.volumeAttributesClassName` ("" when unset).
    pub volume_attributes_class: Arc<str>,
    pub deleting: bool,
    /// An in-tree source kube can translate, as its CSI driver sees it (the error text when
    /// the translation fails); `None` for CSI and untranslatable sources.
    pub csi: Option<Result<Arc<CsiTranslation>, Arc<str>>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PersistentVolumeClaim {
    pub namespace: Sym,
    pub name: Arc<str>,
    /// `metadata.resourceVersion` (VolumeBinding's assume cache compares it).
    pub resource_version: Arc<str>,
    pub uid: Arc<str>,
    pub access_modes: AccessModes,
    /// kube's `GetPersistentVolumeClaimClass`: the beta annotation, else `storageClassName`
    /// ("" when neither).
    pub storage_class: Arc<str>,
    /// `spec.volumeName` ("" when unbound).
    pub volume_name: Arc<str>,
    /// The same, interned (the PV lister's key; empty when unbound).
    pub volume: Sym,
    /// `spec.resources.requests[storage]` (zero when unset; see `has_request`).
    pub request: Quantity,
    pub has_request: bool,
    /// `spec.selector` over volumes' labels.
    pub selector: Option<super::LabelSelector>,
    /// `spec.volumeAttributesClassName` ("" when unset).
    pub volume_attributes_class: Arc<str>,
    /// `status.phase` is `Lost`.
    pub lost: bool,
    /// The annotation `volume.kubernetes.io/selected-node`.
    pub selected_node: Option<Sym>,
    /// The annotation `pv.kubernetes.io/bind-completed` is present.
    pub bind_completed: bool,
    /// The UID of the controlling owner (`metadata.ownerReferences[controller=true]`): a
    /// generic ephemeral volume's claim must be the pod's.
    pub controller_uid: Option<Arc<str>>,
    pub block: bool,
    pub deleting: bool,
}

/// `volumeBindingMode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VolumeBindingMode {
    Immediate,
    WaitForFirstConsumer,
}

#[derive(Clone, Debug, PartialEq)]
pub struct StorageClass {
    pub name: Arc<str>,
    pub provisioner: Arc<str>,
    /// `None` when unset (VolumeZone reports that).
    pub binding_mode: Option<VolumeBindingMode>,
    /// `allowedTopologies` as a node selector (`None`: any node).
    pub allowed_topologies: Option<NodeSelector>,
}

/// One driver of a CSINode (`spec.drivers[]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsiNodeDriver {
    pub name: Sym,
    pub node_id: Arc<str>,
    /// `allocatable.count`: the most volumes of this driver the node can attach.
    pub count: Option<i32>,
    pub topology_keys: Arc<[Arc<str>]>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsiNode {
    pub name: Sym,
    pub drivers: Vec<CsiNodeDriver>,
    /// The in-tree plugins migrated on the node (annotation
    /// `storage.alpha.kubernetes.io/migrated-plugins`, comma-separated).
    pub migrated_plugins: Vec<Sym>,
}

/// The annotation naming the in-tree plugins migrated to CSI on a node.
pub const MIGRATED_PLUGINS: &str = "storage.alpha.kubernetes.io/migrated-plugins";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsiDriver {
    pub name: Sym,
    pub attach_required: bool,
    /// `spec.storageCapacity`: VolumeBinding checks CSIStorageCapacity objects for it.
    pub storage_capacity: bool,
    /// `spec.preventPodSchedulingIfMissing` (VolumeLimitScaling): a pod using the driver
    /// fits only nodes whose CSINode lists it.
    pub prevent_pod_scheduling_if_missing: bool,
}

/// A VolumeAttachment, as NodeVolumeLimits counts it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VolumeAttachment {
    pub name: Arc<str>,
    pub attacher: Sym,
    pub node_name: Sym,
    /// `spec.source.persistentVolumeName`.
    pub persistent_volume: Option<Sym>,
}

/// A CSIStorageCapacity, as VolumeBinding's capacity check reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct CsiStorageCapacity {
    pub namespace: Sym,
    pub name: Arc<str>,
    pub storage_class: Arc<str>,
    pub capacity: Option<Quantity>,
    pub maximum_volume_size: Option<Quantity>,
    /// `nodeTopology` (`None`: matches no node).
    pub node_topology: Option<super::LabelSelector>,
}

impl CsiStorageCapacity {
    /// kube's limit: `maximumVolumeSize` when set, else `capacity`.
    pub fn limit(&self) -> Option<Quantity> {
        self.maximum_volume_size.or(self.capacity)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_pods_volumes_are_read_as_the_plugins_read_them() {
        let v = |j: serde_json::Value| pod_volume(&serde_json::from_value(j).unwrap()).source;
        assert_eq!(
            v(json!({"name": "a", "persistentVolumeClaim": {"claimName": "pvc-0"}})),
            PodVolumeSource::Claim {
                claim_name: "pvc-0".into(),
                read_only: false
            }
        );
        assert_eq!(
            v(json!({"name": "b", "rbd": {"monitors": ["m1"], "image": "i"}})),
            PodVolumeSource::Disk(InTreeDisk::Rbd {
                monitors: vec![Arc::from("m1")].into(),
                pool: "rbd".into(),
                image: "i".into(),
                read_only: false
            })
        );
        assert_eq!(
            v(json!({"name": "c", "secret": {"secretName": "s"}})),
            PodVolumeSource::Other
        );
        assert_eq!(
            v(json!({"name": "d", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}})),
            PodVolumeSource::Ephemeral
        );
    }
}
