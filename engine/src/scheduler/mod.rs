//! The scheduler: the loop that takes pods from the queue and runs a scheduling cycle on each
//! (kube's `pkg/scheduler/scheduler.go`), split along kube's own files:
//!
//! - [`eventhandlers`]: how the cluster (an informer, or the harness's
//!   object store) tells the scheduler what changed (`eventhandlers.go`);
//! - `schedule_one`: pop → snapshot → PreFilter/Filter (PostFilter on a fit error) → assume →
//!   Reserve/Permit (`scheduleOne`, `schedulingCycle`, `schedulePod` in `schedule_one.go`),
//!   each step handed one `cycle::CycleContext` (framework, cycle state, pod, nominator);
//! - `failure`: the failure handler and the fit error (`handleSchedulingFailure`,
//!   `FitError`), shared by both cycles;
//! - `score`: Score, NormalizeScore, weights and the host choice (`prioritizeNodes`,
//!   `selectHost` in `schedule_one.go`);
//! - [`evaluate`]: a pod judged against every node without scheduling it (the differential
//!   oracle's question: was another scheduler's choice feasible and top-scored here?);
//! - `binding`: the binding cycle on binder threads (`bindingCycle`), and the queue of
//!   binding tasks between the two.

use crate::api::{Pod, Sym};
use crate::cache::Cache;
use crate::clock::{Clock, RealClock};
use crate::framework::Snapshot;
use crate::framework::WaitingPods;
use crate::framework::interface::ClusterClient;
use crate::framework::metrics::Metrics;
use crate::framework::node_memo::MemoCounts;
use crate::framework::node_memo::MemoKeys;
use crate::framework::runtime::{Framework, FrameworkError, Profile};
use crate::framework::warm_pool::WarmPool;
use crate::framework::{PluginContext, Registry};
use crate::queue::{QueueConfig, QueuedEntity, SchedulingQueue};
use ahash::AHashMap;
use parking_lot::Mutex;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;

pub(crate) mod batch;
mod binding;
mod cycle;
pub(crate) mod evaluate;
mod evaluate_group;
pub(crate) mod eventhandlers;
mod failure;
mod resize;
pub use resize::DeferredEvaluation;
mod pod_group_handle;
mod schedule_one;
mod schedule_one_composite;
mod schedule_one_podgroup;
mod score;
mod window;

use binding::BindQueue;
pub use evaluate::{Evaluation, PreemptionEvaluation};
use score::ScoreScratch;

/// Below this many nodes to evaluate, Filter and Score run inline on the scheduling thread.
/// Measured on the 2-vCPU VM (perf-data/HISTORY.md, 2026-11-23): fanning out the default
/// 500 of 5,000 nodes on 2 threads was about 2 µs slower per cycle than inline.
pub(crate) const PARALLEL_MIN_NODES: usize = 1000;

/// Scheduler-wide configuration (the parts of KubeSchedulerConfiguration this build honours).
#[derive(Clone, Debug)]
pub struct SchedulerConfig {
    pub profiles: Vec<Profile>,
    /// Global `percentageOfNodesToScore` (None/0 = adaptive).
    pub percentage_of_nodes_to_score: Option<u32>,
    /// Threads for Filter/Score (the rayon pool size); 1 runs everything inline.
    pub parallelism: usize,
    /// Seed for host selection among equal scores.
    pub seed: u64,
    pub queue: QueueConfig,
    /// The feature gates the engine reads (kube v1.37.2's defaults unless a workload sets them).
    pub features: crate::features::Features,
    /// Threads that run binding cycles (WaitOnPermit, PreBind, Bind, PostBind) once
    /// [`Scheduler::run`] starts; until then binding runs inline.
    pub binding_workers: usize,
    /// Decisions independent of the thread count and of timing, for runs driven by a
    /// virtual clock through [`Scheduler::try_schedule_one`]: Filter's parallel pass returns
    /// what the sequential pass would, and Permit timeouts wait for [`Scheduler::next_timer`]
    /// instead of a timer thread.
    pub deterministic: bool,
    /// Whether the Filter/Score pool's worker `i` runs pinned to CPU `i mod CPUs`
    /// ([`PinThreads`]; by default only when the pool leaves a CPU free).
    pub pin_threads: PinThreads,
    /// kube's `InPlacePodVerticalScalingSchedulerPreemption` (alpha in v1.37, off by
    /// default): assigned pods whose resize is Deferred re-enter the queue and may preempt
    /// lower-priority pods on their own node (`scheduler/resize.rs`).
    pub resize_preemption: bool,
    /// kube's `OpportunisticBatching` (beta, on by default since v1.35): consecutive pods
    /// with the same signature reuse the first one's Filter and Score results
    /// (`scheduler/batch.rs`). It changes nothing for a profile that signs no pod, such as
    /// kube's default profile (PodTopologySpread's system default constraints).
    pub opportunistic_batching: bool,
    /// kube's `NominatedNodeNameForExpectation` (beta, on by default since v1.35): the
    /// binding cycle writes the pod's node as its `status.nominatedNodeName` before PreBind
    /// when a PreBind plugin has work (PreBindPreFlight) or the pod waits at Permit.
    pub nominated_node_name_for_expectation: bool,
    /// Keep node-local plugins' Filter passes and raw scores per node between cycles
    /// (`framework/node_memo.rs`): the same decisions, found without judging unchanged nodes
    /// again for a pod like an earlier one. Off only to measure or to check it.
    pub node_memo: bool,
    /// With the node memo: the window path (`scheduler/window.rs`), which answers a cycle
    /// from the memo's chunk summaries where they hold instead of visiting each node of the
    /// window. The same decisions; off only to measure or to check it.
    pub memo_window: bool,
}

