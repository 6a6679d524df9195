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
    #[arg(long, default_value = "5%", value_parser = tidegate_bench::compare::parse_limit)]
    pub max_regression: f64,
    /// Values to compare: a `Metric` label, optionally with labels the items must carry and
    /// statistics (`NAME{label=value}:STAT,STAT`). Repeatable. Histograms are compared on
    /// their exact estimator. Default: SchedulingThroughput:Average,Perc50 and
    /// scheduler_framework_extension_point_duration_seconds{extension_point=PreEnqueue}:Perc90.
    ///
    /// Example: --metric SchedulingThroughput:Perc90 --metric SchedulingDuration
    #[arg(long = "metric", value_parser = tidegate_bench::compare::MetricSel::parse)]
    pub metrics: Vec<tidegate_bench::compare::MetricSel>,
}

pub(crate) fn compare(args: CompareArgs) -> Result<ExitCode, HarnessError> {
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
    out!("{}", cmp::markdown(&rows, args.max_regression));
    let regressed = rows.iter().any(|r| r.verdict == cmp::Verdict::Regression);
    Ok(if regressed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
