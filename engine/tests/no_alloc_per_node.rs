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
/// A scheduler that evaluates every node (`percentageOfNodesToScore: 100`) on one thread.
fn scheduler() -> Arc<Scheduler> {
    let cfg = SchedulerConfig {
        parallelism: 1,
        percentage_of_nodes_to_score: Some(100),
        ..SchedulerConfig::default()
    };
    Scheduler::new(cfg, &Registry::in_tree(), Arc::new(NoopClient), None).unwrap()
}

/// `node-<i>`: 4 CPUs, 32 GiB, 110 pods; its hostname and a zone (a, b, c in turn).
fn node(i: usize) -> Node {
    let name = format!("node-{i}");
    let mut n = Node::named(&name);
    n.labels = Arc::new(Labels::from_pairs([
        ("kubernetes.io/hostname", name.as_str()),
        ("topology.kubernetes.io/zone", ["a", "b", "c"][i % 3]),
    ]));
    n.allocatable = Resource {
        milli_cpu: 4000,
        memory: 32 << 30,
        allowed_pod_number: 110,
        ..Resource::default()
    };
    n
}

/// Adds `pod`, pops it and schedules it; the allocations of that cycle when `count`.
fn cycle(s: &Scheduler, pod: Arc<Pod>, count: bool) -> u64 {
    s.on_pod_add(pod);
    let q = s.queue.try_pop().unwrap();
    ALLOCS.store(0, Ordering::Relaxed);
    COUNTING.with(|c| c.set(count));
    s.schedule_popped(q);
    COUNTING.with(|c| c.set(false));
    ALLOCS.load(Ordering::Relaxed)
}

