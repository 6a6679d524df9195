//! tidegate-bench: runs kube-scheduler's `scheduler_perf` workload files against the tidegate
//! engine and reports perf-dash JSON.
#![forbid(unsafe_code)]

pub mod config;
pub mod error;
pub mod manifest;
pub mod objects;
pub mod pace;
pub mod report;
pub mod runner;
pub mod sched_config;
pub mod store;
pub mod template;
pub mod yaml;

use std::path::Path;
use tidegate_engine::plugins::Registry;

/// The library entry point for plugin authors, as scheduler_perf's
/// `RunBenchmarkPerfScheduling(config, registry)`: runs the workloads of `config` selected by
/// `label_filter` (`performance`, `integration-test`, …; empty: all) with the in-tree plugins
/// plus those `registry` adds, and returns each workload's report (data items, counts,
/// threshold failures). A workload that fails is reported as failed and the next one runs.
///
/// ```no_run
/// let mut registry = tidegate_engine::plugins::Registry::in_tree();
/// // registry.register_with_args("Gang", |ctx, args| { ... });
/// let reports = tidegate_bench::run_benchmark_perf_scheduling(
///     std::path::Path::new("perf-data/workloads/plugins/gang.yaml"),
///     "integration-test",
///     registry,
/// )?;
/// for r in &reports {
///     if let tidegate_bench::runner::Outcome::Ran(res) = &r.outcome {
///         println!("{}/{}: {} bound", r.test_case, r.workload, res.summary.bound);
///     }
/// }
/// # Ok::<(), tidegate_bench::error::HarnessError>(())
/// ```
pub fn run_benchmark_perf_scheduling(
    config: &Path,
    label_filter: &str,
    registry: Registry,
) -> Result<Vec<runner::WorkloadReport>, error::HarnessError> {
    let cfg = config::load(config)?;
    let opts = runner::RunOptions {
        label_filter: Some(label_filter.to_string()),
        registry,
        keep_going: true,
        ..runner::RunOptions::default()
    };
    runner::run_config(&cfg, &opts)
}
