//! `tidegate`: run kube-scheduler `scheduler_perf` workload files against the tidegate engine.
//!
//! The subcommands live in [`cli`], one file each.
#![forbid(unsafe_code)]
#![warn(unreachable_pub)]

use clap::{Parser, Subcommand};
use std::process::ExitCode;
use tidegate_bench::error::HarnessError;

/// `println!` that never panics: a closed stdout (`tidegate list | head`) is ignored, and the
/// run goes on to write its files.
macro_rules! outln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

/// `print!` that never panics (see [`outln`]).
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($t)*);
    }};
}

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod cli;

use cli::compare::CompareArgs;
use cli::list::ListArgs;
use cli::merge::MergeArgs;
use cli::outcomes::OutcomesArgs;
use cli::replay::ReplayArgs;
use cli::report::ReportArgs;
use cli::run::RunArgs;
use cli::scenarios::ScenariosArgs;
use cli::serve::ServeArgs;

#[derive(Parser)]
#[command(
    name = "tidegate",
    version = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("TIDEGATE_COMMIT"), ")"),
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
    /// Join the data-items files of the N shards of one sweep (`tidegate run --shard I/N`)
    /// into one, as one unsharded run would have written it; `report` and `compare` read it.
    /// Refuses (exit 2) a missing or doubled shard, shards of another sweep (N, selection,
    /// commit, seed, clock), and a data item outside its shard's share.
    ///
    /// Example: tidegate merge shards/*.json --out sweep.json
    Merge(MergeArgs),
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
    /// Replay the real kube-scheduler's decisions (recorded by kube-reference's `-record`)
    /// on the same cluster state and judge each with tidegate's Filter and Score: kube's node
    /// feasible here and among the top scores, the same plugins rejecting an unschedulable
    /// pod. Last line: `kube-diff: N scenarios, D disagreements`; exits 1 on a disagreement.
    ///
    /// Example: tidegate replay out/record/BenchmarkPerfScheduling_SchedulingBasic_5Nodes.jsonl
    Replay(ReplayArgs),
    /// The differential's outcome check: run in tidegate each workload kube ran (listed with
    /// its kube-reference record) and compare the outcomes: whether each completed, and the
    /// pod counts at each op's end (created, scheduled, pending, deleted), differences that
    /// timing explains named as such. Last line: `kube-diff outcomes: W workloads, D
    /// disagreements, ...`; exits 1 on a disagreement. `ci/kube-diff.sh` runs it.
    ///
    /// Example: tidegate outcomes target/kube-diff/runs.tsv
    Outcomes(OutcomesArgs),
    /// Write random scenarios for the differential oracle: isolated little clusters (nodes
    /// with taints, zones and capacities; pods with priorities, requests, host ports,
    /// tolerations, node and inter-pod affinity, spreading, scheduling gates) as a
    /// scheduler_perf config that kube's own scheduler_perf runs unchanged, one test case
    /// `Random<seed>Batch<b>` per batch. Run kube-reference's perf.test -record from DIR, then
    /// `tidegate replay` its records.
    ///
    /// Example: tidegate kube-scenarios --seed 1 --scenarios 300 --per-batch 100 --out /tmp/random
    KubeScenarios(ScenariosArgs),
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
            // clap's own message in full (the argument named, "did you mean", the possible
            // values, the usage line); exit 2 as for bad files.
            let _ = e.print();
            return ExitCode::from(2);
        }
    };
    let result = match cli.cmd {
        Cmd::Run(a) => cli::run::run(a),
        Cmd::List(a) => cli::list::list(a),
        Cmd::Compare(a) => cli::compare::compare(a),
        Cmd::Merge(a) => cli::merge::merge(a),
        Cmd::Serve(a) => cli::serve::serve(a),
        Cmd::Report(a) => cli::report::report(a),
        Cmd::Replay(a) => cli::replay::replay(a),
        Cmd::Outcomes(a) => cli::outcomes::outcomes(a),
        Cmd::KubeScenarios(a) => cli::scenarios::scenarios(a),
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
