//! With QueueingHints, an assigned pod's add, update or delete moves exactly the pods that
//! kube's `MoveAllToActiveOrBackoffQueue` moves (every parked pod whose rejector registered
//! the event, through its hints; pkg/scheduler/eventhandlers.go and
//! pkg/scheduler/backend/queue/scheduling_queue.go in kubernetes/kubernetes), although
//! `SchedulingQueue::assigned_pod_event` visits only the InterPodAffinity and
//! PodTopologySpread candidates the pool's indexes name. Two schedulers park the same pods;
//! one gets the event through `assigned_pod_event`, the other through the full scan
//! (`on_cluster_event`); every pod must end up in the same queue.

mod common;

use proptest::prelude::*;
use std::sync::Arc;
use tidegate_engine::Scheduler;
use tidegate_engine::api::{
    LabelSelector, Labels, NodeInclusionPolicy, Operator, Pod, PodAffinityTerm, PodSpecInfo,
    Requirement, Sym, TopologySpreadConstraint, UnsatisfiableConstraintAction,
};
use tidegate_engine::{ActionType, ClusterEvent, EventObject, EventResource};

const APPS: [&str; 3] = ["a", "b", "c"];
const NAMESPACES: [&str; 2] = ["ns0", "ns1"];

fn selector(app: &str) -> LabelSelector {
    LabelSelector {
        requirements: vec![Requirement {
            key: Sym::new("app"),
            op: Operator::In,
            values: vec![Sym::new(app)],
            int_value: 0,
        }],
    }
}

fn term(app: &str, key: &str) -> PodAffinityTerm {
    PodAffinityTerm {
        label_selector: Some(selector(app)),
        namespaces: vec![],
        namespace_selector: None,
        topology_key: Sym::new(key),
        match_label_keys: vec![],
        mismatch_label_keys: vec![],
    }
}

/// A pod of `kind` (0: required affinity to `app`, 1: required anti-affinity to `app`,
/// 2: a hard spread constraint over `app` that one node cannot satisfy, 3: more CPU than the
/// node has), labelled `app=label`.
fn parked(i: usize, kind: usize, app: usize, label: usize, ns: usize) -> Pod {
    let mut spec = PodSpecInfo {
        scheduler_name: Sym::new("default-scheduler"),
        ..PodSpecInfo::default()
    };
    let app = APPS[app];
    match kind {
        0 => spec.pod_affinity.required_affinity.push(term(app, "zone")),
        1 => spec
            .pod_affinity
            .required_anti_affinity
            .push(term(app, "kubernetes.io/hostname")),
        2 => spec
            .topology_spread_constraints
            .push(TopologySpreadConstraint {
                max_skew: 1,
                topology_key: Sym::new("zone"),
                when_unsatisfiable: UnsatisfiableConstraintAction::DoNotSchedule,
                label_selector: Some(selector(app)),
                min_domains: Some(2),
                node_affinity_policy: NodeInclusionPolicy::Honor,
                node_taints_policy: NodeInclusionPolicy::Ignore,
                match_label_keys: vec![],
            }),
        _ => {
            spec.requests.milli_cpu = 64_000;
            spec.non_zero_requests.milli_cpu = 64_000;
        }
    }
    let mut p = Pod::new(NAMESPACES[ns], &format!("p{i}"), Arc::new(spec));
    p.labels = Arc::new(Labels::from_pairs([("app", APPS[label])]));
    p
}

/// A running pod with `app=label` in namespace `ns`, on the node.
fn running(name: &str, label: Option<usize>, ns: usize) -> Pod {
    let spec = PodSpecInfo {
        scheduler_name: Sym::new("default-scheduler"),
        ..PodSpecInfo::default()
    };
    let mut p = Pod::new(NAMESPACES[ns], name, Arc::new(spec));
    if let Some(l) = label {
        p.labels = Arc::new(Labels::from_pairs([("app", APPS[l])]));
    }
    p.node_name = Some(Sym::new("node-1"));
    p
}

fn scheduler() -> Arc<Scheduler> {
    let s = common::one_node_scheduler(
        true,
        "node-1",
        &[("kubernetes.io/hostname", "node-1"), ("zone", "z1")],
        false,
    );
    // Running pods of apps b and c in both namespaces: affinity to a, anti-affinity to b or
    // c, and spreading over b or c park their pods; the others schedule.
    for (l, _) in APPS.iter().enumerate().skip(1) {
        for (ns, _) in NAMESPACES.iter().enumerate() {
            s.on_pod_add(Arc::new(running(&format!("blocker-{l}-{ns}"), Some(l), ns)));
        }
    }
    s
}

/// The event: 0 add, 1 label update, 2 delete, of a running pod in `ns` with `app` labels
/// `old`/`new` (`None`: unlabelled).
fn event(
    kind: usize,
    ns: usize,
    old: Option<usize>,
    new: Option<usize>,
) -> (ClusterEvent, EventObject, EventObject) {
    let o = Arc::new(running("subject", old, ns));
    let n = Arc::new(running("subject", new, ns));
    match kind {
        0 => (
            ClusterEvent::new(EventResource::AssignedPod, ActionType::ADD),
            EventObject::None,
            EventObject::Pod(n),
        ),
        1 => (
            ClusterEvent::new(EventResource::AssignedPod, ActionType::UPDATE_POD_LABEL),
            EventObject::Pod(o),
            EventObject::Pod(n),
        ),
        _ => (
            ClusterEvent::new(EventResource::AssignedPod, ActionType::DELETE),
            EventObject::Pod(o),
            EventObject::None,
        ),
    }
}

fn pod_of(o: &EventObject) -> Option<Arc<Pod>> {
    match o {
        EventObject::Pod(p) => Some(p.clone()),
        _ => None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]
    #[test]
    fn indexed_candidates_move_what_the_full_scan_moves(
        pods in proptest::collection::vec((0usize..4, 0usize..3, 0usize..3, 0usize..2), 1..12),
        kind in 0usize..3,
        ns in 0usize..2,
        old in proptest::option::of(0usize..3),
        new in proptest::option::of(0usize..3),
    ) {
        let (a, b) = (scheduler(), scheduler());
        let parked: Vec<Pod> = pods
            .iter()
            .enumerate()
            .map(|(i, &(k, app, label, pns))| parked(i, k, app, label, pns))
            .collect();
        for s in [&a, &b] {
            for p in &parked {
                s.on_pod_add(Arc::new(p.clone()));
            }
            while let Some(q) = s.queue.try_pop() {
                s.schedule_popped(q);
            }
        }
        let (ev, o, n) = event(kind, ns, old, new);
        a.queue.assigned_pod_event(ev, pod_of(&o), pod_of(&n));
        b.queue.on_cluster_event(ev, o, n);
        for p in &parked {
            prop_assert_eq!(a.queue.locate(&p.key), b.queue.locate(&p.key), "{}", p.key);
        }
    }
}
