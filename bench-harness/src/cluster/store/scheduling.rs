//! The scheduling.k8s.io kinds (kube's `pkg/registry/scheduling/{priorityclass,podgroup,
//! workload,compositepodgroup}`): PriorityClass (stored and counted: the harness, like
//! upstream's, disables the Priority admission plugin, so a priorityClassName sets no
//! priority), and the pod-group kinds, stored in the versions kube v1.37 serves (v1beta1 and
//! v1alpha3; v1alpha3 only for CompositePodGroup).
//!
//! PodGroups and CompositePodGroups are validated as kube's declarative rules
//! (`pkg/apis/scheduling/v1beta1/zz_generated.validations.go`, v1.37.2) and
//! `pkg/apis/scheduling/validation` say, with kube's messages: exactly one of `basic` and
//! `gang`, a gang's `minCount` (a composite's `minGroupCount`) at least 1, at most one
//! topology constraint with a valid label key, `priority` at most 1,000,000,000, a
//! `workloadRef` wherever `parentCompositePodGroupName` is set (always, for a composite). The
//! fields of a disabled gate (`schedulingConstraints`, `preemptionPolicy`,
//! `parentCompositePodGroupName`) are dropped before validation, as kube's strategy drops
//! them, unless the stored object uses them (`Kind::gated`). Unlike kube, the kinds are
//! served whatever the gates (kube serves PodGroup and Workload only with GenericWorkload,
//! CompositePodGroup only with its own gate). Every change of either
//! kind reaches the scheduler converted, through `Scheduler::on_pod_group_{add,update,
//! delete}` (a PodGroup by `api::convert::pod_group`, a v1alpha3 one through its v1beta1
//! JSON; a CompositePodGroup as an `api::PodGroup` with `composite` set). A pod joins a group
//! only through `spec.schedulingGroup`, which the store keeps only with the GenericWorkload
//! gate on (`core/pod.rs`).

use crate::cluster::store::kind::{
    ApiGates, Kind, KubeObject, SchedulerHandler, Version, check, decode,
};
use k8s_openapi::api::scheduling::{v1, v1alpha3, v1beta1};
use serde_json::Value;
use std::any::Any;
use std::sync::Arc;
use tidegate_engine::EventResource;
use tidegate_engine::Scheduler;
use tidegate_engine::api::{PodGroup, convert};

/// kube's `Invalid value: <value>: <detail>`, the value printed as Go's `%#v` does for
/// strings and numbers.
fn invalid(value: &Value, detail: &str) -> String {
    format!("Invalid value: {value}: {detail}")
}

/// kube's union rule (`validate.Union`): exactly one of `members` set under `path`.
fn union(obj: &Value, path: &str, members: &[&str], errs: &mut Vec<(String, String)>) {
    let Some(v) = check::at(obj, path) else {
        return;
    };
    let set: Vec<&str> = members
        .iter()
        .copied()
        .filter(|m| v.get(*m).is_some_and(|x| !x.is_null()))
        .collect();
    let all: Vec<String> = members.iter().map(|m| format!("`{m}`")).collect();
    match set.len() {
        1 => {}
        0 => errs.push((
            path.into(),
            invalid(
                &Value::from(""),
                &format!("must specify one of: {}", all.join(", ")),
            ),
        )),
        _ => errs.push((
            path.into(),
            invalid(
                &Value::from(format!("{{{}}}", set.join(", "))),
                &format!("must specify exactly one of: {}", all.join(", ")),
            ),
        )),
    }
}

/// kube's `RequiredValue` then `Minimum(1)` on an int32 field under a set policy: 0 (Go's
/// zero value, which is also what an absent field decodes to) is `Required value`.
fn at_least_one(obj: &Value, policy: &str, field: &str, errs: &mut Vec<(String, String)>) {
    if check::at(obj, policy).is_none() {
        return;
    }
    let path = format!("{policy}.{field}");
    match check::at(obj, &path).and_then(Value::as_i64) {
        None | Some(0) => errs.push((path, "Required value".into())),
        Some(n) if n < 1 => errs.push((
            path,
            invalid(&Value::from(n), "must be greater than or equal to 1"),
        )),
        Some(_) => {}
    }
}

