//! The differential oracle's tidegate side: replay the scheduling attempts the real
//! kube-scheduler made (recorded by `kube-reference`'s `-record DIR`, one JSON line each, in
//! kube's order) on the same cluster state, and judge each of kube's decisions with
//! tidegate's Filter and Score ([`tidegate_engine::scheduler::Evaluation`]).
//!
//! The protocol, per recorded line:
//!
//! - `nodes`: node objects, new or changed (after a createNodes op, or seen changed before an
//!   attempt): added, or updated as an informer would.
//! - a `decision` with a node: kube bound the pod there. tidegate must find that node
//!   feasible. When kube saw every feasible node (its feasible count equals tidegate's), the
//!   node must also be among tidegate's highest total scores: kube's choice is its top among
//!   the nodes it scored, so the comparison is exact only then (with the adaptive
//!   `percentageOfNodesToScore`, kube stops Filter after enough feasible nodes and scores
//!   those alone; such decisions are checked for feasibility only and counted apart). When
//!   kube filtered every node, its feasible count must equal tidegate's. Then the pod is
//!   bound in tidegate to kube's node, so both sides go on from the same state.
//! - a failed `decision` with a fit error: tidegate must find no feasible node either, and
//!   the same set of plugins must reject the pod. Another error is not judged.
//!
//! - a decision's `pod`: the pod object on its first attempt and whenever it changed; a
//!   later attempt of an unchanged pod uses the last one.
//! - a decision's `namespaceLabels` (with the first pod of each namespace): the labels
//!   namespaceSelector terms read.
//!
//! Not recorded by the kube side yet, so not replayed: preemption victims and other
//! deletions, namespace label changes. A decision after kube's first fit error
//! of a workload may rest on victims kube deleted; disagreements from then on are reported
//! apart ("after a fit error") and not counted as unexplained.

pub mod scenarios;
use crate::error::HarnessError;
use k8s_openapi::api::core::v1 as core;
use serde::Deserialize;
use std::path::Path;
use std::sync::Arc;
use tidegate_engine::api::Labels;
use tidegate_engine::api::{Pod, Sym, convert};
use tidegate_engine::framework::ClusterClient;
use tidegate_engine::plugins::Registry;
use tidegate_engine::scheduler::{Evaluation, Scheduler, SchedulerConfig};

/// One line of kube's record (`kube-reference/perf/record.go`, `Decision`).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Line {
    kind: String,
    seq: u64,
    namespace: String,
    name: String,
    attempts: u32,
    node: Option<String>,
    evaluated_nodes: usize,
    feasible_nodes: usize,
    num_all_nodes: usize,
    unschedulable_plugins: Vec<String>,
    error: Option<String>,
    pod: Option<core::Pod>,
    nodes: Vec<core::Node>,
    namespace_labels: Option<std::collections::BTreeMap<String, String>>,
}

/// The cluster as the record describes it: binds succeed (the pod then follows kube's
/// choice), and namespaces have the labels kube's API server gave them.
#[derive(Default)]
struct RecordedCluster {
    namespace_labels: parking_lot::RwLock<std::collections::HashMap<Sym, Arc<Labels>>>,
}

impl ClusterClient for RecordedCluster {
    fn bind(&self, _: &Pod, _: Sym) -> Result<(), String> {
        Ok(())
    }
    fn pod_exists_unassigned(&self, _: &Pod) -> bool {
        true
    }
    fn namespace_labels(&self, namespace: Sym) -> Option<Arc<Labels>> {
        self.namespace_labels.read().get(&namespace).cloned()
    }
}

/// What a replay found.
#[derive(Debug, Default)]
pub struct ReplayReport {
    /// Scheduling attempts read.
    pub decisions: usize,
    /// Bindings judged on feasibility and top score (kube saw every feasible node).
    pub top_checked: usize,
    /// Bindings judged on feasibility only (kube's adaptive window).
    pub feasibility_only: usize,
    /// Fit errors judged (no feasible node, the same rejecting plugins).
    pub fit_errors: usize,
    /// Attempts that failed with another error (not judged).
    pub other_errors: usize,
    /// Disagreements before the workload's first fit error.
    pub disagreements: Vec<String>,
    /// Disagreements after it (may rest on preemption victims the record lacks).
    pub after_fit_error: Vec<String>,
}

/// Replays one record file (`path`) on a fresh tidegate scheduler with `config` (its
/// profiles, percentage and queue settings; the default profile when `None`).
pub fn replay(path: &Path, config: Option<SchedulerConfig>) -> Result<ReplayReport, HarnessError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| HarnessError::Run(format!("{}: {e}", path.display())))?;
    let cfg = SchedulerConfig {
        parallelism: 1,
        ..config.unwrap_or_default()
    };
    let cluster = Arc::new(RecordedCluster::default());
    let sched = Scheduler::new(cfg, &Registry::in_tree(), cluster.clone(), None)
        .map_err(|e| HarnessError::Run(e.to_string()))?;
    let mut r = Replay {
        sched,
        cluster,
        pods: Default::default(),
        nodes: Default::default(),
        report: ReplayReport::default(),
        saw_fit_error: false,
    };
    for (i, l) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let line: Line = serde_json::from_str(l).map_err(|e| {
            HarnessError::Run(format!(
                "{}:{}: not a kube record line: {e}",
                path.display(),
                i + 1
            ))
        })?;
        r.step(line)
            .map_err(|e| HarnessError::Run(format!("{}:{}: {e}", path.display(), i + 1)))?;
    }
    Ok(r.report)
}

