//! The out-of-tree Gang plugin benchmarked through the harness's library entry point
//! (`tidegate_bench::run_benchmark_perf_scheduling`, scheduler_perf's
//! `RunBenchmarkPerfScheduling(config, registry)`), on perf-data/workloads/plugins/gang.yaml.

use std::path::Path;
use tidegate_bench::output::results::Outcome;
use tidegate_engine::Registry;

#[test]
fn the_gang_workload_runs_through_the_harness_with_the_callers_registry() {
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../perf-data/workloads/plugins/gang.yaml");
    // kube samples plugin durations in 10 % of cycles (`pluginMetricsSamplePercent`), so a
    // run of 40 pods times no Permit call with probability 0.9^40 (1.5 %): up to four runs,
    // each of which must bind every pod.
    let mut gang_permit = false;
    for _ in 0..4 {
        let mut registry = Registry::in_tree();
        tidegate_examples::gang::register(&mut registry);
        let reports =
            tidegate_bench::run_benchmark_perf_scheduling(&file, "integration-test", registry)
                .unwrap();
        assert_eq!(reports.len(), 1);
        let Outcome::Ran(r) = &reports[0].outcome else {
            panic!("did not run")
        };
        assert_eq!((r.summary.created, r.summary.bound), (40, 40));
        assert!(r.summary.adds_up());
        // Gang's Permit was timed per plugin, as kube's plugin_execution_duration.
        gang_permit = r.items.iter().any(|i| {
            i.labels.get("plugin").map(String::as_str) == Some("Gang")
                && i.labels.get("extension_point").map(String::as_str) == Some("Permit")
        });
        if gang_permit {
            break;
        }
    }
    assert!(gang_permit, "no Gang/Permit duration item in four runs");
}

#[test]
fn without_the_plugin_registered_the_config_is_refused() {
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../perf-data/workloads/plugins/gang.yaml");
    let e = tidegate_bench::run_benchmark_perf_scheduling(
        &file,
        "integration-test",
        Registry::in_tree(),
    )
    .expect_err("unknown plugin");
    assert!(e.to_string().contains("Gang"), "{e}");
}

/// The quota gate and its controller through the harness (perf-data/workloads/plugins/
/// quota.yaml): the controller admits pods while namespace `team` has quota, the steady state
/// deletes every scheduled pod, and each deletion admits the next. At no point more pods are
/// admitted than the limit; many more than the limit get scheduled over the run; the rest wait
/// at the gate; every pod is accounted for. On the virtual clock the run is deterministic.
#[test]
fn the_quota_workload_runs_with_its_controller_beside_the_scheduler() {
    use std::sync::Arc;
    use tidegate_bench::run::RunOptions;
    use tidegate_bench::run::pace::ClockMode;
    use tidegate_examples::quota_gate::{Quota, harness_controller};

    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../perf-data/workloads/plugins/quota.yaml");
    let run = |clock: ClockMode| {
        let quota = Arc::new(Quota::default());
        quota.set_limit("team", 20);
        let mut registry = Registry::in_tree();
        tidegate_examples::quota_gate::register(&mut registry, quota.clone());
        let opts = RunOptions {
            label_filter: Some("integration-test".into()),
            threads: Some(2),
            clock,
            controllers: vec![harness_controller(quota.clone())],
            ..RunOptions::default()
        };
        let reports =
            tidegate_bench::run_benchmark_perf_scheduling_with(&file, registry, opts).unwrap();
        assert_eq!(reports.len(), 1);
        let r = match reports.into_iter().next().unwrap().outcome {
            Outcome::Ran(r) => r,
            Outcome::Skipped(why) | Outcome::Failed(why) => panic!("did not run: {why}"),
        };
        (r, quota.usage("team"))
    };
    for clock in [
        ClockMode::Real,
        ClockMode::Virtual {
            attempt_cost: ClockMode::DEFAULT_ATTEMPT_COST,
        },
    ] {
        let (r, (admitted, waiting)) = run(clock);
        let s = r.summary;
        assert!(s.adds_up(), "{s:?}");
        assert!(admitted <= 20, "{admitted} admitted over a limit of 20");
        // 200 pods live at any time; those not admitted wait at the gate.
        assert_eq!(s.created - s.deleted, 200, "{s:?}");
        assert_eq!(s.pending_gated as usize, waiting, "{s:?}");
        assert!(s.pending_gated >= 180, "{s:?}");
        // The loop turned over: far more pods scheduled (and deleted) than the quota.
        assert!(
            s.deleted > 100,
            "{clock:?}: only {} pods went through: {s:?}",
            s.deleted
        );
    }
    let a = run(ClockMode::Virtual {
        attempt_cost: ClockMode::DEFAULT_ATTEMPT_COST,
    });
    let b = run(ClockMode::Virtual {
        attempt_cost: ClockMode::DEFAULT_ATTEMPT_COST,
    });
    assert_eq!(a.0.summary, b.0.summary);
    assert_eq!(a.0.placements, b.0.placements);
}
