//! `--flamegraph`'s profiler: the CPU samples of a run's collection windows.
//!
//! Protocol: one pprof sampling profiler runs from the first collection window to the end of
//! the run; each window reads its counts at open and close and keeps the difference,
//! **unsymbolized** (instruction pointers), in a [`Profile`] (`output::flame`, which draws
//! the flamegraph). Windows and workloads are merged and symbolized once, when the SVG is
//! written after the last workload. The memory the profiler takes when it starts (the
//! symbolizer it warms up with the binary's debug information, and its sample table) stays
//! resident to the end; it is measured once and reported apart from the workloads' peak RSS
//! (`Profile::profiler_mb`). One profiler per window would allocate a fresh sample table at
//! each window's end, inside the workload.

use crate::output::flame::{Profile, Samples};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::OnceLock;

/// The profiler's counts so far, each stack reduced to its addresses.
fn samples_of(report: pprof::UnresolvedReport) -> Samples {
    let mut out: HashMap<(String, Vec<usize>), u64> = HashMap::new();
    for (frames, n) in report.data {
        let name =
            String::from_utf8_lossy(&frames.thread_name[..frames.thread_name_length]).into_owned();
        let ips = frames.frames.iter().map(|f| f.ip() as usize).collect();
        *out.entry((name, ips)).or_insert(0) += n.max(0) as u64;
    }
    Samples::new(out)
}

/// The run's one profiler. It starts with the first collection window and runs to the end
/// of the run ([`stop_profiler`]): pprof allocates a new sample table each time a profiler
/// stops, and the symbolizer it warms up at its start stays resident, so one profiler for
/// the run costs that memory once, measured once. A window reads the counts at its open and
/// at its close and keeps the difference.
struct Running {
    guard: pprof::ProfilerGuard<'static>,
}

static PROFILER: Mutex<Option<Running>> = Mutex::new(None);
/// The resident memory the profiler took when it first started (MB).
static PROFILER_MB: OnceLock<Option<f64>> = OnceLock::new();

/// The samples so far, starting the profiler if it is not running (None where it cannot
/// start). 997 Hz asked (a prime, off the timer ticks); the kernel's tick caps what arrives
/// (250 Hz on the 2-vCPU VM). Samples inside libc are kept (memcpy/memset are work).
pub(crate) fn read_profiler() -> Option<Samples> {
    let mut running = PROFILER.lock();
    if running.is_none() {
        let before = super::memory::rss_mb();
        let guard = pprof::ProfilerGuardBuilder::default()
            .frequency(997)
            .build()
            .ok()?;
        let after = super::memory::rss_mb();
        PROFILER_MB.get_or_init(|| before.zip(after).map(|(b, a)| (a - b).max(0.0)));
        *running = Some(Running { guard });
    }
    let report = running.as_ref()?.guard.report().build_unresolved().ok()?;
    Some(samples_of(report))
}

/// Stops the run's profiler (at the end of a run with `--flamegraph`).
pub fn stop_profiler() {
    PROFILER.lock().take();
}

/// A window's samples: those taken since `base` was read.
pub(crate) fn window(now: Samples, base: &Samples) -> Profile {
    Profile::window(now, base, PROFILER_MB.get().copied().flatten())
}
