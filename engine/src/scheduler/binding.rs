//! The binding cycle (kube's `bindingCycle` and `handleBindingCycleError` in
//! `pkg/scheduler/schedule_one.go`): WaitOnPermit, PreBind, Bind, PostBind on binder threads
//! while the next scheduling cycle runs, and the queue of binding tasks between the two.

use crate::api::{Pod, Sym};
use crate::framework::QueuedPodInfo;
use crate::framework::events::{ActionType, ClusterEvent, EventResource};
use crate::framework::metrics::{AttemptResult, Series};
use crate::framework::{CycleState, Status};
use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::Scheduler;
use super::failure::{Failure, rejection};

/// A pod that passed the scheduling cycle (assumed, reserved, permitted or waiting), on its way
/// through the binding cycle.
pub(super) struct BindingTask {
    pub(super) fwk: usize,
    pub(super) state: CycleState,
    pub(super) qpi: QueuedPodInfo,
    pub(super) assumed: Arc<Pod>,
    pub(super) host: Sym,
    pub(super) start: Instant,
    pub(super) cycle: i64,
    /// The outcome of WaitOnPermit for a pod that waited.
    pub(super) permit: Option<Status>,
    /// PreBindPreFlight's status, when it ran before the pod waited at Permit.
    pub(super) pre_flight: Option<Status>,
}

/// The binding cycles waiting for a binder thread. A worker takes everything queued at once
/// and is woken only when it sleeps: no spinning receiver competes with the scheduling
/// thread for the CPU, and a burst of binds costs one wake-up.
#[derive(Default)]
pub(super) struct BindQueue {
    pub(super) state: Mutex<BindQueueState>,
    pub(super) ready: parking_lot::Condvar,
}

/// The tasks are boxed: a backlog of thousands of binding cycles (the binder shares its CPU
/// with the API's side while the scheduler runs ahead) would otherwise grow the deque by
/// copies of 400-byte tasks into fresh memory, on the scheduling thread, and the kernel's
/// zeroing of those pages was a seventh of that thread's time at 5,000 nodes. Boxed, the
/// deque holds pointers, and a task's memory is recycled once its binding cycle ends.
#[derive(Default)]
pub(super) struct BindQueueState {
    pub(super) tasks: std::collections::VecDeque<Box<BindingTask>>,
    /// When the oldest queued task was queued.
    pub(super) since: Option<Instant>,
    /// Workers run (between `open` and `close`).
    pub(super) open: bool,
    pub(super) sleeping: usize,
}

/// A sleeping binder is woken once this many tasks wait (or sooner: see [`BindQueue::nudge`]).
/// Waking a thread costs microseconds of the scheduling thread's time; one wake per batch
/// instead of one per pod keeps that off the critical path.
pub(super) const BIND_BATCH: usize = 16;
/// The longest a queued binding cycle waits for a batch to fill while the scheduler is busy.
pub(super) const BIND_LINGER: Duration = Duration::from_micros(500);

impl BindQueue {
    pub(super) fn open(&self) {
        self.state.lock().open = true;
    }

    /// Queues a task; gives it back when no worker runs. `eager` wakes a sleeping worker at
    /// once (a task handed over from another thread, such as a Permit outcome); otherwise a
    /// sleeping worker is woken when a batch is full, and the scheduling loop nudges it
    /// before it waits for work or once the oldest task has lingered.
    pub(super) fn push(&self, task: BindingTask, eager: bool) -> Option<BindingTask> {
        let task = Box::new(task);
        let mut st = self.state.lock();
        if !st.open {
            return Some(*task);
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
    pub(super) fn nudge(&self, idle: bool) {
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
    pub(super) fn take_batch(
        &self,
        batch: &mut std::collections::VecDeque<Box<BindingTask>>,
    ) -> bool {
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
    pub(super) fn close(&self) {
        self.state.lock().open = false;
        self.ready.notify_all();
    }
}

impl Scheduler {
    /// Hands a binding cycle to the workers, or runs it here when none run.
    pub(super) fn submit_binding(&self, task: BindingTask, eager: bool) {
        if let Some(task) = self.binder.push(task, eager) {
            self.binding_cycle(task);
        }
    }

    /// kube's `bindingCycle` and `handleBindingCycleError`: WaitOnPermit's outcome, Done,
    /// PreBind, Bind, PostBind; on failure Unreserve, forget, requeue.
    pub(super) fn binding_cycle(&self, mut t: BindingTask) {
        let fwk = &self.frameworks[t.fwk];
        let key = t.assumed.key.clone();
        let pre_flight = match t.pre_flight.take() {
            Some(s) => s,
            None => self.pre_bind_pre_flight(&mut t, false),
        };
        let mut st = match t.permit.take() {
            _ if !pre_flight.is_success() && !pre_flight.is_skip() => pre_flight,
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
            // kube's handleBindingCycleError clears the pod's nomination (clearNominatedNode):
            // the one the binding cycle wrote, if any, is patched away.
            let failure = Failure {
                nominated: Some(Sym::EMPTY),
                ..rejection(st)
            };
            if permit_rejected {
                self.handle_scheduling_failure(t.qpi, failure, t.start, t.cycle);
                self.queue.move_all_to_active_or_backoff_except(freed, &key);
            } else {
                self.queue.move_all_to_active_or_backoff(freed);
                self.handle_scheduling_failure(t.qpi, failure, t.start, t.cycle);
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

    /// The binding cycle's start in kube (NominatedNodeNameForExpectation): PreBindPreFlight,
    /// and when a PreBind plugin has work or the pod `waits` at Permit, the pod's node
    /// written as its `status.nominatedNodeName` for external components (the pod is
    /// assumed, so the scheduler's own queue ignores that update). The task's pod then
    /// carries the nomination, as kube's failure handler reads it back from its informer and
    /// clears it. With the gate off: Success, nothing written.
    pub(super) fn pre_bind_pre_flight(&self, t: &mut BindingTask, waits: bool) -> Status {
        if !self.nominated_node_name_for_expectation {
            return Status::success();
        }
        let st = self.frameworks[t.fwk].run_pre_bind_pre_flights(&mut t.state, &t.assumed, t.host);
        if (st.is_success() || (waits && st.is_skip()))
            && t.qpi.pod.nominated_node_name != Some(t.host)
        {
            self.client
                .set_nominated_node_name(&t.assumed, Some(t.host));
            let mut pod = (*t.qpi.pod).clone();
            pod.nominated_node_name = Some(t.host);
            t.qpi.pod = Arc::new(pod);
        }
        st
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::CycleState;
    use crate::framework::QueuedPodInfo;

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
            pre_flight: None,
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
}
