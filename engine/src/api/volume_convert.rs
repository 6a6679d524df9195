//! Volume objects from k8s-openapi's types into [`super::volume`]'s forms (the store validated
//! them; this only reads).

use super::Labels;
use super::Quantity;
use super::Sym;
use super::convert::{ConvertError, invalid, label_selector, node_selector};
use super::csi_translation;
use super::volume::*;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::storage::v1 as storage;
use std::sync::Arc;

/// The beta annotation kube reads before `storageClassName` (`GetPersistentVolumeClass`).
const BETA_CLASS: &str = "volume.beta.kubernetes.io/storage-class";

fn class_of(
    m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    spec: Option<&str>,
) -> Arc<str> {
    let beta = m.annotations.as_ref().and_then(|a| a.get(BETA_CLASS));
    Arc::from(beta.map(String::as_str).or(spec).unwrap_or(""))
}

fn labels_of(m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> Labels {
    Labels::from_pairs(
        m.labels
            .iter()
            .flatten()
            .map(|(k, v)| (k.as_str(), v.as_str())),
    )
}

fn storage_of(
    q: Option<&k8s_openapi::apimachinery::pkg::api::resource::Quantity>,
    path: &str,
) -> Result<Quantity, ConvertError> {
    match q {
        None => Ok(Quantity::ZERO),
        Some(q) => Quantity::parse(&q.0).map_err(|e| invalid(path.into(), &q.0, e.to_string())),
    }
}

/// A PersistentVolume in the scheduler's form.
pub fn persistent_volume(pv: &core::PersistentVolume) -> Result<PersistentVolume, ConvertError> {
    let spec = pv.spec.clone().unwrap_or_default();
    let source = if let Some(c) = &spec.csi {
        PvSource::Csi {
            driver: Sym::new(&c.driver),
            volume_handle: Arc::from(c.volume_handle.as_str()),
        }
    } else if let Some(g) = &spec.gce_persistent_disk {
        PvSource::Disk(gce(g))
    } else if let Some(a) = &spec.aws_elastic_block_store {
        PvSource::Disk(ebs(a))
    } else if let Some(r) = &spec.rbd {
        PvSource::Disk(rbd(&r.monitors, &r.pool, &r.image, r.read_only))
    } else if let Some(i) = &spec.iscsi {
        PvSource::Disk(InTreeDisk::Iscsi {
            iqn: Arc::from(i.iqn.as_str()),
            read_only: i.read_only.unwrap_or(false),
        })
    } else if let Some(a) = &spec.azure_disk {
        PvSource::Disk(azure_disk(&a.disk_name, &a.disk_uri, a.kind.as_deref()))
    } else if let Some(c) = &spec.cinder {
        PvSource::Disk(InTreeDisk::Cinder {
            volume_id: Arc::from(c.volume_id.as_str()),
        })
    } else if let Some(p) = &spec.portworx_volume {
        PvSource::Disk(InTreeDisk::PortworxVolume {
            volume_id: Arc::from(p.volume_id.as_str()),
        })
    } else {
        PvSource::Other
    };
    let node_affinity = spec
        .node_affinity
        .as_ref()
        .and_then(|a| a.required.as_ref())
        .map(|r| node_selector(r, "spec.nodeAffinity.required"))
        .transpose()?;
    let csi = match &source {
        PvSource::Disk(d) => csi_translation::plugin_of(d).map(|plugin| {
            translate(pv, &spec, d, plugin)
                .map(Arc::new)
                .map_err(Arc::from)
        }),
        _ => None,
    };
    Ok(PersistentVolume {
        name: Sym::new(pv.metadata.name.as_deref().unwrap_or("")),
        resource_version: text(&pv.metadata.resource_version),
        labels: labels_of(&pv.metadata),
        capacity: storage_of(
            spec.capacity.as_ref().and_then(|c| c.get("storage")),
            "spec.capacity[storage]",
        )?,
        access_modes: AccessModes::parse(spec.access_modes.iter().flatten().map(String::as_str)),
        storage_class: class_of(&pv.metadata, spec.storage_class_name.as_deref()),
        claim_ref: spec.claim_ref.as_ref().map(|r| ClaimRef {
            namespace: Sym::new(r.namespace.as_deref().unwrap_or("")),
            name: text(&r.name),
            uid: text(&r.uid),
        }),
        node_affinity,
        source,
        block: spec.volume_mode.as_deref() == Some("Block"),
        phase: pv
            .status
            .as_ref()
            .map_or_else(|| Arc::from(""), |s| text(&s.phase)),
        volume_attributes_class: text(&spec.volume_attributes_class_name),
        deleting: pv.metadata.deletion_timestamp.is_some(),
        csi,
    })
}

/// kube's `TranslateInTreePVToCSI` for what the scheduler reads: the driver, the handle, and
/// the node affinity with the volume's zones moved to the driver's topology key
/// (`translateTopologyFromInTreeToCSI`, `csi-translation-lib` v0.37.2 `plugins/in_tree_volume.go`).
fn translate(
    pv: &core::PersistentVolume,
    spec: &core::PersistentVolumeSpec,
    disk: &InTreeDisk,
    plugin: &str,
) -> Result<CsiTranslation, String> {
    let labels = labels_of(&pv.metadata);
    let volume_handle = csi_translation::volume_handle(disk, Some(&labels))?;
    let driver = Sym::new(csi_translation::csi_driver_of(plugin).unwrap_or_default());
    let mut required = spec.node_affinity.as_ref().and_then(|a| a.required.clone());
    if let Some(key) = csi_translation::csi_topology_key(plugin) {
        move_zones(&mut required, pv.metadata.labels.as_ref(), key);
    }
    let node_affinity = required
        .as_ref()
        .map(|r| node_selector(r, "spec.nodeAffinity.required"))
        .transpose()
        .map_err(|e| e.to_string())?;
    Ok(CsiTranslation {
        driver,
        volume_handle,
        node_affinity,
    })
}

/// `translateTopologyFromInTreeToCSI` over a required node selector.
fn move_zones(
    required: &mut Option<core::NodeSelector>,
    labels: Option<&std::collections::BTreeMap<String, String>>,
    csi_key: &str,
) {
    const ZONE: &str = "topology.kubernetes.io/zone";
    const BETA_ZONE: &str = "failure-domain.beta.kubernetes.io/zone";
    const BETA_REGION: &str = "failure-domain.beta.kubernetes.io/region";
    let has_key = |r: &Option<core::NodeSelector>, key: &str| {
        r.iter()
            .flat_map(|s| &s.node_selector_terms)
            .flat_map(|t| t.match_expressions.iter().flatten())
            .any(|e| e.key == key)
    };
    // `getTopologyValues`: a requirement on the key with values.
    let has_values = |r: &Option<core::NodeSelector>, key: &str| {
        r.iter()
            .flat_map(|s| &s.node_selector_terms)
            .flat_map(|t| t.match_expressions.iter().flatten())
            .any(|e| e.key == key && e.values.as_ref().is_some_and(|v| !v.is_empty()))
    };
    let label = |k: &str| labels.and_then(|l| l.get(k));
    let zone_key = if has_key(required, ZONE) {
        ZONE
    } else if has_key(required, BETA_ZONE) {
        BETA_ZONE
    } else if label(ZONE).is_some() {
        ZONE
    } else if label(BETA_ZONE).is_some() {
        BETA_ZONE
    } else {
        ZONE
    };
    let rename = |r: &mut Option<core::NodeSelector>, from: &str, to: &str| {
        for t in r.iter_mut().flat_map(|s| s.node_selector_terms.iter_mut()) {
            for e in t.match_expressions.iter_mut().flatten() {
                if e.key == from {
                    e.key = to.to_string();
                }
            }
        }
    };
    if has_values(required, zone_key) {
        rename(required, zone_key, csi_key);
    } else if let Some(v) = label(zone_key) {
        let zones: std::collections::BTreeSet<&str> = v
            .split("__")
            .map(str::trim)
            .filter(|z| !z.is_empty())
            .collect();
        if !zones.is_empty() {
            let r = required.get_or_insert_with(Default::default);
            if r.node_selector_terms.is_empty() {
                r.node_selector_terms.push(Default::default());
            }
            for t in &mut r.node_selector_terms {
                t.match_expressions.get_or_insert_with(Vec::new).push(
                    core::NodeSelectorRequirement {
                        key: csi_key.to_string(),
                        operator: "In".into(),
                        values: Some(zones.iter().map(|z| z.to_string()).collect()),
                    },
                );
            }
        }
    }
    if zone_key == BETA_ZONE && has_values(required, BETA_REGION) {
        rename(required, BETA_REGION, "topology.kubernetes.io/region");
    }
}

/// A PersistentVolumeClaim in the scheduler's form.
pub fn persistent_volume_claim(
    c: &core::PersistentVolumeClaim,
) -> Result<PersistentVolumeClaim, ConvertError> {
    let spec = c.spec.clone().unwrap_or_default();
    let annotation = |k: &str| c.metadata.annotations.as_ref().and_then(|a| a.get(k));
    Ok(PersistentVolumeClaim {
        namespace: Sym::new(c.metadata.namespace.as_deref().unwrap_or("")),
        name: text(&c.metadata.name),
        resource_version: text(&c.metadata.resource_version),
        uid: text(&c.metadata.uid),
        access_modes: AccessModes::parse(spec.access_modes.iter().flatten().map(String::as_str)),
        storage_class: class_of(&c.metadata, spec.storage_class_name.as_deref()),
        volume_name: text(&spec.volume_name),
        volume: Sym::new(spec.volume_name.as_deref().unwrap_or("")),
        request: storage_of(
            spec.resources
                .as_ref()
                .and_then(|r| r.requests.as_ref())
                .and_then(|r| r.get("storage")),
            "spec.resources[storage]",
        )?,
        selected_node: annotation("volume.kubernetes.io/selected-node").map(|n| Sym::new(n)),
        bind_completed: annotation("pv.kubernetes.io/bind-completed").is_some(),
        has_request: spec
            .resources
            .as_ref()
            .and_then(|r| r.requests.as_ref())
            .is_some_and(|r| r.contains_key("storage")),
        selector: spec
            .selector
            .as_ref()
            .map(|s| label_selector(s, "spec.selector"))
            .transpose()?,
        volume_attributes_class: text(&spec.volume_attributes_class_name),
        lost: c.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Lost"),
        controller_uid: (c.metadata.owner_references.iter().flatten())
            .find(|r| r.controller == Some(true))
            .map(|r| Arc::from(r.uid.as_str())),
        block: spec.volume_mode.as_deref() == Some("Block"),
        deleting: c.metadata.deletion_timestamp.is_some(),
    })
}

/// A StorageClass in the scheduler's form.
pub fn storage_class(s: &storage::StorageClass) -> Result<StorageClass, ConvertError> {
    let allowed_topologies = match s.allowed_topologies.as_deref() {
        None | Some([]) => None,
        Some(terms) => {
            // A topology term is a node selector term of `In` requirements.
            let sel = core::NodeSelector {
                node_selector_terms: terms
                    .iter()
                    .map(|t| core::NodeSelectorTerm {
                        match_expressions: Some(
                            t.match_label_expressions
                                .iter()
                                .flatten()
                                .map(|e| core::NodeSelectorRequirement {
                                    key: e.key.clone(),
                                    operator: "In".into(),
                                    values: Some(e.values.clone()),
                                })
                                .collect(),
                        ),
                        match_fields: None,
                    })
                    .collect(),
            };
            Some(node_selector(&sel, "allowedTopologies")?)
        }
    };
    Ok(StorageClass {
        name: text(&s.metadata.name),
        provisioner: Arc::from(s.provisioner.as_str()),
        binding_mode: match s.volume_binding_mode.as_deref() {
            Some("WaitForFirstConsumer") => Some(VolumeBindingMode::WaitForFirstConsumer),
            Some("Immediate") => Some(VolumeBindingMode::Immediate),
            _ => None,
        },
        allowed_topologies,
    })
}

/// A CSINode in the scheduler's form.
pub fn csi_node(n: &storage::CSINode) -> CsiNode {
    let migrated = n
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(MIGRATED_PLUGINS))
        .map(|v| {
            v.split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(Sym::new)
                .collect()
        })
        .unwrap_or_default();
    CsiNode {
        name: Sym::new(n.metadata.name.as_deref().unwrap_or("")),
        drivers: n
            .spec
            .drivers
            .iter()
            .map(|d| CsiNodeDriver {
                name: Sym::new(&d.name),
                node_id: Arc::from(d.node_id.as_str()),
                count: d.allocatable.as_ref().and_then(|a| a.count),
                topology_keys: d
                    .topology_keys
                    .iter()
                    .flatten()
                    .map(|k| Arc::from(k.as_str()))
                    .collect(),
            })
            .collect(),
        migrated_plugins: migrated,
    }
}

