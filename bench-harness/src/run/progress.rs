//! The progress bar on stderr (indicatif) while a workload runs: the op being executed, and
//! the store's created/bound/deleted counters refreshed four times a second. Only when stderr
//! is a terminal and the caller asked for it (`tidegate run` does); pipes and CI see nothing.
//! It reads counters only, so it changes nothing a run does (virtual-clock runs included).

use crate::cluster::store::Store;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use parking_lot::Mutex;
use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

pub struct Progress {
    bar: Option<ProgressBar>,
    opcode: Arc<Mutex<&'static str>>,
    stop: Arc<AtomicBool>,
    ticker: Option<JoinHandle<()>>,
}

impl Progress {
    /// A bar for workload `name` with `ops` ops, if `enabled` and stderr is a terminal.
    pub fn start(enabled: bool, name: &str, ops: usize, store: &Arc<Store>) -> Progress {
        let mut p = Progress {
            bar: None,
            opcode: Arc::new(Mutex::new("")),
            stop: Arc::new(AtomicBool::new(false)),
            ticker: None,
        };
        if !enabled || !std::io::stderr().is_terminal() {
            return p;
        }
        let bar = ProgressBar::with_draw_target(Some(ops as u64), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(
            "{spinner} {prefix} [{elapsed_precise}] op {pos}/{len} {wide_msg}",
        ) {
            bar.set_style(style);
        }
        bar.set_prefix(name.to_string());
        bar.enable_steady_tick(Duration::from_millis(120));
        let (b, s, op, flag) = (bar.clone(), store.clone(), p.opcode.clone(), p.stop.clone());
        p.ticker = std::thread::Builder::new()
            .name("tidegate-progress".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    let (created, bound, deleted) = s.progress();
                    let opcode = *op.lock();
                    b.set_message(format!(
                        "{opcode}  created {created} · bound {bound} · deleted {deleted}"
                    ));
                    std::thread::sleep(Duration::from_millis(250));
                }
            })
            .ok();
        p.bar = Some(bar);
        p
    }

    /// Op `i` (0-based) starts.
    pub fn op(&self, i: usize, opcode: &'static str) {
        if let Some(b) = &self.bar {
            *self.opcode.lock() = opcode;
            b.set_position(i as u64 + 1);
        }
    }

    /// Stops the ticker and clears the bar.
    pub fn finish(self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.ticker {
            let _ = t.join();
        }
        if let Some(b) = self.bar {
            b.finish_and_clear();
        }
    }
}
