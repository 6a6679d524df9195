//! Pod groups through the real scheduler under GenericWorkload (kube v1.37.2's
//! `schedule_one_podgroup.go`, `gangscheduling`, the queue's pod-group entities): a gang that
//! cannot be placed whole binds nothing, one that can binds all, a basic group binds what
//! fits, a gang whose quorum arrives later is activated, and pods without a group are
//! scheduled as before. Composite trees (kube v1.38.0-beta.0, CompositePodGroup gate): one
//! entity gated until the whole tree is ready, placed whole or not at all under a gang root,
//! leaf by leaf under a basic one, and members waiting for every ancestor.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;
use tidegate_engine::api::{
    Node, Pod, PodGroup, PodGroupKey, PodGroupPolicy, PodSpecInfo, Resource, Sym,
};
use tidegate_engine::clock::VirtualClock;
use tidegate_engine::features::{FeatureGates, Features};
use tidegate_engine::{ClusterClient, Profile, Registry, Scheduler, SchedulerConfig};

#[derive(Default)]
struct Client {
    binds: Mutex<Vec<(String, Sym)>>,
    conditions: Mutex<Vec<(String, bool, String)>>,
}

impl ClusterClient for Client {
    fn bind(&self, pod: &Pod, node: Sym) -> Result<(), String> {
        self.binds.lock().push((pod.name.to_string(), node));
        Ok(())
    }
    fn pod_exists_unassigned(&self, _: &Pod) -> bool {
        true
    }
    fn set_pod_group_scheduled(&self, g: &PodGroup, scheduled: bool, reason: &str, _: &str) {
        self.conditions
            .lock()
            .push((g.key.name.to_string(), scheduled, reason.to_string()));
    }
}

fn features(generic_workload: bool) -> Features {
    let mut set = BTreeMap::new();
    set.insert("GenericWorkload".to_string(), generic_workload);
    Features::from_gates(&FeatureGates::for_workload(&set).expect("supported gate"))
}

/// GenericWorkload, TopologyAwareWorkloadScheduling and CompositePodGroup on.
fn composite_features() -> Features {
    let mut set = BTreeMap::new();
    for g in [
        "GenericWorkload",
        "TopologyAwareWorkloadScheduling",
        "CompositePodGroup",
    ] {
        set.insert(g.to_string(), true);
    }
    Features::from_gates(&FeatureGates::for_workload(&set).expect("supported gates"))
}

/// A scheduler with `nodes` nodes of 2 CPUs each, deterministic on a virtual clock.
fn setup(generic_workload: bool, nodes: usize) -> (Arc<Scheduler>, Arc<Client>) {
    setup_with(features(generic_workload), nodes)
}

fn setup_with(f: Features, nodes: usize) -> (Arc<Scheduler>, Arc<Client>) {
    setup_on(f, nodes, Arc::new(VirtualClock::new()))
}

/// [`setup_with`] on a clock the test moves.
fn setup_on(f: Features, nodes: usize, clock: Arc<VirtualClock>) -> (Arc<Scheduler>, Arc<Client>) {
    let cfg = SchedulerConfig {
        profiles: vec![Profile::default_profile_for(&f)],
        parallelism: 1,
        deterministic: true,
        features: f,
        ..SchedulerConfig::default()
    };
    let client = Arc::new(Client::default());
    let s = Scheduler::new(cfg, &Registry::in_tree(), client.clone(), Some(clock))
        .expect("valid profile");
    for i in 0..nodes {
        let mut n = Node::named(&format!("n{i}"));
        n.allocatable = Resource {
            milli_cpu: 2000,
            memory: 8 << 30,
            allowed_pod_number: 110,
            ..Resource::default()
        };
        s.on_node_add(Arc::new(n));
    }
    (s, client)
}

fn group(name: &str, policy: PodGroupPolicy) -> Arc<PodGroup> {
    Arc::new(PodGroup::new(PodGroupKey::new("ns", name), policy))
}

/// A pod asking for 1 CPU (so a node holds two), in `group` if any.
fn pod(name: &str, group: Option<&str>) -> Arc<Pod> {
    let spec = PodSpecInfo {
        scheduler_name: Sym::new("default-scheduler"),
        scheduling_group: group.map(Arc::from),
        requests: Resource {
            milli_cpu: 1000,
            ..Resource::default()
        },
        ..PodSpecInfo::default()
    };
    Arc::new(Pod::new("ns", name, Arc::new(spec)))
}

