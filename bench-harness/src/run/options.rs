//! How to run: [`RunOptions`], and the live scheduler `tidegate serve` reads.

use crate::run::pace::ClockMode;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tidegate_engine::Registry;
use tidegate_engine::Scheduler;

/// How to run.
#[derive(Clone)]
pub struct RunOptions {
    /// `TestCase/Workload` or `TestCase` (all its workloads), as the Go benchmark path.
    pub workload: Option<String>,
    /// scheduler_perf label filter; `None` = `performance`, unless `workload` is given.
    pub label_filter: Option<String>,
    /// Run only this shard's share of the selection (`--shard I/N`, [`crate::workload::shard`]).
    pub shard: Option<crate::workload::shard::Shard>,
    pub seed: u64,
    /// Filter/Score threads (the rayon pool size). `None`: the scheduler config's
    /// `parallelism` when it sets one, else the number of CPUs.
    pub threads: Option<usize>,
    /// Whether the Filter/Score workers are pinned (`SchedulerConfig::pin_threads`).
    pub pin_threads: tidegate_engine::PinThreads,
    /// Keep node-local plugins' answers per node between cycles (`SchedulerConfig::node_memo`).
    pub node_memo: bool,
    /// With the memo, its window path (`SchedulerConfig::memo_window`).
    pub memo_window: bool,
    /// A KubeSchedulerConfiguration for test cases without `schedulerConfigPath`.
    pub scheduler_config: Option<PathBuf>,
    /// How long one wait (createPods, barrier) may take.
    pub timeout: Duration,
    /// How a wait (createPods, barrier) checks its condition: `None`, the moment it holds;
    /// `Some(interval)`, as upstream polls its informer (at the start, then every interval;
    /// upstream's is 1 s), so an op ends when upstream's would (`--wait-poll`).
    pub wait_poll: Option<Duration>,
    /// Plugins available to profiles (in-tree plus the caller's).
    pub registry: Registry,
    /// A progress bar on stderr while each workload runs (only when stderr is a terminal).
    pub progress: bool,
    /// Keep every pod's final state in the result (`--dump-pods`).
    pub dump_pods: bool,
    /// A workload whose run fails (a timeout, say) is reported as failed and the next one
    /// runs; otherwise the first failure ends the whole run with its error.
    pub keep_going: bool,
    /// Wall time, or a virtual clock for deterministic runs (see [`crate::run::pace`]).
    pub clock: ClockMode,
    /// Controllers that run beside the scheduler in every workload (see [`crate::cluster::controller`]).
    pub controllers: Vec<Arc<dyn crate::cluster::controller::Controller>>,
    /// Keep each workload's final metrics for the Prometheus exposition (`--prometheus`).
    pub prometheus: bool,
    /// Sample the process with pprof during every collection window (`--flamegraph`).
    pub flamegraph: bool,
    /// Where `tidegate serve` reads the running workload's scheduler from.
    pub live: Option<Arc<LiveScheduler>>,
    /// Faults to inject (`--inject`, see [`crate::cluster::inject`]).
    pub inject: Option<Arc<crate::cluster::inject::Injection>>,
    /// Where each workload's outcome goes (the counts at each op's end; see
    /// [`crate::run::outcome`]); None records nothing.
    pub outcomes: Option<Arc<crate::run::outcome::OutcomeLog>>,
}

/// The scheduler of the workload running now, for `tidegate serve`'s `/metrics`.
#[derive(Default)]
pub struct LiveScheduler {
    pub(crate) current: parking_lot::Mutex<Option<(String, Arc<Scheduler>)>>,
    /// The last finished workload's final metrics (`tidegate serve --linger` serves them
    /// after the run), kept only when [`LiveScheduler::keep_last`] asks for them.
    pub(crate) last: parking_lot::Mutex<Option<(String, crate::output::prom::Snapshot)>>,
    keep: std::sync::atomic::AtomicBool,
}

impl LiveScheduler {
    /// `(workload, its scheduler)`, if a workload runs (the queue dump reads it).
    pub fn running(&self) -> Option<(String, Arc<Scheduler>)> {
        self.current.lock().clone()
    }

    /// `(workload, its metrics now)` if a workload runs, else the last finished workload's
    /// final metrics, if any.
    pub fn snapshot(&self) -> Option<(String, crate::output::prom::Snapshot)> {
        let cur = self.current.lock().clone();
        cur.map(|(name, s)| (name, crate::output::prom::Snapshot::of(&s)))
            .or_else(|| self.last.lock().clone())
    }

    /// Keep each finished workload's final metrics (`serve --linger`); off by default, as
    /// building them costs a pass over every histogram.
    pub fn keep_last(&self) {
        self.keep.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// The running workload ends: with [`LiveScheduler::keep_last`], its final metrics are
    /// kept as the last ones.
    pub(crate) fn finish(&self) {
        let cur = self.current.lock().take();
        if let Some((name, s)) = cur
            && self.keep.load(std::sync::atomic::Ordering::Relaxed)
        {
            *self.last.lock() = Some((name, crate::output::prom::Snapshot::of(&s)));
        }
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            workload: None,
            label_filter: None,
            shard: None,
            seed: 0,
            threads: None,
            pin_threads: tidegate_engine::PinThreads::Auto,
            node_memo: true,
            memo_window: true,
            scheduler_config: None,
            timeout: Duration::from_secs(600),
            wait_poll: None,
            registry: Registry::in_tree(),
            progress: false,
            dump_pods: false,
            keep_going: false,
            clock: ClockMode::Real,
            controllers: Vec::new(),
            prometheus: false,
            live: None,
            flamegraph: false,
            inject: None,
            outcomes: None,
        }
    }
}
