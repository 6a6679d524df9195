//! The progress line on stderr while a workload runs, drawn by indicatif.
//!
//! Per op it shows what a perf engineer watches: the op (`op 3/7 createPods`), a bar with
//! done/total where the op has a total (pods a `createPods` waits to see scheduled, pods a
//! `barrier` waits for, a `sleep`'s time), the scheduling rate in pods/s over the last few
//! seconds, the ETA, the gated count once gates are in play, and the time in the op.
//!
//! Protocol: a ticker thread samples the store's counters and the queue's gauges four times
//! a second (reads only, so a run is the same with or without the bar, virtual-clock runs
//! included) and hands indicatif one finished line. The line is laid out by [`render`] for
//! the terminal's width: fields are dropped, least important first, until it fits, and the
//! workload's name is shortened from the left; a number is never cut. Nothing at all is drawn
//! unless stderr is a terminal and the caller asked for it (`tidegate run` does unless
//! `--no-progress`); pipes and CI see nothing.

use crate::cluster::store::Store;
use indicatif::{HumanCount, ProgressBar, ProgressDrawTarget, ProgressStyle};
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tidegate_engine::Scheduler;

/// What "done" means for an op, and out of how much.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Goal {
    /// Pods bound since the op started, of `total` (a waiting `createPods`, a `barrier`).
    Bound { total: u64 },
    /// Pods created since the op started, of `total` (`createPods` that does not wait).
    Created { total: u64 },
    /// Time in the op, of the op's duration (`sleep`).
    Time(Duration),
    /// Nothing to count to: the rate and the time in the op only.
    Open,
}

/// One frame of the line, everything [`render`] needs.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame<'a> {
    pub name: &'a str,
    /// 1-based op number, and how many ops the workload has.
    pub op: (usize, usize),
    pub opcode: &'a str,
    /// done/total in the op's unit (pods, or milliseconds for time).
    pub done: u64,
    pub total: Option<u64>,
    pub time_goal: bool,
    /// Pods bound per second over the last few seconds.
    pub rate: Option<f64>,
    pub eta: Option<Duration>,
    /// Gated pods, once any pod of the workload was gated.
    pub gated: Option<u64>,
    pub elapsed: Duration,
}

