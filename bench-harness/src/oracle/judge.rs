//! The oracle's verdicts: one function per kind of recorded fact, each returning what
//! disagrees (None when tidegate agrees). See the protocol in the module above.

use super::{KubeEval, Line};
use std::collections::BTreeMap;
use tidegate_engine::Candidate;
use tidegate_engine::api::Sym;
use tidegate_engine::{Evaluation, PreemptionEvaluation};

/// kube's own evaluation of every node (recorded with the attempt) against tidegate's on the
/// same state: the same PreFilter verdict, the same feasible count, the same rejecting plugin
/// per node (small clusters), the same top set and top total, and for every node kube kept
/// scores of, the same score per plugin. Exact: both sides scored every feasible node.
pub(super) fn judge_evaluation(kube: &KubeEval, eval: &Evaluation) -> Option<String> {
    if let Some(m) = &eval.blocked_score_mismatch {
        return Some(format!(
            "tidegate's blocked Score ranks nodes unlike its plain Score: {m}"
        ));
    }
    match (&kube.pre_filter, &eval.pre_filter) {
        (Some(k), Some(t)) if k == t.plugin() => return None,
        (Some(k), t) => {
            return Some(format!(
                "PreFilter: kube's {k} rejects the pod; tidegate's {}",
                t.as_ref()
                    .map_or("PreFilter passes".to_string(), |s| format!(
                        "rejection is by {}: {}",
                        s.plugin(),
                        s.message()
                    ))
            ));
        }
        (None, Some(t)) => {
            return Some(format!(
                "PreFilter: kube's passes; tidegate's {} rejects the pod: {}",
                t.plugin(),
                t.message()
            ));
        }
        (None, None) => {}
    }
    if kube.score_error.is_some() || eval.score_error.is_some() {
        return (kube.score_error.is_some() != eval.score_error.is_some()).then(|| {
            format!(
                "Score error: kube {:?}, tidegate {:?}",
                kube.score_error,
                eval.score_error.as_ref().map(|s| s.message())
            )
        });
    }
    if let Some(m) = judge_rejections(kube, eval) {
        return Some(m);
    }
    if kube.feasible != eval.feasible.len() {
        return Some(format!(
            "kube finds {} feasible nodes, tidegate {}",
            kube.feasible,
            eval.feasible.len()
        ));
    }
    if let Some(m) = judge_scores(kube, eval) {
        return Some(m);
    }
    let mut ours: Vec<String> = eval.top_nodes().iter().map(|n| n.to_string()).collect();
    ours.sort();
    let top = eval.top_score().unwrap_or_default();
    (kube.feasible > 0 && (ours != kube.top || top != kube.top_score)).then(|| {
        let both: Vec<String> = kube.top.iter().chain(&ours).take(4).cloned().collect();
        format!(
            "top nodes: kube {:?} (total {}), tidegate {:?} (total {top}); {}",
            kube.top,
            kube.top_score,
            ours,
            plugin_scores_of(kube, eval, &both)
        )
    })
}

/// The pods on each node kube's snapshot held against tidegate's bound pods (`bound`, by
/// namespace/name): a difference means the replayed state drifted from kube's.
pub(super) fn judge_state(
    kube: &KubeEval,
    bound: &std::collections::HashMap<String, std::sync::Arc<tidegate_engine::api::Pod>>,
) -> Option<String> {
    let mut ours: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for (key, p) in bound {
        if let Some(n) = p.node_name {
            ours.entry(n.to_string()).or_default().push(key.as_str());
        }
    }
    for (node, theirs) in &kube.pods {
        let theirs = theirs.as_deref().unwrap_or_default();
        let mut mine = ours.remove(node).unwrap_or_default();
        mine.sort_unstable();
        if mine != theirs {
            let only_kube: Vec<&String> = theirs
                .iter()
                .filter(|k| !mine.contains(&k.as_str()))
                .collect();
            let only_ours: Vec<&&str> = mine
                .iter()
                .filter(|k| !theirs.iter().any(|t| t == *k))
                .collect();
            return Some(format!(
                "state: on {node} kube's snapshot holds {only_kube:?} that tidegate's lacks, tidegate's holds {only_ours:?} that kube's lacks"
            ));
        }
    }
    None
}

