//! `schedule_one`: pop → snapshot → PreFilter/Filter/Score → assume → Reserve/Permit → binding
//! cycle, and the event handlers through which the cluster (an informer, or the harness's object
//! store) tells the scheduler what changed.
//!
//! Source of behaviour: `pkg/scheduler/schedule_one.go` and `eventhandlers.go`.

use crate::api::{Node, Pod, PodKey, Sym};
use crate::cache::{Cache, Snapshot};
use crate::clock::{Clock, RealClock};
use crate::framework::events::{
    ActionType, ClusterEvent, EventObject, EventResource, pod_scheduling_properties_change,
};
use crate::framework::interface::{ClusterClient, Diagnosis, MAX_NODE_SCORE, PostFilterContext};
use crate::framework::metrics::{AttemptResult, ExtensionPoint, Metrics, Series};
use crate::framework::parallelize::{
    find_feasible_blocks_in_mode, find_feasible_in_mode, num_feasible_nodes_to_find,
};
use crate::framework::runtime::{Framework, FrameworkError, Profile};
use crate::framework::warm_pool::WarmPool;
use crate::framework::{Code, CycleState, NodeRow, Status, WaitingPods};
use crate::plugins::{PluginContext, Registry};
use crate::queue::{QueueConfig, QueuedPodInfo, SchedulingQueue};
use ahash::AHashMap;
use parking_lot::Mutex;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Below this many nodes to evaluate, Filter and Score run inline on the scheduling thread.
/// Measured on the 2-vCPU VM (perf-data/README.md, 2026-11-23): fanning out the default
/// 500 of 5,000 nodes on 2 threads was about 2 µs slower per cycle than inline.
pub const PARALLEL_MIN_NODES: usize = 1000;

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
    /// Threads that run binding cycles (WaitOnPermit, PreBind, Bind, PostBind) once
    /// [`Scheduler::run`] starts; until then binding runs inline.
    pub binding_workers: usize,
    /// Decisions independent of the thread count and of timing, for runs driven by a
    /// virtual clock through [`Scheduler::try_schedule_one`]: Filter's parallel pass returns
    /// what the sequential pass would, and Permit timeouts wait for [`Scheduler::next_timer`]
    /// instead of a timer thread.
    pub deterministic: bool,
    /// Pin the Filter/Score pool's worker `i` to CPU `i mod CPUs`. Unpinned, the kernel may
    /// put two busy workers on one CPU for milliseconds after a wake-up; pinned, the node
    /// data each worker judges stays in its own core's cache from one cycle to the next.
    pub pin_threads: bool,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig {
            profiles: vec![Profile::default_profile()],
            percentage_of_nodes_to_score: None,
            parallelism: std::thread::available_parallelism().map_or(1, |n| n.get()),
            seed: 0,
            queue: QueueConfig::default(),
            binding_workers: 1,
            deterministic: false,
            pin_threads: true,
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
    pool: Option<Arc<rayon::ThreadPool>>,
    /// The same pool, its helpers kept awake while cycles keep coming (see
    /// [`crate::framework::warm_pool`]).
    warm: Option<WarmPool>,
    global_pct: Option<u32>,
    deterministic: bool,
    pub stats: SchedulerStats,
    /// Score's buffers between cycles (only the scheduling thread scores).
    score_scratch: Mutex<ScoreScratch>,
}

/// A pod that passed the scheduling cycle (assumed, reserved, permitted or waiting), on its way
/// through the binding cycle.
struct BindingTask {
    fwk: usize,
    state: CycleState,
    qpi: QueuedPodInfo,
    assumed: Arc<Pod>,
    host: Sym,
    start: Instant,
    cycle: i64,
    /// The outcome of WaitOnPermit for a pod that waited.
    permit: Option<Status>,
}

/// The binding cycles waiting for a binder thread. A worker takes everything queued at once
/// and is woken only when it sleeps: no spinning receiver competes with the scheduling
/// thread for the CPU, and a burst of binds costs one wake-up.
#[derive(Default)]
struct BindQueue {
    state: Mutex<BindQueueState>,
    ready: parking_lot::Condvar,
}

#[derive(Default)]
struct BindQueueState {
    tasks: std::collections::VecDeque<BindingTask>,
    /// When the oldest queued task was queued.
    since: Option<Instant>,
    /// Workers run (between `open` and `close`).
    open: bool,
    sleeping: usize,
}

/// A sleeping binder is woken once this many tasks wait (or sooner: see [`BindQueue::nudge`]).
/// Waking a thread costs microseconds of the scheduling thread's time; one wake per batch
/// instead of one per pod keeps that off the critical path.
const BIND_BATCH: usize = 16;
/// The longest a queued binding cycle waits for a batch to fill while the scheduler is busy.
const BIND_LINGER: Duration = Duration::from_micros(500);

impl BindQueue {
    fn open(&self) {
        self.state.lock().open = true;
    }

    /// Queues a task; gives it back when no worker runs. `eager` wakes a sleeping worker at
    /// once (a task handed over from another thread, such as a Permit outcome); otherwise a
    /// sleeping worker is woken when a batch is full, and the scheduling loop nudges it
    /// before it waits for work or once the oldest task has lingered.
    fn push(&self, task: BindingTask, eager: bool) -> Option<BindingTask> {
        let mut st = self.state.lock();
        if !st.open {
            return Some(task);
        }
        if st.tasks.is_empty() {
            st.since = Some(Instant::now());
        }
        st.tasks.push_back(task);
        if st.sleeping > 0 && (eager || st.tasks.len() >= BIND_BATCH) {
            self.ready.notify_one();
        }
        None
    }

    /// Wakes a sleeping worker if tasks wait and the scheduler is about to go `idle`, or the
    /// batch is full, or the oldest task has waited [`BIND_LINGER`].
    fn nudge(&self, idle: bool) {
        let st = self.state.lock();
        if st.sleeping > 0
            && !st.tasks.is_empty()
            && (idle
                || st.tasks.len() >= BIND_BATCH
                || st.since.is_some_and(|t| t.elapsed() >= BIND_LINGER))
        {
            self.ready.notify_one();
        }
    }

