//! End-to-end runs of our own workload files at integration size.

use std::path::{Path, PathBuf};
use tidegate_bench::output::results::{Outcome, Summary};
use tidegate_bench::run::{RunOptions, run_config};
use tidegate_bench::workload;

fn workloads_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../perf-data/workloads")
}

fn run(file: &Path, filter: &str, workload: Option<&str>) -> Vec<(String, Summary)> {
    let cfg = workload::load(file).expect("config parses");
    let opts = RunOptions {
        label_filter: Some(filter.to_string()),
        workload: workload.map(str::to_string),
        threads: Some(2),
        ..RunOptions::default()
    };
    let reports = run_config(&cfg, &opts).expect("runs");
    reports
        .into_iter()
        .map(|r| {
            let name = format!("{}/{}", r.test_case, r.workload);
            match r.outcome {
                Outcome::Ran(res) => {
                    assert!(
                        res.threshold_failures.is_empty(),
                        "{name}: {:?}",
                        res.threshold_failures
                    );
                    (name, res.summary)
                }
                Outcome::Skipped(why) => panic!("{name} skipped: {why}"),
                Outcome::Failed(why) => panic!("{name} failed: {why}"),
            }
        })
        .collect()
}

#[test]
fn integration_workloads_bind_ungated_pods_and_account_for_every_pod() {
    let results = run(
        &workloads_dir().join("default.yaml"),
        "integration-test",
        None,
    );
    assert_eq!(results.len(), 4, "{results:?}");
    for (name, s) in &results {
        assert!(s.adds_up(), "{name}: {s:?}");
        assert_eq!(
            s.pending_active + s.pending_backoff + s.pending_unschedulable,
            0,
            "{name}: {s:?}"
        );
    }
    let get = |n: &str| results.iter().find(|(x, _)| x == n).unwrap().1;
    let basic = get("SchedulingBasic/500Nodes");
    assert_eq!((basic.created, basic.bound), (1500, 1500));
    // 10 gated pods stay gated to the end; the other 20 are bound or deleted.
    let gated = get("SchedulingWhileGated/1Node_10GatedPods");
    assert_eq!(gated.created, 30);
    assert_eq!(gated.pending_gated, 10);
    assert_eq!(gated.bound + gated.deleted, 20);
    // Two gates removed one at a time: all 20 held pods end up bound.
    let removed = get("SchedulingGatesRemoved/1Node_20HeldPods");
    assert_eq!(
        (removed.created, removed.bound, removed.pending_gated),
        (30, 30, 0)
    );
}

#[test]
fn the_same_seed_gives_the_same_placements() {
    let cfg = workload::load(&workloads_dir().join("default.yaml")).unwrap();
    let placements = |seed: u64| {
        let opts = RunOptions {
            workload: Some("SchedulingBasic/500Nodes".into()),
            seed,
            threads: Some(1),
            ..RunOptions::default()
        };
        match run_config(&cfg, &opts).unwrap().remove(0).outcome {
            Outcome::Ran(r) => r.placements,
            Outcome::Skipped(w) | Outcome::Failed(w) => panic!("{w}"),
        }
    };
    // Node and pod names come from the seeded store; host choice among ties from the seeded
    // scheduler. With one thread and one creator the order of events is fixed too.
    let a = placements(7);
    assert_eq!(a.len(), 1500);
    let nodes: std::collections::BTreeSet<_> = a.iter().map(|p| &p.2).collect();
    assert!(nodes.len() > 100, "pods spread over nodes: {}", nodes.len());
    assert_eq!(a, placements(7), "same seed, same placements");
    assert_ne!(
        a,
        placements(8),
        "another seed names nodes and breaks ties differently"
    );
}

/// Our own copies of upstream's test cases (affinity, spreading, preemption, churn) run at
/// integration size without `../shared`, and every pod is accounted for.
#[test]
fn our_upstream_shaped_workloads_run_at_integration_size() {
    for (file, expected) in [
        ("affinity.yaml", 6),
        ("topology-spreading.yaml", 4),
        ("preemption.yaml", 3),
        ("churn.yaml", 2),
    ] {
        let results = run(&workloads_dir().join(file), "integration-test", None);
        assert_eq!(results.len(), expected, "{file}: {results:?}");
        for (name, s) in &results {
            assert!(s.adds_up(), "{file} {name}: {s:?}");
            assert!(s.bound > 0, "{file} {name}: {s:?}");
        }
        if file == "preemption.yaml" {
            let basic = &results
                .iter()
                .find(|(n, _)| n == "PreemptionBasic/5Nodes")
                .unwrap()
                .1;
            assert!(basic.deleted > 0, "preemption deleted victims: {basic:?}");
        }
    }
}

