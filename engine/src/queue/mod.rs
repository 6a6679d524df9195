//! The scheduling queue (kube's `PriorityQueue`). See `README.md` beside this file for the
//! protocol and its invariants.

pub mod active;
pub mod backoff;
/// The clock moved to [`crate::clock`]; this path stays for existing callers.
pub use crate::clock;
pub mod gated;
pub mod heap;
pub mod nominator;
#[cfg(test)]
mod tests;
pub mod unschedulable;

use crate::api::labels::Labels;
use crate::api::{Pod, PodKey, Sym};
use crate::clock::{Clock, Time};
/// `QueuedPodInfo` lives in the framework (kube's `framework/types.go`); re-exported here.
pub use crate::framework::QueuedPodInfo;
use crate::framework::events::{ActionType, ClusterEvent, EventResource, labels};
use crate::framework::events::{EventObject, QueueingHint, pod_scheduling_properties_change};
use crate::framework::interface::{EnqueueExtensions, PreEnqueuePlugin, QueueSortPlugin};
use crate::framework::metrics::{ExtensionPoint, Metrics, Series};
use crate::framework::status::Code;
use crate::sync::{Condvar, Mutex};
use active::ActiveQ;
use ahash::AHashMap;
use backoff::BackoffQueue;
use gated::GatedPods;
use nominator::{Nominating, Nominator};
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use unschedulable::UnschedulablePods;

/// kube's backoff ordering window (`SchedulerPopFromBackoffQ`): 1 s.
pub const BACKOFF_WINDOW: Duration = Duration::from_secs(1);

/// `t` truncated to its [`BACKOFF_WINDOW`].
fn align_to_window(t: Time) -> Time {
    let w = BACKOFF_WINDOW.as_nanos();
    Duration::from_nanos(u64::try_from(t.as_nanos() / w * w).unwrap_or(u64::MAX))
}

/// Queue tunables (kube's defaults).
#[derive(Clone, Debug)]
pub struct QueueConfig {
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    pub max_in_unschedulable: Duration,
    pub backoff_flush_period: Duration,
    pub unschedulable_flush_period: Duration,
    /// activeQ shards; 0 = one per available thread (at least 2).
    pub active_shards: usize,
    /// The `SchedulerQueueingHints` feature gate (on by default, as in kube 1.34): hint
    /// functions decide requeues, and events that arrive while pods are in flight are replayed
    /// when those pods come back. Off: kube's older move-request-cycle rule.
    pub queueing_hints: bool,
    /// The `SchedulerPopFromBackoffQ` feature gate (on by default, as in kube 1.33+): `Pop`
    /// takes the first plugin-rejected pod from backoffQ when activeQ is empty instead of
    /// waiting; backoff expiries are 1 s windows, ties within a window in QueueSort order;
    /// PreEnqueue runs when a pod enters backoffQ, not when it leaves it.
    pub pop_from_backoff: bool,
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig {
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(10),
            max_in_unschedulable: Duration::from_secs(300),
            backoff_flush_period: Duration::from_secs(1),
            unschedulable_flush_period: Duration::from_secs(30),
            active_shards: 0,
            queueing_hints: true,
            pop_from_backoff: true,
        }
    }
}

/// Pending pods per queue (the `scheduler_pending_pods` gauges), plus pods popped and not done.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PendingCounts {
    pub active: usize,
    pub backoff: usize,
    pub unschedulable: usize,
    pub gated: usize,
    pub in_flight: usize,
}

impl PendingCounts {
    pub fn total(&self) -> usize {
        self.active + self.backoff + self.unschedulable + self.gated + self.in_flight
    }
}

enum InFlightItem {
    Popped(PodKey),
    Event(ClusterEvent, EventObject, EventObject),
}

/// kube's queueing strategies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Strategy {
    Skip,
    AfterBackoff,
    Immediately,
}

/// An in-flight pod: popped, not yet Done.
struct InFlight {
    /// The latest object seen while in flight (kube refreshes it from the informer).
    latest: Option<Arc<Pod>>,
    deleted: bool,
    /// The pod itself was updated while in flight. Without QueueingHints kube's `Update` puts
    /// such a pod in activeQ at once, so a failure brings it straight back there.
    updated: bool,
}

struct Inner {
    backoff: BackoffQueue,
    unschedulable: UnschedulablePods,
    in_flight: AHashMap<PodKey, InFlight>,
    /// With QueueingHints: popped-pod markers and the cluster events received while any pod is
    /// in flight, in arrival order.
    in_flight_events: VecDeque<InFlightItem>,
    sched_cycle: i64,
    move_request_cycle: i64,
    closed: bool,
    next_backoff_flush: Time,
    next_unschedulable_flush: Time,
}

/// The scheduling queue.
pub struct SchedulingQueue {
    /// activeQ, outside the queue lock (sharded; see `active.rs`).
    active: ActiveQ,
    /// Set by a `pop` about to block, so that lock-free pushes know to wake it.
    waiting: AtomicBool,
    /// Pods a PreEnqueue plugin refused (lock-free; see `gated.rs`).
    gated: GatedPods,
    /// Nominated pods per node (`nominatedNodeName`).
    pub nominator: Nominator,
    /// Everything else: backoffQ, the unschedulable pool, in-flight pods.
    inner: Mutex<Inner>,
    cond: Condvar,
    /// PreEnqueue plugins per profile (`spec.schedulerName`).
    pre_enqueue: AHashMap<Sym, Vec<Arc<dyn PreEnqueuePlugin>>>,
    /// Events registered by each plugin (EnqueueExtensions).
    plugin_events: AHashMap<&'static str, Vec<ClusterEvent>>,
    /// The plugins' QueueingHint functions.
    hints: AHashMap<&'static str, Arc<dyn EnqueueExtensions>>,
    clock: Arc<dyn Clock>,
    metrics: Arc<Metrics>,
    cfg: QueueConfig,
}

