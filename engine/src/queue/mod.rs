//! The scheduling queue (kube's `PriorityQueue`). See `README.md` beside this file for the
//! protocol and its invariants.

pub(crate) mod active;
pub(crate) mod backoff;
pub(crate) mod gated;
pub(crate) mod heap;
mod hints;
mod in_flight;
mod moves;
pub(crate) mod nominator;
mod pod_groups;
mod pre_enqueue;
#[cfg(test)]
mod tests;
pub(crate) mod unschedulable;

use crate::api::labels::Labels;
use crate::api::{Pod, PodKey, Sym};
use crate::clock::{Clock, Time};
use crate::framework::Nominating;
use crate::framework::QueuedPodInfo;
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
use hints::Strategy;
use in_flight::{InFlight, InFlightItem};
use nominator::Nominator;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use unschedulable::UnschedulablePods;

pub use pod_groups::QueuedEntity;

/// kube's backoff ordering window (`SchedulerPopFromBackoffQ`): 1 s.
pub(crate) const BACKOFF_WINDOW: Duration = Duration::from_secs(1);

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
    /// Pod-group members waiting for their group's attempt to end (kube's `pending` queue
    /// label, `pendingPodGroupPods`).
    pub pod_group_pending: usize,
    /// Pod-group members whose PodGroup object is unknown (kube's `incomplete`).
    pub pod_group_incomplete: usize,
}

impl PendingCounts {
    /// Every pod the queue holds: group members are counted in the place of their group
    /// (active, backoff, unschedulable, gated) or as pending/incomplete.
    pub fn total(&self) -> usize {
        self.active
            + self.backoff
            + self.unschedulable
            + self.gated
            + self.in_flight
            + self.pod_group_pending
            + self.pod_group_incomplete
    }
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
    /// Pod-group entities and their members (`pod_groups.rs`).
    groups: pod_groups::Groups,
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
    /// The GenericWorkload gate: pods with `spec.schedulingGroup` are queued as groups.
    generic_workload: bool,
}

/// Why AddUnschedulableIfNotPresent refused a pod.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueueError {
    #[error("a pod {0} is already present in the scheduling queue")]
    AlreadyPresent(PodKey),
}

