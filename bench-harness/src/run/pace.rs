//! How time passes in a run: wall time (the default), or a virtual clock (`--clock virtual`).
//!
//! ## Real time
//!
//! The scheduler runs on its own threads ([`Scheduler::run`]); ops wait on the store's
//! condition variable, sleep on the wall clock, and background ops (`deletePods` with
//! `skipWaitToCompletion`, `churn`) run on threads of their own until the workload ends.
//!
//! ## Virtual time: a discrete-event simulation on one thread
//!
//! No scheduler thread runs. The thread that executes the ops drives everything, in an order
//! that depends on nothing but the inputs and the seed:
//!
//! 1. A **wait** (`createPods`, `barrier`, a rate-limited op's pause, `sleep`, a steady-state
//!    period) runs [`Sim::run_until`]: until its condition holds or its deadline passes, it
//!    repeats the first of these that applies:
//!    - the earliest background task that is due runs one step (ties: the one started first);
//!    - the scheduler makes one attempt ([`Scheduler::try_schedule_one`]: Permit timeouts and
//!      queue flushes that are due, then the best ready pod, its binding cycle inline), and the
//!      clock advances by the **attempt cost** (`--virtual-attempt-cost`, default 100 µs, so
//!      timestamps are distinct and a run has a pace: 10,000 attempts per virtual second);
//!    - nothing is ready: the clock jumps to the next background step, queue flush or Permit
//!      deadline ([`Scheduler::next_timer`]), or to the deadline if that comes first.
//! 2. Every time-based behaviour reads the virtual clock: backoff expiry and the 1 s and 30 s
//!    flushes, Permit timeouts, churn ticks, delete and update rates, `sleep`, steady-state
//!    periods, wait timeouts, and the collectors (throughput and SchedulingDuration are in
//!    virtual seconds; memory is sampled at a window's start and end).
//! 3. Filter's parallel pass returns what the sequential pass would
//!    ([`SchedulerConfig::deterministic`](tidegate_engine::SchedulerConfig)), Score's blocks are
//!    fixed, and host selection draws from the seeded RNG in attempt order — so placements are
//!    the same for any `--threads`.
//!
//! Invariant: the same config, seed and attempt cost give the same sequence of store
//! operations, hence the same placements digest, on any machine and thread count.

use crate::cluster::store::{NsStats, Store};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tidegate_engine::Scheduler;
use tidegate_engine::clock::{Clock, RealClock, Time, VirtualClock};

/// Which clock a run uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ClockMode {
    /// Wall time; the scheduler runs on its own threads.
    #[default]
    Real,
    /// A virtual clock driven by the run itself; each scheduling attempt costs `attempt_cost`.
    Virtual { attempt_cost: Duration },
}

impl ClockMode {
    /// The default cost of one attempt on the virtual clock.
    pub const DEFAULT_ATTEMPT_COST: Duration = Duration::from_micros(100);

    /// `real` or `virtual`, as results files record it.
    pub fn name(&self) -> &'static str {
        if self.is_virtual() { "virtual" } else { "real" }
    }

    pub fn is_virtual(&self) -> bool {
        matches!(self, ClockMode::Virtual { .. })
    }
}

/// One step of a background op: runs at its due time (the argument), returns when the next
/// step is due, or `None` when the op is finished.
pub type Step = Box<dyn FnMut(Time) -> Option<Time> + Send>;

/// The run's clock and its background ops.
pub enum Pace {
    Real(RealPace),
    Virtual(Sim),
}

pub struct RealPace {
    clock: Arc<RealClock>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

/// The virtual-time driver (see the module documentation).
pub struct Sim {
    clock: Arc<VirtualClock>,
    sched: Arc<Scheduler>,
    attempt_cost: Duration,
    /// Background ops: (due, start order, step).
    tasks: Vec<(Time, u64, Step)>,
    started: u64,
}

impl Pace {
    /// The clock to give the scheduler's queue and the store.
    pub fn new_clock(mode: ClockMode) -> Arc<dyn Clock> {
        match mode {
            ClockMode::Real => Arc::new(RealClock::new()),
            ClockMode::Virtual { .. } => Arc::new(VirtualClock::new()),
        }
    }

