//! PersistentVolume and PersistentVolumeClaim (kube's `pkg/registry/core/persistentvolume`,
//! `persistentvolumeclaim`): validated as kube's API server validates them (the fields a
//! workload file can get wrong, with kube's messages), stored as plain objects, watched by the
//! scheduler's volume plugins (none in tidegate yet). A pod that mounts a claim still needs
//! them and is refused when converted.

use crate::cluster::store::kind::{Index, Kind, Version, check, decode};
use k8s_openapi::api::core::v1 as core;
use serde_json::Value;
use tidegate_engine::EventResource;
use tidegate_engine::api::Quantity;

/// kube's `supportedAccessModes`, sorted as its messages list them.
const ACCESS_MODES: [&str; 4] = [
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];

/// The volume sources of a PersistentVolume (`PersistentVolumeSource`), in kube's order.
const PV_SOURCES: [&str; 22] = [
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "glusterfs",
    "nfs",
    "rbd",
    "quobyte",
    "cinder",
    "cephfs",
    "flexVolume",
    "fc",
    "flocker",
    "azureFile",
    "vsphereVolume",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "local",
    "storageos",
    "csi",
    "iscsi",
];

fn quoted(list: &[&str]) -> String {
    let q: Vec<String> = list.iter().map(|v| Value::from(*v).to_string()).collect();
    q.join(", ")
}

/// kube's access-mode rules (PV and PVC alike): each mode supported, ReadWriteOncePod alone.
fn access_modes(obj: &Value, required: &str, errs: &mut Vec<(String, String)>) {
    let path = "spec.accessModes";
    let modes: Vec<&str> = check::at(obj, path)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if modes.is_empty() {
        errs.push((path.into(), required.into()));
    }
    let (mut once_pod, mut other) = (false, false);
    for m in &modes {
        if !ACCESS_MODES.contains(m) {
            errs.push((
                path.into(),
                format!(
                    "Unsupported value: {}: supported values: {}",
                    Value::from(*m),
                    quoted(&ACCESS_MODES)
                ),
            ));
        } else if *m == "ReadWriteOncePod" {
            once_pod = true;
        } else {
            other = true;
        }
    }
    if once_pod && other {
        errs.push((
            path.into(),
            "Forbidden: may not use ReadWriteOncePod with other access modes".into(),
        ));
    }
}

/// A storage quantity at `json` (reported as `field`): it parses, and is above zero
/// (kube's `ValidatePositiveQuantityValue`). The message quotes a zero as `"0"` and any other
/// value as written (kube prints its canonical form, the same for values such as `-1Gi`).
fn positive_quantity(obj: &Value, json: &str, field: &str, errs: &mut Vec<(String, String)>) {
    let Some(v) = check::at(obj, json) else {
        return;
    };
    let text = v.as_str().map_or_else(|| v.to_string(), str::to_string);
    match Quantity::parse(&text) {
        Err(e) => errs.push((
            field.into(),
            format!("Invalid value: {}: {e}", Value::from(text.as_str())),
        )),
        Ok(q) if q.is_zero() || q.is_negative() => errs.push((
            field.into(),
            format!(
                "Invalid value: {}: must be greater than zero",
                Value::from(if q.is_zero() { "0" } else { text.trim() })
            ),
        )),
        Ok(_) => {}
    }
}

/// kube's `ValidatePersistentVolumeSpec` (the parts a workload file can get wrong): access
/// modes, a storage capacity above zero, a supported reclaim policy, one volume source.
fn validate_pv(obj: &Value) -> Vec<(String, String)> {
    let mut errs = Vec::new();
    access_modes(obj, "Required value", &mut errs);
    check::required(obj, "spec.capacity", &mut errs);
    positive_quantity(
        obj,
        "spec.capacity.storage",
        "spec.capacity[storage]",
        &mut errs,
    );
    if let Some(p) = check::at(obj, "spec.persistentVolumeReclaimPolicy").and_then(Value::as_str)
        && !p.is_empty()
    {
        const POLICIES: [&str; 3] = ["Delete", "Recycle", "Retain"];
        if !POLICIES.contains(&p) {
            errs.push((
                "spec.persistentVolumeReclaimPolicy".into(),
                format!(
                    "Unsupported value: {}: supported values: {}",
                    Value::from(p),
                    quoted(&POLICIES)
                ),
            ));
        }
    }
    let sources: Vec<&str> = PV_SOURCES
        .iter()
        .copied()
        .filter(|k| check::at(obj, &format!("spec.{k}")).is_some())
        .collect();
    match sources.as_slice() {
        [] => errs.push((
            "spec".into(),
            "Required value: must specify a volume type".into(),
        )),
        [_] => {}
        [_, more @ ..] => {
            for k in more {
                errs.push((
                    format!("spec.{k}"),
                    "Forbidden: may not specify more than 1 volume type".into(),
                ));
            }
        }
    }
    errs
}

