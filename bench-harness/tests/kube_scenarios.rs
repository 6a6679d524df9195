//! `tidegate kube-scenarios` and `tidegate_bench::oracle::scenarios`: random scheduler_perf
//! scenarios for the differential oracle. The same seed writes the same bytes; every template
//! is a Node or Pod the harness reads (as kube's scheduler_perf would), with the isolation and
//! the fields the generator promises; the config is one runnable test case per batch (two
//! where some of its scenarios have pod groups: those in their own test case with the
//! workload gates on); and `tidegate run` runs a batch (gated pods released by their
//! updateAny).

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::scheduling::v1beta1::PodGroup;
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

/// Scenarios with devices (`oracle/scenarios_dra.rs`): their classes, slices and claim
/// templates are created before their pods, each slice is one node's own pool of the
/// scenario's driver, and a pod claims only through a template of its own namespace.
#[test]
fn scenarios_with_devices_create_them_first_and_pods_claim_only_their_own() {
    let dir = write(1, 40, 40);
    let cfg = config(dir.path());
    let (mut with_devices, mut claiming) = (BTreeSet::new(), 0);
    for tc in &cfg {
        let mut templates = BTreeSet::new();
        for op in ops(tc) {
            let path = |op: &Value| dir.path().join(s(op, "templatePath"));
            match s(op, "opcode") {
                "createAny" => {
                    let text = std::fs::read_to_string(path(op)).unwrap();
                    let o: Value = serde_saphyr::from_str(&text).unwrap();
                    let name = o["metadata"]["name"].as_str().unwrap().to_string();
                    match o["kind"].as_str().unwrap() {
                        "DeviceClass" | "ResourceSlice" => {
                            assert!(op.get("namespace").is_none(), "{name}: cluster-scoped");
                            let ns = name.split("-node-").next().unwrap();
                            let ns = ns.trim_end_matches("-dev").trim_end_matches("-big");
                            if o["kind"] == "ResourceSlice" {
                                let node = o["spec"]["nodeName"].as_str().unwrap();
                                assert_eq!(o["spec"]["pool"]["name"], node);
                                assert_eq!(o["spec"]["driver"], format!("{ns}.example.com"));
                            }
                            with_devices.insert(ns.to_string());
                        }
                        "ResourceClaimTemplate" => {
                            let ns = s(op, "namespace").to_string();
                            assert_eq!(o["metadata"]["namespace"], ns.as_str());
                            templates.insert((ns, name));
                        }
                        // Volumes (oracle/scenarios_volumes.rs, checked by its tests).
                        "StorageClass"
                        | "CSINode"
                        | "PersistentVolume"
                        | "PersistentVolumeClaim" => {}
                        k => panic!("createAny of {k}"),
                    }
                }
                "createPods" => {
                    let p: core::Pod = typed(&dir.path().join(s(op, "podTemplatePath")), "Pod");
                    let ns = s(op, "namespace").to_string();
                    for c in p.spec.unwrap().resource_claims.iter().flatten() {
                        let t = c.resource_claim_template_name.clone().unwrap();
                        assert!(templates.contains(&(ns.clone(), t)), "{ns}: {c:?}");
                        claiming += 1;
                    }
                }
                _ => {}
            }
        }
    }
    // Mix::DEFAULT: 30% of the scenarios, half their pods.
    assert!((5..=20).contains(&with_devices.len()), "{with_devices:?}");
    assert!(claiming > 10, "{claiming} pods claim devices");
}

