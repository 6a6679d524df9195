//! Planning's census of DRA device classes: a claim whose request names a DeviceClass that no
//! op of the workload creates.
//!
//! kube's API server accepts such a claim (a class is looked up when the claim is allocated,
//! not when it is stored), and kube's DynamicResources plugin then keeps every pod that uses
//! it pending as unresolvable (`request <name>: device class <class> does not exist`), so
//! scheduler_perf's `createPods` waits for them until its timeout. When the workload's
//! DynamicResourceAllocation gate is on, every object the `createAny` ops create is rendered,
//! and each request's `deviceClassName` (under `exactly`, or each `firstAvailable`
//! subrequest) of a ResourceClaim or ResourceClaimTemplate that some pod uses must name a
//! class some op creates (before or after it: a class created later lets the pods go on). A
//! claim no pod names is stored and hurts nothing, as in kube. The error is one line at the
//! template's file, line and column of the field. A class written with `generateName` only
//! (its name unknown before it exists) turns the check off. The pods are read only when some
//! claim names a missing class.

use crate::error::InputError;
use crate::run::ops::{Op, Prepared};
use crate::workload::manifest::{self, Rendered};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// A class some claim names: where, and which claim (kind and name).
struct Reference {
    field: String,
    kind: String,
    name: String,
    rendered: Rendered,
}

/// Runs the census over the planned ops (see the module doc).
pub(crate) fn check(
    ops: &[Op],
    prepared: &Prepared,
    gates: &BTreeMap<String, bool>,
) -> Result<(), InputError> {
    if gates.get("DynamicResourceAllocation") == Some(&false) {
        return Ok(());
    }
    let mut classes = BTreeSet::new();
    let mut named: Vec<(String, Reference)> = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let Op::CreateAny(o) = op else {
            continue;
        };
        let Some(t) = prepared.templates.get(&i) else {
            continue;
        };
        for j in 0..o.count {
            let r = t.render(j, o.count, &o.template_params)?;
            let spec = match r.kind() {
                "DeviceClass" => {
                    match r.json.pointer("/metadata/name").and_then(Value::as_str) {
                        Some(n) if !n.is_empty() => classes.insert(n.to_string()),
                        _ => return Ok(()),
                    };
                    continue;
                }
                "ResourceClaim" => "/spec",
                "ResourceClaimTemplate" => "/spec/spec",
                _ => continue,
            };
            let name = r
                .json
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            for (field, class) in class_refs(&r.json, spec) {
                named.push((
                    class,
                    Reference {
                        field,
                        kind: r.kind().to_string(),
                        name: name.clone(),
                        rendered: r.clone(),
                    },
                ));
            }
        }
    }
    named.retain(|(class, _)| !classes.contains(class));
    if named.is_empty() {
        return Ok(());
    }
    let used = claims_pods_use(ops, prepared)?;
    let Some((class, at)) = named.iter().find(|(_, at)| used.contains(&at.name)) else {
        return Ok(());
    };
    Err(InputError::new(
        &at.rendered.file,
        Some(manifest::position_of(&at.rendered, &at.field)),
        &at.field,
        format!(
            "{} {:?} requests DeviceClass {class:?}, which no op of the workload creates: kube's \
             scheduler keeps the pods that use the claim pending (device class {class} does not \
             exist); kube's API server accepts this, but the workload would hang; tidegate \
             refuses it when planning",
            at.kind, at.name
        ),
    ))
}

/// The claim and claim-template names the pods of `createPods` and `createAny` name.
fn claims_pods_use(ops: &[Op], prepared: &Prepared) -> Result<BTreeSet<String>, InputError> {
    let mut used = BTreeSet::new();
    for (i, op) in ops.iter().enumerate() {
        match op {
            Op::CreatePods(o) => {
                let Some(src) = prepared.pods.get(&i) else {
                    continue;
                };
                let n = if src.is_fixed() {
                    o.count.min(1)
                } else {
                    o.count
                };
                for j in 0..n {
                    used.extend(src.claim_refs(j, o.count, &o.template_params)?);
                }
            }
            Op::CreateAny(o) => {
                let Some(t) = prepared.templates.get(&i) else {
                    continue;
                };
                for j in 0..o.count {
                    let r = t.render(j, o.count, &o.template_params)?;
                    if r.kind() == "Pod"
                        && let Some(spec) = r.json.get("spec")
                    {
                        used.extend(manifest::claim_refs_of_spec(spec));
                    }
                }
            }
            _ => {}
        }
    }
    Ok(used)
}

/// Each request's class (field path, class name) in the claim spec at JSON pointer `spec`.
fn class_refs(json: &Value, spec: &str) -> Vec<(String, String)> {
    let base = spec.trim_start_matches('/').replace('/', ".");
    let requests = json
        .pointer(&format!("{spec}/devices/requests"))
        .and_then(Value::as_array);
    let mut out = Vec::new();
    for (i, r) in requests.into_iter().flatten().enumerate() {
        let at = format!("{base}.devices.requests[{i}]");
        if let Some(c) = r
            .pointer("/exactly/deviceClassName")
            .and_then(Value::as_str)
        {
            out.push((format!("{at}.exactly.deviceClassName"), c.to_string()));
        }
        let subs = r.get("firstAvailable").and_then(Value::as_array);
        for (k, sub) in subs.into_iter().flatten().enumerate() {
            if let Some(c) = sub.get("deviceClassName").and_then(Value::as_str) {
                out.push((
                    format!("{at}.firstAvailable[{k}].deviceClassName"),
                    c.to_string(),
                ));
            }
        }
    }
    out
}