    pub fn real() -> Pace {
        Pace::Real(RealPace {
            clock: Arc::new(RealClock::new()),
            stop: Arc::new(AtomicBool::new(false)),
            threads: Vec::new(),
        })
    }

    /// A virtual pace over `clock`, which must be the scheduler's queue clock.
    pub fn virtual_time(
        clock: Arc<VirtualClock>,
        sched: Arc<Scheduler>,
        attempt_cost: Duration,
    ) -> Pace {
        Pace::Virtual(Sim {
            clock,
            sched,
            attempt_cost,
            tasks: Vec::new(),
            started: 0,
        })
    }

    pub fn is_virtual(&self) -> bool {
        matches!(self, Pace::Virtual(_))
    }

    /// Now, as an offset from the pace's epoch.
    pub fn now(&self) -> Time {
        match self {
            Pace::Real(r) => r.clock.now(),
            Pace::Virtual(s) => s.clock.now(),
        }
    }

    /// Waits until `done(stats)` holds for the pods of `namespace` matching `selector`, or
    /// `timeout` passes (false).
    ///
    /// `poll`: `None` ends the wait the moment the condition holds (the store tells every
    /// change). `Some(interval)` checks it as upstream's
    /// `wait.PollUntilContextTimeout(ctx, interval, timeout, immediate=true, ...)` does: at
    /// the start, then on a ticker every `interval` from the start, giving up when the
    /// timeout comes before the next tick.
    pub fn wait_ns(
        &mut self,
        store: &Store,
        namespace: &str,
        selector: &BTreeMap<String, String>,
        timeout: Duration,
        poll: Option<Duration>,
        done: impl Fn(&NsStats) -> bool,
    ) -> bool {
        if let Some(interval) = poll.filter(|p| !p.is_zero()) {
            let start = self.now();
            let deadline = start + timeout;
            let mut tick: u32 = 0;
            loop {
                if done(&store.ns_stats_matching(namespace, selector)) {
                    return true;
                }
                tick = tick.saturating_add(1);
                let next = start + interval.saturating_mul(tick);
                if next >= deadline {
                    self.sleep_until(deadline);
                    return false;
                }
                self.sleep_until(next);
            }
        }
        match self {
            Pace::Real(_) => store.wait_ns_matching(namespace, selector, timeout, done),
            Pace::Virtual(s) => {
                let deadline = s.clock.now() + timeout;
                s.run_until(deadline, &mut || {
                    done(&store.ns_stats_matching(namespace, selector))
                })
            }
        }
    }

    /// Lets time pass until `t` (the scheduler keeps working meanwhile).
    pub fn sleep_until(&mut self, t: Time) {
        match self {
            Pace::Real(r) => {
                let now = r.clock.now();
                if t > now {
                    sleep_until(Instant::now() + (t - now), &r.stop);
                }
            }
            Pace::Virtual(s) => {
                s.run_until(t, &mut || false);
            }
        }
    }

    /// Virtual time only: drives the simulation until `t`, or until `until_done` (asked after
    /// every step) returns true.
    pub fn run_virtual_until(&mut self, t: Time, until_done: &mut dyn FnMut() -> bool) -> bool {
        match self {
            Pace::Real(_) => unreachable!("run_virtual_until on a real pace"),
            Pace::Virtual(s) => s.run_until(t, until_done),
        }
    }

    /// Starts a background op whose first step is due at `first`; it stops when its step
    /// returns `None` or when the workload ends ([`Pace::finish`]).
    pub fn spawn(&mut self, first: Time, mut step: Step) {
        match self {
            Pace::Real(r) => {
                let stop = r.stop.clone();
                let clock = r.clock.clone();
                let name = "tidegate-background".to_string();
                let handle = std::thread::Builder::new().name(name).spawn(move || {
                    let mut due = first;
                    loop {
                        let now = clock.now();
                        if due > now {
                            sleep_until(Instant::now() + (due - now), &stop);
                        }
                        if stop.load(Ordering::Relaxed) {
                            return;
                        }
                        match step(clock.now().max(due)) {
                            Some(next) => due = next,
                            None => return,
                        }
                    }
                });
                if let Ok(h) = handle {
                    r.threads.push(h);
                }
            }
            Pace::Virtual(s) => {
                s.started += 1;
                s.tasks.push((first, s.started, step));
            }
        }
    }

