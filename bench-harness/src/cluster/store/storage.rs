//! The storage.k8s.io/v1 kinds the scheduler's volume plugins watch (kube's
//! `pkg/registry/storage/{storageclass,csinode,csidriver,csistoragecapacity,volumeattachment}`),
//! stored as plain objects: no plugin reads them in tidegate yet.

use crate::cluster::store::kind::{Index, Kind, Version, check, decode};
use k8s_openapi::api::storage::v1 as storage;
use serde_json::Value;
use tidegate_engine::EventResource;

fn validate_storage_class(obj: &Value) -> Vec<(String, String)> {
    let mut errs = Vec::new();
    check::required(obj, "provisioner", &mut errs);
    errs
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
