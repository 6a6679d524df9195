//! Runs the workloads of a config: plans every selected workload first (so bad input is
//! reported before anything runs or is written), then executes the ops of each against a fresh
//! object store and scheduler, and collects the data items.

use crate::cluster::objects::{self, AnyObject};
use crate::cluster::store::{Store, StoreError};
use crate::error::{HarnessError, InputError};
use crate::output::report::{self, DataItem, ThresholdFailure};
use crate::run::pace::{ClockMode, Pace, sleep_until};
use crate::workload::config::{self, Config, Op, TestCase, Workload};
use crate::workload::manifest::{self, ObjectTemplate, PodSource};
use crate::workload::scheduler_config::{self, SchedulerConfigFile};
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tidegate_engine::api::validation::validate_pod_create;
use tidegate_engine::plugins::Registry;
use tidegate_engine::queue::clock::{Time, VirtualClock};
use tidegate_engine::{Scheduler, SchedulerConfig};

/// Feature gates that change tidegate's behaviour (the others are accepted and ignored).
pub const HONOURED_GATES: &[&str] = &["SchedulerQueueingHints", "SchedulerPopFromBackoffQ"];

/// How to run.
#[derive(Clone)]
pub struct RunOptions {
    /// `TestCase/Workload` or `TestCase` (all its workloads), as the Go benchmark path.
    pub workload: Option<String>,
    /// scheduler_perf label filter; `None` = `performance`, unless `workload` is given.
    pub label_filter: Option<String>,
    pub seed: u64,
    /// Filter/Score threads (the rayon pool size). `None`: the scheduler config's
    /// `parallelism` when it sets one, else the number of CPUs.
    pub threads: Option<usize>,
    /// Pin each Filter/Score worker to a CPU (see `SchedulerConfig::pin_threads`).
    pub pin_threads: bool,
    /// A KubeSchedulerConfiguration for test cases without `schedulerConfigPath`.
    pub scheduler_config: Option<PathBuf>,
    /// How long one wait (createPods, barrier) may take.
    pub timeout: Duration,
    /// Plugins available to profiles (in-tree plus the caller's).
    pub registry: Registry,
    /// A progress bar on stderr while each workload runs (only when stderr is a terminal).
    pub progress: bool,
    /// Keep every pod's final state in the result (`--dump-pods`).
    pub dump_pods: bool,
    /// A workload whose run fails (a timeout, say) is reported as failed and the next one
    /// runs; otherwise the first failure ends the whole run with its error.
    pub keep_going: bool,
    /// Wall time, or a virtual clock for deterministic runs (see [`crate::run::pace`]).
    pub clock: ClockMode,
    /// Controllers that run beside the scheduler in every workload (see [`crate::cluster::controller`]).
    pub controllers: Vec<Arc<dyn crate::cluster::controller::Controller>>,
    /// Keep each workload's final metrics for the Prometheus exposition (`--prometheus`).
    pub prometheus: bool,
    /// Sample the process with pprof during every collection window (`--flamegraph`).
    pub flamegraph: bool,
    /// Where `tidegate serve` reads the running workload's scheduler from.
    pub live: Option<Arc<LiveScheduler>>,
    /// Faults to inject (`--inject`, see [`crate::cluster::inject`]).
    pub inject: Option<Arc<crate::cluster::inject::Injection>>,
}

/// The scheduler of the workload running now, for `tidegate serve`'s `/metrics`.
#[derive(Default)]
pub struct LiveScheduler {
    current: parking_lot::Mutex<Option<(String, Arc<Scheduler>)>>,
}

impl LiveScheduler {
    /// `(workload, its metrics now)`, if a workload runs.
    pub fn snapshot(&self) -> Option<(String, crate::output::prom::Snapshot)> {
        let cur = self.current.lock().clone();
        cur.map(|(name, s)| (name, crate::output::prom::Snapshot::of(&s)))
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            workload: None,
            label_filter: None,
            seed: 0,
            threads: None,
            pin_threads: true,
            scheduler_config: None,
            timeout: Duration::from_secs(600),
            registry: Registry::in_tree(),
            progress: false,
            dump_pods: false,
            keep_going: false,
            clock: ClockMode::Real,
            controllers: Vec::new(),
            prometheus: false,
            live: None,
            flamegraph: false,
            inject: None,
        }
    }
}

/// Counts at the end of a workload. `created = bound + deleted + pending (all queues)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub created: u64,
    pub bound: u64,
    pub deleted: u64,
    /// Deleted while finalizers remain (the object stays, with a deletionTimestamp).
    pub terminating: u64,
    pub pending_active: u64,
    pub pending_backoff: u64,
    pub pending_unschedulable: u64,
    pub pending_gated: u64,
    /// Unbound pods that no profile of ours is responsible for (other schedulerName).
    pub pending_other_scheduler: u64,
    pub attempts: u64,
    pub binds: u64,
}

impl Summary {
    pub fn pending(&self) -> u64 {
        self.pending_active
            + self.pending_backoff
            + self.pending_unschedulable
            + self.pending_gated
            + self.pending_other_scheduler
    }
    pub fn adds_up(&self) -> bool {
        self.created == self.bound + self.deleted + self.terminating + self.pending()
    }
    pub fn as_pairs(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("created", self.created),
            ("bound", self.bound),
            ("deleted", self.deleted),
            ("terminating", self.terminating),
            ("pending_active", self.pending_active),
            ("pending_backoff", self.pending_backoff),
            ("pending_unschedulable", self.pending_unschedulable),
            ("pending_gated", self.pending_gated),
            ("pending_other_scheduler", self.pending_other_scheduler),
            ("attempts", self.attempts),
            ("binds", self.binds),
        ]
    }
}

