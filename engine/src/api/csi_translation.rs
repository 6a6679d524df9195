//! In-tree volumes as their CSI drivers see them: the part of kube's `csi-translation-lib`
//! (v0.37.2, `translate.go`, `plugins/*.go`) that the volume plugins read, the driver name and
//! the volume handle. NodeVolumeLimits counts a migrated in-tree volume under
//! `<driver>/<handle>`, so two pods naming the same disk count it once.
//!
//! Which plugins are migrated is not configurable in kube v1.37: NodeVolumeLimits treats
//! aws-ebs, gce-pd, azure-disk, cinder and portworx as migrated on every node that has a
//! CSINode ([`migration_on`]); VolumeBinding also wants the node's CSINode to list the plugin
//! in its `storage.alpha.kubernetes.io/migrated-plugins` annotation.

use crate::api::volume::{CsiNode, InTreeDisk};
use crate::api::{Labels, Sym};
use std::sync::Arc;

pub const AWS_EBS_PLUGIN: &str = "kubernetes.io/aws-ebs";
pub const GCE_PD_PLUGIN: &str = "kubernetes.io/gce-pd";
pub const AZURE_DISK_PLUGIN: &str = "kubernetes.io/azure-disk";
pub const CINDER_PLUGIN: &str = "kubernetes.io/cinder";
pub const PORTWORX_PLUGIN: &str = "kubernetes.io/portworx-volume";

/// The CSI driver an in-tree plugin (or a StorageClass provisioner naming one) migrates to
/// (`GetCSINameFromInTreeName`): also azure-file and vsphere-volume, which kube can
/// translate but never counts as migrated.
pub fn csi_driver_of(plugin: &str) -> Option<&'static str> {
    Some(match plugin {
        AWS_EBS_PLUGIN => "ebs.csi.aws.com",
        GCE_PD_PLUGIN => "pd.csi.storage.gke.io",
        AZURE_DISK_PLUGIN => "disk.csi.azure.com",
        CINDER_PLUGIN => "cinder.csi.openstack.org",
        PORTWORX_PLUGIN => "pxd.portworx.com",
        "kubernetes.io/azure-file" => "file.csi.azure.com",
        "kubernetes.io/vsphere-volume" => "csi.vsphere.vmware.com",
        _ => return None,
    })
}

/// The in-tree plugin of a disk kube can translate (`GetInTreePluginNameFromSpec`); RBD and
/// ISCSI have no translation.
pub fn plugin_of(disk: &InTreeDisk) -> Option<&'static str> {
    Some(match disk {
        InTreeDisk::AwsElasticBlockStore { .. } => AWS_EBS_PLUGIN,
        InTreeDisk::GcePersistentDisk { .. } => GCE_PD_PLUGIN,
        InTreeDisk::AzureDisk { .. } => AZURE_DISK_PLUGIN,
        InTreeDisk::Cinder { .. } => CINDER_PLUGIN,
        InTreeDisk::PortworxVolume { .. } => PORTWORX_PLUGIN,
        InTreeDisk::Rbd { .. } | InTreeDisk::Iscsi { .. } => return None,
    })
}

