//! `tidegate kube-scenarios` and `tidegate_bench::oracle::scenarios`: random scheduler_perf
//! scenarios for the differential oracle. The same seed writes the same bytes; every template
//! is a Node or Pod the harness reads (as kube's scheduler_perf would), with the isolation and
//! the fields the generator promises; the config is one runnable test case per batch; and
//! `tidegate run` runs a batch (gated pods released by their updateAny).

use k8s_openapi::api::core::v1 as core;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use tidegate_bench::oracle::scenarios::{self, File, Mix};
use tidegate_bench::workload::manifest::ObjectTemplate;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tidegate"))
}

/// Runs `tidegate kube-scenarios` into a fresh folder.
fn write(seed: u64, count: usize, per_batch: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let o = bin()
        .args(["kube-scenarios", "--seed", &seed.to_string()])
        .args(["--scenarios", &count.to_string()])
        .args(["--per-batch", &per_batch.to_string(), "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    dir
}

/// Every file under `dir`, by path relative to it.
fn read_all(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, at: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(at).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().to_string();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// A template as the harness reads it (text/template, YAML, k8s-openapi).
fn typed<T: serde::de::DeserializeOwned>(path: &Path, kind: &str) -> T {
    let t = ObjectTemplate::load(path).unwrap();
    assert!(t.is_static(), "{}: a fixed object", path.display());
    t.render(0, 1, &serde_json::Map::new())
        .unwrap()
        .typed(kind)
        .unwrap()
}

fn config(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join(scenarios::CONFIG_FILE)).unwrap();
    serde_saphyr::from_str::<Vec<Value>>(&text).unwrap()
}

fn ops(tc: &Value) -> &Vec<Value> {
    tc["workloadTemplate"].as_array().unwrap()
}

fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or_else(|| panic!("{key} in {v}"))
}

#[test]
fn the_same_seed_writes_the_same_bytes_and_another_seed_differs() {
    let a = read_all(write(11, 7, 3).path());
    let b = read_all(write(11, 7, 3).path());
    assert_eq!(a, b);
    let c = read_all(write(12, 7, 3).path());
    assert_ne!(a, c);
    // The library gives the files the command writes.
    let files = scenarios::generate(11, 7, 3, &Mix::DEFAULT);
    assert_eq!(files.len(), a.len());
    for File { path, contents } in files {
        assert_eq!(a[&path], contents.as_bytes(), "{path}");
    }
}

#[test]
fn a_scenario_is_the_same_whatever_the_batch_size() {
    for i in [0, 4, 9] {
        let one = scenarios::scenario(5, i, &Mix::DEFAULT);
        let again = scenarios::scenario(5, i, &Mix::DEFAULT);
        assert_eq!(one.nodes, again.nodes);
        assert_eq!(one.pods, again.pods);
    }
    let small = scenarios::generate(5, 10, 3, &Mix::DEFAULT);
    let large = scenarios::generate(5, 10, 10, &Mix::DEFAULT);
    let by_scenario = |files: &[File]| -> BTreeMap<String, String> {
        files
            .iter()
            .filter(|f| f.path.starts_with("templates/"))
            .map(|f| {
                // templates/b<b>/scenario-<i>/x.yaml → scenario-<i>/x.yaml
                let rest = f.path.splitn(3, '/').nth(2).unwrap().to_string();
                (rest, f.contents.clone())
            })
            .collect()
    };
    assert_eq!(by_scenario(&small), by_scenario(&large));
}

fn check_node(n: &core::Node, ns: &str, j: usize, zones: usize) {
    let name = format!("{ns}-node-{j}");
    assert_eq!(n.metadata.name.as_deref(), Some(name.as_str()));
    let l = n.metadata.labels.as_ref().unwrap();
    assert_eq!(l["kubernetes.io/hostname"], name);
    assert_eq!(l[scenarios::SCENARIO_LABEL], ns);
    let zone = &l["topology.kubernetes.io/zone"];
    let k: usize = zone
        .strip_prefix(&format!("{ns}-zone-"))
        .unwrap()
        .parse()
        .unwrap();
    assert!(k < zones, "{zone}");
    assert!(["ssd", "hdd"].contains(&l["disk"].as_str()));
    let st = n.status.as_ref().unwrap();
    let cap = st.capacity.as_ref().unwrap();
    assert!(["2", "4", "8"].contains(&cap["cpu"].0.as_str()));
    assert!(["4Gi", "8Gi", "16Gi"].contains(&cap["memory"].0.as_str()));
    let pods: u32 = cap["pods"].0.parse().unwrap();
    assert!(pods == 110 || (3..=6).contains(&pods), "{pods}");
    let ready = &st.conditions.as_ref().unwrap()[0];
    assert_eq!(
        (ready.type_.as_str(), ready.status.as_str()),
        ("Ready", "True")
    );
    assert_eq!(st.phase.as_deref(), Some("Running"));
    for t in n.spec.as_ref().unwrap().taints.iter().flatten() {
        let v = (t.key.as_str(), t.value.as_deref(), t.effect.as_str());
        assert!(
            [
                ("dedicated", Some("gpu"), "NoSchedule"),
                ("dedicated", Some("infra"), "PreferNoSchedule"),
                ("flaky", None, "NoExecute"),
            ]
            .contains(&v),
            "{v:?}"
        );
    }
}

fn check_pod(p: &core::Pod, ns: &str, j: usize) {
    assert_eq!(
        p.metadata.name.as_deref(),
        Some(format!("pod-{j}").as_str())
    );
    assert!(p.metadata.generate_name.is_none());
    assert_eq!(p.metadata.namespace.as_deref(), Some(ns));
    let app = &p.metadata.labels.as_ref().unwrap()["app"];
    assert!(["a", "b", "c"].contains(&app.as_str()));
    let spec = p.spec.as_ref().unwrap();
    assert_eq!(
        spec.node_selector,
        Some(BTreeMap::from([(
            scenarios::SCENARIO_LABEL.to_string(),
            ns.to_string()
        )]))
    );
    assert_eq!(spec.termination_grace_period_seconds, Some(0));
    assert!([0, 10, 100].contains(&spec.priority.unwrap()));
    assert_eq!(spec.containers.len(), 1);
    let c = &spec.containers[0];
    assert_eq!(c.name, "pause");
    assert_eq!(c.image.as_deref(), Some("registry.k8s.io/pause:3.10.1"));
    for port in c.ports.iter().flatten() {
        assert_eq!(port.container_port, 8080);
        assert!([Some(8080), Some(8081)].contains(&port.host_port));
        assert_eq!(port.protocol.as_deref(), Some("TCP"));
    }
    for g in spec.scheduling_gates.iter().flatten() {
        assert_eq!(g.name, scenarios::GATE);
    }
}

/// The config's ops of each batch, and every template they name: nodes first, then the
/// metrics window over the batch's namespaces, the pods, one update per gated pod (its twin
/// without gates), the sleep and the end of the window.
#[test]
fn every_template_is_a_node_or_pod_with_the_promised_fields() {
    let dir = write(3, 12, 5);
    let cfg = config(dir.path());
    assert_eq!(cfg.len(), 3);
    let mut scenarios_seen = BTreeSet::new();
    for (b, tc) in cfg.iter().enumerate() {
        assert_eq!(s(tc, "name"), format!("Random3Batch{b}"));
        let count = if b == 2 { 2 } else { 5 };
        let w = &tc["workloads"][0];
        assert_eq!(s(w, "name"), format!("Scenarios{count}"));
        assert_eq!(
            w["labels"],
            serde_json::json!(["integration-test", "random"])
        );
        assert!(w.get("params").is_none());
        let kinds: Vec<&str> = ops(tc).iter().map(|o| s(o, "opcode")).collect();
        let first_pod = kinds.iter().position(|k| *k == "createPods").unwrap();
        assert!(kinds[..first_pod - 1].iter().all(|k| *k == "createNodes"));
        assert_eq!(kinds[first_pod - 1], "startCollectingMetrics");
        assert_eq!(
            &kinds[kinds.len() - 2..],
            &["sleep", "stopCollectingMetrics"]
        );
        assert_eq!(ops(tc)[kinds.len() - 2]["duration"], "6s");
        let mut gated = BTreeSet::new();
        let mut updated = BTreeSet::new();
        let mut nodes: BTreeMap<String, usize> = BTreeMap::new();
        let mut pods: BTreeMap<String, usize> = BTreeMap::new();
        for op in ops(tc) {
            match s(op, "opcode") {
                "createNodes" => {
                    assert_eq!(op["count"], 1);
                    let n: core::Node = typed(&dir.path().join(s(op, "nodeTemplatePath")), "Node");
                    let ns = n.metadata.labels.as_ref().unwrap()[scenarios::SCENARIO_LABEL].clone();
                    let j = nodes.entry(ns.clone()).or_default();
                    check_node(&n, &ns, *j, 3);
                    *j += 1;
                }
                "createPods" => {
                    assert_eq!(op["count"], 1);
                    assert_eq!(op["skipWaitToCompletion"], true);
                    let path = s(op, "podTemplatePath");
                    assert!(path.starts_with(&format!("templates/b{b}/")), "{path}");
                    let p: core::Pod = typed(&dir.path().join(path), "Pod");
                    let ns = s(op, "namespace").to_string();
                    let j = pods.entry(ns.clone()).or_default();
                    check_pod(&p, &ns, *j);
                    *j += 1;
                    if scenarios::is_gated(&p) {
                        // Pods are compared as JSON text (k8s-openapi types are not Ord).
                        let twin = serde_json::to_string(&scenarios::ungated(&p)).unwrap();
                        gated.insert((ns, twin));
                    }
                }
                "updateAny" => {
                    let p: core::Pod = typed(&dir.path().join(s(op, "templatePath")), "Pod");
                    assert!(!scenarios::is_gated(&p));
                    let p = serde_json::to_string(&p).unwrap();
                    updated.insert((s(op, "namespace").to_string(), p));
                }
                _ => {}
            }
        }
        // Each gated pod's update is the same pod but for the gates.
        assert_eq!(gated, updated);
        assert_eq!(nodes.len(), count);
        assert!(nodes.values().all(|n| (2..=6).contains(n)), "{nodes:?}");
        assert!(pods.values().all(|n| (3..=10).contains(n)), "{pods:?}");
        let window: Vec<&str> = ops(tc)[kinds
            .iter()
            .position(|k| *k == "startCollectingMetrics")
            .unwrap()]["namespaces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(window, nodes.keys().map(String::as_str).collect::<Vec<_>>());
        scenarios_seen.extend(nodes.into_keys());
    }
    let want: BTreeSet<String> = (0..12).map(scenarios::namespace).collect();
    assert_eq!(scenarios_seen, want);
}

/// Over many scenarios the features appear about as often as `Mix::DEFAULT` says, and a mix
/// changed in code changes what is written.
#[test]
fn the_mix_sets_how_often_each_feature_appears() {
    let mix = Mix::DEFAULT;
    let (mut pods, mut nodes) = (Vec::new(), Vec::new());
    for i in 0..600 {
        let sc = scenarios::scenario(9, i, &mix);
        pods.extend(sc.pods);
        nodes.extend(sc.nodes);
    }
    let share = |n: usize, of: usize| n as f64 / of as f64;
    let pod_share = |f: &dyn Fn(&core::PodSpec) -> bool| {
        share(
            pods.iter().filter(|p| f(p.spec.as_ref().unwrap())).count(),
            pods.len(),
        )
    };
    let near = |got: f64, pct: u32| (got - f64::from(pct) / 100.0).abs() < 0.03;
    assert!(near(
        pod_share(&|s| s.scheduling_gates.is_some()),
        mix.gated_pct
    ));
    assert!(near(
        pod_share(&|s| s.tolerations.is_some()),
        mix.toleration_pct
    ));
    assert!(near(
        pod_share(&|s| s.topology_spread_constraints.is_some()),
        mix.spread_pct
    ));
    assert!(near(
        pod_share(&|s| s
            .affinity
            .as_ref()
            .is_some_and(|a| a.pod_anti_affinity.is_some())),
        mix.pod_anti_affinity_pct
    ));
    assert!(near(pod_share(&|s| s.priority == Some(0)), 60));
    assert!(near(pod_share(&|s| s.priority == Some(100)), 15));
    assert!(near(
        pod_share(&|s| s.containers[0].ports.is_some()),
        mix.host_port_pct
    ));
    let tainted = nodes
        .iter()
        .filter(|n| n.spec.as_ref().unwrap().taints.is_some())
        .count();
    assert!(near(share(tainted, nodes.len()), mix.taint_pct));

    let all_gated = Mix {
        gated_pct: 100,
        ..Mix::DEFAULT
    };
    let sc = scenarios::scenario(9, 0, &all_gated);
    assert!(sc.pods.iter().all(scenarios::is_gated));
}

#[test]
fn tidegate_lists_every_batch_as_runnable_and_runs_one() {
    let dir = write(1, 7, 3);
    let cfg = dir.path().join(scenarios::CONFIG_FILE);
    let o = bin().arg("list").arg(&cfg).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    for (b, count) in [(0, 3), (1, 3), (2, 1)] {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("Random1Batch{b}/Scenarios{count} ")))
            .unwrap_or_else(|| panic!("batch {b} not listed:\n{out}"));
        assert!(line.ends_with(" yes"), "{line}");
    }

    let dump = dir.path().join("pods.jsonl");
    let o = bin()
        .arg("run")
        .arg(&cfg)
        .args(["--workload", "Random1Batch0/Scenarios3"])
        .args(["--clock", "virtual", "--threads", "1", "--dump-pods"])
        .arg(&dump)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    // Every pod of the batch was created; the updates released every gate.
    let text = std::fs::read_to_string(&dump).unwrap();
    let pods: Vec<Value> = text
        .lines()
        .skip(1) // the run's provenance
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let want: usize = (0..3)
        .map(|i| scenarios::scenario(1, i, &Mix::DEFAULT).pods.len())
        .sum();
    assert_eq!(pods.len(), want);
    assert!(
        pods.iter().all(|p| p["status"] != "SchedulingGated"),
        "{text}"
    );
    assert!(pods.iter().any(|p| p["status"] == "Bound"), "{text}");
}

#[test]
fn a_batch_size_of_zero_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let o = bin()
        .args(["kube-scenarios", "--seed", "1", "--scenarios", "3"])
        .args(["--per-batch", "0", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}
