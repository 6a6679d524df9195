//! Score runs in blocks of nodes (`ScorePlugin::score_nodes`, one call per plugin per block):
//! the totals must be those of scoring node by node, whatever the number of blocks, with
//! NormalizeScore seeing every feasible node at once and weights applied after it (kube's
//! `RunScorePlugins` in pkg/scheduler/framework/runtime/framework.go).

use std::sync::Arc;
use tidegate_engine::api::resource::Resource;
use tidegate_engine::api::{Node, Pod, PodSpecInfo, Sym};
use tidegate_engine::framework::runtime::PluginSet;
use tidegate_engine::framework::{
    ClusterClient, CycleState, NodeInfo, Plugin, Profile, ScorePlugin, Status,
};
use tidegate_engine::plugins::Registry;
use tidegate_engine::scheduler::{Scheduler, SchedulerConfig};

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
        scores: &mut [i64],
    ) -> Result<(), Status> {
        assert_eq!(nodes.len(), scores.len());
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

fn run(nodes: usize, target: i64, threads: usize) -> Sym {
    let mut registry = Registry::in_tree();
    registry.register("Wobble", |_| Arc::new(Wobble));
    registry.register("Peak", move |_| Arc::new(Peak { target }));
    let mut profile = Profile::default_profile();
    profile.plugins.score = PluginSet {
        // Peak's weight dominates; Wobble only breaks what would otherwise be ties.
        enabled: vec![("Peak".into(), 10), ("Wobble".into(), 1)],
        disabled: vec!["*".into()],
    };
    let cfg = SchedulerConfig {
        profiles: vec![profile],
        parallelism: threads,
        percentage_of_nodes_to_score: Some(100),
        ..SchedulerConfig::default()
    };
    let client = Arc::new(Client::default());
    let s = Scheduler::new(cfg, &registry, client.clone(), None).unwrap();
    for i in 0..nodes {
        let mut n = Node::named(&format!("n-{i}"));
        n.allocatable = Resource {
            milli_cpu: 4000,
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
