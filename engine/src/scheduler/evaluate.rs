//! Judging a pod against the whole cluster without scheduling it: every node's Filter verdict
//! and every feasible node's total score, as a scheduling cycle with
//! `percentageOfNodesToScore: 100` would compute them. The differential oracle uses it to check
//! another scheduler's decision on the same state (was its node feasible here, was it among
//! the highest scores, did the same plugins reject the pod).
//!
//! Nothing is assumed, reserved or bound; the only side effects are those of the plugins'
//! PreFilter/PreScore caches and the host-choice random draw that Score makes.

use super::Scheduler;
use crate::api::{Pod, Sym};
use crate::framework::{CycleState, NodeInfo, Status};

/// Every node's verdict for one pod on the current cluster state.
#[derive(Clone, Debug, Default)]
pub struct Evaluation {
    /// PreFilter's status when it did not succeed (then no node was filtered).
    pub pre_filter: Option<Status>,
    /// The nodes that passed Filter, with their total score (normalized and weighted, as
    /// `selectHost` compares them), in node order.
    pub feasible: Vec<(Sym, i64)>,
    /// The nodes Filter rejected, with the rejecting status.
    pub rejected: Vec<(Sym, Status)>,
    /// A PreScore or Score error (the feasible nodes then carry no score).
    pub score_error: Option<Status>,
}

impl Evaluation {
    /// The highest total score among the feasible nodes.
    pub fn top_score(&self) -> Option<i64> {
        self.feasible.iter().map(|&(_, s)| s).max()
    }

    /// The feasible nodes with the highest total score.
    pub fn top_nodes(&self) -> Vec<Sym> {
        let top = self.top_score();
        self.feasible
            .iter()
            .filter(|&&(_, s)| Some(s) == top)
            .map(|&(n, _)| n)
            .collect()
    }

    /// The plugins that rejected the pod: PreFilter's, or those of every rejected node.
    pub fn rejecting_plugins(&self) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = match &self.pre_filter {
            Some(st) => vec![st.plugin()],
            None => self.rejected.iter().map(|(_, st)| st.plugin()).collect(),
        };
        out.sort_unstable();
        out.dedup();
        out
    }
}

impl Scheduler {
    /// Judges `pod` against every node of the current cluster state: PreFilter, Filter on
    /// each node (the PreFilter result's subset when it names one; with the nominated pods'
    /// second pass), then PreScore and Score on every feasible node. Returns `None` when no
    /// profile of this scheduler is responsible for the pod.
    pub fn evaluate(&self, pod: &Pod) -> Option<Evaluation> {
        let fwk = &self.frameworks[self.framework_for(pod)?];
        let mut state = CycleState::new();
        let mut snap = self.snapshot.lock();
        self.cache.update_snapshot(&mut snap);
        let mut out = Evaluation::default();
        let (pre, st) = fwk.run_pre_filter(&mut state, pod, &snap);
        if !st.is_success() {
            out.pre_filter = Some(st);
            return Some(out);
        }
        let indices: Vec<usize> = match pre.and_then(|r| r.node_names) {
            Some(names) => names
                .iter()
                .filter_map(|n| snap.index.get(n).copied())
                .collect(),
            None => (0..snap.nodes.len()).collect(),
        };
        let filters = fwk.active_filter_plugins(&state, pod);
        let nominated = self.queue.nominator.nominated_at_least(pod);
        let mut feasible: Vec<usize> = Vec::new();
        for &i in &indices {
            let node = &snap.nodes[i];
            let noms = nominated.get(&node.name()).map_or(&[][..], |v| &v[..]);
            let st = fwk.run_filter_plugins_with_nominated_pods(&filters, &state, pod, node, noms);
            if st.is_success() {
                feasible.push(i);
            } else {
                out.rejected.push((node.name(), st));
            }
        }
        let nodes: Vec<&NodeInfo> = feasible.iter().map(|&i| &*snap.nodes[i]).collect();
        if nodes.is_empty() {
            return Some(out);
        }
        let st = fwk.run_pre_score(&mut state, pod, &nodes, &snap);
        if !st.is_success() {
            out.score_error = Some(st);
            return Some(out);
        }
        let mut scratch = self.score_scratch.lock();
        let scored = self.score_nodes(
            fwk,
            &state,
            pod,
            &nodes,
            (&feasible, &snap.rows),
            &mut scratch,
        );
        match scored {
            Ok(_) => {
                out.feasible = nodes
                    .iter()
                    .zip(&scratch.totals)
                    .map(|(n, &t)| (n.name(), t))
                    .collect();
            }
            Err(st) => out.score_error = Some(st),
        }
        Some(out)
    }
}
