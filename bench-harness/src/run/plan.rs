//! Selecting and planning workloads: the workloads `--workload` and `--label-filter` pick,
//! and for each, its ops resolved, its scheduler configuration loaded and its templates
//! loaded and checked, so that bad input is reported before anything runs.

use crate::error::InputError;
use crate::run::ops::{self, Op, Prepared};
use crate::run::options::RunOptions;
use crate::workload::scheduler_config::{self, SchedulerConfigFile};
use crate::workload::{self, Config, TestCase, Workload};
use std::path::Path;

/// A workload ready to run.
pub(crate) struct Plan<'c> {
    /// The scheduler configuration (schedulerConfigPath, or --scheduler-config).
    pub(crate) sched_config: Option<SchedulerConfigFile>,
    pub(crate) tc: &'c TestCase,
    pub(crate) wl: &'c Workload,
    pub(crate) ops: Vec<Op>,
    /// The ops' templates, loaded and checked.
    pub(crate) prepared: Prepared,
}

/// The workloads selected by `--workload` and `--label-filter`.
pub fn select<'c>(cfg: &'c Config, opts: &RunOptions) -> Vec<(&'c TestCase, &'c Workload)> {
    let filter = opts.label_filter.clone().unwrap_or_else(|| {
        if opts.workload.is_some() {
            String::new()
        } else {
            "performance".into()
        }
    });
    let mut out = vec![];
    for tc in &cfg.test_cases {
        for wl in &tc.workloads {
            if let Some(p) = &opts.workload {
                let (ptc, pwl) = match p.split_once('/') {
                    Some((a, b)) => (a, Some(b)),
                    None => (p.as_str(), None),
                };
                if ptc != tc.name || pwl.is_some_and(|w| w != wl.name) {
                    continue;
                }
            }
            let mut labels = tc.labels.clone();
            labels.extend(wl.labels.iter().cloned());
            if workload::label_filter_matches(&filter, &labels) {
                out.push((tc, wl));
            }
        }
    }
    out
}

/// Plans a workload: `Ok(Err(reason))` when it is to be skipped as unsupported.
pub(crate) fn plan<'c>(
    cfg: &'c Config,
    tc: &'c TestCase,
    wl: &'c Workload,
    opts: &RunOptions,
) -> Result<Result<Plan<'c>, String>, InputError> {
    let ops = ops::resolve_ops(cfg, tc, wl)?;
    if !ops.iter().any(Op::collects_metrics) && !ops.iter().any(|o| matches!(o, Op::Unsupported(_)))
    {
        return Err(InputError::new(
            &cfg.path,
            Some(tc.pos),
            format!("{}.workloadTemplate", tc.name),
            "at least one op must collect metrics (createPods with collectMetrics: true, or startCollectingMetrics)",
        ));
    }
    let mut unsupported: Option<String> = None;
    // Paths in a config resolve relative to the config file, as upstream's do.
    let sched_path = tc
        .scheduler_config_path
        .as_ref()
        .map(|p| cfg.path.parent().unwrap_or(Path::new(".")).join(p))
        .or_else(|| opts.scheduler_config.clone());
    let sched_config = match sched_path {
        Some(path) => Some(scheduler_config::load(&path, &opts.registry)?),
        None => None,
    };
    let mut prepared = Prepared::default();
    for (i, op) in ops.iter().enumerate() {
        op.plan(i, &mut prepared, &mut unsupported)?;
    }
    if let Some(why) = resize_gates_unsupported(tc, wl) {
        unsupported.get_or_insert(why);
    }
    Ok(match unsupported {
        Some(u) => Err(u),
        None => Ok(Plan {
            sched_config,
            tc,
            wl,
            ops,
            prepared,
        }),
    })
}

/// `InPlacePodVerticalScaling` is GA and locked to true in kube v1.37.2 (kube-scheduler
/// refuses `false`), so a workload that sets it to `false` cannot run.
fn resize_gates_unsupported(tc: &TestCase, wl: &Workload) -> Option<String> {
    let gate = wl
        .feature_gates
        .get("InPlacePodVerticalScaling")
        .or_else(|| tc.feature_gates.get("InPlacePodVerticalScaling"));
    (gate == Some(&false)).then(|| {
        "feature gate InPlacePodVerticalScaling=false (GA and locked to true in kube v1.37)"
            .to_string()
    })
}

/// Plans a workload without running it: `Ok(None)` when it can run, `Ok(Some(reason))` when
/// it would be skipped as unsupported (`tidegate list`).
pub fn check_workload(
    cfg: &Config,
    tc: &TestCase,
    wl: &Workload,
    opts: &RunOptions,
) -> Result<Option<String>, InputError> {
    Ok(plan(cfg, tc, wl, opts)?.err())
}