/// Whether the Filter/Score pool's workers are pinned, worker `i` to CPU `i mod CPUs`.
///
/// Pinned, the kernel cannot put two busy workers on one CPU for milliseconds after a
/// wake-up, and the node data each worker judges stays in its own core's cache from one
/// cycle to the next. But the scheduling loop itself runs on worker 0: when the pool takes
/// every CPU, a pinned loop cannot move off a CPU that the binder, the API's side (the
/// harness's pod creator) or the kernel wants, and it waits there. On the 2-vCPU VM at
/// `--threads 2`, unpinned runs were a fifth to a quarter faster on three of six workloads
/// and within the noise on the rest; pinning was never ahead beyond the noise
/// (`perf-data/results/pinning/README.md`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PinThreads {
    /// Pin only when the pool leaves at least one CPU free (`parallelism < CPUs`).
    #[default]
    Auto,
    /// Always pin.
    Always,
    /// Never pin.
    Never,
}

impl PinThreads {
    /// Whether a pool of `parallelism` workers on a machine of `cpus` CPUs is pinned.
    pub fn pins(self, parallelism: usize, cpus: usize) -> bool {
        match self {
            PinThreads::Always => true,
            PinThreads::Never => false,
            PinThreads::Auto => parallelism < cpus,
        }
    }
}

/// The CPUs this process may run on (0 when the platform does not say).
fn core_affinity_count() -> usize {
    core_affinity::get_core_ids().map_or(0, |ids| ids.len())
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig {
            profiles: vec![Profile::default_profile()],
            percentage_of_nodes_to_score: None,
            parallelism: std::thread::available_parallelism().map_or(1, |n| n.get()),
            seed: 0,
            queue: QueueConfig::default(),
            features: crate::features::Features::default(),
            binding_workers: 1,
            deterministic: false,
            pin_threads: PinThreads::Auto,
            resize_preemption: false,
            opportunistic_batching: true,
            nominated_node_name_for_expectation: true,
            node_memo: true,
            memo_window: true,
        }
    }
}

/// Counters of what the scheduler did.
#[derive(Debug, Default)]
pub struct SchedulerStats {
    pub attempts: AtomicU64,
    pub scheduled: AtomicU64,
    pub unschedulable: AtomicU64,
    pub errors: AtomicU64,
    /// What the node memo answered (`framework/node_memo.rs`).
    pub memo: MemoCounts,
    /// Cycles whose Filter and Score the window path answered (`scheduler/window.rs`).
    pub window_cycles: AtomicU64,
}