/// What happened to one workload.
#[derive(Debug)]
pub struct WorkloadReport {
    pub test_case: String,
    pub workload: String,
    pub outcome: Outcome,
    /// Feature gates accepted and ignored (they change nothing in tidegate).
    pub ignored_gates: Vec<String>,
}

#[derive(Debug)]
pub enum Outcome {
    Ran(Box<RunResult>),
    Skipped(String),
    /// The run failed (a timeout, lost pods); only with [`RunOptions::keep_going`], which
    /// goes on with the next workload as upstream's subtests do.
    Failed(String),
}

#[derive(Debug)]
pub struct RunResult {
    /// Throughput and pending pods over time, per collection window.
    pub series: Vec<report::WindowSeries>,
    /// The CPU samples of the collection windows (with `RunOptions::flamegraph`).
    pub profile: Option<Profile>,
    /// The scheduler's metrics at the end (with `RunOptions::prometheus`).
    pub prometheus: Option<crate::output::prom::Snapshot>,
    pub items: Vec<DataItem>,
    pub summary: Summary,
    pub threshold_failures: Vec<ThresholdFailure>,
    pub placements: Vec<(String, String, String)>,
    pub wall: Duration,
    /// Every pod at the end (only with [`RunOptions::dump_pods`]).
    pub pods: Vec<PodDump>,
    /// The process's peak resident set during the workload, in MB (`VmHWM`, reset when the
    /// workload starts where the kernel allows it; None where /proc is not available).
    pub peak_rss_mb: Option<f64>,
}

/// One pod at the end of a workload, as `--dump-pods` writes it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct PodDump {
    pub namespace: String,
    pub name: String,
    /// As kubectl prints it: `Bound`, `SchedulingGated`, `Pending` or `Terminating`.
    pub status: &'static str,
    pub node: Option<String>,
    /// The queue holding a pending pod (`active`, `backoff`, `unschedulable`, `gated`, …).
    pub queue: Option<&'static str>,
    pub gates: Vec<String>,
    /// The plugins that rejected a pending pod in its last attempt.
    pub rejectors: Vec<&'static str>,
    /// The last PodScheduled=False message.
    pub message: Option<String>,
}

/// A FNV-1a hash of the sorted `(namespace, name, node)` list: equal placements give equal
/// digests on every machine and build.
pub fn placements_digest(placements: &[(String, String, String)]) -> u64 {
    let mut sorted: Vec<&(String, String, String)> = placements.iter().collect();
    sorted.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (ns, name, node) in sorted {
        for part in [
            ns.as_bytes(),
            b"/",
            name.as_bytes(),
            b"=",
            node.as_bytes(),
            b"\n",
        ] {
            for &b in part {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
    }
    h
}

/// A workload ready to run.
struct Plan<'c> {
    /// The scheduler configuration (schedulerConfigPath, or --scheduler-config).
    sched_config: Option<SchedulerConfigFile>,
    tc: &'c TestCase,
    wl: &'c Workload,
    ops: Vec<Op>,
    /// Per op index: the pod source of createPods ops.
    pods: BTreeMap<usize, PodSource>,
    /// Per op index: node/namespace/update/createAny templates.
    templates: BTreeMap<usize, ObjectTemplate>,
    /// Per op index: the objects a churn op creates, one per template.
    churn: BTreeMap<usize, Vec<AnyObject>>,
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
            if config::label_filter_matches(&filter, &labels) {
                out.push((tc, wl));
            }
        }
    }
    out
}