/// Runs scheduling attempts until none is ready.
fn drain(s: &Scheduler) -> usize {
    let mut n = 0;
    while s.try_schedule_one() {
        n += 1;
        assert!(n < 1000, "the queue never empties");
    }
    n
}

fn bound(c: &Client) -> Vec<String> {
    let mut v: Vec<String> = c.binds.lock().iter().map(|(p, _)| p.clone()).collect();
    v.sort();
    v
}

#[test]
fn a_gang_of_three_that_fits_two_binds_nothing() {
    // One node of 2 CPUs holds two of the three 1-CPU members.
    let (s, c) = setup(true, 1);
    s.on_pod_group_add(group("g", PodGroupPolicy::Gang { min_count: 3 }));
    for i in 0..3 {
        s.on_pod_add(pod(&format!("p{i}"), Some("g")));
    }
    drain(&s);
    assert!(
        bound(&c).is_empty(),
        "a failed gang binds nothing: {:?}",
        bound(&c)
    );
    // Every member is back in the queue, counted once.
    let counts = s.queue.counts();
    assert_eq!(counts.total(), 3, "{counts:?}");
    assert_eq!(counts.in_flight, 0);
    assert_eq!(
        c.conditions.lock().last().cloned(),
        Some(("g".into(), false, "Unschedulable".into()))
    );
    // Nothing of the simulation is left assumed.
    for i in 0..3 {
        assert!(
            !s.cache
                .is_assumed(&tidegate_engine::api::PodKey::new("ns", &format!("p{i}")))
        );
    }
    let attempts = s.metrics().pod_group_counters();
    assert!(
        attempts.iter().any(
            |(m, _, l, n)| *m == "scheduler_podgroup_schedule_attempts_total"
                && *l == Some(("result", "unschedulable"))
                && *n >= 1
        ),
        "{attempts:?}"
    );
}

#[test]
fn a_gang_of_three_that_fits_binds_all() {
    let (s, c) = setup(true, 2);
    s.on_pod_group_add(group("g", PodGroupPolicy::Gang { min_count: 3 }));
    for i in 0..3 {
        s.on_pod_add(pod(&format!("p{i}"), Some("g")));
    }
    drain(&s);
    assert_eq!(bound(&c), vec!["p0", "p1", "p2"]);
    assert_eq!(
        c.conditions.lock().last().cloned(),
        Some(("g".into(), true, "Scheduled".into()))
    );
    assert_eq!(s.queue.counts().total(), 0);
}

#[test]
fn a_basic_group_binds_what_fits() {
    let (s, c) = setup(true, 1);
    s.on_pod_group_add(group("b", PodGroupPolicy::Basic));
    for i in 0..3 {
        s.on_pod_add(pod(&format!("p{i}"), Some("b")));
    }
    drain(&s);
    assert_eq!(bound(&c).len(), 2, "{:?}", bound(&c));
    // The one that did not fit waits in the queue.
    assert_eq!(s.queue.counts().total(), 1);
}

#[test]
fn a_gang_whose_quorum_arrives_later_is_activated() {
    let (s, c) = setup(true, 2);
    s.on_pod_group_add(group("g", PodGroupPolicy::Gang { min_count: 3 }));
    s.on_pod_add(pod("p0", Some("g")));
    s.on_pod_add(pod("p1", Some("g")));
    drain(&s);
    assert!(bound(&c).is_empty());
    let k = tidegate_engine::api::PodKey::new("ns", "p0");
    assert_eq!(s.queue.locate(&k), Some("gated"), "below quorum: gated");
    s.on_pod_add(pod("p2", Some("g")));
    drain(&s);
    assert_eq!(bound(&c), vec!["p0", "p1", "p2"]);
}

#[test]
fn members_wait_for_their_pod_group_object() {
    let (s, c) = setup(true, 2);
    s.on_pod_add(pod("p0", Some("late")));
    drain(&s);
    assert!(bound(&c).is_empty());
    assert_eq!(s.queue.counts().pod_group_incomplete, 1);
    s.on_pod_group_add(group("late", PodGroupPolicy::Basic));
    drain(&s);
    assert_eq!(bound(&c), vec!["p0"]);
}

#[test]
fn pods_without_a_group_and_the_gate_off_are_scheduled_alone() {
    // Gate off: the group field is ignored, every pod is scheduled on its own.
    let (s, c) = setup(false, 1);
    s.on_pod_group_add(group("g", PodGroupPolicy::Gang { min_count: 3 }));
    for i in 0..3 {
        s.on_pod_add(pod(&format!("p{i}"), Some("g")));
    }
    drain(&s);
    assert_eq!(bound(&c).len(), 2);
    // Gate on, a pod without a group beside a gang.
    let (s, c) = setup(true, 2);
    s.on_pod_add(pod("solo", None));
    drain(&s);
    assert_eq!(bound(&c), vec!["solo"]);
}

