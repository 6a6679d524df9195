//! Planning's census of DRA device classes: a claim whose request names a DeviceClass that no
//! op of the workload creates.
//!
//! kube's API server accepts such a claim (a class is looked up when the claim is allocated,
//! not when it is stored), and kube's DynamicResources plugin then keeps every pod that uses
//! it pending as unresolvable (`request <name>: device class <class> does not exist`), so
//! scheduler_perf's `createPods` waits for them until its timeout. When the workload's
//! DynamicResourceAllocation gate is on, every object the `createAny` ops create is rendered
//! and each request's `deviceClassName` (under `exactly`, or each `firstAvailable`
//! subrequest) of a ResourceClaim or ResourceClaimTemplate must name a class some op creates
//! (before or after it: a class created later lets the pods go on). The error is one line at
//! the template's file, line and column of the field. A class written with `generateName`
//! only (its name unknown before it exists) turns the check off.

use crate::error::InputError;
use crate::run::ops::{Op, Prepared};
use crate::workload::manifest::{self, Rendered};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// A class some claim names: where first, and which claim.
struct Reference {
    field: String,
    claim: String,
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
    let mut named: BTreeMap<String, Reference> = BTreeMap::new();
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
            for (field, class) in class_refs(&r.json, spec) {
                if let std::collections::btree_map::Entry::Vacant(v) = named.entry(class) {
                    let claim = r
                        .json
                        .pointer("/metadata/name")
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    v.insert(Reference {
                        field,
                        claim: format!("{} {claim:?}", r.kind()),
                        rendered: r.clone(),
                    });
                }
            }
        }
    }
    match named.iter().find(|(class, _)| !classes.contains(*class)) {
        None => Ok(()),
        Some((class, at)) => Err(InputError::new(
            &at.rendered.file,
            Some(manifest::position_of(&at.rendered, &at.field)),
            &at.field,
            format!(
                "{} requests DeviceClass {class:?}, which no op of the workload creates: kube's \
                 scheduler keeps the pods that use the claim pending (device class {class} does \
                 not exist); kube's API server accepts this, but the workload would hang; \
                 tidegate refuses it when planning",
                at.claim
            ),
        )),
    }
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
