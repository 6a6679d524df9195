//! The run's signals. SIGUSR2: kube-scheduler's queue dumper
//! (`pkg/scheduler/backend/cache/debugger`): a running `tidegate run` writes the state of its
//! scheduling queue to stderr and goes on. SIGINT/SIGTERM: the run stops at its next safe
//! point (`interrupt`), keeping every finished workload; a second one quits at once.
//!
//! What it writes, in kube's words where kube has them:
//!
//! ```text
//! Dump of scheduling queue (workload SchedulingBasic/500Nodes):
//! activeQ:12; backoffQ:0; unschedulablePods:3; gated:50
//! gated pods per gate: example.com/hold=50
//! longest waiting: activeQ namespace-2/pod-x 1.52s; unschedulablePods ns/pod-y 4.10s; gated ns/pod-z 6.00s
//! ```
//!
//! The signal is read by a thread of `signal-hook` (no handler code runs in the signal
//! itself); the dump takes the queue's locks briefly, so the run's results are unchanged.
//! Between workloads it says so. Unix only (elsewhere there is no SIGUSR2).

use std::sync::Arc;
use tidegate_bench::run::LiveScheduler;

/// Starts the dumper thread for the run that `live` follows.
#[cfg(unix)]
pub(crate) fn start(live: Arc<LiveScheduler>) -> std::io::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM, SIGUSR2};
    use tidegate_bench::interrupt;
    let mut signals = signal_hook::iterator::Signals::new([SIGUSR2, SIGINT, SIGTERM])?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                if sig == SIGUSR2 {
                    eprint!("{}{}", clear_progress_line(), dump(&live));
                } else if interrupt::request(sig) {
                    // Asked twice: quit at once.
                    std::process::exit(128 + sig);
                } else {
                    eprintln!(
                        "{}tidegate: {}: stopping at the next safe point; finished workloads are kept (again to quit at once)",
                        clear_progress_line(),
                        interrupt::signal_name(sig)
                    );
                }
            }
        })?;
    Ok(())
}

/// On a terminal, the progress line is erased first (carriage return, erase line) so the
/// dump starts at the line's beginning; the line is drawn again below it at its next tick.
#[cfg(unix)]
fn clear_progress_line() -> &'static str {
    use std::io::IsTerminal;
    if std::io::stderr().is_terminal() {
        "\r\x1b[2K"
    } else {
        ""
    }
}

#[cfg(not(unix))]
pub(crate) fn start(_: Arc<LiveScheduler>) -> std::io::Result<()> {
    Ok(())
}

/// The dump of the workload running now.
pub(crate) fn dump(live: &LiveScheduler) -> String {
    let Some((name, sched)) = live.running() else {
        return "Dump of scheduling queue: no workload is running\n".into();
    };
    let d = sched.queue.dump();
    let mut out = format!(
        "Dump of scheduling queue (workload {name}):\n{}\n",
        d.summary()
    );
    if !d.gated_per_gate.is_empty() {
        let gates: Vec<String> = d
            .gated_per_gate
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(g, n)| format!("{g}={n}"))
            .collect();
        out.push_str(&format!("gated pods per gate: {}\n", gates.join(", ")));
    }
    let oldest: Vec<String> = d
        .oldest
        .iter()
        .filter_map(|(q, o)| {
            o.as_ref()
                .map(|(k, w)| format!("{q} {k} {:.2}s", w.as_secs_f64()))
        })
        .collect();
    if !oldest.is_empty() {
        out.push_str(&format!("longest waiting: {}\n", oldest.join("; ")));
    }
    out
}
