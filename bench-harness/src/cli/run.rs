//! `tidegate run`: runs the workloads of a config, prints a table, and writes what the
//! flags ask for (data items, placements, pods, flamegraph, Prometheus exposition).

use super::{flamegraph, write_file};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use tidegate_bench::error::HarnessError;
use tidegate_bench::output::report::{self, DataItems};
use tidegate_bench::run::pace::ClockMode;
use tidegate_bench::run::{self, Outcome, RunOptions, WorkloadReport};
use tidegate_bench::workload;

#[derive(clap::Args)]
pub(crate) struct RunArgs {
    /// The scheduler_perf config (a list of test cases). Paths inside resolve relative to it,
    /// as upstream's do.
    ///
    /// Example: tidegate run perf-data/workloads/default.yaml
    pub config: PathBuf,
    /// `TestCase/Workload`, or `TestCase` for all its workloads.
    ///
    /// Example: --workload SchedulingBasic/5000Nodes_10000Pods
    #[arg(long)]
    pub workload: Option<String>,
    /// scheduler_perf label filter: a plain or `+` label must be present, a `-` label absent.
    /// Default: `performance`, or no filter when --workload is given.
    ///
    /// Example: --label-filter integration-test,-performance
    #[arg(long)]
    pub label_filter: Option<String>,
    /// Write the data-items JSON (perf-dash format,
    /// `BenchmarkPerfScheduling_benchmark_<topic>_<UTC time>.json`) into this folder.
    ///
    /// Example: --data-items-dir out/
    #[arg(long)]
    pub data_items_dir: Option<PathBuf>,
    /// Seed for node and pod name suffixes and host selection among equal scores.
    ///
    /// Example: --seed 7
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// A KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) for the test cases that
    /// have no `schedulerConfigPath` of their own.
    ///
    /// Example: --scheduler-config my-scheduler.yaml
    #[arg(long, value_name = "FILE")]
    pub scheduler_config: Option<PathBuf>,

