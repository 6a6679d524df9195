//! PersistentVolume and PersistentVolumeClaim (kube's `pkg/registry/core/persistentvolume`,
//! `persistentvolumeclaim`): stored as plain objects, watched by the scheduler's volume
//! plugins (none in tidegate yet). A pod that mounts a claim still needs them and is
//! refused when converted.

use crate::cluster::store::kind::{Index, Kind, Version, check, decode};
use k8s_openapi::api::core::v1 as core;
use serde_json::Value;
use tidegate_engine::EventResource;

/// kube's `ValidatePersistentVolumeSpec`: a capacity and access modes.
fn validate_pv(obj: &Value) -> Vec<(String, String)> {
    let mut errs = Vec::new();
    check::required(obj, "spec.capacity", &mut errs);
    check::required(obj, "spec.accessModes", &mut errs);
    errs
}

/// kube's `ValidatePersistentVolumeClaimSpec`: access modes and a storage request.
fn validate_pvc(obj: &Value) -> Vec<(String, String)> {
    let mut errs = Vec::new();
    check::required(obj, "spec.accessModes", &mut errs);
    if check::at(obj, "spec.resources.requests.storage").is_none() {
        errs.push(("spec.resources[storage]".into(), "Required value".into()));
    }
    errs
}

/// The claim a volume is bound (or reserved) to: `namespace/name` of `spec.claimRef`.
fn claim_of(obj: &Value) -> Vec<String> {
    let text = |p: &str| check::at(obj, p).and_then(Value::as_str);
    match (text("spec.claimRef.namespace"), text("spec.claimRef.name")) {
        (Some(ns), Some(n)) => vec![format!("{ns}/{n}")],
        _ => Vec::new(),
    }
}

pub static PERSISTENT_VOLUME: Kind = Kind {
    kind: "PersistentVolume",
    group: "",
    resource: "persistentvolumes",
    versions: &[Version {
        version: "v1",
        decode: decode::<core::PersistentVolume>,
    }],
    namespaced: false,
    status: true,
    unconditional_update: true,
    immutable: &[],
    validate: validate_pv,
    needs_plugin: check::no_plugin,
    gated: check::ungated,
    scheduler_handler: None,
    event: Some(EventResource::PersistentVolume),
    indexes: &[Index {
        name: "claim",
        keys: claim_of,
    }],
};

pub static PERSISTENT_VOLUME_CLAIM: Kind = Kind {
    kind: "PersistentVolumeClaim",
    group: "",
    resource: "persistentvolumeclaims",
    versions: &[Version {
        version: "v1",
        decode: decode::<core::PersistentVolumeClaim>,
    }],
    namespaced: true,
    status: true,
    unconditional_update: true,
    immutable: &[],
    validate: validate_pvc,
    needs_plugin: check::no_plugin,
    gated: check::ungated,
    scheduler_handler: None,
    event: Some(EventResource::PersistentVolumeClaim),
    indexes: &[],
};