/// kube's `IsQualifiedName` (a label key): an optional DNS-subdomain prefix and `/`, then a
/// name of at most 63 characters. Returns kube's first message, if any.
fn label_key_error(key: &str) -> Option<String> {
    const NAME_FMT: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', \
        and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or \
        '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    let (prefix, name) = match key.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    if name.is_empty() {
        return Some("name part must be non-empty".into());
    }
    if name.len() > 63 {
        return Some("name part must be no more than 63 bytes".into());
    }
    let alnum = |c: char| c.is_ascii_alphanumeric();
    let ok = name.starts_with(alnum)
        && name.ends_with(alnum)
        && name
            .chars()
            .all(|c| alnum(c) || matches!(c, '-' | '_' | '.'));
    if !ok {
        return Some(NAME_FMT.into());
    }
    match prefix {
        Some("") => Some("prefix part must be non-empty".into()),
        Some(p) if !is_dns_subdomain(p) => Some(format!("prefix part {}", DNS_SUBDOMAIN_FMT)),
        _ => None,
    }
}

const DNS_SUBDOMAIN_FMT: &str = "a lowercase RFC 1123 subdomain must consist of lower case \
    alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character \
    (e.g. 'example.com', regex used for validation is \
    '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/// kube's `IsDNS1123Subdomain` (a "long name").
fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253
        && s.split('.').all(|part| {
            let an = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
            !part.is_empty()
                && part.starts_with(an)
                && part.ends_with(an)
                && part.chars().all(|c| an(c) || c == '-')
        })
}

/// The rules PodGroups and CompositePodGroups share whatever the gates: priority, the
/// priority class name, the disruption mode and the workload reference.
fn validate_common(obj: &Value, errs: &mut Vec<(String, String)>) {
    if let Some(p) = check::at(obj, "spec.priority").and_then(Value::as_i64)
        && p > 1_000_000_000
    {
        errs.push((
            "spec.priority".into(),
            invalid(&Value::from(p), "must be less than or equal to 1000000000"),
        ));
    }
    if let Some(n) = check::at(obj, "spec.priorityClassName").and_then(Value::as_str)
        && !n.is_empty()
        && !is_dns_subdomain(n)
    {
        errs.push((
            "spec.priorityClassName".into(),
            invalid(&Value::from(n), DNS_SUBDOMAIN_FMT),
        ));
    }
    union(obj, "spec.disruptionMode", &["single", "all"], errs);
    for f in ["workloadName", "templateName"] {
        let path = format!("spec.workloadRef.{f}");
        if check::at(obj, "spec.workloadRef").is_some()
            && check::at(obj, &path)
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
        {
            errs.push((path, "Required value".into()));
        }
    }
}

/// kube's PodGroup rules that hold whatever the gates: one of `basic` and `gang`, a gang of
/// at least one pod, and the shared rules.
fn validate_group(obj: &Value) -> Vec<(String, String)> {
    let mut errs = Vec::new();
    union(obj, "spec.schedulingPolicy", &["basic", "gang"], &mut errs);
    at_least_one(obj, "spec.schedulingPolicy.gang", "minCount", &mut errs);
    validate_common(obj, &mut errs);
    errs
}

/// The same rules for a composite group, whose gang counts child groups and whose
/// `workloadRef` is required.
fn validate_composite(obj: &Value) -> Vec<(String, String)> {
    let mut errs = Vec::new();
    union(obj, "spec.schedulingPolicy", &["basic", "gang"], &mut errs);
    at_least_one(
        obj,
        "spec.schedulingPolicy.gang",
        "minGroupCount",
        &mut errs,
    );
    validate_common(obj, &mut errs);
    if check::at(obj, "spec.workloadRef").is_none() {
        errs.push(("spec.workloadRef".into(), "Required value".into()));
    }
    errs
}