/// kube's `ValidatePersistentVolumeClaimSpec` (the same parts): access modes and a storage
/// request above zero.
fn validate_pvc(obj: &Value) -> Vec<(String, String)> {
    let mut errs = Vec::new();
    access_modes(
        obj,
        "Required value: at least 1 access mode is required",
        &mut errs,
    );
    if check::at(obj, "spec.resources.requests.storage").is_none() {
        errs.push(("spec.resources[storage]".into(), "Required value".into()));
    }
    positive_quantity(
        obj,
        "spec.resources.requests.storage",
        "spec.resources[storage]",
        &mut errs,
    );
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

#[cfg(test)]
mod tests {
    //! The rules of kube's `ValidatePersistentVolumeSpec` and `ValidatePersistentVolumeClaimSpec`
    //! (pkg/apis/core/validation/validation.go, v1.37.2) this store checks, one case each.
    use super::*;
    use serde_json::json;

    fn pv(spec: Value) -> Vec<(String, String)> {
        validate_pv(&json!({"metadata": {"name": "pv"}, "spec": spec}))
    }

    fn pvc(spec: Value) -> Vec<(String, String)> {
        validate_pvc(&json!({"metadata": {"name": "c"}, "spec": spec}))
    }

    fn one(errs: Vec<(String, String)>) -> String {
        assert_eq!(errs.len(), 1, "{errs:?}");
        format!("{}: {}", errs[0].0, errs[0].1)
    }

    fn good_pv() -> Value {
        json!({"accessModes": ["ReadOnlyMany"], "capacity": {"storage": "1Gi"},
               "csi": {"driver": "d", "volumeHandle": "h"}})
    }

    #[test]
    fn a_valid_volume_passes() {
        assert_eq!(pv(good_pv()), vec![]);
        let mut v = good_pv();
        v["persistentVolumeReclaimPolicy"] = json!("Retain");
        assert_eq!(pv(v), vec![]);
    }

    #[test]
    fn a_volume_breaking_one_rule_gets_kubes_message() {
        let with = |k: &str, val: Value| {
            let mut v = good_pv();
            v[k] = val;
            one(pv(v))
        };
        assert_eq!(
            with("accessModes", json!(["ReadWriteOncePod", "ReadOnlyMany"])),
            "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"
        );
        assert_eq!(
            with("capacity", json!({"storage": "0Gi"})),
            "spec.capacity[storage]: Invalid value: \"0\": must be greater than zero"
        );
        assert_eq!(
            with("capacity", json!({"storage": "-1Gi"})),
            "spec.capacity[storage]: Invalid value: \"-1Gi\": must be greater than zero"
        );
        assert_eq!(
            with("persistentVolumeReclaimPolicy", json!("Keep")),
            "spec.persistentVolumeReclaimPolicy: Unsupported value: \"Keep\": supported values: \"Delete\", \"Recycle\", \"Retain\""
        );
        assert_eq!(
            with("awsElasticBlockStore", json!({"volumeID": "v"})),
            "spec.csi: Forbidden: may not specify more than 1 volume type"
        );
        let mut none = good_pv();
        none.as_object_mut().unwrap().remove("csi");
        assert_eq!(
            one(pv(none)),
            "spec: Required value: must specify a volume type"
        );
    }

    #[test]
    fn a_claim_breaking_one_rule_gets_kubes_message() {
        let good = json!({"accessModes": ["ReadWriteOncePod"],
                          "resources": {"requests": {"storage": "1Gi"}}});
        assert_eq!(pvc(good.clone()), vec![]);
        let mut no_modes = good.clone();
        no_modes["accessModes"] = json!([]);
        assert_eq!(
            one(pvc(no_modes)),
            "spec.accessModes: Required value: at least 1 access mode is required"
        );
        let mut no_storage = good.clone();
        no_storage["resources"] = json!({"requests": {}});
        assert_eq!(
            one(pvc(no_storage)),
            "spec.resources[storage]: Required value"
        );
        let mut zero = good;
        zero["resources"]["requests"]["storage"] = json!("0");
        assert_eq!(
            one(pvc(zero)),
            "spec.resources[storage]: Invalid value: \"0\": must be greater than zero"
        );
    }
}