/// Composite pod-group trees (kube v1.38.0-beta.0's cpg/ shapes, our copies): every test
/// case binds every pod it creates, at every depth and with topology constraints, and the
/// tree that must preempt evicts its victims.
#[test]
fn composite_trees_bind_every_pod_at_integration_size() {
    let file = workloads_dir().join("podgroups/performance-config.yaml");
    let mut seen = 0;
    for tc in [
        "CPGGangScheduling",
        "CPGTree2Level",
        "CPGTreeDeep",
        "CPGTreeTopology",
        "CPGTreePreemption",
    ] {
        for (name, s) in run(&file, "integration-test", Some(tc)) {
            seen += 1;
            assert!(s.adds_up(), "{name}: {s:?}");
            assert_eq!(s.pending(), 0, "{name}: {s:?}");
            assert!(s.bound > 0, "{name}: {s:?}");
            if tc == "CPGTreePreemption" {
                assert_eq!((s.bound, s.deleted), (2, 10), "{name}: {s:?}");
            }
        }
    }
    assert_eq!(seen, 6);
}

/// The scale workloads at integration size: SchedulingBasic's shape binds everything; gates
/// removed under load bind the admitted and ordinary pods and leave the held ones gated; the
/// DaemonSet shape binds every pod on the one named node.
#[test]
fn scale_workloads_at_integration_size() {
    let results = run(
        &workloads_dir().join("scale.yaml"),
        "integration-test",
        None,
    );
    assert_eq!(results.len(), 4, "{results:?}");
    let get = |n: &str| results.iter().find(|(x, _)| x == n).unwrap().1;
    let basic = get("SchedulingBasicScale/100Nodes_1000Pods");
    assert_eq!((basic.created, basic.bound), (1000, 1000));
    let gates = get("GatesRemovedUnderLoad/100Nodes_1000Held");
    assert!(gates.adds_up(), "{gates:?}");
    assert_eq!((gates.bound, gates.pending_gated), (200, 900), "{gates:?}");
    let daemon = get("DaemonsetScale/5Nodes");
    assert_eq!((daemon.created, daemon.bound), (10, 10));
    let curve = get("ScalingCurve/50Nodes");
    assert_eq!((curve.created, curve.bound), (100, 100));
}

/// The in-place resize shapes (perf-data/workloads/resize-preemption.yaml, after upstream's
/// resize_preemption topic) at integration size: a resize without a status counts the new
/// requests at once and evicts nothing (kube's outcome: no kubelet, nothing deferred); an
/// Infeasible status counts what the pod holds, so a filler still fits; unassigned
/// preemptors evict victims through DefaultPreemption.
#[test]
fn resize_workloads_at_integration_size() {
    let results = run(
        &workloads_dir().join("resize-preemption.yaml"),
        "integration-test",
        None,
    );
    assert_eq!(results.len(), 6, "{results:?}");
    let get = |n: &str| results.iter().find(|(x, _)| x == n).unwrap().1;
    for (name, s) in &results {
        assert!(s.adds_up(), "{name}: {s:?}");
    }
    let inplace = get("InPlaceResize/5Nodes");
    assert_eq!((inplace.bound, inplace.deleted), (25, 0), "{inplace:?}");
    // A Deferred status with resize preemption: three victims evicted per node, one left
    // beside each resized pod (3 + 0.9 CPUs on 4).
    let deferred = get("InPlaceResizeDeferred/5Nodes");
    assert_eq!((deferred.bound, deferred.deleted), (10, 15), "{deferred:?}");
    let infeasible = get("InPlaceResizeInfeasible/5Nodes");
    assert_eq!(
        (infeasible.bound, infeasible.deleted),
        (30, 0),
        "{infeasible:?}"
    );
    let ratio4 = get("ResizeScalePreemption/5Nodes_4VictimRatio");
    assert_eq!((ratio4.bound, ratio4.deleted), (10, 15), "{ratio4:?}");
    let ratio1 = get("ResizeScalePreemption/5Nodes_1VictimRatio");
    assert_eq!((ratio1.bound, ratio1.deleted), (10, 0), "{ratio1:?}");
    let dense = get("ResizeHighDensity/5Nodes_20PodsPerNode");
    assert_eq!((dense.bound, dense.deleted), (105, 0), "{dense:?}");
}

