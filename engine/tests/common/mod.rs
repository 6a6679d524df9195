//! What several integration tests share: a one-node, one-thread scheduler with the in-tree
//! plugins.

use std::sync::Arc;
use tidegate_engine::NoopClient;
use tidegate_engine::Registry;
use tidegate_engine::api::Resource;
use tidegate_engine::api::{Labels, Node};
use tidegate_engine::{Scheduler, SchedulerConfig};

/// A scheduler (QueueingHints on or off, one Filter/Score thread) holding one node named
/// `name` with `labels`, 4 CPUs, 8 GiB and room for 110 pods; `cordoned` sets
/// `spec.unschedulable`.
pub fn one_node_scheduler(
    hints: bool,
    name: &str,
    labels: &[(&str, &str)],
    cordoned: bool,
) -> Arc<Scheduler> {
    let mut cfg = SchedulerConfig {
        parallelism: 1,
        ..SchedulerConfig::default()
    };
    cfg.queue.queueing_hints = hints;
    let s = Scheduler::new(cfg, &Registry::in_tree(), Arc::new(NoopClient), None).unwrap();
    let mut n = Node::named(name);
    n.labels = Arc::new(Labels::from_pairs(labels.iter().copied()));
    n.unschedulable = cordoned;
    n.allocatable = Resource {
        milli_cpu: 4000,
        memory: 8 << 30,
        allowed_pod_number: 110,
        ..Resource::default()
    };
    s.on_node_add(Arc::new(n));
    s
}