struct Replay {
    sched: Arc<Scheduler>,
    cluster: Arc<RecordedCluster>,
    /// The pods seen, by namespace/name (later attempts carry no object).
    pods: std::collections::HashMap<String, Arc<Pod>>,
    /// The nodes, by name, as last recorded.
    nodes: std::collections::HashMap<String, Arc<tidegate_engine::api::Node>>,
    report: ReplayReport,
    saw_fit_error: bool,
}

impl Replay {
    fn step(&mut self, line: Line) -> Result<(), String> {
        match line.kind.as_str() {
            "nodes" => {
                for n in &line.nodes {
                    let name = n.metadata.name.clone().unwrap_or_default();
                    let node = Arc::new(convert::node(n).map_err(|e| e.to_string())?);
                    match self.nodes.insert(name, node.clone()) {
                        None => self.sched.on_node_add(node),
                        Some(old) => self.sched.on_node_update(&old, node),
                    }
                }
                Ok(())
            }
            "decision" => self.decision(line),
            other => Err(format!("unknown record kind {other:?}")),
        }
    }

    fn decision(&mut self, line: Line) -> Result<(), String> {
        self.report.decisions += 1;
        let key = format!("{}/{}", line.namespace, line.name);
        if let Some(labels) = &line.namespace_labels {
            let labels = Labels::from_pairs(labels.iter().map(|(k, v)| (k.as_str(), v.as_str())));
            self.cluster
                .namespace_labels
                .write()
                .insert(Sym::new(&line.namespace), Arc::new(labels));
        }
        if let Some(p) = &line.pod {
            let pod = convert::pod(p).map_err(|e| format!("pod {key}: {e}"))?;
            self.pods.insert(key.clone(), Arc::new(pod));
        }
        let pod = self
            .pods
            .get(&key)
            .cloned()
            .ok_or_else(|| format!("pod {key}: no object recorded"))?;
        let eval = self.sched.evaluate(&pod).ok_or_else(|| {
            format!(
                "pod {key}: no profile for scheduler {:?}",
                pod.spec.scheduler_name
            )
        })?;
        let verdict = match &line.node {
            Some(node) => self.judge_binding(&line, node, &eval),
            None if !line.unschedulable_plugins.is_empty() || line.num_all_nodes > 0 => {
                self.report.fit_errors += 1;
                let v = judge_fit_error(&line, &eval);
                self.saw_fit_error = true;
                v
            }
            None => {
                self.report.other_errors += 1;
                None
            }
        };
        if let Some(what) = verdict {
            let msg = format!("#{} {key} (attempt {}): {what}", line.seq, line.attempts);
            if self.saw_fit_error && line.node.is_some() {
                self.report.after_fit_error.push(msg);
            } else {
                self.report.disagreements.push(msg);
            }
        }
        if let Some(node) = &line.node {
            // Follow kube: the pod is bound where kube put it.
            let mut bound = (*pod).clone();
            bound.node_name = Some(Sym::new(node));
            self.sched.on_pod_add(Arc::new(bound));
        }
        Ok(())
    }

    /// A binding: kube's node must be feasible here, top-scored when kube saw every
    /// feasible node, and kube's feasible count must match when it filtered every node.
    fn judge_binding(&mut self, line: &Line, node: &str, eval: &Evaluation) -> Option<String> {
        if let Some(st) = &eval.pre_filter {
            return Some(format!(
                "kube bound it to {node}; tidegate's PreFilter rejects the pod: {}: {}",
                st.plugin(),
                st.message()
            ));
        }
        let n = Sym::new(node);
        let Some(&(_, score)) = eval.feasible.iter().find(|&&(m, _)| m == n) else {
            let why = eval
                .rejected
                .iter()
                .find(|(m, _)| *m == n)
                .map_or("not a known node".to_string(), |(_, st)| {
                    format!("{}: {}", st.plugin(), st.message())
                });
            return Some(format!(
                "kube bound it to {node}; tidegate's Filter rejects that node ({why})"
            ));
        };
        let all = self.nodes.len();
        if line.evaluated_nodes == all && line.feasible_nodes != eval.feasible.len() {
            return Some(format!(
                "kube filtered all {all} nodes and found {} feasible; tidegate finds {}",
                line.feasible_nodes,
                eval.feasible.len()
            ));
        }
        if line.feasible_nodes != eval.feasible.len() {
            self.report.feasibility_only += 1;
            return None;
        }
        self.report.top_checked += 1;
        let top = eval.top_score().unwrap_or(score);
        (score < top).then(|| {
            let tops: Vec<String> = eval.top_nodes().iter().take(5).map(|s| s.to_string()).collect();
            format!("kube bound it to {node} (tidegate's total {score}); tidegate's top total is {top} on {}", tops.join(", "))
        })
    }
}

/// A fit error: tidegate must find no feasible node, and the same plugins must reject.
fn judge_fit_error(line: &Line, eval: &Evaluation) -> Option<String> {
    if !eval.feasible.is_empty() {
        let some: Vec<String> = eval
            .feasible
            .iter()
            .take(3)
            .map(|(n, _)| n.to_string())
            .collect();
        return Some(format!(
            "kube found no node ({}); tidegate finds {} feasible ({}{})",
            line.error.as_deref().unwrap_or("fit error"),
            eval.feasible.len(),
            some.join(", "),
            if eval.feasible.len() > 3 { ", …" } else { "" }
        ));
    }
    let mut kube: Vec<&str> = line
        .unschedulable_plugins
        .iter()
        .map(String::as_str)
        .collect();
    kube.sort_unstable();
    let ours = eval.rejecting_plugins();
    (kube != ours).then(|| format!("rejected by {kube:?} in kube, by {ours:?} in tidegate"))
}
