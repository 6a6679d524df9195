//! Hot-path discipline: Filter and Score allocate nothing per node. A counting global
//! allocator counts the allocations of one whole scheduling cycle (default profile, the
//! pod-default template's shape) on 500 and on 5,000 nodes; per-node allocation would add
//! thousands, while the per-cycle vectors grow by a few doublings at most.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tidegate_engine::NoopClient;
use tidegate_engine::Registry;
use tidegate_engine::api::Labels;
use tidegate_engine::api::Resource;
use tidegate_engine::api::{Node, Pod, PodSpecInfo, Sym};
use tidegate_engine::{Scheduler, SchedulerConfig};

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);
thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

// SAFETY: every call forwards to the system allocator unchanged; the counter is a side effect.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.with(|c| c.get()) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.with(|c| c.get()) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: `ptr` came from `System.alloc` with `layout`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations of one scheduling cycle (after a warm-up cycle) with `nodes` nodes, every
/// node evaluated (`percentageOfNodesToScore: 100`). With `rejecting`, the pod asks for an
/// extended resource only the last node has (SchedulingWithExtendedResource's shape), so
/// NodeResourcesFit rejects every other node.
fn allocations_per_cycle(nodes: usize, rejecting: bool) -> u64 {
    let cfg = SchedulerConfig {
        parallelism: 1,
        percentage_of_nodes_to_score: Some(100),
        ..SchedulerConfig::default()
    };
    let s = Scheduler::new(cfg, &Registry::in_tree(), Arc::new(NoopClient), None).unwrap();
    for i in 0..nodes {
        let mut n = Node::named(&format!("node-{i}"));
        n.labels = Arc::new(Labels::from_pairs([
            ("kubernetes.io/hostname", format!("node-{i}").as_str()),
            ("topology.kubernetes.io/zone", ["a", "b", "c"][i % 3]),
        ]));
        n.allocatable = Resource {
            milli_cpu: 4000,
            memory: 32 << 30,
            allowed_pod_number: 110,
            ..Resource::default()
        };
        if i == nodes - 1 {
            n.allocatable.scalar = vec![(Sym::new("example.com/widget"), 10)];
        }
        s.on_node_add(Arc::new(n));
    }
    // scheduler_perf's pod-default: requests 100m / 500Mi, image pause.
    let mut req = Resource {
        milli_cpu: 100,
        memory: 500 << 20,
        ..Resource::default()
    };
    if rejecting {
        req.scalar = vec![(Sym::new("example.com/widget"), 1)];
    }
    let spec = Arc::new(PodSpecInfo {
        scheduler_name: Sym::new("default-scheduler"),
        requests: req.clone(),
        non_zero_requests: req,
        images: vec![Sym::new("registry.k8s.io/pause:3.10")],
        ..PodSpecInfo::default()
    });
    let cycle = |name: &str, count: bool| {
        s.on_pod_add(Arc::new(Pod::new("ns", name, spec.clone())));
        let q = s.queue.try_pop().unwrap();
        ALLOCS.store(0, Ordering::Relaxed);
        COUNTING.with(|c| c.set(count));
        s.schedule_popped(q);
        COUNTING.with(|c| c.set(false));
        ALLOCS.load(Ordering::Relaxed)
    };
    cycle("warm-up", false);
    let n = cycle("measured", true);
    assert_eq!(s.stats.scheduled.load(Ordering::Relaxed), 2);
    n
}

#[test]
fn a_scheduling_cycle_allocates_nothing_per_node() {
    let small = allocations_per_cycle(500, false);
    let big = allocations_per_cycle(5000, false);
    // 4,500 more nodes: a per-node allocation in any Filter or Score plugin would add ≥ 4,500.
    assert!(
        big <= small + 64,
        "500 nodes: {small} allocations, 5000 nodes: {big}"
    );
    eprintln!("allocations per cycle: {small} at 500 nodes, {big} at 5000 nodes");
}

/// Rejecting a node costs no allocation either: a constant reason is borrowed, an extended
/// resource's "Insufficient <name>" is made once, and a one-reason status holds it inline.
/// Only the list of rejected nodes grows (by doublings).
#[test]
fn rejecting_nodes_allocates_nothing_per_node() {
    let small = allocations_per_cycle(500, true);
    let big = allocations_per_cycle(5000, true);
    assert!(
        big <= small + 64,
        "500 nodes: {small} allocations, 5000 nodes: {big}"
    );
    eprintln!("allocations per rejecting cycle: {small} at 500 nodes, {big} at 5000 nodes");
}