/// kube's `dropDisabled*Field`s (`pkg/registry/scheduling/podgroup/strategy.go`): the
/// field at `path` of a disabled gate is dropped, unless the old object uses it.
fn drop_unless(json: &mut Value, old: Option<&Value>, path: &str, on: bool) {
    if on || old.is_some_and(|o| check::at(o, path).is_some()) {
        return;
    }
    let (parent, last) = path.rsplit_once('.').expect("a spec field");
    if let Some(m) = parent
        .split('.')
        .try_fold(&mut *json, |v, k| v.get_mut(k))
        .and_then(Value::as_object_mut)
    {
        m.remove(last);
    }
}

/// The gated fields' rules, on what dropping left: at most one topology constraint with a
/// valid label key, a known preemption policy.
fn validate_gated_fields(obj: &Value, errs: &mut Vec<(String, String)>) {
    if let Some(topology) =
        check::at(obj, "spec.schedulingConstraints.topology").and_then(Value::as_array)
    {
        let path = "spec.schedulingConstraints.topology";
        if topology.len() > 1 {
            errs.push((
                path.into(),
                format!("Too many: {}: must have at most 1 item", topology.len()),
            ));
        } else {
            for (i, t) in topology.iter().enumerate() {
                let f = format!("{path}[{i}].key");
                match t.get("key").and_then(Value::as_str) {
                    None | Some("") => errs.push((f, "Required value".into())),
                    Some(k) => {
                        if let Some(m) = label_key_error(k) {
                            errs.push((f, invalid(&Value::from(k), &m)));
                        }
                    }
                }
            }
        }
    }
    if let Some(p) = check::at(obj, "spec.preemptionPolicy").and_then(Value::as_str)
        && !matches!(p, "Never" | "PreemptLowerPriority")
    {
        errs.push((
            "spec.preemptionPolicy".into(),
            format!(
                "Unsupported value: {}: supported values: \"Never\", \"PreemptLowerPriority\"",
                Value::from(p)
            ),
        ));
    }
}

/// The gated fields both group kinds have (topology constraints, preemption policy):
/// dropped while their gate is off.
fn drop_shared_gated(json: &mut Value, old: Option<&Value>, g: &ApiGates) {
    drop_unless(
        json,
        old,
        "spec.schedulingConstraints",
        g.topology_aware_workload_scheduling,
    );
    drop_unless(
        json,
        old,
        "spec.preemptionPolicy",
        g.pod_group_preemption_policy,
    );
}

/// A PodGroup's gated fields: dropped while their gate is off, then validated.
fn group_gated(json: &mut Value, old: Option<&Value>, g: &ApiGates) -> Vec<(String, String)> {
    drop_shared_gated(json, old, g);
    drop_unless(
        json,
        old,
        "spec.parentCompositePodGroupName",
        g.composite_pod_group,
    );
    drop_unless(
        json,
        old,
        "spec.resourceClaims",
        g.dra_workload_resource_claims,
    );
    let mut errs = Vec::new();
    validate_gated_fields(json, &mut errs);
    validate_group_claims(json, &mut errs);
    if check::at(json, "spec.parentCompositePodGroupName").is_some()
        && check::at(json, "spec.workloadRef").is_none()
    {
        errs.push((
            "spec.workloadRef".into(),
            "Required value: must be set when parentCompositePodGroupName is set".into(),
        ));
    }
    errs
}

