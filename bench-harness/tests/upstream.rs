//! kube-scheduler's own scheduler_perf files, run unchanged when `../shared` is present
//! (CI and developer machines); skipped on a bare clone.

use std::path::{Path, PathBuf};
use tidegate_bench::output::results::Outcome;
use tidegate_bench::run::{RunOptions, run_config};
use tidegate_bench::workload;
use tidegate_bench::workload::manifest::ObjectTemplate;

fn upstream() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/upstream/scheduler_perf");
    p.exists().then_some(p)
}

#[test]
fn every_upstream_template_parses_as_a_kubernetes_object() {
    let Some(root) = upstream() else {
        eprintln!("../shared absent: skipped");
        return;
    };
    let mut n = 0;
    let mut stack = vec![root];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "yaml")
                && !p
                    .file_name()
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .contains("performance-config")
            {
                let t = ObjectTemplate::load(&p).unwrap_or_else(|e| panic!("{e}"));
                let mut params = serde_json::Map::new();
                for (k, v) in [
                    ("priority", serde_json::json!(5)),
                    ("disruptionMode", "single".into()),
                    ("cpuRequest", "100m".into()),
                    ("minCount", 3.into()),
                    ("podsPerGroup", 2.into()),
                ] {
                    params.insert(k.into(), v);
                }
                let r = t.render(7, 100, &params).unwrap_or_else(|e| panic!("{e}"));
                match r.kind() {
                    "Pod" => {
                        let pod: k8s_openapi::api::core::v1::Pod =
                            r.typed("Pod").unwrap_or_else(|e| panic!("{e}"));
                        tidegate_bench::workload::manifest::pod_spec_info(Some(&r), &pod)
                            .unwrap_or_else(|e| panic!("{e}"));
                    }
                    "Node" => {
                        let node: k8s_openapi::api::core::v1::Node =
                            r.typed("Node").unwrap_or_else(|e| panic!("{e}"));
                        tidegate_bench::workload::manifest::node(Some(&r), &node)
                            .unwrap_or_else(|e| panic!("{e}"));
                    }
                    "Namespace" => {
                        let _: k8s_openapi::api::core::v1::Namespace =
                            r.typed("Namespace").unwrap();
                    }
                    _ => {}
                }
                n += 1;
            }
        }
    }
    assert!(n > 80, "only {n} templates found");
}

#[test]
fn every_upstream_config_parses() {
    let Some(root) = upstream() else { return };
    for topic in [
        "misc",
        "affinity",
        "topology_spreading",
        "event_handling",
        "default_preemption",
    ] {
        let cfg = workload::load(&root.join(topic).join("performance-config.yaml"))
            .unwrap_or_else(|e| panic!("{e}"));
        for tc in &cfg.test_cases {
            for wl in &tc.workloads {
                tidegate_bench::run::ops::resolve_ops(&cfg, tc, wl)
                    .unwrap_or_else(|e| panic!("{e}"));
            }
        }
    }
}

#[test]
fn misc_integration_workloads_run_unchanged() {
    let Some(root) = upstream() else { return };
    let cfg = workload::load(&root.join("misc/performance-config.yaml")).unwrap();
    let opts = RunOptions {
        label_filter: Some("integration-test".into()),
        threads: Some(2),
        ..RunOptions::default()
    };
    let reports = run_config(&cfg, &opts).unwrap();
    let ran = |n: &str| {
        reports
            .iter()
            .find(|r| format!("{}/{}", r.test_case, r.workload) == n)
            .map(|r| match &r.outcome {
                Outcome::Ran(res) => res.summary,
                Outcome::Skipped(w) => panic!("{n} skipped: {w}"),
                Outcome::Failed(w) => panic!("{n} failed: {w}"),
            })
            .unwrap()
    };
    let basic = ran("SchedulingBasic/5Nodes");
    assert_eq!((basic.created, basic.bound), (15, 15));
    let gated = ran("SchedulingWhileGated/1Node_10GatedPods");
    assert_eq!(gated.pending_gated, 10);
    assert!(gated.adds_up());
    for r in &reports {
        if let Outcome::Ran(res) = &r.outcome {
            assert!(
                res.summary.adds_up(),
                "{}/{}: {:?}",
                r.test_case,
                r.workload,
                res.summary
            );
        }
    }
    // The churn op (recreate mode: a node, a high-priority pod and a Service every second)
    // runs in the background.
    let churn = ran("SchedulingWithMixedChurn/10Nodes");
    assert!(churn.bound >= 100, "{churn:?}");
    // Every misc integration workload runs.
    for r in &reports {
        assert!(
            matches!(r.outcome, Outcome::Ran(_)),
            "{}/{} skipped",
            r.test_case,
            r.workload
        );
    }
}