pub struct Scheduler {
    /// Itself, for the continuations of pods waiting at Permit.
    me: Weak<Scheduler>,
    frameworks: Vec<Framework>,
    /// Pods waiting at Permit.
    pub waiting_pods: WaitingPods,
    /// Where binding cycles go while [`Scheduler::run`] is active; `None`: run them inline.
    binder: BindQueue,
    binding_workers: usize,
    pub queue: SchedulingQueue,
    pub cache: Cache,
    snapshot: Mutex<Snapshot>,
    metrics: Arc<Metrics>,
    client: Arc<dyn ClusterClient>,
    rng: Mutex<ChaCha8Rng>,
    next_start_node_index: AtomicUsize,
    /// How many nodes the last Filter pass evaluated (feasible plus rejected): when most nodes
    /// are rejected, a pass that wants few feasible nodes still walks most of the cluster, and
    /// is worth fanning out like one that wants many.
    last_filter_scan: AtomicUsize,
    /// The last cycle's Filter and Score went the window path (`window.rs`), without the
    /// pool: the next one likely does too, and its helpers need not be kept spinning.
    last_cycle_windowed: AtomicBool,
    pool: Option<Arc<rayon::ThreadPool>>,
    /// The same pool, its helpers kept awake while cycles keep coming (see
    /// [`crate::framework::warm_pool`]).
    warm: Option<WarmPool>,
    global_pct: Option<u32>,
    deterministic: bool,
    features: crate::features::Features,
    /// [`SchedulerConfig::resize_preemption`].
    resize_preemption: bool,
    /// Per profile, its opportunistic batching state.
    batches: Vec<Mutex<batch::OpportunisticBatch>>,
    /// [`SchedulerConfig::opportunistic_batching`]: as in kube, every profile has its batch
    /// under the gate; one that signs no pod asks for hints and stores results all the same
    /// (and counts them), and never gets one.
    opportunistic_batching: bool,
    /// [`SchedulerConfig::nominated_node_name_for_expectation`].
    nominated_node_name_for_expectation: bool,
    pub stats: SchedulerStats,
    /// Score's buffers between cycles (only the scheduling thread scores).
    score_scratch: Mutex<ScoreScratch>,
    /// The node memo's keys (`None`: [`SchedulerConfig::node_memo`] is off).
    memo_keys: Option<Mutex<MemoKeys>>,
    /// [`SchedulerConfig::memo_window`], with the memo on.
    memo_window: bool,
}

