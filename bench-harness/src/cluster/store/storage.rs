//! The storage.k8s.io/v1 kinds the scheduler's volume plugins watch (kube's
//! `pkg/registry/storage/{storageclass,csinode,csidriver,csistoragecapacity,volumeattachment}`),
//! read by the volume plugins through the scheduler's informer events.

use crate::cluster::store::kind::{Index, Kind, Version, check, decode};
use k8s_openapi::api::storage::v1 as storage;
use serde_json::Value;
use tidegate_engine::EventResource;

/// kube's `ValidateStorageClass`: a provisioner, and the reclaim policy and binding mode
/// among kube's values (after defaulting).
fn validate_storage_class(obj: &Value) -> Vec<(String, String)> {
    let mut errs = Vec::new();
    check::required(obj, "provisioner", &mut errs);
    let one_of = |field: &str, values: &[&str], errs: &mut Vec<(String, String)>| {
        if let Some(v) = check::at(obj, field).and_then(Value::as_str)
            && !values.contains(&v)
        {
            let supported: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
            errs.push((
                field.into(),
                format!(
                    "Unsupported value: {}: supported values: {}",
                    Value::from(v),
                    supported.join(", ")
                ),
            ));
        }
    };
    one_of("reclaimPolicy", &["Delete", "Retain"], &mut errs);
    one_of(
        "volumeBindingMode",
        &["Immediate", "WaitForFirstConsumer"],
        &mut errs,
    );
    errs
}

/// kube's `SetDefaults_StorageClass`: `reclaimPolicy: Delete` and `volumeBindingMode:
/// Immediate` when unset (so the scheduler never sees a class without a binding mode).
fn default_storage_class(
    obj: &mut Value,
    _: Option<&Value>,
    _: &crate::cluster::store::ApiGates,
) -> Vec<(String, String)> {
    if let Some(m) = obj.as_object_mut() {
        for (field, value) in [
            ("reclaimPolicy", "Delete"),
            ("volumeBindingMode", "Immediate"),
        ] {
            if m.get(field).is_none_or(Value::is_null) {
                m.insert(field.into(), value.into());
            }
        }
    }
    Vec::new()
}

fn validate_capacity(obj: &Value) -> Vec<(String, String)> {
    let mut errs = Vec::new();
    check::required(obj, "storageClassName", &mut errs);
    errs
}

/// kube's `ValidateVolumeAttachmentSpec`: an attacher, a node, and one source.
fn validate_attachment(obj: &Value) -> Vec<(String, String)> {
    let mut errs = Vec::new();
    check::required(obj, "spec.attacher", &mut errs);
    check::required(obj, "spec.nodeName", &mut errs);
    check::exactly_one(
        obj,
        "spec.source",
        &["persistentVolumeName", "inlineVolumeSpec"],
        &mut errs,
    );
    errs
}

/// The node an attachment is for (`spec.nodeName`).
fn attachment_node(obj: &Value) -> Vec<String> {
    check::at(obj, "spec.nodeName")
        .and_then(Value::as_str)
        .map(|n| vec![n.to_string()])
        .unwrap_or_default()
}

/// kube's `validateCSINodeDriver` (the parts a workload file can get wrong): each driver named
/// once, its allocatable count not negative.
fn validate_csi_node(obj: &Value) -> Vec<(String, String)> {
    let mut errs = Vec::new();
    let drivers = check::at(obj, "spec.drivers").and_then(Value::as_array);
    let mut seen = std::collections::HashSet::new();
    for (i, d) in drivers.into_iter().flatten().enumerate() {
        let path = format!("spec.drivers[{i}]");
        match d.get("name").and_then(Value::as_str) {
            None | Some("") => errs.push((format!("{path}.name"), "Required value".into())),
            Some(n) if !seen.insert(n) => errs.push((
                format!("{path}.name"),
                format!("Duplicate value: {}", Value::from(n)),
            )),
            Some(_) => {}
        }
        if let Some(c) = check::at(d, "allocatable.count").and_then(Value::as_i64)
            && c < 0
        {
            errs.push((
                format!("{path}.allocatable.count"),
                format!("Invalid value: {c}: must be greater than or equal to 0"),
            ));
        }
    }
    errs
}

/// A cluster-scoped storage.k8s.io kind without a status subresource.
const fn cluster_kind(
    kind: &'static str,
    resource: &'static str,
    versions: &'static [Version],
    event: EventResource,
) -> Kind {
    Kind {
        kind,
        group: "storage.k8s.io",
        resource,
        versions,
        namespaced: false,
        status: false,
        immutable: &[],
        unconditional_update: true,
        validate: check::nothing,
        needs_plugin: check::no_plugin,
        gated: check::ungated,
        scheduler_handler: None,
        event: Some(event),
        indexes: &[],
    }
}