/// `75s` → `1m15s`; `3725s` → `1h02m`; under a minute in seconds.
fn short_duration(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// The fields of a frame, in display order, each with its rank: when the line is too wide
/// the field with the highest rank goes first.
fn fields(f: &Frame) -> Vec<(u8, String)> {
    let mut v = vec![(1, format!("op {}/{} {}", f.op.0, f.op.1, f.opcode))];
    if let Some(total) = f.total {
        // The bar's place: filled in by `render` with whatever width is left.
        v.push((6, String::new()));
        v.push((
            0,
            if f.time_goal {
                format!(
                    "{}/{}",
                    short_duration(Duration::from_millis(f.done)),
                    short_duration(Duration::from_millis(total))
                )
            } else {
                format!("{}/{} pods", HumanCount(f.done), HumanCount(total))
            },
        ));
    }
    if let Some(r) = f.rate {
        v.push((2, format!("{} pods/s", HumanCount(r.round() as u64))));
    }
    if let Some(eta) = f.eta {
        v.push((3, format!("ETA {}", short_duration(eta))));
    }
    if let Some(g) = f.gated {
        v.push((4, format!("gated {}", HumanCount(g))));
    }
    v.push((5, short_duration(f.elapsed)));
    v
}

/// The progress line for a terminal `width` columns wide: never wider, no field cut (the
/// name aside, shortened from the left with `…`).
pub fn render(f: &Frame, width: usize) -> String {
    const BAR_MIN: usize = 10;
    const BAR_MAX: usize = 30;
    const NAME_MIN: usize = 8;
    let mut fs = fields(f);
    let len = |fs: &[(u8, String)]| -> usize {
        fs.iter()
            .map(|(rank, s)| {
                if *rank == 6 {
                    BAR_MIN + 2
                } else {
                    s.chars().count()
                }
            })
            .sum::<usize>()
            + fs.len().saturating_sub(1)
    };
    while len(&fs) > width && !fs.is_empty() {
        let worst = fs
            .iter()
            .enumerate()
            .max_by_key(|(_, (rank, _))| *rank)
            .map(|(i, _)| i)
            .unwrap_or(0);
        fs.remove(worst);
    }
    let mut spare = width.saturating_sub(len(&fs));
    // The name takes what is left first, shortened from the left (its end says the most);
    // the bar grows into what remains after it.
    let name_len = f.name.chars().count();
    let name = (spare > NAME_MIN && !fs.is_empty()).then(|| {
        let room = spare - 1;
        if name_len <= room {
            spare -= name_len + 1;
            f.name.to_string()
        } else {
            spare = 0;
            let tail: String = f.name.chars().skip(name_len - (room - 1)).collect();
            format!("…{tail}")
        }
    });
    if let Some(bar) = fs.iter_mut().find(|(rank, _)| *rank == 6) {
        let inner = (BAR_MIN + spare).min(BAR_MAX);
        let filled = match f.total {
            Some(t) if t > 0 => ((f.done.min(t) as f64 / t as f64) * inner as f64) as usize,
            _ => 0,
        };
        bar.1 = format!("[{}{}]", "=".repeat(filled), " ".repeat(inner - filled));
    }
    let mut line = fs.into_iter().map(|(_, s)| s).collect::<Vec<_>>().join(" ");
    if let Some(name) = name {
        line = format!("{name} {line}");
    }
    line
}

/// The state the ticker reads: which op runs and what it counts to.
struct OpState {
    index: usize,
    opcode: &'static str,
    goal: Goal,
    started: Instant,
    /// The store's (created, bound) counters when the op started.
    base: (u64, u64),
}

pub struct Progress {
    bar: Option<ProgressBar>,
    op: Arc<Mutex<OpState>>,
    stop: Arc<AtomicBool>,
    ticker: Option<JoinHandle<()>>,
}

impl Progress {
    /// A line for workload `name` with `ops` ops, if `enabled` and stderr is a terminal.
    pub fn start(
        enabled: bool,
        name: &str,
        ops: usize,
        store: &Arc<Store>,
        sched: &Arc<Scheduler>,
    ) -> Progress {
        let mut p = Progress {
            bar: None,
            op: Arc::new(Mutex::new(OpState {
                index: 0,
                opcode: "",
                goal: Goal::Open,
                started: Instant::now(),
                base: (0, 0),
            })),
            stop: Arc::new(AtomicBool::new(false)),
            ticker: None,
        };
        if !enabled || !std::io::stderr().is_terminal() {
            return p;
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template("{msg}") {
            bar.set_style(style);
        }
        let ticker = Ticker {
            bar: bar.clone(),
            name: name.to_string(),
            ops,
            store: store.clone(),
            sched: sched.clone(),
            op: p.op.clone(),
            stop: p.stop.clone(),
        };
        p.ticker = std::thread::Builder::new()
            .name("tidegate-progress".into())
            .spawn(move || ticker.run())
            .ok();
        p.bar = Some(bar);
        p
    }

    /// Op `i` (0-based) starts, counting towards `goal`.
    pub fn op(&self, i: usize, opcode: &'static str, goal: Goal, store: &Store) {
        if self.bar.is_some() {
            let (created, bound, _) = store.progress();
            *self.op.lock() = OpState {
                index: i,
                opcode,
                goal,
                started: Instant::now(),
                base: (created, bound),
            };
        }
    }

    /// Whether a line is drawn (callers skip work only the line needs).
    pub fn is_shown(&self) -> bool {
        self.bar.is_some()
    }

    /// Stops the ticker and clears the line.
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

/// The ticker thread's state.
struct Ticker {
    bar: ProgressBar,
    name: String,
    ops: usize,
    store: Arc<Store>,
    sched: Arc<Scheduler>,
    op: Arc<Mutex<OpState>>,
    stop: Arc<AtomicBool>,
}

impl Ticker {
    /// The rate is taken over this long a window of samples.
    const RATE_WINDOW: Duration = Duration::from_secs(3);

    fn run(self) {
        let started = Instant::now();
        let mut samples: VecDeque<(Instant, u64)> = VecDeque::new();
        let mut gates_seen = false;
        while !self.stop.load(Ordering::Relaxed) {
            let now = Instant::now();
            let (created, bound, _) = self.store.progress();
            samples.push_back((now, bound));
            while samples.len() > 2 && now - samples[0].0 > Self::RATE_WINDOW {
                samples.pop_front();
            }
            let rate = match (samples.front(), samples.back()) {
                (Some(a), Some(b)) if b.0 > a.0 => {
                    Some((b.1 - a.1) as f64 / (b.0 - a.0).as_secs_f64())
                }
                _ => None,
            };
            let gated = self.sched.queue.counts().gated as u64;
            gates_seen |= gated > 0;
            let op = self.op.lock();
            let (done, total) = match op.goal {
                Goal::Bound { total } => (bound.saturating_sub(op.base.1).min(total), Some(total)),
                Goal::Created { total } => {
                    (created.saturating_sub(op.base.0).min(total), Some(total))
                }
                Goal::Time(d) => {
                    let ms = d.as_millis() as u64;
                    (((now - op.started).as_millis() as u64).min(ms), Some(ms))
                }
                Goal::Open => (0, None),
            };
            let eta = eta(op.goal, done, total, rate);
            let frame = Frame {
                name: &self.name,
                op: (op.index + 1, self.ops),
                opcode: op.opcode,
                done,
                total,
                time_goal: matches!(op.goal, Goal::Time(_)),
                rate,
                eta,
                gated: gates_seen.then_some(gated),
                elapsed: now - started,
            };
            let width = console::Term::stderr()
                .size_checked()
                .map_or(80, |(_, cols)| cols as usize);
            // One column spare: some terminals wrap a line that fills the last column.
            self.bar
                .set_message(render(&frame, width.saturating_sub(1)));
            drop(op);
            self.bar.tick();
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

/// Time left: of a time goal, what remains; of a pod goal, what remains at the current rate.
fn eta(goal: Goal, done: u64, total: Option<u64>, rate: Option<f64>) -> Option<Duration> {
    let left = total?.saturating_sub(done);
    match goal {
        // Whole seconds, rounded up: "ETA 0s" would say it is over.
        Goal::Time(_) => Some(Duration::from_secs(left.div_ceil(1000))),
        _ => rate
            .filter(|r| *r > 0.0)
            .map(|r| Duration::from_secs((left as f64 / r).ceil() as u64)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(name: &str) -> Frame<'_> {
        Frame {
            name,
            op: (3, 7),
            opcode: "createPods",
            done: 12_345,
            total: Some(50_000),
            time_goal: false,
            rate: Some(38_211.4),
            eta: Some(Duration::from_secs(64)),
            gated: Some(10_000),
            elapsed: Duration::from_secs(75),
        }
    }

    #[test]
    fn a_wide_terminal_shows_every_field() {
        let line = render(&frame("SchedulingBasic/5000Nodes"), 200);
        assert_eq!(
            line,
            "SchedulingBasic/5000Nodes op 3/7 createPods [=======                       ] \
             12,345/50,000 pods 38,211 pods/s ETA 1m04s gated 10,000 1m15s"
        );
    }

    /// At any width: never wider than the terminal, and every field is there whole or not
    /// at all (a token of the line that is not a token of the full line would be a cut
    /// number), with done/total kept longest.
    #[test]
    fn fields_are_dropped_never_cut() {
        let long = "SchedulingWhileGated/1Node_10000GatedPods_WithAVeryLongUpstreamWorkloadName";
        let f = frame(long);
        let full = render(&f, 1000);
        let full_tokens: Vec<&str> = full.split(' ').collect();
        for width in 0..=220 {
            let line = render(&f, width);
            assert!(line.chars().count() <= width, "{width}: {line:?}");
            for (i, tok) in line.split(' ').enumerate() {
                let name = i == 0 && (tok.starts_with('…') || tok == long);
                let bar =
                    tok.starts_with('[') || tok.ends_with(']') || tok.chars().all(|c| c == '=');
                assert!(
                    name || bar || tok.is_empty() || full_tokens.contains(&tok),
                    "{width}: {tok:?} is not a whole field in {line:?}"
                );
            }
            if width >= "12,345/50,000 pods".len() {
                assert!(line.contains("12,345/50,000 pods"), "{width}: {line:?}");
            }
        }
        // 80 columns keep the numbers that matter.
        let line = render(&f, 80);
        assert!(
            line.contains("38,211 pods/s") && line.contains("ETA 1m04s"),
            "{line}"
        );
        assert!(line.contains("op 3/7 createPods"), "{line}");
    }

    #[test]
    fn the_name_is_shortened_from_the_left() {
        let f = frame("SchedulingWhileGated/1Node_10000GatedPods");
        let full = render(&f, 200).chars().count();
        // The bar gives up its 20 columns beyond its least first; then the name shortens.
        let line = render(&f, full - 20);
        assert!(
            line.starts_with("SchedulingWhileGated/") && line.contains("[==  "),
            "{line}"
        );
        let line = render(&f, full - 30);
        assert!(line.starts_with('…'), "{line}");
        assert!(line.contains("GatedPods op 3/7"), "{line}");
    }

    #[test]
    fn time_goals_and_open_ops() {
        let mut f = frame("w");
        f.time_goal = true;
        f.done = 15_000;
        f.total = Some(60_000);
        f.gated = None;
        assert!(render(&f, 200).contains("15s/1m00s"), "{}", render(&f, 200));
        f.total = None;
        f.rate = None;
        f.eta = None;
        assert_eq!(render(&f, 200), "w op 3/7 createPods 1m15s");
        assert_eq!(
            eta(
                Goal::Time(Duration::from_secs(60)),
                15_000,
                Some(60_000),
                None
            ),
            Some(Duration::from_secs(45))
        );
        assert_eq!(
            eta(Goal::Bound { total: 100 }, 99, Some(100), Some(5000.0)),
            Some(Duration::from_secs(1))
        );
        assert_eq!(
            eta(Goal::Bound { total: 100 }, 40, Some(100), Some(20.0)),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            eta(Goal::Bound { total: 100 }, 40, Some(100), Some(0.0)),
            None
        );
    }
}
