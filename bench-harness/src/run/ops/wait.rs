//! The waits of `createPods` and `barrier`, as scheduler_perf's executor makes them (kube
//! v1.37.2, `test/integration/scheduler_perf/executor.go`: `waitUntilPodsScheduledInNamespace`,
//! `waitUntilPodsAttemptedInNamespace`, and `getScheduledPods` in `util.go`).
//!
//! Protocol:
//!
//! - What counts: the namespace's pods whose labels match the selector and that have a node
//!   (`nodeName` set, terminating ones included, as `getScheduledPods` counts them); with
//!   `Attempted`, also the unbound ones that carry a PodScheduled condition. Pods deleted
//!   meanwhile (preemption victims, say) do not count; pods created by any op do.
//! - kube's executor reads these counts from its pod informer, polling at once and then every
//!   second. At the first, immediate poll of a wait the informer may lag: what the scheduler
//!   wrote since the executor last caught up (a preemption's victims deleted, pods bound)
//!   reaches it through the API server and a watch, while the executor goes straight on
//!   from one op to the next. kube v1.37.2 on
//!   `PreemptionMultiVictimWaveStress/5Nodes_MultiVictimWaves` shows it
//!   (`perf-data/results/stress/`): its second wave's wait passes on its first poll, which
//!   still counts the 20 victims of the first wave that the preemptions of the op before
//!   delete a few milliseconds later.
//! - So tidegate's executor keeps a view: the counts of every namespace (for the selectors
//!   the workload's waits use) when it last caught up with the cluster. A first check
//!   passes on that view when the view satisfies it (as kube's first poll does while its
//!   informer still lags), and the view stays as it was; else it passes on the current
//!   state, which becomes the view; else the wait waits, reading the current state (kube's
//!   later polls come a second later, when its informer has caught up), and the state it
//!   passed on becomes the view. A `sleep` or a steady state catches up too: the state at
//!   its end becomes the view. Before anything caught up there is no view (the current state is read).
//!   With `--wait-poll` the checks after the first are made on that interval.
//! - A wait that passed on the view while the current state does not satisfy it is
//!   "stale": the outcome record says so ([`OpEnd::stale`](crate::run::outcome::OpEnd)),
//!   and the kube differential's outcome check names it.
//!
//! Without the view, tidegate's executor, whose scheduler acts within microseconds, would
//! fail such a wait that kube's passes: in that workload tidegate's preemptions of the op
//! before delete the victims before the wait's first check.

use super::{Op, RunCx};
use crate::cluster::store::{NsStats, Store};
use crate::error::HarnessError;
use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet, HashMap};

type Selector = BTreeMap<String, String>;

/// What the executor last caught up with, and what its waits did during the op running.
#[derive(Default)]
pub(crate) struct ExecutorView {
    /// The selectors the workload's waits use (the empty one always).
    selectors: BTreeSet<Selector>,
    /// The counts when the executor last caught up, by namespace and selector; None before
    /// it first did.
    seen: Option<HashMap<(String, Selector), NsStats>>,
    /// The waits of the op running so far, and whether one passed only on the view.
    pub(crate) waits: usize,
    pub(crate) stale: bool,
}

impl ExecutorView {
    pub(crate) fn new(ops: &[Op]) -> Self {
        let mut selectors: BTreeSet<Selector> = BTreeSet::new();
        selectors.insert(Selector::new());
        for op in ops {
            if let Op::Barrier(b) = op {
                selectors.insert(b.label_selector.clone());
            }
        }
        ExecutorView {
            selectors,
            ..Default::default()
        }
    }

    /// The view's counts for `ns` and `selector` (zero for a namespace it does not hold).
    fn view(&self, ns: &str, selector: &Selector) -> Option<NsStats> {
        self.seen.as_ref().map(|m| {
            m.get(&(ns.to_string(), selector.clone()))
                .copied()
                .unwrap_or_default()
        })
    }

    /// The executor catches up: the view becomes the state now (`exact`: what the wait that
    /// just passed read, for its namespace and selector).
    pub(crate) fn catch_up(&mut self, store: &Store, exact: Option<((&str, &Selector), NsStats)>) {
        let mut m = HashMap::new();
        for ns in store.namespaces() {
            for sel in &self.selectors {
                m.insert((ns.clone(), sel.clone()), store.ns_stats_matching(&ns, sel));
            }
        }
        if let Some(((ns, sel), s)) = exact {
            m.insert((ns.to_string(), sel.clone()), s);
        }
        self.seen = Some(m);
    }
}

/// The count a wait compares: scheduled pods, plus the attempted unbound ones for
/// `Attempted`.
pub(crate) fn counted(s: &NsStats, attempted: bool) -> usize {
    s.bound + if attempted { s.attempted_unbound } else { 0 }
}

impl RunCx<'_> {
    /// Waits until `want` pods of `ns` matching `selector` are scheduled (with `attempted`,
    /// scheduled or attempted), as the module doc says; a timeout is the op's error.
    pub(crate) fn wait_pods(
        &mut self,
        ns: &str,
        selector: &Selector,
        want: usize,
        attempted: bool,
    ) -> Result<(), HarnessError> {
        self.view.waits += 1;
        let holds = |s: &NsStats| counted(s, attempted) >= want;
        let now = self.store.ns_stats_matching(ns, selector);
        if self.view.view(ns, selector).is_some_and(|v| holds(&v)) {
            // kube's first poll may still read the view: it stays as it was.
            self.view.stale |= !holds(&now);
            return Ok(());
        }
        if holds(&now) {
            self.view.catch_up(self.store, Some(((ns, selector), now)));
            return Ok(());
        }
        let seen = Cell::new(now);
        let ok = self.pace.wait_ns(
            self.store,
            ns,
            selector,
            self.opts.timeout,
            self.opts.wait_poll,
            |s| {
                seen.set(*s);
                holds(s)
            },
        );
        if !ok {
            return Err(self.timeout_error(ns, want));
        }
        self.view
            .catch_up(self.store, Some(((ns, selector), seen.get())));
        Ok(())
    }
}
