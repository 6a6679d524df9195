//! tidegate-bench: runs kube-scheduler's `scheduler_perf` workload files against the tidegate
//! engine and reports perf-dash JSON.
//!
//! # Layers
//!
//! Lowest first; each uses only those above it (checked, with the function and file size
//! limits, by `engine/tests/layers.rs`, which holds this crate to its layers too):
//!
//! - [`error`], [`interrupt`]: the error types (bad input: file, line:column, field; exit 2)
//!   and the run's stop flag.
//! - [`template`]: the Go `text/template` subset the object templates are written in.
//! - [`workload`]: the workload file: parsing (test cases, workloads, labels, thresholds,
//!   feature gates), `$name` params, the scheduler configuration a test case names, object
//!   templates (manifests) and positioned YAML for errors that name a line and column.
//! - [`cluster`] and [`output`] (side by side): the simulated cluster (the object store that
//!   stands in for the API server, the non-pod objects it keeps, controllers beside the
//!   scheduler, fault injection); perf-dash data items and thresholds, comparing runs, the
//!   Prometheus exposition, the HTML report, and what `tidegate run` prints and writes (the
//!   results table and the files, for any caller: [`output::sink`]).
//! - [`run`]: selecting and planning workloads, executing their ops on real or virtual time,
//!   collection windows, progress and memory, with [`run::ops`] (one type per scheduler_perf
//!   op: `createNodes`, `createPods`, `barrier`, …, each with its resolve step and its run
//!   step).
//! - [`oracle`] and [`fuzzing`] (side by side): the differential oracle's tidegate side
//!   (kube's recorded decisions replayed and judged with tidegate's Filter and Score; kube's
//!   outcomes against the runs' per-op records); the fuzz targets' entry points.
//! - The `tidegate` binary's subcommands (`run`, `list`, `compare`, `serve`, `report`,
//!   `replay`, `outcomes`, `kube-scenarios`) are in `src/cli/`, one file each, above everything here.
//!
//! # Data path
//!
//! config file → [`workload::load`] (test cases, raw ops) → per selected workload,
//! [`run::ops::resolve_ops`] (params substituted, fields checked) and planning (templates loaded
//! and checked; unsupported features found before anything runs) → a fresh
//! [`cluster::store::Store`] and engine `Scheduler` → each op's run step creates, updates,
//! deletes and waits through the store, whose events reach the scheduler as an informer's
//! would → collection windows record binds, metrics and memory → data items, thresholds and
//! the run summary ([`output::results::WorkloadReport`]) → [`output`] (perf-dash JSON, Prometheus, HTML).
#![forbid(unsafe_code)]
#![warn(unreachable_pub)]

pub mod cluster;
pub mod error;
pub mod fuzzing;
pub mod interrupt;
pub mod oracle;
pub mod output;
pub mod run;
pub mod template;
pub mod workload;

use std::path::Path;
use tidegate_engine::Registry;

/// The library entry point for plugin authors, as scheduler_perf's
/// `RunBenchmarkPerfScheduling(config, registry)`: runs the workloads of `config` selected by
/// `label_filter` (`performance`, `integration-test`, …; empty: all) with the in-tree plugins
/// plus those `registry` adds, and returns each workload's report (data items, counts,
/// threshold failures). A workload that fails is reported as failed and the next one runs.
/// It prints and writes nothing: for the table and the files of `tidegate run`, see
/// [`run_benchmark_perf_scheduling_to`].
///
/// ```no_run
/// let mut registry = tidegate_engine::Registry::in_tree();
/// // registry.register_with_args("Gang", |ctx, args| { ... });
/// let reports = tidegate_bench::run_benchmark_perf_scheduling(
///     std::path::Path::new("perf-data/workloads/plugins/gang.yaml"),
///     "integration-test",
///     registry,
/// )?;
/// for r in &reports {
///     if let tidegate_bench::output::results::Outcome::Ran(res) = &r.outcome {
///         println!("{}/{}: {} bound", r.test_case, r.workload, res.summary.bound);
///     }
/// }
/// # Ok::<(), tidegate_bench::error::HarnessError>(())
/// ```
pub fn run_benchmark_perf_scheduling(
    config: &Path,
    label_filter: &str,
    registry: Registry,
) -> Result<Vec<output::results::WorkloadReport>, error::HarnessError> {
    let cfg = workload::load(config)?;
    let opts = run::RunOptions {
        label_filter: Some(label_filter.to_string()),
        registry,
        keep_going: true,
        ..run::RunOptions::default()
    };
    run::run_config(&cfg, &opts)
}