impl Scheduler {
    pub fn new(
        cfg: SchedulerConfig,
        registry: &Registry,
        client: Arc<dyn ClusterClient>,
        clock: Option<Arc<dyn Clock>>,
    ) -> Result<Arc<Scheduler>, FrameworkError> {
        let metrics = Arc::new(Metrics::new());
        let clock = clock.unwrap_or_else(|| Arc::new(RealClock::new()));
        let waiting_pods = if cfg.deterministic {
            WaitingPods::with_manual_clock(clock.clone())
        } else {
            WaitingPods::new()
        };
        let pin = cfg.pin_threads.pins(cfg.parallelism, core_affinity_count());
        let pool = (cfg.parallelism > 1).then(|| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(cfg.parallelism)
                .thread_name(|i| format!("tidegate-worker-{i}"))
                .start_handler(move |i| {
                    if let Some(ids) = core_affinity::get_core_ids().filter(|_| pin)
                        && !ids.is_empty()
                    {
                        core_affinity::set_for_current(ids[i % ids.len()]);
                    }
                })
                .build()
                .expect("rayon pool")
        });
        let pool = pool.map(Arc::new);
        let warm = pool
            .clone()
            .map(|p| WarmPool::new(p, WarmPool::DEFAULT_LINGER));
        let dra = Arc::<crate::framework::dra_manager::DraManager>::default();
        let volumes = Arc::<crate::framework::volume_listers::VolumeListers>::default();
        let ctx = PluginContext {
            client: client.clone(),
            waiting_pods: waiting_pods.clone(),
            pool: pool.clone(),
            features: cfg.features,
            dra: dra.clone(),
            volumes: volumes.clone(),
        };
        let frameworks = cfg
            .profiles
            .iter()
            .enumerate()
            .map(|(i, p)| Framework::new(i, p, registry, &ctx, metrics.clone()))
            .collect::<Result<Vec<_>, _>>()?;
        let first = frameworks.first().ok_or(FrameworkError::QueueSort(0))?;
        let mut pre_enqueue = AHashMap::new();
        let mut events = AHashMap::new();
        let mut hints = AHashMap::new();
        for f in &frameworks {
            pre_enqueue.insert(f.scheduler_name, f.pre_enqueue.clone());
            for (k, v) in &f.events {
                events.insert(*k, v.clone());
            }
            for (k, v) in &f.enqueue_extensions {
                hints.insert(*k, v.clone());
            }
        }
        let queue = SchedulingQueue::new(
            first.queue_sort.clone(),
            pre_enqueue,
            events,
            clock,
            metrics.clone(),
            cfg.queue.clone(),
        )
        .with_queueing_hints(hints)
        .with_generic_workload(cfg.features.generic_workload);
        let batches = frameworks.iter().map(|_| Mutex::default()).collect();
        let cache = Cache::new()
            .with_pod_groups(waiting_pods.pod_groups().clone())
            .with_dra(dra)
            .with_volumes(volumes);
        Ok(Arc::new_cyclic(|me| Scheduler {
            me: me.clone(),
            frameworks,
            waiting_pods,
            binder: BindQueue::default(),
            binding_workers: cfg.binding_workers.max(1),
            queue,
            cache,
            snapshot: Mutex::new(Snapshot::default()),
            metrics,
            client,
            rng: Mutex::new(ChaCha8Rng::seed_from_u64(cfg.seed)),
            next_start_node_index: AtomicUsize::new(0),
            last_filter_scan: AtomicUsize::new(0),
            last_cycle_windowed: AtomicBool::new(false),
            pool,
            warm,
            global_pct: cfg.percentage_of_nodes_to_score,
            deterministic: cfg.deterministic,
            features: cfg.features,
            resize_preemption: cfg.resize_preemption,
            batches,
            opportunistic_batching: cfg.opportunistic_batching,
            nominated_node_name_for_expectation: cfg.nominated_node_name_for_expectation,
            stats: SchedulerStats::default(),
            score_scratch: Mutex::new(ScoreScratch::default()),
            memo_keys: cfg.node_memo.then(|| Mutex::new(MemoKeys::default())),
            memo_window: cfg.node_memo && cfg.memo_window,
        }))
    }

    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// The profiles' frameworks, in configuration order.
    pub fn frameworks(&self) -> &[Framework] {
        &self.frameworks
    }

    /// The gauges, as `(metric name, labels, value)`: `scheduler_pending_pods{queue}` (pods in
    /// flight count as active), `tidegate_gated_pods{gate}` and
    /// `scheduler_unschedulable_pods{plugin}`.
    pub fn gauges(&self) -> Vec<crate::framework::metrics::Gauge> {
        use crate::framework::metrics::names;
        let c = self.queue.counts();
        let mut out = vec![];
        for (q, n) in [
            ("active", c.active + c.in_flight),
            ("backoff", c.backoff),
            ("unschedulable", c.unschedulable),
            ("gated", c.gated),
        ] {
            out.push((
                names::PENDING_PODS,
                vec![("queue", q.to_string())],
                n as i64,
            ));
        }
        for (gate, n) in self.queue.gated_per_gate() {
            out.push((
                names::TIDEGATE_GATED_PODS,
                vec![("gate", gate.to_string())],
                n,
            ));
        }
        for (plugin, n) in self.metrics.unschedulable_pods() {
            out.push((
                names::UNSCHEDULABLE_PODS,
                vec![("plugin", plugin.to_string())],
                n,
            ));
        }
        out
    }

    fn framework_for(&self, pod: &Pod) -> Option<usize> {
        self.frameworks
            .iter()
            .position(|f| f.scheduler_name == pod.spec.scheduler_name)
    }

    /// Whether one of our profiles is responsible for this pod.
    pub(crate) fn responsible_for(&self, pod: &Pod) -> bool {
        self.framework_for(pod).is_some()
    }

    // ---- the scheduling loop --------------------------------------------------------------

    /// Runs `schedule_one` on a dedicated thread until the queue is closed, with binding
    /// cycles on `binding_workers` threads of their own (kube runs each in a goroutine), so
    /// the next scheduling cycle starts while earlier pods bind. The returned handle finishes
    /// after the binding workers have drained.
    pub fn run(self: &Arc<Self>) -> JoinHandle<()> {
        self.binder.open();
        let workers: Vec<JoinHandle<()>> = (0..self.binding_workers)
            .map(|i| {
                let s = self.clone();
                std::thread::Builder::new()
                    .name(format!("tidegate-binder-{i}"))
                    .spawn(move || {
                        let mut batch = std::collections::VecDeque::new();
                        while s.binder.take_batch(&mut batch) {
                            for task in batch.drain(..) {
                                s.binding_cycle(*task);
                            }
                        }
                    })
                    .expect("spawn binder thread")
            })
            .collect();
        let s = self.clone();
        std::thread::Builder::new()
            .name("tidegate-scheduler".into())
            .spawn(move || {
                // The loop runs on a worker of the Filter/Score pool, so a cycle's fan-out
                // starts on this thread at once and idle workers steal from it; from outside
                // the pool every fan-out would cost two cross-thread wake-ups (~10 µs each on
                // a VM), more than a 5,000-node Filter gains.
                let s2 = s.clone();
                s.in_pool(move || while s2.schedule_one() {});
                // Pods still waiting at Permit go back to the queue; then the workers drain.
                s.waiting_pods.reject_all("scheduler stopped");
                s.waiting_pods.stop();
                s.binder.close();
                for w in workers {
                    let _ = w.join();
                }
            })
            .expect("spawn scheduler thread")
    }

    /// Runs `f` on a worker of the Filter/Score pool (inline when there is no pool), as
    /// [`Scheduler::run`] runs the scheduling loop. Callers that drive cycles themselves
    /// (`schedule_popped` in benches and tests) should do it inside `in_pool` for the
    /// parallel paths to cost what they cost in a run.
    pub fn in_pool<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.pool {
            Some(pool) => pool.install(f),
            None => f(),
        }
    }

    /// Stops the loop started by [`Scheduler::run`] once the current cycle ends.
    pub fn stop(&self) {
        self.queue.close();
    }

    /// One scheduling attempt. Returns false when the queue is closed.
    pub fn schedule_one(&self) -> bool {
        let qpi = match self.queue.try_pop_entity() {
            Some(q) => {
                self.binder.nudge(false);
                q
            }
            None => {
                // About to wait for work: hand what is queued to the binder first.
                self.binder.nudge(true);
                let Some(q) = self.queue.pop_entity() else {
                    return false;
                };
                q
            }
        };
        self.schedule_entity(qpi);
        true
    }

    /// kube's `ScheduleOne` dispatch: a pod to its cycle, a pod group to the pod-group cycle
    /// (`schedule_one_podgroup.rs`).
    fn schedule_entity(&self, e: QueuedEntity) {
        match e {
            QueuedEntity::Pod(q) => self.schedule_popped(q),
            QueuedEntity::PodGroup(g) => self.schedule_one_pod_group(*g),
        }
    }

    /// One step of a run driven by its own (virtual) clock: fires the Permit timeouts that are
    /// due, then makes one scheduling attempt if a pod is ready (the queue's due flushes run
    /// first). Binding runs inline. Returns whether a pod was attempted.
    pub fn try_schedule_one(&self) -> bool {
        self.waiting_pods.fire_due();
        match self.queue.try_pop_entity() {
            Some(qpi) => {
                self.schedule_entity(qpi);
                true
            }
            None => false,
        }
    }

    /// The next time at which something may become ready without an outside event: a queue
    /// flush that can move a pod, or a Permit timeout. `None`: only an event can.
    pub fn next_timer(&self) -> Option<crate::clock::Time> {
        let q = self.queue.next_flush_due();
        let w = self.waiting_pods.next_deadline();
        q.into_iter().chain(w).min()
    }
}