/// The in-tree plugin's name interned (interned once: no lookup on the Filter path).
pub fn plugin_sym(plugin: &'static str) -> Sym {
    static SYMS: std::sync::OnceLock<[(&'static str, Sym); 5]> = std::sync::OnceLock::new();
    let syms = SYMS.get_or_init(|| {
        [
            AWS_EBS_PLUGIN,
            GCE_PD_PLUGIN,
            AZURE_DISK_PLUGIN,
            CINDER_PLUGIN,
            PORTWORX_PLUGIN,
        ]
        .map(|p| (p, Sym::new(p)))
    });
    syms.iter()
        .find(|(p, _)| *p == plugin)
        .map_or_else(|| Sym::new(plugin), |(_, s)| *s)
}

/// NodeVolumeLimits' `isCSIMigrationOn`: the node has a CSINode and the plugin is one of the
/// five kube v1.37 migrates unconditionally (the annotation is not read).
pub fn migration_on(csi_node: Option<&CsiNode>, plugin: &str) -> bool {
    csi_node.is_some()
        && matches!(
            plugin,
            AWS_EBS_PLUGIN | GCE_PD_PLUGIN | AZURE_DISK_PLUGIN | CINDER_PLUGIN | PORTWORX_PLUGIN
        )
}

/// The zonal topology key of the CSI driver an in-tree plugin migrates to, for the plugins
/// whose PersistentVolume translation moves zones into it (`translateTopologyFromInTreeToCSI`:
/// aws-ebs, gce-pd, cinder).
pub fn csi_topology_key(plugin: &str) -> Option<&'static str> {
    Some(match plugin {
        AWS_EBS_PLUGIN => "topology.ebs.csi.aws.com/zone",
        GCE_PD_PLUGIN => "topology.gke.io/zone",
        CINDER_PLUGIN => "topology.cinder.csi.openstack.org/zone",
        _ => return None,
    })
}

/// How many volumes a pod's `volumes` can hold attached at most (one per named claim, one
/// per inline in-tree disk kube translates), when reading them cannot fail; `None` when some
/// volume's reading may fail (an ephemeral volume's claim, a claim without a name, an inline
/// disk whose translation fails: it depends on nothing but the disk, so it is tried here).
pub fn attach_bound(volumes: &[crate::api::volume::PodVolume]) -> Option<u32> {
    use crate::api::volume::PodVolumeSource as S;
    let mut n = 0;
    for v in volumes {
        match &v.source {
            S::Claim { claim_name, .. } if !claim_name.is_empty() => n += 1,
            S::Claim { .. } | S::Ephemeral => return None,
            S::Disk(d) if plugin_of(d).is_some() => {
                volume_handle(d, None).ok()?;
                n += 1;
            }
            _ => {}
        }
    }
    Some(n)
}

/// kube's `KubernetesVolumeIDToEBSVolumeID`: `aws://<zone>/<id>`, `aws:///<id>` or a bare id.
fn ebs_volume_id(id: &str) -> Result<Arc<str>, String> {
    let Some(rest) = id.strip_prefix("aws://") else {
        return Ok(Arc::from(id));
    };
    // The URL's path: what follows the host, trimmed of slashes.
    let path = rest.find('/').map_or("", |i| &rest[i..]).trim_matches('/');
    if path.starts_with("vol-") && !path.contains('/') {
        Ok(Arc::from(path))
    } else {
        Err(format!(
            "failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume ({id})"
        ))
    }
}

/// kube's `gceGetRegionFromZones`: every zone `{locale}-{region}-{zone}` of one region.
fn gce_region(zones: &[&str]) -> Result<String, String> {
    let mut region: Option<String> = None;
    for z in zones {
        let parts: Vec<&str> = z.split('-').collect();
        if parts.len() != 3 {
            return Err(format!(
                "zone in unexpected format, expected: {{locale}}-{{region}}-{{zone}}, got: {z}"
            ));
        }
        let r = parts[..2].join("-");
        match &region {
            Some(prev) if *prev != r => {
                return Err("multiple or no regions gotten from zones".into());
            }
            _ => region = Some(r),
        }
    }
    region.ok_or_else(|| "no zones specified".into())
}

/// The CSI volume handle of a translated disk. `pv_labels` is `Some` for a PersistentVolume's
/// source (GCE PD takes its zone from them) and `None` for an inline volume.
pub fn volume_handle(disk: &InTreeDisk, pv_labels: Option<&Labels>) -> Result<Arc<str>, String> {
    match disk {
        InTreeDisk::AwsElasticBlockStore { volume_id, .. } => ebs_volume_id(volume_id),
        InTreeDisk::GcePersistentDisk { pd_name, .. } => {
            const UNSPECIFIED: &str = "UNSPECIFIED";
            let label = |l: &Labels, k: &str| l.get(Sym::new(k)).map(Sym::as_arc);
            let zones = pv_labels
                .and_then(|l| {
                    label(l, "failure-domain.beta.kubernetes.io/zone")
                        .filter(|z| !z.is_empty())
                        .or_else(|| label(l, "topology.kubernetes.io/zone"))
                })
                .unwrap_or_else(|| Arc::from(""));
            let zones: Vec<&str> = zones.split("__").collect();
            Ok(Arc::from(match zones.as_slice() {
                [z] if !z.is_empty() => format!("projects/{UNSPECIFIED}/zones/{z}/disks/{pd_name}"),
                [_, _, ..] => format!(
                    "projects/{UNSPECIFIED}/regions/{}/disks/{pd_name}",
                    gce_region(&zones)
                        .map_err(|e| format!("failed to get region from zones: {e}"))?
                ),
                _ => format!("projects/{UNSPECIFIED}/zones/{UNSPECIFIED}/disks/{pd_name}"),
            }))
        }
        InTreeDisk::AzureDisk {
            disk_uri, managed, ..
        } => {
            if *managed {
                Ok(disk_uri.clone())
            } else {
                Err("kind is not supported in csi migration".into())
            }
        }
        InTreeDisk::Cinder { volume_id } | InTreeDisk::PortworxVolume { volume_id } => {
            Ok(volume_id.clone())
        }
        InTreeDisk::Rbd { .. } | InTreeDisk::Iscsi { .. } => Err("no CSI translation".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Provenance: k8s.io/csi-translation-lib plugins/aws_ebs_test.go
    // (TestKubernetesVolumeIDToEBSVolumeID) and plugins/gce_pd_test.go (TestTranslatePDInTreeStorageClassToCSI's
    // handles, zonal and regional).
    #[test]
    fn ebs_ids_translate_as_kubes_library_does() {
        assert_eq!(&*ebs_volume_id("vol-123").unwrap(), "vol-123");
        assert_eq!(
            &*ebs_volume_id("aws://us-east-1a/vol-123").unwrap(),
            "vol-123"
        );
        assert_eq!(&*ebs_volume_id("aws:///vol-123").unwrap(), "vol-123");
        assert!(ebs_volume_id("aws://us-east-1a/disk-123").is_err());
        assert!(ebs_volume_id("aws://us-east-1a/").is_err());
    }

    #[test]
    fn gce_handles_take_the_zone_or_region_from_the_labels() {
        let disk = InTreeDisk::GcePersistentDisk {
            pd_name: "pd".into(),
            read_only: false,
        };
        let labels = |z: &str| Labels::from_pairs([("topology.kubernetes.io/zone", z)]);
        let h = |l: Option<&Labels>| volume_handle(&disk, l).map(|h| h.to_string());
        assert_eq!(
            h(None).unwrap(),
            "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/pd"
        );
        assert_eq!(
            h(Some(&labels("us-central1-a"))).unwrap(),
            "projects/UNSPECIFIED/zones/us-central1-a/disks/pd"
        );
        assert_eq!(
            h(Some(&labels("us-central1-a__us-central1-b"))).unwrap(),
            "projects/UNSPECIFIED/regions/us-central1/disks/pd"
        );
        assert!(h(Some(&labels("us-central1-a__europe-west1-b"))).is_err());
    }

    #[test]
    fn only_five_plugins_migrate_and_only_with_a_csi_node() {
        let node = CsiNode {
            name: Sym::new("n"),
            drivers: vec![],
            migrated_plugins: vec![],
        };
        assert!(migration_on(Some(&node), AWS_EBS_PLUGIN));
        assert!(!migration_on(None, AWS_EBS_PLUGIN));
        assert!(!migration_on(Some(&node), "kubernetes.io/azure-file"));
        assert_eq!(
            csi_driver_of("kubernetes.io/azure-file"),
            Some("file.csi.azure.com")
        );
    }
}