    /// Swaps everything queued into `batch` (which the worker has drained), waiting while
    /// there is nothing; false once closed and drained. Swapping rather than taking hands the
    /// drained buffer back to the producer, so in steady state neither side allocates: the
    /// two buffers keep the capacity the deepest backlog gave them.
    fn take_batch(&self, batch: &mut std::collections::VecDeque<BindingTask>) -> bool {
        debug_assert!(batch.is_empty());
        let mut st = self.state.lock();
        loop {
            if !st.tasks.is_empty() {
                std::mem::swap(&mut st.tasks, batch);
                st.since = None;
                return true;
            }
            if !st.open {
                return false;
            }
            st.sleeping += 1;
            self.ready.wait(&mut st);
            st.sleeping -= 1;
        }
    }

    /// No new tasks; the workers finish what is queued and stop.
    fn close(&self) {
        self.state.lock().open = false;
        self.ready.notify_all();
    }
}

/// A failed attempt: the status, and for a fit error the diagnosis.
struct Failure {
    status: Status,
    diagnosis: Option<Box<Diagnosis>>,
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
        let pin = cfg.pin_threads;
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
        let ctx = PluginContext {
            client: client.clone(),
            waiting_pods: waiting_pods.clone(),
            pool: pool.clone(),
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
        .with_queueing_hints(hints);
        Ok(Arc::new_cyclic(|me| Scheduler {
            me: me.clone(),
            frameworks,
            waiting_pods,
            binder: BindQueue::default(),
            binding_workers: cfg.binding_workers.max(1),
            queue,
            cache: Cache::new(),
            snapshot: Mutex::new(Snapshot::default()),
            metrics,
            client,
            rng: Mutex::new(ChaCha8Rng::seed_from_u64(cfg.seed)),
            next_start_node_index: AtomicUsize::new(0),
            last_filter_scan: AtomicUsize::new(0),
            pool,
            warm,
            global_pct: cfg.percentage_of_nodes_to_score,
            deterministic: cfg.deterministic,
            stats: SchedulerStats::default(),
            score_scratch: Mutex::new(ScoreScratch::default()),
        }))
    }

    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
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
    pub fn responsible_for(&self, pod: &Pod) -> bool {
        self.framework_for(pod).is_some()
    }

    // ---- event handlers (informer-facing) --------------------------------------------------

    pub fn on_node_add(&self, node: Arc<Node>) {
        self.cache.add_node(node.clone());
        self.queue.on_cluster_event(
            ClusterEvent::new(EventResource::Node, ActionType::ADD),
            EventObject::None,
            EventObject::Node(node),
        );
    }

    pub fn on_node_update(&self, old: &Node, new: Arc<Node>) {
        let mut action = 0u32;
        if old.allocatable != new.allocatable {
            action |= ActionType::UPDATE_NODE_ALLOCATABLE.0;
        }
        if old.labels != new.labels {
            action |= ActionType::UPDATE_NODE_LABEL.0;
        }
        if old.taints != new.taints || old.unschedulable != new.unschedulable {
            action |= ActionType::UPDATE_NODE_TAINT.0;
        }
        self.cache.update_node(new.clone());
        // One event per changed aspect, as kube's nodeSchedulingPropertiesChange does.
        let old = EventObject::Node(Arc::new(old.clone()));
        for bit in 0..12 {
            let a = 1u32 << bit;
            if action & a != 0 {
                self.queue.on_cluster_event(
                    ClusterEvent::new(EventResource::Node, ActionType(a)),
                    old.clone(),
                    EventObject::Node(new.clone()),
                );
            }
        }
    }

    /// kube's `deleteNodeFromCache`: the node leaves the cache, and the pods whose rejectors
    /// registered NodeDelete (PodTopologySpread: a domain may be gone) hear of it.
    pub fn on_node_delete(&self, name: Sym) {
        if let Some(old) = self.cache.remove_node(name) {
            self.queue.on_cluster_event(
                ClusterEvent::new(EventResource::Node, ActionType::DELETE),
                EventObject::Node(old),
                EventObject::None,
            );
        }
    }

    /// kube's `addAssignedPodToCache`'s queue step: with QueueingHints, every parked pod whose
    /// rejector registered the event goes through its hints (`MoveAllToActiveOrBackoffQueue`);
    /// without, only the cross-topology candidates (`AssignedPodAdded`). Source:
    /// pkg/scheduler/eventhandlers.go in kubernetes/kubernetes, which takes the first path
    /// whenever the gate is on, because the pre-filter knows only the in-tree plugins and
    /// misses pods a relabelled pod stops blocking.
    fn assigned_pod_added(&self, pod: Arc<Pod>) {
        if self.queue.queueing_hints() {
            self.queue.assigned_pod_event(
                ClusterEvent::new(EventResource::AssignedPod, ActionType::ADD),
                None,
                Some(pod),
            );
        } else {
            let ns = self.client.namespace_labels(pod.namespace);
            self.queue.assigned_pod_added(pod, ns.as_deref());
        }
    }

    pub fn on_pod_add(&self, pod: Arc<Pod>) {
        if pod.is_assigned() {
            self.cache.add_pod(pod.clone());
            self.assigned_pod_added(pod);
        } else if self.responsible_for(&pod) {
            self.queue.add(pod);
        }
    }

