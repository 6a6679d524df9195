//! Keeps the Filter/Score pool's helper threads awake while scheduling cycles keep coming.
//!
//! A rayon worker with nothing to do spins briefly and then sleeps on a futex. Waking it takes
//! an inter-processor interrupt; on a small VM that costs the helper 10–15 µs before it
//! joins, which is most of a 30 µs Filter phase (measured on the 2-vCPU machine: the helper
//! started 15.6 µs into a 30 µs pass and judged a third of it). Between two fan-outs of a
//! busy scheduler (Filter, then Score, then the next pod's Filter) there are only a few
//! microseconds of serial work, too short to be worth a sleep and a wake-up.
//!
//! Protocol:
//! - The scheduling thread calls [`WarmPool::keep_warm`] at the start of each cycle that may
//!   fan out. That stamps the time and records the caller; when some worker other than the
//!   caller has no spinner and no broadcast is in flight, it broadcasts one spinner to every
//!   worker (`spawn_broadcast`: exactly one job per thread).
//! - A spinner on worker `i` leaves at once when `i` is the caller (it must not stall the
//!   scheduling thread in one of its own waits) or when worker `i` already runs a spinner
//!   (`yield_now` below may run the next broadcast's copy). Otherwise it marks `i` active and
//!   loops: run any job waiting in the pool (`rayon::yield_now`, which steals a fan-out's
//!   jobs as soon as they are pushed), else give the CPU to any other runnable thread
//!   (`std::thread::yield_now`, so a binder or a workload driver on a 2-core machine is not
//!   starved), until no cycle has called for [`WarmPool::linger`]. Then it clears the mark,
//!   and the worker falls back to rayon's own idle loop and sleep.
//! - A job a spinner runs may itself be the scheduling loop (a harness's `install` lands on
//!   whichever worker takes it). Its `keep_warm` then comes from that worker, and the other
//!   workers' marks decide whether to broadcast: the one they were counted on is the caller.
//!
//! Invariants: `active[i]` is written only by worker `i` (set before its spinner counts itself
//! started, cleared when the spinner leaves), so at most one spinner loops per worker.
//! `inflight` counts the broadcast's copies not yet started; a broadcast is sent only when it
//! is 0. A spinner never blocks: it only runs jobs and yields, so it can neither deadlock the
//! pool nor delay a job by more than one `yield_now` round. Outcomes never depend on it: it
//! changes which thread runs a job and when, nothing else.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A rayon pool whose helpers stay awake while [`WarmPool::keep_warm`] keeps being called.
pub(crate) struct WarmPool {
    pool: Arc<rayon::ThreadPool>,
    inner: Arc<Inner>,
}

/// `caller` when the caller is outside the pool.
const OUTSIDE: usize = usize::MAX;

struct Inner {
    /// Per worker: a spinner loops there.
    active: Vec<AtomicBool>,
    /// Copies of the last broadcast that have not started.
    inflight: AtomicUsize,
    /// The worker that last called `keep_warm`, or [`OUTSIDE`].
    caller: AtomicUsize,
    /// When `keep_warm` was last called, in nanoseconds since `epoch`.
    last_call: AtomicU64,
    epoch: Instant,
    linger: Duration,
}

impl WarmPool {
    /// How long helpers keep spinning after the last cycle by default: several cycles of a
    /// busy scheduler, and short enough that an idle one gives the CPUs back at once.
    pub(crate) const DEFAULT_LINGER: Duration = Duration::from_millis(1);

    pub(crate) fn new(pool: Arc<rayon::ThreadPool>, linger: Duration) -> WarmPool {
        let threads = pool.current_num_threads();
        WarmPool {
            pool,
            inner: Arc::new(Inner {
                active: (0..threads).map(|_| AtomicBool::new(false)).collect(),
                inflight: AtomicUsize::new(0),
                caller: AtomicUsize::new(OUTSIDE),
                last_call: AtomicU64::new(0),
                epoch: Instant::now(),
                linger,
            }),
        }
    }

    #[cfg(test)]
    pub(crate) fn pool(&self) -> &Arc<rayon::ThreadPool> {
        &self.pool
    }

    /// The workers a spinner loops on (for tests).
    #[cfg(test)]
    pub(crate) fn spinning(&self) -> Vec<usize> {
        (0..self.inner.active.len())
            .filter(|&i| self.inner.active[i].load(Ordering::Acquire))
            .collect()
    }

