//! The out-of-tree Gang plugin benchmarked through the harness's library entry point
//! (`tidegate_bench::run_benchmark_perf_scheduling`, scheduler_perf's
//! `RunBenchmarkPerfScheduling(config, registry)`), on perf-data/workloads/plugins/gang.yaml.

use std::path::Path;
use tidegate_bench::runner::Outcome;
use tidegate_engine::plugins::Registry;

#[test]
fn the_gang_workload_runs_through_the_harness_with_the_callers_registry() {
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../perf-data/workloads/plugins/gang.yaml");
    let mut registry = Registry::in_tree();
    tidegate_examples::gang::register(&mut registry);
    let reports =
        tidegate_bench::run_benchmark_perf_scheduling(&file, "integration-test", registry).unwrap();
    assert_eq!(reports.len(), 1);
    let Outcome::Ran(r) = &reports[0].outcome else {
        panic!("did not run")
    };
    assert_eq!((r.summary.created, r.summary.bound), (40, 40));
    assert!(r.summary.adds_up());
    // Gang's Permit was timed per plugin, as kube's plugin_execution_duration.
    let gang_permit = r.items.iter().any(|i| {
        i.labels.get("plugin").map(String::as_str) == Some("Gang")
            && i.labels.get("extension_point").map(String::as_str) == Some("Permit")
    });
    assert!(gang_permit, "no Gang/Permit duration item");
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
    .err()
    .expect("unknown plugin");
    assert!(e.to_string().contains("Gang"), "{e}");
}