/// The rejecting plugin of every node kube recorded one for (PreFilter's node subset aside).
fn judge_rejections(kube: &KubeEval, eval: &Evaluation) -> Option<String> {
    for (node, plugin) in &kube.rejected {
        if plugin == "PreFilterResult" {
            continue;
        }
        let n = Sym::new(node);
        let ours = eval.rejected.iter().find(|(m, _)| *m == n);
        match ours {
            Some((_, st)) if st.plugin() == plugin => {}
            Some((_, st)) => {
                return Some(format!(
                    "node {node}: kube's {plugin} rejects it, tidegate's {}: {}",
                    st.plugin(),
                    st.message()
                ));
            }
            None => {
                return Some(format!(
                    "node {node}: kube's {plugin} rejects it, tidegate finds it feasible ({})",
                    fmt_scores(eval.scores_of(n).unwrap_or_default())
                ));
            }
        }
    }
    None
}

/// Every plugin's score on every node kube kept scores for.
fn judge_scores(kube: &KubeEval, eval: &Evaluation) -> Option<String> {
    for (node, theirs) in &kube.scores {
        let Some(ours) = eval.scores_of(Sym::new(node)) else {
            return Some(format!(
                "node {node}: kube scores it ({}), tidegate finds it infeasible",
                fmt_kube(theirs)
            ));
        };
        // A plugin one side runs and the other does not (kube's volume and DRA plugins for a
        // pod without claims, tidegate's skipped ones) counts only when it scores.
        let mut ours: BTreeMap<&str, i64> = ours.iter().copied().filter(|&(_, v)| v != 0).collect();
        ours.insert("total", ours.values().sum());
        let theirs: BTreeMap<&str, i64> = theirs
            .iter()
            .filter(|&(k, &v)| v != 0 || k == "total")
            .map(|(k, &v)| (k.as_str(), v))
            .collect();
        if ours != theirs {
            return Some(format!(
                "node {node}: scores differ: kube {}; tidegate {}",
                fmt_kube(&theirs),
                fmt_kube(&ours)
            ));
        }
    }
    None
}

/// "node: kube {..}; tidegate {..}" for each named node.
fn plugin_scores_of(kube: &KubeEval, eval: &Evaluation, nodes: &[String]) -> String {
    let mut seen = Vec::new();
    let mut parts = Vec::new();
    for n in nodes {
        if seen.contains(n) {
            continue;
        }
        seen.push(n.clone());
        let k = kube.scores.get(n).map_or("-".to_string(), fmt_kube);
        let t = eval
            .scores_of(Sym::new(n))
            .map_or("-".to_string(), fmt_scores);
        parts.push(format!("{n}: kube {k}; tidegate {t}"));
    }
    parts.join(" | ")
}

fn fmt_kube<K: AsRef<str> + Ord>(m: &BTreeMap<K, i64>) -> String {
    let parts: Vec<String> = m
        .iter()
        .map(|(k, v)| format!("{}={v}", k.as_ref()))
        .collect();
    format!("{{{}}}", parts.join(" "))
}

