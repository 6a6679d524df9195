//! `tidegate run`: its flags, turned into the run's options and the outputs they ask for;
//! the library runs the workloads, prints the table and writes the files
//! (`tidegate_bench::run::run_config_to`, `tidegate_bench::output::sink`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use tidegate_bench::error::HarnessError;
use tidegate_bench::output::sink::{OutputOptions, Sink};
use tidegate_bench::run::pace::ClockMode;
use tidegate_bench::run::{self, RunOptions};
use tidegate_bench::workload;
use tidegate_engine::PinThreads;

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
    /// Run only shard I of N (1-based) of the selected workloads: those at positions k of
    /// the selection (config order) with k mod N = I - 1. `tidegate merge` joins the shards'
    /// data-items files. On a Kubernetes Indexed Job: I = JOB_COMPLETION_INDEX + 1.
    ///
    /// Example: --shard 2/4
    #[arg(long, value_parser = parse_shard)]
    pub shard: Option<workload::shard::Shard>,
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
    /// Pin the Filter/Score workers, worker i to CPU i mod CPUs: `auto` (the default) pins
    /// only when --threads leaves a CPU free for the binder and the API's side, `always`,
    /// `never`. Pinned, two busy workers never share a CPU and each keeps its nodes in its
    /// own cache; but the scheduling loop is worker 0, and a loop pinned to a CPU the rest
    /// of the run also needs waits there.
    ///
    /// Example: --pin never
    #[arg(long, value_enum, default_value = "auto")]
    pub pin: PinArg,
    /// The same as `--pin never`.
    ///
    /// Example: --no-pin
    #[arg(long, conflicts_with = "pin")]
    pub no_pin: bool,
    /// Judge every node afresh each cycle: no node memo (node-local plugins' Filter passes and
    /// raw scores kept per node between cycles; the same decisions either way). For measuring
    /// what the memo saves, and for checking that it changes nothing.
    ///
    /// Example: --no-node-memo
    #[arg(long)]
    pub no_node_memo: bool,
    /// Keep the node memo but visit every node of each cycle's window: no window path (the
    /// memo's chunk summaries answer whole chunks of nodes at once, as the sequential Filter
    /// pass would: the same decisions either way under `--clock virtual`). For measuring what
    /// the window path saves, and for checking that it changes nothing.
    ///
    /// Example: --no-memo-window
    #[arg(long)]
    pub no_memo_window: bool,
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
pub(crate) enum PinArg {
    Auto,
    Always,
    Never,
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

pub(crate) fn parse_shard(s: &str) -> Result<workload::shard::Shard, String> {
    workload::shard::Shard::parse(s)
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
    if run::plan::select_all(&cfg, &opts).is_empty() {
        return Err(no_workload_matches(&args, &opts));
    }
    if let Some(shard) = opts.shard
        && run::select(&cfg, &opts).is_empty()
    {
        eprintln!("tidegate: shard {shard}: no workload of the selection is this shard's");
    }
    let mut sink = Sink::stdio(OutputOptions {
        print: true,
        data_items_dir: args.data_items_dir,
        placements: args.placements,
        dump_pods: args.dump_pods,
        prometheus: args.prometheus,
        flamegraph: args.flamegraph,
    });
    run::run_config_to(&cfg, &opts, &mut sink)?;
    Ok(ExitCode::from(sink.exit_status()))
}

/// The run's options from the flags.
fn options(args: &RunArgs, live: Option<std::sync::Arc<run::LiveScheduler>>) -> RunOptions {
    RunOptions {
        prometheus: args.prometheus.is_some(),
        flamegraph: args.flamegraph.is_some(),
        live,
        workload: args.workload.clone(),
        label_filter: args.label_filter.clone(),
        shard: args.shard,
        seed: args.seed,
        threads: args.threads,
        pin_threads: match (args.no_pin, args.pin) {
            (true, _) | (false, PinArg::Never) => PinThreads::Never,
            (false, PinArg::Auto) => PinThreads::Auto,
            (false, PinArg::Always) => PinThreads::Always,
        },
        node_memo: !args.no_node_memo,
        memo_window: !args.no_memo_window,
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