    pub fn on_pod_update(&self, old: &Pod, new: Arc<Pod>) {
        match (old.is_assigned(), new.is_assigned()) {
            (false, false) => {
                // kube's updatePodInSchedulingQueue: a resync carrying the same object, and any
                // update of a pod this scheduler has assumed (its binding cycle is running), are
                // bypassed; otherwise the pod could go through scheduling twice (kube #96071).
                if old.resource_version == new.resource_version && old.resource_version != 0 {
                    return;
                }
                if self.cache.is_assumed(&new.key) {
                    return;
                }
                if new.deletion_timestamp {
                    // Terminating: it will never be scheduled (kube pops and skips it; we drop
                    // it at once).
                    self.queue.delete(&new.key);
                } else if self.responsible_for(&new) {
                    self.queue.update(old, new);
                }
            }
            (false, true) => {
                // Left the unscheduled informer, entered the assigned one. A pod we assumed is
                // in no queue (it was popped, and updates to it were bypassed since).
                if self.cache.is_assumed(&new.key) {
                    self.queue.delete_scheduled(&new.key);
                } else {
                    self.queue.delete(&new.key);
                }
                self.cache.add_pod(new.clone());
                self.assigned_pod_added(new);
            }
            (true, _) => {
                // kube's `updateAssignedPodInCache`: one event per changed property, to every
                // parked pod with QueueingHints (see `assigned_pod_added`), else through the
                // cross-topology pre-filter.
                self.cache.add_pod(new.clone());
                let hints = self.queue.queueing_hints();
                let ns = if hints {
                    None
                } else {
                    self.client.namespace_labels(new.namespace)
                };
                let old = Arc::new(old.clone());
                for event in pod_scheduling_properties_change(&old, &new) {
                    if hints {
                        self.queue
                            .assigned_pod_event(event, Some(old.clone()), Some(new.clone()));
                    } else {
                        self.queue.assigned_pod_updated(
                            old.clone(),
                            new.clone(),
                            event,
                            ns.as_deref(),
                        );
                    }
                }
            }
        }
    }

