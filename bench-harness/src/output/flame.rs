//! The flamegraph drawn from a run's CPU samples ([`Profile`]): the samples symbolized,
//! folded and handed to inferno. The profiler that takes them is the run's (`run::flame`);
//! a [`Profile`] is what one or more collection windows gave, **unsymbolized** (instruction
//! pointers), merged over windows and workloads and symbolized once, when the SVG is written
//! after the last workload ([`super::files::write_flamegraph`]).
//!
//! Frames are made readable before inferno draws them ([`fold`]):
//! - a frame symbolized from an inlined call carries only its short name (`score_nodes`);
//!   its module path is restored from the source file it came from
//!   (`tidegate_engine::scheduler::score::score_nodes`);
//! - the plumbing between a thread's start and the scheduler's own code (rayon's job and
//!   join machinery, crossbeam's deques, std's thread start and closure shims) is dropped,
//!   so the Filter/Score work of every pool thread lines up in one tower;
//! - a thread's number is dropped from its name (`tidegate-worker-3` → `tidegate-worker`),
//!   so one root per kind of thread.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A stack as sampled: the thread's name and the instruction pointers, leaf first.
type Stack = (String, Vec<usize>);

/// CPU samples per stack, unsymbolized.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Samples(HashMap<Stack, u64>);

impl Samples {
    /// Counts per stack (the thread's name and the instruction pointers, leaf first).
    pub(crate) fn new(counts: HashMap<Stack, u64>) -> Samples {
        Samples(counts)
    }

    /// These counts less `base`'s (the samples taken between two readings).
    pub(crate) fn since(mut self, base: &Samples) -> Samples {
        self.0.retain(|k, n| {
            *n = n.saturating_sub(base.0.get(k).copied().unwrap_or(0));
            *n > 0
        });
        self
    }
}

/// The CPU samples of one or more collection windows, unsymbolized.
pub struct Profile {
    samples: Samples,
    /// The resident memory the profiler took when it started (MB): its symbolizer and
    /// sample table, the profiler's and not the workload's.
    pub profiler_mb: Option<f64>,
}

impl std::fmt::Debug for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Profile({} stacks)", self.samples.0.len())
    }
}

impl Profile {
    /// A window's samples: those taken since `base` was read, with the profiler's own
    /// memory.
    pub(crate) fn window(now: Samples, base: &Samples, profiler_mb: Option<f64>) -> Profile {
        Profile {
            samples: now.since(base),
            profiler_mb,
        }
    }

    /// Adds `other`'s samples to these.
    pub fn merge(&mut self, other: Profile) {
        for (stack, n) in other.samples.0 {
            *self.samples.0.entry(stack).or_insert(0) += n;
        }
        self.profiler_mb = self.profiler_mb.or(other.profiler_mb);
    }

    /// How many samples were taken.
    pub fn samples(&self) -> u64 {
        self.samples.0.values().sum()
    }

    /// The samples symbolized and folded (`thread;frame;frame count`, root first), as
    /// inferno reads them, sorted.
    pub fn folded(&self) -> Vec<String> {
        let mut stacks: HashMap<String, u64> = HashMap::new();
        let mut cache: HashMap<usize, Vec<(String, Option<PathBuf>)>> = HashMap::new();
        for ((thread, ips), &n) in &self.samples.0 {
            let mut frames: Vec<Vec<(String, Option<PathBuf>)>> = Vec::new();
            let mut skip = false;
            for &ip in ips {
                let symbols = cache.entry(ip).or_insert_with(|| symbolize(ip)).clone();
                // The profiler's own signal handler and the frame that called it.
                if symbols
                    .iter()
                    .any(|(name, _)| name == "perf_signal_handler")
                {
                    skip = true;
                    continue;
                }
                if std::mem::take(&mut skip) {
                    continue;
                }
                frames.push(symbols);
            }
            frames.reverse();
            let borrowed: Vec<Vec<(String, Option<&Path>)>> = frames
                .iter()
                .map(|f| f.iter().map(|(n, p)| (n.clone(), p.as_deref())).collect())
                .collect();
            let key = fold(&thread_kind(thread), &borrowed);
            *stacks.entry(key).or_insert(0) += n;
        }
        let mut lines: Vec<String> = stacks
            .into_iter()
            .map(|(stack, n)| format!("{stack} {n}"))
            .collect();
        lines.sort();
        lines
    }

