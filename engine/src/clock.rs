//! Time for the scheduler (queue flushes and backoff, Permit timeouts): real by default, virtual for
//! deterministic runs and tests.
//!
//! Times are `Duration`s since the clock's own epoch, so a virtual clock can start at zero and
//! backoff expiry and flush periods are testable without sleeping.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A point in time, as the offset from the clock's epoch.
pub type Time = Duration;

pub trait Clock: Send + Sync {
    fn now(&self) -> Time;
}

/// Monotonic wall time.
#[derive(Debug)]
pub struct RealClock {
    start: Instant,
}

impl RealClock {
    pub fn new() -> RealClock {
        RealClock {
            start: Instant::now(),
        }
    }
}

impl Default for RealClock {
    fn default() -> Self {
        RealClock::new()
    }
}

impl Clock for RealClock {
    fn now(&self) -> Time {
        self.start.elapsed()
    }
}

/// A clock that moves only when told to.
#[derive(Debug, Default)]
pub struct VirtualClock {
    nanos: AtomicU64,
}

impl VirtualClock {
    pub fn new() -> VirtualClock {
        VirtualClock::default()
    }
    pub fn advance(&self, d: Duration) {
        self.nanos.fetch_add(
            u64::try_from(d.as_nanos()).unwrap_or(u64::MAX),
            Ordering::SeqCst,
        );
    }
    pub fn set(&self, t: Time) {
        self.nanos.store(
            u64::try_from(t.as_nanos()).unwrap_or(u64::MAX),
            Ordering::SeqCst,
        );
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Time {
        Duration::from_nanos(self.nanos.load(Ordering::SeqCst))
    }
}