    pub fn on_pod_delete(&self, pod: &Pod) {
        if pod.is_assigned() {
            self.cache.remove_pod(&pod.key);
            self.queue.assigned_pod_event(
                ClusterEvent::new(EventResource::AssignedPod, ActionType::DELETE),
                Some(Arc::new(pod.clone())),
                None,
            );
        } else {
            self.queue.delete(&pod.key);
        }
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
                                s.binding_cycle(task);
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

    /// Hands a binding cycle to the workers, or runs it here when none run.
    fn submit_binding(&self, task: BindingTask, eager: bool) {
        if let Some(task) = self.binder.push(task, eager) {
            self.binding_cycle(task);
        }
    }

    /// One scheduling attempt. Returns false when the queue is closed.
    pub fn schedule_one(&self) -> bool {
        let qpi = match self.queue.try_pop() {
            Some(q) => {
                self.binder.nudge(false);
                q
            }
            None => {
                // About to wait for work: hand what is queued to the binder first.
                self.binder.nudge(true);
                let Some(q) = self.queue.pop() else {
                    return false;
                };
                q
            }
        };
        self.schedule_popped(qpi);
        true
    }

    /// One step of a run driven by its own (virtual) clock: fires the Permit timeouts that are
    /// due, then makes one scheduling attempt if a pod is ready (the queue's due flushes run
    /// first). Binding runs inline. Returns whether a pod was attempted.
    pub fn try_schedule_one(&self) -> bool {
        self.waiting_pods.fire_due();
        match self.queue.try_pop() {
            Some(qpi) => {
                self.schedule_popped(qpi);
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

    /// Schedules a pod that was already popped (used by `schedule_one` and by tests that drive
    /// the queue with `try_pop`).
    pub fn schedule_popped(&self, qpi: QueuedPodInfo) {
        let pod = qpi.pod.clone();
        let Some(fi) = self.framework_for(&pod) else {
            self.queue.done(&pod.key);
            return;
        };
        let fwk = &self.frameworks[fi];
        if pod.deletion_timestamp || self.cache.is_assumed(&pod.key) {
            self.queue.done(&pod.key);
            return;
        }
        self.stats.attempts.fetch_add(1, Ordering::Relaxed);
        let start = Instant::now();
        let cycle = self.queue.scheduling_cycle();
        let mut state = CycleState::new();
        state.record_plugin_metrics = crate::framework::metrics::sample_plugin_metrics();
        let host = match self.schedule_pod(fwk, &mut state, &pod) {
            Ok(h) => h,
            Err(mut f) => {
                // kube runs PostFilter (preemption) on a FitError only.
                if let Some(d) = f.diagnosis.as_deref()
                    && fwk.has_post_filter_plugins()
                {
                    let snap = self.snapshot.lock();
                    let ctx = PostFilterContext {
                        snapshot: &snap,
                        framework: fwk,
                        nominator: &self.queue.nominator,
                        waiting_pods: &self.waiting_pods,
                    };
                    let (r, st) = fwk.run_post_filter(&ctx, &mut state, &pod, d);
                    drop(snap);
                    let post = st.message();
                    if !post.is_empty() {
                        let msg = format!("{} {post}.", f.status.message());
                        f.status = Status::new(f.status.code(), msg);
                    }
                    if let Some(node) = r.and_then(|r| r.nominated_node_name) {
                        self.nominate(&pod, node);
                    }
                }
                self.handle_failure(qpi, f, start, cycle);
                return;
            }
        };
        self.metrics
            .observe(Series::AlgorithmDuration, start.elapsed().as_nanos() as u64);

        // Assume, Reserve, Permit.
        let mut assumed = (*pod).clone();
        assumed.node_name = Some(host);
        let assumed = Arc::new(assumed);
        if !self.cache.assume_pod(&assumed, host) {
            let f = Failure {
                status: Status::error(format!("pod {} could not be assumed", pod.key)),
                diagnosis: None,
            };
            self.handle_failure(qpi, f, start, cycle);
            return;
        }
        let st = fwk.run_reserve(&mut state, &assumed, host);
        if !st.is_success() {
            fwk.run_unreserve(&mut state, &assumed, host);
            self.cache.forget_pod(&pod.key);
            self.handle_failure(qpi, rejection(st), start, cycle);
            return;
        }
        let (st, waits) = fwk.run_permit(&mut state, &assumed, host);
        if !st.is_success() && !st.is_wait() {
            fwk.run_unreserve(&mut state, &assumed, host);
            self.cache.forget_pod(&pod.key);
            self.handle_failure(qpi, rejection(st), start, cycle);
            return;
        }
        if !state.pods_to_activate.is_empty() {
            self.queue
                .activate(&std::mem::take(&mut state.pods_to_activate));
        }
        let task = BindingTask {
            fwk: fi,
            state,
            qpi,
            assumed: assumed.clone(),
            host,
            start,
            cycle,
            permit: None,
        };
        if st.is_wait() {
            // The binding cycle continues when the pod is allowed, rejected or times out.
            let me = self.me.clone();
            let mut task = task;
            self.waiting_pods.add(
                assumed,
                host,
                waits,
                Box::new(move |outcome| {
                    if let Some(s) = me.upgrade() {
                        task.permit = Some(outcome);
                        s.submit_binding(task, true);
                    }
                }),
            );
            return;
        }
        self.submit_binding(task, false);
    }

    /// Records a nomination from PostFilter (`Sym::EMPTY` clears it): in the nominator now,
    /// and in the pod's status through the client (kube patches `status.nominatedNodeName`).
    fn nominate(&self, pod: &Arc<Pod>, node: Sym) {
        use crate::framework::Nominating;
        if node.is_empty() && self.queue.nominator.node_of(&pod.key).is_none() {
            return;
        }
        self.queue.nominator.add(pod, Nominating::Override(node));
        self.client
            .set_nominated_node_name(pod, (!node.is_empty()).then_some(node));
    }

    /// kube's `bindingCycle` and `handleBindingCycleError`: WaitOnPermit's outcome, Done,
    /// PreBind, Bind, PostBind; on failure Unreserve, forget, requeue.
    fn binding_cycle(&self, mut t: BindingTask) {
        let fwk = &self.frameworks[t.fwk];
        let key = t.assumed.key.clone();
        let mut st = match t.permit.take() {
            Some(s) if !s.is_success() => s,
            _ => Status::success(),
        };
        let permit_rejected = st.is_rejected();
        if st.is_success() {
            // Past Permit a failure no longer makes the pod unschedulable: release the events
            // kept for it now (kube calls Done here).
            self.queue.done(&key);
            st = fwk.run_pre_bind(&mut t.state, &t.assumed, t.host);
            if st.is_success() {
                st = fwk.run_bind(&mut t.state, &t.assumed, t.host);
            }
        }
        if !st.is_success() {
            fwk.run_unreserve(&mut t.state, &t.assumed, t.host);
            self.cache.forget_pod(&key);
            // The resources it held are free again: an AssignedPodDelete event, as kube's
            // handleBindingCycleError raises. After a rejection (a Permit plugin said no or
            // timed out) the event comes after the failure handler and skips the pod itself,
            // which stays unschedulable until something else may help it.
            let freed = ClusterEvent::new(EventResource::AssignedPod, ActionType::DELETE);
            if permit_rejected {
                self.handle_failure(t.qpi, rejection(st), t.start, t.cycle);
                self.queue.move_all_to_active_or_backoff_except(freed, &key);
            } else {
                self.queue.move_all_to_active_or_backoff(freed);
                let f = Failure {
                    status: st,
                    diagnosis: None,
                };
                self.handle_failure(t.qpi, f, t.start, t.cycle);
            }
            return;
        }
        let elapsed = t.start.elapsed().as_nanos() as u64;
        self.metrics
            .observe(Series::AttemptDuration(AttemptResult::Scheduled), elapsed);
        self.metrics.inc_attempt(AttemptResult::Scheduled);
        self.metrics
            .observe(Series::PodSchedulingAttempts, u64::from(t.qpi.attempts));
        if let Some(t0) = t.qpi.initial_attempt_timestamp {
            let now = self.queue.clock().now();
            let a = t.qpi.attempts.min(15) as u8;
            self.metrics.observe(
                Series::SliDuration(a),
                now.saturating_sub(t0).as_nanos() as u64,
            );
        }
        self.stats.scheduled.fetch_add(1, Ordering::Relaxed);
        fwk.run_post_bind(&mut t.state, &t.assumed, t.host);
        if !t.state.pods_to_activate.is_empty() {
            self.queue.activate(&t.state.pods_to_activate);
        }
    }

    fn handle_failure(&self, mut qpi: QueuedPodInfo, f: Failure, start: Instant, cycle: i64) {
        let rejected = f.status.is_rejected();
        let result = if rejected {
            self.stats.unschedulable.fetch_add(1, Ordering::Relaxed);
            AttemptResult::Unschedulable
        } else {
            self.stats.errors.fetch_add(1, Ordering::Relaxed);
            AttemptResult::Error
        };
        self.metrics.inc_attempt(result);
        self.metrics.observe(
            Series::AttemptDuration(result),
            start.elapsed().as_nanos() as u64,
        );
        if let Some(d) = &f.diagnosis {
            qpi.unschedulable_plugins = d.unschedulable_plugins.clone();
            qpi.pending_plugins = d.pending_plugins.clone();
        } else if rejected && !f.status.plugin().is_empty() {
            qpi.unschedulable_plugins = vec![f.status.plugin()];
        }
        let pod = qpi.pod.clone();
        let message = f.status.message();
        if self.client.pod_exists_unassigned(&pod) {
            // An error here means the pod was re-added by an update meanwhile: nothing is lost.
            let _ = self.queue.add_unschedulable_if_not_present(qpi, cycle);
        } else {
            self.queue.done(&pod.key);
        }
        let reason = if rejected {
            "Unschedulable"
        } else {
            "SchedulerError"
        };
        self.client.set_unschedulable(&pod, reason, &message);
    }

    /// kube's `SchedulePod`: the host, or why there is none.
    fn schedule_pod(
        &self,
        fwk: &Framework,
        state: &mut CycleState,
        pod: &Pod,
    ) -> Result<Sym, Failure> {
        let mut snap = self.snapshot.lock();
        self.cache.update_snapshot(&mut snap);
        let all = snap.nodes.len();
        if let Some(w) = &self.warm {
            // This cycle's Filter and Score fan out when they evaluate enough nodes: have the
            // helpers awake for them.
            let pct = fwk.percentage_of_nodes_to_score.or(self.global_pct);
            if num_feasible_nodes_to_find(pct, all) >= PARALLEL_MIN_NODES
                || self.last_filter_scan.load(Ordering::Relaxed) >= PARALLEL_MIN_NODES
            {
                w.keep_warm();
            }
        }
        if all == 0 {
            return Err(Failure {
                status: Status::new(
                    Code::UnschedulableAndUnresolvable,
                    "no nodes available to schedule pods",
                ),
                diagnosis: None,
            });
        }

        // PreFilter.
        let (pre, st) = fwk.run_pre_filter(state, pod, &snap);
        if !st.is_success() {
            if st.is_rejected() {
                let msg = st.message();
                let diagnosis = Diagnosis {
                    unschedulable_plugins: vec![st.plugin()],
                    pre_filter_msg: msg.clone(),
                    ..Default::default()
                };
                return Err(Failure {
                    status: Status::new(st.code(), format!("0/{all} nodes are available: {msg}."))
                        .with_plugin(st.plugin()),
                    diagnosis: Some(Box::new(diagnosis)),
                });
            }
            return Err(Failure {
                status: st,
                diagnosis: None,
            });
        }
        let subset: Option<(Vec<Arc<crate::framework::NodeInfo>>, Vec<NodeRow>)> =
            pre.and_then(|r| r.node_names).map(|names| {
                names
                    .iter()
                    .filter_map(|n| {
                        snap.index
                            .get(n)
                            .map(|&i| (snap.nodes[i].clone(), snap.rows[i]))
                    })
                    .unzip()
            });
        let (nodes, rows): (&[Arc<crate::framework::NodeInfo>], &[NodeRow]) = match &subset {
            Some((nodes, rows)) => (nodes, rows),
            None => (&snap.nodes, &snap.rows),
        };
        let excluded = all - nodes.len();

        // Filter.
        let pct = fwk.percentage_of_nodes_to_score.or(self.global_pct);
        let num_to_find = if fwk.has_score_plugins() {
            num_feasible_nodes_to_find(pct, nodes.len())
        } else {
            1
        };
        let t = Instant::now();
        let n = nodes.len();
        let start_index = if n == 0 {
            0
        } else {
            self.next_start_node_index.load(Ordering::Relaxed) % n
        };
        let filters = fwk.active_filter_plugins(state, pod);
        // Fanning out costs a few microseconds of wake-ups; it pays only for big evaluations:
        // many feasible nodes wanted, or (most nodes rejected) many walked last time.
        let pool = self.pool.as_deref().filter(|_| {
            num_to_find >= PARALLEL_MIN_NODES
                || self.last_filter_scan.load(Ordering::Relaxed) >= PARALLEL_MIN_NODES
        });
        let state_ref: &CycleState = state;
        // (No map at all in the usual case: even an empty AHashMap draws random keys.)
        let nominated = if self.queue.nominator.is_empty() {
            None
        } else {
            Some(self.queue.nominator.nominated_at_least(pod)).filter(|m| !m.is_empty())
        };
        let ordered = self.deterministic;
        let outcome = if let Some(nominated) = &nominated {
            find_feasible_in_mode(ordered, pool, n, start_index, num_to_find, |i| {
                let noms = nominated.get(&nodes[i].name()).map_or(&[][..], |v| &v[..]);
                fwk.run_filter_plugins_with_nominated_pods(
                    &filters, state_ref, pod, &nodes[i], noms,
                )
            })
        } else {
            find_feasible_blocks_in_mode(
                ordered,
                pool,
                n,
                start_index,
                num_to_find,
                |first, len, verdicts| {
                    let (block, block_rows) =
                        (&nodes[first..first + len], &rows[first..first + len]);
                    Framework::run_filter_plugins_block(
                        &filters, state_ref, pod, block, block_rows, verdicts,
                    )
                },
            )
        };
        let phase_code = if outcome.error.is_some() {
            Code::Error
        } else {
            Code::Success
        };
        fwk.observe_phase(ExtensionPoint::Filter, phase_code, t.elapsed());
        self.last_filter_scan.store(
            outcome.feasible.len() + outcome.rejected.len(),
            Ordering::Relaxed,
        );
        if n > 0 && subset.is_none() {
            let processed = outcome.feasible.len() + outcome.rejected.len();
            self.next_start_node_index
                .store((start_index + processed) % all, Ordering::Relaxed);
        }
        if let Some(e) = outcome.error {
            return Err(Failure {
                status: e,
                diagnosis: None,
            });
        }
        if outcome.feasible.is_empty() {
            return Err(fit_error(all, excluded, outcome.rejected, nodes));
        }
        // The statuses are for a failure's diagnosis only.
        crate::framework::parallelize::recycle_rejected(outcome.rejected);
        if outcome.feasible.len() == 1 {
            return Ok(nodes[outcome.feasible[0]].name());
        }

        // Score.
        let feasible: Vec<&crate::framework::NodeInfo> =
            outcome.feasible.iter().map(|&i| &*nodes[i]).collect();
        let st = fwk.run_pre_score(state, pod, &feasible, &snap);
        if !st.is_success() {
            return Err(Failure {
                status: st,
                diagnosis: None,
            });
        }
        let t = Instant::now();
        let mut scratch = self.score_scratch.lock();
        let scored = self.score_nodes(
            fwk,
            state,
            pod,
            &feasible,
            (&outcome.feasible, rows),
            &mut scratch,
        );
        match scored {
            Ok(chosen) => {
                fwk.observe_phase(ExtensionPoint::Score, Code::Success, t.elapsed());
                Ok(feasible[chosen].name())
            }
            Err(st) => {
                fwk.observe_phase(ExtensionPoint::Score, Code::Error, t.elapsed());
                Err(Failure {
                    status: st,
                    diagnosis: None,
                })
            }
        }
    }

    /// Score, NormalizeScore and weights, and the chosen node (kube's `prioritizeNodes` and
    /// `selectHost`). Returns the index of the chosen node in `feasible`.
    ///
    /// Nodes are scored in blocks of [`SCORE_BLOCK`]: each plugin scores the whole block in one
    /// call (reading its PreScore state once), and the block's NodeInfos stay in cache while
    /// every plugin visits them. `scores` holds, per block, the block's scores of plugin 0,
    /// then of plugin 1, and so on. Blocks run on the pool when there are enough nodes.
    ///
    /// 1. Per block: score; weigh the plugins without NormalizeScore into the block's totals;
    ///    note the block's maximum of each plugin whose NormalizeScore is kube's
    ///    `DefaultNormalizeScore` ([`ScorePlugin::default_normalize`]); note the block's best
    ///    total and how many of its nodes reach it.
    /// 2. A plugin with its own NormalizeScore gets its whole column at once, as kube hands it
    ///    every feasible node.
    /// 3. Per block, only when some normalized score varies between nodes: add the normalized,
    ///    weighted scores and note the block's best again. A default-normalized plugin whose
    ///    scores are all 0 (TaintToleration on a cluster without PreferNoSchedule taints) gives
    ///    every node the same amount, which changes no comparison: it is left out, so
    ///    `totals` are kube's totals less that per-cycle constant.
    ///
    /// The choice then needs only the blocks' bests ([`Scheduler::select_host_by_blocks`]).
    fn score_nodes(
        &self,
        fwk: &Framework,
        state: &CycleState,
        pod: &Pod,
        feasible: &[&crate::framework::NodeInfo],
        (feasible_index, all_rows): (&[usize], &[NodeRow]),
        scratch: &mut ScoreScratch,
    ) -> Result<usize, Status> {
        let plugins = fwk.active_score_plugins(state);
        // Fetch NodeInfos ahead only for plugins that read them.
        let prefetch = plugins.iter().any(|(pl, _)| !pl.scores_from_rows(state));
        let f = feasible.len();
        let ScoreScratch {
            scores,
            column,
            totals,
            block_max,
            block_best,
            normalizes,
            defaults,
            max,
            rows: feasible_rows,
        } = scratch;
        totals.clear();
        if plugins.is_empty() {
            totals.resize(f, 1);
            return Ok(self.select_host(totals));
        }
        // Every slot below is written before it is read: no need to zero.
        totals.resize(f, 0);
        let p = plugins.len();
        let blocks = f.div_ceil(SCORE_BLOCK);
        // Per plugin: whether it normalizes, and Some(reverse) when that is the default way.
        normalizes.clear();
        normalizes.extend(plugins.iter().map(|(pl, _)| pl.has_normalize()));
        defaults.clear();
        defaults.extend(
            plugins
                .iter()
                .zip(normalizes.iter())
                .map(|((pl, _), &n)| n.then(|| pl.default_normalize()).flatten()),
        );
        let (normalizes, defaults) = (&normalizes[..], &defaults[..]);
        scores.resize(f * p, 0);
        let scores = &mut scores[..f * p];
        block_max.resize(blocks * p, 0);
        let block_max = &mut block_max[..blocks * p];
        block_best.resize(blocks, Best::default());
        let block_best = &mut block_best[..blocks];
        let chunk = SCORE_BLOCK * p;
        // Every row below is written before it is read: no need to clear.
        feasible_rows.resize(f, NodeRow::default());
        let feasible_rows = &mut feasible_rows[..f];
        type Block<'a> = (
            usize,
            (
                (
                    ((&'a mut [i64], &'a mut [i64]), &'a mut [i64]),
                    &'a mut Best,
                ),
                &'a mut [NodeRow],
            ),
        );
        let score_block = |(b, ((((out, maxes), tot), best), rows)): Block<'_>| {
            let len = tot.len();
            let nodes = &feasible[b * SCORE_BLOCK..b * SCORE_BLOCK + len];
            // The block's rows: the snapshot's own when the block's nodes are consecutive
            // (Filter passed every node of a run, the usual case), else copied next to each
            // other where this worker reads them.
            let index = &feasible_index[b * SCORE_BLOCK..b * SCORE_BLOCK + len];
            // (The parallel Filter lists its finds in no particular order: check each step.)
            let first = index[0];
            let rows: &[NodeRow] = if index.windows(2).all(|w| w[1] == w[0] + 1) {
                &all_rows[first..first + len]
            } else {
                for (r, &i) in rows.iter_mut().zip(index) {
                    *r = all_rows[i];
                }
                rows
            };
            // Ask for the whole block at once: the misses overlap instead of queueing up
            // behind the first plugin's walk.
            if prefetch {
                for n in nodes {
                    n.prefetch();
                }
            }
            tot.fill(0);
            for (j, ((pl, w), column)) in plugins.iter().zip(out.chunks_mut(len)).enumerate() {
                pl.score_nodes(state, pod, nodes, rows, column)
                    .map_err(|s| s.with_plugin(pl.name()))?;
                if defaults[j].is_some() {
                    // kube's DefaultNormalizeScore takes the maximum from 0.
                    maxes[j] = column.iter().copied().fold(0, i64::max);
                }
                if !normalizes[j] {
                    for (t, &s) in tot.iter_mut().zip(column.iter()) {
                        *t += s * w;
                    }
                }
            }
            *best = Best::of(tot);
            Ok::<(), Status>(())
        };
        let pool = self.pool.as_deref().filter(|_| f >= PARALLEL_MIN_NODES);
        match pool {
            Some(pool) => pool.install(|| {
                scores
                    .par_chunks_mut(chunk)
                    .zip(block_max.par_chunks_mut(p))
                    .zip(totals.par_chunks_mut(SCORE_BLOCK))
                    .zip(block_best.par_iter_mut())
                    .zip(feasible_rows.par_chunks_mut(SCORE_BLOCK))
                    .enumerate()
                    .try_for_each(score_block)
            })?,
            None => scores
                .chunks_mut(chunk)
                .zip(block_max.chunks_mut(p))
                .zip(totals.chunks_mut(SCORE_BLOCK))
                .zip(block_best.iter_mut())
                .zip(feasible_rows.chunks_mut(SCORE_BLOCK))
                .enumerate()
                .try_for_each(score_block)?,
        }
        // The cluster-wide maximum of each default-normalized plugin; the other normalizing
        // plugins' columns through their own NormalizeScore, written back in place.
        max.clear();
        max.resize(p, 0);
        let mut second_pass = false;
        for (j, (pl, _)) in plugins.iter().enumerate() {
            if defaults[j].is_some() {
                max[j] = (0..blocks).map(|b| block_max[b * p + j]).fold(0, i64::max);
                second_pass |= max[j] != 0;
            } else if normalizes[j] {
                second_pass = true;
                column.resize(f, 0);
                let column = &mut column[..f];
                for (b, block) in scores.chunks(chunk).enumerate() {
                    let len = block.len() / p;
                    column[b * SCORE_BLOCK..b * SCORE_BLOCK + len]
                        .copy_from_slice(&block[j * len..(j + 1) * len]);
                }
                let st = pl.normalize_score(state, pod, column);
                if !st.is_success() {
                    return Err(st.with_plugin(pl.name()));
                }
                for (b, block) in scores.chunks_mut(chunk).enumerate() {
                    let len = block.len() / p;
                    block[j * len..(j + 1) * len]
                        .copy_from_slice(&column[b * SCORE_BLOCK..b * SCORE_BLOCK + len]);
                }
            }
        }
        if second_pass {
            type Weigh<'a> = ((&'a mut [i64], &'a [i64]), &'a mut Best);
            let weigh_block = |((tot, block), best): Weigh<'_>| {
                let len = tot.len();
                for (j, ((_, w), column)) in plugins.iter().zip(block.chunks(len)).enumerate() {
                    match defaults[j] {
                        // All 0: the same amount on every node (see above).
                        Some(_) if max[j] == 0 => {}
                        // kube's DefaultNormalizeScore, from the cluster-wide maximum.
                        Some(reverse) => {
                            let m = max[j];
                            for (t, &s) in tot.iter_mut().zip(column) {
                                let n = MAX_NODE_SCORE * s / m;
                                *t += if reverse { MAX_NODE_SCORE - n } else { n } * w;
                            }
                        }
                        None if normalizes[j] => {
                            for (t, &s) in tot.iter_mut().zip(column) {
                                *t += s * w;
                            }
                        }
                        // Weighed in the first pass.
                        None => {}
                    }
                }
                *best = Best::of(tot);
            };
            match pool {
                Some(pool) => pool.install(|| {
                    totals
                        .par_chunks_mut(SCORE_BLOCK)
                        .zip(scores.par_chunks(chunk))
                        .zip(block_best.par_iter_mut())
                        .for_each(weigh_block)
                }),
                None => totals
                    .chunks_mut(SCORE_BLOCK)
                    .zip(scores.chunks(chunk))
                    .zip(block_best.iter_mut())
                    .for_each(weigh_block),
            }
        }
        Ok(self.select_host_by_blocks(totals, block_best))
    }

    /// [`Scheduler::select_host`] from each block's best total and its count: the same
    /// uniform draw among all the nodes with the highest total, found by walking the blocks.
    fn select_host_by_blocks(&self, totals: &[i64], block_best: &[Best]) -> usize {
        let Some(max) = block_best.iter().map(|b| b.total).max() else {
            return 0;
        };
        let ties: usize = block_best
            .iter()
            .filter(|b| b.total == max)
            .map(|b| b.count)
            .sum();
        let mut k = if ties > 1 {
            self.rng.lock().random_range(0..ties)
        } else {
            0
        };
        for (b, &Best { total: t, count: c }) in block_best.iter().enumerate() {
            if t != max {
                continue;
            }
            if k < c {
                let block =
                    &totals[b * SCORE_BLOCK..(b * SCORE_BLOCK + SCORE_BLOCK).min(totals.len())];
                let o = block
                    .iter()
                    .enumerate()
                    .filter(|&(_, &t)| t == max)
                    .nth(k)
                    .map_or(0, |(o, _)| o);
                return b * SCORE_BLOCK + o;
            }
            k -= c;
        }
        0
    }

    /// Uniform random choice among the nodes with the highest total (kube's `selectHost`
    /// draws per tie while it scans; one draw after counting the ties is the same uniform
    /// choice for one random number instead of one per tied node).
    fn select_host(&self, totals: &[i64]) -> usize {
        let Some(&max) = totals.iter().max() else {
            return 0;
        };
        let ties = totals.iter().filter(|&&t| t == max).count();
        let k = if ties > 1 {
            self.rng.lock().random_range(0..ties)
        } else {
            0
        };
        totals
            .iter()
            .enumerate()
            .filter(|&(_, &t)| t == max)
            .nth(k)
            .map_or(0, |(i, _)| i)
    }
}

/// Nodes per Score block: every score plugin scores a block before the next block starts.
const SCORE_BLOCK: usize = 64;

/// Score's buffers, kept from one cycle to the next (a fresh zeroed allocation of
/// nodes × plugins scores per cycle cost page faults and a memset each time).
#[derive(Default)]
pub(crate) struct ScoreScratch {
    /// Per block, the block's scores of plugin 0, then of plugin 1, and so on.
    scores: Vec<i64>,
    /// One plugin's scores in node order (NormalizeScore's input).
    column: Vec<i64>,
    /// The weighted total per feasible node.
    totals: Vec<i64>,
    /// Per block, each default-normalized plugin's maximum score (others: unused).
    block_max: Vec<i64>,
    /// Per block, its highest total and how many of its nodes reach it.
    block_best: Vec<Best>,
    /// The feasible nodes' rows, in `feasible` order (each block copies its own).
    rows: Vec<NodeRow>,
    /// Per active plugin: it has NormalizeScore; Some(reverse) when that is kube's default;
    /// the cluster-wide maximum of a default-normalized one.
    normalizes: Vec<bool>,
    defaults: Vec<Option<bool>>,
    max: Vec<i64>,
}

/// A block's highest total and how many of its nodes reach it.
#[derive(Clone, Copy, Default)]
pub(crate) struct Best {
    total: i64,
    count: usize,
}

impl Best {
    fn of(totals: &[i64]) -> Best {
        let total = totals.iter().copied().max().unwrap_or(i64::MIN);
        let count = totals.iter().filter(|&&t| t == total).count();
        Best { total, count }
    }
}

fn rejection(st: Status) -> Failure {
    Failure {
        status: st,
        diagnosis: None,
    }
}

/// kube's FitError message: `0/N nodes are available: <count> <reason>, ...` with the reason
/// strings sorted.
fn fit_error(
    all: usize,
    excluded: usize,
    rejected: Vec<(usize, Status)>,
    nodes: &[Arc<crate::framework::NodeInfo>],
) -> Failure {
    let mut counts: AHashMap<crate::framework::status::Reason, usize> = AHashMap::new();
    let mut diagnosis = Diagnosis::default();
    for (i, st) in rejected {
        for r in st.reasons() {
            *counts.entry(r.clone()).or_default() += 1;
        }
        let plugin = st.plugin();
        if st.code() == Code::Pending {
            if !diagnosis.pending_plugins.contains(&plugin) {
                diagnosis.pending_plugins.push(plugin);
            }
        } else if !diagnosis.unschedulable_plugins.contains(&plugin) {
            diagnosis.unschedulable_plugins.push(plugin);
        }
        diagnosis.node_statuses.push((nodes[i].name(), st));
    }
    if excluded > 0 {
        *counts
            .entry("node(s) didn't satisfy plugin(s) [PreFilter result]".into())
            .or_default() += excluded;
    }
    let mut parts: Vec<String> = counts
        .into_iter()
        .map(|(r, c)| format!("{c} {r}"))
        .collect();
    parts.sort();
    let msg = format!("0/{all} nodes are available: {}.", parts.join(", "));
    Failure {
        status: Status::new(Code::Unschedulable, msg),
        diagnosis: Some(Box::new(diagnosis)),
    }
}

/// Re-exported for harnesses that build pods by key.
pub type Key = PodKey;

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
mod tests {
    use super::*;
    use crate::framework::interface::ClusterClient;