fn plan<'c>(
    cfg: &'c Config,
    tc: &'c TestCase,
    wl: &'c Workload,
    opts: &RunOptions,
) -> Result<Result<Plan<'c>, String>, InputError> {
    let ops = config::resolve_ops(cfg, tc, wl)?;
    if !ops.iter().any(|o| {
        matches!(
            o,
            Op::CreatePods {
                collect_metrics: true,
                ..
            } | Op::StartCollecting { .. }
        )
    }) && !ops.iter().any(|o| matches!(o, Op::Unsupported { .. }))
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
    let mut p = Plan {
        sched_config,
        tc,
        wl,
        ops: vec![],
        pods: BTreeMap::new(),
        templates: BTreeMap::new(),
        churn: BTreeMap::new(),
    };
    for (i, op) in ops.iter().enumerate() {
        match op {
            Op::Unsupported { opcode, reason } => {
                unsupported.get_or_insert_with(|| format!("{opcode}: {reason}"));
            }
            Op::CreatePods {
                template,
                template_params,
                nominated_node_name,
                ..
            } => {
                let src = PodSource::new(template.as_deref())?
                    .with_nominated_node_name(nominated_node_name.clone());
                let (pod, spec, rendered) = src.make(0, 1, template_params)?;
                let mut sample = (*pod).clone();
                if sample.metadata.name.is_none() {
                    sample.metadata.name = Some("sample".into());
                }
                if let Some(e) = validate_pod_create(&sample).into_iter().next() {
                    let file = src.path().unwrap_or(Path::new("<default pod>"));
                    let pos = rendered
                        .as_ref()
                        .map(|r| manifest::position_of(r, &e.field))
                        .or_else(|| {
                            ObjectTemplate::load(file)
                                .ok()
                                .and_then(|t| t.render(0, 1, template_params).ok())
                                .map(|r| manifest::position_of(&r, &e.field))
                        });
                    return Err(InputError::new(
                        file,
                        pos,
                        e.field.clone(),
                        e.to_string()
                            .trim_start_matches(&format!("{}: ", e.field))
                            .to_string(),
                    ));
                }
                if let Some(u) = spec.unsupported.first() {
                    let file = src
                        .path()
                        .map_or("<default pod>".into(), |p| p.display().to_string());
                    unsupported.get_or_insert_with(|| format!("{u}, used by {file}"));
                }
                p.pods.insert(i, src);
            }
            Op::CreateNodes {
                template: Some(path),
                template_params,
                ..
            } => {
                let t = ObjectTemplate::load(path)?;
                let r = t.render(0, 1, template_params)?;
                let n: core::Node = r.typed("Node")?;
                manifest::node(Some(&r), &n)?;
                p.templates.insert(i, t);
            }
            Op::CreateNamespaces {
                template: Some(path),
                ..
            } => {
                let t = ObjectTemplate::load(path)?;
                let r = t.render(0, 1, &Default::default())?;
                let _: core::Namespace = r.typed("Namespace")?;
                p.templates.insert(i, t);
            }
            Op::CreateAny {
                template,
                template_params,
                ..
            } => {
                let t = ObjectTemplate::load(template)?;
                let r = t.render(0, 1, template_params)?;
                if let Err(why) = objects::prepare(&r)? {
                    unsupported.get_or_insert_with(|| format!("createAny: {why}"));
                }
                p.templates.insert(i, t);
            }
            Op::Churn { templates, .. } => {
                let mut objs = vec![];
                for path in templates {
                    let t = ObjectTemplate::load(path)?;
                    let r = t.render(0, 1, &Default::default())?;
                    match objects::prepare(&r)? {
                        Ok(o) => objs.push(o),
                        Err(why) => {
                            unsupported.get_or_insert_with(|| format!("churn: {why}"));
                        }
                    }
                }
                p.churn.insert(i, objs);
            }
            Op::UpdateAny {
                template,
                template_params,
                ..
            } => {
                let t = ObjectTemplate::load(template)?;
                let r = t.render(0, 1, template_params)?;
                match r.kind() {
                    "Pod" => {
                        let _: core::Pod = r.typed("Pod")?;
                    }
                    "Node" => {
                        let n: core::Node = r.typed("Node")?;
                        manifest::node(Some(&r), &n)?;
                    }
                    other => {
                        unsupported.get_or_insert_with(|| {
                            format!(
                                "updateAny of kind {other:?} (Pod and Node updates are supported)"
                            )
                        });
                    }
                }
                p.templates.insert(i, t);
            }
            _ => {}
        }
    }
    p.ops = ops;
    Ok(match unsupported {
        Some(u) => Err(u),
        None => Ok(p),
    })
}

/// A `kB` field of `/proc/self/status` (`VmRSS:`, `VmHWM:`) in MB, or None where /proc is not
/// available.
fn proc_status_mb(field: &str) -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// The process's resident set in MB (`VmRSS`), or None where /proc is not available.
pub fn rss_mb() -> Option<f64> {
    proc_status_mb("VmRSS:")
}

/// The process's peak resident set in MB (`VmHWM`), or None where /proc is not available.
pub fn peak_rss_mb() -> Option<f64> {
    proc_status_mb("VmHWM:")
}

/// Resets the peak resident set to the current one (Linux: `5` into `/proc/self/clear_refs`),
/// so that each workload reports its own peak. Where that is refused the peak is the
/// process's so far.
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// CPU samples (pprof) of a workload's measured phases: stack → count.
pub struct Profile(pub pprof::Report);

impl std::fmt::Debug for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Profile({} stacks)", self.0.data.len())
    }
}

impl Profile {
    /// Adds `other`'s samples to these.
    pub fn merge(&mut self, other: Profile) {
        for (frames, n) in other.0.data {
            *self.0.data.entry(frames).or_insert(0) += n;
        }
    }
}

/// One collection window (`createPods` with `collectMetrics`, or `startCollectingMetrics`
/// to `stopCollectingMetrics`): the store's bind recorder, the memory sampler (every 500 ms,
/// as kube's memory collector; on a virtual clock, one sample at each end) and the start time
/// for SchedulingDuration.
struct Window {
    /// The `Name` label: `BenchmarkPerfScheduling/<testCase>/<workload>/<namespace or name>`.
    name: String,
    collector: usize,
    started: Time,
    stop: Arc<AtomicBool>,
    sampler: Option<JoinHandle<Sampled>>,
    first_sample: Option<f64>,
    first_pending: report::PendingSample,
    /// The CPU profiler, running while the window is open.
    profiler: Option<pprof::ProfilerGuard<'static>>,
}

/// What the window's sampler thread collected: RSS (MB) and pending pods, over time.
type Sampled = (Vec<(f64, f64)>, Vec<report::PendingSample>);

/// The pending-pods gauges now, `t` seconds into the window.
fn pending_now(sched: &Scheduler, t: f64) -> report::PendingSample {
    let c = sched.queue.counts();
    report::PendingSample {
        t,
        active: (c.active + c.in_flight) as u64,
        backoff: c.backoff as u64,
        unschedulable: c.unschedulable as u64,
        gated: c.gated as u64,
    }
}