/// A resize without a status (upstream's template) makes the node count the new 3 CPUs at
/// once: the 150m filler that fits beside an Infeasible resize does not fit here.
#[test]
fn a_resize_without_status_counts_the_new_requests() {
    let dir = tempfile::tempdir().unwrap();
    let src = workloads_dir();
    std::fs::create_dir(dir.path().join("templates")).unwrap();
    for t in [
        "node-indexed.yaml",
        "pod-resize-victim.yaml",
        "pod-resize-bound.yaml",
        "pod-resize-grow.yaml",
        "pod-resize-filler.yaml",
    ] {
        std::fs::copy(
            src.join("templates").join(t),
            dir.path().join("templates").join(t),
        )
        .unwrap();
    }
    let file = dir.path().join("config.yaml");
    std::fs::write(
        &file,
        "- name: Grow\n  workloadTemplate:\n  - {opcode: createNodes, count: 2, nodeTemplatePath: templates/node-indexed.yaml}\n  - {opcode: createPods, count: 8, podTemplatePath: templates/pod-resize-victim.yaml, namespace: v}\n  - {opcode: createPods, count: 2, podTemplatePath: templates/pod-resize-bound.yaml, namespace: v}\n  - {opcode: updateAny, count: 2, templatePath: templates/pod-resize-grow.yaml, namespace: v, subresources: [resize]}\n  - {opcode: startCollectingMetrics, name: w, namespaces: [f]}\n  - {opcode: createPods, count: 2, podTemplatePath: templates/pod-resize-filler.yaml, namespace: f, skipWaitToCompletion: true}\n  - {opcode: sleep, duration: 300ms}\n  - {opcode: stopCollectingMetrics}\n  workloads:\n  - name: 2Nodes\n    labels: [integration-test]\n",
    )
    .unwrap();
    let results = run(&file, "integration-test", None);
    let s = &results[0].1;
    assert!(s.adds_up(), "{s:?}");
    // 8 victims and 2 resized pods bound; the fillers wait (each node counts 3.6 + 3 CPUs).
    assert_eq!((s.created, s.bound), (12, 10), "{s:?}");
    assert_eq!(s.deleted, 0, "{s:?}");
}

