//! `Scheduler::evaluate`: every node's verdict and score for a pod, without scheduling it.

mod common;

use std::sync::Arc;
use tidegate_engine::api::Resource;
use tidegate_engine::api::{Node, Pod, PodSpecInfo, Sym};

fn node(name: &str, milli_cpu: i64) -> Arc<Node> {
    let mut n = Node::named(name);
    n.allocatable = Resource {
        milli_cpu,
        memory: 8 << 30,
        allowed_pod_number: 110,
        ..Resource::default()
    };
    Arc::new(n)
}

fn pod(name: &str, milli_cpu: i64, node: Option<&str>) -> Arc<Pod> {
    let requests = Resource {
        milli_cpu,
        memory: 1 << 30,
        ..Resource::default()
    };
    let spec = PodSpecInfo {
        requests: requests.clone(),
        non_zero_requests: requests,
        scheduler_name: Sym::new("default-scheduler"),
        ..PodSpecInfo::default()
    };
    let mut p = Pod::new("ns", name, Arc::new(spec));
    p.node_name = node.map(Sym::new);
    Arc::new(p)
}

#[test]
fn evaluate_reports_every_verdict_and_the_top_scored_nodes() {
    // "big" (4 CPUs, empty) from common, "busy" (4 CPUs, 3 used), "tiny" (0.5 CPU).
    let s = common::one_node_scheduler(true, "big", &[], false);
    s.on_node_add(node("busy", 4000));
    s.on_node_add(node("tiny", 500));
    s.on_pod_add(pod("running", 3000, Some("busy")));

    let e = s
        .evaluate(&pod("p", 1000, None))
        .expect("the default profile");
    assert!(e.pre_filter.is_none() && e.score_error.is_none());
    assert_eq!(e.blocked_score_mismatch, None);
    let rejected: Vec<(Sym, &str)> = e.rejected.iter().map(|(n, st)| (*n, st.plugin())).collect();
    assert_eq!(rejected, vec![(Sym::new("tiny"), "NodeResourcesFit")]);
    let feasible: Vec<Sym> = e.feasible.iter().map(|&(n, _)| n).collect();
    assert_eq!(feasible.len(), 2);
    assert!(feasible.contains(&Sym::new("big")) && feasible.contains(&Sym::new("busy")));
    // LeastAllocated prefers the empty node.
    assert_eq!(e.top_nodes(), vec![Sym::new("big")]);
    let score = |n: &str| {
        e.feasible
            .iter()
            .find(|&&(m, _)| m == Sym::new(n))
            .unwrap()
            .1
    };
    assert!(score("big") > score("busy"), "{:?}", e.feasible);
    assert_eq!(e.rejecting_plugins(), vec!["NodeResourcesFit"]);
    // Per plugin, scored the plain way: each node's scores add up to the blocked total, and
    // the resource plugins rank the empty node higher.
    for &(n, total) in &e.feasible {
        let per = e.scores_of(n).expect("a feasible node has plugin scores");
        assert_eq!(
            per.iter().map(|&(_, s)| s).sum::<i64>(),
            total,
            "{n:?}: {per:?}"
        );
    }
    let fit = |n: &str| {
        e.scores_of(Sym::new(n))
            .unwrap()
            .iter()
            .find(|&&(p, _)| p == "NodeResourcesFit")
            .expect("NodeResourcesFit scores")
            .1
    };
    assert!(fit("big") > fit("busy"));
    assert!(e.scores_of(Sym::new("tiny")).is_none());

    // Nothing was scheduled: the same question gets the same answer.
    let again = s.evaluate(&pod("p", 1000, None)).unwrap();
    assert_eq!(again.feasible, e.feasible);

    // A pod no node fits: every node rejects it, and the plugin is named.
    let none = s.evaluate(&pod("huge", 64_000, None)).unwrap();
    assert!(none.feasible.is_empty());
    assert_eq!(none.rejected.len(), 3);
    assert_eq!(none.rejecting_plugins(), vec!["NodeResourcesFit"]);
}
