//! Pods whose Permit returned Wait (kube's `waitingPodsMap` and `waitingPod`).
//!
//! Protocol:
//! - The scheduling cycle registers the pod with the plugins that said Wait, each with its own
//!   timeout, and a continuation: the rest of the pod's binding cycle.
//! - Plugins (from any thread: another pod's Permit, a controller, a timer) call
//!   [`WaitingPod::allow`] or [`WaitingPod::reject`] through [`WaitingPods::get`] or
//!   [`WaitingPods::iterate`].
//! - When the last pending plugin allows, or any plugin rejects, or a plugin's timeout passes
//!   (a rejection: `rejected due to timeout after waiting 2s at plugin X`), the pod leaves the
//!   map and its continuation runs exactly once with the outcome, on the thread that resolved
//!   it. Later calls on a resolved pod do nothing.
//!
//! A single timer thread per map, started with the first wait, fires the timeouts. A map on a
//! virtual clock ([`WaitingPods::with_manual_clock`], deterministic runs) has no thread: its
//! driver asks for [`WaitingPods::next_deadline`] and calls [`WaitingPods::fire_due`] when the
//! clock gets there.

use super::status::{Code, Status};
use crate::api::{Pod, PodKey, Sym};
use crate::clock::{Clock, RealClock, Time};
use ahash::AHashMap;
use parking_lot::{Condvar, Mutex};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::{Arc, Weak};
use std::time::Duration;

/// What runs when a waiting pod is resolved: `Status::success()` or the rejection.
pub(crate) type Continuation = Box<dyn FnOnce(Status) + Send>;

struct WaitState {
    /// Plugins still to allow, with the time each waits at most.
    pending: Vec<(&'static str, Duration)>,
    done: Option<Continuation>,
}

/// A pod waiting at Permit.
pub struct WaitingPod {
    pod: Arc<Pod>,
    node: Sym,
    state: Mutex<WaitState>,
    map: Weak<Inner>,
}

impl WaitingPod {
    pub fn pod(&self) -> &Arc<Pod> {
        &self.pod
    }
    /// The node the pod was reserved on.
    pub fn node(&self) -> Sym {
        self.node
    }
    /// The plugins that have not allowed the pod yet.
    pub fn pending_plugins(&self) -> Vec<&'static str> {
        self.state.lock().pending.iter().map(|(p, _)| *p).collect()
    }

    /// `plugin` allows the pod; the last allow resolves it with success.
    pub fn allow(&self, plugin: &str) {
        let mut st = self.state.lock();
        st.pending.retain(|(p, _)| *p != plugin);
        if st.pending.is_empty()
            && let Some(done) = st.done.take()
        {
            drop(st);
            self.finish(done, Status::success());
        }
    }

    /// `plugin` rejects the pod (Unschedulable, with `msg`).
    pub fn reject(&self, plugin: &'static str, msg: &str) {
        let done = self.state.lock().done.take();
        if let Some(done) = done {
            self.finish(
                done,
                Status::new(Code::Unschedulable, msg.to_string()).with_plugin(plugin),
            );
        }
    }

    fn finish(&self, done: Continuation, status: Status) {
        if let Some(m) = self.map.upgrade() {
            m.pods.lock().remove(&self.pod.key);
        }
        done(status);
    }
}