impl Window {
    fn open(
        store: &Store,
        sched: &Arc<Scheduler>,
        pace: &Pace,
        name: String,
        namespaces: &[String],
        selector: &BTreeMap<String, String>,
        flamegraph: bool,
    ) -> Window {
        sched.metrics().reset_histograms();
        let collector = store.start_collecting(namespaces, selector);
        let started = pace.now();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let sampler = if pace.is_virtual() {
            None
        } else {
            let t0 = Instant::now();
            let sched = sched.clone();
            std::thread::Builder::new()
                .name("tidegate-memory".into())
                .spawn(move || {
                    let (mut samples, mut pending) = (vec![], vec![]);
                    loop {
                        let t = t0.elapsed().as_secs_f64();
                        if let Some(mb) = rss_mb() {
                            samples.push((t, mb));
                        }
                        pending.push(pending_now(&sched, t));
                        if flag.load(Ordering::Relaxed) {
                            return (samples, pending);
                        }
                        sleep_until(Instant::now() + Duration::from_millis(500), &flag);
                    }
                })
                .ok()
        };
        Window {
            name,
            collector,
            started,
            stop,
            sampler,
            first_sample: if pace.is_virtual() { rss_mb() } else { None },
            first_pending: pending_now(sched, 0.0),
            // 997 Hz asked (a prime, off the timer ticks); the kernel's tick caps what arrives
            // (250 Hz on the 2-vCPU VM). Samples inside libc are kept (memcpy/memset are work).
            profiler: flamegraph
                .then(|| {
                    pprof::ProfilerGuardBuilder::default()
                        .frequency(997)
                        .build()
                        .ok()
                })
                .flatten(),
        }
    }

    /// Stops the collectors and returns their data items (and the window's CPU samples).
    fn close(
        self,
        store: &Store,
        sched: &Scheduler,
        pace: &Pace,
        profile: &mut Option<Profile>,
        series: &mut Vec<report::WindowSeries>,
    ) -> Vec<DataItem> {
        if let Some(report) = self.profiler.as_ref().and_then(|g| g.report().build().ok()) {
            match profile {
                Some(p) => p.merge(Profile(report)),
                None => *profile = Some(Profile(report)),
            }
        }
        let (binds, dur) = store.stop_collecting(self.collector);
        let elapsed = pace.now().saturating_sub(self.started);
        self.stop.store(true, Ordering::Relaxed);
        let (mut samples, mut pending) =
            self.sampler.and_then(|h| h.join().ok()).unwrap_or_default();
        if let Some(first) = self.first_sample {
            samples.push((0.0, first));
            if let Some(last) = rss_mb() {
                samples.push((elapsed.as_secs_f64(), last));
            }
        }
        if pending.is_empty() {
            pending = vec![
                self.first_pending,
                pending_now(sched, elapsed.as_secs_f64()),
            ];
        }
        let mut sorted = binds.clone();
        sorted.sort_unstable();
        let span = match (sorted.first(), sorted.last()) {
            (Some(a), Some(b)) => *b - *a,
            _ => dur,
        };
        series.push(report::WindowSeries {
            name: self.name.clone(),
            throughput: report::throughput_series(&sorted, dur, report::sampling_interval(span)),
            pending,
        });
        let mut items = vec![report::throughput_item(&binds, dur, &self.name)];
        items.extend(report::histogram_items(sched.metrics(), &self.name));
        items.extend(report::counter_items(sched.metrics(), &self.name));
        items.extend(report::memory_items(&samples, &self.name));
        items.push(report::scheduling_duration_item(elapsed, &self.name));
        items
    }
}

const OVERLAPPING: &str = "metrics collection is overlapping: a collector was started before the previous one was stopped";

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