/// The config's ops of each batch's test cases, and every template they name: nodes first,
/// then the metrics window over the test case's namespaces, the pod groups (one
/// createPodGroups each, in a test case of their own with the workload gates on), the pods,
/// one update per gated pod (its twin without gates), the sleep and the end of the window.
#[test]
fn every_template_is_a_node_pod_or_pod_group_with_the_promised_fields() {
    let dir = write(3, 12, 5);
    let cfg = config(dir.path());
    let names: Vec<String> = cfg.iter().map(|tc| s(tc, "name").to_string()).collect();
    let listed: Vec<String> = scenarios::test_cases(3, 12, 5, &Mix::DEFAULT)
        .iter()
        .map(|n| n.split('/').next().unwrap().to_string())
        .collect();
    assert_eq!(names, listed);
    let mut scenarios_seen = BTreeSet::new();
    let mut per_batch: BTreeMap<usize, usize> = BTreeMap::new();
    let mut group_cases = 0;
    for tc in &cfg {
        let name = s(tc, "name");
        let grouped = name.starts_with("Random3GroupBatch");
        let b: usize = name
            .trim_start_matches("Random3GroupBatch")
            .trim_start_matches("Random3Batch")
            .parse()
            .unwrap_or_else(|_| panic!("test case {name}"));
        group_cases += usize::from(grouped);
        // The pod-group gates on a test case with groups; the DRA gate (which starts kube's
        // ResourceClaim controller) on one with devices.
        let mut gates = tc
            .get("featureGates")
            .cloned()
            .unwrap_or(serde_json::json!({}));
        let devices = ops(tc).iter().any(|o| {
            s(o, "opcode") == "createAny" && {
                let text = std::fs::read_to_string(dir.path().join(s(o, "templatePath"))).unwrap();
                ["DeviceClass", "ResourceSlice", "ResourceClaimTemplate"]
                    .iter()
                    .any(|k| text.contains(&format!("kind: {k}\n")))
            }
        });
        assert_eq!(
            gates
                .as_object_mut()
                .unwrap()
                .remove(scenarios::DRA_GATE)
                .is_some(),
            devices,
            "{name}"
        );
        if grouped {
            assert_eq!(
                gates,
                serde_json::json!({"GenericWorkload": true, "TopologyAwareWorkloadScheduling": true})
            );
        } else {
            assert_eq!(gates, serde_json::json!({}), "{name}");
        }
        let w = &tc["workloads"][0];
        let count: usize = s(w, "name")
            .trim_start_matches("Scenarios")
            .parse()
            .unwrap();
        *per_batch.entry(b).or_default() += count;
        assert_eq!(
            w["labels"],
            serde_json::json!(["integration-test", "random"])
        );
        assert!(w.get("params").is_none());
        let kinds: Vec<&str> = ops(tc).iter().map(|o| s(o, "opcode")).collect();
        let window_at = kinds
            .iter()
            .position(|k| *k == "startCollectingMetrics")
            .unwrap();
        let first_pod = kinds.iter().position(|k| *k == "createPods").unwrap();
        assert!(kinds[..window_at].iter().all(|k| *k == "createNodes"));
        // Devices and volumes (createAny: classes, slices, claim templates, storage classes,
        // CSINodes, claims and volumes, the last two given their phase by updateAny) and
        // groups before any pod.
        let before_pods = &kinds[window_at + 1..first_pod];
        assert!(
            before_pods
                .iter()
                .all(|k| ["createPodGroups", "createAny", "updateAny"].contains(k))
        );
        assert_eq!(
            before_pods.contains(&"createPodGroups"),
            grouped,
            "{name}: {kinds:?}"
        );
        assert!(!kinds[first_pod..].contains(&"createAny"));
        assert!(!kinds[first_pod..].contains(&"createPodGroups"));
        assert_eq!(
            &kinds[kinds.len() - 2..],
            &["sleep", "stopCollectingMetrics"]
        );
        assert_eq!(ops(tc)[kinds.len() - 2]["duration"], "6s");
        let mut gated = BTreeSet::new();
        let mut updated = BTreeSet::new();
        let mut nodes: BTreeMap<String, usize> = BTreeMap::new();
        let mut pods: BTreeMap<String, usize> = BTreeMap::new();
        let mut groups: BTreeMap<(String, String), PodGroup> = BTreeMap::new();
        let mut members: BTreeMap<(String, String), Vec<Option<i32>>> = BTreeMap::new();
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
                "createPodGroups" => {
                    assert_eq!(op["count"], 1);
                    let g: PodGroup = typed(&dir.path().join(s(op, "templatePath")), "PodGroup");
                    let ns = s(op, "namespace").to_string();
                    assert_eq!(g.metadata.namespace.as_deref(), Some(ns.as_str()));
                    let policy = &g.spec.scheduling_policy;
                    assert!(policy.gang.is_some() != policy.basic.is_some(), "{g:?}");
                    for t in g
                        .spec
                        .scheduling_constraints
                        .iter()
                        .flat_map(|c| c.topology.iter().flatten())
                    {
                        assert!([scenarios::HOSTNAME, scenarios::ZONE].contains(&t.key.as_str()));
                    }
                    let gname = g.metadata.name.clone().unwrap();
                    assert!(groups.insert((ns, gname), g).is_none());
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
                    if let Some(g) = scenarios::pod_group_of(&p) {
                        // Its group was created before it, in its namespace.
                        assert!(
                            groups.contains_key(&(ns.clone(), g.to_string())),
                            "{ns}/{g}"
                        );
                        members
                            .entry((ns.clone(), g.to_string()))
                            .or_default()
                            .push(p.spec.as_ref().unwrap().priority);
                    }
                    if scenarios::is_gated(&p) {
                        // Pods are compared as JSON text (k8s-openapi types are not Ord).
                        let twin = serde_json::to_string(&scenarios::ungated(&p)).unwrap();
                        gated.insert((ns, twin));
                    }
                }
                "updateAny" => {
                    let path = dir.path().join(s(op, "templatePath"));
                    if !std::fs::read_to_string(&path)
                        .unwrap()
                        .contains("kind: Pod\n")
                    {
                        continue; // a volume or claim given its phase
                    }
                    let p: core::Pod = typed(&path, "Pod");
                    assert!(!scenarios::is_gated(&p));
                    let p = serde_json::to_string(&p).unwrap();
                    updated.insert((s(op, "namespace").to_string(), p));
                }
                _ => {}
            }
        }
        // Each gated pod's update is the same pod but for the gates.
        assert_eq!(gated, updated);
        // Every group has 2 to 4 members, all at the group's priority, and a gang's minCount
        // is at most its size.
        assert_eq!(groups.len(), members.len());
        for (key, g) in &groups {
            let m = &members[key];
            assert!((2..=4).contains(&m.len()), "{key:?}: {m:?}");
            assert!(m.iter().all(|p| *p == g.spec.priority), "{key:?}");
            if let Some(gang) = &g.spec.scheduling_policy.gang {
                assert!((1..=m.len() as i32).contains(&gang.min_count), "{key:?}");
            }
        }
        // A test case with groups has them in every scenario; one without, in none.
        let with_groups: BTreeSet<&String> = groups.keys().map(|(ns, _)| ns).collect();
        assert_eq!(with_groups.len(), if grouped { nodes.len() } else { 0 });
        assert!(nodes.values().all(|n| (2..=6).contains(n)), "{nodes:?}");
        assert!(pods.values().all(|n| (3..=10).contains(n)), "{pods:?}");
        assert_eq!(nodes.len(), count);
        let window: Vec<&str> = ops(tc)[window_at]["namespaces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(window, nodes.keys().map(String::as_str).collect::<Vec<_>>());
        scenarios_seen.extend(nodes.into_keys());
    }
    assert_eq!(per_batch, BTreeMap::from([(0, 5), (1, 5), (2, 2)]));
    assert!(group_cases > 0, "seed 3 draws no scenario with groups");
    let want: BTreeSet<String> = (0..12).map(scenarios::namespace).collect();
    assert_eq!(scenarios_seen, want);
}

