//! The executor's view of the cluster: the counts of every namespace (for the selectors the
//! workload's waits use) when it last caught up. Its protocol, and why kube's executor has one
//! too, is in [`super::wait`]'s module doc.

use super::Op;
use crate::cluster::store::{NsStats, Store};
use std::collections::{BTreeMap, BTreeSet, HashMap};

pub(crate) type Selector = BTreeMap<String, String>;

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
    pub(super) fn view(&self, ns: &str, selector: &Selector) -> Option<NsStats> {
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