/// A Permit deadline: (when, sequence, pod, plugin).
type Deadline = Reverse<(Time, u64, PodKey, &'static str)>;

struct Inner {
    pods: Mutex<AHashMap<PodKey, Arc<WaitingPod>>>,
    /// Deadlines: (when, sequence, pod, plugin).
    timers: Mutex<BinaryHeap<Deadline>>,
    wake: Condvar,
    seq: Mutex<u64>,
    timer_started: std::sync::Once,
    stopped: std::sync::atomic::AtomicBool,
    clock: Arc<dyn Clock>,
    /// No timer thread: the owner of the (virtual) clock fires the deadlines.
    manual: bool,
}

/// The waiting pods of a scheduler. It also carries the scheduler's pod-group states
/// ([`WaitingPods::pod_groups`]): kube's `Handle` gives plugins both (`GetWaitingPod`,
/// `PodGroupManager`), and a gang's Permit reads one to act on the other.
#[derive(Clone)]
pub struct WaitingPods {
    inner: Arc<Inner>,
    pod_groups: Arc<super::pod_group_state::PodGroupStates>,
}

impl Default for WaitingPods {
    fn default() -> Self {
        WaitingPods::new()
    }
}

impl WaitingPods {
    pub fn new() -> WaitingPods {
        WaitingPods::build(Arc::new(RealClock::new()), false)
    }

    /// A map whose timeouts run on `clock` and fire only from [`WaitingPods::fire_due`].
    pub(crate) fn with_manual_clock(clock: Arc<dyn Clock>) -> WaitingPods {
        WaitingPods::build(clock, true)
    }

    /// The scheduler's pod groups and their members' states (kube's `PodGroupManager`),
    /// shared with its cache.
    pub fn pod_groups(&self) -> &Arc<super::pod_group_state::PodGroupStates> {
        &self.pod_groups
    }

    fn build(clock: Arc<dyn Clock>, manual: bool) -> WaitingPods {
        WaitingPods {
            inner: Arc::new(Inner {
                pods: Mutex::new(AHashMap::new()),
                timers: Mutex::new(BinaryHeap::new()),
                wake: Condvar::new(),
                seq: Mutex::new(0),
                timer_started: std::sync::Once::new(),
                stopped: std::sync::atomic::AtomicBool::new(false),
                clock,
                manual,
            }),
            pod_groups: Arc::default(),
        }
    }

    /// Registers a pod that Permit told to wait for `pending` (plugin, timeout) pairs.
    pub fn add(
        &self,
        pod: Arc<Pod>,
        node: Sym,
        pending: Vec<(&'static str, Duration)>,
        done: Continuation,
    ) {
        let key = pod.key.clone();
        let now = self.inner.clock.now();
        let wp = Arc::new(WaitingPod {
            pod,
            node,
            state: Mutex::new(WaitState {
                pending: pending.clone(),
                done: Some(done),
            }),
            map: Arc::downgrade(&self.inner),
        });
        self.inner.pods.lock().insert(key.clone(), wp);
        {
            let mut seq = self.inner.seq.lock();
            let mut t = self.inner.timers.lock();
            for (plugin, timeout) in pending {
                *seq += 1;
                t.push(Reverse((now + timeout, *seq, key.clone(), plugin)));
            }
        }
        self.start_timer();
        self.inner.wake.notify_one();
    }

    pub fn get(&self, key: &PodKey) -> Option<Arc<WaitingPod>> {
        self.inner.pods.lock().get(key).cloned()
    }

    /// Calls `f` on every waiting pod (a snapshot: `f` may allow or reject).
    pub fn iterate(&self, mut f: impl FnMut(&Arc<WaitingPod>)) {
        let all: Vec<_> = self.inner.pods.lock().values().cloned().collect();
        for wp in &all {
            f(wp);
        }
    }

    pub fn len(&self) -> usize {
        self.inner.pods.lock().len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Rejects every waiting pod (scheduler shutdown) and stops the timer thread.
    pub(crate) fn reject_all(&self, msg: &str) {
        self.iterate(|wp| {
            let pending = wp.pending_plugins();
            wp.reject(pending.first().copied().unwrap_or(""), msg);
        });
    }

    pub fn stop(&self) {
        self.inner
            .stopped
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let _g = self.inner.timers.lock();
        self.inner.wake.notify_all();
    }

    /// The earliest Permit deadline still pending.
    pub(crate) fn next_deadline(&self) -> Option<Time> {
        self.inner.timers.lock().peek().map(|Reverse((w, ..))| *w)
    }

    /// Rejects the pods whose deadline has passed on the map's clock (the timer thread's
    /// work, for maps on a manual clock).
    pub(crate) fn fire_due(&self) {
        let due = take_due(&self.inner, &mut self.inner.timers.lock());
        fire(&self.inner, due);
    }

    fn start_timer(&self) {
        if self.inner.manual {
            return;
        }
        let weak = Arc::downgrade(&self.inner);
        self.inner.timer_started.call_once(move || {
            std::thread::Builder::new()
                .name("tidegate-permit-timer".into())
                .spawn(move || timer_loop(weak))
                .expect("spawn permit timer");
        });
    }
}

fn timer_loop(weak: Weak<Inner>) {
    use std::sync::atomic::Ordering;
    loop {
        let Some(inner) = weak.upgrade() else { return };
        if inner.stopped.load(Ordering::SeqCst) {
            return;
        }
        let due = {
            let mut t = inner.timers.lock();
            let due = take_due(&inner, &mut t);
            if due.is_empty() {
                // Sleep until the next deadline (or a new wait), at most 100 ms so that a
                // dropped map ends the thread.
                let now = inner.clock.now();
                let wait = t
                    .peek()
                    .map_or(Duration::from_millis(100), |Reverse((w, ..))| {
                        w.saturating_sub(now)
                    })
                    .min(Duration::from_millis(100));
                inner.wake.wait_for(&mut t, wait);
                continue;
            }
            due
        };
        fire(&inner, due);
    }
}

/// Pops the deadlines that have passed: (pod, plugin).
fn take_due(inner: &Inner, t: &mut BinaryHeap<Deadline>) -> Vec<(PodKey, &'static str)> {
    let now = inner.clock.now();
    let mut due = Vec::new();
    while let Some(Reverse((when, _, _, _))) = t.peek() {
        if *when > now {
            break;
        }
        let Reverse((_, _, key, plugin)) = t.pop().expect("peeked");
        due.push((key, plugin));
    }
    due
}

/// Rejects each (pod, plugin) whose plugin still holds the pod (the timeout's rejection).
fn fire(inner: &Inner, due: Vec<(PodKey, &'static str)>) {
    for (key, plugin) in due {
        let Some(wp) = inner.pods.lock().get(&key).cloned() else {
            continue;
        };
        let waited = wp
            .state
            .lock()
            .pending
            .iter()
            .find(|(p, _)| *p == plugin)
            .map(|(_, d)| *d);
        if let Some(d) = waited {
            wp.reject(
                plugin,
                &format!("rejected due to timeout after waiting {d:?} at plugin {plugin}"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::PodSpecInfo;
    use std::sync::mpsc;

    fn pod(name: &str) -> Arc<Pod> {
        Arc::new(Pod::new("ns", name, Arc::new(PodSpecInfo::default())))
    }

    #[test]
    fn the_last_allow_resolves_once() {
        let w = WaitingPods::new();
        let (tx, rx) = mpsc::channel();
        w.add(
            pod("a"),
            Sym::new("n"),
            vec![
                ("A", Duration::from_secs(60)),
                ("B", Duration::from_secs(60)),
            ],
            Box::new(move |s| tx.send(s).unwrap()),
        );
        let wp = w.get(&PodKey::new("ns", "a")).unwrap();
        wp.allow("A");
        assert!(rx.try_recv().is_err());
        assert_eq!(wp.pending_plugins(), vec!["B"]);
        wp.allow("B");
        assert!(rx.recv().unwrap().is_success());
        assert!(w.is_empty());
        wp.reject("B", "late");
        assert!(rx.try_recv().is_err(), "resolved twice");
    }

    #[test]
    fn a_reject_resolves_with_the_plugin_and_message() {
        let w = WaitingPods::new();
        let (tx, rx) = mpsc::channel();
        w.add(
            pod("a"),
            Sym::new("n"),
            vec![("A", Duration::from_secs(60))],
            Box::new(move |s| tx.send(s).unwrap()),
        );
        w.get(&PodKey::new("ns", "a")).unwrap().reject("A", "no");
        let s = rx.recv().unwrap();
        assert_eq!(s.code(), Code::Unschedulable);
        assert_eq!(s.plugin(), "A");
        assert_eq!(s.message(), "no");
    }

    #[test]
    fn a_timeout_rejects() {
        let w = WaitingPods::new();
        let (tx, rx) = mpsc::channel();
        w.add(
            pod("a"),
            Sym::new("n"),
            vec![("Gang", Duration::from_millis(20))],
            Box::new(move |s| tx.send(s).unwrap()),
        );
        let s = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(s.code(), Code::Unschedulable);
        assert_eq!(
            s.message(),
            "rejected due to timeout after waiting 20ms at plugin Gang"
        );
        assert!(w.is_empty());
        w.stop();
    }

    #[test]
    fn a_manual_clock_fires_timeouts_only_when_asked() {
        use crate::clock::VirtualClock;
        let clock = Arc::new(VirtualClock::new());
        let w = WaitingPods::with_manual_clock(clock.clone());
        let (tx, rx) = mpsc::channel();
        w.add(
            pod("a"),
            Sym::new("n"),
            vec![("A", Duration::from_secs(2))],
            Box::new(move |s| tx.send(s).unwrap()),
        );
        assert_eq!(w.next_deadline(), Some(Duration::from_secs(2)));
        clock.advance(Duration::from_millis(1999));
        w.fire_due();
        std::thread::sleep(Duration::from_millis(20));
        assert!(rx.try_recv().is_err(), "fired before its deadline");
        clock.advance(Duration::from_millis(1));
        w.fire_due();
        let s = rx.try_recv().expect("fired at the deadline");
        assert!(
            s.message().contains("timeout after waiting 2s at plugin A"),
            "{}",
            s.message()
        );
        assert!(w.is_empty());
        assert_eq!(w.next_deadline(), None);
    }
}