/// Over many scenarios the features appear about as often as `Mix::DEFAULT` says, and a mix
/// changed in code changes what is written.
#[test]
fn the_mix_sets_how_often_each_feature_appears() {
    let mix = Mix::DEFAULT;
    let (mut pods, mut nodes, mut with_groups, mut gangs, mut groups) =
        (Vec::new(), Vec::new(), 0, 0, 0);
    for i in 0..600 {
        let sc = scenarios::scenario(9, i, &mix);
        // The groups come from the scenario's second stream: without them the scenario is
        // the one a mix without groups draws (members take their group's priority).
        let plain = scenarios::scenario(
            9,
            i,
            &Mix {
                group_pct: 0,
                ..Mix::DEFAULT
            },
        );
        assert_eq!(sc.nodes, plain.nodes);
        assert_eq!(sc.pods.len(), plain.pods.len());
        with_groups += usize::from(!sc.groups.is_empty());
        groups += sc.groups.len();
        gangs += sc
            .groups
            .iter()
            .filter(|g| g.spec.scheduling_policy.gang.is_some())
            .count();
        pods.extend(plain.pods);
        nodes.extend(sc.nodes);
    }
    assert!(
        (f64::from(with_groups as u32) / 600.0 - f64::from(mix.group_pct) / 100.0).abs() < 0.05,
        "{with_groups} of 600 scenarios with groups"
    );
    assert!(
        (gangs as f64 / groups as f64 - f64::from(mix.gang_pct) / 100.0).abs() < 0.08,
        "{gangs} gangs of {groups} groups"
    );
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
    // Every test case is listed; those without pod groups are runnable (those with groups
    // are as soon as the harness runs createPodGroups).
    let names = scenarios::test_cases(1, 7, 3, &Mix::DEFAULT);
    for name in &names {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name} not listed:\n{out}"));
        if !name.contains("GroupBatch") {
            assert!(line.ends_with(" yes"), "{line}");
        }
    }
    let first = names
        .iter()
        .find(|n| n.starts_with("Random1Batch0/"))
        .expect("batch 0 has scenarios without groups");

    let dump = dir.path().join("pods.jsonl");
    let o = bin()
        .arg("run")
        .arg(&cfg)
        .args(["--workload", first.as_str()])
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
        .map(|i| scenarios::scenario(1, i, &Mix::DEFAULT))
        .filter(|sc| sc.groups.is_empty())
        .map(|sc| sc.pods.len())
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
