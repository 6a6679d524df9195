//! `tidegate replay`: the differential oracle's tidegate side (see `tidegate_bench::oracle`).

use std::path::PathBuf;
use std::process::ExitCode;
use tidegate_bench::error::HarnessError;
use tidegate_bench::oracle;
use tidegate_engine::Registry;
use tidegate_engine::SchedulerConfig;

#[derive(clap::Args)]
pub(crate) struct ReplayArgs {
    /// kube's records: the `.jsonl` files `kube-reference`'s `-record DIR` writes.
    ///
    /// Example: out/record/BenchmarkPerfScheduling_SchedulingBasic_5Nodes.jsonl
    #[arg(required = true)]
    pub records: Vec<PathBuf>,
    /// The KubeSchedulerConfiguration kube ran with (the workload's `schedulerConfigPath`);
    /// default: kube's default profile.
    #[arg(long)]
    pub scheduler_config: Option<PathBuf>,
    /// The differential's list of kube runs (`runs.tsv`: config, workload, record, by tabs):
    /// a record listed there is replayed with its test case's `schedulerConfigPath`, if it
    /// has one (else `--scheduler-config`, else kube's default profile).
    #[arg(long)]
    pub runs: Option<PathBuf>,
}

/// A scheduler configuration file as the replay's configuration.
fn config_from(path: &std::path::Path) -> Result<SchedulerConfig, HarnessError> {
    let sc = tidegate_bench::workload::scheduler_config::load(path, &Registry::in_tree())?;
    let mut cfg = SchedulerConfig::default();
    sc.apply_to(&mut cfg)
        .map_err(|e| HarnessError::Run(format!("{}: {e}", path.display())))?;
    Ok(cfg)
}

/// Record → the `schedulerConfigPath` of its test case, from `runs.tsv`.
fn configs_of_runs(
    runs: &std::path::Path,
) -> Result<std::collections::HashMap<PathBuf, PathBuf>, HarnessError> {
    let text = std::fs::read_to_string(runs)
        .map_err(|e| HarnessError::Run(format!("{}: {e}", runs.display())))?;
    let mut out = std::collections::HashMap::new();
    for line in text.lines() {
        let [config, workload, record] = line.split('\t').collect::<Vec<_>>()[..] else {
            continue;
        };
        let cfg = tidegate_bench::workload::load(std::path::Path::new(config))?;
        let case = workload.split('/').next().unwrap_or("");
        let Some(tc) = cfg.test_cases.iter().find(|t| t.name == case) else {
            continue;
        };
        if let Some(p) = &tc.scheduler_config_path {
            let path = tidegate_bench::workload::parse::resolve_rel(&cfg.dir, p);
            out.insert(PathBuf::from(record), path);
        }
    }
    Ok(out)
}

pub(crate) fn replay(a: ReplayArgs) -> Result<ExitCode, HarnessError> {
    let config = a.scheduler_config.as_deref().map(config_from).transpose()?;
    let per_record = match &a.runs {
        Some(r) => configs_of_runs(r)?,
        None => Default::default(),
    };
    let (mut unexplained, mut scenarios) = (0, 0);
    for path in &a.records {
        let cfg = match per_record.get(path) {
            Some(p) => Some(config_from(p)?),
            None => config.clone(),
        };
        let r = oracle::replay(path, cfg)?;
        outln!(
            "{}: {} scenarios, {} attempts; {} whole-cluster evaluations compared; {} bindings top-checked, {} feasibility only (a node tried alone: nominated or a batch hint; or kube's adaptive window), {} fit errors, {} other errors, {} deferred-resize attempts; {} nominations, {} victim sets, {} deletions, {} nominations lost to a status write, {} binding-cycle nominations; {} pod group cycles ({} scheduled, {} waiting on a group preemption; {} member placements fit-checked, {} placement choices scored, {} undone, {} pods out for a preemption simulation, {} group victim sets); {} DRA claim allocations judged; {} explained; {} disagreements{}",
            path.display(),
            r.scenarios,
            r.decisions,
            r.evaluations,
            r.top_checked,
            r.feasibility_only,
            r.fit_errors,
            r.other_errors,
            r.deferred,
            r.nominations,
            r.victims_checked,
            r.deletions,
            r.nominations_lost,
            r.expectations,
            r.group_cycles,
            r.groups_scheduled,
            r.group_preemptions,
            r.group_placements_checked,
            r.placements_scored,
            r.reverted,
            r.simulated,
            r.group_victims_checked,
            r.dra_allocations,
            r.explained.len(),
            r.disagreements.len(),
            if r.after_fit_error.is_empty() {
                String::new()
            } else {
                format!(", {} after a fit error", r.after_fit_error.len())
            }
        );
        for d in &r.disagreements {
            outln!("  DISAGREE {d}");
        }
        for d in &r.explained {
            outln!("  explained {d}");
        }
        for d in &r.after_fit_error {
            outln!("  after a fit error (an old record without deletions): {d}");
        }
        unexplained += r.disagreements.len();
        scenarios += r.scenarios;
    }
    outln!("kube-diff: {scenarios} scenarios, {unexplained} disagreements");
    Ok(if unexplained == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
