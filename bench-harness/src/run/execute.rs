//! Executing planned workloads: a fresh store and scheduler per workload, its ops run in
//! order on real or virtual time, then the counts checked and the data items, thresholds and
//! pods collected.

use crate::cluster::store::Store;
use crate::error::HarnessError;
use crate::output::flame::Profile;
use crate::output::report::{self, DataItem, WindowSeries};
use crate::output::results::{GroupCounts, Outcome, PodDump, RunResult, Summary, WorkloadReport};
use crate::output::sink::Sink;
use crate::output::table;
use crate::run::faults::{add_fault_plugin, node_storm};
use crate::run::memory::{peak_rss_mb, reset_peak_rss};
use crate::run::ops::{ExecutorView, OpOptions, RunCx};
use crate::run::options::RunOptions;
use crate::run::outcome::{OpEnd, PodCounts, WorkloadOutcome};
use crate::run::pace::{ClockMode, Pace};
use crate::run::plan::{Plan, plan, select};
use crate::run::progress::Progress;
use crate::workload::Config;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tidegate_engine::Profile as SchedProfile;
use tidegate_engine::clock::VirtualClock;
use tidegate_engine::features::{FeatureGates, Features, Support};
use tidegate_engine::{Scheduler, SchedulerConfig};

/// Runs every selected workload. Bad input anywhere aborts before anything runs.
pub fn run_config(cfg: &Config, opts: &RunOptions) -> Result<Vec<WorkloadReport>, HarnessError> {
    run_config_with(cfg, opts, &mut |_: &[WorkloadReport]| Ok(()))
}

/// [`run_config`], printing and writing what `tidegate run` prints and writes through `sink`
/// (see `output::sink` for the order): the table as each workload ends with its data items
/// rewritten then, and at the end the digest, the peak RSS, the other files its options name
/// and the failures; `sink.exit_status()` is then the status `tidegate run` exits with.
/// The options' `prometheus`, `flamegraph` and `dump_pods` are turned on for the files the
/// sink writes.
pub fn run_config_to(
    cfg: &Config,
    opts: &RunOptions,
    sink: &mut Sink<'_>,
) -> Result<Vec<WorkloadReport>, HarnessError> {
    let wants = sink.options();
    let opts = RunOptions {
        prometheus: opts.prometheus || wants.prometheus.is_some(),
        flamegraph: opts.flamegraph || wants.flamegraph.is_some(),
        dump_pods: opts.dump_pods || wants.dump_pods.is_some(),
        ..opts.clone()
    };
    let width = table::name_width(
        select(cfg, &opts)
            .iter()
            .map(|(tc, wl)| tc.name.chars().count() + 1 + wl.name.chars().count()),
    );
    let mut info = report::RunInfo::here(opts.threads, opts.seed, opts.clock.name());
    info.shard = opts.shard.map(|s| crate::workload::shard::ShardRecord {
        index: s.index,
        count: s.count,
        selected: super::plan::select_all(cfg, &opts)
            .iter()
            .map(|(tc, wl)| format!("{}/{}", tc.name, wl.name))
            .collect(),
    });
    sink.begin(&cfg.topic, width, info);
    let mut reports = run_config_with(cfg, &opts, &mut |rs: &[WorkloadReport]| sink.report(rs))?;
    sink.finish(&mut reports)?;
    Ok(reports)
}

/// [`run_config`], telling `on_report` every report so far once the input is checked (none
/// yet: a caller prints its header then, never before a bad-input error) and as soon as each
/// workload ends
/// (the CLI prints its row and rewrites the data items then, so that an interrupted run
/// loses nothing finished). A SIGINT/SIGTERM ([`crate::interrupt`]) ends the workload running
/// at its next safe point, reported as failed ("interrupted"), and no further workload runs.
pub fn run_config_with(
    cfg: &Config,
    opts: &RunOptions,
    on_report: &mut dyn FnMut(&[WorkloadReport]) -> Result<(), HarnessError>,
) -> Result<Vec<WorkloadReport>, HarnessError> {
    let result = run_planned(cfg, opts, on_report);
    // `--flamegraph`'s profiler runs from the first window to the end of the run.
    if opts.flamegraph {
        super::flame::stop_profiler();
    }
    result
}

