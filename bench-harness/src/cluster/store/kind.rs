//! The shape of a stored kind, what every kind's file and the generic store build on: a
//! [`Kind`] says what kube's REST strategy says: the group, the served versions (each a
//! [`Version`] with the Rust type that decodes it: k8s-openapi's where it has one, our own serde
//! type with a provenance line otherwise), whether it is namespaced, whether it has a status
//! subresource, which fields are immutable, the validation beyond decoding ([`check`]'s
//! helpers), the scheduler's event resource (what kube's informers hand the event handlers),
//! and the indexes kept over it ([`Index`]). Also here: the objects a kind decodes into
//! ([`KubeObject`], [`KubeType`]), [`decode`] (strict, kube's field names) and
//! [`decode_rendered`] (a template's object, errors pointing at the template).
//!
//! This file imports nothing from its siblings: the generic shape (`generic.rs`), the kinds'
//! files and the table of kinds (`registry.rs`) sit above it.

use crate::error::InputError;
use crate::workload::manifest::Rendered;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::any::Any;
use std::sync::Arc;
use tidegate_engine::EventResource;

/// An API object of any stored type.
pub trait KubeObject: Any + Send + Sync + std::fmt::Debug {
    fn meta(&self) -> &ObjectMeta;
    fn meta_mut(&mut self) -> &mut ObjectMeta;
    /// The object as kube's JSON.
    fn to_json(&self) -> serde_json::Value;
    fn clone_object(&self) -> Box<dyn KubeObject>;
}

/// The types the store keeps: k8s-openapi's resources, and our own serde types for kinds
/// newer than k8s-openapi (which implement its `Resource` and `Metadata` traits).
pub trait KubeType:
    k8s_openapi::Resource
    + k8s_openapi::Metadata<Ty = ObjectMeta>
    + Serialize
    + DeserializeOwned
    + Clone
    + std::fmt::Debug
    + Send
    + Sync
    + 'static
{
}

impl<T> KubeType for T where
    T: k8s_openapi::Resource
        + k8s_openapi::Metadata<Ty = ObjectMeta>
        + Serialize
        + DeserializeOwned
        + Clone
        + std::fmt::Debug
        + Send
        + Sync
        + 'static
{
}

impl<T: KubeType> KubeObject for T {
    fn meta(&self) -> &ObjectMeta {
        self.metadata()
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        self.metadata_mut()
    }
    fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
    fn clone_object(&self) -> Box<dyn KubeObject> {
        Box::new(self.clone())
    }
}

/// One stored kind (kube's REST strategy for it).
pub struct Kind {
    /// The kind, as objects name it (`PersistentVolume`).
    pub kind: &'static str,
    /// The API group (`""` for the core group).
    pub group: &'static str,
    /// The resource as kube's errors name it: the plural, qualified by the group outside the
    /// core group (`persistentvolumes`, `storageclasses.storage.k8s.io`).
    pub resource: &'static str,
    /// The versions served, each with its decoder.
    pub versions: &'static [Version],
    pub namespaced: bool,
    /// Has a status subresource: a create drops the status, a PUT of the object keeps the
    /// stored status, a PUT of `/status` changes only the status (kube's `PrepareForCreate`,
    /// `PrepareForUpdate` and the status strategy).
    pub status: bool,
    /// Top-level fields an update may not change (kube's `field is immutable`).
    pub immutable: &'static [&'static str],
    /// An update need not carry a resourceVersion (kube's `AllowUnconditionalUpdate`; false
    /// for the kinds whose strategy says so, e.g. PodGroups, CSINodes, v1 DeviceTaintRules).
    pub unconditional_update: bool,
    /// kube's validation beyond what decoding checks, on the object's JSON: `(field, message)`.
    pub validate: fn(&serde_json::Value) -> Vec<(String, String)>,
    /// What depends on the API server's feature gates, on the object's JSON before
    /// `validate`, on every create (old None) and update (the stored object's JSON): kube's
    /// `PrepareForCreate`/`PrepareForUpdate` dropping the fields of a disabled gate (kept on
    /// update where the old object uses them), then the validation of the gated fields that
    /// remain; a kind not served at all while its gate is off is refused here.
    pub gated: GatedFn,
    /// What makes a workload that creates this object need a plugin tidegate lacks (the
    /// workload is then listed as unsupported with this reason).
    pub needs_plugin: fn(&serde_json::Value) -> Option<String>,
    /// The scheduler's event resource, where kube's scheduler watches the kind.
    pub event: Option<EventResource>,
    /// Where the kind reaches the scheduler through its own handlers rather than the generic
    /// `on_object_event` (PodGroups: converted, to `Scheduler::on_pod_group_*`): called with
    /// the old and new object (None for an add's old and a delete's new).
    pub scheduler_handler: Option<SchedulerHandler>,
    /// Indexes kept over the kind (kube's informer indexers).
    pub indexes: &'static [Index],
}