/// kube's rules for a PodGroup's `spec.resourceClaims` (at most 4, unique names that are
/// DNS labels, exactly one source each) and `status.resourceClaimStatuses` (each names an
/// entry of the spec).
fn validate_group_claims(obj: &Value, errs: &mut Vec<(String, String)>) {
    const MAX: usize = 4;
    let claims = check::at(obj, "spec.resourceClaims")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if claims.len() > MAX {
        errs.push((
            "spec.resourceClaims".into(),
            format!("Too many: {}: must have at most {MAX} items", claims.len()),
        ));
    }
    let mut names: Vec<&str> = Vec::new();
    for (i, c) in claims.iter().enumerate() {
        let path = format!("spec.resourceClaims[{i}]");
        let name = c.get("name").and_then(Value::as_str).unwrap_or("");
        if name.is_empty() {
            errs.push((format!("{path}.name"), "Required value".into()));
        } else if !is_dns_label(name) {
            errs.push((
                format!("{path}.name"),
                invalid(
                    &Value::from(name),
                    "a lowercase RFC 1123 label must consist of lower case alphanumeric \
                     characters or '-', and must start and end with an alphanumeric character",
                ),
            ));
        } else if names.contains(&name) {
            errs.push((format!("{path}.name"), format!("Duplicate value: {name:?}")));
        }
        names.push(name);
        let wrapped = serde_json::json!({ "c": c });
        let mut sub = Vec::new();
        union(
            &wrapped,
            "c",
            &["resourceClaimName", "resourceClaimTemplateName"],
            &mut sub,
        );
        errs.extend(sub.into_iter().map(|(_, m)| (path.clone(), m)));
    }
    let statuses = check::at(obj, "status.resourceClaimStatuses")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    for (i, st) in statuses.enumerate() {
        let name = st.get("name").and_then(Value::as_str).unwrap_or("");
        if !names.contains(&name) {
            errs.push((
                format!("status.resourceClaimStatuses[{i}].name"),
                invalid(
                    &Value::from(name),
                    "must match the name of an entry in `spec.resourceClaims`",
                ),
            ));
        }
    }
}