/// Checks every op of the file (as upstream decodes it, whatever the filter), plans the
/// selected workloads, tells `on_report` that nothing is wrong with the input (with no
/// report yet), then runs them one by one.
fn run_planned(
    cfg: &Config,
    opts: &RunOptions,
    on_report: &mut dyn FnMut(&[WorkloadReport]) -> Result<(), HarnessError>,
) -> Result<Vec<WorkloadReport>, HarnessError> {
    super::ops::check_ops(cfg)?;
    let selected = select(cfg, opts);
    let mut plans = vec![];
    for (tc, wl) in &selected {
        plans.push((tc, wl, plan(cfg, tc, wl, opts)?));
    }
    let mut reports = vec![];
    on_report(&reports)?;
    for (tc, wl, p) in plans {
        let identical_gates = match &p {
            Ok(p) => identical_gates(&p.gates),
            Err(_) => vec![],
        };
        if crate::interrupt::requested().is_some() {
            break;
        }
        let outcome = match p {
            Err(reason) => Outcome::Skipped(reason),
            Ok(p) => match execute(cfg, &p, opts) {
                Ok(r) => Outcome::Ran(Box::new(r)),
                Err(HarnessError::Run(msg))
                    if opts.keep_going || crate::interrupt::requested().is_some() =>
                {
                    Outcome::Failed(msg)
                }
                Err(e) => return Err(e),
            },
        };
        reports.push(WorkloadReport {
            test_case: tc.name.clone(),
            workload: wl.name.clone(),
            outcome,
            identical_gates,
        });
        on_report(&reports)?;
    }
    Ok(reports)
}

/// The gates a workload sets that change nothing kube-scheduler does here, as `Gate=value`.
fn identical_gates(g: &FeatureGates) -> Vec<String> {
    g.explain()
        .into_iter()
        .filter(|(_, _, s)| matches!(s, Support::Identical(_)))
        .map(|(n, v, _)| format!("{n}={v}"))
        .collect()
}

/// One workload's run: its input, options, store and scheduler, from the scheduler's start
/// to the collected results.
struct WorkloadRun<'r> {
    cfg: &'r Config,
    p: &'r Plan<'r>,
    opts: &'r RunOptions,
    store: Arc<Store>,
    sched: Arc<Scheduler>,
    started: Instant,
}

/// Runs one planned workload.
fn execute(cfg: &Config, p: &Plan, opts: &RunOptions) -> Result<RunResult, HarnessError> {
    let started = Instant::now();
    reset_peak_rss();
    let vclock = opts
        .clock
        .is_virtual()
        .then(|| Arc::new(VirtualClock::new()));
    let store = match &vclock {
        Some(c) => Store::with_clock(opts.seed, c.clone()),
        None => Store::new(opts.seed),
    };
    store.set_api_gates(crate::run::plan::api_gates_of(p.tc, p.wl));
    let sched = start_scheduler(p, opts, &store, &vclock)?;
    if let Some(live) = &opts.live {
        *live.current.lock() = Some((format!("{}/{}", p.tc.name, p.wl.name), sched.clone()));
    }
    let w = WorkloadRun {
        cfg,
        p,
        opts,
        store,
        sched,
        started,
    };
    let (store, sched) = (&w.store, &w.sched);
    let progress = Progress::start(
        opts.progress,
        &format!("{}/{}", p.tc.name, p.wl.name),
        p.ops.len(),
        store,
        sched,
    );
    let mut profile: Option<Profile> = None;
    let mut series: Vec<WindowSeries> = Vec::new();
    let mut run = |pace: &mut Pace| w.run_ops(pace, &progress, &mut profile, &mut series);
    let result = match (opts.clock, vclock) {
        (ClockMode::Virtual { attempt_cost }, Some(clock)) => {
            // One thread drives everything, on a worker of the Filter/Score pool as the
            // scheduling loop runs in real time.
            let mut pace = Pace::virtual_time(clock, sched.clone(), attempt_cost);
            let result = sched.in_pool(|| run(&mut pace));
            pace.finish();
            result
        }
        _ => {
            let handle = sched.run();
            let mut pace = Pace::real();
            let result = run(&mut pace);
            pace.finish();
            sched.stop();
            let _ = handle.join();
            result
        }
    };
    progress.finish();
    store.detach();
    let items = result?;
    w.finish(items, series, profile)
}

