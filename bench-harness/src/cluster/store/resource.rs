//! The resource.k8s.io/v1 kinds of Dynamic Resource Allocation (kube's
//! `pkg/registry/resource/{deviceclass,resourceslice,resourceclaim,resourceclaimtemplate,
//! devicetaintrule}`), stored as plain objects and delivered to the scheduler's
//! DynamicResources plugin as informer events (DeviceTaintRules to the engine's slice
//! tracker, which turns them into ResourceSlice updates as kube's does). The fields of the
//! DRA gates that are off are dropped as kube's API server drops them (`gated`).

use crate::cluster::store::kind::{ApiGates, Index, Kind, Version, check, decode};
use k8s_openapi::api::resource::v1 as resource;
use serde_json::Value;
use tidegate_engine::EventResource;

/// kube's `ValidateResourceSliceSpec`: exactly one way of naming the nodes.
fn validate_slice(obj: &Value) -> Vec<(String, String)> {
    let mut errs = Vec::new();
    check::required(obj, "spec.driver", &mut errs);
    check::exactly_one(
        obj,
        "spec",
        &[
            "nodeName",
            "nodeSelector",
            "allNodes",
            "perDeviceNodeSelection",
        ],
        &mut errs,
    );
    if errs.is_empty() {
        errs.extend(convert_slice(obj));
    }
    errs
}

/// The engine's conversion of a v1 slice (kube's field checks: duplicate device names,
/// quantities, counters), and devices that consume more of a counter than their slice's
/// counter set holds: such a device could never be allocated.
fn convert_slice(obj: &Value) -> Option<(String, String)> {
    let typed: resource::ResourceSlice = serde_json::from_value(obj.clone()).ok()?;
    let slice = match tidegate_engine::api::dra::resource_slice(&typed) {
        Ok(s) => s,
        Err(e) if e.detail == "Duplicate value" => {
            return Some((e.field, format!("Duplicate value: {:?}", e.value)));
        }
        // kube's Forbidden, Required and Too many errors print no value.
        Err(e)
            if ["Forbidden: ", "Required value: ", "Too many: "]
                .iter()
                .any(|p| e.detail.starts_with(p)) =>
        {
            return Some((e.field, e.detail));
        }
        // kube prints a number unquoted (`field.Invalid` with an int).
        Err(e) if e.value.parse::<i64>().is_ok() => {
            return Some((e.field, format!("Invalid value: {}: {}", e.value, e.detail)));
        }
        Err(e) => {
            return Some((
                e.field,
                format!("Invalid value: {:?}: {}", e.value, e.detail),
            ));
        }
    };
    // The quantities as written, for the message.
    let written = |path: String| {
        obj.pointer(&path)
            .and_then(Value::as_str)
            .unwrap_or("0")
            .to_string()
    };
    for (i, d) in slice.devices.iter().enumerate() {
        for (j, c) in d.consumes_counters.iter().enumerate() {
            let Some(set) = slice.shared_counters.get(&c.counter_set) else {
                continue;
            };
            // The set's index as written (the map above is sorted by name).
            let s = items(obj, "spec.sharedCounters")
                .position(|x| x.get("name").and_then(Value::as_str) == Some(&c.counter_set))
                .unwrap_or(0);
            for (name, want) in &c.counters {
                if set.get(name).is_none_or(|have| want > have) {
                    return Some((
                        format!("spec.devices[{i}].consumesCounters[{j}].counters[{name}]"),
                        format!(
                            "Invalid value: {:?}: more than counter set {:?} holds ({}): the \
                             device could never be allocated",
                            written(format!(
                                "/spec/devices/{i}/consumesCounters/{j}/counters/{name}/value"
                            )),
                            c.counter_set,
                            written(format!("/spec/sharedCounters/{s}/counters/{name}/value")),
                        ),
                    ));
                }
            }
        }
    }
    None
}

/// kube's `validateCELExpression` for every selector in the array at `path`.
fn check_selectors(obj: &Value, path: &str, errs: &mut Vec<(String, String)>) {
    for (i, sel) in items(obj, path).enumerate() {
        let Some(expr) = check::at(sel, "cel.expression").and_then(Value::as_str) else {
            continue;
        };
        if let Err(e) = tidegate_engine::validate_cel_selector(expr) {
            errs.push((format!("{path}[{i}].cel.expression"), e.message(expr)));
        }
    }
}

fn validate_class(obj: &Value) -> Vec<(String, String)> {
    let mut errs = Vec::new();
    check_selectors(obj, "spec.selectors", &mut errs);
    errs
}