    /// Draws the flamegraph SVG (inferno) titled `title`, with `subtitle` (the run's
    /// provenance) under it, into `out`.
    pub fn write_svg(&self, title: &str, subtitle: &str, out: &mut Vec<u8>) -> Result<(), String> {
        let lines = self.folded();
        let mut opts = inferno::flamegraph::Options::default();
        opts.title = title.to_string();
        opts.subtitle = Some(subtitle.to_string());
        opts.count_name = "samples".into();
        inferno::flamegraph::from_lines(&mut opts, lines.iter().map(String::as_str), out)
            .map_err(|e| e.to_string())
    }
}

/// The functions at return address `ip`, outermost first (a call and the calls inlined
/// into it), with their source files. A return address points after its call: the call is
/// at `ip - 1`.
fn symbolize(ip: usize) -> Vec<(String, Option<PathBuf>)> {
    let mut out = Vec::new();
    backtrace::resolve(ip.saturating_sub(1) as *mut std::ffi::c_void, |s| {
        let name = s
            .name()
            .map_or_else(|| format!("{ip:#x}"), |n| format!("{n:#}"));
        out.push((name, s.filename().map(Path::to_path_buf)));
    });
    if out.is_empty() {
        out.push((format!("{ip:#x}"), None));
    }
    // backtrace reports the innermost inlined call first.
    out.reverse();
    out
}

/// A thread's name without its number: `tidegate-worker-3` → `tidegate-worker`.
pub fn thread_kind(name: &str) -> String {
    let trimmed = name.trim_end_matches(|c: char| c.is_ascii_digit());
    if trimmed.len() < name.len() && trimmed.len() > 1 {
        trimmed.trim_end_matches(['-', '_', ' ']).to_string()
    } else {
        name.to_string()
    }
}

/// The module path of a source file: `…/engine/src/scheduler/score.rs` →
/// `tidegate_engine::scheduler::score`; `…/rayon-core-1.13.0/src/registry.rs` →
/// `rayon_core::registry`; `/rustc/…/library/core/src/ptr/mod.rs` → `core::ptr`.
pub fn module_of(file: &Path) -> Option<String> {
    // C sources (mimalloc, libc) have no modules.
    if file.extension().is_none_or(|e| e != "rs") {
        return None;
    }
    let parts: Vec<&str> = file.iter().filter_map(|c| c.to_str()).collect();
    let src = parts.iter().rposition(|&c| c == "src")?;
    let dir = *parts.get(src.checked_sub(1)?)?;
    let krate = match dir {
        "engine" => "tidegate_engine".to_string(),
        "bench-harness" => "tidegate_bench".to_string(),
        // A registry folder is `name-1.2.3`: drop the version.
        d => match d.rsplit_once('-') {
            Some((name, v)) if v.starts_with(|c: char| c.is_ascii_digit()) => name,
            _ => d,
        }
        .replace('-', "_"),
    };
    let mut path = vec![krate];
    let rest = &parts[src + 1..];
    for (i, c) in rest.iter().enumerate() {
        let c = if i + 1 == rest.len() {
            c.strip_suffix(".rs").unwrap_or(c)
        } else {
            c
        };
        if !matches!(c, "mod" | "lib" | "main") {
            path.push(c.to_string());
        }
    }
    Some(path.join("::"))
}

/// A frame's name with its module path: names that already carry one are kept; a short
/// name (an inlined call, a closure) gets the module of its source file.
pub fn qualify(name: &str, file: Option<&Path>) -> String {
    // The path is what comes before the generic arguments: `execute<rayon_core::latch::…>`
    // (an inlined call, as line tables name it) is a short name.
    let path = name.split('<').next().unwrap_or(name);
    if path.contains("::") || name.starts_with('<') {
        return name.to_string();
    }
    match file.and_then(module_of) {
        Some(m) => format!("{m}::{name}"),
        None => name.to_string(),
    }
}