/// Why AddUnschedulableIfNotPresent refused a pod.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueueError {
    #[error("a pod {0} is already present in the scheduling queue")]
    AlreadyPresent(PodKey),
}

impl SchedulingQueue {
    pub fn new(
        queue_sort: Arc<dyn QueueSortPlugin>,
        pre_enqueue: AHashMap<Sym, Vec<Arc<dyn PreEnqueuePlugin>>>,
        plugin_events: AHashMap<&'static str, Vec<ClusterEvent>>,
        clock: Arc<dyn Clock>,
        metrics: Arc<Metrics>,
        cfg: QueueConfig,
    ) -> SchedulingQueue {
        let qs = queue_sort.clone();
        let now = clock.now();
        let shards = if cfg.active_shards == 0 {
            active::default_shards()
        } else {
            cfg.active_shards
        };
        let qs2 = queue_sort.clone();
        let ties: Option<backoff::TieBreak> = cfg.pop_from_backoff.then(|| {
            Arc::new(move |a: &QueuedPodInfo, b: &QueuedPodInfo| qs2.less(a, b))
                as backoff::TieBreak
        });
        SchedulingQueue {
            active: ActiveQ::new(
                shards,
                Arc::new(move |a: &QueuedPodInfo, b: &QueuedPodInfo| qs.less(a, b)),
            ),
            waiting: AtomicBool::new(false),
            gated: GatedPods::default(),
            nominator: Nominator::default(),
            inner: Mutex::new(Inner {
                backoff: BackoffQueue::new(ties),
                unschedulable: UnschedulablePods::default(),
                in_flight: AHashMap::new(),
                in_flight_events: VecDeque::new(),
                sched_cycle: 0,
                move_request_cycle: -1,
                closed: false,
                next_backoff_flush: now + cfg.backoff_flush_period,
                next_unschedulable_flush: now + cfg.unschedulable_flush_period,
            }),
            cond: Condvar::new(),
            pre_enqueue,
            plugin_events,
            hints: AHashMap::new(),
            clock,
            metrics,
            cfg,
        }
    }

    /// Registers `events` for `plugin` (as if its EnqueueExtensions said so; no hint).
    pub fn with_plugin_events(mut self, plugin: &'static str, events: Vec<ClusterEvent>) -> Self {
        self.plugin_events.insert(plugin, events);
        self
    }

    /// Installs the plugins' QueueingHint functions (without them every registration behaves
    /// as Queue).
    pub fn with_queueing_hints(
        mut self,
        hints: AHashMap<&'static str, Arc<dyn EnqueueExtensions>>,
    ) -> SchedulingQueue {
        self.hints = hints;
        self
    }

    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    // ---- PreEnqueue ---------------------------------------------------------------------