/// The resize gates: `InPlacePodVerticalScaling: false` cannot run (locked on in kube v1.37);
/// `InPlacePodVerticalScalingSchedulerPreemption`, with or without a Deferred status, runs.
#[test]
fn resize_gates_are_checked_at_planning() {
    let dir = tempfile::tempdir().unwrap();
    let src = workloads_dir().join("templates");
    std::fs::create_dir(dir.path().join("templates")).unwrap();
    for t in [
        "node-indexed.yaml",
        "pod-resize-bound.yaml",
        "pod-resize-grow.yaml",
    ] {
        std::fs::copy(src.join(t), dir.path().join("templates").join(t)).unwrap();
    }
    let deferred = std::fs::read_to_string(src.join("pod-resize-grow-infeasible.yaml"))
        .unwrap()
        .replace("reason: Infeasible", "reason: Deferred");
    std::fs::write(dir.path().join("templates/deferred.yaml"), deferred).unwrap();
    let config = |gates: &str, grow: &str| {
        format!(
            "- name: T\n  featureGates: {gates}\n  workloadTemplate:\n  - {{opcode: createNodes, count: 1, nodeTemplatePath: templates/node-indexed.yaml}}\n  - {{opcode: createPods, count: 1, podTemplatePath: templates/pod-resize-bound.yaml, namespace: v, collectMetrics: true}}\n  - {{opcode: updateAny, count: 1, templatePath: templates/{grow}, namespace: v, subresources: [resize]}}\n  workloads:\n  - name: W\n    labels: [integration-test]\n"
        )
    };
    let outcome = |gates: &str, grow: &str| {
        let file = dir.path().join("config.yaml");
        std::fs::write(&file, config(gates, grow)).unwrap();
        let cfg = workload::load(&file).expect("config parses");
        let opts = RunOptions {
            label_filter: Some("integration-test".into()),
            threads: Some(1),
            ..RunOptions::default()
        };
        run_config(&cfg, &opts).unwrap().remove(0).outcome
    };
    let skipped = |o: Outcome| match o {
        Outcome::Skipped(why) => why,
        Outcome::Ran(_) => panic!("ran"),
        Outcome::Failed(why) => panic!("failed: {why}"),
    };
    let why = skipped(outcome(
        "{InPlacePodVerticalScaling: false}",
        "pod-resize-grow.yaml",
    ));
    assert!(why.contains("locked to true"), "{why}");
    let on = "{InPlacePodVerticalScalingSchedulerPreemption: true}";
    assert!(matches!(outcome(on, "deferred.yaml"), Outcome::Ran(_)));
    assert!(matches!(
        outcome(on, "pod-resize-grow.yaml"),
        Outcome::Ran(_)
    ));
    assert!(matches!(outcome("{}", "deferred.yaml"), Outcome::Ran(_)));
}

/// perf-data/workloads/nomination-lost.yaml: what kube v1.37.2 did with it (its record is
/// tests/fixtures/kube-records/v3_NominationLost_1Node.jsonl). The preempted victim has a
/// grace period and no kubelet ends it: it stays terminating. updateAny's status write takes
/// the preemptor's nominatedNodeName away; kube moves the preemptor again for its own lost
/// nomination (an AssignedPodDelete for the pods of its priority or lower), so it is tried a
/// second time and nominated again, and the probe then does not fit: four attempts in all.
#[test]
fn a_nomination_lost_to_a_status_write_is_retried_as_in_kube() {
    let results = run(
        &workloads_dir().join("nomination-lost.yaml"),
        "integration-test",
        None,
    );
    let (name, s) = &results[0];
    assert_eq!(name, "NominationLost/1Node");
    assert!(s.adds_up(), "{s:?}");
    assert_eq!((s.created, s.terminating, s.deleted), (3, 1, 0), "{s:?}");
    assert_eq!(
        s.pending_unschedulable, 2,
        "the preemptor and the probe: {s:?}"
    );
    assert_eq!(s.attempts, 4, "victim, preemptor twice, probe: {s:?}");
}

#[test]
fn batching_workloads_place_pods_on_hints_as_kube_does() {
    // perf-data/workloads/batching.yaml: upstream's batching/ scenarios in our own shapes
    // (kubernetes/kubernetes test/integration/scheduler_perf/batching/performance-config.yaml).
    let results = run(
        &workloads_dir().join("batching.yaml"),
        "integration-test",
        None,
    );
    let get = |n: &str| results.iter().find(|(x, _)| x == n).unwrap().1;
    for (name, s) in &results {
        assert!(s.adds_up(), "{name}: {s:?}");
        assert_eq!(s.bound, s.created, "{name}: {s:?}");
    }
    // One pod per node: every pod after the first takes the next cached node.
    assert_eq!(get("HostPortConflict/20Nodes_20Pods_Batch20").batched, 19);
    assert_eq!(get("ThreeCpuSaturation/20Nodes_20Pods_Batch20").batched, 19);
    // A signature per pod (its own `signature` label): no pod matches the one before.
    assert_eq!(get("HostPortConflict/20Nodes_20Pods_Batch1").batched, 0);
    // Several pods per node: the last node is re-scored and competes; hints still serve.
    assert!(get("SmallPodsRescored/10Nodes_100Pods_Batch100").batched > 0);
    // kube's default profile signs no pod.
    assert_eq!(get("DefaultProfileNoBatching/20Nodes_20Pods").batched, 0);
}