/// A claim spec's request selectors (`spec` is where the spec sits: `spec`, or `spec.spec`
/// in a template).
fn check_claim_spec(obj: &Value, spec: &str) -> Vec<(String, String)> {
    let mut errs = Vec::new();
    let path = format!("{spec}.devices.requests");
    for (i, r) in items(obj, &path).enumerate() {
        let mut here = Vec::new();
        check_selectors(r, "exactly.selectors", &mut here);
        for (k, sub) in items(r, "firstAvailable").enumerate() {
            let mut in_sub = Vec::new();
            check_selectors(sub, "selectors", &mut in_sub);
            here.extend(
                in_sub
                    .into_iter()
                    .map(|(f, m)| (format!("firstAvailable[{k}].{f}"), m)),
            );
        }
        errs.extend(
            here.into_iter()
                .map(|(f, m)| (format!("{path}[{i}].{f}"), m)),
        );
    }
    errs
}

fn validate_claim(obj: &Value) -> Vec<(String, String)> {
    check_claim_spec(obj, "spec")
}

fn validate_claim_template(obj: &Value) -> Vec<(String, String)> {
    check_claim_spec(obj, "spec.spec")
}

fn validate_taint_rule(obj: &Value) -> Vec<(String, String)> {
    let mut errs = Vec::new();
    check::required(obj, "spec.taint.key", &mut errs);
    check::required(obj, "spec.taint.effect", &mut errs);
    errs
}

/// The elements of the array at `path` (none when absent).
fn items<'v>(obj: &'v Value, path: &str) -> impl Iterator<Item = &'v Value> {
    check::at(obj, path)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// kube's `dropDisabledDRAConsumableCapacityFields` and
/// `dropDisabledDRADeviceCompatibilityGroupsFields` (`pkg/registry/resource/resourceslice/
/// strategy.go`): a disabled gate's fields are dropped from the devices, unless the stored
/// slice uses them.
fn slice_gated(json: &mut Value, old: Option<&Value>, g: &ApiGates) -> Vec<(String, String)> {
    let uses = |v: &Value, f: &dyn Fn(&Value) -> bool| items(v, "spec.devices").any(f);
    let shares = |d: &Value| {
        check::at(d, "allowMultipleAllocations").is_some()
            || (check::at(d, "capacity").and_then(Value::as_object))
                .is_some_and(|m| m.values().any(|c| c.get("requestPolicy").is_some()))
    };
    let groups = |d: &Value| {
        items(d, "consumesCounters").any(|c| {
            (c.get("compatibilityGroups").and_then(Value::as_array)).is_some_and(|a| !a.is_empty())
        })
    };
    let drop_shares = g.dra_consumable_capacity_off && !old.is_some_and(|o| uses(o, &shares));
    let drop_groups = !g.dra_device_compatibility_groups && !old.is_some_and(|o| uses(o, &groups));
    let devices = json
        .pointer_mut("/spec/devices")
        .and_then(Value::as_array_mut);
    for d in devices.into_iter().flatten() {
        let Some(d) = d.as_object_mut() else { continue };
        if drop_shares {
            d.remove("allowMultipleAllocations");
            for c in d
                .get_mut("capacity")
                .and_then(Value::as_object_mut)
                .into_iter()
                .flatten()
            {
                if let Some(c) = c.1.as_object_mut() {
                    c.remove("requestPolicy");
                }
            }
        }
        if drop_groups {
            let consumes = d.get_mut("consumesCounters").and_then(Value::as_array_mut);
            for c in consumes
                .into_iter()
                .flatten()
                .filter_map(Value::as_object_mut)
            {
                c.remove("compatibilityGroups");
            }
        }
    }
    Vec::new()
}

/// kube's `dropDisabledDRAConsumableCapacityFields` for a claim spec (at `spec`): capacity
/// requests go while DRAConsumableCapacity is off, unless the stored spec has them.
fn drop_capacity_requests(json: &mut Value, old: Option<&Value>, g: &ApiGates, spec: &str) {
    let path = format!("{spec}.devices.requests");
    let asks = |v: &Value| {
        items(v, &path).any(|r| {
            check::at(r, "exactly.capacity").is_some()
                || items(r, "firstAvailable").any(|s| s.get("capacity").is_some())
        })
    };
    if !g.dra_consumable_capacity_off || old.is_some_and(asks) {
        return;
    }
    let pointer = format!("/{}", path.replace('.', "/"));
    let requests = json.pointer_mut(&pointer).and_then(Value::as_array_mut);
    for r in requests.into_iter().flatten() {
        if let Some(e) = r.get_mut("exactly").and_then(Value::as_object_mut) {
            e.remove("capacity");
        }
        let subs = r.get_mut("firstAvailable").and_then(Value::as_array_mut);
        for s in subs.into_iter().flatten().filter_map(Value::as_object_mut) {
            s.remove("capacity");
        }
    }
}

