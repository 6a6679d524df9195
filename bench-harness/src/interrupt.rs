//! Stopping a run on SIGINT/SIGTERM at the next safe point.
//!
//! The binary's signal thread calls [`request`]; the run checks [`requested`] between ops,
//! in every wait and sleep, and in the virtual clock's loop, and ends the workload there
//! (reported as interrupted); no further workload starts. Everything already finished has
//! been reported and written by then (results stream out as each workload ends).

use std::sync::atomic::{AtomicI32, Ordering};

/// The signal that asked the run to stop (0: none).
static REQUESTED: AtomicI32 = AtomicI32::new(0);

/// Asks the run to stop (`signal`: the signal's number). Returns whether it had already
/// been asked.
pub fn request(signal: i32) -> bool {
    REQUESTED.swap(signal, Ordering::SeqCst) != 0
}

/// The signal that asked the run to stop, if one did.
pub fn requested() -> Option<i32> {
    match REQUESTED.load(Ordering::Relaxed) {
        0 => None,
        s => Some(s),
    }
}

/// The signal's name for messages.
pub fn signal_name(signal: i32) -> &'static str {
    match signal {
        2 => "SIGINT",
        15 => "SIGTERM",
        _ => "a signal",
    }
}

/// The start of the failure message of a workload a signal stopped.
const INTERRUPTED: &str = "interrupted by ";

/// The failure message of a workload `signal` stopped `at` (`op 3 (createPods)`).
pub fn interruption(signal: i32, at: &str) -> String {
    format!(
        "{INTERRUPTED}{} at {at}; the workload's results are incomplete",
        signal_name(signal)
    )
}

/// Whether a workload's failure message is a signal's interruption ([`interruption`]).
pub fn is_interruption(msg: &str) -> bool {
    msg.starts_with(INTERRUPTED)
}