    /// Runs the PreEnqueue plugins (the one that gated the pod last time first). Returns
    /// whether the pod may enter activeQ; on rejection sets `gating_plugin` and records the
    /// plugin among the pod's rejectors. Every run is timed for the extension-point series;
    /// the per-plugin series is recorded for a 10 % sample of runs, as kube's
    /// `runPreEnqueuePlugins` does.
    fn run_pre_enqueue(&self, q: &mut QueuedPodInfo) -> bool {
        let record_plugins = crate::framework::metrics::sample_plugin_metrics();
        // Plugins are timed back to back (one clock read per boundary) and recorded after the
        // run, so neither figure includes the cost of recording the other.
        const MAX_TIMED: usize = 8;
        let mut timed: [(&'static str, Code, u64); MAX_TIMED] = [("", Code::Success, 0); MAX_TIMED];
        let mut n_timed = 0;
        let mut rejected: Option<(&'static str, Code)> = None;
        let first = q.gating_plugin;
        let plugins: &[Arc<dyn PreEnqueuePlugin>] = self
            .pre_enqueue
            .get(&q.pod.spec.scheduler_name)
            .map_or(&[], Vec::as_slice);
        let order = first
            .and_then(|f| plugins.iter().find(|p| p.name() == f))
            .into_iter()
            .chain(plugins.iter().filter(|p| Some(p.name()) != first));
        let start = Instant::now();
        let mut last = start;
        for p in order {
            let st = p.pre_enqueue(&q.pod);
            let now = Instant::now();
            let d = (now - last).as_nanos() as u64;
            last = now;
            if record_plugins {
                if n_timed < MAX_TIMED {
                    timed[n_timed] = (p.name(), st.code(), d);
                    n_timed += 1;
                } else {
                    self.metrics.observe(
                        Series::Plugin(p.name(), ExtensionPoint::PreEnqueue, st.code()),
                        d,
                    );
                }
            }
            if !st.is_success() {
                rejected = Some((p.name(), st.code()));
                break;
            }
        }
        let total = (last - start).as_nanos() as u64;
        for &(name, code, d) in &timed[..n_timed] {
            self.metrics
                .observe(Series::Plugin(name, ExtensionPoint::PreEnqueue, code), d);
        }
        let code = rejected.map_or(Code::Success, |(_, c)| c);
        self.metrics.observe(
            Series::ExtensionPoint(ExtensionPoint::PreEnqueue, code),
            total,
        );
        match rejected {
            None => {
                q.gating_plugin = None;
                true
            }
            Some((name, _)) => {
                if !q.unschedulable_plugins.contains(&name) {
                    q.unschedulable_plugins.push(name);
                    self.metrics.add_unschedulable(name, 1);
                }
                q.gating_plugin = Some(name);
                false
            }
        }
    }

    // ---- internal moves (lock held) -------------------------------------------------------

    /// kube's moveToActiveQ: PreEnqueue at the door; a gated pod goes to the gated set.
    fn move_to_active(&self, inner: &mut Inner, mut q: QueuedPodInfo, event: &str) -> bool {
        if !self.run_pre_enqueue(&mut q) {
            self.metrics.inc_incoming("unschedulable", event);
            self.gated.insert(q);
            return false;
        }
        self.push_active(inner, q, event);
        true
    }

    /// Pushes a pod that already passed PreEnqueue.
    fn push_active(&self, inner: &mut Inner, mut q: QueuedPodInfo, event: &str) {
        if q.initial_attempt_timestamp.is_none() {
            q.initial_attempt_timestamp = Some(self.clock.now());
        }
        let key = q.pod.key.clone();
        inner.unschedulable.remove(&key);
        inner.backoff.remove(&key);
        self.active.push(q);
        self.metrics.inc_incoming("active", event);
        // The lock is held: a popper is either waiting (and gets this) or not yet checking.
        self.cond.notify_one();
    }

    /// Wakes a blocked `pop` after a push made without the queue lock.
    fn wake(&self) {
        if self.waiting.load(Ordering::SeqCst) {
            let _g = self.inner.lock();
            self.cond.notify_one();
        }
    }

    fn move_to_backoff(&self, inner: &mut Inner, mut q: QueuedPodInfo, event: &str) {
        inner.unschedulable.remove(&q.pod.key);
        // With PopFromBackoffQ, PreEnqueue runs at the door of backoffQ (the pod may leave it
        // for a Pop at any time), and a pod it gates goes to the gated set.
        if self.cfg.pop_from_backoff && !self.run_pre_enqueue(&mut q) {
            self.metrics.inc_incoming("unschedulable", event);
            self.gated.insert(q);
            return;
        }
        let expiry = self.backoff_expiry(&q);
        inner.backoff.push(expiry, q);
        self.metrics.inc_incoming("backoff", event);
        if self.cfg.pop_from_backoff {
            // A popper waiting on an empty activeQ may take it now (the lock is held).
            self.cond.notify_one();
        }
    }

    /// Backoff: `initial × 2^(attempts−1)`, capped at max; zero attempts means no backoff.
    pub fn backoff_duration(&self, q: &QueuedPodInfo) -> Duration {
        if q.attempts == 0 {
            return Duration::ZERO;
        }
        let shift = (q.attempts - 1).min(30);
        let d = self.cfg.initial_backoff.saturating_mul(1u32 << shift);
        d.min(self.cfg.max_backoff)
    }

    /// When the pod's backoff ends: its timestamp plus the backoff duration, truncated to the
    /// 1 s ordering window with PopFromBackoffQ.
    fn backoff_expiry(&self, q: &QueuedPodInfo) -> Time {
        let e = q.timestamp + self.backoff_duration(q);
        if self.cfg.pop_from_backoff {
            align_to_window(e)
        } else {
            e
        }
    }

    /// Whether a pod that failed is still waiting for its backoff: its expiry is after now
    /// (with PopFromBackoffQ: its expiry window is not before now's window).
    fn is_backing_off(&self, q: &QueuedPodInfo, now: Time) -> bool {
        if q.attempts == 0 {
            return false;
        }
        if self.cfg.pop_from_backoff {
            self.backoff_expiry(q) >= align_to_window(now)
        } else {
            self.backoff_expiry(q) > now
        }
    }

    fn requeue(&self, inner: &mut Inner, q: QueuedPodInfo, event: &str, now: Time) {
        if self.is_backing_off(&q, now) {
            self.move_to_backoff(inner, q, event);
        } else {
            let key = q.pod.key.clone();
            inner.unschedulable.remove(&key);
            self.move_to_active(inner, q, event);
        }
    }

    /// kube's isPodWorthRequeuing: what `event` means for a pod rejected by its rejector
    /// plugins. Each hint call is timed.
    fn worth_requeuing(
        &self,
        q: &QueuedPodInfo,
        event: &ClusterEvent,
        old: &EventObject,
        new: &EventObject,
    ) -> Strategy {
        if q.rejectors().next().is_none() || event.is_wildcard() {
            return Strategy::AfterBackoff;
        }
        let mut result = Strategy::Skip;
        for p in q.rejectors() {
            let registered = self
                .plugin_events
                .get(p)
                .is_some_and(|evs| evs.iter().any(|r| r.matches(event)));
            if !registered {
                continue;
            }
            let hint = match self.hints.get(p) {
                Some(ext) => {
                    let t = Instant::now();
                    let h = ext.queueing_hint(event, &q.pod, old, new);
                    self.metrics.observe(
                        Series::QueueingHint(p, *event, h.as_ref().ok().copied()),
                        t.elapsed().as_nanos() as u64,
                    );
                    h.unwrap_or(QueueingHint::Queue)
                }
                None => QueueingHint::Queue,
            };
            if hint == QueueingHint::QueueSkip {
                continue;
            }
            if q.pending_plugins.contains(&p) {
                return Strategy::Immediately;
            }
            result = Strategy::AfterBackoff;
            if q.pending_plugins.is_empty() {
                return result;
            }
        }
        result
    }

    /// kube's requeuePodWithQueueingStrategy.
    fn requeue_with(
        &self,
        inner: &mut Inner,
        q: QueuedPodInfo,
        s: Strategy,
        event: &str,
        now: Time,
    ) {
        match s {
            Strategy::Skip => {
                self.metrics.inc_incoming("unschedulable", event);
                inner.unschedulable.insert(q);
            }
            Strategy::AfterBackoff if self.is_backing_off(&q, now) => {
                self.move_to_backoff(inner, q, event)
            }
            _ => {
                inner.unschedulable.remove(&q.pod.key);
                self.move_to_active(inner, q, event);
            }
        }
    }

    /// Drops a popped pod's marker and the events no remaining in-flight pod needs.
    fn forget_in_flight(&self, inner: &mut Inner, key: &PodKey) {
        if let Some(i) = inner
            .in_flight_events
            .iter()
            .position(|it| matches!(it, InFlightItem::Popped(k) if k == key))
        {
            inner.in_flight_events.remove(i);
        }
        while matches!(
            inner.in_flight_events.front(),
            Some(InFlightItem::Event(..))
        ) {
            inner.in_flight_events.pop_front();
        }
    }

    // ---- informer-facing operations -------------------------------------------------------

    /// A new unassigned pod (informer add: each pod is added once, before its updates and
    /// its delete). PreEnqueue runs without any queue lock; a pod that passes goes straight to
    /// its home activeQ shard, so producers on different threads do not contend.
    pub fn add(&self, pod: Arc<Pod>) {
        let now = self.clock.now();
        let mut q = QueuedPodInfo::new(pod, now);
        if self.active.contains(&q.pod.key) {
            return;
        }
        if self.run_pre_enqueue(&mut q) {
            q.initial_attempt_timestamp = Some(now);
            if q.pod.nominated_node_name.is_some() {
                self.nominator.add(&q.pod, Nominating::FromStatus);
            }
            self.active.push(q);
            self.metrics
                .inc_incoming("active", labels::UNSCHEDULED_POD_ADD);
            self.wake();
        } else {
            self.metrics
                .inc_incoming("unschedulable", labels::UNSCHEDULED_POD_ADD);
            self.gated.insert(q);
        }
    }

    /// An update of an unassigned pod.
    pub fn update(&self, old: &Pod, new: Arc<Pod>) {
        let now = self.clock.now();
        let key = new.key.clone();
        if !new.is_gated() {
            self.nominator.update(old, &new);
        }
        // A gated pod is in no other structure (not in flight, not in any heap or pool), so
        // its update needs no queue lock unless it must go to backoffQ.
        if let Some(q) = self.gated.remove(&key) {
            self.update_gated(q, old, new, now);
            return;
        }
        let mut inner = self.inner.lock();
        if let Some(f) = inner.in_flight.get_mut(&key) {
            // kube's addEventsIfPodInFlight: the update's events join the in-flight events,
            // so that if this attempt fails, the hints judge the pod by its own update (a
            // toleration added, a label changed) instead of parking it for good.
            f.latest = Some(new.clone());
            f.updated = true;
            if self.cfg.queueing_hints {
                let o = EventObject::Pod(Arc::new(old.clone()));
                let n = EventObject::Pod(new.clone());
                for ev in pod_scheduling_properties_change(old, &new) {
                    inner
                        .in_flight_events
                        .push_back(InFlightItem::Event(ev, o.clone(), n.clone()));
                }
            }
            return;
        }
        if let Some(mut q) = self.active.get(&key) {
            q.pod = new;
            self.active.push(q);
            return;
        }
        if inner.backoff.update_pod(&key, new.clone()) {
            return;
        }
        if let Some(mut q) = inner.unschedulable.remove(&key) {
            if self.cfg.queueing_hints {
                // One event per changed scheduling property; the first that helps moves it.
                let events = pod_scheduling_properties_change(old, &new);
                let (o, n) = (
                    EventObject::Pod(Arc::new(old.clone())),
                    EventObject::Pod(new.clone()),
                );
                q.pod = new;
                for ev in events {
                    let s = self.worth_requeuing(&q, &ev, &o, &n);
                    if s != Strategy::Skip {
                        self.requeue_with(&mut inner, q, s, &ev.label(), now);
                        return;
                    }
                }
                inner.unschedulable.insert(q);
                return;
            }
            let changed = old.labels != new.labels || !Arc::ptr_eq(&old.spec, &new.spec);
            q.pod = new;
            if changed {
                self.requeue(&mut inner, q, labels::UNSCHEDULED_POD_UPDATE, now);
            } else {
                inner.unschedulable.insert(q);
            }
            return;
        }
        self.move_to_active(
            &mut inner,
            QueuedPodInfo::new(new, now),
            labels::UNSCHEDULED_POD_UPDATE,
        );
    }

    /// The update of a pod taken out of the gated set: PreEnqueue again if the gating plugin
    /// registered the event (UpdatePodSchedulingGatesEliminated when the last gate went),
    /// then activeQ (without the queue lock, as `add`), backoffQ, or back to the gated set.
    fn update_gated(&self, mut q: QueuedPodInfo, old: &Pod, new: Arc<Pod>, now: Time) {
        let gates_eliminated = old.is_gated() && !new.is_gated();
        q.pod = new;
        let event = ClusterEvent::new(
            EventResource::UnscheduledPod,
            if gates_eliminated {
                ActionType::UPDATE_POD_SCHEDULING_GATES_ELIMINATED
            } else {
                ActionType::UPDATE
            },
        );
        // Only an event the gating plugin registered re-runs PreEnqueue.
        let registered = q.gating_plugin.is_none_or(|g| {
            self.plugin_events
                .get(g)
                .is_some_and(|evs| evs.iter().any(|r| r.matches(&event)))
        });
        if !registered {
            self.gated.insert(q);
            return;
        }
        let label = event.label();
        let gated_since = q.gating_plugin.map(|_| q.timestamp);
        if self.is_backing_off(&q, now) {
            // Gated after a failed attempt: its backoff still runs (kube's requeuePodViaQueueingHint).
            let mut inner = self.inner.lock();
            self.move_to_backoff(&mut inner, q, &label);
        } else if self.run_pre_enqueue(&mut q) {
            q.initial_attempt_timestamp.get_or_insert(now);
            self.active.push(q);
            self.metrics.inc_incoming("active", &label);
            self.wake();
        } else {
            self.metrics.inc_incoming("unschedulable", &label);
            self.gated.insert(q);
            return;
        }
        if let Some(since) = gated_since {
            self.metrics.observe(
                Series::GateWait,
                now.saturating_sub(since).as_nanos() as u64,
            );
        }
    }

    /// A pod this scheduler assumed got bound. It was popped and, while assumed, its updates
    /// are bypassed (kube's updatePodInSchedulingQueue), so no heap, pool or the gated set can
    /// hold it: only the nominator and an in-flight record still running. Unlike
    /// [`SchedulingQueue::delete`] this never probes the gated set, so binding costs nothing
    /// more with a million gated pods held.
    pub fn delete_scheduled(&self, key: &PodKey) {
        self.nominator.delete(key);
        debug_assert!(!self.gated.contains(key), "an assumed pod is never gated");
        let mut inner = self.inner.lock();
        if let Some(f) = inner.in_flight.get_mut(key) {
            f.deleted = true;
            return;
        }
        debug_assert!(
            !self.active.contains(key),
            "an assumed pod is never in activeQ"
        );
    }

    /// A pod was deleted (or got assigned): remove it wherever it is.
    pub fn delete(&self, key: &PodKey) {
        self.nominator.delete(key);
        let mut inner = self.inner.lock();
        if let Some(f) = inner.in_flight.get_mut(key) {
            f.deleted = true;
            return;
        }
        let removed = self
            .active
            .remove(key)
            .or_else(|| inner.backoff.remove(key))
            .or_else(|| inner.unschedulable.remove(key))
            .or_else(|| self.gated.remove(key));
        if let Some(q) = removed {
            for p in q.rejectors() {
                self.metrics.add_unschedulable(p, -1);
            }
        }
    }

    /// Takes the best pod from activeQ, if any (lock held).
    fn pop_ready(&self, inner: &mut Inner) -> Option<QueuedPodInfo> {
        let mut q = match self.active.try_pop() {
            Some(q) => q,
            // kube's activeQueue.unlockedPop with SchedulerPopFromBackoffQ: an empty activeQ
            // hands out the first plugin-rejected pod of backoffQ rather than wait.
            None if self.cfg.pop_from_backoff => {
                let mut q = inner.backoff.pop_rejected()?;
                if q.initial_attempt_timestamp.is_none() {
                    q.initial_attempt_timestamp = Some(self.clock.now());
                }
                self.metrics
                    .inc_incoming("active", labels::POP_FROM_BACKOFF_Q);
                q
            }
            None => return None,
        };
        q.attempts += 1;
        inner.sched_cycle += 1;
        for p in q.rejectors() {
            self.metrics.add_unschedulable(p, -1);
        }
        q.unschedulable_plugins.clear();
        q.pending_plugins.clear();
        inner.in_flight.insert(
            q.pod.key.clone(),
            InFlight {
                latest: None,
                deleted: false,
                updated: false,
            },
        );
        if self.cfg.queueing_hints {
            inner
                .in_flight_events
                .push_back(InFlightItem::Popped(q.pod.key.clone()));
        }
        Some(q)
    }

    /// Blocks until a pod is ready to be scheduled, or the queue is closed (`None`; pods still
    /// queued stay where they are and are counted as pending).
    pub fn pop(&self) -> Option<QueuedPodInfo> {
        let mut inner = self.inner.lock();
        loop {
            if inner.closed {
                return None;
            }
            self.run_due_flushes(&mut inner);
            if let Some(q) = self.pop_ready(&mut inner) {
                return Some(q);
            }
            // Announce the wait, then look once more: a lock-free push either sees the flag
            // (and notifies under the lock, after we wait) or happened before this second look.
            self.waiting.store(true, Ordering::SeqCst);
            if let Some(q) = self.pop_ready(&mut inner) {
                self.waiting.store(false, Ordering::SeqCst);
                return Some(q);
            }
            // Wake for the next flush tick at the latest (real time; capped so that a virtual
            // clock moved by another thread is noticed).
            let now = self.clock.now();
            let next = inner.next_backoff_flush.min(inner.next_unschedulable_flush);
            let wait = next
                .saturating_sub(now)
                .clamp(Duration::from_millis(1), Duration::from_millis(50));
            crate::sync::wait_for(&self.cond, &mut inner, wait);
            self.waiting.store(false, Ordering::SeqCst);
        }
    }

    /// Non-blocking pop: runs the flushes that are due, then takes the best pod if any.
    pub fn try_pop(&self) -> Option<QueuedPodInfo> {
        let mut inner = self.inner.lock();
        self.run_due_flushes(&mut inner);
        self.pop_ready(&mut inner)
    }

    /// The pod finished its cycle (bound, or handed back through
    /// [`SchedulingQueue::add_unschedulable_if_not_present`]).
    pub fn done(&self, key: &PodKey) {
        let mut inner = self.inner.lock();
        inner.in_flight.remove(key);
        self.forget_in_flight(&mut inner, key);
    }

    /// The current scheduling cycle (number of pops so far).
    pub fn scheduling_cycle(&self) -> i64 {
        self.inner.lock().sched_cycle
    }

    /// Puts back a pod whose attempt failed (kube's AddUnschedulableIfNotPresent, with
    /// QueueingHints off: backoffQ if a move request arrived during its cycle or it failed with
    /// an error, else the unschedulable pool). A pod deleted while in flight is dropped.
    pub fn add_unschedulable_if_not_present(
        &self,
        mut q: QueuedPodInfo,
        pod_sched_cycle: i64,
    ) -> Result<(), QueueError> {
        let now = self.clock.now();
        let mut inner = self.inner.lock();
        let key = q.pod.key.clone();
        // With QueueingHints: what the events that arrived while the pod was in flight say.
        let mut strategy = None;
        if self.cfg.queueing_hints {
            let mut s = if q.rejectors().next().is_none() {
                Strategy::AfterBackoff
            } else {
                Strategy::Skip
            };
            let mut after_marker = false;
            for it in &inner.in_flight_events {
                match it {
                    InFlightItem::Popped(k) if *k == key => after_marker = true,
                    InFlightItem::Event(ev, old, new)
                        if after_marker && s != Strategy::Immediately =>
                    {
                        s = s.max(self.worth_requeuing(&q, ev, old, new));
                    }
                    _ => {}
                }
            }
            strategy = Some(s);
        }
        self.forget_in_flight(&mut inner, &key);
        let mut updated = false;
        if let Some(f) = inner.in_flight.remove(&key) {
            if f.deleted {
                return Ok(());
            }
            if let Some(latest) = f.latest {
                q.pod = latest;
            }
            updated = f.updated;
        }
        if self.active.contains(&key)
            || inner.backoff.contains(&key)
            || inner.unschedulable.contains(&key)
            || self.gated.contains(&key)
        {
            return Err(QueueError::AlreadyPresent(key));
        }
        let has_rejectors = q.rejectors().next().is_some();
        if has_rejectors {
            q.unschedulable_count += 1;
            q.consecutive_errors_count = 0;
        } else {
            q.consecutive_errors_count += 1;
        }
        q.timestamp = now;
        for p in q.rejectors() {
            self.metrics.add_unschedulable(p, 1);
        }
        match strategy {
            Some(s) => self.requeue_with(&mut inner, q, s, labels::SCHEDULE_ATTEMPT_FAILURE, now),
            // Without hints, kube's Update already put the updated pod back in activeQ.
            None if updated => {
                self.move_to_active(&mut inner, q, labels::UNSCHEDULED_POD_UPDATE);
            }
            None if inner.move_request_cycle >= pod_sched_cycle || !has_rejectors => {
                self.move_to_backoff(&mut inner, q, labels::SCHEDULE_ATTEMPT_FAILURE)
            }
            None => {
                self.metrics
                    .inc_incoming("unschedulable", labels::SCHEDULE_ATTEMPT_FAILURE);
                inner.unschedulable.insert(q);
            }
        }
        Ok(())
    }

    /// A cluster event: move the unschedulable pods it may help. Only pods filed under a
    /// plugin that registered a matching event are visited (plus pods without rejectors); gated
    /// pods are not in this pool at all.
    pub fn move_all_to_active_or_backoff(&self, event: ClusterEvent) {
        self.on_cluster_event(event, EventObject::None, EventObject::None);
    }

    /// A cluster event with the objects it carries (for QueueingHints).
    pub fn on_cluster_event(&self, event: ClusterEvent, old: EventObject, new: EventObject) {
        self.on_cluster_event_except(event, old, new, None);
    }

    /// [`SchedulingQueue::move_all_to_active_or_backoff`] for every pod but `except` (kube's
    /// precheck in `handleBindingCycleError`: the pod a Permit plugin rejected is not moved
    /// by the AssignedPodDelete its own forgetting raises).
    pub fn move_all_to_active_or_backoff_except(&self, event: ClusterEvent, except: &PodKey) {
        self.on_cluster_event_except(event, EventObject::None, EventObject::None, Some(except));
    }

    fn on_cluster_event_except(
        &self,
        event: ClusterEvent,
        old: EventObject,
        new: EventObject,
        except: Option<&PodKey>,
    ) {
        let mut inner = self.inner.lock();
        let mut keys = if inner.unschedulable.is_empty() {
            Vec::new()
        } else if event.is_wildcard() {
            inner.unschedulable.keys()
        } else {
            inner
                .unschedulable
                .candidates(self.plugins_registered_for(&event))
        };
        if let Some(k) = except {
            keys.retain(|x| x != k);
        }
        self.move_candidates(&mut inner, keys, event, old, new);
    }

    /// kube's `MoveAllToActiveOrBackoffQueue` for an assigned pod's add, update or delete
    /// (`old`/`new`: the pod before and after), as kube's event handlers call it (with
    /// QueueingHints on for adds and updates; always for deletes). The pods moved are exactly the full scan's ([`Self::on_cluster_event`]);
    /// the candidates of InterPodAffinity and PodTopologySpread, whose hints can only queue
    /// pods an event's pod is related to, come from the pool's indexes
    /// ([`UnschedulablePods::pod_event_candidates`]).
    pub fn assigned_pod_event(
        &self,
        event: ClusterEvent,
        old: Option<Arc<Pod>>,
        new: Option<Arc<Pod>>,
    ) {
        let obj = |p: Option<Arc<Pod>>| p.map_or(EventObject::None, EventObject::Pod);
        if !self.cfg.queueing_hints {
            // Without hints every registered plugin's pods move: no narrowing applies.
            return self.on_cluster_event(event, obj(old), obj(new));
        }
        let mut inner = self.inner.lock();
        let keys = if inner.unschedulable.is_empty() {
            Vec::new()
        } else {
            inner.unschedulable.pod_event_candidates(
                self.plugins_registered_for(&event),
                old.as_deref(),
                new.as_deref(),
            )
        };
        self.move_candidates(&mut inner, keys, event, obj(old), obj(new));
    }

    /// The plugins that registered an event matching `event`.
    fn plugins_registered_for<'s>(
        &'s self,
        event: &'s ClusterEvent,
    ) -> impl Iterator<Item = &'static str> + 's {
        self.plugin_events
            .iter()
            .filter(move |(_, evs)| evs.iter().any(|r| r.matches(event)))
            .map(|(p, _)| *p)
    }

    /// Whether the `SchedulerQueueingHints` gate is on ([`QueueConfig::queueing_hints`]).
    pub fn queueing_hints(&self) -> bool {
        self.cfg.queueing_hints
    }

    /// kube's `AssignedPodAdded`: a pod appeared on a node (bound by us or by anyone). Only
    /// the pods it can help are visited: those rejected by PodTopologySpread in its namespace
    /// and those with a required affinity term that selects it (`ns_labels`: the labels of its
    /// namespace), found through the pool's anchor index; then each goes through
    /// `isPodWorthRequeuing` as for any event.
    pub fn assigned_pod_added(&self, pod: Arc<Pod>, ns_labels: Option<&Labels>) {
        let event = ClusterEvent::new(EventResource::AssignedPod, ActionType::ADD);
        let mut inner = self.inner.lock();
        let keys = inner
            .unschedulable
            .cross_topology_candidates(&pod, ns_labels);
        self.move_candidates(
            &mut inner,
            keys,
            event,
            EventObject::None,
            EventObject::Pod(pod),
        );
    }

    /// kube's `AssignedPodUpdated`, once per event of `PodSchedulingPropertiesChange`: a
    /// scale-down may help any pod (resources freed), so it goes to every pod whose rejector
    /// registered it; every other event only to the cross-topology candidates of the new pod,
    /// as for an add.
    pub fn assigned_pod_updated(
        &self,
        old: Arc<Pod>,
        new: Arc<Pod>,
        event: ClusterEvent,
        ns_labels: Option<&Labels>,
    ) {
        if event.action.0 & ActionType::UPDATE_POD_SCALE_DOWN.0 != 0 {
            self.on_cluster_event(event, EventObject::Pod(old), EventObject::Pod(new));
            return;
        }
        let mut inner = self.inner.lock();
        let keys = inner
            .unschedulable
            .cross_topology_candidates(&new, ns_labels);
        self.move_candidates(
            &mut inner,
            keys,
            event,
            EventObject::Pod(old),
            EventObject::Pod(new),
        );
    }

    /// Moves the candidate pods an event may help (`isPodWorthRequeuing` decides each), and
    /// records the event for the pods in flight.
    fn move_candidates(
        &self,
        inner: &mut Inner,
        keys: Vec<PodKey>,
        event: ClusterEvent,
        old: EventObject,
        new: EventObject,
    ) {
        let now = self.clock.now();
        inner.move_request_cycle = inner.sched_cycle;
        if !keys.is_empty() {
            let label = event.label();
            for k in keys {
                let Some(q) = inner.unschedulable.get(&k) else {
                    continue;
                };
                let s = if self.cfg.queueing_hints {
                    self.worth_requeuing(q, &event, &old, &new)
                } else if self.registered_for(q, &event) {
                    Strategy::AfterBackoff
                } else {
                    Strategy::Skip
                };
                if s == Strategy::Skip {
                    continue;
                }
                if let Some(q) = inner.unschedulable.remove(&k) {
                    self.requeue_with(inner, q, s, &label, now);
                }
            }
        }
        // Pods in flight see this event when they come back.
        if self.cfg.queueing_hints && !inner.in_flight.is_empty() {
            inner
                .in_flight_events
                .push_back(InFlightItem::Event(event, old, new));
        }
    }

    /// Without QueueingHints every registered event is a Queue: whether some rejector of the
    /// pod registered `event` (or it has none, or the event is a wildcard).
    fn registered_for(&self, q: &QueuedPodInfo, event: &ClusterEvent) -> bool {
        event.is_wildcard()
            || q.rejectors().next().is_none()
            || q.rejectors().any(|p| {
                self.plugin_events
                    .get(p)
                    .is_some_and(|evs| evs.iter().any(|r| r.matches(event)))
            })
    }

    /// Moves the named pods from the unschedulable pool or backoffQ to activeQ (PreEnqueue
    /// runs, so a pod that is still gated stays gated).
    pub fn activate(&self, keys: &[PodKey]) {
        let mut inner = self.inner.lock();
        for k in keys {
            let q = inner
                .unschedulable
                .remove(k)
                .or_else(|| inner.backoff.remove(k));
            if let Some(q) = q {
                self.move_to_active(&mut inner, q, labels::FORCE_ACTIVATE);
            }
        }
    }

    fn run_due_flushes(&self, inner: &mut Inner) {
        let now = self.clock.now();
        if now >= inner.next_backoff_flush {
            if self.cfg.pop_from_backoff {
                // kube ticks on whole windows (its ticker starts at the next window).
                inner.next_backoff_flush = align_to_window(now) + BACKOFF_WINDOW;
                // Pods whose window is before now's; PreEnqueue already ran when they entered.
                for q in inner.backoff.pop_expired_before(align_to_window(now)) {
                    self.push_active(inner, q, labels::BACKOFF_COMPLETE);
                }
            } else {
                inner.next_backoff_flush = now + self.cfg.backoff_flush_period;
                let done = inner
                    .backoff
                    .pop_expired_before(now + Duration::from_nanos(1));
                for q in done {
                    self.move_to_active(inner, q, labels::BACKOFF_COMPLETE);
                }
            }
        }
        if now >= inner.next_unschedulable_flush {
            inner.next_unschedulable_flush = now + self.cfg.unschedulable_flush_period;
            let stale: Vec<PodKey> = inner
                .unschedulable
                .values()
                .filter(|q| now.saturating_sub(q.timestamp) > self.cfg.max_in_unschedulable)
                .map(|q| q.pod.key.clone())
                .collect();
            for k in stale {
                if let Some(q) = inner.unschedulable.remove(&k) {
                    self.requeue(inner, q, labels::UNSCHEDULABLE_TIMEOUT, now);
                }
            }
        }
    }

    /// Runs the periodic flushes that are due now (backoff completion every second, the
    /// unschedulable leftover every 30 s). `pop` does this by itself.
    pub fn flush(&self) {
        let mut inner = self.inner.lock();
        self.run_due_flushes(&mut inner);
    }

    /// When the next periodic flush that can move a pod is due: the backoff flush while
    /// backoffQ holds pods, the unschedulable flush while the pool holds pods (`None`: no
    /// flush can move anything). A driver of a virtual clock advances it to this time.
    pub fn next_flush_due(&self) -> Option<Time> {
        let inner = self.inner.lock();
        let backoff = (!inner.backoff.is_empty()).then_some(inner.next_backoff_flush);
        let unsched = (!inner.unschedulable.is_empty()).then_some(inner.next_unschedulable_flush);
        backoff.into_iter().chain(unsched).min()
    }

    /// Closes the queue: `pop` returns `None` from now on.
    pub fn close(&self) {
        self.inner.lock().closed = true;
        self.cond.notify_all();
    }

    pub fn counts(&self) -> PendingCounts {
        let inner = self.inner.lock();
        PendingCounts {
            active: self.active.len(),
            backoff: inner.backoff.len(),
            unschedulable: inner.unschedulable.len(),
            gated: self.gated.len(),
            in_flight: inner.in_flight.len(),
        }
    }

    /// backoffQ sizes: `(rejected by plugins, failed with an error)`.
    pub fn backoff_lens(&self) -> (usize, usize) {
        self.inner.lock().backoff.lens()
    }

    /// Items in the in-flight event list (kube's `scheduler_inflight_events`): markers of
    /// popped pods plus events received while they were in flight.
    pub fn in_flight_events(&self) -> usize {
        self.inner.lock().in_flight_events.len()
    }

    /// `tidegate_gated_pods{gate}`.
    pub fn gated_per_gate(&self) -> Vec<(Arc<str>, i64)> {
        self.gated.per_gate()
    }

    /// Where a pod is: `"active"`, `"backoff"`, `"unschedulable"`, `"gated"`, `"in-flight"`.
    pub fn locate(&self, key: &PodKey) -> Option<&'static str> {
        let inner = self.inner.lock();
        if self.active.contains(key) {
            Some("active")
        } else if inner.backoff.contains(key) {
            Some("backoff")
        } else if inner.unschedulable.contains(key) {
            Some("unschedulable")
        } else if self.gated.contains(key) {
            Some("gated")
        } else if inner.in_flight.contains_key(key) {
            Some("in-flight")
        } else {
            None
        }
    }

    /// The queued info of a pending pod (not in flight), for reports.
    pub fn pending_info(&self, key: &PodKey) -> Option<QueuedPodInfo> {
        let inner = self.inner.lock();
        self.active
            .get(key)
            .or_else(|| inner.backoff.get(key).map(|(_, q)| q.clone()))
            .or_else(|| inner.unschedulable.get(key).cloned())
            .or_else(|| self.gated.get(key))
    }
}