fn claim_gated(json: &mut Value, old: Option<&Value>, g: &ApiGates) -> Vec<(String, String)> {
    drop_capacity_requests(json, old, g, "spec");
    Vec::new()
}

fn claim_template_gated(
    json: &mut Value,
    old: Option<&Value>,
    g: &ApiGates,
) -> Vec<(String, String)> {
    drop_capacity_requests(json, old, g, "spec.spec");
    Vec::new()
}

/// The node a slice's devices are on (`spec.nodeName`).
fn slice_node(obj: &Value) -> Vec<String> {
    check::at(obj, "spec.nodeName")
        .and_then(Value::as_str)
        .map(|n| vec![n.to_string()])
        .unwrap_or_default()
}

/// The pods a claim is for: its owner (a claim generated from a pod's template) and the
/// pods `status.reservedFor` names, as `namespace/name`.
fn claim_pods(obj: &Value) -> Vec<String> {
    let ns = check::at(obj, "metadata.namespace")
        .and_then(Value::as_str)
        .unwrap_or("");
    let mut keys = check::owners(obj, "Pod");
    keys.extend(
        check::at(obj, "status.reservedFor")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|r| r.get("resource").and_then(Value::as_str) == Some("pods"))
            .filter_map(|r| r.get("name").and_then(Value::as_str))
            .map(|n| format!("{ns}/{n}")),
    );
    keys.sort();
    keys.dedup();
    keys
}

/// A resource.k8s.io/v1 kind.
const fn dra_kind(
    kind: &'static str,
    resource: &'static str,
    versions: &'static [Version],
    namespaced: bool,
) -> Kind {
    Kind {
        kind,
        group: "resource.k8s.io",
        resource,
        versions,
        namespaced,
        status: false,
        immutable: &[],
        unconditional_update: true,
        validate: check::nothing,
        needs_plugin: check::no_plugin,
        gated: check::ungated,
        scheduler_handler: None,
        event: None,
        indexes: &[],
    }
}

pub static DEVICE_CLASS: Kind = Kind {
    validate: validate_class,
    event: Some(EventResource::DeviceClass),
    ..dra_kind(
        "DeviceClass",
        "deviceclasses.resource.k8s.io",
        &[
            Version {
                version: "v1",
                decode: decode::<resource::DeviceClass>,
            },
            // Served as kube v1.37.2 serves it (scheduler_perf's consumable-capacity and
            // extended-resource classes are written in v1beta2); the scheduler reads v1.
            Version {
                version: "v1beta2",
                decode: decode::<k8s_openapi::api::resource::v1beta2::DeviceClass>,
            },
        ],
        false,
    )
};

pub static RESOURCE_SLICE: Kind = Kind {
    validate: validate_slice,
    gated: slice_gated,
    event: Some(EventResource::ResourceSlice),
    indexes: &[Index {
        name: "node",
        keys: slice_node,
    }],
    ..dra_kind(
        "ResourceSlice",
        "resourceslices.resource.k8s.io",
        &[Version {
            version: "v1",
            decode: decode::<resource::ResourceSlice>,
        }],
        false,
    )
};

pub static RESOURCE_CLAIM: Kind = Kind {
    status: true,
    validate: validate_claim,
    gated: claim_gated,
    immutable: &["spec"],
    event: Some(EventResource::ResourceClaim),
    indexes: &[Index {
        name: "pod",
        keys: claim_pods,
    }],
    ..dra_kind(
        "ResourceClaim",
        "resourceclaims.resource.k8s.io",
        &[Version {
            version: "v1",
            decode: decode::<resource::ResourceClaim>,
        }],
        true,
    )
};

pub static RESOURCE_CLAIM_TEMPLATE: Kind = Kind {
    immutable: &["spec"],
    validate: validate_claim_template,
    gated: claim_template_gated,
    ..dra_kind(
        "ResourceClaimTemplate",
        "resourceclaimtemplates.resource.k8s.io",
        &[Version {
            version: "v1",
            decode: decode::<resource::ResourceClaimTemplate>,
        }],
        true,
    )
};

/// Watched by kube's ResourceSlice tracker, which hands the scheduler the slices it taints
/// (as ResourceSlice events); the engine's tracker does the same with this kind's events.
pub static DEVICE_TAINT_RULE: Kind = Kind {
    // v1 refuses an update without a resourceVersion (v1beta2 and v1alpha3 allowed it).
    unconditional_update: false,
    status: true,
    validate: validate_taint_rule,
    event: Some(EventResource::DeviceTaintRule),
    ..dra_kind(
        "DeviceTaintRule",
        "devicetaintrules.resource.k8s.io",
        &[Version {
            version: "v1",
            decode: decode::<resource::DeviceTaintRule>,
        }],
        false,
    )
};
