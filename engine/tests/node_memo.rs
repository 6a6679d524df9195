//! The node memo (`framework/node_memo.rs`) and its window path (`scheduler/window.rs`)
//! change no decision: three schedulers fed the same random cluster changes and pod streams,
//! one with the memo and its window path, one with the memo alone and one without, bind the
//! same pods to the same nodes in the same order and report the same failures.
//!
//! The cluster changes touch everything a node-local plugin reads (cpu, pod slots, labels,
//! taints, cordons, images, nodes added and removed, pods deleted); the pod shapes run every
//! node-local plugin (NodeResourcesFit, BalancedAllocation, TaintToleration, NodeAffinity,
//! NodePorts, ImageLocality, NodeUnschedulable) alone or together, and one shape runs
//! PodTopologySpread, which keeps its cycles off the memo; another InterPodAffinity, whose Score
//! keeps them off the window path after its Filter.

use parking_lot::Mutex;
use proptest::prelude::*;
use serde_json::json;
use std::sync::Arc;
use tidegate_engine::api::{Node, Pod, Sym, convert};
use tidegate_engine::clock::VirtualClock;
use tidegate_engine::{ClusterClient, Registry, Scheduler, SchedulerConfig};

#[derive(Default)]
struct Client {
    /// Every decision in order: `pod -> node` or `pod !! message`.
    log: Mutex<Vec<String>>,
}

impl ClusterClient for Client {
    fn bind(&self, pod: &Pod, node: Sym) -> Result<(), String> {
        self.log.lock().push(format!("{} -> {node:?}", pod.name));
        Ok(())
    }
    fn pod_exists_unassigned(&self, _pod: &Pod) -> bool {
        true
    }
    fn set_unschedulable(&self, pod: &Pod, _reason: &str, message: &str) {
        self.log.lock().push(format!("{} !! {message}", pod.name));
    }
}

/// A node's shape: cpu (cores), pod slots, zone, taint, image, cordoned.
#[derive(Clone, Debug)]
struct NodeShape(u8, u8, u8, u8, u8, bool);

#[derive(Clone, Debug)]
enum Op {
    AddNodes(Vec<NodeShape>),
    UpdateNode(u8, NodeShape),
    RemoveNode(u8),
    /// `count` pods of shape `shape`.
    AddPods(u8, u8),
    /// Delete the `i`-th bound pod (modulo their count).
    DeletePod(u8),
    Schedule,
}

fn node_shape() -> impl Strategy<Value = NodeShape> {
    (
        0u8..3,
        0u8..3,
        0u8..2,
        0u8..4,
        0u8..3,
        prop::bool::weighted(0.1),
    )
        .prop_map(|(c, p, z, t, i, u)| NodeShape(c, p, z, t, i, u))
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => prop::collection::vec(node_shape(), 1..40).prop_map(Op::AddNodes),
        3 => (any::<u8>(), node_shape()).prop_map(|(i, s)| Op::UpdateNode(i, s)),
        1 => any::<u8>().prop_map(Op::RemoveNode),
        6 => (0u8..13, 1u8..30).prop_map(|(s, n)| Op::AddPods(s, n)),
        2 => any::<u8>().prop_map(Op::DeletePod),
        4 => Just(Op::Schedule),
    ]
}

fn node(name: &str, NodeShape(cpu, pods, zone, taint, image, cordoned): &NodeShape) -> Arc<Node> {
    let taints = match taint {
        1 => json!([{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]),
        2 => json!([{"key": "soft", "value": "y", "effect": "PreferNoSchedule"}]),
        _ => json!([]),
    };
    let images = match image {
        1 => json!([{"names": ["img-a:1"], "sizeBytes": 300_000_000}]),
        2 => json!([{"names": ["img-b:1"], "sizeBytes": 900_000_000}]),
        _ => json!([]),
    };
    let (cpu, pods) = ([1, 2, 4][*cpu as usize], [3, 10, 110][*pods as usize]);
    let alloc = json!({"cpu": cpu.to_string(), "memory": "8Gi", "pods": pods.to_string()});
    let zone = ["a", "b"][*zone as usize];
    let n: k8s_openapi::api::core::v1::Node = serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"zone": zone}},
        "spec": {"taints": taints, "unschedulable": cordoned},
        "status": {"allocatable": alloc, "capacity": alloc, "images": images},
    }))
    .unwrap();
    Arc::new(convert::node(&n).unwrap())
}