/// As [`run_benchmark_perf_scheduling_with`], printing and writing what `tidegate run` prints
/// and writes: the results table, the placements digest and the peak RSS on `sink`'s output,
/// and the files its [`output::sink::OutputOptions`] name (data items, placements, pods,
/// Prometheus exposition, flamegraph). `sink.exit_status()` is then the status `tidegate run`
/// would exit with. The config-level equivalent is [`run::run_config_to`].
///
/// ```no_run
/// use tidegate_bench::output::sink::{OutputOptions, Sink};
/// let mut sink = Sink::stdio(OutputOptions {
///     print: true,
///     data_items_dir: Some("out/".into()),
///     ..Default::default()
/// });
/// let opts = tidegate_bench::run::RunOptions {
///     label_filter: Some("integration-test".into()),
///     keep_going: true,
///     ..Default::default()
/// };
/// tidegate_bench::run_benchmark_perf_scheduling_to(
///     std::path::Path::new("perf-data/workloads/plugins/gang.yaml"),
///     tidegate_engine::Registry::in_tree(),
///     opts,
///     &mut sink,
/// )?;
/// let failed = sink.exit_status() != 0; // as `tidegate run` exits: 0, 1, or 128 + a signal
/// # Ok::<(), tidegate_bench::error::HarnessError>(())
/// ```
pub fn run_benchmark_perf_scheduling_to(
    config: &Path,
    registry: Registry,
    opts: run::RunOptions,
    sink: &mut output::sink::Sink<'_>,
) -> Result<Vec<output::results::WorkloadReport>, error::HarnessError> {
    let cfg = workload::load(config)?;
    let opts = run::RunOptions { registry, ..opts };
    run::run_config_to(&cfg, &opts, sink)
}

/// As [`run_benchmark_perf_scheduling`], with controllers beside the scheduler (a quota
/// manager that removes scheduling gates, say: see [`cluster::controller::Controller`]) and any other
/// [`run::RunOptions`] (a virtual clock for a deterministic run, the thread count, …).
/// `opts.registry` is replaced by `registry`.
///
/// ```no_run
/// use std::sync::Arc;
/// use tidegate_bench::cluster::controller::Controller;
///
/// struct Admit; // removes the gate `example.com/quota` from every pod it sees created
/// impl Controller for Admit {
///     fn on_pod_add(&self, store: &tidegate_bench::cluster::store::Store, pod: &Arc<tidegate_engine::api::Pod>) {
///         let _ = store.remove_scheduling_gate(&pod.key, "example.com/quota");
///     }
/// }
/// let opts = tidegate_bench::run::RunOptions {
///     label_filter: Some("integration-test".into()),
///     controllers: vec![Arc::new(Admit)],
///     ..Default::default()
/// };
/// let reports = tidegate_bench::run_benchmark_perf_scheduling_with(
///     std::path::Path::new("perf-data/workloads/plugins/quota.yaml"),
///     tidegate_engine::Registry::in_tree(),
///     opts,
/// )?;
/// # Ok::<(), tidegate_bench::error::HarnessError>(())
/// ```
pub fn run_benchmark_perf_scheduling_with(
    config: &Path,
    registry: Registry,
    opts: run::RunOptions,
) -> Result<Vec<output::results::WorkloadReport>, error::HarnessError> {
    let cfg = workload::load(config)?;
    let opts = run::RunOptions { registry, ..opts };
    run::run_config(&cfg, &opts)
}
