//! No feature gate is accepted and ignored: every workload that sets a gate tidegate cannot
//! follow is unsupported with the gate named (in `tidegate list` and at run time), over every
//! upstream file we have and our own; and the NodeDeclaredFeatures topic runs as kube runs it.

use std::path::{Path, PathBuf};
use std::process::Command;
use tidegate_bench::output::results::Outcome;
use tidegate_bench::run::{RunOptions, check_workload, run_config, select};
use tidegate_bench::workload;
use tidegate_engine::features::{FeatureGates, Support, gate};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `*.yaml` config (a list of test cases) under `dir`.
fn configs(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd {
        let p = e.unwrap().path();
        if p.is_dir() {
            configs(&p, out);
        } else if p.extension().is_some_and(|x| x == "yaml")
            && std::fs::read_to_string(&p).is_ok_and(|t| t.contains("workloadTemplate"))
        {
            out.push(p);
        }
    }
}

fn all_opts() -> RunOptions {
    RunOptions {
        label_filter: Some(String::new()),
        ..RunOptions::default()
    }
}

#[test]
fn no_workload_runs_with_a_gate_tidegate_cannot_follow() {
    let mut files = vec![];
    configs(&repo().join("perf-data/workloads"), &mut files);
    configs(
        &repo().join("../shared/upstream/scheduler_perf"),
        &mut files,
    );
    // kube v1.37.2's own tree, where the Go module cache holds it (kube-reference/ puts it
    // there): every topic of that release.
    if let Some(home) = std::env::var_os("HOME") {
        let gomod = Path::new(&home).join("go/pkg/mod/k8s.io/kubernetes@v1.37.2");
        configs(&gomod.join("test/integration/scheduler_perf"), &mut files);
    }
    let (mut with_gates, mut refused) = (0, 0);
    for file in &files {
        let Ok(cfg) = workload::load(file) else {
            continue; // bad-input fixtures have their own tests
        };
        let opts = all_opts();
        for (tc, wl) in select(&cfg, &opts) {
            let mut set = tc.feature_gates.clone();
            set.extend(wl.feature_gates.clone());
            if set.is_empty() {
                continue;
            }
            with_gates += 1;
            let name = format!("{}: {}/{}", file.display(), tc.name, wl.name);
            // A workload kube itself cannot run (kube v1.37.2's dra file names an undefined
            // param in unlabelled workloads) is an input error here too: it never runs.
            let Ok(verdict) = check_workload(&cfg, tc, wl, &opts) else {
                continue;
            };
            match FeatureGates::for_workload(&set) {
                Err(e) => {
                    refused += 1;
                    let why = verdict.unwrap_or_else(|| panic!("{name} runs with {e}"));
                    assert!(
                        why.contains(&format!("feature gate {}=", e.gate)),
                        "{name}: {why}"
                    );
                }
                Ok(_) => {
                    for (g, v) in &set {
                        let s = gate(g)
                            .unwrap_or_else(|| panic!("{name}: {g} accepted"))
                            .support;
                        assert!(
                            !matches!(s, Support::Only(ok, _) if ok != *v),
                            "{name}: {g}={v} accepted"
                        );
                    }
                }
            }
        }
    }
    assert!(with_gates > 0, "no workload with gates found in {files:?}");
    eprintln!(
        "{} config files, {with_gates} workloads set gates, {refused} refused for a gate",
        files.len()
    );
}

fn tidegate(args: &[&str]) -> (String, String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_tidegate"))
        .args(args)
        .output()
        .expect("tidegate runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

const GATED: &str = r#"
- name: Gates
  workloadTemplate:
  - opcode: createNodes
    count: 2
  - opcode: createPods
    count: 4
    collectMetrics: true
  workloads:
  - name: FastPath
    labels: [integration-test]
    featureGates:
      InterPodAffinityHostnameFastPath: true
  - name: Unknown
    labels: [integration-test]
    featureGates:
      NoSuchGate: true
  - name: Locked
    labels: [integration-test]
    featureGates:
      InPlacePodVerticalScaling: false
  - name: Identical
    labels: [integration-test]
    featureGates:
      SchedulerAsyncAPICalls: true
  - name: Modelled
    labels: [integration-test]
    featureGates:
      SchedulerPopFromBackoffQ: false
      NodeDeclaredFeatures: false
"#;

#[test]
fn list_and_run_name_the_gate_that_makes_a_workload_unsupported() {
    let dir = std::env::temp_dir().join(format!("tidegate-gates-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("gates.yaml");
    std::fs::write(&file, GATED).unwrap();
    let f = file.to_str().unwrap();
    let (list, _, rc) = tidegate(&["list", f, "--label-filter", "integration-test"]);
    assert_eq!(rc, 0, "{list}");
    let row = |w: &str| {
        list.lines()
            .find(|l| l.starts_with(&format!("Gates/{w} ")))
            .unwrap_or_else(|| panic!("{w} not listed:\n{list}"))
            .to_string()
    };
    assert!(
        row("FastPath").contains("unsupported: feature gate InterPodAffinityHostnameFastPath=true")
    );
    assert!(row("Unknown").contains("feature gate NoSuchGate=true: not a feature gate"));
    assert!(row("Locked").contains("InPlacePodVerticalScaling=false: locked to true"));
    assert!(row("Identical").ends_with("yes"), "{}", row("Identical"));
    assert!(row("Modelled").ends_with("yes"), "{}", row("Modelled"));

    let (out, err, rc) = tidegate(&[
        "run",
        f,
        "--label-filter",
        "integration-test",
        "--no-progress",
        "--threads",
        "1",
    ]);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(
        out.contains("skipped: unsupported: feature gate InterPodAffinityHostnameFastPath=true"),
        "{out}"
    );
    assert!(
        out.contains("feature gates that change nothing kube-scheduler decides here (docs/feature-gates.md): SchedulerAsyncAPICalls=true"),
        "{out}"
    );
    assert!(!out.contains("accepted and ignored"), "{out}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Our copy of the nodedeclaredfeatures topic: the Filter keeps pods that need a feature on
/// the nodes declaring it (2 nodes with room for 5 pods each: 10 bind, the rest wait).
#[test]
fn node_declared_features_decide_where_pods_go() {
    let file = repo().join("perf-data/workloads/nodedeclaredfeatures/performance-config.yaml");
    let cfg = workload::load(&file).unwrap();
    assert_eq!(cfg.topic, "nodedeclaredfeatures");
    let opts = RunOptions {
        label_filter: Some("integration-test".into()),
        threads: Some(1),
        dump_pods: true,
        ..RunOptions::default()
    };
    let reports = run_config(&cfg, &opts).unwrap();
    let mut seen = 0;
    for r in reports {
        let Outcome::Ran(res) = r.outcome else {
            panic!("{}/{} did not run", r.test_case, r.workload);
        };
        let s = &res.summary;
        assert!(s.adds_up(), "{s:?}");
        match r.workload.as_str() {
            "5Nodes_10Pods" => assert_eq!((s.bound, s.pending()), (10, 0)),
            "5Nodes_12Pods" => assert_eq!((s.bound, s.pending()), (10, 2)),
            "5Nodes5DeclaredFeatures" => assert_eq!(s.bound, 10),
            w => panic!("unexpected {w}"),
        }
        if r.test_case == "NodeDeclaredFeaturesFilter" {
            for p in &res.pods {
                if let Some(n) = &p.node {
                    assert!(n.starts_with("node-restart-all-"), "{} on {n}", p.name);
                }
            }
        }
        seen += 1;
    }
    assert_eq!(seen, 3);
}
