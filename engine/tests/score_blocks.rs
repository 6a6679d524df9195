//! Score runs in blocks of nodes (`ScorePlugin::score_nodes`, one call per plugin per block):
//! the totals must be those of scoring node by node, whatever the number of blocks, with
//! NormalizeScore seeing every feasible node at once and weights applied after it (kube's
//! `RunScorePlugins` in pkg/scheduler/framework/runtime/framework.go).

use std::sync::Arc;
use tidegate_engine::PluginSet;
use tidegate_engine::Registry;
use tidegate_engine::api::Resource;
use tidegate_engine::api::{Node, Pod, PodSpecInfo, Sym};
use tidegate_engine::{
    ClusterClient, CycleState, NodeInfo, NodeRow, Plugin, Profile, ScorePlugin, Status,
};
use tidegate_engine::{Scheduler, SchedulerConfig};

/// Records the node of the last bind.
#[derive(Default)]
struct Client(parking_lot::Mutex<Option<Sym>>);
impl ClusterClient for Client {
    fn bind(&self, _: &Pod, node: Sym) -> Result<(), String> {
        *self.0.lock() = Some(node);
        Ok(())
    }
    fn pod_exists_unassigned(&self, _: &Pod) -> bool {
        true
    }
}

/// Node `n-<i>`: a score read from the node's index.
fn index(node: &NodeInfo) -> i64 {
    node.name().to_string_lossy()[2..].parse().unwrap()
}

/// Scores `i mod 7` per node (the default `score_nodes`, node by node).
struct Wobble;
impl Plugin for Wobble {
    fn name(&self) -> &'static str {
        "Wobble"
    }
    fn into_score(self: Arc<Self>) -> Option<Arc<dyn ScorePlugin>> {
        Some(self)
    }
}
impl ScorePlugin for Wobble {
    fn score(&self, _: &CycleState, _: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        Ok(index(node) % 7)
    }
}

/// Scores `1000 - |i - target|`, normalized to [0, 100] over all nodes: its own batch
/// implementation, which must see the right nodes in each block.
struct Peak {
    target: i64,
}
impl Plugin for Peak {
    fn name(&self) -> &'static str {
        "Peak"
    }
    fn into_score(self: Arc<Self>) -> Option<Arc<dyn ScorePlugin>> {
        Some(self)
    }
}
impl ScorePlugin for Peak {
    fn score(&self, _: &CycleState, _: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        Ok(1000 - (index(node) - self.target).abs())
    }
    fn score_nodes(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        rows: &[NodeRow],
        scores: &mut [i64],
    ) -> Result<(), Status> {
        assert_eq!(nodes.len(), scores.len());
        // The scheduler hands each node's own row beside it.
        assert_eq!(rows.len(), nodes.len());
        for (r, n) in rows.iter().zip(nodes) {
            assert_eq!(*r, NodeRow::of(n));
        }
        for (s, n) in scores.iter_mut().zip(nodes) {
            *s = self.score(state, pod, n)?;
        }
        Ok(())
    }
    fn has_normalize(&self) -> bool {
        true
    }
    fn normalize_score(&self, _: &CycleState, _: &Pod, scores: &mut [i64]) -> Status {
        let max = *scores.iter().max().unwrap();
        let min = *scores.iter().min().unwrap();
        for s in scores.iter_mut() {
            *s = (*s - min) * 100 / (max - min).max(1);
        }
        Status::success()
    }
}

/// Schedules one pod on `nodes` nodes `n-<i>` with only the `enabled` score plugins (from
/// `registry`), percentageOfNodesToScore 100, on `threads` threads; returns the node bound.
/// Node `n-<i>` has `4000 + i` millicores, so every node's row differs.
fn schedule_one_pod(
    registry: &Registry,
    enabled: Vec<(String, i64)>,
    nodes: usize,
    threads: usize,
) -> Sym {
    schedule_one_pod_with_gaps(registry, enabled, nodes, threads, false)
}

/// As [`schedule_one_pod`]; with `gaps`, every node `n-<i>` with `i % 5 == 2` is
/// unschedulable, so NodeUnschedulable's Filter leaves holes in the feasible list and Score's
/// blocks hold nodes that are not consecutive in the snapshot.
fn schedule_one_pod_with_gaps(
    registry: &Registry,
    enabled: Vec<(String, i64)>,
    nodes: usize,
    threads: usize,
    gaps: bool,
) -> Sym {
    let mut profile = Profile::default_profile();
    profile.plugins.score = PluginSet {
        enabled,
        disabled: vec!["*".into()],
    };
    let cfg = SchedulerConfig {
        profiles: vec![profile],
        parallelism: threads,
        percentage_of_nodes_to_score: Some(100),
        ..SchedulerConfig::default()
    };
    let client = Arc::new(Client::default());
    let s = Scheduler::new(cfg, registry, client.clone(), None).unwrap();
    for i in 0..nodes {
        let mut n = Node::named(&format!("n-{i}"));
        n.unschedulable = gaps && i % 5 == 2;
        n.allocatable = Resource {
            milli_cpu: 4000 + i as i64,
            memory: 8 << 30,
            allowed_pod_number: 110,
            ..Resource::default()
        };
        s.on_node_add(Arc::new(n));
    }
    let spec = PodSpecInfo {
        scheduler_name: Sym::new("default-scheduler"),
        ..PodSpecInfo::default()
    };
    s.on_pod_add(Arc::new(Pod::new("ns", "p", Arc::new(spec))));
    let q = s.queue.try_pop().unwrap();
    s.schedule_popped(q);
    client.0.lock().expect("bound")
}

fn run(nodes: usize, target: i64, threads: usize) -> Sym {
    run_with_gaps(nodes, target, threads, false)
}