fn fmt_scores(s: &[(&'static str, i64)]) -> String {
    let parts: Vec<String> = s.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!(
        "{{{} total={}}}",
        parts.join(" "),
        s.iter().map(|&(_, v)| v).sum::<i64>()
    )
}

/// A binding: kube's node must be feasible here and, when kube saw every feasible node,
/// among tidegate's highest totals; kube's feasible count must match when it filtered every
/// node. Returns (verdict, whether the top score was checked). `eval` is judged (the whole
/// cluster's, or a placement's part of it); `whole` is the evaluation it came from, whose
/// per-plugin scores the messages quote.
pub(super) fn judge_binding(
    line: &Line,
    node: &str,
    eval: &Evaluation,
    whole: &Evaluation,
    all_nodes: usize,
) -> (Option<String>, bool) {
    if let Some(st) = &eval.pre_filter {
        return (
            Some(format!(
                "kube bound it to {node}; tidegate's PreFilter rejects the pod: {}: {}",
                st.plugin(),
                st.message()
            )),
            false,
        );
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
        return (
            Some(format!(
                "kube bound it to {node}; tidegate's Filter rejects that node ({why})"
            )),
            false,
        );
    };
    if line.evaluated_nodes == all_nodes && line.feasible_nodes != eval.feasible.len() {
        return (
            Some(format!(
                "kube filtered all {all_nodes} nodes and found {} feasible; tidegate finds {}",
                line.feasible_nodes,
                eval.feasible.len()
            )),
            false,
        );
    }
    if line.feasible_nodes != eval.feasible.len() {
        return (None, false);
    }
    let top = eval.top_score().unwrap_or(score);
    let verdict = (score < top).then(|| {
        let tops: Vec<String> = eval
            .top_nodes()
            .iter()
            .take(5)
            .map(|s| s.to_string())
            .collect();
        format!(
            "kube bound it to {node} (tidegate's total {score}, {}); tidegate's top total is {top} on {}",
            fmt_scores(whole.scores_of(n).unwrap_or_default()),
            tops.join(", ")
        )
    });
    (verdict, true)
}

/// A fit error: tidegate must find no feasible node, and the same plugins must reject.
pub(super) fn judge_fit_error(line: &Line, eval: &Evaluation) -> Option<String> {
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

/// kube's ordering key of a preemption candidate, as far as it is deterministic: budget
/// violations, the highest victim priority, the priority sum, the victim count (the last
/// criterion, the victims' start times, is unset in a cluster without kubelets).
fn candidate_key(c: &Candidate) -> (usize, i32, i64, usize) {
    let prios = c.victims.iter().map(|v| v.priority());
    (
        c.num_pdb_violations,
        prios.clone().max().unwrap_or(i32::MIN),
        prios.map(i64::from).sum(),
        c.victims.len(),
    )
}

/// The victims' priorities tidegate would evict on `node`, sorted; None when `node` is not
/// a candidate.
pub(super) fn expected_victims(pe: &PreemptionEvaluation, node: Sym) -> Option<Vec<i32>> {
    let c = pe.candidates.iter().find(|c| c.node == node)?;
    let mut p: Vec<i32> = c.victims.iter().map(|v| v.priority()).collect();
    p.sort_unstable();
    Some(p)
}

/// kube nominated `node`: it must be one of tidegate's candidates, and no better by kube's
/// deterministic criteria than tidegate's pick nor worse (a tie on them is kube's choice).
pub(super) fn judge_nomination(pe: &PreemptionEvaluation, node: Sym) -> Option<String> {
    let Some(c) = pe.candidates.iter().find(|c| c.node == node) else {
        let names: Vec<String> = pe
            .candidates
            .iter()
            .take(5)
            .map(|c| c.node.to_string())
            .collect();
        return Some(format!(
            "kube nominated {}; tidegate's dry run finds no room there (its candidates: {})",
            node.to_string_lossy(),
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        ));
    };
    let best = pe
        .best
        .and_then(|b| pe.candidates.iter().find(|c| c.node == b))?;
    (candidate_key(c) != candidate_key(best)).then(|| {
        format!(
            "kube nominated {} (violations, top victim priority, priority sum, victims = {:?}); tidegate picks {} ({:?})",
            node.to_string_lossy(),
            candidate_key(c),
            best.node.to_string_lossy(),
            candidate_key(best)
        )
    })
}