/// See [`Kind::gated`].
pub type GatedFn =
    fn(&mut serde_json::Value, Option<&serde_json::Value>, &ApiGates) -> Vec<(String, String)>;

/// A kind's own delivery to the scheduler (see [`Kind::scheduler_handler`]).
pub type SchedulerHandler =
    fn(&tidegate_engine::Scheduler, Option<&Arc<dyn KubeObject>>, Option<&Arc<dyn KubeObject>>);

/// The feature gates the API server's validation and field dropping read, set per workload
/// from its `featureGates` (kube's `utilfeature.DefaultFeatureGate` in the API server).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ApiGates {
    /// `GenericWorkload`: off, the API server drops a pod's `spec.schedulingGroup`.
    pub generic_workload: bool,
    /// `TopologyAwareWorkloadScheduling`: off, `spec.schedulingConstraints` is forbidden.
    pub topology_aware_workload_scheduling: bool,
    /// `CompositePodGroup`: off, `spec.parentCompositePodGroupName` is forbidden.
    pub composite_pod_group: bool,
    /// `PodGroupPreemptionPolicy`: off, `spec.preemptionPolicy` is forbidden.
    pub pod_group_preemption_policy: bool,
    /// `DRAConsumableCapacity` **off** (it is on by default): the API server drops devices'
    /// `allowMultipleAllocations` and request policies, and claims' capacity requests.
    pub dra_consumable_capacity_off: bool,
    /// `DRADeviceCompatibilityGroups`: off, devices' `compatibilityGroups` are dropped.
    pub dra_device_compatibility_groups: bool,
    /// `DRAWorkloadResourceClaims`: off, a PodGroup's `spec.resourceClaims` are dropped.
    pub dra_workload_resource_claims: bool,
    /// `ClearingNominatedNodeNameAfterBinding` **off** (it is on by default): a binding keeps
    /// the pod's `status.nominatedNodeName` instead of clearing it.
    pub nominated_node_name_kept_at_binding: bool,
}

/// One served version of a kind.
pub struct Version {
    pub version: &'static str,
    /// Decodes the object's JSON; a type error names the field path.
    pub decode: fn(&serde_json::Value) -> Result<Box<dyn KubeObject>, DecodeError>,
}

/// An index: the keys an object is filed under (`namespace/name` of the pods a claim is for,
/// the node a slice belongs to).
pub struct Index {
    pub name: &'static str,
    pub keys: fn(&serde_json::Value) -> Vec<String>,
}

/// Why an object's JSON does not decode: the field path (kube's names) and the message.
#[derive(Debug)]
pub struct DecodeError {
    pub field: String,
    pub message: String,
}

impl std::fmt::Debug for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.kind)
    }
}

impl Kind {
    /// `group/version` (`v1` in the core group).
    pub fn api_version(&self, version: &str) -> String {
        if self.group.is_empty() {
            version.to_string()
        } else {
            format!("{}/{version}", self.group)
        }
    }

    /// The decoder of `api_version`, if this kind is served there.
    pub fn version(&self, api_version: &str) -> Option<&'static Version> {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        (group == self.group)
            .then(|| self.versions.iter().find(|v| v.version == version))
            .flatten()
    }
}

/// Decodes `json` as `T`: a type error at its field, a missing required field as kube's
/// `Required value`, and a field `T` does not have as kube's strict decoding does
/// (scheduler_perf creates with `FieldValidation: Strict`).
pub fn decode<T: KubeType>(json: &serde_json::Value) -> Result<Box<dyn KubeObject>, DecodeError> {
    let obj: T = serde_path_to_error::deserialize(json).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        let message = e.inner().to_string();
        match missing_field(&message) {
            Some(f) if path.is_empty() => DecodeError {
                field: f.to_string(),
                message: "Required value".into(),
            },
            Some(f) => DecodeError {
                field: format!("{path}.{f}"),
                message: "Required value".into(),
            },
            None => DecodeError {
                field: path,
                message,
            },
        }
    })?;
    let back = serde_json::to_value(&obj).unwrap_or_default();
    if let Some(field) = unknown_field(json, &back, "") {
        return Err(DecodeError {
            message: format!("strict decoding error: unknown field {field:?}"),
            field,
        });
    }
    Ok(Box::new(obj))
}

/// The field serde's "missing field `x`" names.
fn missing_field(message: &str) -> Option<&str> {
    message
        .strip_prefix("missing field `")?
        .split('`')
        .next()
        .filter(|f| !f.is_empty())
}