/// Runs every selected workload. Bad input anywhere aborts before anything runs.
pub fn run_config(cfg: &Config, opts: &RunOptions) -> Result<Vec<WorkloadReport>, HarnessError> {
    let selected = select(cfg, opts);
    let mut plans = vec![];
    for (tc, wl) in &selected {
        plans.push((tc, wl, plan(cfg, tc, wl, opts)?));
    }
    let mut reports = vec![];
    for (tc, wl, p) in plans {
        let mut gates: BTreeMap<String, bool> = tc.feature_gates.clone();
        gates.extend(wl.feature_gates.clone());
        let ignored_gates = gates
            .iter()
            .filter(|(k, _)| !HONOURED_GATES.contains(&k.as_str()))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let outcome = match p {
            Err(reason) => Outcome::Skipped(reason),
            Ok(p) => match execute(cfg, &p, opts) {
                Ok(r) => Outcome::Ran(Box::new(r)),
                Err(HarnessError::Run(msg)) if opts.keep_going => Outcome::Failed(msg),
                Err(e) => return Err(e),
            },
        };
        reports.push(WorkloadReport {
            test_case: tc.name.clone(),
            workload: wl.name.clone(),
            outcome,
            ignored_gates,
        });
    }
    Ok(reports)
}

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
    let mut gates = p.tc.feature_gates.clone();
    gates.extend(p.wl.feature_gates.clone());
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut sched_cfg = SchedulerConfig {
        parallelism: opts.threads.unwrap_or(cpus).max(1),
        seed: opts.seed,
        deterministic: opts.clock.is_virtual(),
        pin_threads: opts.pin_threads,
        ..SchedulerConfig::default()
    };
    if let Some(sc) = &p.sched_config {
        let r = &sc.resolved;
        sched_cfg.profiles = r.profiles.clone();
        sched_cfg.percentage_of_nodes_to_score = r.percentage_of_nodes_to_score;
        sched_cfg.queue = r.queue.clone();
        if opts.threads.is_none() && sc.explicit_parallelism {
            sched_cfg.parallelism = r.parallelism;
        }
    }
    if let Some(&on) = gates.get("SchedulerQueueingHints") {
        sched_cfg.queue.queueing_hints = on;
    }
    if let Some(&on) = gates.get("SchedulerPopFromBackoffQ") {
        sched_cfg.queue.pop_from_backoff = on;
    }
    let queue_clock = vclock
        .clone()
        .map(|c| c as Arc<dyn tidegate_engine::queue::clock::Clock>);
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
    for c in &opts.controllers {
        c.start(&store);
        store.add_controller(c.clone());
    }
    if let Some(live) = &opts.live {
        *live.current.lock() = Some((format!("{}/{}", p.tc.name, p.wl.name), sched.clone()));
    }
    let progress = crate::run::progress::Progress::start(
        opts.progress,
        &format!("{}/{}", p.tc.name, p.wl.name),
        p.ops.len(),
        &store,
    );
    let mut profile: Option<Profile> = None;
    let mut series: Vec<report::WindowSeries> = Vec::new();
    let result = match (opts.clock, vclock) {
        (ClockMode::Virtual { attempt_cost }, Some(clock)) => {
            // One thread drives everything, on a worker of the Filter/Score pool as the
            // scheduling loop runs in real time.
            let mut pace = Pace::virtual_time(clock, sched.clone(), attempt_cost);
            let result = sched.in_pool(|| {
                run_ops(
                    cfg,
                    p,
                    opts,
                    &store,
                    &sched,
                    &mut pace,
                    &progress,
                    &mut profile,
                    &mut series,
                )
            });
            pace.finish();
            result
        }
        _ => {
            let handle = sched.run();
            let mut pace = Pace::real();
            let result = run_ops(
                cfg,
                p,
                opts,
                &store,
                &sched,
                &mut pace,
                &progress,
                &mut profile,
                &mut series,
            );
            pace.finish();
            sched.stop();
            let _ = handle.join();
            result
        }
    };
    progress.finish();
    store.detach();
    let mut items = result?;
    let gauges = sched.gauges();

    let counts = store.counts();
    let q = sched.queue.counts();
    let summary = Summary {
        created: counts.created,
        bound: counts.bound,
        deleted: counts.deleted,
        terminating: counts.terminating,
        pending_active: (q.active + q.in_flight) as u64,
        pending_backoff: q.backoff as u64,
        pending_unschedulable: q.unschedulable as u64,
        pending_gated: q.gated as u64,
        pending_other_scheduler: counts.unbound.saturating_sub(
            (q.active + q.in_flight + q.backoff + q.unschedulable + q.gated) as u64,
        ),
        attempts: sched.stats.attempts.load(Ordering::Relaxed),
        binds: counts.binds,
    };
    let queued = (q.active + q.in_flight + q.backoff + q.unschedulable + q.gated) as u64;
    if queued > counts.unbound || !summary.adds_up() {
        return Err(HarnessError::Run(format!(
            "{}/{}: pods unaccounted for: {summary:?}, unbound in store {}",
            p.tc.name, p.wl.name, counts.unbound
        )));
    }
    let name = format!("BenchmarkPerfScheduling/{}/{}", p.tc.name, p.wl.name);
    items.push(report::summary_item(&name, &summary.as_pairs()));
    let peak_rss_mb = peak_rss_mb();
    if let Some(mb) = peak_rss_mb {
        items.push(report::peak_rss_item(mb, summary.created, &name));
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
                }
            })
            .collect()
    } else {
        vec![]
    };
    let prometheus = opts
        .prometheus
        .then(|| crate::output::prom::Snapshot::of(&sched));
    if let Some(live) = &opts.live {
        *live.current.lock() = None;
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
    })
}

/// Puts the `FaultInjection` plugin into every profile, at the extension points its faults
/// need: appended (it runs after the profile's own plugins), except at Bind, where it runs
/// first so that it can fail a binding before DefaultBinder makes it.
fn add_fault_plugin(
    cfg: &mut SchedulerConfig,
    registry: &mut Registry,
    inj: &Arc<crate::cluster::inject::Injection>,
    seed: u64,
) -> Result<(), HarnessError> {
    use crate::cluster::inject::{FaultInjection, NAME, Point};
    let for_plugin = inj.clone();
    registry.register(NAME, move |_| {
        Arc::new(FaultInjection::new(for_plugin.clone(), seed))
    });
    for (i, prof) in cfg.profiles.iter_mut().enumerate() {
        // The bind plugins the profile runs now, to run after ours.
        let binders: Vec<&'static str> = {
            let trial = tidegate_engine::framework::Framework::new(
                i,
                prof,
                registry,
                &crate::workload::scheduler_config::trial_context(),
                Arc::new(tidegate_engine::metrics::Metrics::new()),
            )
            .map_err(|e| HarnessError::Run(e.to_string()))?;
            trial
                .plugin_names()
                .into_iter()
                .find(|(p, _)| *p == "bind")
                .map(|(_, v)| v)
                .unwrap_or_default()
        };
        for point in inj.plugin_points() {
            let pl = &mut prof.plugins;
            match point {
                Point::PreFilter => pl.pre_filter.enabled.push((NAME.into(), 0)),
                Point::Filter => pl.filter.enabled.push((NAME.into(), 0)),
                Point::Score => pl.score.enabled.push((NAME.into(), 1)),
                Point::Reserve => pl.reserve.enabled.push((NAME.into(), 0)),
                Point::Permit => pl.permit.enabled.push((NAME.into(), 0)),
                Point::Bind => {
                    pl.bind.disabled = vec!["*".into()];
                    pl.bind.enabled = std::iter::once(NAME)
                        .chain(binders.iter().copied())
                        .map(|n| (n.to_string(), 0))
                        .collect();
                }
            }
        }
    }
    Ok(())
}

/// `--inject node-updates`: every 10 ms, the share of the rate's node label updates, round
/// robin over the nodes (their names refreshed every second), until the workload ends.
fn node_storm(store: Arc<Store>, per_second: f64) -> crate::run::pace::Step {
    const TICK: Duration = Duration::from_millis(10);
    let per_tick = per_second * TICK.as_secs_f64();
    let mut owed = 0.0f64;
    let mut names: Vec<String> = Vec::new();
    let mut next = 0usize;
    let mut tick = 0u64;
    let mut updates = 0u64;
    Box::new(move |now: Time| {
        if tick.is_multiple_of(100) {
            names = store.node_names();
        }
        tick += 1;
        owed += per_tick;
        while owed >= 1.0 && !names.is_empty() {
            owed -= 1.0;
            let name = &names[next % names.len()];
            next += 1;
            updates += 1;
            store.touch_node(name, "tidegate.io/event-storm", &updates.to_string());
        }
        if names.is_empty() {
            owed = owed.min(1.0);
        }
        Some(now + TICK)
    })
}