    /// Filter/Score threads (rayon pool size). Default: the scheduler config's `parallelism`
    /// when it sets one, else the number of CPUs.
    ///
    /// Example: --threads 1
    #[arg(long)]
    pub threads: Option<usize>,
    /// Leave the Filter/Score workers unpinned. By default worker i runs on CPU i mod CPUs,
    /// so that two busy workers never share a CPU and each keeps its nodes in its own cache;
    /// unpin when the machine runs other busy work beside tidegate.
    ///
    /// Example: --no-pin
    #[arg(long)]
    pub no_pin: bool,
    /// Write one JSON line {"namespace","name","node"} per bound pod to this file.
    ///
    /// Example: --placements placements.jsonl
    #[arg(long)]
    pub placements: Option<PathBuf>,
    /// Longest wait for pods to be scheduled in one op (seconds); a workload that waits longer
    /// is reported FAILED with the pending pods' reasons, and the next one runs.
    ///
    /// Example: --timeout 120
    #[arg(long, default_value_t = 600)]
    pub timeout: u64,
    /// Check a wait's condition (createPods, barrier) as upstream's scheduler_perf polls its
    /// informer: at the start, then every DURATION (upstream: 1s), so each op ends when
    /// upstream's would. Without it, a wait ends the moment its condition holds.
    ///
    /// Example: --wait-poll 1s
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub wait_poll: Option<Duration>,
    /// Write one JSON line per pod at the end of each workload: namespace, name, status
    /// (Bound, SchedulingGated, Pending, Terminating), node, queue, remaining gates, and for a
    /// pending pod the plugins that last rejected it and the message.
    ///
    /// Example: --dump-pods pods.jsonl
    #[arg(long, value_name = "FILE")]
    pub dump_pods: Option<PathBuf>,
    /// `real` (wall time) or `virtual`: a deterministic run on a virtual clock, driven on one
    /// thread. Backoff, flushes, Permit timeouts, churn ticks, delete and update rates, sleep
    /// and --timeout all run on it; the same --seed gives the same placements digest on every
    /// run and for any --threads. Throughput is then in pods per virtual second.
    ///
    /// Example: --clock virtual --seed 7
    #[arg(long, value_enum, default_value_t = ClockArg::Real)]
    pub clock: ClockArg,
    /// With --clock virtual: how far the clock moves per scheduling attempt (a Go duration).
    ///
    /// Example: --virtual-attempt-cost 1ms
    #[arg(long, value_name = "DURATION", default_value = "100us", value_parser = parse_duration)]
    pub virtual_attempt_cost: Duration,
    /// Write the final metrics of every workload in the Prometheus text exposition format
    /// (kube-scheduler's metric names, labels and buckets, plus `tidegate_*`), each series
    /// labelled with its `workload`.
    ///
    /// Example: --prometheus metrics.prom
    #[arg(long, value_name = "FILE")]
    pub prometheus: Option<PathBuf>,
    /// Sample the CPU (pprof, 997 Hz, every thread) during the measured phases only (the
    /// collection windows) and write a flamegraph SVG (inferno). Build with
    /// `--profile profiling` for full stacks.
    ///
    /// Example: --flamegraph flamegraphs/basic.svg
    #[arg(long, value_name = "FILE")]
    pub flamegraph: Option<PathBuf>,
    /// Inject faults (repeatable; comma-separated specs): `error@POINT=RATE` (a plugin Error
    /// at prefilter, filter, score, reserve, permit or bind), `bind-failure=RATE` (the API
    /// server refuses bindings), `permit-timeout=RATE[@DURATION]` (Permit waits, default
    /// 100ms, and times out), `node-updates=PER_SECOND` (an event storm of node label
    /// updates). RATE: a fraction or a percentage. Pods are requeued as kube requeues them,
    /// and the run still checks that every pod is bound, pending in a queue, or deleted.
    ///
    /// Example: --inject error@filter=0.01,bind-failure=5% --inject node-updates=2000
    #[arg(long, value_name = "SPEC", value_parser = parse_inject)]
    pub inject: Vec<String>,
    /// No progress bar on stderr (it is shown only when stderr is a terminal, and redraws
    /// about eight times a second).
    ///
    /// Example: --no-progress
    #[arg(long)]
    pub no_progress: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum ClockArg {
    Real,
    Virtual,
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    workload::parse_go_duration(s)
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("{s:?} is not a positive duration such as 100us, 1ms or 2s"))
}

fn fmt_ms(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(ms) if ms < 0.001 => format!("{:.0} ns", ms * 1e6),
        Some(ms) if ms < 1.0 => format!("{:.2} µs", ms * 1e3),
        Some(ms) => format!("{ms:.2} ms"),
    }
}

/// The width of the workload column: the longest `TestCase/Workload` (in characters), at
/// least 58, so that every column lines up whatever the names.
pub(crate) fn name_width(names: impl Iterator<Item = usize>) -> usize {
    names.max().unwrap_or(0).max(58)
}

/// The header of the results table (rows follow as workloads end).
fn print_header(w: usize) {
    outln!(
        "{:<w$} {:>10} {:>10} {:>10} {:>10} {:>12} {:>8} {:>8} {:>8}  verdict",
        "workload",
        "avg pods/s",
        "p50",
        "p90",
        "p99",
        "PreEnq p90",
        "bound",
        "pending",
        "deleted",
    );
}