#[test]
fn a_deleted_member_leaves_the_queue() {
    let (s, _c) = setup(true, 1);
    s.on_pod_group_add(group("g", PodGroupPolicy::Gang { min_count: 3 }));
    let pods: Vec<_> = (0..3).map(|i| pod(&format!("p{i}"), Some("g"))).collect();
    for p in &pods {
        s.on_pod_add(p.clone());
    }
    drain(&s);
    assert_eq!(s.queue.counts().total(), 3);
    s.on_pod_delete(&pods[0]);
    assert_eq!(s.queue.counts().total(), 2);
    s.on_pod_group_delete(group("g", PodGroupPolicy::Gang { min_count: 3 }));
    let c = s.queue.counts();
    assert_eq!(c.total(), 2);
    assert_eq!(c.pod_group_incomplete, 2);
}

/// A PodGroupPostFilter plugin that takes the pods named `filler*` off their nodes in the
/// snapshot, reruns the group's algorithm, records what it saw, and undoes the change.
struct Evictor {
    seen: Arc<Mutex<Vec<String>>>,
}

impl tidegate_engine::Plugin for Evictor {
    fn name(&self) -> &'static str {
        "Evictor"
    }
    fn into_pod_group_post_filter(
        self: Arc<Self>,
    ) -> Option<Arc<dyn tidegate_engine::PodGroupPostFilterPlugin>> {
        Some(self)
    }
}

impl tidegate_engine::PodGroupPostFilterPlugin for Evictor {
    fn pod_group_post_filter(
        &self,
        handle: &mut dyn tidegate_engine::PodGroupHandle,
        _state: &mut tidegate_engine::CycleState,
        pg: &tidegate_engine::PodGroupInfo,
    ) -> (
        Option<tidegate_engine::PodGroupPostFilterResult>,
        tidegate_engine::Status,
    ) {
        let (before, st0) = handle.schedule_pod_group();
        handle.start_mutations();
        let fillers: Vec<(Arc<Pod>, Sym)> = handle
            .snapshot()
            .nodes
            .iter()
            .flat_map(|n| {
                n.pods
                    .iter()
                    .filter(|p| p.name.starts_with("filler"))
                    .map(|p| (p.clone(), n.name()))
                    .collect::<Vec<_>>()
            })
            .collect();
        for (p, n) in &fillers {
            handle.remove_pod_from_snapshot(p, *n).unwrap();
        }
        let (after, st1) = handle.schedule_pod_group();
        handle.end_mutations();
        let (_, st2) = handle.schedule_pod_group();
        self.seen.lock().push(format!(
            "{}: before {:?}/{}, evicted {}, after {:?}/{}, restored {:?}",
            pg.name(),
            st0.code(),
            before.proposed_assignments.len(),
            fillers.len(),
            st1.code(),
            after.proposed_assignments.len(),
            st2.code()
        ));
        (
            None,
            tidegate_engine::Status::new(tidegate_engine::Code::Unschedulable, "evictor tried"),
        )
    }
}