/// The workload's scheduler, configured (scheduler config, feature gates, faults) and
/// attached to `store`, with the controllers started.
fn start_scheduler(
    p: &Plan,
    opts: &RunOptions,
    store: &Arc<Store>,
    vclock: &Option<Arc<VirtualClock>>,
) -> Result<Arc<Scheduler>, HarnessError> {
    let mut sched_cfg = scheduler_config(p, opts)?;
    let queue_clock = vclock
        .clone()
        .map(|c| c as Arc<dyn tidegate_engine::clock::Clock>);
    let mut registry = opts.registry.clone();
    if let Some(inj) = &opts.inject {
        store.inject_bind_failures(inj.bind_failure, opts.seed);
        if inj.needs_plugin() {
            add_fault_plugin(&mut sched_cfg, &mut registry, inj, opts.seed)?;
        }
    }
    let sched = Scheduler::new(sched_cfg, &registry, store.clone(), queue_clock)
        .map_err(|e| HarnessError::Run(e.to_string()))?;
    store.attach(sched.clone());
    // scheduler_perf starts kube's ResourceClaim controller when the workload names the
    // DynamicResourceAllocation gate (`util.go`).
    let named = |g: &str| p.wl.feature_gates.contains_key(g) || p.tc.feature_gates.contains_key(g);
    if named("DynamicResourceAllocation") {
        store.add_controller(Arc::new(
            crate::cluster::resource_claims::ResourceClaimController,
        ));
    }
    for c in &opts.controllers {
        c.start(store);
        store.add_controller(c.clone());
    }
    Ok(sched)
}

/// The scheduler's configuration: the options, the workload's feature gates and the test
/// case's scheduler config (its profiles' default plugins as the gates make them).
fn scheduler_config(p: &Plan, opts: &RunOptions) -> Result<SchedulerConfig, HarnessError> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let features = Features::from_gates(&p.gates);
    let mut sched_cfg = SchedulerConfig {
        parallelism: opts.threads.unwrap_or(cpus).max(1),
        seed: opts.seed,
        deterministic: opts.clock.is_virtual(),
        pin_threads: opts.pin_threads,
        node_memo: opts.node_memo,
        memo_window: opts.memo_window,
        features,
        profiles: vec![SchedProfile::default_profile_for(&features)],
        ..SchedulerConfig::default()
    };
    if let Some(sc) = &p.sched_config {
        sc.apply_to(&mut sched_cfg).map_err(|e| {
            HarnessError::Run(format!(
                "{}: under the workload's feature gates: {e}",
                sc.path.display()
            ))
        })?;
        if opts.threads.is_none() && sc.explicit_parallelism {
            sched_cfg.parallelism = sc.resolved.parallelism;
        }
    }
    sched_cfg.queue.queueing_hints = p.gates.enabled("SchedulerQueueingHints");
    sched_cfg.queue.pop_from_backoff = p.gates.enabled("SchedulerPopFromBackoffQ");
    sched_cfg.resize_preemption = p
        .gates
        .enabled("InPlacePodVerticalScalingSchedulerPreemption");
    sched_cfg.opportunistic_batching = p.gates.enabled("OpportunisticBatching");
    sched_cfg.nominated_node_name_for_expectation =
        p.gates.enabled("NominatedNodeNameForExpectation");
    Ok(sched_cfg)
}