/// A CSIDriver in the scheduler's form.
pub fn csi_driver(d: &storage::CSIDriver) -> CsiDriver {
    CsiDriver {
        name: Sym::new(d.metadata.name.as_deref().unwrap_or("")),
        // kube defaults attachRequired to true.
        attach_required: d.spec.attach_required.unwrap_or(true),
        storage_capacity: d.spec.storage_capacity == Some(true),
        prevent_pod_scheduling_if_missing: d.spec.prevent_pod_scheduling_if_missing == Some(true),
    }
}

/// A VolumeAttachment in the scheduler's form.
pub fn volume_attachment(v: &storage::VolumeAttachment) -> VolumeAttachment {
    VolumeAttachment {
        name: text(&v.metadata.name),
        attacher: Sym::new(&v.spec.attacher),
        node_name: Sym::new(&v.spec.node_name),
        persistent_volume: v
            .spec
            .source
            .persistent_volume_name
            .as_deref()
            .map(Sym::new),
    }
}

/// A CSIStorageCapacity in the scheduler's form.
pub fn csi_storage_capacity(
    c: &storage::CSIStorageCapacity,
) -> Result<CsiStorageCapacity, ConvertError> {
    let quantity = |q: Option<&k8s_openapi::apimachinery::pkg::api::resource::Quantity>, path| {
        q.map(|q| storage_of(Some(q), path)).transpose()
    };
    Ok(CsiStorageCapacity {
        namespace: Sym::new(c.metadata.namespace.as_deref().unwrap_or("")),
        name: text(&c.metadata.name),
        storage_class: Arc::from(c.storage_class_name.as_str()),
        capacity: quantity(c.capacity.as_ref(), "capacity")?,
        maximum_volume_size: quantity(c.maximum_volume_size.as_ref(), "maximumVolumeSize")?,
        node_topology: c
            .node_topology
            .as_ref()
            .map(|s| label_selector(s, "nodeTopology"))
            .transpose()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scheduler_perfs_pre_bound_volume_and_claim_convert() {
        // The shapes of scheduler_perf's templates/pv-aws.yaml and pvc.yaml after createPods
        // named them (test/integration/scheduler_perf/runners.go, CreatePodWithPersistentVolume).
        let pv: core::PersistentVolume = serde_json::from_value(json!({
            "metadata": {"name": "ns-vol-3"},
            "spec": {"accessModes": ["ReadOnlyMany"], "capacity": {"storage": "1Gi"},
                     "awsElasticBlockStore": {"volumeID": "vol-3"},
                     "persistentVolumeReclaimPolicy": "Retain",
                     "claimRef": {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
                                  "namespace": "ns", "name": "pvc-3"}},
            "status": {"phase": "Bound"}
        }))
        .unwrap();
        let pv = persistent_volume(&pv).unwrap();
        assert_eq!(pv.capacity, Quantity::parse("1Gi").unwrap());
        assert!(pv.access_modes.contains(AccessModes::READ_ONLY_MANY));
        assert!(!pv.access_modes.contains(AccessModes::READ_WRITE_ONCE));
        assert_eq!(
            pv.source,
            PvSource::Disk(InTreeDisk::AwsElasticBlockStore {
                volume_id: "vol-3".into(),
                read_only: false
            })
        );
        let r = pv.claim_ref.unwrap();
        assert_eq!(
            (r.namespace, &*r.name, &*r.uid),
            (Sym::new("ns"), "pvc-3", "")
        );
        let pvc: core::PersistentVolumeClaim = serde_json::from_value(json!({
            "metadata": {"name": "pvc-3", "namespace": "ns",
                         "annotations": {"pv.kubernetes.io/bind-completed": "true"}},
            "spec": {"accessModes": ["ReadOnlyMany"], "volumeName": "ns-vol-3",
                     "resources": {"requests": {"storage": "1Gi"}}}
        }))
        .unwrap();
        let pvc = persistent_volume_claim(&pvc).unwrap();
        assert_eq!(&*pvc.volume_name, "ns-vol-3");
        assert!(pvc.bind_completed);
        assert_eq!(&*pvc.storage_class, "");
    }

    #[test]
    fn the_beta_class_annotation_wins_and_topologies_become_a_selector() {
        let pvc: core::PersistentVolumeClaim = serde_json::from_value(json!({
            "metadata": {"name": "c", "namespace": "ns",
                         "annotations": {BETA_CLASS: "beta"}},
            "spec": {"storageClassName": "ga", "accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "1Gi"}}}
        }))
        .unwrap();
        assert_eq!(
            &*persistent_volume_claim(&pvc).unwrap().storage_class,
            "beta"
        );
        let sc: storage::StorageClass = serde_json::from_value(json!({
            "metadata": {"name": "zonal"}, "provisioner": "p",
            "volumeBindingMode": "WaitForFirstConsumer",
            "allowedTopologies": [{"matchLabelExpressions": [
                {"key": "topology.kubernetes.io/zone", "values": ["a", "b"]}]}]
        }))
        .unwrap();
        let sc = storage_class(&sc).unwrap();
        assert_eq!(
            sc.binding_mode,
            Some(VolumeBindingMode::WaitForFirstConsumer)
        );
        let sel = sc.allowed_topologies.unwrap();
        let zone = |z: &str| Labels::from_pairs([("topology.kubernetes.io/zone", z)]);
        assert!(sel.matches(Sym::new("n"), &zone("b")));
        assert!(!sel.matches(Sym::new("n"), &zone("c")));
    }

    #[test]
    fn a_csi_nodes_counts_and_migrated_plugins_are_read() {
        let n: storage::CSINode = serde_json::from_value(json!({
            "metadata": {"name": "node-0",
                         "annotations": {MIGRATED_PLUGINS: "kubernetes.io/aws-ebs, kubernetes.io/gce-pd"}},
            "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": "node-0",
                                  "allocatable": {"count": 39}}]}
        }))
        .unwrap();
        let n = csi_node(&n);
        assert_eq!(n.drivers[0].count, Some(39));
        assert_eq!(
            n.migrated_plugins,
            vec![
                Sym::new("kubernetes.io/aws-ebs"),
                Sym::new("kubernetes.io/gce-pd")
            ]
        );
    }
}