/// Frames that only carry work from one place to another: a thread's start, closure and
/// panic shims, rayon's job, join and iterator plumbing, crossbeam's deques. Dropped so the
/// scheduler's frames line up under their thread.
pub fn is_plumbing(qualified: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "rayon_core::",
        "rayon::",
        "<rayon",
        "crossbeam_deque::",
        "crossbeam_epoch::",
        "std::sys::backtrace::",
        "std::sys::thread::",
        "<std::sys::thread::",
        "std::thread::",
        "<std::thread::",
        "std::panicking::",
        "std::panic::",
        "core::ops::function::",
        "<core::ops::function::",
        "<alloc::boxed::Box<dyn core::ops::function::FnOnce",
        "core::panic::unwind_safe::",
        "<core::panic::unwind_safe::",
        "std::rt::",
        "start_thread",
        "clone3",
        "__clone",
        "__libc_start",
    ];
    // The C `main` and `_start` that call Rust's.
    matches!(qualified, "main" | "_start") || PREFIXES.iter().any(|p| qualified.starts_with(p))
}

/// One folded stack: `thread;frame;…`, root first, names qualified, plumbing dropped.
/// `frames` are root first, each a frame's calls from outermost to innermost inlined.
pub fn fold(thread: &str, frames: &[Vec<(String, Option<&Path>)>]) -> String {
    let mut out = thread.replace(';', ":");
    for inlined in frames {
        for (name, file) in inlined {
            let q = qualify(name, *file);
            if is_plumbing(&q) {
                continue;
            }
            out.push(';');
            // `;` separates frames in the folded format; generics never need it.
            out.push_str(&q.replace(';', ":"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_numbers_are_dropped() {
        assert_eq!(thread_kind("tidegate-worker-3"), "tidegate-worker");
        assert_eq!(thread_kind("tidegate-binder-12"), "tidegate-binder");
        assert_eq!(thread_kind("main"), "main");
        assert_eq!(thread_kind("7"), "7");
    }

    #[test]
    fn modules_come_from_source_files() {
        let m = |p: &str| module_of(Path::new(p));
        assert_eq!(
            m("/work/main/engine/src/scheduler/score.rs").as_deref(),
            Some("tidegate_engine::scheduler::score")
        );
        assert_eq!(
            m("/work/main/bench-harness/src/run/mod.rs").as_deref(),
            Some("tidegate_bench::run")
        );
        assert_eq!(
            m("/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/rayon-core-1.13.0/src/registry.rs").as_deref(),
            Some("rayon_core::registry")
        );
        assert_eq!(
            m("/rustc/abc/library/core/src/ptr/mod.rs").as_deref(),
            Some("core::ptr")
        );
        assert_eq!(m("/usr/include/foo.h"), None);
        assert_eq!(
            m("/r/libmimalloc-sys-0.1.49/c_src/mimalloc/v3/src/page.c"),
            None
        );
    }

    #[test]
    fn a_short_name_with_generic_arguments_is_still_short() {
        // Line tables name an inlined call without its path, generics included.
        let job = Path::new("/r/rayon-core-1.13.0/src/job.rs");
        let q = qualify("execute<rayon_core::latch::LatchRef<L>, F, R>", Some(job));
        assert_eq!(
            q,
            "rayon_core::job::execute<rayon_core::latch::LatchRef<L>, F, R>"
        );
        assert!(is_plumbing(&q));
        // Qualified names and trait impls stay as they are.
        assert_eq!(qualify("a::b<c::D>", Some(job)), "a::b<c::D>");
        assert_eq!(qualify("<a::B as c::D>::f", Some(job)), "<a::B as c::D>::f");
    }

    #[test]
    fn inlined_frames_get_their_module_and_plumbing_goes() {
        let engine = Path::new("/w/engine/src/scheduler/score.rs");
        let rayon = Path::new("/r/rayon-1.11.0/src/iter/plumbing/mod.rs");
        let frames = vec![
            vec![(
                "std::sys::backtrace::__rust_begin_short_backtrace".to_string(),
                None,
            )],
            vec![
                (
                    "rayon_core::registry::WorkerThread::wait_until".to_string(),
                    None,
                ),
                ("helper".to_string(), Some(rayon)),
            ],
            vec![("score_nodes".to_string(), Some(engine))],
            vec![(
                "tidegate_engine::plugins::fit::Fit::score".to_string(),
                None,
            )],
        ];
        assert_eq!(
            fold("tidegate-worker", &frames),
            "tidegate-worker;tidegate_engine::scheduler::score::score_nodes;\
             tidegate_engine::plugins::fit::Fit::score"
        );
    }
}
