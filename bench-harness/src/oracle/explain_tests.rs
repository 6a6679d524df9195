//! The replay's explanations of a recorded evaluation that differs from kube's own cycle.

use super::*;
use serde_json::json;
use tidegate_engine::{Code, Evaluation, Status};

const IN_FLIGHT: &str = "resource claim test/c is in the process of being allocated";

/// `dra/workloadresourceclaims` SharedPodGroupResourceClaimTemplate/1podgroup_1000pods
/// (kube-diff, 2026-12-01, #1014): kube's cycle failed at DynamicResources' PreFilter on a
/// claim in flight; its evaluation, recorded after the allocation was written, passed.
fn failed_in_flight(node: Option<&str>, plugins: &[&str]) -> Line {
    serde_json::from_value(json!({
        "kind": "decision", "seq": 1014, "namespace": "test", "name": "p", "attempts": 2,
        "node": node, "unschedulablePlugins": plugins, "numAllNodes": 10,
        "error": format!("0/10 nodes are available: {IN_FLIGHT}."),
        "kube": {"feasible": 10}
    }))
    .unwrap()
}

fn rejected(message: &str) -> Evaluation {
    let mut e = Evaluation::default();
    e.pre_filter = Some(
        Status::new(Code::UnschedulableAndUnresolvable, message.to_string())
            .with_plugin("DynamicResources"),
    );
    e
}

#[test]
fn a_pre_filter_rejection_kubes_cycle_made_too_is_explained() {
    let line = failed_in_flight(None, &["DynamicResources"]);
    let kube = line.kube.as_ref().unwrap();
    let why = evaluated_after_the_cycle(&line, kube, &rejected(IN_FLIGHT));
    assert!(why.is_some_and(|w| w.contains("the state moved")));
}

#[test]
fn any_other_rejection_stays_a_disagreement() {
    let line = failed_in_flight(None, &["DynamicResources"]);
    let kube = line.kube.as_ref().unwrap();
    let other = rejected("resourceclaim test/c not found");
    assert_eq!(evaluated_after_the_cycle(&line, kube, &other), None);
    let by_another = failed_in_flight(None, &["NodeResourcesFit"]);
    let kube = by_another.kube.as_ref().unwrap();
    assert_eq!(
        evaluated_after_the_cycle(&by_another, kube, &rejected(IN_FLIGHT)),
        None
    );
    let bound = failed_in_flight(Some("n0"), &[]);
    let kube = bound.kube.as_ref().unwrap();
    assert_eq!(
        evaluated_after_the_cycle(&bound, kube, &rejected(IN_FLIGHT)),
        None
    );
    let passes = Evaluation::default();
    let line = failed_in_flight(None, &["DynamicResources"]);
    assert_eq!(
        evaluated_after_the_cycle(&line, line.kube.as_ref().unwrap(), &passes),
        None
    );
}

/// `dra/workloadresourceclaims` SharedPodGroupResourceClaimTemplate/1podgroup_1000pods
/// (kube-diff, 2026-12-01, #2602): kube bound a group member to its nominated node, which
/// kube's evaluation recorded after the cycle rejects (NodeResourcesFit: the node's pods and
/// nominated pods reach its pod count).
fn bound_to(node: &str, kube_rejects: Option<&str>) -> Line {
    let rejected = kube_rejects.map_or(json!({}), |p| json!({ node: p }));
    serde_json::from_value(json!({
        "kind": "decision", "seq": 2602, "namespace": "test", "name": "p", "attempts": 2,
        "node": node, "evaluatedNodes": 1, "feasibleNodes": 1,
        "kube": {"feasible": 4, "rejected": rejected, "pods": {node: []}}
    }))
    .unwrap()
}

fn filter_rejects(node: &str, plugin: &'static str) -> Evaluation {
    let mut e = Evaluation::default();
    e.rejected.push((
        Sym::new(node),
        Status::new(Code::Unschedulable, "Too many pods".to_string()).with_plugin(plugin),
    ));
    e
}

#[test]
fn a_node_kubes_own_evaluation_rejects_as_tidegates_does_is_explained() {
    let line = bound_to("dra-1", Some("NodeResourcesFit"));
    let kube = line.kube.as_ref().unwrap();
    let why = bound_where_its_evaluation_rejects(
        &line,
        kube,
        &filter_rejects("dra-1", "NodeResourcesFit"),
    );
    assert!(why.is_some_and(|w| w.contains("the state moved") && w.contains("Too many pods")));
}

