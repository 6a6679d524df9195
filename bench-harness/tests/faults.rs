//! Fault injection (`--inject`, `tidegate_bench::cluster::inject`): under every fault the pods are
//! requeued as kube requeues them, none is lost or bound twice, and the summary adds up
//! (`created = bound + pending + deleted`). Runs on the virtual clock: backoff and timeouts
//! cost no wall time, and a faulty run is as reproducible as a clean one.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tidegate_bench::cluster::inject::Injection;
use tidegate_bench::output::results::{Outcome, RunResult, placements_digest};
use tidegate_bench::run::pace::ClockMode;
use tidegate_bench::run::{RunOptions, run_config};
use tidegate_bench::workload;

fn faults_yaml() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../perf-data/workloads/faults.yaml")
}

fn opts(workload: &str, spec: &str, threads: usize) -> RunOptions {
    let mut inj = Injection::default();
    inj.add(spec).unwrap();
    RunOptions {
        workload: Some(workload.into()),
        seed: 7,
        threads: Some(threads),
        clock: ClockMode::Virtual {
            attempt_cost: ClockMode::DEFAULT_ATTEMPT_COST,
        },
        inject: (!spec.is_empty()).then(|| Arc::new(inj)),
        timeout: Duration::from_secs(600),
        ..RunOptions::default()
    }
}

fn run(file: &Path, o: &RunOptions) -> Result<RunResult, String> {
    let cfg = workload::load(file).unwrap();
    let mut reports = run_config(&cfg, o).map_err(|e| e.to_string())?;
    assert_eq!(reports.len(), 1);
    match reports.remove(0).outcome {
        Outcome::Ran(r) => Ok(*r),
        Outcome::Failed(why) => Err(why),
        Outcome::Skipped(why) => panic!("skipped: {why}"),
    }
}

/// Every transient fault: all 400 pods end bound exactly once, after retries.
#[test]
fn every_fault_requeues_and_loses_no_pod() {
    let faults = [
        "error@prefilter=0.1",
        "error@filter=0.05",
        "error@score=0.02",
        "error@reserve=0.1",
        "error@permit=0.1",
        "error@bind=0.1",
        "bind-failure=0.1",
        "permit-timeout=0.1@50ms",
        "node-updates=2000",
        "error@filter=0.02,bind-failure=0.05,permit-timeout=0.05,node-updates=500",
    ];
    for spec in faults {
        let r = run(&faults_yaml(), &opts("FaultTolerance/20Nodes", spec, 2))
            .unwrap_or_else(|e| panic!("{spec}: {e}"));
        let s = r.summary;
        assert!(s.adds_up(), "{spec}: {s:?}");
        assert_eq!(
            (s.created, s.bound, s.pending()),
            (400, 400, 0),
            "{spec}: {s:?}"
        );
        // A second bind of one pod would count twice here (the store refuses it).
        assert_eq!(s.binds, s.bound, "{spec}: {s:?}");
        if !spec.starts_with("node-updates") {
            assert!(s.attempts > s.created, "{spec}: no retry happened: {s:?}");
        }
    }
}

/// A run with faults is reproducible on the virtual clock, for any thread count.
#[test]
fn faulty_runs_repeat_exactly() {
    let spec = "error@filter=0.05,bind-failure=0.1,permit-timeout=0.1@50ms";
    let digest = |threads| {
        let r = run(
            &faults_yaml(),
            &opts("FaultTolerance/20Nodes", spec, threads),
        )
        .unwrap();
        (placements_digest(&r.placements), r.summary.attempts)
    };
    let one = digest(1);
    assert_eq!(one, digest(1));
    assert_eq!(one, digest(2));
    // And the faults changed the run (the same seed without them differs).
    let clean = run(&faults_yaml(), &opts("FaultTolerance/20Nodes", "", 1)).unwrap();
    assert_ne!(clean.summary.attempts, one.1);
}

/// A pod that errors at every attempt goes to backoffQ with kube's error backoff (1 s
/// doubling to 10 s), and the run ends at --timeout with a report of what is pending and why.
#[test]
fn a_permanent_error_backs_off_and_times_out_with_a_report() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.yaml");
    std::fs::write(
        &cfg,
        "- name: T\n  workloadTemplate:\n  - opcode: createNodes\n    count: 2\n  - opcode: createPods\n    count: 4\n    collectMetrics: true\n  workloads:\n  - name: w\n",
    )
    .unwrap();
    let mut o = opts("T/w", "error@prefilter=1", 1);
    o.timeout = Duration::from_secs(60);
    let why = run(&cfg, &o).unwrap_err();
    assert!(why.contains("timed out after 60s"), "{why}");
    assert!(why.contains("backoff 4,"), "{why}");
    assert!(why.contains("injected fault at PreFilter"), "{why}");
    // Attempts at about 0, 1, 3, 7, 15, 25, 35, 45, 55 s (1 s windows): 8 to 10 per pod,
    // where no backoff would give thousands and a fixed 10 s backoff 6 or 7.
    assert!(
        why.contains("rejected by: 4 × (an error, no plugin)"),
        "{why}"
    );
    let attempts: u64 = why
        .split("; ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    assert!((4 * 8..=4 * 10).contains(&attempts), "{attempts}: {why}");
}

/// The event storm's node updates reach the queue: pods that need a label only the storm
/// puts on nodes stay unschedulable without it, and all bind with it.
#[test]
fn an_event_storm_moves_pods_through_node_update_events() {
    let mut calm = opts("EventStorm/20Nodes", "", 1);
    calm.timeout = Duration::from_secs(30);
    let why = run(&faults_yaml(), &calm).unwrap_err();
    assert!(
        why.contains("unschedulable 200,") && why.contains("rejected by: 200 × NodeAffinity"),
        "{why}"
    );
    let r = run(
        &faults_yaml(),
        &opts("EventStorm/20Nodes", "node-updates=2000", 1),
    )
    .unwrap();
    assert_eq!((r.summary.bound, r.summary.pending()), (200, 0));
    assert!(r.summary.adds_up());
}
