//! A running pod relabelled so that it no longer matches a pending pod's required
//! anti-affinity: with QueueingHints the pending pod is requeued and schedules, as kube's
//! `updateAssignedPodInCache` (pkg/scheduler/eventhandlers.go in kubernetes/kubernetes) sends
//! every assigned-pod update through `MoveAllToActiveOrBackoffQueue` when the gate is on.
//! Without the gate kube pre-filters with `getUnschedulablePodsWithCrossTopologyTerm`, which
//! looks at required *affinity* terms only, so the pod stays parked. Found running upstream's
//! EventHandlingPodUpdate (test/integration/scheduler_perf/event_handling/), whose
//! interpodaffinity stage never finished.

mod common;

use std::sync::Arc;
use tidegate_engine::Scheduler;
use tidegate_engine::api::{
    LabelSelector, Labels, Operator, Pod, PodAffinityTerm, PodSpecInfo, Requirement, Sym,
};

fn scheduler(hints: bool) -> Arc<Scheduler> {
    common::one_node_scheduler(
        hints,
        "node-1",
        &[("kubernetes.io/hostname", "node-1")],
        false,
    )
}

/// The running pod, with `color: green` or no labels.
fn blocker(green: bool, rv: u64) -> Pod {
    let spec = PodSpecInfo {
        scheduler_name: Sym::new("default-scheduler"),
        ..PodSpecInfo::default()
    };
    let mut p = Pod::new("blocker", "b", Arc::new(spec));
    if green {
        p.labels = Arc::new(Labels::from_pairs([("color", "green")]));
    }
    p.node_name = Some(Sym::new("node-1"));
    p.resource_version = rv;
    p
}

/// A pod that refuses to share a host with `color: green` pods of namespace `blocker`.
fn pending() -> Pod {
    let mut spec = PodSpecInfo {
        scheduler_name: Sym::new("default-scheduler"),
        ..PodSpecInfo::default()
    };
    spec.pod_affinity
        .required_anti_affinity
        .push(PodAffinityTerm {
            label_selector: Some(LabelSelector {
                requirements: vec![Requirement {
                    key: Sym::new("color"),
                    op: Operator::In,
                    values: vec![Sym::new("green")],
                    int_value: 0,
                }],
            }),
            namespaces: vec![Sym::new("blocker")],
            namespace_selector: None,
            topology_key: Sym::new("kubernetes.io/hostname"),
            match_label_keys: vec![],
            mismatch_label_keys: vec![],
        });
    Pod::new("waiting", "w", Arc::new(spec))
}

/// Parks the pending pod behind the green blocker, then takes the blocker's label away.
fn relabelled(hints: bool) -> Arc<Scheduler> {
    let s = scheduler(hints);
    s.on_pod_add(Arc::new(blocker(true, 1)));
    s.on_pod_add(Arc::new(pending()));
    let q = s.queue.try_pop().expect("the pod is active");
    s.schedule_popped(q);
    assert_eq!(s.queue.locate(&pending().key), Some("unschedulable"));
    s.on_pod_update(&blocker(true, 1), Arc::new(blocker(false, 2)));
    s
}

#[test]
fn with_hints_a_relabelled_blocker_requeues_the_anti_affinity_pod() {
    let s = relabelled(true);
    let key = pending().key;
    assert_ne!(
        s.queue.locate(&key),
        Some("unschedulable"),
        "InterPodAffinity's hint: the updated pod no longer matches the anti-affinity"
    );
    // It schedules once its backoff is over (or at once, popped from backoffQ).
    let q = s.queue.try_pop().expect("requeued");
    s.schedule_popped(q);
    assert_eq!(s.queue.locate(&key), None);
    assert_eq!(
        s.stats.scheduled.load(std::sync::atomic::Ordering::Relaxed),
        1
    );
}

#[test]
fn without_hints_the_cross_topology_pre_filter_leaves_it_parked() {
    let s = relabelled(false);
    assert_eq!(s.queue.locate(&pending().key), Some("unschedulable"));
}