fn run_with_gaps(nodes: usize, target: i64, threads: usize, gaps: bool) -> Sym {
    let mut registry = Registry::in_tree();
    registry.register("Wobble", |_| Arc::new(Wobble));
    registry.register("Peak", move |_| Arc::new(Peak { target }));
    // Peak's weight dominates; Wobble only breaks what would otherwise be ties.
    let enabled = vec![("Peak".into(), 10), ("Wobble".into(), 1)];
    schedule_one_pod_with_gaps(&registry, enabled, nodes, threads, gaps)
}

/// With Filter's holes in the feasible list, each block still hands every node its own row
/// (Peak asserts it: the rows are gathered, not the snapshot's consecutive ones), and the
/// best node still wins.
#[test]
fn blocks_with_filtered_out_nodes_get_their_own_rows() {
    for threads in [1, 2] {
        for target in [0, 63, 64, 776, 1499] {
            assert_eq!(
                run_with_gaps(1500, target, threads, true),
                Sym::new(&format!("n-{target}")),
                "target {target}, {threads} threads"
            );
        }
    }
}

#[test]
fn the_best_total_wins_in_any_block_on_any_thread_count() {
    // 1,500 nodes: many blocks, and enough for the pool; targets in the first, a middle and
    // the last (short) block. Peak's normalized score is 100 only at the target.
    for threads in [1, 2] {
        for target in [0, 63, 64, 777, 1499] {
            assert_eq!(
                run(1500, target, threads),
                Sym::new(&format!("n-{target}")),
                "target {target}, {threads} threads"
            );
        }
    }
    // Fewer nodes than one block.
    assert_eq!(run(10, 3, 1), Sym::new("n-3"));
}

/// A plugin whose NormalizeScore is kube's `DefaultNormalizeScore(MaxNodeScore, reverse)`,
/// scoring `raw(i)` on node `n-<i>`. The scheduler normalizes it block by block from the
/// cluster-wide maximum (`ScorePlugin::default_normalize`).
struct Default_ {
    name: &'static str,
    reverse: bool,
    raw: fn(i64) -> i64,
}
impl Plugin for Default_ {
    fn name(&self) -> &'static str {
        self.name
    }
    fn into_score(self: Arc<Self>) -> Option<Arc<dyn ScorePlugin>> {
        Some(self)
    }
}
impl ScorePlugin for Default_ {
    fn score(&self, _: &CycleState, _: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        Ok((self.raw)(index(node)))
    }
    fn has_normalize(&self) -> bool {
        true
    }
    fn default_normalize(&self) -> Option<bool> {
        Some(self.reverse)
    }
    fn normalize_score(&self, _: &CycleState, _: &Pod, _: &mut [i64]) -> Status {
        Status::error("the scheduler normalizes a default-normalized plugin itself")
    }
}

/// kube's DefaultNormalizeScore over a whole column, written out here as the reference.
fn kube_default_normalize(scores: &mut [i64], reverse: bool) {
    let max = scores.iter().copied().fold(0, i64::max);
    for s in scores.iter_mut() {
        if max == 0 {
            *s = if reverse { 100 } else { 0 };
        } else {
            *s = 100 * *s / max;
            if reverse {
                *s = 100 - *s;
            }
        }
    }
}

/// `(name, weight, reverse, raw)` of each default-normalized plugin, plus Wobble at weight 1.
type Spec = (&'static str, i64, bool, fn(i64) -> i64);

fn run_defaults(nodes: usize, specs: &'static [Spec], threads: usize) -> (Sym, Vec<usize>) {
    let mut registry = Registry::in_tree();
    registry.register("Wobble", |_| Arc::new(Wobble));
    let mut enabled = vec![("Wobble".to_string(), 1)];
    for &(name, weight, reverse, raw) in specs {
        registry.register(name, move |_| Arc::new(Default_ { name, reverse, raw }));
        enabled.push((name.to_string(), weight));
    }
    let chosen = schedule_one_pod(&registry, enabled, nodes, threads);
    // The reference: kube's totals node by node, and every node that reaches the best.
    let mut totals: Vec<i64> = (0..nodes as i64).map(|i| i % 7).collect();
    for &(_, weight, reverse, raw) in specs {
        let mut column: Vec<i64> = (0..nodes as i64).map(raw).collect();
        kube_default_normalize(&mut column, reverse);
        for (t, c) in totals.iter_mut().zip(column) {
            *t += c * weight;
        }
    }
    let best = *totals.iter().max().unwrap();
    let winners = (0..nodes).filter(|&i| totals[i] == best).collect();
    (chosen, winners)
}

#[test]
fn default_normalized_plugins_are_normalized_from_the_cluster_wide_maximum() {
    // Varying scores (a reversed distance from node 1,234; a sawtooth normalized up), scores
    // that are all 0 (a reversed plugin that gives every node 100) and negative ones (kube's
    // maximum starts at 0), over 1,500 nodes (24 blocks, the pool's path) and 40 (one
    // block), on one and two threads.
    static SPECS: &[Spec] = &[
        ("Dip", 10, true, |i| (i - 1234).abs()),
        ("Saw", 3, false, |i| i % 11),
        ("Flat", 5, true, |_| 0),
        ("Below", 2, false, |i| -i),
    ];
    for nodes in [1500, 40] {
        for threads in [1, 2] {
            let (chosen, winners) = run_defaults(nodes, SPECS, threads);
            let i: usize = chosen.to_string_lossy()[2..].parse().unwrap();
            assert!(
                winners.contains(&i),
                "{nodes} nodes, {threads} threads: chose n-{i}, kube's best are {winners:?}"
            );
        }
    }
}
