//! `tidegate list`: the test cases and workloads of a config, and whether this build runs
//! them. Nothing runs.

use std::path::PathBuf;
use std::process::ExitCode;
use tidegate_bench::error::HarnessError;
use tidegate_bench::run::{self, RunOptions};
use tidegate_bench::workload;

#[derive(clap::Args)]
pub(crate) struct ListArgs {
    /// The scheduler_perf config (a list of test cases).
    pub config: PathBuf,
    /// Only workloads matching this label filter (`performance`, `integration-test,-short`).
    /// Default: every workload.
    #[arg(long)]
    pub label_filter: Option<String>,
    /// Only shard I of N of the selection, as `tidegate run --shard I/N` runs it.
    ///
    /// Example: --shard 2/4
    #[arg(long, value_parser = super::run::parse_shard)]
    pub shard: Option<workload::shard::Shard>,
}

pub(crate) fn list(args: ListArgs) -> Result<ExitCode, HarnessError> {
    let cfg = workload::load(&args.config)?;
    let opts = RunOptions {
        label_filter: Some(args.label_filter.clone().unwrap_or_default()),
        shard: args.shard,
        ..RunOptions::default()
    };
    // Every op of the file is checked as upstream decodes it, whatever the filter (a bad
    // file is one error line, exit 2). What depends on a workload's params is upstream's
    // error only when that workload runs (kube's scheduler_perf substitutes them then), so a
    // workload whose params are bad is listed as failing and the others as they are: kube's
    // own files hold such workloads (dra's `empty_100nodes` has no `measurePods`), and the
    // rest of the file runs. Every row is planned before the table starts.
    run::check_ops(&cfg)?;
    let selected = run::select(&cfg, &opts);
    let mut runs = Vec::new();
    for (tc, wl) in &selected {
        runs.push(match run::check_workload(&cfg, tc, wl, &opts) {
            Ok(None) => "yes".to_string(),
            Ok(Some(why)) => format!("skipped: unsupported: {why}"),
            Err(e) => format!("fails: bad input: {e}"),
        });
    }
    let w = tidegate_bench::output::table::name_width(
        selected
            .iter()
            .map(|(tc, wl)| tc.name.chars().count() + 1 + wl.name.chars().count()),
    );
    let lw = selected
        .iter()
        .map(|(tc, wl)| {
            let n: usize = tc
                .labels
                .iter()
                .chain(&wl.labels)
                .map(|l| l.chars().count() + 1)
                .sum();
            n.saturating_sub(1)
        })
        .max()
        .unwrap_or(0)
        .max(34);
    outln!(
        "{:<w$} {:<lw$} {:>10}  runs",
        "workload",
        "labels",
        "threshold"
    );
    for ((tc, wl), runs) in selected.into_iter().zip(runs) {
        // A workload inherits its test case's labels; each is listed once.
        let mut labels = tc.labels.clone();
        labels.extend(wl.labels.iter().filter(|l| !tc.labels.contains(l)).cloned());
        let threshold = match &wl.threshold {
            None => "-".to_string(),
            Some(workload::Threshold::Value(v)) => format!("{v}"),
            Some(workload::Threshold::PerTopic(m)) => m
                .get(&cfg.topic)
                .map_or_else(|| "-".to_string(), |v| format!("{v}")),
        };
        outln!(
            "{:<w$} {:<lw$} {:>10}  {runs}",
            format!("{}/{}", tc.name, wl.name),
            labels.join(","),
            threshold
        );
    }
    Ok(ExitCode::SUCCESS)
}