#[test]
fn pod_group_post_filter_reruns_the_algorithm_on_a_changed_snapshot() {
    let f = features(true);
    let mut profile = Profile::default_profile_for(&f);
    // The test's own PodGroupPostFilter alone: DefaultPreemption (also a PodGroupPostFilter
    // plugin, from multiPoint) would run first and end the point.
    profile.plugins.pod_group_post_filter = tidegate_engine::PluginSet {
        enabled: vec![("Evictor".into(), 0)],
        disabled: vec!["DefaultPreemption".into()],
    };
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut registry = Registry::in_tree();
    let s2 = seen.clone();
    registry.register("Evictor", move |_| Arc::new(Evictor { seen: s2.clone() }));
    let cfg = SchedulerConfig {
        profiles: vec![profile],
        parallelism: 1,
        deterministic: true,
        features: f,
        ..SchedulerConfig::default()
    };
    let client = Arc::new(Client::default());
    let s = Scheduler::new(
        cfg,
        &registry,
        client.clone(),
        Some(Arc::new(VirtualClock::new())),
    )
    .unwrap();
    let mut n = Node::named("n0");
    n.allocatable = Resource {
        milli_cpu: 2000,
        memory: 8 << 30,
        allowed_pod_number: 110,
        ..Resource::default()
    };
    s.on_node_add(Arc::new(n));
    // A bound 1-CPU filler leaves room for one of the gang's two members.
    let mut filler = (*pod("filler", None)).clone();
    filler.node_name = Some(Sym::new("n0"));
    s.on_pod_add(Arc::new(filler));
    s.on_pod_group_add(group("g", PodGroupPolicy::Gang { min_count: 2 }));
    s.on_pod_add(pod("p0", Some("g")));
    s.on_pod_add(pod("p1", Some("g")));
    while s.try_schedule_one() {
        if !seen.lock().is_empty() {
            break;
        }
    }
    assert_eq!(
        seen.lock().first().cloned(),
        Some(
            // As kube's pgSchedulingFunc: the members that fit are proposed even when the
            // group as a whole does not.
            "g: before Unschedulable/1, evicted 1, after Success/2, restored Unschedulable"
                .to_string()
        )
    );
    assert!(bound(&client).is_empty());
    // The filler is back on its node: the cluster is as it was.
    let k = tidegate_engine::api::PodKey::new("ns", "p0");
    assert!(!s.cache.is_assumed(&k));
    assert_eq!(s.queue.counts().total(), 2);
}

/// A group under composite `parent`.
fn child(name: &str, parent: &str, composite: bool, policy: PodGroupPolicy) -> Arc<PodGroup> {
    Arc::new(PodGroup {
        composite,
        parent: Some(Arc::from(parent)),
        ..PodGroup::new(PodGroupKey::new("ns", name), policy)
    })
}

fn composite_root(name: &str, policy: PodGroupPolicy) -> Arc<PodGroup> {
    Arc::new(PodGroup {
        composite: true,
        ..PodGroup::new(PodGroupKey::new("ns", name), policy)
    })
}

/// kube v1.38.0-beta.0's composite tree (`workload_forest.go`, `algorithm_podgroup.go`): a
/// gang root of two gang leaves is one queued entity, gated until every leaf has its quorum,
/// and placed whole: 4 pods of 1 CPU fit 2 nodes of 2 CPUs, and all bind.
#[test]
fn a_composite_gang_of_two_gangs_binds_whole_once_complete() {
    let (s, c) = setup_with(composite_features(), 2);
    s.on_pod_group_add(composite_root(
        "root",
        PodGroupPolicy::Gang { min_count: 2 },
    ));
    for l in ["a", "b"] {
        s.on_pod_group_add(child(
            l,
            "root",
            false,
            PodGroupPolicy::Gang { min_count: 2 },
        ));
    }
    s.on_pod_add(pod("a0", Some("a")));
    s.on_pod_add(pod("a1", Some("a")));
    s.on_pod_add(pod("b0", Some("b")));
    drain(&s);
    assert!(bound(&c).is_empty(), "leaf b is below its quorum");
    let k = tidegate_engine::api::PodKey::new("ns", "a0");
    assert_eq!(s.queue.locate(&k), Some("gated"), "the tree waits, gated");
    s.on_pod_add(pod("b1", Some("b")));
    drain(&s);
    assert_eq!(bound(&c), vec!["a0", "a1", "b0", "b1"]);
    let conds = c.conditions.lock().clone();
    assert!(
        conds.contains(&("root".into(), true, "Scheduled".into())),
        "{conds:?}"
    );
    assert_eq!(s.queue.counts().total(), 0);
}

/// A tree that does not fit whole binds nothing (the root's gang needs both leaves: 6 pods
/// of 1 CPU on 2 nodes of 2 CPUs), and every member is back in the queue once.
#[test]
fn a_composite_gang_that_does_not_fit_binds_nothing() {
    let (s, c) = setup_with(composite_features(), 2);
    s.on_pod_group_add(composite_root(
        "root",
        PodGroupPolicy::Gang { min_count: 2 },
    ));
    for l in ["a", "b"] {
        s.on_pod_group_add(child(
            l,
            "root",
            false,
            PodGroupPolicy::Gang { min_count: 3 },
        ));
    }
    for l in ["a", "b"] {
        for i in 0..3 {
            s.on_pod_add(pod(&format!("{l}{i}"), Some(l)));
        }
    }
    drain(&s);
    assert!(bound(&c).is_empty(), "{:?}", bound(&c));
    let counts = s.queue.counts();
    assert_eq!(counts.total(), 6, "{counts:?}");
    for p in ["a0", "b2"] {
        assert!(
            !s.cache
                .is_assumed(&tidegate_engine::api::PodKey::new("ns", p)),
            "{p} left assumed"
        );
    }
}