#[test]
fn topology_spreading_integration_workloads_run_unchanged() {
    let Some(root) = upstream() else { return };
    let cfg = workload::load(&root.join("topology_spreading/performance-config.yaml")).unwrap();
    let opts = RunOptions {
        label_filter: Some("integration-test".into()),
        threads: Some(2),
        ..RunOptions::default()
    };
    let reports = run_config(&cfg, &opts).unwrap();
    for name in [
        "TopologySpreading/5Nodes",
        "PreferredTopologySpreading/5Nodes",
        // Hostname spreading with NodeTaintsPolicy Honor: needs the hostname label that
        // createNodes sets, as kube's node preparer does.
        "SchedulingWithNodeInclusionPolicy/5Nodes",
        // System default constraints through a Service made by createAny.
        "DefaultTopologySpreading/5Nodes",
    ] {
        let r = reports
            .iter()
            .find(|r| format!("{}/{}", r.test_case, r.workload) == name)
            .unwrap_or_else(|| panic!("{name} not run"));
        match &r.outcome {
            Outcome::Ran(res) => {
                assert!(res.summary.adds_up(), "{name}: {:?}", res.summary);
                assert_eq!(res.summary.bound, res.summary.created, "{name}");
            }
            Outcome::Skipped(w) => panic!("{name} skipped: {w}"),
            Outcome::Failed(w) => panic!("{name} failed: {w}"),
        }
    }
}

/// Runs `file`'s integration-size workloads (the named ones, or all) and returns the reports.
fn run_integration(file: &str, workloads: &[&str]) -> Vec<(String, Outcome)> {
    let Some(root) = upstream() else {
        return vec![];
    };
    let cfg = workload::load(&root.join(file)).unwrap();
    let mut out = vec![];
    let targets: Vec<Option<String>> = if workloads.is_empty() {
        vec![None]
    } else {
        workloads.iter().map(|w| Some(w.to_string())).collect()
    };
    for w in targets {
        let opts = RunOptions {
            label_filter: Some("integration-test".into()),
            workload: w,
            threads: Some(2),
            timeout: std::time::Duration::from_secs(60),
            ..RunOptions::default()
        };
        for r in run_config(&cfg, &opts).unwrap() {
            out.push((format!("{}/{}", r.test_case, r.workload), r.outcome));
        }
    }
    out
}

/// Every affinity integration workload runs (createPodSets, namespaces with labels and
/// namespaceSelector terms included) and accounts for every pod.
#[test]
fn affinity_integration_workloads_run_unchanged() {
    let reports = run_integration("affinity/performance-config.yaml", &[]);
    for (name, o) in &reports {
        match o {
            Outcome::Ran(r) => assert!(r.summary.adds_up(), "{name}: {:?}", r.summary),
            Outcome::Skipped(w) | Outcome::Failed(w) => panic!("{name}: {w}"),
        }
    }
}