/// One workload's row of the results table.
fn print_row(r: &WorkloadReport, w: usize) {
    {
        let name = format!("{}/{}", r.test_case, r.workload);
        match &r.outcome {
            Outcome::Skipped(why) => outln!("{name:<w$} skipped: unsupported: {why}"),
            Outcome::Failed(why) => outln!("{name:<w$} FAILED: {why}"),
            Outcome::Ran(res) => {
                let tp = res.items.iter().find(|i| {
                    i.labels
                        .get("Metric")
                        .is_some_and(|m| m == "SchedulingThroughput")
                });
                let g = |k: &str| {
                    tp.and_then(|i| i.data.get(k))
                        .map_or("-".to_string(), |v| format!("{v:.0}"))
                };
                let pe = res.items.iter().find(|i| {
                    i.labels
                        .get("extension_point")
                        .is_some_and(|e| e == "PreEnqueue")
                        && i.labels.get("estimator").is_some_and(|e| e == "exact")
                        && i.labels.get("Metric").is_some_and(|m| {
                            m == tidegate_engine::metrics::names::EXTENSION_POINT_DURATION
                        })
                });
                let verdict = if res.threshold_failures.is_empty() {
                    "ok"
                } else {
                    "BELOW THRESHOLD"
                };
                outln!(
                    "{name:<w$} {:>10} {:>10} {:>10} {:>10} {:>12} {:>8} {:>8} {:>8}  {verdict}",
                    g("Average"),
                    g("Perc50"),
                    g("Perc90"),
                    g("Perc99"),
                    fmt_ms(pe.and_then(|i| i.data.get("Perc90").copied())),
                    res.summary.bound,
                    res.summary.pending(),
                    res.summary.deleted,
                );
            }
        }
        if !r.identical_gates.is_empty() {
            outln!(
                "    feature gates that change nothing kube-scheduler decides here (docs/feature-gates.md): {}",
                r.identical_gates.join(", ")
            );
        }
    }
}

pub(crate) fn run(args: RunArgs) -> Result<ExitCode, HarnessError> {
    run_with(args, None)
}

/// One `--inject` value, checked on its own (clap reports a bad one with the flag's name).
fn parse_inject(s: &str) -> Result<String, String> {
    tidegate_bench::cluster::inject::Injection::default().add(s)?;
    Ok(s.to_string())
}

/// Every `--inject` value as one set of faults (a later value for the same fault wins).
fn injections(
    all: &[String],
) -> Option<std::sync::Arc<tidegate_bench::cluster::inject::Injection>> {
    let mut m = tidegate_bench::cluster::inject::Injection::default();
    for s in all {
        m.add(s).ok()?;
    }
    (!all.is_empty()).then(|| std::sync::Arc::new(m))
}

pub(crate) fn run_with(
    args: RunArgs,
    live: Option<std::sync::Arc<run::LiveScheduler>>,
) -> Result<ExitCode, HarnessError> {
    // kube's queue dumper: SIGUSR2 writes the running workload's queue to stderr.
    let live = live.unwrap_or_default();
    if let Err(e) = super::queue_dump::start(live.clone()) {
        eprintln!("tidegate: no queue dump on SIGUSR2: {e}");
    }
    let cfg = workload::load(&args.config)?;
    let opts = options(&args, Some(live));
    if run::select(&cfg, &opts).is_empty() {
        return Err(no_workload_matches(&args, &opts));
    }
    // Each workload's row and the data items so far go out as soon as it ends: a run
    // stopped by a signal keeps everything finished.
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let width = name_width(
        run::select(&cfg, &opts)
            .iter()
            .map(|(tc, wl)| tc.name.chars().count() + 1 + wl.name.chars().count()),
    );
    let info = report::RunInfo::here(args.threads, args.seed, opts.clock.name());
    let mut printed = 0;
    let mut reports = run::run_config_with(&cfg, &opts, &mut |rs: &[WorkloadReport]| {
        // The input is good (no bad-input error can follow): the table starts.
        if rs.is_empty() {
            print_header(width);
            return Ok(());
        }
        // The file first: once a row is out, its data items are on disk.
        if let Some(dir) = &args.data_items_dir {
            write_data_items(
                dir,
                &cfg.topic,
                rs,
                Gathered::from(rs)?.items,
                started,
                &info,
            )?;
        }
        for r in &rs[printed..] {
            print_row(r, width);
        }
        printed = rs.len();
        Ok(())
    })?;
    let out = Gathered::from(&reports)?;
    print_digest(&reports, &out.placements);
    print_peak_rss(&reports);
    if let Some(dir) = &args.data_items_dir {
        let name = report::file_name(&cfg.topic, started);
        outln!("data items: {}", dir.join(name).display());
    }
    if let Some(file) = &args.placements {
        write_placements(file, &out.placements, &info)?;
    }
    if let Some(file) = &args.dump_pods {
        let mut dump = format!("{}\n", info.json_line()).into_bytes();
        dump.extend_from_slice(&out.dump);
        write_file(file, &dump)?;
    }
    if let Some(file) = &args.flamegraph {
        flamegraph::write(file, &mut reports, &info)?;
    }
    if let Some(file) = &args.prometheus {
        write_prometheus(file, &reports, &info)?;
    }
    for f in &out.threshold_failures {
        eprintln!("threshold: {f}");
    }
    for f in &out.run_failures {
        eprintln!("failed: {f}");
    }
    if let Some(sig) = run::interrupt::requested() {
        let interrupted = reports
            .last()
            .is_some_and(|r| matches!(&r.outcome, Outcome::Failed(m) if run::is_interruption(m)));
        eprintln!(
            "tidegate: stopped by {}: {} workload(s) finished and written, {}",
            run::interrupt::signal_name(sig),
            reports
                .iter()
                .filter(|r| !matches!(r.outcome, Outcome::Failed(_)))
                .count(),
            if interrupted {
                "the interrupted one marked FAILED"
            } else {
                "the signal came between two workloads, and no other one started"
            }
        );
        // The shell's convention: 128 + the signal (130 for SIGINT, 143 for SIGTERM).
        return Ok(ExitCode::from((128 + sig) as u8));
    }
    Ok(
        if out.threshold_failures.is_empty() && out.run_failures.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        },
    )
}

