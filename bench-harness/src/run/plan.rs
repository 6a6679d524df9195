//! Selecting and planning workloads: the workloads `--workload` and `--label-filter` pick,
//! and for each, its ops resolved, its scheduler configuration loaded and its templates
//! loaded and checked, so that bad input is reported before anything runs.

use crate::cluster::store::ApiGates;
use crate::error::InputError;
use crate::run::ops::{self, Op, Prepared};
use crate::run::options::RunOptions;
use crate::workload::scheduler_config::{self, SchedulerConfigFile};
use crate::workload::{self, Config, TestCase, Workload};
use std::collections::BTreeMap;
use tidegate_engine::features::FeatureGates;

/// A workload ready to run.
pub(crate) struct Plan<'c> {
    /// The scheduler configuration (schedulerConfigPath, or --scheduler-config).
    pub(crate) sched_config: Option<SchedulerConfigFile>,
    pub(crate) tc: &'c TestCase,
    pub(crate) wl: &'c Workload,
    pub(crate) ops: Vec<Op>,
    /// The ops' templates, loaded and checked.
    pub(crate) prepared: Prepared,
    /// The workload's feature gates, resolved as kube resolves them.
    pub(crate) gates: FeatureGates,
}

/// The feature gates a workload sets: the test case's, then the workload's over them.
pub(crate) fn gates_of(tc: &TestCase, wl: &Workload) -> BTreeMap<String, bool> {
    let mut gates = tc.feature_gates.clone();
    gates.extend(wl.feature_gates.clone());
    gates
}

/// The workload's gates that the API server's validation and field dropping read (each at
/// kube v1.37.2's default unless the workload sets it: DRAConsumableCapacity on, the others
/// off).
pub(crate) fn api_gates_of(tc: &TestCase, wl: &Workload) -> ApiGates {
    let g = gates_of(tc, wl);
    let on = |name: &str| g.get(name) == Some(&true);
    ApiGates {
        generic_workload: on("GenericWorkload"),
        topology_aware_workload_scheduling: on("TopologyAwareWorkloadScheduling"),
        composite_pod_group: on("CompositePodGroup"),
        pod_group_preemption_policy: on("PodGroupPreemptionPolicy"),
        dra_consumable_capacity_off: g.get("DRAConsumableCapacity") == Some(&false),
        dra_device_compatibility_groups: on("DRADeviceCompatibilityGroups"),
        dra_workload_resource_claims: on("DRAWorkloadResourceClaims"),
        nominated_node_name_kept_at_binding: g.get("ClearingNominatedNodeNameAfterBinding")
            == Some(&false),
    }
}

/// The workloads selected by `--workload` and `--label-filter`, and of those the share of
/// `--shard` ([`crate::workload::shard`]).
pub fn select<'c>(cfg: &'c Config, opts: &RunOptions) -> Vec<(&'c TestCase, &'c Workload)> {
    let all = select_all(cfg, opts);
    match opts.shard {
        Some(shard) => shard.share(&all),
        None => all,
    }
}

/// The workloads selected by `--workload` and `--label-filter`, every shard's.
pub fn select_all<'c>(cfg: &'c Config, opts: &RunOptions) -> Vec<(&'c TestCase, &'c Workload)> {
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
            "no op in the workload template collects metrics (createPods with collectMetrics: true, or stopCollectingMetrics after a startCollectingMetrics)",
        ));
    }
    if let Some(reason) = legacy_gate(tc, wl) {
        return Ok(Err(reason));
    }
    let mut unsupported: Option<String> = None;
    // kube sets the gates before anything runs: a gate tidegate cannot follow comes first.
    let gates = match FeatureGates::for_workload(&gates_of(tc, wl)) {
        Ok(g) => g,
        Err(e) => {
            unsupported = Some(e.to_string());
            FeatureGates::default()
        }
    };
    // Paths in a config resolve relative to the config file, as upstream's do.
    let sched_path = tc
        .scheduler_config_path
        .as_ref()
        .map(|p| crate::workload::parse::resolve_rel(&cfg.dir, p))
        .or_else(|| opts.scheduler_config.clone());
    let sched_config = match sched_path {
        Some(path) => Some(scheduler_config::load(&path, &opts.registry)?),
        None => None,
    };
    let mut prepared = Prepared {
        api_gates: api_gates_of(tc, wl),
        ..Prepared::default()
    };
    for (i, op) in ops.iter().enumerate() {
        op.plan(i, &mut prepared, &mut unsupported)?;
    }
    // Bad input kube would accept and then hang on comes before a reason to skip.
    let census_gates = gates_of(tc, wl);
    crate::run::pod_groups::check(cfg, &ops, &prepared, &census_gates)?;
    crate::run::device_classes::check(&ops, &prepared, &census_gates)?;
    Ok(match unsupported {
        Some(u) => Err(u),
        None => Ok(Plan {
            sched_config,
            tc,
            wl,
            ops,
            prepared,
            gates,
        }),
    })
}

/// Gates of kube's development releases before v1.37 that v1.37.2 no longer has, with what
/// the files that set them mean.
const LEGACY_GATES: &[(&str, &str)] = &[(
    "GangScheduling",
    "a gate of kube's development before v1.37 (its gang plugin, which v1.37 runs under \
     GenericWorkload); the files that set it use shapes kube v1.37.2 does not serve \
     (PodGroup scheduling.k8s.io/v1alpha2, Workload v1alpha1 with spec.podGroups, pods with \
     spec.workloadRef), which tidegate does not map onto v1.37's PodGroups",
)];

/// Why the workload is of an older release's shape tidegate does not run, if it is.
fn legacy_gate(tc: &TestCase, wl: &Workload) -> Option<String> {
    let gates = gates_of(tc, wl);
    LEGACY_GATES
        .iter()
        .find(|(g, _)| gates.contains_key(*g))
        .map(|(g, why)| format!("feature gate {g}: {why}"))
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