/// The first field of `given` that the decoded object, written back (`back`), lacks: a field
/// the type does not know. Nulls are skipped (an absent optional field).
fn unknown_field(given: &serde_json::Value, back: &serde_json::Value, at: &str) -> Option<String> {
    use serde_json::Value;
    let join = |k: &str| {
        if at.is_empty() {
            k.to_string()
        } else {
            format!("{at}.{k}")
        }
    };
    match (given, back) {
        (Value::Object(g), Value::Object(b)) => g.iter().find_map(|(k, v)| match b.get(k) {
            _ if v.is_null() => None,
            None => Some(join(k)),
            Some(bv) => unknown_field(v, bv, &join(k)),
        }),
        (Value::Array(g), Value::Array(b)) => g
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (gv, bv))| unknown_field(gv, bv, &format!("{at}[{i}]"))),
        _ => None,
    }
}

/// A rendered object of a registered kind, decoded and validated at the boundary. Errors
/// point at the template (file, line:column, the field by kube's name).
pub fn decode_rendered(
    kind: &'static Kind,
    r: &Rendered,
) -> Result<Arc<dyn KubeObject>, InputError> {
    let api_version = r
        .json
        .get("apiVersion")
        .and_then(|v| v.as_str())
        .unwrap_or("");
    let Some(v) = kind.version(api_version) else {
        let served: Vec<String> = kind
            .versions
            .iter()
            .map(|v| kind.api_version(v.version))
            .collect();
        return Err(r.error_at(
            "apiVersion",
            format!(
                "no matches for kind {:?} in version {api_version:?} (served: {})",
                kind.kind,
                served.join(", ")
            ),
        ));
    };
    let obj = (v.decode)(&r.json).map_err(|e| r.error_at(&e.field, e.message))?;
    let obj: Arc<dyn KubeObject> = Arc::from(obj);
    if let Some((field, message)) = (kind.validate)(&r.json).into_iter().next() {
        return Err(r.error_at(&field, message));
    }
    Ok(obj)
}

/// Validation helpers for the kinds' `validate` functions, on JSON with kube's field names.
pub mod check {
    use serde_json::Value;

    /// The value at a dotted path (`spec.capacity`), if present and not null.
    pub fn at<'v>(obj: &'v Value, path: &str) -> Option<&'v Value> {
        path.split('.')
            .try_fold(obj, |v, k| v.get(k))
            .filter(|v| !v.is_null())
    }

    /// kube's `Required value` when the field is absent or empty.
    pub fn required(obj: &Value, path: &str, errs: &mut Vec<(String, String)>) {
        let empty = match at(obj, path) {
            None => true,
            Some(Value::String(s)) => s.is_empty(),
            Some(Value::Array(a)) => a.is_empty(),
            Some(Value::Object(m)) => m.is_empty(),
            Some(_) => false,
        };
        if empty {
            errs.push((path.to_string(), "Required value".into()));
        }
    }

    /// kube's `must be greater than zero` for an integer field that is present.
    pub fn positive(obj: &Value, path: &str, errs: &mut Vec<(String, String)>) {
        if let Some(n) = at(obj, path).and_then(Value::as_i64)
            && n <= 0
        {
            errs.push((
                path.to_string(),
                format!("Invalid value: {n}: must be greater than zero"),
            ));
        }
    }

    /// kube's one-of rule: exactly one of `fields` under `path` (when `path` is present).
    pub fn exactly_one(obj: &Value, path: &str, fields: &[&str], errs: &mut Vec<(String, String)>) {
        let Some(v) = at(obj, path) else {
            return;
        };
        // An unset pointer reads as null; `allNodes: false` is unset too.
        let set = fields.iter().filter(|f| {
            v.get(**f)
                .is_some_and(|x| !x.is_null() && *x != Value::Bool(false))
        });
        match set.count() {
            1 => {}
            0 => errs.push((
                path.to_string(),
                format!(
                    "Required value: must specify one of: `{}`",
                    fields.join("`, `")
                ),
            )),
            _ => errs.push((
                path.to_string(),
                format!(
                    "Invalid value: must specify exactly one of: `{}`",
                    fields.join("`, `")
                ),
            )),
        }
    }

    /// No validation beyond decoding.
    pub fn nothing(_: &Value) -> Vec<(String, String)> {
        Vec::new()
    }

    /// Nothing that depends on a feature gate.
    pub fn ungated(_: &mut Value, _: Option<&Value>, _: &super::ApiGates) -> Vec<(String, String)> {
        Vec::new()
    }

    /// Needs no plugin.
    pub fn no_plugin(_: &Value) -> Option<String> {
        None
    }

    /// `namespace/name` of each `ownerReferences` entry of `kind` (the object's namespace).
    pub fn owners(obj: &Value, kind: &str) -> Vec<String> {
        let ns = at(obj, "metadata.namespace")
            .and_then(Value::as_str)
            .unwrap_or("");
        at(obj, "metadata.ownerReferences")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|o| o.get("kind").and_then(Value::as_str) == Some(kind))
            .filter_map(|o| o.get("name").and_then(Value::as_str))
            .map(|n| format!("{ns}/{n}"))
            .collect()
    }
}