/// Dynamic Resource Allocation (perf-data/workloads/dra/, our shapes of kube v1.37.2's dra/
/// topic, list-typed attributes included) at integration size: claims from templates and
/// shared named claims bind every pod
/// on the devices there are; pods naming claims created after them wait and then bind; in a
/// steady state every deleted pod's generated claim is released, so the devices serve pod
/// after pod and every pod created is bound or deleted; DeviceTaintRules keep the pods that
/// do not tolerate them off the devices they taint.
#[test]
fn dra_workloads_bind_every_pod_at_integration_size() {
    let results = run(
        &workloads_dir().join("dra/performance-config.yaml"),
        "integration-test",
        None,
    );
    assert_eq!(results.len(), 19, "{results:?}");
    let get = |n: &str| results.iter().find(|(x, _)| x == n).unwrap().1;
    for (name, s) in &results {
        assert!(s.adds_up(), "{name}: {s:?}");
        if name != "DeviceTaintRules/4nodes" {
            assert_eq!(s.pending(), 0, "{name}: {s:?}");
        }
    }
    // DeviceTaintRules leave 3 GPUs untainted: 3 of the 5 pods that do not tolerate the
    // taint bind and 2 wait; the 2 that tolerate it bind on tainted GPUs.
    let tainted = get("DeviceTaintRules/4nodes");
    assert_eq!(
        (
            tainted.bound,
            tainted.pending_unschedulable,
            tainted.pending()
        ),
        (5, 2, 2),
        "{tainted:?}"
    );
    // 4 nodes of 10 devices: 20 pre-allocated claims and 20 pods fill them exactly.
    let fill = get("SchedulingWithResourceClaimTemplate/fill_4nodes");
    assert_eq!((fill.created, fill.bound), (20, 20), "{fill:?}");
    // Five devices on one PCI root per pod: two pods per node.
    let matched = get("SchedulingWithResourceClaimTemplate/match_4nodes");
    assert_eq!(matched.bound, 8, "{matched:?}");
    let shared = get("SchedulingWithResourceClaim/4nodes");
    assert_eq!(shared.bound, 40, "{shared:?}");
    let later = get("ClaimsCreatedAfterPods/2nodes");
    assert_eq!(later.bound, 20, "{later:?}");
    // List attributes: 4 matching requests take a node's 4 fabric GPUs (one pod per node);
    // 2 distinct requests take 2 loose GPUs (two pods per node, fabric GPUs left over).
    let matched_lists = get("ListAttributes/match_4nodes");
    assert_eq!(matched_lists.bound, 4, "{matched_lists:?}");
    let distinct = get("ListAttributes/distinct_4nodes");
    assert_eq!(distinct.bound, 8, "{distinct:?}");
    // Shared NICs (DRAConsumableCapacity): shares of 2500M rounded to 3G, of 3G rounded to
    // the valid value 4G, or of the default 1G on two distinct NICs, fill every node.
    for (name, bound) in [
        ("ConsumableCapacity/range_4nodes", 16),
        ("ConsumableCapacity/values_4nodes", 16),
        ("ConsumableCapacity/distinct_4nodes", 32),
        // Compatibility groups: three partitions of each GPU (both mig, then the shared).
        ("CompatibilityGroups/4nodes", 12),
        // Seven of eight partitions, the first ruled out by memory: one pod on each of the
        // 3 nodes the pre-allocated claims left.
        ("PartitionableBacktracking/6nodes", 3),
        // Extended resources backed by DRA: 16 pods on 16 devices and a device plugin's 8;
        // with an init container asking for 2, two devices a pod.
        ("ExtendedResource/explicit_5nodes", 16),
        ("ExtendedResource/implicit_init_4nodes", 8),
        // Pod groups sharing one network GPU per group (DRAWorkloadResourceClaims): every
        // member binds, four groups on four devices; gangs with a group claim from a
        // template and a node GPU each: 20 members on 20 node GPUs.
        ("PodGroupClaims/4groups_40pods", 40),
        ("PodGroupClaimTemplates/5gangs_of_4_10nodes", 20),
    ] {
        assert_eq!(get(name).bound, bound, "{name}: {:?}", get(name));
    }
    let steady = get("SteadyStateWithClaimTemplates/2nodes");
    assert!(
        steady.deleted > 8,
        "the 4 devices served more than one round of pods: {steady:?}"
    );
}