/// The run's options from the flags.
fn options(args: &RunArgs, live: Option<std::sync::Arc<run::LiveScheduler>>) -> RunOptions {
    RunOptions {
        prometheus: args.prometheus.is_some(),
        flamegraph: args.flamegraph.is_some(),
        live,
        workload: args.workload.clone(),
        label_filter: args.label_filter.clone(),
        seed: args.seed,
        threads: args.threads,
        pin_threads: !args.no_pin,
        scheduler_config: args.scheduler_config.clone(),
        timeout: Duration::from_secs(args.timeout),
        wait_poll: args.wait_poll,
        // A progress bar only for a person watching; pipes and CI get the table alone.
        progress: !args.no_progress,
        dump_pods: args.dump_pods.is_some(),
        keep_going: true,
        clock: match args.clock {
            ClockArg::Real => ClockMode::Real,
            ClockArg::Virtual => ClockMode::Virtual {
                attempt_cost: args.virtual_attempt_cost,
            },
        },
        inject: injections(&args.inject),
        ..RunOptions::default()
    }
}

/// The error when `--workload` and `--label-filter` select nothing.
fn no_workload_matches(args: &RunArgs, opts: &RunOptions) -> HarnessError {
    HarnessError::Input(tidegate_bench::error::InputError::new(
        &args.config,
        None,
        "",
        format!(
            "no workload matches --workload {:?} and --label-filter {:?}",
            args.workload.as_deref().unwrap_or(""),
            opts.label_filter
                .as_deref()
                .unwrap_or(if args.workload.is_some() {
                    ""
                } else {
                    "performance"
                })
        ),
    ))
}

/// What the workloads that ran give, gathered over all of them.
struct Gathered {
    items: Vec<report::DataItem>,
    threshold_failures: Vec<String>,
    run_failures: Vec<String>,
    placements: Vec<(String, String, String)>,
    /// `--dump-pods` lines.
    dump: Vec<u8>,
}

impl Gathered {
    fn from(reports: &[WorkloadReport]) -> Result<Gathered, HarnessError> {
        let mut g = Gathered {
            items: vec![],
            threshold_failures: vec![],
            run_failures: vec![],
            placements: vec![],
            dump: Vec::new(),
        };
        for r in reports {
            if let Outcome::Failed(why) = &r.outcome {
                g.run_failures
                    .push(format!("{}/{}: {why}", r.test_case, r.workload));
            }
            if let Outcome::Ran(res) = &r.outcome {
                g.items.extend(res.items.iter().cloned());
                g.threshold_failures
                    .extend(res.threshold_failures.iter().map(|f| f.message.clone()));
                g.placements.extend(res.placements.iter().cloned());
                for p in &res.pods {
                    let mut line =
                        serde_json::to_value(p).map_err(|e| HarnessError::Run(e.to_string()))?;
                    line["workload"] = format!("{}/{}", r.test_case, r.workload).into();
                    let _ = writeln!(g.dump, "{line}");
                }
            }
        }
        Ok(g)
    }
}