impl WorkloadRun<'_> {
    /// Runs the workload's ops in order; the data items of their collection windows.
    fn run_ops(
        &self,
        pace: &mut Pace,
        progress: &Progress,
        profile: &mut Option<Profile>,
        series: &mut Vec<WindowSeries>,
    ) -> Result<Vec<DataItem>, HarnessError> {
        let WorkloadRun {
            cfg,
            p,
            opts,
            store,
            sched,
            ..
        } = self;
        if let Some(inj) = opts
            .inject
            .as_ref()
            .filter(|i| i.node_updates_per_second > 0.0)
        {
            let first = pace.now() + Duration::from_millis(10);
            pace.spawn(
                first,
                node_storm(store.clone(), inj.node_updates_per_second),
            );
        }
        let mut cx = RunCx {
            cfg,
            tc: p.tc,
            wl: p.wl,
            prepared: &p.prepared,
            opts: OpOptions {
                timeout: opts.timeout,
                wait_poll: opts.wait_poll,
                flamegraph: opts.flamegraph,
            },
            store,
            sched,
            pace,
            profile,
            series,
            items: vec![],
            known_ns: BTreeMap::new(),
            window: None,
            index: 0,
            view: ExecutorView::new(&p.ops),
        };
        let mut ends = vec![];
        let mut result = Ok(());
        for (i, op) in p.ops.iter().enumerate() {
            if let Some(sig) = crate::interrupt::requested() {
                result = Err(interrupted(sig, i, op.opcode()));
                break;
            }
            if progress.is_shown() {
                progress.op(i, op.opcode(), op.progress_goal(store), store);
            }
            cx.index = i;
            result = op.run(&mut cx);
            // A wait or sleep cut short by the signal ends early (or reads as a timeout): the
            // op did not finish, say so.
            if let Some(sig) = crate::interrupt::requested() {
                result = Err(interrupted(sig, i, op.opcode()));
            }
            if opts.outcomes.is_some() {
                ends.push(OpEnd {
                    index: i,
                    opcode: op.opcode(),
                    counts: PodCounts::of(store),
                    waits: std::mem::take(&mut cx.view.waits),
                    stale: std::mem::take(&mut cx.view.stale),
                });
            }
            if result.is_err() {
                break;
            }
        }
        if let Some(log) = &opts.outcomes {
            log.workloads.lock().push(WorkloadOutcome {
                name: format!("{}/{}", p.tc.name, p.wl.name),
                ops: p.ops.clone(),
                ends,
                error: result.as_ref().err().map(|e| e.to_string()),
            });
        }
        // A window still open at the end (or when an op failed) is dropped uncollected.
        if let Some(w) = cx.window.take() {
            w.discard(store);
        }
        result.map(|()| cx.items)
    }

    /// After the ops: the counts checked (every pod accounted for), the workload's own data
    /// items added, thresholds applied, pods dumped.
    fn finish(
        &self,
        mut items: Vec<DataItem>,
        series: Vec<WindowSeries>,
        profile: Option<Profile>,
    ) -> Result<RunResult, HarnessError> {
        let WorkloadRun {
            cfg,
            p,
            opts,
            store,
            sched,
            started,
        } = self;
        let gauges = sched.gauges();
        let summary = summarize(p, store, sched)?;
        let name = format!("BenchmarkPerfScheduling/{}/{}", p.tc.name, p.wl.name);
        items.push(report::summary_item(&name, &summary.as_pairs()));
        // The profiler's sample table is the profiler's, not the workload's.
        let profiler_mb = profile.as_ref().and_then(|p| p.profiler_mb);
        let peak_rss_mb = peak_rss_mb().map(|mb| (mb - profiler_mb.unwrap_or(0.0)).max(0.0));
        if let Some(mb) = peak_rss_mb {
            items.push(report::peak_rss_item(
                mb,
                profiler_mb,
                summary.created,
                &name,
            ));
        }
        items.extend(report::gauge_items(&gauges, &name));
        let selector =
            p.wl.threshold_metric_selector
                .clone()
                .or_else(|| p.tc.default_threshold_metric_selector.clone())
                .unwrap_or_default();
        let threshold_failures =
            report::apply_threshold(&mut items, p.wl.threshold.as_ref(), &cfg.topic, &selector);
        let pods = if opts.dump_pods {
            dump_pods(store, sched)
        } else {
            vec![]
        };
        let prometheus = opts
            .prometheus
            .then(|| crate::output::prom::Snapshot::of(sched));
        if let Some(live) = &opts.live {
            live.finish();
        }
        Ok(RunResult {
            series,
            profile,
            prometheus,
            items,
            summary,
            threshold_failures,
            placements: store.placements(),
            wall: started.elapsed(),
            pods,
            peak_rss_mb,
            profiler_mb,
        })
    }
}

/// The error of a workload stopped by a signal at op `i`.
fn interrupted(sig: i32, i: usize, opcode: &str) -> HarnessError {
    HarnessError::Run(crate::interrupt::interruption(
        sig,
        &format!("op {i} ({opcode})"),
    ))
}