pub static STORAGE_CLASS: Kind = Kind {
    immutable: &[
        "provisioner",
        "parameters",
        "reclaimPolicy",
        "volumeBindingMode",
    ],
    validate: validate_storage_class,
    gated: default_storage_class,
    ..cluster_kind(
        "StorageClass",
        "storageclasses.storage.k8s.io",
        &[Version {
            version: "v1",
            decode: decode::<storage::StorageClass>,
        }],
        EventResource::StorageClass,
    )
};

pub static CSI_NODE: Kind = Kind {
    unconditional_update: false,
    validate: validate_csi_node,
    ..cluster_kind(
        "CSINode",
        "csinodes.storage.k8s.io",
        &[Version {
            version: "v1",
            decode: decode::<storage::CSINode>,
        }],
        EventResource::CSINode,
    )
};

pub static CSI_DRIVER: Kind = Kind {
    unconditional_update: false,
    ..cluster_kind(
        "CSIDriver",
        "csidrivers.storage.k8s.io",
        &[Version {
            version: "v1",
            decode: decode::<storage::CSIDriver>,
        }],
        EventResource::CSIDriver,
    )
};

pub static CSI_STORAGE_CAPACITY: Kind = Kind {
    unconditional_update: false,
    namespaced: true,
    validate: validate_capacity,
    ..cluster_kind(
        "CSIStorageCapacity",
        "csistoragecapacities.storage.k8s.io",
        &[Version {
            version: "v1",
            decode: decode::<storage::CSIStorageCapacity>,
        }],
        EventResource::CSIStorageCapacity,
    )
};

pub static VOLUME_ATTACHMENT: Kind = Kind {
    unconditional_update: false,
    status: true,
    immutable: &["spec"],
    validate: validate_attachment,
    indexes: &[Index {
        name: "node",
        keys: attachment_node,
    }],
    ..cluster_kind(
        "VolumeAttachment",
        "volumeattachments.storage.k8s.io",
        &[Version {
            version: "v1",
            decode: decode::<storage::VolumeAttachment>,
        }],
        EventResource::VolumeAttachment,
    )
};

#[cfg(test)]
mod csi_node_tests {
    //! kube's `validateCSINodeDriver` (pkg/apis/storage/validation/validation.go, v1.37.2):
    //! the rules this store checks.
    use super::*;
    use serde_json::json;

    #[test]
    fn a_driver_named_twice_or_a_negative_count_is_refused() {
        let node = |drivers: Value| validate_csi_node(&json!({"spec": {"drivers": drivers}}));
        assert_eq!(
            node(json!([{"name": "d", "nodeID": "n", "allocatable": {"count": 0}}])),
            vec![]
        );
        assert_eq!(
            node(json!([{"name": "d", "nodeID": "n"}, {"name": "d", "nodeID": "n"}])),
            vec![(
                "spec.drivers[1].name".to_string(),
                "Duplicate value: \"d\"".to_string()
            )]
        );
        assert_eq!(
            node(json!([{"name": "d", "nodeID": "n", "allocatable": {"count": -3}}])),
            vec![(
                "spec.drivers[0].allocatable.count".to_string(),
                "Invalid value: -3: must be greater than or equal to 0".to_string()
            )]
        );
    }

    #[test]
    fn a_storage_class_gets_kubes_defaults_and_is_checked_after_them() {
        let mut sc = serde_json::json!({"metadata": {"name": "c"}, "provisioner": "p"});
        let gates = crate::cluster::store::ApiGates::default();
        assert!(default_storage_class(&mut sc, None, &gates).is_empty());
        assert_eq!(sc["volumeBindingMode"], "Immediate");
        assert_eq!(sc["reclaimPolicy"], "Delete");
        assert!(validate_storage_class(&sc).is_empty());
        let mut wffc = serde_json::json!({"provisioner": "p",
            "volumeBindingMode": "WaitForFirstConsumer", "reclaimPolicy": "Recycle"});
        default_storage_class(&mut wffc, None, &gates);
        assert_eq!(wffc["volumeBindingMode"], "WaitForFirstConsumer");
        assert_eq!(
            validate_storage_class(&wffc),
            vec![(
                "reclaimPolicy".to_string(),
                "Unsupported value: \"Recycle\": supported values: \"Delete\", \"Retain\""
                    .to_string()
            )]
        );
    }
}