/// What [`SchedulingQueue::dump`] reports.
#[derive(Clone, Debug)]
pub struct QueueDump {
    pub counts: PendingCounts,
    pub gated_per_gate: Vec<(Arc<str>, i64)>,
    /// Per queue (kube's names), the pod waiting there longest and for how long.
    pub oldest: [(&'static str, Option<(PodKey, std::time::Duration)>); 4],
}

impl QueueDump {
    /// kube's one-line summary (`PendingPods`'s wording): `activeQ:N; backoffQ:N;
    /// unschedulablePods:N; gated:N` (pods in flight count as active, as kube's gauge does).
    pub fn summary(&self) -> String {
        let c = &self.counts;
        format!(
            "activeQ:{}; backoffQ:{}; unschedulablePods:{}; gated:{}",
            c.active + c.in_flight,
            c.backoff,
            c.unschedulable,
            c.gated
        )
    }
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
            active: ActiveQ::with_sort_key(
                shards,
                Arc::new(move |a: &QueuedPodInfo, b: &QueuedPodInfo| qs.less(a, b)),
                queue_sort.sort_key(),
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
                groups: Default::default(),
            }),
            cond: Condvar::new(),
            pre_enqueue,
            plugin_events,
            hints: AHashMap::new(),
            clock,
            metrics,
            cfg,
            generic_workload: false,
        }
    }

    /// The GenericWorkload gate on: pods with `spec.schedulingGroup` are queued as members
    /// of their group (`pod_groups.rs`).
    pub fn with_generic_workload(mut self, on: bool) -> Self {
        self.generic_workload = on;
        self
    }

    /// Registers `events` for `plugin` (as if its EnqueueExtensions said so; no hint).
    pub fn with_plugin_events(mut self, plugin: &'static str, events: Vec<ClusterEvent>) -> Self {
        self.plugin_events.insert(plugin, events);
        self
    }

    /// Installs the plugins' QueueingHint functions (without them every registration behaves
    /// as Queue).
    pub(crate) fn with_queueing_hints(
        mut self,
        hints: AHashMap<&'static str, Arc<dyn EnqueueExtensions>>,
    ) -> SchedulingQueue {
        self.hints = hints;
        self
    }

    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    // ---- informer-facing operations -------------------------------------------------------

    /// A new unassigned pod (informer add: each pod is added once, before its updates and
    /// its delete). PreEnqueue runs without any queue lock; a pod that passes goes straight to
    /// its home activeQ shard, so producers on different threads do not contend.
    pub fn add(&self, pod: Arc<Pod>) {
        let now = self.clock.now();
        if self.is_group_member(&pod) {
            if pod.nominated_node_name.is_some() {
                self.nominator.add(&pod, Nominating::FromStatus);
            }
            let mut inner = self.inner.lock();
            self.add_group_member(
                &mut inner,
                QueuedPodInfo::new(pod, now),
                labels::UNSCHEDULED_POD_ADD,
            );
            return;
        }
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
        if self.is_group_member(&new) {
            self.update_group_member(&mut inner, old, new);
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
        // The update's events (kube's `PodSchedulingPropertiesChange`): the last gate gone,
        // a generated ResourceClaim recorded in the status, …
        let events = pod_scheduling_properties_change(old, &new);
        q.pod = new;
        // Only an event the gating plugin registered re-runs PreEnqueue.
        let event = match q.gating_plugin {
            None => events.first(),
            Some(g) => self
                .plugin_events
                .get(g)
                .and_then(|evs| events.iter().find(|e| evs.iter().any(|r| r.matches(e)))),
        };
        let Some(event) = event else {
            self.gated.insert(q);
            return;
        };
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
    pub(crate) fn delete_scheduled(&self, key: &PodKey) {
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
        if !inner.groups.is_empty()
            && let Some(pod) = inner.groups.find_member(key)
        {
            self.delete_group_member(&mut inner, &pod);
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

    /// The best entity: a pod from activeQ, or a pod group when one is active and comes first
    /// (priority, then timestamp).
    fn pop_entity_ready(&self, inner: &mut Inner) -> Option<QueuedEntity> {
        if !inner.groups.has_active() {
            return self.pop_ready(inner).map(QueuedEntity::Pod);
        }
        let pod = self.active.try_pop();
        match self.pop_group_if_better(inner, pod) {
            Ok(g) => Some(QueuedEntity::PodGroup(Box::new(g))),
            Err(pod) => {
                if let Some(p) = pod {
                    self.active.push(p);
                }
                self.pop_ready(inner).map(QueuedEntity::Pod)
            }
        }
    }

    /// [`SchedulingQueue::pop`] for pods and pod groups (kube's `Pop` of a
    /// `QueuedEntityInfo`): what the scheduler's loop takes.
    pub fn pop_entity(&self) -> Option<QueuedEntity> {
        self.pop_blocking(Self::pop_entity_ready)
    }

    /// Non-blocking [`SchedulingQueue::pop_entity`].
    pub fn try_pop_entity(&self) -> Option<QueuedEntity> {
        let mut inner = self.inner.lock();
        self.run_due_flushes(&mut inner);
        self.pop_entity_ready(&mut inner)
    }

    /// Blocks until a pod is ready to be scheduled, or the queue is closed (`None`; pods still
    /// queued stay where they are and are counted as pending).
    pub fn pop(&self) -> Option<QueuedPodInfo> {
        self.pop_blocking(Self::pop_ready)
    }

    /// The blocking loop of [`SchedulingQueue::pop`] and [`SchedulingQueue::pop_entity`]:
    /// runs the due flushes and `take`s, else waits for a push or the next flush tick.
    fn pop_blocking<T>(&self, take: impl Fn(&Self, &mut Inner) -> Option<T>) -> Option<T> {
        let mut inner = self.inner.lock();
        loop {
            if inner.closed {
                return None;
            }
            self.run_due_flushes(&mut inner);
            if let Some(q) = take(self, &mut inner) {
                return Some(q);
            }
            // Announce the wait, then look once more: a lock-free push either sees the flag
            // (and notifies under the lock, after we wait) or happened before this second look.
            self.waiting.store(true, Ordering::SeqCst);
            if let Some(q) = take(self, &mut inner) {
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
            } else if !inner.groups.is_empty() {
                self.activate_group_of(&mut inner, k);
            }
        }
    }

    /// Closes the queue: `pop` returns `None` from now on.
    pub fn close(&self) {
        self.inner.lock().closed = true;
        self.cond.notify_all();
    }

    pub fn counts(&self) -> PendingCounts {
        let inner = self.inner.lock();
        let g = inner.groups.counts();
        PendingCounts {
            active: self.active.len() + g.active,
            backoff: inner.backoff.len() + g.backoff,
            unschedulable: inner.unschedulable.len() + g.unschedulable,
            gated: self.gated.len() + g.gated,
            in_flight: inner.in_flight.len(),
            pod_group_pending: g.pending,
            pod_group_incomplete: g.incomplete,
        }
    }

    /// backoffQ sizes: `(rejected by plugins, failed with an error)`.
    #[cfg(test)]
    pub(crate) fn backoff_lens(&self) -> (usize, usize) {
        self.inner.lock().backoff.lens()
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
            inner.groups.locate(key)
        }
    }

    /// kube's queue dump (the debugger's SIGUSR2 `Dump of scheduling queue`): the counts in
    /// kube's `PendingPods` wording, the gated pods per gate, and the pod waiting longest in
    /// each queue with how long it has waited there. Walks every queue: O(pods), for
    /// debugging only.
    pub fn dump(&self) -> QueueDump {
        let now = self.clock.now();
        let wait =
            |o: Option<(PodKey, crate::clock::Time)>| o.map(|(k, t)| (k, now.saturating_sub(t)));
        let (backoff, unschedulable) = {
            let inner = self.inner.lock();
            let u = inner
                .unschedulable
                .values()
                .map(|q| (q.pod.key.clone(), q.timestamp))
                .min_by_key(|(_, t)| *t);
            (inner.backoff.oldest(), u)
        };
        QueueDump {
            counts: self.counts(),
            gated_per_gate: self.gated_per_gate(),
            oldest: [
                ("activeQ", wait(self.active.oldest())),
                ("backoffQ", wait(backoff)),
                ("unschedulablePods", wait(unschedulable)),
                ("gated", wait(self.gated.oldest())),
            ],
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