/// The workload's counts: an error if some pod is unaccounted for.
fn summarize(p: &Plan, store: &Store, sched: &Scheduler) -> Result<Summary, HarnessError> {
    let counts = store.counts();
    let mut q = sched.queue.counts();
    // With resize preemption, bound pods whose resize is Deferred wait in the queue too: they
    // are counted as bound, not as pending.
    let gate = |g: &str| {
        p.wl.feature_gates
            .get(g)
            .or_else(|| p.tc.feature_gates.get(g))
    };
    if gate("InPlacePodVerticalScalingSchedulerPreemption") == Some(&true) {
        for ps in store
            .pod_states()
            .into_iter()
            .filter(|ps| ps.node.is_some())
        {
            let part = match sched.queue.locate(&ps.key) {
                Some("active") => &mut q.active,
                Some("backoff") => &mut q.backoff,
                Some("unschedulable") => &mut q.unschedulable,
                Some("in-flight") => &mut q.in_flight,
                _ => continue,
            };
            *part -= 1;
        }
    }
    let summary = Summary {
        created: counts.created,
        bound: counts.bound,
        deleted: counts.deleted,
        terminating: counts.terminating,
        pending_active: (q.active + q.in_flight) as u64,
        pending_backoff: q.backoff as u64,
        pending_unschedulable: q.unschedulable as u64,
        pending_gated: q.gated as u64,
        pending_pod_group: (q.pod_group_pending + q.pod_group_incomplete) as u64,
        pending_other_scheduler: counts.unbound.saturating_sub(q.total() as u64),
        attempts: sched.stats.attempts.load(Ordering::Relaxed),
        batched: sched.batched_pods(),
        binds: counts.binds,
        pod_groups: group_counts(store),
    };
    let queued = q.total() as u64;
    if queued > counts.unbound || !summary.adds_up() {
        return Err(HarnessError::Run(format!(
            "{}/{}: pods or PodGroups unaccounted for: {summary:?}, unbound in store {}",
            p.tc.name, p.wl.name, counts.unbound
        )));
    }
    if summary.pod_groups.bound_unscheduled > 0 {
        return Err(HarnessError::Run(format!(
            "{}/{}: {} PodGroups never scheduled have bound members: {:?}",
            p.tc.name, p.wl.name, summary.pod_groups.bound_unscheduled, summary.pod_groups
        )));
    }
    Ok(summary)
}

/// The PodGroups at the end: the store's counters, the live groups by their
/// `PodGroupInitiallyScheduled` condition, and each group's bound members.
fn group_counts(store: &Store) -> GroupCounts {
    use crate::cluster::store::scheduling;
    let (created, deleted) = store.created_deleted(&scheduling::POD_GROUP);
    if created == 0 {
        return GroupCounts::default();
    }
    let mut bound: ahash::AHashMap<(String, String), u64> = ahash::AHashMap::new();
    for ps in store.pod_states() {
        if let (Some(g), Some(_), false) = (&ps.pod_group, &ps.node, ps.terminating) {
            *bound
                .entry((ps.key.split().0.to_string(), g.clone()))
                .or_default() += 1;
        }
    }
    let mut c = GroupCounts {
        created,
        deleted,
        ..GroupCounts::default()
    };
    for o in store.list_objects(&scheduling::POD_GROUP, None) {
        let Some(g) = scheduling::pod_group_of(&o) else {
            continue;
        };
        let key = (g.key.namespace.to_string_lossy(), g.key.name.to_string());
        let n = bound.get(&key).copied().unwrap_or(0);
        if g.scheduled {
            c.scheduled += 1;
        } else {
            c.pending += 1;
            c.bound_unscheduled += u64::from(n > 0);
        }
        if let tidegate_engine::api::PodGroupPolicy::Gang { min_count } = g.policy {
            c.below_quorum += u64::from(n > 0 && n < min_count as u64);
        }
    }
    c
}

/// Every pod at the end (`--dump-pods`).
fn dump_pods(store: &Store, sched: &Scheduler) -> Vec<PodDump> {
    store
        .pod_states()
        .into_iter()
        .map(|ps| {
            let (ns, name) = ps.key.split();
            let queue = match ps.node {
                None if !ps.terminating => sched.queue.locate(&ps.key),
                _ => None,
            };
            let rejectors = sched
                .queue
                .pending_info(&ps.key)
                .map(|q| q.unschedulable_plugins)
                .unwrap_or_default();
            PodDump {
                namespace: ns.to_string(),
                name: name.to_string(),
                status: if ps.terminating {
                    "Terminating"
                } else if ps.node.is_some() {
                    "Bound"
                } else if !ps.gates.is_empty() {
                    "SchedulingGated"
                } else {
                    "Pending"
                },
                node: ps.node,
                queue,
                gates: ps.gates,
                rejectors,
                message: ps.condition.map(|c| c.1),
                pod_group: ps.pod_group,
            }
        })
        .collect()
}