#[test]
fn a_node_only_one_side_rejects_stays_a_disagreement() {
    // kube's evaluation found the node feasible: tidegate's rejection is a disagreement.
    let line = bound_to("dra-1", None);
    let kube = line.kube.as_ref().unwrap();
    let ours = filter_rejects("dra-1", "NodeResourcesFit");
    assert_eq!(bound_where_its_evaluation_rejects(&line, kube, &ours), None);
    // Another plugin rejects it here.
    let line = bound_to("dra-1", Some("NodeResourcesFit"));
    let kube = line.kube.as_ref().unwrap();
    let other = filter_rejects("dra-1", "TaintToleration");
    assert_eq!(
        bound_where_its_evaluation_rejects(&line, kube, &other),
        None
    );
    // tidegate finds the node feasible: judged as a binding, not explained here.
    assert_eq!(
        bound_where_its_evaluation_rejects(&line, kube, &Evaluation::default()),
        None
    );
    // A node PreFilter's node subset left out is not a Filter rejection.
    let line = bound_to("dra-1", Some("PreFilterResult"));
    let kube = line.kube.as_ref().unwrap();
    assert_eq!(bound_where_its_evaluation_rejects(&line, kube, &ours), None);
}

/// Random scenario 51 of kube-diff's seed 1 in CI (2026-12-02, #6423): a group member's
/// second cycle bound it on scenario-51-node-0, whose one volume for its claim was free in
/// VolumeBinding's assume cache; the binding of that volume to another member's claim
/// reached the informer before the record, and kube's own evaluation of the recorded state
/// (167 nodes: too many to name the rejecting plugin) found only scenario-51-node-2, as
/// tidegate's.
fn bound_in_a_large_cluster(kube_scores: serde_json::Value) -> Line {
    serde_json::from_value(json!({
        "kind": "decision", "seq": 6423, "namespace": "scenario-51", "name": "pod-1",
        "attempts": 2, "node": "scenario-51-node-0", "evaluatedNodes": 2, "feasibleNodes": 1,
        "placementNodes": ["scenario-51-node-0", "scenario-51-node-3"],
        "kube": {"feasible": 1, "top": ["scenario-51-node-2"], "topScore": 454,
                 "scores": kube_scores}
    }))
    .unwrap()
}

#[test]
fn a_node_a_large_clusters_evaluation_keeps_no_scores_for_is_explained() {
    let ours = filter_rejects("scenario-51-node-0", "VolumeBinding");
    let line = bound_in_a_large_cluster(json!({"scenario-51-node-2": {"total": 454}}));
    let why = bound_where_its_evaluation_rejects(&line, line.kube.as_ref().unwrap(), &ours);
    assert!(why.is_some_and(|w| w.contains("keeps no scores") && w.contains("VolumeBinding")));
    // kube's evaluation scored its node (found it feasible): tidegate's rejection stays a
    // disagreement.
    let line = bound_in_a_large_cluster(json!({
        "scenario-51-node-2": {"total": 454}, "scenario-51-node-0": {"total": 400}
    }));
    let kube = line.kube.as_ref().unwrap();
    assert_eq!(bound_where_its_evaluation_rejects(&line, kube, &ours), None);
    // tidegate finds the node feasible: judged as a binding, not explained here.
    let line = bound_in_a_large_cluster(json!({"scenario-51-node-2": {"total": 454}}));
    let kube = line.kube.as_ref().unwrap();
    let feasible = Evaluation::default();
    assert_eq!(
        bound_where_its_evaluation_rejects(&line, kube, &feasible),
        None
    );
}

/// Random scenario 91 of kube-diff's seed 1 (2026-12-02, #1668): a group member's cycle
/// found one feasible node (a volume still free in kube's cache); the API bound that volume
/// to another claim before the record, where kube's own Filter finds no node, as tidegate's.
fn bound_after_a_moved_state(kube_feasible: usize) -> Line {
    serde_json::from_value(json!({
        "kind": "decision", "seq": 1668, "namespace": "scenario-91", "name": "pod-3",
        "attempts": 2, "node": "node-0", "evaluatedNodes": 3, "feasibleNodes": 1,
        "kube": {"feasible": kube_feasible}
    }))
    .unwrap()
}

#[test]
fn a_node_kubes_recorded_filter_rejects_with_every_other_is_no_disagreement() {
    let ours = filter_rejects("node-0", "VolumeBinding");
    let line = bound_after_a_moved_state(0);
    assert_eq!(moved_state_rejects(&line, "node-0", &ours), None);
    // kube's recorded Filter kept some node: tidegate's rejecting kube's stays one.
    let line = bound_after_a_moved_state(1);
    let d = moved_state_rejects(&line, "node-0", &ours);
    assert!(d.is_some_and(|d| d.contains("rejects that node")));
    // tidegate keeping kube's node is no disagreement either way.
    let mut feasible = Evaluation::default();
    feasible.feasible.push((Sym::new("node-0"), 0));
    assert_eq!(moved_state_rejects(&line, "node-0", &feasible), None);
}