    struct Client;
    impl ClusterClient for Client {
        fn bind(&self, _: &Pod, _: Sym) -> Result<(), String> {
            Ok(())
        }
        fn pod_exists_unassigned(&self, _: &Pod) -> bool {
            true
        }
    }

    fn task(name: &str) -> BindingTask {
        let pod = Arc::new(Pod::new(
            "ns",
            name,
            Arc::new(crate::api::PodSpecInfo::default()),
        ));
        BindingTask {
            fwk: 0,
            state: CycleState::new(),
            qpi: QueuedPodInfo::new(pod.clone(), Duration::ZERO),
            assumed: pod,
            host: Sym::new("n1"),
            start: Instant::now(),
            cycle: 0,
            permit: None,
        }
    }

    /// A sleeping binder is woken by an eager push, a full batch, the scheduler going idle, or
    /// a task that lingered past BIND_LINGER; not by a lazy push alone.
    #[test]
    fn the_binder_is_woken_per_batch_not_per_task() {
        let q = Arc::new(BindQueue::default());
        q.open();
        let got = Arc::new(parking_lot::Mutex::new(Vec::<usize>::new()));
        let worker = {
            let (q, got) = (q.clone(), got.clone());
            std::thread::spawn(move || {
                let mut batch = std::collections::VecDeque::new();
                while q.take_batch(&mut batch) {
                    got.lock().push(batch.len());
                    batch.clear();
                }
            })
        };
        let asleep = || {
            let deadline = Instant::now() + Duration::from_secs(5);
            while q.state.lock().sleeping == 0 && Instant::now() < deadline {
                std::thread::yield_now();
            }
            q.state.lock().sleeping > 0
        };
        let taken = |n: usize| {
            let deadline = Instant::now() + Duration::from_secs(5);
            while got.lock().len() < n && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
            }
            got.lock().clone()
        };
        assert!(asleep());
        // A lazy push and a busy nudge before the linger time: the worker sleeps on.
        let pushed = Instant::now();
        assert!(q.push(task("a"), false).is_none());
        q.nudge(false);
        // Only when this thread was not descheduled past the linger time in between (a
        // loaded machine does that) is the nudge "before the linger time".
        let prompt = pushed.elapsed() < BIND_LINGER;
        std::thread::sleep(Duration::from_millis(30));
        if prompt {
            assert!(got.lock().is_empty(), "woken by a lazy push");
        }
        // Past the linger time, a busy nudge wakes it.
        q.nudge(false);
        assert_eq!(taken(1), vec![1]);
        // A full batch wakes it without a nudge.
        assert!(asleep());
        for i in 0..BIND_BATCH {
            assert!(q.push(task(&format!("b{i}")), false).is_none());
        }
        assert_eq!(taken(2), vec![1, BIND_BATCH]);
        // Going idle hands over a partial batch; an eager push wakes it at once.
        assert!(asleep());
        assert!(q.push(task("c"), false).is_none());
        q.nudge(true);
        assert_eq!(taken(3), vec![1, BIND_BATCH, 1]);
        assert!(asleep());
        assert!(q.push(task("d"), true).is_none());
        assert_eq!(taken(4), vec![1, BIND_BATCH, 1, 1]);
        q.close();
        worker.join().unwrap();
    }

    /// kube's selectHost: the highest total wins; among ties every one is equally likely.
    #[test]
    fn select_host_picks_uniformly_among_the_highest() {
        let s = Scheduler::new(
            SchedulerConfig::default(),
            &Registry::in_tree(),
            Arc::new(Client),
            None,
        )
        .unwrap();
        assert_eq!(s.select_host(&[]), 0);
        assert_eq!(s.select_host(&[4]), 0);
        for _ in 0..50 {
            assert_eq!(s.select_host(&[3, 8, 1, 7]), 1);
        }
        let totals = [5, 9, 3, 9, 9, 1];
        let mut hits = [0usize; 6];
        let draws = 6000;
        for _ in 0..draws {
            hits[s.select_host(&totals)] += 1;
        }
        assert_eq!(
            hits[0] + hits[2] + hits[5],
            0,
            "only the best may win: {hits:?}"
        );
        for i in [1, 3, 4] {
            let share = hits[i] as f64 / draws as f64;
            assert!(
                (0.29..0.38).contains(&share),
                "tie {i} won {share:.3}: {hits:?}"
            );
        }
    }
}
