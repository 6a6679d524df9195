//! Devices in the random scenarios (issue 34, item 3): some scenarios get a DRA driver of
//! their own, with device classes, a ResourceSlice per node, ResourceClaimTemplates, and
//! pods that claim devices through them, so the differential judges DynamicResources (and
//! the ResourceClaim controller's claims) on varied clusters beside every other plugin.
//!
//! Everything stays inside the scenario: the driver is `<namespace>.example.com`, the
//! classes `<namespace>-dev` (any of the driver's devices) and `<namespace>-big` (those with
//! at least 16Gi of `memory`), each node's slice is its own pool, and the templates live in
//! the scenario's namespace. What a scenario draws comes from its third ChaCha8 stream, so
//! the rest of the scenario is what a mix without devices draws.
//!
//! Devices carry a string attribute `model` (`a` or `b`) and a capacity `memory` (8Gi or
//! 16Gi). The templates: `one` (one device of `-dev`), `pair` (two of `-dev` that share a
//! model: `matchAttribute`), `big` (one of `-big`), `model-b` (one `-dev` device whose model
//! a request selector names).

use k8s_openapi::api::core::v1 as core;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

use super::draw::{between, chance, pick};

/// The templates a pod may claim through (module doc).
pub const TEMPLATES: &[&str] = &["one", "pair", "big", "model-b"];

/// How often scenarios get devices, and how many.
#[derive(Clone, Debug)]
pub struct DraMix {
    /// The share of scenarios with devices.
    pub pct: u32,
    /// Devices per node in such a scenario, inclusive.
    pub devices: (u32, u32),
    /// Of its pods, the share that claim a device.
    pub claim_pct: u32,
}

/// A scenario's DRA objects, as the API objects scheduler_perf's `createAny` creates.
#[derive(Clone, Debug, Default)]
pub struct DraObjects {
    /// DeviceClasses (cluster-scoped).
    pub classes: Vec<Value>,
    /// ResourceSlices (cluster-scoped), one per node with devices.
    pub slices: Vec<Value>,
    /// ResourceClaimTemplates (in the scenario's namespace).
    pub templates: Vec<Value>,
}

fn driver(ns: &str) -> String {
    format!("{ns}.example.com")
}

/// The scenario's devices, if it draws them; the pods that draw a claim get a
/// `resourceClaims` entry naming one of [`TEMPLATES`].
pub fn make_dra(
    rng: &mut ChaCha8Rng,
    mix: &DraMix,
    ns: &str,
    nodes: &[core::Node],
    pods: &mut [core::Pod],
) -> Option<DraObjects> {
    if !chance(rng, mix.pct) {
        return None;
    }
    let d = driver(ns);
    let class = |name: &str, extra: Option<&str>| {
        let mut selectors =
            vec![json!({"cel": {"expression": format!("device.driver == \"{d}\"")}})];
        if let Some(e) = extra {
            selectors.push(json!({"cel": {"expression": e}}));
        }
        json!({
            "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": format!("{ns}-{name}")},
            "spec": {"selectors": selectors}
        })
    };
    let big = format!("device.capacity[\"{d}\"].memory.compareTo(quantity(\"16Gi\")) >= 0");
    let classes = vec![class("dev", None), class("big", Some(&big))];
    let mut slices = Vec::new();
    for n in nodes {
        let node = n.metadata.name.clone().unwrap_or_default();
        let count = between(rng, mix.devices);
        if count == 0 {
            continue;
        }
        let devices: Vec<Value> = (0..count)
            .map(|k| {
                json!({
                    "name": format!("dev-{k}"),
                    "attributes": {"model": {"string": pick(rng, &["a", "b"])}},
                    "capacity": {"memory": {"value": pick(rng, &["8Gi", "16Gi"])}}
                })
            })
            .collect();
        slices.push(json!({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": format!("{node}-devices")},
            "spec": {"driver": d, "nodeName": node,
                     "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": devices}
        }));
    }
    let template = |name: &str, request: Value, constraints: Value| {
        let mut devices = json!({"requests": [request]});
        if constraints.as_array().is_some_and(|c| !c.is_empty()) {
            devices["constraints"] = constraints;
        }
        json!({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"spec": {"devices": devices}}
        })
    };
    let exactly = |class: &str, count: u32, selector: Option<String>| {
        let mut e = json!({"deviceClassName": format!("{ns}-{class}"), "count": count});
        if let Some(s) = selector {
            e["selectors"] = json!([{"cel": {"expression": s}}]);
        }
        json!({"name": "dev", "exactly": e})
    };
    let templates = vec![
        template("one", exactly("dev", 1, None), json!([])),
        template(
            "pair",
            exactly("dev", 2, None),
            json!([{"matchAttribute": format!("{d}/model")}]),
        ),
        template("big", exactly("big", 1, None), json!([])),
        template(
            "model-b",
            exactly(
                "dev",
                1,
                Some(format!("device.attributes[\"{d}\"].model == \"b\"")),
            ),
            json!([]),
        ),
    ];
    for p in pods.iter_mut() {
        if !chance(rng, mix.claim_pct) {
            continue;
        }
        let t = pick(rng, TEMPLATES);
        if let Some(spec) = p.spec.as_mut() {
            spec.resource_claims = Some(vec![core::PodResourceClaim {
                name: "dev".into(),
                resource_claim_template_name: Some(t.into()),
                ..Default::default()
            }]);
        }
    }
    Some(DraObjects {
        classes,
        slices,
        templates,
    })
}