/// kube's `IsDNS1123Label`: at most 63 lower-case alphanumerics or '-', alphanumeric at
/// both ends.
fn is_dns_label(s: &str) -> bool {
    let b = s.as_bytes();
    let edge = |c: Option<&u8>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    s.len() <= 63
        && edge(b.first())
        && edge(b.last())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// A CompositePodGroup's gated fields, as a PodGroup's. (kube serves the kind only with its
/// gate on, and PodGroups and Workloads only with GenericWorkload; the store serves them all,
/// as it did before the scheduler read them, so that a workload creating them without the
/// gates stores them, as createAny always did.)
fn composite_gated(json: &mut Value, old: Option<&Value>, g: &ApiGates) -> Vec<(String, String)> {
    drop_shared_gated(json, old, g);
    let mut errs = Vec::new();
    validate_gated_fields(json, &mut errs);
    errs
}

/// A stored PodGroup in the scheduler's form: a v1beta1 object as it is, a v1alpha3 one
/// through its JSON (the two versions share the fields the scheduler reads).
pub fn pod_group_of(o: &Arc<dyn KubeObject>) -> Option<PodGroup> {
    let any: &dyn Any = o.as_ref();
    let owned;
    let pg = match any.downcast_ref::<v1beta1::PodGroup>() {
        Some(pg) => pg,
        None => {
            let mut json = o.to_json();
            json["apiVersion"] = Value::from("scheduling.k8s.io/v1beta1");
            owned = serde_json::from_value::<v1beta1::PodGroup>(json).ok()?;
            &owned
        }
    };
    convert::pod_group(pg).ok()
}

/// A stored CompositePodGroup in the scheduler's form (a v1beta1 object is stored as the
/// v1alpha3 type, whose fields are the same).
pub fn composite_of(o: &Arc<dyn KubeObject>) -> Option<PodGroup> {
    let any: &dyn Any = o.as_ref();
    convert::composite_pod_group(any.downcast_ref::<v1alpha3::CompositePodGroup>()?).ok()
}

/// kube v1.38's `scheduling.k8s.io/v1beta1` CompositePodGroup: its fields are v1alpha3's
/// (k8s-openapi for v1.37 has no v1beta1 type), so it is decoded as that type with the
/// version rewritten.
fn decode_composite_v1beta1(
    json: &Value,
) -> Result<Box<dyn KubeObject>, crate::cluster::store::kind::DecodeError> {
    let mut json = json.clone();
    json["apiVersion"] = Value::from("scheduling.k8s.io/v1alpha3");
    decode::<v1alpha3::CompositePodGroup>(&json)
}

/// Delivers a change of a group kind through the scheduler's pod-group handlers, each object
/// converted by `of` (an object that does not convert is not delivered).
fn deliver_groups(
    s: &Scheduler,
    old: Option<&Arc<dyn KubeObject>>,
    new: Option<&Arc<dyn KubeObject>>,
    of: fn(&Arc<dyn KubeObject>) -> Option<PodGroup>,
) {
    let conv = |o: Option<&Arc<dyn KubeObject>>| o.and_then(of).map(Arc::new);
    match (conv(old), conv(new)) {
        (None, Some(n)) => s.on_pod_group_add(n),
        (Some(o), Some(n)) => s.on_pod_group_update(o, n),
        (Some(o), None) => s.on_pod_group_delete(o),
        (None, None) => {}
    }
}

const POD_GROUP_HANDLER: SchedulerHandler = |s, old, new| deliver_groups(s, old, new, pod_group_of);
const COMPOSITE_HANDLER: SchedulerHandler = |s, old, new| deliver_groups(s, old, new, composite_of);

/// A scheduling.k8s.io kind.
const fn scheduling_kind(
    kind: &'static str,
    resource: &'static str,
    versions: &'static [Version],
    event: Option<EventResource>,
) -> Kind {
    Kind {
        kind,
        group: "scheduling.k8s.io",
        resource,
        versions,
        namespaced: true,
        status: false,
        immutable: &[],
        unconditional_update: true,
        validate: check::nothing,
        needs_plugin: check::no_plugin,
        gated: check::ungated,
        scheduler_handler: None,
        event,
        indexes: &[],
    }
}

pub static PRIORITY_CLASS: Kind = Kind {
    namespaced: false,
    immutable: &["value"],
    ..scheduling_kind(
        "PriorityClass",
        "priorityclasses.scheduling.k8s.io",
        &[Version {
            version: "v1",
            decode: decode::<v1::PriorityClass>,
        }],
        None,
    )
};

pub static POD_GROUP: Kind = Kind {
    unconditional_update: false,
    status: true,
    immutable: &["spec"],
    validate: validate_group,
    gated: group_gated,
    scheduler_handler: Some(POD_GROUP_HANDLER),
    ..scheduling_kind(
        "PodGroup",
        "podgroups.scheduling.k8s.io",
        &[
            Version {
                version: "v1beta1",
                decode: decode::<v1beta1::PodGroup>,
            },
            Version {
                version: "v1alpha3",
                decode: decode::<v1alpha3::PodGroup>,
            },
        ],
        Some(EventResource::PodGroup),
    )
};

pub static WORKLOAD: Kind = Kind {
    unconditional_update: false,
    ..scheduling_kind(
        "Workload",
        "workloads.scheduling.k8s.io",
        &[
            Version {
                version: "v1beta1",
                decode: decode::<v1beta1::Workload>,
            },
            Version {
                version: "v1alpha3",
                decode: decode::<v1alpha3::Workload>,
            },
        ],
        Some(EventResource::Workload),
    )
};

pub static COMPOSITE_POD_GROUP: Kind = Kind {
    unconditional_update: false,
    status: true,
    immutable: &["spec"],
    validate: validate_composite,
    gated: composite_gated,
    scheduler_handler: Some(COMPOSITE_HANDLER),
    ..scheduling_kind(
        "CompositePodGroup",
        "compositepodgroups.scheduling.k8s.io",
        &[
            Version {
                version: "v1beta1",
                decode: decode_composite_v1beta1,
            },
            Version {
                version: "v1alpha3",
                decode: decode::<v1alpha3::CompositePodGroup>,
            },
        ],
        Some(EventResource::CompositePodGroup),
    )
};

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tidegate_engine::api::{PodGroupKey, PodGroupPolicy};

    /// kube's test PodGroup: a gang of 5 with a workload reference and disruption mode.
    fn pod_group() -> Value {
        json!({
            "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": "foo", "namespace": "default"},
            "spec": {
                "workloadRef": {"workloadName": "w", "templateName": "t"},
                "schedulingPolicy": {"gang": {"minCount": 5}},
                "disruptionMode": {"single": {}},
            },
        })
    }

    fn with(mut v: Value, path: &str, x: Value) -> Value {
        let (parent, last) = path.rsplit_once('/').unwrap();
        v.pointer_mut(parent).unwrap()[last] = x;
        v
    }

    fn constraints(keys: &[&str]) -> Value {
        let topology: Vec<Value> = keys.iter().map(|k| json!({"key": k})).collect();
        with(
            pod_group(),
            "/spec/schedulingConstraints",
            json!({"topology": topology}),
        )
    }

    /// What a create does: the gated fields dropped, then every rule; the object as stored
    /// and the errors.
    fn create(obj: &Value, g: &ApiGates) -> (Value, Vec<String>) {
        let mut json = obj.clone();
        let mut errs = group_gated(&mut json, None, g);
        errs.extend(validate_group(&json));
        let errs = errs.into_iter().map(|(f, m)| format!("{f}: {m}")).collect();
        (json, errs)
    }

    // Ported from kubernetes/kubernetes pkg/registry/scheduling/podgroup/strategy_test.go
    // (v1.37.2), TestStrategyCreate: the object kube stores, or the one error it returns.
    #[test]
    fn strategy_create() {
        let tas = ApiGates {
            topology_aware_workload_scheduling: true,
            ..ApiGates::default()
        };
        let preemption = ApiGates {
            pod_group_preemption_policy: true,
            ..ApiGates::default()
        };
        let off = ApiGates::default();
        let all_mode = with(pod_group(), "/spec/disruptionMode", json!({"all": {}}));
        let policy = |p: &str| with(pod_group(), "/spec/preemptionPolicy", json!(p));
        let cases: Vec<(&str, Value, ApiGates, Result<Value, &str>)> = vec![
            ("simple", pod_group(), off, Ok(pod_group())),
            (
                "negative min count",
                with(
                    pod_group(),
                    "/spec/schedulingPolicy/gang/minCount",
                    json!(-1),
                ),
                off,
                Err(
                    "spec.schedulingPolicy.gang.minCount: Invalid value: -1: must be greater than or equal to 1",
                ),
            ),
            (
                "two scheduling policies",
                with(pod_group(), "/spec/schedulingPolicy/basic", json!({})),
                off,
                Err(
                    "spec.schedulingPolicy: Invalid value: \"{basic, gang}\": must specify exactly one of: `basic`, `gang`",
                ),
            ),
            (
                "no scheduling policy is set",
                with(pod_group(), "/spec/schedulingPolicy", json!({})),
                off,
                Err(
                    "spec.schedulingPolicy: Invalid value: \"\": must specify one of: `basic`, `gang`",
                ),
            ),
            (
                "multiple topology constraints, topology aware scheduling enabled",
                constraints(&["foo", "bar"]),
                tas,
                Err("spec.schedulingConstraints.topology: Too many: 2: must have at most 1 item"),
            ),
            (
                "multiple topology constraints, topology aware scheduling disabled",
                constraints(&["foo", "bar"]),
                off,
                Ok(pod_group()),
            ),
            (
                "invalid topology key, topology aware scheduling enabled",
                constraints(&["foo-"]),
                tas,
                Err("spec.schedulingConstraints.topology[0].key: Invalid value: \"foo-\""),
            ),
            (
                "invalid topology key, topology aware scheduling disabled",
                constraints(&["foo-"]),
                off,
                Ok(pod_group()),
            ),
            ("disruption mode all", all_mode.clone(), off, Ok(all_mode)),
            (
                "both disruption modes set",
                with(pod_group(), "/spec/disruptionMode/all", json!({})),
                off,
                Err(
                    "spec.disruptionMode: Invalid value: \"{single, all}\": must specify exactly one of",
                ),
            ),
            (
                "invalid priorityClassName",
                with(
                    pod_group(),
                    "/spec/priorityClassName",
                    json!("invalid/priority/class/name"),
                ),
                off,
                Err(
                    "lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters",
                ),
            ),
            (
                "priorityClassName set",
                with(
                    pod_group(),
                    "/spec/priorityClassName",
                    json!("high-priority"),
                ),
                off,
                Ok(with(
                    pod_group(),
                    "/spec/priorityClassName",
                    json!("high-priority"),
                )),
            ),
            (
                "priority set",
                with(pod_group(), "/spec/priority", json!(1000)),
                off,
                Ok(with(pod_group(), "/spec/priority", json!(1000))),
            ),
            (
                "too high priority",
                with(pod_group(), "/spec/priority", json!(1_000_000_001)),
                off,
                Err(
                    "spec.priority: Invalid value: 1000000001: must be less than or equal to 1000000000",
                ),
            ),
            (
                "podgroup preemptionPolicy disabled - drop preemptionPolicy",
                policy("Never"),
                off,
                Ok(pod_group()),
            ),
            (
                "podgroup preemptionPolicy disabled - drop invalid preemptionPolicy",
                policy("Invalid"),
                off,
                Ok(pod_group()),
            ),
            (
                "podgroup preemptionPolicy enabled - preserve preemptionPolicy (Never)",
                policy("Never"),
                preemption,
                Ok(policy("Never")),
            ),
            (
                "podgroup preemptionPolicy enabled - preserve preemptionPolicy (PreemptLowerPriority)",
                policy("PreemptLowerPriority"),
                preemption,
                Ok(policy("PreemptLowerPriority")),
            ),
            (
                "podgroup preemptionPolicy enabled - invalid preemptionPolicy",
                policy("Invalid"),
                preemption,
                Err(
                    "spec.preemptionPolicy: Unsupported value: \"Invalid\": supported values: \"Never\", \"PreemptLowerPriority\"",
                ),
            ),
        ];
        for (name, obj, gates, want) in cases {
            let (stored, errs) = create(&obj, &gates);
            match want {
                Ok(v) => {
                    assert!(errs.is_empty(), "{name}: {errs:?}");
                    assert_eq!(stored, v, "{name}");
                }
                Err(msg) => {
                    assert_eq!(
                        errs.len(),
                        1,
                        "{name}: exactly one error expected: {errs:?}"
                    );
                    assert!(errs[0].contains(msg), "{name}: {:?} lacks {msg:?}", errs[0]);
                }
            }
        }
    }

    /// A gang of 0 is kube's `Required value` (0 is the unset int32); a parent composite
    /// group needs a workload reference (with the CompositePodGroup gate; off, the parent is
    /// dropped); an update keeps a gated field the stored object has.
    #[test]
    fn zero_gang_parent_reference_and_update_keeps_gated_fields() {
        let (_, errs) = create(
            &with(
                pod_group(),
                "/spec/schedulingPolicy/gang/minCount",
                json!(0),
            ),
            &ApiGates::default(),
        );
        assert_eq!(
            errs,
            ["spec.schedulingPolicy.gang.minCount: Required value"]
        );
        let mut child = with(
            pod_group(),
            "/spec/parentCompositePodGroupName",
            json!("cpg"),
        );
        child["spec"].as_object_mut().unwrap().remove("workloadRef");
        let composite = ApiGates {
            composite_pod_group: true,
            ..ApiGates::default()
        };
        let (_, errs) = create(&child, &composite);
        assert_eq!(
            errs,
            [
                "spec.workloadRef: Required value: must be set when parentCompositePodGroupName is set"
            ]
        );
        let (stored, errs) = create(&child, &ApiGates::default());
        assert!(errs.is_empty(), "{errs:?}");
        assert!(
            stored
                .pointer("/spec/parentCompositePodGroupName")
                .is_none()
        );
        let old = constraints(&["rack"]);
        let mut new = old.clone();
        let errs = group_gated(&mut new, Some(&old), &ApiGates::default());
        assert!(errs.is_empty());
        assert_eq!(new, old, "a field the stored object uses is kept");
    }

    /// A CompositePodGroup: `minGroupCount` at least 1 and a workload reference required.
    #[test]
    fn composite_rules() {
        let cpg = json!({
            "apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup",
            "metadata": {"name": "cpg"},
            "spec": {"schedulingPolicy": {"gang": {"minGroupCount": 0}}},
        });
        let on = ApiGates {
            composite_pod_group: true,
            ..ApiGates::default()
        };
        let mut j = cpg.clone();
        assert!(composite_gated(&mut j, None, &on).is_empty());
        let errs: Vec<String> = validate_composite(&j)
            .into_iter()
            .map(|(f, m)| format!("{f}: {m}"))
            .collect();
        assert_eq!(
            errs,
            [
                "spec.schedulingPolicy.gang.minGroupCount: Required value",
                "spec.workloadRef: Required value"
            ]
        );
    }

    /// What the scheduler receives: a v1beta1 or v1alpha3 PodGroup as `api::PodGroup`, and a
    /// CompositePodGroup as one with `composite` set and `minGroupCount` as its quorum.
    #[test]
    fn groups_reach_the_scheduler_converted() {
        let mut beta = with(pod_group(), "/metadata/uid", json!("u1"));
        beta = with(beta, "/spec/priority", json!(7));
        let obj: Arc<dyn KubeObject> = Arc::from(decode::<v1beta1::PodGroup>(&beta).unwrap());
        let g = pod_group_of(&obj).unwrap();
        assert_eq!(g.key, PodGroupKey::new("default", "foo"));
        assert_eq!(g.policy, PodGroupPolicy::Gang { min_count: 5 });
        assert_eq!((g.priority, g.composite), (7, false));
        let alpha = with(beta, "/apiVersion", json!("scheduling.k8s.io/v1alpha3"));
        let obj: Arc<dyn KubeObject> = Arc::from(decode::<v1alpha3::PodGroup>(&alpha).unwrap());
        assert_eq!(pod_group_of(&obj).unwrap(), g);
        let cpg = json!({
            "apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup",
            "metadata": {"name": "cpg", "namespace": "ns"},
            "spec": {
                "parentCompositePodGroupName": "top",
                "workloadRef": {"workloadName": "w", "templateName": "t"},
                "schedulingPolicy": {"gang": {"minGroupCount": 2}},
                "schedulingConstraints": {"topology": [{"key": "zone"}]},
            },
        });
        let obj: Arc<dyn KubeObject> =
            Arc::from(decode::<v1alpha3::CompositePodGroup>(&cpg).unwrap());
        let c = composite_of(&obj).unwrap();
        assert!(c.composite);
        assert_eq!(c.policy, PodGroupPolicy::Gang { min_count: 2 });
        assert_eq!(c.parent.as_deref(), Some("top"));
        assert_eq!(c.topology_keys.len(), 1);
        assert!(POD_GROUP.scheduler_handler.is_some());
        assert!(COMPOSITE_POD_GROUP.scheduler_handler.is_some());
    }
}