#[allow(clippy::too_many_arguments)]
fn run_ops(
    cfg: &Config,
    p: &Plan,
    opts: &RunOptions,
    store: &Arc<Store>,
    sched: &Arc<Scheduler>,
    pace: &mut Pace,
    progress: &crate::run::progress::Progress,
    profile: &mut Option<Profile>,
    series: &mut Vec<report::WindowSeries>,
) -> Result<Vec<DataItem>, HarnessError> {
    let mut items = vec![];
    let mut pending_ns: BTreeMap<String, usize> = BTreeMap::new();
    let mut window: Option<Window> = None;
    let field = |i: usize| format!("{}.workloadTemplate[{i}]", p.tc.name);
    let window_name =
        |last: &str| format!("BenchmarkPerfScheduling/{}/{}/{last}", p.tc.name, p.wl.name);
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
    for (i, op) in p.ops.iter().enumerate() {
        progress.op(i, op.opcode());
        match op {
            Op::CreateNodes {
                count,
                template,
                template_params,
                strategy,
            } => {
                let t = p.templates.get(&i);
                for j in 0..*count {
                    let (mut n, r) = match (template, t) {
                        (Some(_), Some(t)) => {
                            let r = t.render(j, *count, template_params)?;
                            (r.typed::<core::Node>("Node")?, Some(r))
                        }
                        _ => (manifest::default_node(i), None),
                    };
                    match strategy {
                        Some(config::NodeStrategy::Label { key, values }) if !values.is_empty() => {
                            let labels = n.metadata.labels.get_or_insert_with(Default::default);
                            labels.insert(key.clone(), values[j % values.len()].clone());
                        }
                        Some(config::NodeStrategy::Unique { key }) => {
                            let labels = n.metadata.labels.get_or_insert_with(Default::default);
                            labels.insert(key.clone(), format!("node-{j}"));
                        }
                        Some(config::NodeStrategy::Allocatable { resources }) => {
                            let status = n.status.get_or_insert_with(Default::default);
                            let capacity = status.capacity.clone().unwrap_or_default();
                            let alloc = status.allocatable.get_or_insert(capacity);
                            for (k, v) in resources {
                                alloc.insert(k.clone(), Quantity(v.clone()));
                            }
                        }
                        _ => {}
                    }
                    let converted = manifest::node(r.as_ref(), &n)?;
                    store
                        .create_prepared_node(n, converted)
                        .map_err(|e| e.into_input(&cfg.path, &field(i)))?;
                }
            }
            Op::CreateNamespaces {
                prefix,
                count,
                template,
            } => {
                for j in 0..*count {
                    let mut ns: core::Namespace = match (template, p.templates.get(&i)) {
                        (Some(_), Some(t)) => t
                            .render(j, *count, &Default::default())?
                            .typed("Namespace")?,
                        _ => core::Namespace::default(),
                    };
                    ns.metadata.name = Some(format!("{prefix}-{j}"));
                    store
                        .create_namespace(ns)
                        .map_err(|e| e.into_input(&cfg.path, &field(i)))?;
                }
            }
            Op::CreatePods {
                count,
                namespace,
                template_params,
                collect_metrics,
                skip_wait,
                steady,
                signature_batch,
                ..
            } => {
                let src = p.pods.get(&i).expect("planned");
                // Upstream creates the namespace first (`createNamespaceIfNotPresent`), so a
                // createPods of 0 pods still makes it known to a later barrier.
                store.ensure_namespace_exists(namespace);
                let before = store.ns_stats(namespace).bound;
                // Steady state watches the namespace before its first pod exists.
                let watch = steady.map(|_| store.watch_scheduled(namespace));
                if *collect_metrics {
                    if window.is_some() {
                        return Err(HarnessError::Run(format!("op {i}: {OVERLAPPING}")));
                    }
                    window = Some(Window::open(
                        store,
                        sched,
                        pace,
                        window_name(namespace),
                        std::slice::from_ref(namespace),
                        &BTreeMap::new(),
                        opts.flamegraph,
                    ));
                }
                for j in 0..*count {
                    let (mut pod, spec, _) = src.make(j, *count, template_params)?;
                    if let Some(b) = signature_batch {
                        let mut p = (*pod).clone();
                        p.metadata
                            .labels
                            .get_or_insert_with(Default::default)
                            .insert("signature".into(), format!("signature-label-{}", j / b));
                        pod = Arc::new(p);
                    }
                    store.create_pod(&pod, namespace, spec).map_err(|e| {
                        e.into_input(src.path().unwrap_or(Path::new("<default pod>")), "")
                    })?;
                }
                if let (Some(d), Some(rx)) = (steady, watch) {
                    steady_state(
                        store,
                        pace,
                        src,
                        namespace,
                        *count,
                        template_params,
                        *d,
                        &rx,
                    )?;
                } else if *skip_wait {
                    *pending_ns.entry(namespace.clone()).or_default() += count;
                } else {
                    let want = before + count;
                    let all = BTreeMap::new();
                    if !pace.wait_ns(store, namespace, &all, opts.timeout, |s| s.bound >= want) {
                        return Err(timeout_error(store, sched, namespace, want, opts.timeout));
                    }
                }
                if *collect_metrics && let Some(w) = window.take() {
                    items.extend(w.close(store, sched, pace, profile, series));
                }
            }
            Op::Barrier {
                namespaces,
                label_selector,
                attempted,
            } => {
                let targets: Vec<String> = if namespaces.is_empty() {
                    pending_ns.keys().cloned().collect()
                } else {
                    // Upstream's runBarrierOp: a namespace no op has created is an error.
                    let known = store.namespaces();
                    if let Some(unknown) = namespaces.iter().find(|n| !known.contains(n)) {
                        return Err(HarnessError::Run(format!(
                            "op {i}: barrier: unknown namespace {unknown}"
                        )));
                    }
                    namespaces.clone()
                };
                for ns in targets {
                    let want = pending_ns.get(&ns).copied().unwrap_or(0);
                    let ok = pace.wait_ns(store, &ns, label_selector, opts.timeout, |s| {
                        s.bound + if *attempted { s.attempted_unbound } else { 0 } >= want
                    });
                    if !ok {
                        return Err(timeout_error(store, sched, &ns, want, opts.timeout));
                    }
                    // A Scheduled barrier settles the namespace's count; an Attempted one
                    // leaves it for a later Scheduled barrier (as upstream's runBarrierOp).
                    if !*attempted {
                        pending_ns.remove(&ns);
                    }
                }
            }
            Op::DeletePods {
                namespace,
                label_selector,
                per_second,
                skip_wait,
            } => {
                let keys = store.list_pods(namespace, label_selector);
                let rate = *per_second;
                let start = pace.now();
                // The n-th delete is due n / rate seconds after the first (all at once at
                // rate 0).
                let due = move |n: usize| {
                    if rate > 0.0 {
                        start + Duration::from_secs_f64(n as f64 / rate)
                    } else {
                        start
                    }
                };
                if *skip_wait {
                    let st = store.clone();
                    let mut n = 0;
                    pace.spawn(
                        start,
                        Box::new(move |_| {
                            st.delete_pod(keys.get(n)?);
                            n += 1;
                            (n < keys.len()).then(|| due(n))
                        }),
                    );
                } else {
                    for (n, k) in keys.iter().enumerate() {
                        pace.sleep_until(due(n));
                        store.delete_pod(k);
                    }
                }
            }
            Op::UpdateAny {
                namespace,
                count,
                per_second,
                template_params,
                resize,
                ..
            } => {
                let t = p.templates.get(&i).expect("planned");
                let start = pace.now();
                for j in 0..*count {
                    if *per_second > 0.0 {
                        pace.sleep_until(start + Duration::from_secs_f64(j as f64 / per_second));
                    }
                    let r = t.render(j, *count, template_params)?;
                    let result = if r.kind() == "Node" {
                        let n: core::Node = r.typed("Node")?;
                        let converted = manifest::node(Some(&r), &n)?;
                        store.update_node(n, converted)
                    } else {
                        let pod: core::Pod = r.typed("Pod")?;
                        let ns = namespace
                            .clone()
                            .or_else(|| pod.metadata.namespace.clone())
                            .unwrap_or_else(|| "default".into());
                        if *resize {
                            store.resize_pod(&pod, &ns)
                        } else {
                            store.update_pod(&pod, &ns)
                        }
                    };
                    result.map_err(|e| match e {
                        // The first rejected field, where the template writes it.
                        StoreError::InvalidFields { kind, name, errs } if !errs.is_empty() => {
                            let first = &errs[0];
                            let mut msg = first.to_string();
                            msg.drain(..first.field.len() + 2);
                            msg.push_str(&format!(" (updating {kind} {name:?}"));
                            if errs.len() > 1 {
                                msg.push_str(&format!("; {} more errors", errs.len() - 1));
                            }
                            msg.push(')');
                            r.error_at(&first.field, msg)
                        }
                        e => InputError::new(
                            &t.path,
                            Some(manifest::object_pos(&r)),
                            format!("updateAny[{j}]"),
                            e.to_string(),
                        ),
                    })?;
                }
            }
            Op::Sleep { duration } => {
                let until = pace.now() + *duration;
                pace.sleep_until(until);
            }
            Op::StartCollecting {
                name,
                namespaces,
                label_selector,
            } => {
                if window.is_some() {
                    return Err(HarnessError::Run(format!("op {i}: {OVERLAPPING}")));
                }
                window = Some(Window::open(
                    store,
                    sched,
                    pace,
                    window_name(name),
                    namespaces,
                    label_selector,
                    opts.flamegraph,
                ));
            }
            Op::CreateAny {
                namespace,
                count,
                template_params,
                ..
            } => {
                let t = p.templates.get(&i).expect("planned");
                for j in 0..*count {
                    let r = t.render(j, *count, template_params)?;
                    let obj = match objects::prepare(&r)? {
                        Ok(o) => o,
                        Err(why) => return Err(HarnessError::Unsupported(why)),
                    };
                    let ns = namespace
                        .clone()
                        .or_else(|| {
                            r.json
                                .pointer("/metadata/namespace")
                                .and_then(|v| v.as_str())
                                .map(str::to_string)
                        })
                        .unwrap_or_else(|| "default".into());
                    store.create_any(&obj, &ns).map_err(|e| {
                        InputError::new(
                            &t.path,
                            Some(manifest::object_pos(&r)),
                            format!("createAny[{j}]"),
                            e.to_string(),
                        )
                    })?;
                }
            }
            Op::Churn {
                recreate,
                number,
                interval,
                namespace,
                ..
            } => {
                let objs = p.churn.get(&i).cloned().unwrap_or_default();
                store.ensure_namespace_exists(namespace);
                let first = pace.now() + *interval;
                pace.spawn(
                    first,
                    churn(
                        store.clone(),
                        objs,
                        *recreate,
                        *number,
                        *interval,
                        namespace,
                    ),
                );
            }
            Op::StopCollecting => {
                let w = window.take().ok_or_else(|| {
                    HarnessError::Run(format!(
                        "op {i}: missing startCollectingMetrics operation before stopping"
                    ))
                })?;
                items.extend(w.close(store, sched, pace, profile, series));
            }
            Op::Unsupported { .. } => unreachable!("unsupported workloads are not executed"),
        }
    }
    Ok(items)
}

