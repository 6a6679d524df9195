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
