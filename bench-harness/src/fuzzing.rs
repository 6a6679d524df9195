//! Entry points for the cargo-fuzz targets in `fuzz/` and for their regression tests
//! (`bench-harness/tests/fuzz_regressions.rs` replays every input kept in
//! `fuzz/regressions/<target>/`). Each takes arbitrary bytes and runs one input path of the
//! harness the way `tidegate run` would; bad input must come back as an error, never a panic,
//! a hang or an unbounded allocation. Checks that hold for every input are asserted here, so
//! the fuzzer reports their violation as a crash.

use crate::run::ops::resolve_ops;
use crate::template::Template;
use crate::workload::manifest::{self, ObjectTemplate};
use crate::workload::parse_config;
use crate::workload::scheduler_config;
use std::path::Path;
use tidegate_engine::Registry;
use tidegate_engine::api::Quantity;
use tidegate_engine::api::validation::validate_pod_create;

/// A fuzz target's entry: arbitrary bytes in, nothing out; a panic is a finding.
pub type Entry = fn(&[u8]);

/// The fuzz targets, by name (the `fuzz/fuzz_targets/<name>.rs` files), with their entries.
pub const TARGETS: &[(&str, Entry)] = &[
    ("workload_config", workload_config),
    ("scheduler_config", scheduler_config),
    ("quantity", quantity),
    ("manifest", manifest),
    ("template", template),
];

/// A workload config: parse, then resolve every workload's ops (params, paths, fields).
pub fn workload_config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(cfg) = parse_config(Path::new("fuzz/config.yaml"), text) else {
        return;
    };
    for tc in &cfg.test_cases {
        for wl in &tc.workloads {
            let _ = resolve_ops(&cfg, tc, wl);
        }
    }
}

/// A KubeSchedulerConfiguration: decode, default, validate, and trial-build every profile.
pub fn scheduler_config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ =
        scheduler_config::parse_text(Path::new("fuzz/scheduler.yaml"), text, &Registry::in_tree());
}

/// The quantity parser. A quantity that parses keeps its sign in both scaled values.
pub fn quantity(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(q) = Quantity::parse(text) {
        let (v, m) = (q.value(), q.milli_value());
        if q.is_negative() {
            assert!(v <= 0 && m < 0, "{text:?}: negative, value {v}, milli {m}");
        } else {
            assert!(v >= 0 && m >= 0, "{text:?}: value {v}, milli {m}");
        }
    }
}

/// A Pod or Node manifest (possibly a template): render object 0 of 3, type it, convert it
/// to the engine's form, and validate a pod as the API server does on create.
pub fn manifest(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(t) = ObjectTemplate::from_text(Path::new("fuzz/object.yaml"), text) else {
        return;
    };
    let Ok(r) = t.render(0, 3, &params()) else {
        return;
    };
    if r.kind() == "Node" {
        if let Ok(n) = r.typed::<k8s_openapi::api::core::v1::Node>("Node") {
            let _ = manifest::node(Some(&r), &n);
        }
    } else if let Ok(pod) = r.typed::<k8s_openapi::api::core::v1::Pod>("Pod") {
        let _ = validate_pod_create(&pod);
        let _ = manifest::pod_spec_info(Some(&r), &pod);
    }
}

/// The Go-template subset: parse, then render with the data a createPods op gives.
pub fn template(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(t) = Template::parse(text) {
        let mut d = params();
        d.insert("Index".into(), 1.into());
        d.insert("Count".into(), 3.into());
        let _ = t.render(&d);
    }
}

/// Template params as workloads give them: numbers, strings, a list and a map.
fn params() -> serde_json::Map<String, serde_json::Value> {
    let v = serde_json::json!({
        "nodes": 5, "name": "x", "ratio": 0.5, "on": true,
        "zones": ["a", "b"], "labels": {"k": "v"}
    });
    match v {
        serde_json::Value::Object(m) => m,
        _ => unreachable!("a map"),
    }
}
