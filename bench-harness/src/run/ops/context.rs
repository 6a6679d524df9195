//! What the ops' plan and run steps work with: `Prepared` (the templates planning loads)
//! and `RunCx` (the cluster, the scheduler, the clock, the collection windows).

use crate::cluster::objects::AnyObject;
use crate::cluster::store::Store;
use crate::error::HarnessError;
use crate::output::flame::Profile;
use crate::output::report::{DataItem, WindowSeries};
use crate::run::collect::{OVERLAPPING, Window};
use crate::run::pace::Pace;
use crate::workload::{Config, TestCase, Workload};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tidegate_engine::Scheduler;

/// What planning loads for the ops, by op number: templates read and checked once, before
/// anything runs.
#[derive(Default)]
pub(crate) struct Prepared {
    /// The pod source of createPods ops.
    pub(crate) pods: BTreeMap<usize, crate::workload::manifest::PodSource>,
    /// Node, namespace, updateAny and createAny templates.
    pub(crate) templates: BTreeMap<usize, crate::workload::manifest::ObjectTemplate>,
    /// The objects a churn op creates, one per template.
    pub(crate) churn: BTreeMap<usize, Vec<AnyObject>>,
    /// The claim and volume templates of createPods ops that have them.
    pub(crate) volumes: BTreeMap<usize, super::pod_volumes::LoadedVolumes>,
    /// The workload's gates as the API server reads them (what planning validates with).
    pub(crate) api_gates: crate::cluster::store::ApiGates,
}

/// What the ops read of the run's options (`run::RunOptions`), copied out so that `ops/`
/// does not depend on `options.rs`, which names the ops' outcome records.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OpOptions {
    /// The longest wait for pods in one op.
    pub(crate) timeout: Duration,
    /// With `--wait-poll`: the interval of a wait's checks after its first.
    pub(crate) wait_poll: Option<Duration>,
    /// Whether a profiler records the measured phases (`--flamegraph`).
    pub(crate) flamegraph: bool,
}

/// What an op's run step works with: the workload, its prepared templates, the cluster and
/// scheduler, the clock, and the collectors (the open window, the data items so far).
pub(crate) struct RunCx<'r> {
    pub(crate) cfg: &'r Config,
    pub(crate) tc: &'r TestCase,
    pub(crate) wl: &'r Workload,
    pub(crate) prepared: &'r Prepared,
    pub(crate) opts: OpOptions,
    pub(crate) store: &'r Arc<Store>,
    pub(crate) sched: &'r Arc<Scheduler>,
    pub(crate) pace: &'r mut Pace,
    pub(crate) profile: &'r mut Option<Profile>,
    pub(crate) series: &'r mut Vec<WindowSeries>,
    /// The data items of the windows closed so far.
    pub(crate) items: Vec<DataItem>,
    /// Upstream's `numPodsScheduledPerNamespace`: the namespaces the ops registered
    /// (createPods, createNamespaces, and createAny/updateAny with a namespace), each with the
    /// pods created in it without waiting (`skipWaitToCompletion`) since the last `Scheduled`
    /// barrier that covered it; such a barrier unregisters the namespace.
    pub(crate) known_ns: BTreeMap<String, usize>,
    /// The open collection window.
    pub(crate) window: Option<Window>,
    /// The number of the op running.
    pub(crate) index: usize,
    /// What the executor's waits last observed, and what they did in the op running (see
    /// `wait`).
    pub(crate) view: super::ExecutorView,
}