fn allocations_per_cycle(nodes: usize, rejecting: bool) -> u64 {
    let s = scheduler();
    for i in 0..nodes {
        let mut n = node(i);
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
    let pod = |name: &str| Arc::new(Pod::new("ns", name, spec.clone()));
    cycle(&s, pod("warm-up"), false);
    let n = cycle(&s, pod("measured"), true);
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

/// The volume shapes of kube's `volumes/` workloads: every node with a CSINode
/// (`ebs.csi.aws.com`, count 39) and a bound pod holding one claim; the measured pod mounts a
/// claim bound to a CSI volume (SchedulingCSIPVs) or an in-tree EBS volume that kube
/// migrates to that driver (SchedulingInTreePVs/MigratedInTreePVs); or (`Shape::Zoned`) a
/// ReadWriteOncePod claim whose CSI volume carries a zone label, on nodes in three zones, so
/// that VolumeRestrictions and VolumeZone run on every node too (and VolumeZone rejects two
/// thirds of them).
mod volumes {
    use super::*;
    use k8s_openapi::api::core::v1 as core;
    use k8s_openapi::api::storage::v1 as storage;
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use std::collections::BTreeMap;
    use tidegate_engine::api::convert;
    use tidegate_engine::{ActionType, ApiObject, EventResource};

    const DRIVER: &str = "ebs.csi.aws.com";
    const ZONE: &str = "topology.kubernetes.io/zone";

    #[derive(Clone, Copy, Debug, PartialEq)]
    pub(super) enum Shape {
        Csi,
        InTree,
        Zoned,
    }

    fn meta(name: &str, ns: Option<&str>) -> ObjectMeta {
        ObjectMeta {
            name: Some(name.into()),
            namespace: ns.map(Into::into),
            uid: Some(format!("uid-{name}")),
            resource_version: Some("1".into()),
            ..ObjectMeta::default()
        }
    }

    fn add<T: Send + Sync + 'static>(s: &Scheduler, r: EventResource, o: T) {
        s.on_object_event(r, ActionType::ADD, None, Some(ApiObject(Arc::new(o))));
    }

    /// A claim `pvc-<i>` bound to the volume `pv-<i>` (CSI or in-tree EBS).
    fn bound_claim(s: &Scheduler, i: usize, shape: Shape) {
        let storage = BTreeMap::from([("storage".to_string(), Quantity("1Gi".into()))]);
        let mode = match shape {
            Shape::Zoned => "ReadWriteOncePod",
            _ => "ReadOnlyMany",
        };
        let mut pv_meta = meta(&format!("pv-{i}"), None);
        if shape == Shape::Zoned {
            pv_meta.labels = Some(BTreeMap::from([(ZONE.to_string(), "a".to_string())]));
        }
        let mut pv = core::PersistentVolume {
            metadata: pv_meta,
            spec: Some(core::PersistentVolumeSpec {
                access_modes: Some(vec![mode.into()]),
                capacity: Some(storage.clone()),
                claim_ref: Some(core::ObjectReference {
                    namespace: Some("ns".into()),
                    name: Some(format!("pvc-{i}")),
                    uid: Some(format!("uid-pvc-{i}")),
                    ..Default::default()
                }),
                persistent_volume_reclaim_policy: Some("Retain".into()),
                ..Default::default()
            }),
            status: Some(core::PersistentVolumeStatus {
                phase: Some("Bound".into()),
                ..Default::default()
            }),
        };
        let spec = pv.spec.as_mut().unwrap();
        if shape == Shape::InTree {
            spec.aws_elastic_block_store = Some(core::AWSElasticBlockStoreVolumeSource {
                volume_id: format!("vol-{i}"),
                ..Default::default()
            });
        } else {
            spec.csi = Some(core::CSIPersistentVolumeSource {
                driver: DRIVER.into(),
                volume_handle: format!("vol-{i}"),
                ..Default::default()
            });
        }
        add(s, EventResource::PersistentVolume, pv);
        let mut m = meta(&format!("pvc-{i}"), Some("ns"));
        m.annotations = Some(BTreeMap::from([(
            "pv.kubernetes.io/bind-completed".to_string(),
            "true".to_string(),
        )]));
        let pvc = core::PersistentVolumeClaim {
            metadata: m,
            spec: Some(core::PersistentVolumeClaimSpec {
                access_modes: Some(vec![mode.into()]),
                resources: Some(core::VolumeResourceRequirements {
                    requests: Some(storage),
                    ..Default::default()
                }),
                volume_name: Some(format!("pv-{i}")),
                ..Default::default()
            }),
            status: Some(core::PersistentVolumeClaimStatus {
                phase: Some("Bound".into()),
                ..Default::default()
            }),
        };
        add(s, EventResource::PersistentVolumeClaim, pvc);
    }

    /// A pod `name` mounting `pvc-<i>` (and, `Shape::Zoned`, an inline EBS disk `disk-<i>`,
    /// which VolumeRestrictions checks against the node's pods), bound to `node` if given.
    fn pod(name: &str, i: usize, shape: Shape, node: Option<String>) -> Arc<Pod> {
        let mut volumes = vec![core::Volume {
            name: "vol".into(),
            persistent_volume_claim: Some(core::PersistentVolumeClaimVolumeSource {
                claim_name: format!("pvc-{i}"),
                ..Default::default()
            }),
            ..Default::default()
        }];
        if shape == Shape::Zoned {
            volumes.push(core::Volume {
                name: "disk".into(),
                aws_elastic_block_store: Some(core::AWSElasticBlockStoreVolumeSource {
                    volume_id: format!("disk-{i}"),
                    ..Default::default()
                }),
                ..Default::default()
            });
        }
        let p = core::Pod {
            metadata: meta(name, Some("ns")),
            spec: Some(core::PodSpec {
                containers: vec![core::Container {
                    name: "pause".into(),
                    image: Some("registry.k8s.io/pause:3.10".into()),
                    ..Default::default()
                }],
                volumes: Some(volumes),
                node_name: node,
                scheduler_name: Some("default-scheduler".into()),
                ..Default::default()
            }),
            status: None,
        };
        Arc::new(convert::pod(&p).unwrap())
    }

    pub(super) fn allocations_per_cycle(nodes: usize, shape: Shape) -> u64 {
        let s = scheduler();
        for i in 0..nodes {
            let name = format!("node-{i}");
            s.on_node_add(Arc::new(node(i)));
            let csi_node = storage::CSINode {
                metadata: meta(&name, None),
                spec: storage::CSINodeSpec {
                    drivers: vec![storage::CSINodeDriver {
                        name: DRIVER.into(),
                        node_id: name.clone(),
                        allocatable: Some(storage::VolumeNodeResources { count: Some(39) }),
                        topology_keys: None,
                    }],
                },
                ..Default::default()
            };
            add(&s, EventResource::CSINode, csi_node);
            bound_claim(&s, i, shape);
            s.on_pod_add(pod(&format!("init-{i}"), i, shape, Some(name)));
        }
        let measure = |name: &str, i: usize, count: bool| {
            bound_claim(&s, i, shape);
            cycle(&s, pod(name, i, shape, None), count)
        };
        measure("warm-up", nodes, false);
        let n = measure("measured", nodes + 1, true);
        assert_eq!(s.stats.scheduled.load(Ordering::Relaxed), 2);
        n
    }
}

/// The volume plugins allocate nothing per node either (issue 35, item 4), with bound CSI
/// claims, with in-tree EBS claims that NodeVolumeLimits translates to CSI, and with zoned
/// ReadWriteOncePod claims (each of the four plugins' Filter, with a per-node allocation
/// added, fails this test).
#[test]
fn volume_plugins_allocate_nothing_per_node() {
    use volumes::Shape;
    for shape in [Shape::Csi, Shape::InTree, Shape::Zoned] {
        let small = volumes::allocations_per_cycle(500, shape);
        let big = volumes::allocations_per_cycle(5000, shape);
        assert!(
            big <= small + 64,
            "{shape:?}: 500 nodes: {small} allocations, 5000 nodes: {big}"
        );
        eprintln!("volume cycle ({shape:?}): {small} at 500 nodes, {big} at 5000 nodes");
    }
}