/// createPods' steady state (upstream's createPodsSteadily): for `duration`, every pod of
/// the namespace seen scheduled is deleted and a new one created, so the scheduler's queue
/// stays at about `count` pods and the cluster near its starting condition. An error if no
/// pod at all got scheduled in that time.
#[allow(clippy::too_many_arguments)]
fn steady_state(
    store: &Store,
    pace: &mut Pace,
    src: &PodSource,
    namespace: &str,
    count: usize,
    params: &serde_json::Map<String, serde_json::Value>,
    duration: Duration,
    scheduled: &crossbeam::channel::Receiver<tidegate_engine::api::PodKey>,
) -> Result<(), HarnessError> {
    let mut made = count;
    let mut seen = 0usize;
    let mut replace = |key: tidegate_engine::api::PodKey| -> Result<(), HarnessError> {
        seen += 1;
        store.delete_pod(&key);
        let (pod, spec, _) = src.make(made, made + 1, params)?;
        made += 1;
        store
            .create_pod(&pod, namespace, spec)
            .map_err(|e| e.into_input(src.path().unwrap_or(Path::new("<default pod>")), ""))?;
        Ok(())
    };
    if pace.is_virtual() {
        let deadline = pace.now() + duration;
        let mut failed = None;
        pace.run_virtual_until(deadline, &mut || {
            while let Ok(key) = scheduled.try_recv() {
                if let Err(e) = replace(key) {
                    failed = Some(e);
                    return true;
                }
            }
            false
        });
        if let Some(e) = failed {
            return Err(e);
        }
    } else {
        let deadline = Instant::now() + duration;
        loop {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            if let Ok(key) = scheduled.recv_timeout(deadline - now) {
                replace(key)?;
            }
        }
    }
    if seen == 0 {
        return Err(HarnessError::Run(format!(
            "steady state in namespace {namespace}: no pod at all got scheduled in {duration:?}, either because of a problem or because the interval was too small"
        )));
    }
    Ok(())
}