/// The queue side of the default profile, for tests, benches and tools that exercise the
/// queue without a framework. (It lives here, above the queue and the plugins, so that the
/// queue never depends on a plugin.)
impl SchedulingQueue {
    /// A queue with the default profile's queue-side plugins only: PrioritySort, and
    /// SchedulingGates at PreEnqueue (with its event and hint) for `default-scheduler`. For
    /// tests, benches and tools that exercise the queue without a framework.
    pub fn gates_only(clock: Arc<dyn Clock>, metrics: Arc<Metrics>, cfg: QueueConfig) -> Self {
        use crate::framework::interface::{EnqueueExtensions, Plugin, PreEnqueuePlugin};
        use crate::plugins::priority_sort::PrioritySort;
        use crate::plugins::scheduling_gates::SchedulingGates;
        let gates = Arc::new(SchedulingGates);
        let mut pre: AHashMap<Sym, Vec<Arc<dyn PreEnqueuePlugin>>> = AHashMap::new();
        pre.insert(Sym::new("default-scheduler"), vec![gates.clone()]);
        let mut events = AHashMap::new();
        events.insert(gates.name(), gates.events_to_register());
        let mut hints: AHashMap<&'static str, Arc<dyn EnqueueExtensions>> = AHashMap::new();
        hints.insert(gates.name(), gates);
        SchedulingQueue::new(Arc::new(PrioritySort), pre, events, clock, metrics, cfg)
            .with_queueing_hints(hints)
    }
}

#[cfg(test)]
mod pin_tests {
    use super::PinThreads;

    #[test]
    fn auto_pins_only_when_the_pool_leaves_a_cpu_free() {
        assert!(PinThreads::Auto.pins(1, 2));
        assert!(PinThreads::Auto.pins(8, 16));
        assert!(!PinThreads::Auto.pins(2, 2));
        assert!(!PinThreads::Auto.pins(16, 16));
        assert!(!PinThreads::Auto.pins(4, 2));
        // The platform names no CPUs: nothing to pin to.
        assert!(!PinThreads::Auto.pins(1, 0));
        assert!(PinThreads::Always.pins(2, 2));
        assert!(!PinThreads::Never.pins(1, 16));
    }
}