/// `placements digest: …`, when some pod was bound.
fn print_digest(reports: &[WorkloadReport], placements: &[(String, String, String)]) {
    if placements.is_empty() {
        return;
    }
    let total = |of: fn(&run::Summary) -> u64| -> u64 {
        reports
            .iter()
            .filter_map(|r| match &r.outcome {
                Outcome::Ran(res) => Some(of(&res.summary)),
                _ => None,
            })
            .sum()
    };
    let attempts = total(|s| s.attempts);
    outln!(
        "placements digest: {:016x} ({} pods bound, {attempts} attempts)",
        run::placements_digest(placements),
        placements.len()
    );
    let batched = total(|s| s.batched);
    if batched > 0 {
        outln!(
            "opportunistic batching: {batched} pods placed on a hint (no Filter pass, no Score)"
        );
    }
}

/// `memory: peak RSS …` of the workload with the highest peak.
fn print_peak_rss(reports: &[WorkloadReport]) {
    let peak = reports
        .iter()
        .filter_map(|r| match &r.outcome {
            Outcome::Ran(res) => res.peak_rss_mb.map(|mb| (mb, r)),
            _ => None,
        })
        .max_by(|a, b| a.0.total_cmp(&b.0));
    if let Some((mb, r)) = peak {
        let profiler = match &r.outcome {
            Outcome::Ran(res) => res
                .profiler_mb
                .map(|p| {
                    format!(
                        "; not counted: the profiler's {p:.0} MB, its symbolizer and sample table"
                    )
                })
                .unwrap_or_default(),
            _ => String::new(),
        };
        outln!(
            "memory: peak RSS {mb:.0} MB ({}/{}{profiler})",
            r.test_case,
            r.workload
        );
    }
}

/// `--data-items-dir`: the perf-dash data-items file.
fn write_data_items(
    dir: &std::path::Path,
    topic: &str,
    reports: &[WorkloadReport],
    mut all_items: Vec<report::DataItem>,
    started: u64,
    info: &report::RunInfo,
) -> Result<(), HarnessError> {
    report::fill_not_applicable(&mut all_items);
    let doc = DataItems {
        version: "v1",
        data_items: all_items,
        series: reports
            .iter()
            .filter_map(|r| match &r.outcome {
                Outcome::Ran(res) => Some(res.series.clone()),
                _ => None,
            })
            .flatten()
            .collect(),
        run: Some(info.clone()),
    };
    let json = serde_json::to_vec_pretty(&doc).map_err(|e| HarnessError::Run(e.to_string()))?;
    report::write_atomic(dir, &report::file_name(topic, started), &json)
        .map_err(|e| HarnessError::Run(format!("{}: {e}", dir.display())))?;
    Ok(())
}

/// `--placements`: the run's provenance, then one JSON line per bound pod.
fn write_placements(
    file: &std::path::Path,
    placements: &[(String, String, String)],
    info: &report::RunInfo,
) -> Result<(), HarnessError> {
    let mut out = Vec::new();
    let _ = writeln!(out, "{}", info.json_line());
    for (ns, name, node) in placements {
        let line = serde_json::json!({"namespace": ns, "name": name, "node": node});
        let _ = writeln!(out, "{line}");
    }
    write_file(file, &out)
}

/// `--prometheus`: every workload's final metrics in the text exposition format.
fn write_prometheus(
    file: &std::path::Path,
    reports: &[WorkloadReport],
    info: &report::RunInfo,
) -> Result<(), HarnessError> {
    let snaps: Vec<(Option<String>, tidegate_bench::output::prom::Snapshot)> = reports
        .iter()
        .filter_map(|r| match &r.outcome {
            Outcome::Ran(res) => res
                .prometheus
                .clone()
                .map(|s| (Some(format!("{}/{}", r.test_case, r.workload)), s)),
            _ => None,
        })
        .collect();
    // The provenance as a comment line, which exposition parsers skip.
    let text = format!(
        "{}\n{}",
        info.comment(),
        tidegate_bench::output::prom::encode_prometheus(&snaps)
    );
    write_file(file, text.as_bytes())
}
