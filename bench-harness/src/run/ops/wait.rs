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
//!   second. The informer's view only moves forward, so at the first, immediate poll of a
//!   wait it is no older than the executor's previous observation (the last poll of the wait
//!   before), and it may be that old: what the scheduler wrote since (a preemption's victims
//!   deleted, pods bound) reaches it through the API server and a watch, while the executor
//!   goes straight on to its next op. kube v1.37.2 on
//!   `PreemptionMultiVictimWaveStress/5Nodes_MultiVictimWaves` shows it
//!   (`perf-data/results/stress/`): its second wave's wait passes on its first poll, which
//!   still counts the 20 victims of the first wave that the preemptions of the op before
//!   delete a few milliseconds later.
//! - So a first check here passes when the condition holds now or held at the executor's
//!   previous observation: the two ends of what kube's first poll may read. The later
//!   checks read the current state (kube's later polls come a second later, when its
//!   informer has caught up). With `--wait-poll` the checks are made on that interval.
//! - An observation is taken at the end of every wait that succeeded: the counts of every
//!   namespace, for the selectors the workload's waits use (empty, and each barrier's),
//!   the waited one exactly as its last check saw it. None is taken before the first wait
//!   (the view is then as old as the empty cluster, whose counts are zero). A wait that
//!   passed on the previous observation takes none: that view stays the executor's last.
//!
//! A first check that passes only on the previous observation is "stale": the run's outcome
//! record says so ([`OpEnd::stale`](crate::run::outcome::OpEnd)), as the kube differential's
//! outcome check names it.

use super::{Op, RunCx};
use crate::cluster::store::{NsStats, Store};
use crate::error::HarnessError;
use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet, HashMap};

type Selector = BTreeMap<String, String>;

/// What the executor last observed, and what its waits did during the op running.
#[derive(Default)]
pub(crate) struct ExecutorView {
    /// The selectors the workload's waits use (the empty one always).
    selectors: BTreeSet<Selector>,
    /// The counts at the previous observation, by namespace and selector.
    observed: HashMap<(String, Selector), NsStats>,
    /// The waits of the op running so far, and whether one passed only on the previous
    /// observation.
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

    /// The counts the previous observation saw, if any.
    fn previous(&self, ns: &str, selector: &Selector) -> Option<NsStats> {
        self.observed
            .get(&(ns.to_string(), selector.clone()))
            .copied()
    }

    /// Takes an observation now, `exact` being what the wait that just succeeded saw.
    fn observe(&mut self, store: &Store, exact: ((&str, &Selector), NsStats)) {
        self.observed.clear();
        for ns in store.namespaces() {
            for sel in &self.selectors {
                let s = store.ns_stats_matching(&ns, sel);
                self.observed.insert((ns.clone(), sel.clone()), s);
            }
        }
        let ((ns, sel), s) = exact;
        self.observed.insert((ns.to_string(), sel.clone()), s);
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
        if holds(&now) {
            self.view.observe(self.store, ((ns, selector), now));
            return Ok(());
        }
        if self.view.previous(ns, selector).is_some_and(|p| holds(&p)) {
            // kube's first poll may still read the previous observation's view, which
            // stays the executor's last observation.
            self.view.stale = true;
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
        self.view.observe(self.store, ((ns, selector), seen.get()));
        Ok(())
    }
}
