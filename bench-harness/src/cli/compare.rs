//! `tidegate compare`: baseline runs against current runs of the same workloads, as Go's
//! benchstat compares them: the median and spread of each side, the change with its
//! Mann–Whitney U p-value, `~` when the runs cannot tell the sides apart (then never a
//! regression), and no regression within one step of the values' own resolution.

use std::path::PathBuf;
use std::process::ExitCode;
use tidegate_bench::error::HarnessError;

#[derive(clap::Args)]
pub(crate) struct CompareArgs {
    /// Baseline runs: a data-items file, a folder of them, or files separated by commas.
    ///
    /// Example: perf-data/baselines/basic/
    pub baseline: String,
    /// Current runs, in the same forms.
    ///
    /// Example: out/run1.json,out/run2.json,out/run3.json
    pub current: String,
    /// The largest tolerated change for the worse (`5%`, `0.05`).
    ///
    /// Example: --max-regression 10%
    #[arg(long, default_value = "5%", value_parser = tidegate_bench::output::compare::parse_limit)]
    pub max_regression: f64,
    /// Values to compare: a `Metric` label, optionally with labels the items must carry and
    /// statistics (`NAME{label=value}:STAT,STAT`). Repeatable. Histograms are compared on
    /// their exact estimator. Default: SchedulingThroughput:Average,Perc50 and
    /// scheduler_framework_extension_point_duration_seconds{extension_point=PreEnqueue}:Perc90.
    ///
    /// Example: --metric SchedulingThroughput:Perc90 --metric SchedulingDuration
    #[arg(long = "metric", value_parser = tidegate_bench::output::compare::MetricSel::parse)]
    pub metrics: Vec<tidegate_bench::output::compare::MetricSel>,
    /// `table`: the comparison (markdown). `benchstat`: both sides' runs in Go's benchmark
    /// format, a `side: baseline|current` line before each, for `benchstat -col side FILE`.
    ///
    /// Example: --format benchstat > runs.txt && benchstat -col side runs.txt
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    Table,
    Benchstat,
}

/// The run's threads as its data-items file records them (`tidegateRun`: `--threads`, else
/// the CPUs), for the `-P` suffix of benchmark names.
fn threads_of(file: &std::path::Path) -> Option<usize> {
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(file).ok()?).ok()?;
    let run = doc.get("tidegateRun")?;
    run.get("threads")
        .and_then(|t| t.as_u64())
        .or_else(|| run.get("cpus").and_then(|c| c.as_u64()))
        .map(|n| n as usize)
}

/// The CPU model a data-items file records.
fn cpu_of(file: &std::path::Path) -> Option<String> {
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(file).ok()?).ok()?;
    Some(
        doc.get("tidegateRun")?
            .get("cpuModel")?
            .as_str()?
            .to_string(),
    )
}

/// `--format benchstat`: both sides in Go's benchmark format.
fn benchstat(
    base: &[(PathBuf, Vec<tidegate_bench::output::report::DataItem>)],
    cur: &[(PathBuf, Vec<tidegate_bench::output::report::DataItem>)],
    metrics: &[tidegate_bench::output::compare::MetricSel],
) -> String {
    use tidegate_bench::output::benchstat::{Side, benchstat};
    let side = |name, runs: &[(PathBuf, Vec<tidegate_bench::output::report::DataItem>)]| Side {
        name,
        runs: runs
            .iter()
            .map(|(p, items)| (items.clone(), threads_of(p)))
            .collect(),
    };
    let cpu = base.first().and_then(|(p, _)| cpu_of(p));
    benchstat(
        &[side("baseline", base), side("current", cur)],
        metrics,
        cpu.as_deref(),
    )
}

pub(crate) fn compare(args: CompareArgs) -> Result<ExitCode, HarnessError> {
    use tidegate_bench::output::compare as cmp;
    let side = |spec: &str| -> Result<_, HarnessError> {
        let paths: Vec<PathBuf> = spec
            .split(',')
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .collect();
        Ok(cmp::load_side(&paths)?)
    };
    let (base_files, cur_files) = (side(&args.baseline)?, side(&args.current)?);
    let items = |files: &[(PathBuf, Vec<_>)]| -> Vec<Vec<_>> {
        files.iter().map(|(_, items)| items.clone()).collect()
    };
    let (base, cur) = (items(&base_files), items(&cur_files));
    if base.len() < 2 || cur.len() < 2 {
        eprintln!(
            "warning: {} baseline and {} current run(s): a side with one run cannot show a significant change (Mann-Whitney U, as benchstat); run each side 5 times or more",
            base.len(),
            cur.len()
        );
    }
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
    match args.format {
        Format::Table => out!("{}", cmp::markdown(&rows, args.max_regression)),
        Format::Benchstat => out!("{}", benchstat(&base_files, &cur_files, &metrics)),
    }
    let regressed = rows.iter().any(|r| r.verdict == cmp::Verdict::Regression);
    Ok(if regressed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
