//! `tidegate`: run kube-scheduler `scheduler_perf` workload files against the tidegate engine.

use clap::{Parser, Subcommand};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use tidegate_bench::config;
use tidegate_bench::error::HarnessError;
use tidegate_bench::pace::ClockMode;
use tidegate_bench::report::{self, DataItems};
use tidegate_bench::runner::{self, Outcome, RunOptions, WorkloadReport};

/// `println!` that never panics: a closed stdout (`tidegate list | head`) is ignored, and the
/// run goes on to write its files.
macro_rules! outln {
    ($($t:tt)*) => {{
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

/// `print!` that never panics (see [`outln`]).
macro_rules! out {
    ($($t:tt)*) => {{
        let _ = write!(std::io::stdout(), $($t)*);
    }};
}

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "tidegate",
    version,
    about = "kube-scheduler's scheduling queue and framework in Rust, driven by scheduler_perf workload files"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run the workloads of a scheduler_perf config file.
    ///
    /// Example: tidegate run ../shared/upstream/scheduler_perf/misc/performance-config.yaml
    ///          --workload SchedulingBasic/5000Nodes_10000Pods --data-items-dir out/
    Run(RunArgs),
    /// List the test cases and workloads of a config: labels, threshold, and whether this
    /// build runs it (or why not). Nothing runs.
    ///
    /// Example: tidegate list ../shared/upstream/scheduler_perf/misc/performance-config.yaml
    ///          --label-filter integration-test
    List(ListArgs),
    /// Compare baseline runs with current runs of the same workloads (perf-dash data-items
    /// files): the median of each selected value per side, its ratio, and a verdict that
    /// knows each metric's direction (pods/s higher is better; ms, s and MB lower). Prints a
    /// Markdown table; exits 1 when a value regressed beyond --max-regression, 2 on bad input
    /// (unreadable files, different workloads on the two sides, an unknown metric).
    ///
    /// Example: tidegate compare perf-data/baselines/basic/ out/ --max-regression 5%
    Compare(CompareArgs),
    /// `run`, serving the running workload's metrics at `http://LISTEN/metrics` (Prometheus
    /// text format) until the run ends. Binds to loopback unless told otherwise.
    ///
    /// Example: tidegate serve perf-data/workloads/default.yaml --listen 127.0.0.1:9464
    Serve(ServeArgs),
    /// One self-contained HTML page from results files (`--data-items-dir` output):
    /// throughput over time, pending pods over time (gated apart), the percentile curves of
    /// each extension point (PreEnqueue first), and with several files a run-against-run table.
    ///
    /// Example: tidegate report out/a.json out/b.json -o report.html
    Report(ReportArgs),
}

#[derive(clap::Args)]
struct ReportArgs {
    /// Results files (data items JSON written by `run --data-items-dir`).
    ///
    /// Example: out/BenchmarkPerfScheduling_benchmark_misc_2026-11-23T22:00:00Z.json
    #[arg(required = true)]
    results: Vec<PathBuf>,
    /// The HTML file to write.
    ///
    /// Example: -o report.html
    #[arg(short, long)]
    output: PathBuf,
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Address for the /metrics endpoint.
    ///
    /// Example: --listen 127.0.0.1:9464
    #[arg(long, default_value = "127.0.0.1:9464")]
    listen: std::net::SocketAddr,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(clap::Args)]
struct CompareArgs {
    /// Baseline runs: a data-items file, a folder of them, or files separated by commas.
    ///
    /// Example: perf-data/baselines/basic/
    baseline: String,
    /// Current runs, in the same forms.
    ///
    /// Example: out/run1.json,out/run2.json,out/run3.json
    current: String,
    /// The largest tolerated change for the worse (`5%`, `0.05`).
    ///
    /// Example: --max-regression 10%
    #[arg(long, default_value = "5%", value_parser = tidegate_bench::compare::parse_limit)]
    max_regression: f64,
    /// Values to compare: a `Metric` label, optionally with labels the items must carry and
    /// statistics (`NAME{label=value}:STAT,STAT`). Repeatable. Histograms are compared on
    /// their exact estimator. Default: SchedulingThroughput:Average,Perc50 and
    /// scheduler_framework_extension_point_duration_seconds{extension_point=PreEnqueue}:Perc90.
    ///
    /// Example: --metric SchedulingThroughput:Perc90 --metric SchedulingDuration
    #[arg(long = "metric", value_parser = tidegate_bench::compare::MetricSel::parse)]
    metrics: Vec<tidegate_bench::compare::MetricSel>,
}

#[derive(clap::Args)]
struct ListArgs {
    /// The scheduler_perf config (a list of test cases).
    config: PathBuf,
    /// Only workloads matching this label filter (`performance`, `integration-test,-short`).
    /// Default: every workload.
    #[arg(long)]
    label_filter: Option<String>,
}

#[derive(clap::Args)]
struct RunArgs {
    /// The scheduler_perf config (a list of test cases). Paths inside resolve relative to it,
    /// as upstream's do.
    ///
    /// Example: tidegate run perf-data/workloads/default.yaml
    config: PathBuf,
    /// `TestCase/Workload`, or `TestCase` for all its workloads.
    ///
    /// Example: --workload SchedulingBasic/5000Nodes_10000Pods
    #[arg(long)]
    workload: Option<String>,
    /// scheduler_perf label filter: a plain or `+` label must be present, a `-` label absent.
    /// Default: `performance`, or no filter when --workload is given.
    ///
    /// Example: --label-filter integration-test,-performance
    #[arg(long)]
    label_filter: Option<String>,
    /// Write the data-items JSON (perf-dash format,
    /// `BenchmarkPerfScheduling_benchmark_<topic>_<UTC time>.json`) into this folder.
    ///
    /// Example: --data-items-dir out/
    #[arg(long)]
    data_items_dir: Option<PathBuf>,
    /// Seed for node and pod name suffixes and host selection among equal scores.
    ///
    /// Example: --seed 7
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// A KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) for the test cases that
    /// have no `schedulerConfigPath` of their own.
    ///
    /// Example: --scheduler-config my-scheduler.yaml
    #[arg(long, value_name = "FILE")]
    scheduler_config: Option<PathBuf>,

    /// Filter/Score threads (rayon pool size). Default: the scheduler config's `parallelism`
    /// when it sets one, else the number of CPUs.
    ///
    /// Example: --threads 1
    #[arg(long)]
    threads: Option<usize>,
    /// Leave the Filter/Score workers unpinned. By default worker i runs on CPU i mod CPUs,
    /// so that two busy workers never share a CPU and each keeps its nodes in its own cache;
    /// unpin when the machine runs other busy work beside tidegate.
    ///
    /// Example: --no-pin
    #[arg(long)]
    no_pin: bool,
    /// Write one JSON line {"namespace","name","node"} per bound pod to this file.
    ///
    /// Example: --placements placements.jsonl
    #[arg(long)]
    placements: Option<PathBuf>,
    /// Longest wait for pods to be scheduled in one op (seconds); a workload that waits longer
    /// is reported FAILED with the pending pods' reasons, and the next one runs.
    ///
    /// Example: --timeout 120
    #[arg(long, default_value_t = 600)]
    timeout: u64,
    /// Write one JSON line per pod at the end of each workload: namespace, name, status
    /// (Bound, SchedulingGated, Pending, Terminating), node, queue, remaining gates, and for a
    /// pending pod the plugins that last rejected it and the message.
    ///
    /// Example: --dump-pods pods.jsonl
    #[arg(long, value_name = "FILE")]
    dump_pods: Option<PathBuf>,
    /// `real` (wall time) or `virtual`: a deterministic run on a virtual clock, driven on one
    /// thread. Backoff, flushes, Permit timeouts, churn ticks, delete and update rates, sleep
    /// and --timeout all run on it; the same --seed gives the same placements digest on every
    /// run and for any --threads. Throughput is then in pods per virtual second.
    ///
    /// Example: --clock virtual --seed 7
    #[arg(long, value_enum, default_value_t = ClockArg::Real)]
    clock: ClockArg,
    /// With --clock virtual: how far the clock moves per scheduling attempt (a Go duration).
    ///
    /// Example: --virtual-attempt-cost 1ms
    #[arg(long, value_name = "DURATION", default_value = "100us", value_parser = parse_duration)]
    virtual_attempt_cost: Duration,
    /// Write the final metrics of every workload in the Prometheus text exposition format
    /// (kube-scheduler's metric names, labels and buckets, plus `tidegate_*`), each series
    /// labelled with its `workload`.
    ///
    /// Example: --prometheus metrics.prom
    #[arg(long, value_name = "FILE")]
    prometheus: Option<PathBuf>,
    /// Sample the CPU (pprof, 997 Hz, every thread) during the measured phases only (the
    /// collection windows) and write a flamegraph SVG (inferno). Build with
    /// `--profile profiling` for full stacks.
    ///
    /// Example: --flamegraph flamegraphs/basic.svg
    #[arg(long, value_name = "FILE")]
    flamegraph: Option<PathBuf>,
    /// Inject faults (repeatable; comma-separated specs): `error@POINT=RATE` (a plugin Error
    /// at prefilter, filter, score, reserve, permit or bind), `bind-failure=RATE` (the API
    /// server refuses bindings), `permit-timeout=RATE[@DURATION]` (Permit waits, default
    /// 100ms, and times out), `node-updates=PER_SECOND` (an event storm of node label
    /// updates). RATE: a fraction or a percentage. Pods are requeued as kube requeues them,
    /// and the run still checks that every pod is bound, pending in a queue, or deleted.
    ///
    /// Example: --inject error@filter=0.01,bind-failure=5% --inject node-updates=2000
    #[arg(long, value_name = "SPEC", value_parser = parse_inject)]
    inject: Vec<String>,
    /// No progress bar on stderr (it is shown only when stderr is a terminal, and redraws
    /// about eight times a second).
    ///
    /// Example: --no-progress
    #[arg(long)]
    no_progress: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum ClockArg {
    Real,
    Virtual,
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    config::parse_go_duration(s)
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

fn print_table(reports: &[WorkloadReport]) {
    outln!(
        "{:<58} {:>10} {:>10} {:>10} {:>10} {:>12} {:>8} {:>8} {:>8}  verdict",
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
    for r in reports {
        let name = format!("{}/{}", r.test_case, r.workload);
        match &r.outcome {
            Outcome::Skipped(why) => outln!("{name:<58} skipped: unsupported: {why}"),
            Outcome::Failed(why) => outln!("{name:<58} FAILED: {why}"),
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
                    "{name:<58} {:>10} {:>10} {:>10} {:>10} {:>12} {:>8} {:>8} {:>8}  {verdict}",
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
        if !r.ignored_gates.is_empty() {
            outln!(
                "    feature gates accepted and ignored: {}",
                r.ignored_gates.join(", ")
            );
        }
    }
}

fn run(args: RunArgs) -> Result<ExitCode, HarnessError> {
    run_with(args, None)
}

/// One `--inject` value, checked on its own (clap reports a bad one with the flag's name).
fn parse_inject(s: &str) -> Result<String, String> {
    tidegate_bench::inject::Injection::default().add(s)?;
    Ok(s.to_string())
}

/// Every `--inject` value as one set of faults (a later value for the same fault wins).
fn injections(all: &[String]) -> Option<std::sync::Arc<tidegate_bench::inject::Injection>> {
    let mut m = tidegate_bench::inject::Injection::default();
    for s in all {
        m.add(s).ok()?;
    }
    (!all.is_empty()).then(|| std::sync::Arc::new(m))
}

fn run_with(
    args: RunArgs,
    live: Option<std::sync::Arc<runner::LiveScheduler>>,
) -> Result<ExitCode, HarnessError> {
    let cfg = config::load(&args.config)?;
    let opts = RunOptions {
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
    };
    if runner::select(&cfg, &opts).is_empty() {
        return Err(HarnessError::Input(tidegate_bench::error::InputError::new(
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
        )));
    }
    let mut reports = runner::run_config(&cfg, &opts)?;
    print_table(&reports);
    let mut all_items = vec![];
    let mut failures = vec![];
    let mut run_failures = vec![];
    let mut placements = vec![];
    let mut dump = Vec::new();
    for r in &reports {
        if let Outcome::Failed(why) = &r.outcome {
            run_failures.push(format!("{}/{}: {why}", r.test_case, r.workload));
        }
        if let Outcome::Ran(res) = &r.outcome {
            all_items.extend(res.items.iter().cloned());
            failures.extend(res.threshold_failures.iter().map(|f| f.message.clone()));
            placements.extend(res.placements.iter().cloned());
            for p in &res.pods {
                let mut line =
                    serde_json::to_value(p).map_err(|e| HarnessError::Run(e.to_string()))?;
                line["workload"] = format!("{}/{}", r.test_case, r.workload).into();
                let _ = writeln!(dump, "{line}");
            }
        }
    }
    if !placements.is_empty() {
        let attempts: u64 = reports
            .iter()
            .filter_map(|r| match &r.outcome {
                Outcome::Ran(res) => Some(res.summary.attempts),
                _ => None,
            })
            .sum();
        outln!(
            "placements digest: {:016x} ({} pods bound, {attempts} attempts)",
            runner::placements_digest(&placements),
            placements.len()
        );
    }
    let peak = reports
        .iter()
        .filter_map(|r| match &r.outcome {
            Outcome::Ran(res) => res.peak_rss_mb.map(|mb| (mb, r)),
            _ => None,
        })
        .max_by(|a, b| a.0.total_cmp(&b.0));
    if let Some((mb, r)) = peak {
        outln!(
            "memory: peak RSS {mb:.0} MB ({}/{})",
            r.test_case,
            r.workload
        );
    }
    if let Some(dir) = &args.data_items_dir {
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
        };
        let json = serde_json::to_vec_pretty(&doc).map_err(|e| HarnessError::Run(e.to_string()))?;
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let path = report::write_atomic(dir, &report::file_name(&cfg.topic, secs), &json)
            .map_err(|e| HarnessError::Run(format!("{}: {e}", dir.display())))?;
        outln!("data items: {}", path.display());
    }
    if let Some(file) = &args.placements {
        let mut out = Vec::new();
        for (ns, name, node) in &placements {
            let line = serde_json::json!({"namespace": ns, "name": name, "node": node});
            let _ = writeln!(out, "{line}");
        }
        write_file(file, &out)?;
    }
    if let Some(file) = &args.dump_pods {
        write_file(file, &dump)?;
    }
    if let Some(file) = &args.flamegraph {
        let mut merged: Option<runner::Profile> = None;
        for r in reports.iter_mut() {
            if let Outcome::Ran(res) = &mut r.outcome
                && let Some(p) = res.profile.take()
            {
                match &mut merged {
                    Some(m) => m.merge(p),
                    None => merged = Some(p),
                }
            }
        }
        let Some(profile) = merged else {
            return Err(HarnessError::Run(format!(
                "{}: no CPU samples (no collection window ran)",
                file.display()
            )));
        };
        let mut svg = Vec::new();
        if profile.0.data.is_empty() {
            // Too short to catch a sample: still a valid SVG, saying so.
            svg.extend_from_slice(
                br#"<?xml version="1.0" standalone="no"?><svg xmlns="http://www.w3.org/2000/svg" width="600" height="40"><text x="10" y="25">tidegate: no CPU samples in the measured phases (run longer)</text></svg>"#,
            );
        } else {
            profile
                .0
                .flamegraph(&mut svg)
                .map_err(|e| HarnessError::Run(format!("{}: {e}", file.display())))?;
        }
        write_file(file, &svg)?;
    }
    if let Some(file) = &args.prometheus {
        let snaps: Vec<(Option<String>, tidegate_bench::prom::Snapshot)> = reports
            .iter()
            .filter_map(|r| match &r.outcome {
                Outcome::Ran(res) => res
                    .prometheus
                    .clone()
                    .map(|s| (Some(format!("{}/{}", r.test_case, r.workload)), s)),
                _ => None,
            })
            .collect();
        write_file(file, tidegate_bench::prom::encode(&snaps).as_bytes())?;
    }
    for f in &failures {
        eprintln!("threshold: {f}");
    }
    for f in &run_failures {
        eprintln!("failed: {f}");
    }
    Ok(if failures.is_empty() && run_failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Writes `contents` to `file` whole or not at all.
fn write_file(file: &std::path::Path, contents: &[u8]) -> Result<(), HarnessError> {
    let dir = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let name = file
        .file_name()
        .and_then(|s| s.to_str())
        .ok_or_else(|| HarnessError::Run(format!("{}: not a file name", file.display())))?;
    report::write_atomic(dir, name, contents)
        .map(|_| ())
        .map_err(|e| HarnessError::Run(format!("{}: {e}", file.display())))
}

fn list(args: ListArgs) -> Result<ExitCode, HarnessError> {
    let cfg = config::load(&args.config)?;
    let opts = RunOptions {
        label_filter: Some(args.label_filter.clone().unwrap_or_default()),
        ..RunOptions::default()
    };
    let selected = runner::select(&cfg, &opts);
    outln!(
        "{:<58} {:<34} {:>10}  runs",
        "workload",
        "labels",
        "threshold"
    );
    for (tc, wl) in selected {
        let mut labels = tc.labels.clone();
        labels.extend(wl.labels.iter().cloned());
        let threshold = match &wl.threshold {
            None => "-".to_string(),
            Some(config::Threshold::Value(v)) => format!("{v}"),
            Some(config::Threshold::PerTopic(m)) => m
                .get(&cfg.topic)
                .map_or_else(|| "-".to_string(), |v| format!("{v}")),
        };
        let runs = match runner::check_workload(&cfg, tc, wl, &opts)? {
            None => "yes".to_string(),
            Some(why) => format!("skipped: unsupported: {why}"),
        };
        outln!(
            "{:<58} {:<34} {:>10}  {runs}",
            format!("{}/{}", tc.name, wl.name),
            labels.join(","),
            threshold
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `tidegate serve`: the run, with a /metrics endpoint on a thread of its own.
fn serve(args: ServeArgs) -> Result<ExitCode, HarnessError> {
    let live = std::sync::Arc::new(runner::LiveScheduler::default());
    let listener = std::net::TcpListener::bind(args.listen)
        .map_err(|e| HarnessError::Run(format!("--listen {}: {e}", args.listen)))?;
    let addr = listener.local_addr().unwrap_or(args.listen);
    eprintln!("serving metrics at http://{addr}/metrics");
    let l2 = live.clone();
    std::thread::Builder::new()
        .name("tidegate-metrics".into())
        .spawn(move || {
            for stream in listener.incoming().flatten() {
                let _ = answer(stream, &l2);
            }
        })
        .map_err(|e| HarnessError::Run(e.to_string()))?;
    run_with(args.run, Some(live))
}

/// One HTTP/1.1 exchange: `GET /metrics` gets the exposition, anything else 404.
fn answer(mut stream: std::net::TcpStream, live: &runner::LiveScheduler) -> std::io::Result<()> {
    use std::io::{BufRead, BufReader};
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    // Drain the headers.
    let mut line = String::new();
    while reader.read_line(&mut line)? > 2 {
        line.clear();
    }
    let path = request.split_whitespace().nth(1).unwrap_or("");
    let (status, body, ctype) = if request.starts_with("GET ") && path == "/metrics" {
        let snaps: Vec<(Option<String>, tidegate_bench::prom::Snapshot)> = live
            .snapshot()
            .map(|(w, s)| (Some(w), s))
            .into_iter()
            .collect();
        (
            "200 OK",
            tidegate_bench::prom::encode(&snaps),
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )
    } else {
        (
            "404 Not Found",
            "not found: try /metrics\n".to_string(),
            "text/plain",
        )
    };
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn compare(args: CompareArgs) -> Result<ExitCode, HarnessError> {
    use tidegate_bench::compare as cmp;
    let side = |spec: &str| -> Result<Vec<Vec<tidegate_bench::report::DataItem>>, HarnessError> {
        let paths: Vec<PathBuf> = spec
            .split(',')
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .collect();
        Ok(cmp::load_side(&paths)?
            .into_iter()
            .map(|(_, items)| items)
            .collect())
    };
    let (base, cur) = (side(&args.baseline)?, side(&args.current)?);
    let metrics = if args.metrics.is_empty() {
        cmp::MetricSel::defaults()
    } else {
        args.metrics.clone()
    };
    let strict = !args.metrics.is_empty();
    let rows = cmp::compare(&base, &cur, &metrics, args.max_regression, strict).map_err(|e| {
        HarnessError::Input(tidegate_bench::error::InputError::new(
            std::path::Path::new(&args.current),
            None,
            "",
            e,
        ))
    })?;
    out!("{}", cmp::markdown(&rows, args.max_regression));
    let regressed = rows.iter().any(|r| r.verdict == cmp::Verdict::Regression);
    Ok(if regressed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                e.exit();
            }
            // Bad command-line input is one line, as bad files are (clap adds a usage hint).
            let text = e.to_string();
            let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            eprintln!("{line}");
            return ExitCode::from(2);
        }
    };
    let result = match cli.cmd {
        Cmd::Run(a) => run(a),
        Cmd::List(a) => list(a),
        Cmd::Compare(a) => compare(a),
        Cmd::Serve(a) => serve(a),
        Cmd::Report(a) => tidegate_bench::html::report(&a.results)
            .map_err(HarnessError::Input)
            .and_then(|html| write_file(&a.output, html.as_bytes()))
            .map(|()| ExitCode::SUCCESS),
    };
    match result {
        Ok(code) => code,
        Err(HarnessError::Input(e)) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