    /// Ends the background ops.
    pub fn finish(self) {
        if let Pace::Real(r) = self {
            r.stop.store(true, Ordering::SeqCst);
            for t in r.threads {
                let _ = t.join();
            }
        }
    }
}

impl Sim {
    /// Drives the simulation until `done()` holds (true) or the clock reaches `deadline`
    /// (false; `done()` is asked once more there).
    pub fn run_until(&mut self, deadline: Time, done: &mut dyn FnMut() -> bool) -> bool {
        loop {
            if done() {
                return true;
            }
            if crate::interrupt::requested().is_some() {
                return false;
            }
            let now = self.clock.now();
            if now >= deadline {
                return false;
            }
            // 1. The earliest due background step.
            let due = self
                .tasks
                .iter()
                .enumerate()
                .filter(|(_, t)| t.0 <= now)
                .min_by_key(|(_, t)| (t.0, t.1))
                .map(|(i, _)| i);
            if let Some(i) = due {
                let at = self.tasks[i].0;
                match (self.tasks[i].2)(at) {
                    Some(next) => self.tasks[i].0 = next,
                    None => {
                        drop(self.tasks.remove(i));
                    }
                }
                continue;
            }
            // 2. One scheduling attempt.
            if self.sched.try_schedule_one() {
                self.clock.advance(self.attempt_cost);
                continue;
            }
            // 3. Idle: jump to the next thing that can happen.
            let next = self
                .tasks
                .iter()
                .map(|t| t.0)
                .chain(self.sched.next_timer())
                .min()
                .map_or(deadline, |t| t.min(deadline));
            // A timer that is due but moved nothing must not stall the clock.
            self.clock
                .set(next.max(now + Duration::from_nanos(1)).min(deadline));
        }
    }
}

/// When the `n`-th (from 0) action of an op paced at `per_second` is due, the op starting at
/// `start`: upstream's `time.NewTicker(time.Second / time.Duration(perSecond))` fires first one
/// period after it is made, then every period (deletePods' `deletePodsPerSecond`, updateAny's
/// `updatePerSecond`). The period is whole nanoseconds, as Go's integer division gives it.
pub fn ticker_due(start: Time, per_second: f64, n: usize) -> Time {
    let period = if per_second.fract() == 0.0 && per_second >= 1.0 {
        Duration::from_nanos(1_000_000_000 / per_second as u64)
    } else {
        Duration::from_nanos((1e9 / per_second) as u64)
    };
    start + period * (n as u32).saturating_add(1)
}

/// Sleeps until `deadline`, in small steps so that `stop` is honoured.
pub fn sleep_until(deadline: Instant, stop: &AtomicBool) {
    loop {
        let now = Instant::now();
        if now >= deadline
            || stop.load(Ordering::Relaxed)
            || crate::interrupt::requested().is_some()
        {
            return;
        }
        std::thread::sleep((deadline - now).min(Duration::from_millis(20)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Go's `time.NewTicker(time.Second / time.Duration(n))` fires first one period after it
    /// is made; the period is whole nanoseconds.
    // provenance: test/integration/scheduler_perf/executor.go runDeletePodsOp; update.go updateAny.run
    #[test]
    fn ticker_due_is_one_period_after_the_start_then_every_period() {
        let start = Duration::from_secs(10);
        assert_eq!(
            ticker_due(start, 2.0, 0),
            start + Duration::from_millis(500)
        );
        assert_eq!(
            ticker_due(start, 2.0, 2),
            start + Duration::from_millis(1500)
        );
        // 1s / 3 = 333,333,333 ns, so the third tick is at 999,999,999 ns.
        assert_eq!(
            ticker_due(start, 3.0, 2),
            start + Duration::from_nanos(999_999_999)
        );
    }
}
