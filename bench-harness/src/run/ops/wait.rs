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

use super::RunCx;
use super::view::{Selector, counted};
use crate::cluster::store::NsStats;
use crate::error::HarnessError;
use std::cell::Cell;

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