impl RunCx<'_> {
    /// The op's field path in errors.
    pub(crate) fn field(&self) -> String {
        format!("{}.workloadTemplate[{}]", self.tc.name, self.index)
    }

    /// Opens a collection window reported under
    /// `BenchmarkPerfScheduling/<testCase>/<workload>/<last>`: an error if one is open.
    pub(crate) fn open_window(
        &mut self,
        last: &str,
        namespaces: &[String],
        selector: &BTreeMap<String, String>,
    ) -> Result<(), HarnessError> {
        if self.window.is_some() {
            return Err(HarnessError::Run(format!(
                "op {}: {OVERLAPPING}",
                self.index
            )));
        }
        let name = format!(
            "BenchmarkPerfScheduling/{}/{}/{last}",
            self.tc.name, self.wl.name
        );
        self.window = Some(
            Window::open(
                self.store,
                self.sched,
                self.pace,
                name,
                namespaces,
                selector,
                self.opts.flamegraph,
            )
            .with_metrics(self.tc.metrics_collector.clone()),
        );
        Ok(())
    }

    /// Upstream's `createNamespaceIfNotPresent`: a namespace the ops have not registered is
    /// created and registered with no pods waited for. Creating one that exists (made by
    /// churn, or registered before and unregistered by a barrier) fails, as the API server's
    /// AlreadyExists does upstream.
    pub(crate) fn register_namespace(&mut self, ns: &str) -> Result<(), HarnessError> {
        if self.known_ns.contains_key(ns) {
            return Ok(());
        }
        if self.store.has_namespace(ns) {
            return Err(HarnessError::Run(format!(
                "op {}: failed to create namespace for Pod: {ns} (it exists, but no op registered it since the last barrier that covered it)",
                self.index
            )));
        }
        self.store.ensure_namespace_exists(ns);
        self.known_ns.insert(ns.to_string(), 0);
        Ok(())
    }

    /// Closes window `w`, adding its data items.
    pub(crate) fn close_window(&mut self, w: Window) {
        let items = w.close(self.store, self.sched, self.pace, self.profile, self.series);
        self.items.extend(items);
    }

    /// The error when `want` pods of namespace `ns` were not there in time: what the queues
    /// hold and why the pending pods are pending.
    pub(crate) fn timeout_error(&self, ns: &str, want: usize) -> HarnessError {
        timeout_error(self.store, self.sched, ns, want, self.opts.timeout)
    }
}

fn timeout_error(
    store: &Store,
    sched: &Scheduler,
    ns: &str,
    want: usize,
    timeout: Duration,
) -> HarnessError {
    let s = store.ns_stats(ns);
    let q = sched.queue.counts();
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    // The rejector plugins of each pending pod, summarised (kube's UnschedulablePlugins; a
    // pod that failed with an error has none).
    let mut rejectors: BTreeMap<String, usize> = BTreeMap::new();
    for (key, cond) in store.unbound_pods() {
        let reason = cond.map_or("not attempted yet".to_string(), |(r, m)| {
            format!("{r}: {m}")
        });
        *reasons.entry(reason).or_default() += 1;
        if let Some(info) = sched.queue.pending_info(&key)
            && info.attempts > 0
        {
            let by = if info.unschedulable_plugins.is_empty() {
                "(an error, no plugin)".to_string()
            } else {
                info.unschedulable_plugins.join("+")
            };
            *rejectors.entry(by).or_default() += 1;
        }
    }
    let top = |m: BTreeMap<String, usize>| -> String {
        let mut v: Vec<(String, usize)> = m.into_iter().collect();
        v.sort_by_key(|t| std::cmp::Reverse(t.1));
        v.iter()
            .take(5)
            .map(|(r, n)| format!("{n} × {r}"))
            .collect::<Vec<_>>()
            .join("; ")
    };
    HarnessError::Run(format!(
        "timed out after {timeout:?} waiting for {want} pods in namespace {ns} (bound {}, attempted {}; {} scheduling attempts in all); queues: active {}, backoff {}, unschedulable {}, gated {}, in flight {}; rejected by: {}; pending because: {}",
        s.bound,
        s.attempted_unbound,
        sched.stats.attempts.load(Ordering::Relaxed),
        q.active,
        q.backoff,
        q.unschedulable,
        q.gated,
        q.in_flight,
        top(rejectors),
        top(reasons),
    ))
}