/// The event_handling cases with explicit start/stopCollectingMetrics windows over
/// `type=unsched` pods, updateAny of nodes, and node adds run unchanged.
#[test]
fn event_handling_integration_workloads_run_unchanged() {
    let reports = run_integration(
        "event_handling/performance-config.yaml",
        &[
            "EventHandlingNodeAdd/2Nodes_20Pods",
            "EventHandlingPodAdd/10Pods",
            "EventHandlingNodeUpdate/2Nodes_20Pods",
        ],
    );
    for (name, o) in &reports {
        match o {
            Outcome::Ran(r) => {
                assert!(r.summary.adds_up(), "{name}: {:?}", r.summary);
                assert_eq!(r.summary.pending(), 0, "{name}: {:?}", r.summary);
                let window = r.items.iter().any(|i| {
                    i.labels.get("Metric").map(String::as_str) == Some("SchedulingThroughput")
                });
                assert!(window, "{name}: no throughput item");
            }
            Outcome::Skipped(w) | Outcome::Failed(w) => panic!("{name}: {w}"),
        }
    }
}

/// EventHandlingPodUpdate runs on the virtual clock: its InterPodAffinity stage waits for the
/// 5-minute unschedulable flush (kube's `getUnschedulablePodsWithCrossTopologyTerm` moves no
/// pod that anti-affinity rejected), which costs no wall time there. Every pod ends bound.
/// EventHandlingPodDelete (PersistentVolumes and claims) runs where its templates are.
#[test]
fn event_handling_pod_update_runs_on_the_virtual_clock() {
    let Some(root) = upstream() else {
        return;
    };
    let cfg = workload::load(&root.join("event_handling/performance-config.yaml")).unwrap();
    let opts = RunOptions {
        label_filter: Some("integration-test".into()),
        workload: Some("EventHandlingPodUpdate".into()),
        threads: Some(2),
        clock: tidegate_bench::run::pace::ClockMode::Virtual {
            attempt_cost: tidegate_bench::run::pace::ClockMode::DEFAULT_ATTEMPT_COST,
        },
        ..RunOptions::default()
    };
    let t0 = std::time::Instant::now();
    let reports = run_config(&cfg, &opts).unwrap();
    assert_eq!(reports.len(), 1);
    match &reports[0].outcome {
        Outcome::Ran(r) => {
            assert!(r.summary.adds_up(), "{:?}", r.summary);
            assert_eq!(r.summary.pending(), 0, "{:?}", r.summary);
            assert_eq!(r.summary.bound, 70, "{:?}", r.summary);
        }
        other => panic!("{other:?}"),
    }
    assert!(t0.elapsed() < std::time::Duration::from_secs(60));
    let delete = run_config(
        &cfg,
        &RunOptions {
            workload: Some("EventHandlingPodDelete".into()),
            label_filter: Some("integration-test".into()),
            ..RunOptions::default()
        },
    );
    if root.join("templates/pvc.yaml").is_file() {
        match &delete.unwrap()[0].outcome {
            Outcome::Ran(r) => assert!(r.summary.adds_up(), "{:?}", r.summary),
            other => panic!("{other:?}"),
        }
    } else {
        // This copy of upstream's data lacks the claim template: only the test case that
        // reads it fails (as upstream's would), naming the file, field and position.
        let e = delete.unwrap_err().to_string();
        assert!(
            e.contains("performance-config.yaml:43:40: EventHandlingPodDelete.workloadTemplate[1].persistentVolumeClaimTemplatePath: no such file"),
            "{e}"
        );
    }
}

/// default_preemption: preemption, churn of high-priority pods, and unschedulable churn run;
/// only the pod-group cases are skipped, naming pod groups.
#[test]
fn default_preemption_integration_workloads_run_unchanged() {
    let reports = run_integration("default_preemption/performance-config.yaml", &[]);
    for (name, o) in &reports {
        match o {
            Outcome::Ran(r) => assert!(r.summary.adds_up(), "{name}: {:?}", r.summary),
            Outcome::Skipped(w) => assert!(w.contains("pod groups"), "{name}: {w}"),
            Outcome::Failed(w) => panic!("{name}: {w}"),
        }
    }
    if let Some((_, Outcome::Ran(r))) = reports.iter().find(|(n, _)| n == "PreemptionBasic/5Nodes")
    {
        assert!(
            r.summary.deleted > 0,
            "victims were preempted: {:?}",
            r.summary
        );
    }
}