/// A basic root binds the leaves that fit: leaf a (2 pods) fits, leaf b (a gang of 3) does
/// not once a holds a node; the failed leaf's members stay queued.
#[test]
fn a_basic_composite_root_binds_the_leaves_that_fit() {
    let (s, c) = setup_with(composite_features(), 2);
    s.on_pod_group_add(composite_root("root", PodGroupPolicy::Basic));
    s.on_pod_group_add(child(
        "a",
        "root",
        false,
        PodGroupPolicy::Gang { min_count: 2 },
    ));
    s.on_pod_group_add(child(
        "b",
        "root",
        false,
        PodGroupPolicy::Gang { min_count: 3 },
    ));
    for p in ["a0", "a1"] {
        s.on_pod_add(pod(p, Some("a")));
    }
    for p in ["b0", "b1", "b2"] {
        s.on_pod_add(pod(p, Some("b")));
    }
    drain(&s);
    assert_eq!(bound(&c), vec!["a0", "a1"]);
    assert_eq!(s.queue.counts().total(), 3);
}

/// Members wait (`incomplete`) until every ancestor exists, then join the tree.
#[test]
fn members_wait_for_their_composite_ancestors() {
    let (s, c) = setup_with(composite_features(), 2);
    s.on_pod_group_add(child("a", "mid", false, PodGroupPolicy::Basic));
    s.on_pod_add(pod("a0", Some("a")));
    drain(&s);
    assert_eq!(s.queue.counts().pod_group_incomplete, 1);
    s.on_pod_group_add(child("mid", "root", true, PodGroupPolicy::Basic));
    drain(&s);
    assert_eq!(
        s.queue.counts().pod_group_incomplete,
        1,
        "root still unknown"
    );
    s.on_pod_group_add(composite_root("root", PodGroupPolicy::Basic));
    drain(&s);
    assert_eq!(bound(&c), vec!["a0"]);
}

/// kube's `Pop` with SchedulerPopFromBackoffQ (on by default) takes an entity from backoffQ
/// when activeQ is empty only from its `entityBackoffQ`, which holds entities with rejector
/// plugins; a pod group's own rejector set is never filled in kube v1.37.2 (PreEnqueue
/// records the gating plugin on the member pods, `SetGatingPlugin` on the group sets only
/// the gating plugin), so every group backing off is in `entityErrorBackoffQ` and waits out
/// its backoff, even one an event moved there from the gated place. The floor this sets on
/// a group that fails once (1 s) is what bounds workload_preemption's SchedulingDuration.
/// (kubernetes/kubernetes pkg/scheduler/backend/queue/active_queue.go `unlockedPop`,
/// backoff_queue.go `add`, scheduling_queue.go `runPreEnqueuePlugins`, v1.37.2.)
#[test]
fn a_group_backing_off_is_not_popped_early_even_when_nothing_else_is_ready() {
    let clock = Arc::new(VirtualClock::new());
    let (s, c) = setup_on(features(true), 1, clock.clone());
    s.on_pod_group_add(group("g", PodGroupPolicy::Gang { min_count: 3 }));
    let pods: Vec<_> = (0..3).map(|i| pod(&format!("p{i}"), Some("g"))).collect();
    for p in &pods {
        s.on_pod_add(p.clone());
    }
    // One node of 2 CPUs: the gang of three 1-CPU pods fails and backs off.
    assert_eq!(drain(&s), 1);
    let k = tidegate_engine::api::PodKey::new("ns", "p0");
    assert_eq!(s.queue.locate(&k), Some("backoff"));
    assert!(
        !s.try_schedule_one(),
        "activeQ is empty, yet the group backs off"
    );
    // Below its quorum the group is gated by GangScheduling; a new member lifts the gate and
    // moves it to backoffQ, where it still waits.
    s.on_pod_delete(&pods[2]);
    assert_eq!(s.queue.locate(&k), Some("gated"));
    s.on_pod_add(pod("p3", Some("g")));
    assert_eq!(s.queue.locate(&k), Some("backoff"));
    assert!(!s.try_schedule_one(), "no early pop for a group");
    // Its backoff (1 s, in 1 s windows) over, the flush hands it out.
    clock.advance(std::time::Duration::from_secs(2));
    assert!(s.try_schedule_one(), "tried again once its backoff ends");
    assert!(bound(&c).is_empty());
}