fn pod(name: &str, shape: u8) -> Arc<Pod> {
    let container = |cpu: &str, image: &str| {
        json!({"name": "c", "image": image,
               "resources": {"requests": {"cpu": cpu, "memory": "100Mi"}}})
    };
    let spec = match shape {
        0 => json!({"containers": [container("100m", "pause")]}),
        1 => json!({"containers": [container("500m", "img-a:1")],
                    "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "x",
                                     "effect": "NoSchedule"}]}),
        2 => json!({"containers": [container("900m", "pause")],
                    "nodeSelector": {"zone": "a"}}),
        3 => json!({"containers": [{"name": "c", "image": "img-b:1",
                     "resources": {"requests": {"cpu": "200m"}},
                     "ports": [{"containerPort": 80, "hostPort": 8080}]}],
                    "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution":
                        [{"weight": 20, "preference": {"matchExpressions":
                            [{"key": "zone", "operator": "In", "values": ["b"]}]}}]}}}),
        4 => json!({"containers": [container("300m", "img-b:1")],
                    "tolerations": [{"operator": "Exists"}]}),
        5 => json!({"containers": [{"name": "c", "image": "pause"}]}),
        // Shape 0 with one node-local input changed: a toleration, a node selector, an image.
        7 => json!({"containers": [container("100m", "pause")],
                    "tolerations": [{"key": "dedicated", "operator": "Exists"}]}),
        8 => json!({"containers": [container("100m", "pause")],
                    "nodeSelector": {"zone": "b"}}),
        9 => json!({"containers": [container("100m", "img-a:1")]}),
        // Shapes 8 and 9 with another value: the same plugins run, on other inputs.
        10 => json!({"containers": [container("100m", "pause")],
                    "nodeSelector": {"zone": "a"}}),
        11 => json!({"containers": [container("100m", "img-b:1")]}),
        // InterPodAffinity scores (its PreScore reads no node list, its Score is not
        // node-local): the window path filters, then hands Score to the usual path.
        12 => json!({"containers": [container("100m", "pause")],
                    "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution":
                        [{"weight": 50, "podAffinityTerm": {"topologyKey": "zone",
                            "labelSelector": {"matchLabels": {"app": "spread"}}}}]}}}),
        // PodTopologySpread runs: these cycles do not use the memo, the others still do.
        _ => json!({"containers": [container("250m", "pause")],
                    "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                        "whenUnsatisfiable": "ScheduleAnyway",
                        "labelSelector": {"matchLabels": {"app": "spread"}}}]}),
    };
    let labels = if shape == 6 {
        json!({"app": "spread"})
    } else {
        json!({})
    };
    let mut spec = spec;
    spec["schedulerName"] = json!("default-scheduler");
    let p: k8s_openapi::api::core::v1::Pod = serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "ns", "uid": name, "labels": labels},
        "spec": spec,
    }))
    .unwrap();
    Arc::new(convert::pod(&p).unwrap())
}

/// How a scheduler finds its answers.
#[derive(Clone, Copy)]
enum Memo {
    Off,
    On,
    Window,
}

fn scheduler(memo: Memo, threads: usize) -> (Arc<Scheduler>, Arc<Client>) {
    scheduler_with(memo, threads, None)
}

/// With `pct`: the scheduler's `percentageOfNodesToScore`.
fn scheduler_with(memo: Memo, threads: usize, pct: Option<u32>) -> (Arc<Scheduler>, Arc<Client>) {
    let client = Arc::new(Client::default());
    let cfg = SchedulerConfig {
        percentage_of_nodes_to_score: pct,
        parallelism: threads,
        deterministic: true,
        seed: 7,
        node_memo: !matches!(memo, Memo::Off),
        memo_window: matches!(memo, Memo::Window),
        ..SchedulerConfig::default()
    };
    let s = Scheduler::new(
        cfg,
        &Registry::in_tree(),
        client.clone(),
        Some(Arc::new(VirtualClock::new())),
    )
    .unwrap();
    (s, client)
}

/// The cluster as both schedulers were told it: live nodes (name, object) and bound pods.
#[derive(Default)]
struct World {
    nodes: Vec<(String, Arc<Node>)>,
    next_node: usize,
    next_pod: usize,
    pods: std::collections::HashMap<String, Arc<Pod>>,
}