/// The churn op's step (upstream's runChurnOp): every `interval`, for each template, create
/// an object (create mode, for `number` ticks, 0 = until the workload ends), or in recreate
/// mode delete the object in the template's current slot of `number` if there is one, else
/// create one there. Failures are skipped, as upstream logs and goes on.
fn churn(
    store: Arc<Store>,
    objs: Vec<AnyObject>,
    recreate: bool,
    number: usize,
    interval: Duration,
    namespace: &str,
) -> crate::run::pace::Step {
    let namespace = namespace.to_string();
    let mut slots: Vec<Vec<Option<String>>> = vec![vec![None; number.max(1)]; objs.len()];
    let mut tick: usize = 0;
    Box::new(move |now: Time| {
        tick += 1;
        for (o, slot) in objs.iter().zip(slots.iter_mut()) {
            if recreate {
                let s = &mut slot[(tick - 1) % number.max(1)];
                match s.take() {
                    Some(name) => {
                        store.delete_any(o.kind(), &namespace, &name);
                    }
                    None => *s = store.create_any(o, &namespace).ok(),
                }
            } else {
                let _ = store.create_any(o, &namespace);
            }
        }
        if !recreate && number > 0 && tick >= number {
            return None;
        }
        Some(now + interval)
    })
}

fn timeout_error(
    store: &Store,
    sched: &Scheduler,
    ns: &str,
    want: usize,
    timeout: Duration,
) -> HarnessError {
    let s = store.ns_stats(ns);
    let q = sched.queue.counts();
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    // The rejector plugins of each pending pod, summarised (kube's UnschedulablePlugins; a
    // pod that failed with an error has none).
    let mut rejectors: BTreeMap<String, usize> = BTreeMap::new();
    for (key, cond) in store.unbound_pods() {
        let reason = cond.map_or("not attempted yet".to_string(), |(r, m)| {
            format!("{r}: {m}")
        });
        *reasons.entry(reason).or_default() += 1;
        if let Some(info) = sched.queue.pending_info(&key)
            && info.attempts > 0
        {
            let by = if info.unschedulable_plugins.is_empty() {
                "(an error, no plugin)".to_string()
            } else {
                info.unschedulable_plugins.join("+")
            };
            *rejectors.entry(by).or_default() += 1;
        }
    }
    let top = |m: BTreeMap<String, usize>| -> String {
        let mut v: Vec<(String, usize)> = m.into_iter().collect();
        v.sort_by_key(|t| std::cmp::Reverse(t.1));
        v.iter()
            .take(5)
            .map(|(r, n)| format!("{n} × {r}"))
            .collect::<Vec<_>>()
            .join("; ")
    };
    HarnessError::Run(format!(
        "timed out after {timeout:?} waiting for {want} pods in namespace {ns} (bound {}, attempted {}; {} scheduling attempts in all); queues: active {}, backoff {}, unschedulable {}, gated {}, in flight {}; rejected by: {}; pending because: {}",
        s.bound,
        s.attempted_unbound,
        sched.stats.attempts.load(Ordering::Relaxed),
        q.active,
        q.backoff,
        q.unschedulable,
        q.gated,
        q.in_flight,
        top(rejectors),
        top(reasons),
    ))
}