    /// A cycle that may fan out is starting: keep the helpers (or wake them) for it.
    pub(crate) fn keep_warm(&self) {
        let inner = &self.inner;
        let threads = inner.active.len();
        if threads < 2 {
            return;
        }
        let me = self.pool.current_thread_index();
        inner.caller.store(me.unwrap_or(OUTSIDE), Ordering::Relaxed);
        inner.last_call.store(inner.nanos(), Ordering::Relaxed);
        let all_warm =
            (0..threads).all(|i| Some(i) == me || inner.active[i].load(Ordering::Acquire));
        if all_warm
            || inner
                .inflight
                .compare_exchange(0, threads, Ordering::AcqRel, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        let inner = inner.clone();
        self.pool
            .spawn_broadcast(move |ctx| inner.spin(ctx.index()));
    }
}

impl Inner {
    fn nanos(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// A broadcast's copy on worker `i`.
    fn spin(&self, i: usize) {
        let stay =
            self.caller.load(Ordering::Relaxed) != i && !self.active[i].load(Ordering::Relaxed);
        if stay {
            self.active[i].store(true, Ordering::Release);
        }
        self.inflight.fetch_sub(1, Ordering::AcqRel);
        if !stay {
            return;
        }
        let linger = self.linger.as_nanos() as u64;
        loop {
            if let Some(rayon::Yield::Executed) = rayon::yield_now() {
                continue;
            }
            let last = self.last_call.load(Ordering::Relaxed);
            if self.nanos().saturating_sub(last) > linger {
                break;
            }
            std::thread::yield_now();
        }
        self.active[i].store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(threads: usize) -> Arc<rayon::ThreadPool> {
        Arc::new(
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap(),
        )
    }

    /// Waits (up to a generous bound: this is not a timing test) for `cond`.
    fn eventually(mut cond: impl FnMut() -> bool) -> bool {
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(10) {
            if cond() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        false
    }

    #[test]
    fn helpers_spin_while_called_and_stop_after_the_linger() {
        let w = WarmPool::new(pool(3), Duration::from_millis(20));
        // From inside the pool, as the scheduling loop calls it: the two other workers spin.
        let me = w.pool().install(|| {
            w.keep_warm();
            rayon::current_thread_index().unwrap()
        });
        let others: Vec<usize> = (0..3).filter(|&i| i != me).collect();
        assert!(eventually(|| w.spinning() == others), "{:?}", w.spinning());
        // While calls keep coming (one a millisecond, well inside the linger), every worker
        // but the caller spins. (An install may land on a spinning worker, which then runs it
        // nested in its spinner: that worker counts as spinning too, and the one it took over
        // from is woken.) A woken worker may need a moment to be scheduled on a loaded
        // machine, so this is waited for, with the calls going on.
        for _ in 0..5 {
            let mut last = (0, vec![]);
            let all_spin = eventually(|| {
                let me = w.pool().install(|| {
                    w.keep_warm();
                    rayon::current_thread_index().unwrap()
                });
                let spinning = w.spinning();
                let ok = (0..3).all(|i| i == me || spinning.contains(&i));
                last = (me, spinning);
                ok
            });
            assert!(all_spin, "caller {}, spinning {:?}", last.0, last.1);
            std::thread::sleep(Duration::from_millis(5));
        }
        // Calls stop: every spinner leaves.
        assert!(eventually(|| w.spinning().is_empty()), "{:?}", w.spinning());
        // And a later call starts them again.
        w.pool().install(|| w.keep_warm());
        assert!(eventually(|| w.spinning().len() >= 2), "{:?}", w.spinning());
        assert!(eventually(|| w.spinning().is_empty()), "{:?}", w.spinning());
    }

    #[test]
    fn from_outside_the_pool_every_worker_spins() {
        let w = WarmPool::new(pool(2), Duration::from_millis(20));
        w.keep_warm();
        assert!(eventually(|| w.spinning() == [0, 1]), "{:?}", w.spinning());
        assert!(eventually(|| w.spinning().is_empty()), "{:?}", w.spinning());
    }

    /// The scheduling loop moves to the worker that was spinning (a harness installs each
    /// batch of cycles anew, and a spinner's `yield_now` takes the injected job): the worker
    /// it left must start spinning.
    #[test]
    fn a_loop_that_moves_to_the_spinning_worker_wakes_the_other() {
        let w = WarmPool::new(pool(2), Duration::from_secs(5));
        let first = w.pool().install(|| {
            w.keep_warm();
            rayon::current_thread_index().unwrap()
        });
        let other = 1 - first;
        assert!(eventually(|| w.spinning() == [other]), "{:?}", w.spinning());
        // Install until the job lands on the spinning worker (it takes injected jobs).
        let t = Instant::now();
        loop {
            let here = w.pool().install(|| {
                w.keep_warm();
                rayon::current_thread_index().unwrap()
            });
            if here == other {
                break;
            }
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "never ran on {other}"
            );
        }
        assert!(
            eventually(|| w.spinning() == [0, 1]),
            "the worker the loop left was not woken: {:?}",
            w.spinning()
        );
    }

    #[test]
    fn spinning_helpers_run_the_pools_jobs() {
        let w = WarmPool::new(pool(2), Duration::from_secs(5));
        let main = w.pool().install(|| {
            w.keep_warm();
            rayon::current_thread_index().unwrap()
        });
        assert!(eventually(|| w.spinning() == [1 - main]));
        // A fan-out from the scheduling thread: the spinning helper takes part of it.
        let helped = AtomicBool::new(false);
        let sum = AtomicUsize::new(0);
        w.pool().install(|| {
            let main = rayon::current_thread_index().unwrap();
            for _ in 0..200 {
                rayon::scope(|s| {
                    for i in 0..8 {
                        let (helped, sum) = (&helped, &sum);
                        s.spawn(move |_| {
                            if rayon::current_thread_index() != Some(main) {
                                helped.store(true, Ordering::Relaxed);
                            }
                            std::thread::sleep(Duration::from_micros(50));
                            sum.fetch_add(i, Ordering::Relaxed);
                        });
                    }
                });
            }
        });
        assert_eq!(sum.load(Ordering::Relaxed), 200 * 28);
        assert!(helped.load(Ordering::Relaxed), "the helper never ran a job");
    }

    #[test]
    fn one_thread_pool_never_spins() {
        let w = WarmPool::new(pool(1), Duration::from_millis(20));
        w.pool().install(|| w.keep_warm());
        std::thread::sleep(Duration::from_millis(5));
        assert!(w.spinning().is_empty());
    }
}