fn apply(op: &Op, world: &mut World, both: &[(Arc<Scheduler>, Arc<Client>)]) {
    match op {
        Op::AddNodes(shapes) => {
            for shape in shapes {
                let name = format!("node-{}", world.next_node);
                world.next_node += 1;
                let n = node(&name, shape);
                for (s, _) in both {
                    s.on_node_add(n.clone());
                }
                world.nodes.push((name, n));
            }
        }
        Op::UpdateNode(i, shape) if !world.nodes.is_empty() => {
            let i = *i as usize % world.nodes.len();
            let (name, old) = world.nodes[i].clone();
            let new = node(&name, shape);
            for (s, _) in both {
                s.on_node_update(&old, new.clone());
            }
            world.nodes[i].1 = new;
        }
        Op::RemoveNode(i) if !world.nodes.is_empty() => {
            let i = *i as usize % world.nodes.len();
            let (name, _) = world.nodes.remove(i);
            for (s, _) in both {
                s.on_node_delete(Sym::new(&name));
            }
        }
        Op::AddPods(shape, count) => {
            for _ in 0..*count {
                let name = format!("p{}-s{shape}", world.next_pod);
                world.next_pod += 1;
                let p = pod(&name, *shape);
                for (s, _) in both {
                    s.on_pod_add(p.clone());
                }
                world.pods.insert(name, p);
            }
        }
        Op::DeletePod(i) => {
            // A pod the first scheduler bound (the second bound the same, or the test fails).
            let log = both[0].1.log.lock().clone();
            let bound: Vec<(&str, &str)> =
                log.iter().filter_map(|l| l.split_once(" -> ")).collect();
            if bound.is_empty() {
                return;
            }
            let (name, _) = bound[*i as usize % bound.len()];
            if let Some(p) = world.pods.remove(name) {
                for (s, _) in both {
                    s.on_pod_delete(&p);
                }
            }
        }
        Op::Schedule => {
            for (s, _) in both {
                while let Some(q) = s.queue.try_pop() {
                    s.schedule_popped(q);
                }
            }
        }
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn the_memo_changes_no_decision(
        ops in prop::collection::vec(op(), 1..40),
        threads in prop_oneof![Just(1usize), Just(2usize)],
        start_nodes in prop_oneof![Just(130usize), Just(300usize), Just(1100usize)],
        // 100 %: every cycle walks the whole list, one super chunk when short of 1,024.
        pct in prop_oneof![Just(None), Just(Some(33u32)), Just(Some(100u32))],
    ) {
        let all = [
            scheduler_with(Memo::Window, threads, pct),
            scheduler_with(Memo::On, threads, pct),
            scheduler_with(Memo::Off, threads, pct),
        ];
        let mut world = World::default();
        // Enough nodes from the start for the adaptive percentage to walk windows of two
        // and more chunks.
        let start: Vec<NodeShape> = (0..start_nodes)
            .map(|i| {
                let i = i as u8;
                NodeShape(i % 3, 2, i % 2, u8::from(i.is_multiple_of(7)), i % 3, false)
            })
            .collect();
        apply(&Op::AddNodes(start), &mut world, &all);
        for op in ops.iter().chain([&Op::Schedule]) {
            apply(op, &mut world, &all);
            let window = all[0].1.log.lock().clone();
            for (_, client) in &all[1..] {
                let other = client.log.lock().clone();
                prop_assert_eq!(&window, &other, "after {:?}", op);
            }
        }
    }
}

/// The memo is used, and only where it may be: a run of one shape in a cluster that barely
/// changes is answered from it most of the time; a pod that differs in one node-local input
/// (a toleration, a node selector) gets its own answers; PodTopologySpread's cycles never
/// read it. The decisions are the memo-less scheduler's throughout.
#[test]
fn the_memo_answers_repeated_questions_only() {
    let both = [scheduler(Memo::On, 1), scheduler(Memo::Off, 1)];
    let mut world = World::default();
    // 1,000 nodes: each pod walks 420 of them (the adaptive 42 %), seven blocks, and comes
    // back to a window after two or three pods changed a node or two in it.
    let shapes: Vec<NodeShape> = (0..1000u32)
        .map(|i| {
            let tainted = u8::from(i % 5 == 0);
            NodeShape((i % 3) as u8, 1, (i % 2) as u8, tainted, 0, false)
        })
        .collect();
    apply(&Op::AddNodes(shapes), &mut world, &both);
    // (Score's counts: Filter's follow the same course, and PodTopologySpread with
    // ScheduleAnyway does not filter.)
    let counts = |s: &Scheduler| s.stats.memo.score();
    let mut last = (0, 0);
    // Shape 0 twice, with shape 7 (shape 0 that tolerates the taint: another question of
    // the same nodes) between; then shape 6, which spreads.
    let mut seen = vec![];
    for (shape, n) in [(0, 40), (7, 20), (0, 40), (6, 20)] {
        apply(&Op::AddPods(shape, n), &mut world, &both);
        apply(&Op::Schedule, &mut world, &both);
        let now = counts(&both[0].0);
        seen.push((shape, now.0 - last.0, now.1 - last.1));
        last = now;
    }
    let [(_, h0, m0), (_, h1, m1), (_, h2, m2), (_, h6, m6)] = seen[..] else {
        unreachable!()
    };
    // Counted in nodes. Each pod walks 420; this run saw 15,961 answered and 839 judged.
    // A new key: its first walk of each window is judged; after that, only the nodes that
    // took a pod since.
    assert!(m0 >= 420 && h0 > 10 * m0, "{seen:?}");
    // Shape 7 got answers of its own, not shape 0's: its first walks were judged.
    assert!(m1 >= 420 && h1 > m1, "{seen:?}");
    // Shape 0's key was kept: its entries of the first run still answer.
    assert!(h2 > 10 * m2, "{seen:?}");
    assert_eq!(
        (h6, m6),
        (0, 0),
        "PodTopologySpread's cycles must not use the memo"
    );
    assert_eq!(
        counts(&both[1].0),
        (0, 0),
        "the memo-less scheduler has no memo"
    );
    let (with, without) = (both[0].1.log.lock().clone(), both[1].1.log.lock().clone());
    assert_eq!(with.len(), 120);
    assert_eq!(with, without);
}

/// Cycles the window path answered.
fn window_cycles(s: &Scheduler) -> u64 {
    s.stats
        .window_cycles
        .load(std::sync::atomic::Ordering::Relaxed)
}

/// The window path answers a run of one shape from the chunk summaries, with the decisions of
/// the scheduler that visits every node and of the one without a memo; a pod that spreads
/// (its PreScore reads the feasible nodes) is scored the usual way.
#[test]
fn the_window_path_answers_whole_chunks() {
    let all = [
        scheduler(Memo::Window, 1),
        scheduler(Memo::On, 1),
        scheduler(Memo::Off, 1),
    ];
    let mut world = World::default();
    // 2,000 nodes: each pod walks 760 of them (the adaptive 34 %), about twelve chunks.
    let shapes: Vec<NodeShape> = (0..2000u32)
        .map(|i| {
            NodeShape(
                (i % 3) as u8,
                2,
                (i % 2) as u8,
                u8::from(i.is_multiple_of(97)),
                0,
                false,
            )
        })
        .collect();
    apply(&Op::AddNodes(shapes), &mut world, &all);
    apply(&Op::AddPods(0, 120), &mut world, &all);
    apply(&Op::Schedule, &mut world, &all);
    let plain = window_cycles(&all[0].0);
    // The first walk of each window judges and scores its nodes (and summarizes the chunks);
    // from the second round on the window path answers.
    assert!(plain >= 60, "{plain} of 120 cycles through the window path");
    let (answered, judged) = all[0].0.stats.memo.filter();
    assert!(
        answered > 20 * judged,
        "filter: {answered} answered, {judged} judged"
    );
    apply(&Op::AddPods(6, 20), &mut world, &all);
    apply(&Op::Schedule, &mut world, &all);
    assert_eq!(
        window_cycles(&all[0].0),
        plain,
        "PodTopologySpread's cycles must not use the window path"
    );
    for (s, _) in &all[1..] {
        assert_eq!(window_cycles(s), 0, "the path is off there");
    }
    let logs: Vec<Vec<String>> = all.iter().map(|(_, c)| c.log.lock().clone()).collect();
    assert_eq!(logs[0].len(), 140);
    assert_eq!(logs[0], logs[1]);
    assert_eq!(logs[0], logs[2]);
}

/// Windows of many super chunks (1,024 nodes each) that start anywhere: nodes that change
/// between the rounds (a pod bound, a pod deleted, a node updated, a PreferNoSchedule taint
/// that makes TaintToleration's normalized score differ within a chunk) leave the other
/// summaries answering, with the decisions of the two other schedulers.
#[test]
fn the_window_path_skips_whole_super_chunks() {
    let pct = Some(60);
    let all = [
        scheduler_with(Memo::Window, 1, pct),
        scheduler_with(Memo::On, 1, pct),
        scheduler_with(Memo::Off, 1, pct),
    ];
    let mut world = World::default();
    // 3,000 nodes: each pod walks 1,800 of them (60 %), one super chunk or two.
    let shapes: Vec<NodeShape> = (0..3000u32)
        .map(|i| {
            let taint = if i.is_multiple_of(211) { 2 } else { 0 };
            NodeShape((i % 3) as u8, 2, (i % 2) as u8, taint, 0, false)
        })
        .collect();
    apply(&Op::AddNodes(shapes), &mut world, &all);
    let rounds = [
        Op::AddPods(0, 60),
        Op::Schedule,
        Op::UpdateNode(17, NodeShape(0, 2, 1, 2, 1, false)),
        Op::DeletePod(3),
        Op::DeletePod(40),
        Op::AddPods(0, 60),
        Op::Schedule,
        Op::AddPods(4, 20),
        Op::Schedule,
        Op::RemoveNode(5),
        Op::AddPods(0, 30),
        Op::Schedule,
    ];
    for op in &rounds {
        apply(op, &mut world, &all);
    }
    let used = window_cycles(&all[0].0);
    assert!(used >= 100, "{used} of 170 cycles through the window path");
    let logs: Vec<Vec<String>> = all.iter().map(|(_, c)| c.log.lock().clone()).collect();
    assert_eq!(logs[0].len(), 170);
    assert_eq!(logs[0], logs[1]);
    assert_eq!(logs[0], logs[2]);
}
