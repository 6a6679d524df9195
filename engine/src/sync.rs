//! The primitives of the protocols loom models, in one place, so that loom can replace them
//! (`RUSTFLAGS="--cfg loom"`, see `ci/loom.sh`) and explore every interleaving of the real code.
//!
//! Under `cfg(loom)`: loom's `Mutex` and atomics, and a mutex-backed cell in place of
//! `ArcSwapOption`. Otherwise: parking_lot's `Mutex` and arc-swap.
//!
//! What loom covers, exactly: the two modules that take their locks and atomics from here,
//! `queue/active.rs` (activeQ's shards: push, pop by the cached tops, delete by generation) and
//! `queue/mod.rs` (the queue lock and its condition variable: a pod's ungate racing its
//! delete), through `engine/tests/loom_active.rs` and `engine/tests/loom_gated.rs`. Every other
//! module that shares state across threads imports `std::sync::atomic` or `parking_lot`
//! directly and is **not** loom-modelled: counters and statistics (`framework/metrics`,
//! `api/intern.rs`, the cache's and nominator's generation counters), the rayon-side state of
//! the parallel Filter (`framework/parallelize.rs`, `framework/warm_pool.rs`), Permit's waiting
//! pods, the binder threads and the scheduler loop (`scheduler/`), and the plugins' kept sums.
//! Those use a lock or a single atomic per fact (no lock-free protocol between two atomics), and
//! are exercised by the threaded tests and, for the gated set and the unschedulable index, by
//! Miri (`ci/miri.sh`). A module that grows a lock-free protocol of its own moves its primitives
//! here and gets a loom model.

#[cfg(not(loom))]
mod imp {
    pub(crate) use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

    /// A mutex with parking_lot's API (`lock` returns the guard).
    pub(crate) type Mutex<T> = parking_lot::Mutex<T>;
    pub(crate) type MutexGuard<'a, T> = parking_lot::MutexGuard<'a, T>;
    pub(crate) type Condvar = parking_lot::Condvar;

    /// Waits on `cv` for at most `d`, releasing the guard's lock meanwhile.
    pub(crate) fn wait_for<T>(cv: &Condvar, guard: &mut MutexGuard<'_, T>, d: std::time::Duration) {
        cv.wait_for(guard, d);
    }

    /// An atomically replaceable `Option<Arc<T>>`.
    pub(crate) struct ArcCell<T>(arc_swap::ArcSwapOption<T>);

    impl<T> ArcCell<T> {
        pub(crate) fn empty() -> Self {
            ArcCell(arc_swap::ArcSwapOption::empty())
        }
        pub(crate) fn load_full(&self) -> Option<std::sync::Arc<T>> {
            self.0.load_full()
        }
        pub(crate) fn store(&self, v: Option<std::sync::Arc<T>>) {
            self.0.store(v)
        }
    }
}

#[cfg(loom)]
mod imp {
    pub use loom::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

    /// loom's mutex behind parking_lot's API.
    pub struct Mutex<T>(loom::sync::Mutex<T>);
    pub type MutexGuard<'a, T> = loom::sync::MutexGuard<'a, T>;

    impl<T> Mutex<T> {
        pub fn new(v: T) -> Self {
            Mutex(loom::sync::Mutex::new(v))
        }
        pub fn lock(&self) -> MutexGuard<'_, T> {
            self.0.lock().expect("loom mutex poisoned")
        }
    }

    /// Under loom, waiting is a yield: the models use non-blocking pops.
    pub struct Condvar;

    impl Condvar {
        pub fn new() -> Self {
            Condvar
        }
        pub fn notify_one(&self) {}
        pub fn notify_all(&self) {}
    }

    pub fn wait_for<T>(_cv: &Condvar, _guard: &mut MutexGuard<'_, T>, _d: std::time::Duration) {
        loom::thread::yield_now();
    }

    pub struct ArcCell<T>(loom::sync::Mutex<Option<std::sync::Arc<T>>>);

    impl<T> ArcCell<T> {
        pub fn empty() -> Self {
            ArcCell(loom::sync::Mutex::new(None))
        }
        pub fn load_full(&self) -> Option<std::sync::Arc<T>> {
            self.0.lock().expect("loom mutex poisoned").clone()
        }
        pub fn store(&self, v: Option<std::sync::Arc<T>>) {
            *self.0.lock().expect("loom mutex poisoned") = v;
        }
    }
}

pub(crate) use imp::*;
