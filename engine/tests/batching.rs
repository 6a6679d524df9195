//! Opportunistic batching and the nominated node tried first, through the real scheduler.
//! Cases after kube-scheduler's `pkg/scheduler/framework/runtime/batch_test.go` (TestBatchBasic:
//! same signature gets a hint, a different signature or a nominated pod does not, a failed pod
//! breaks the chain, the batch is left to the next pod; the rescore cases) and the
//! `test/integration/scheduler_perf/batching/performance-config.yaml` scenarios
//! (HostPortConflict, ResourceSaturation) in kubernetes/kubernetes, v1.37.2.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;
use tidegate_engine::Registry;
use tidegate_engine::api::Resource;
use tidegate_engine::api::{HostPort, Labels, Node, Pod, PodSpecInfo, Sym};
use tidegate_engine::clock::VirtualClock;
use tidegate_engine::{ClusterClient, Profile};
use tidegate_engine::{Scheduler, SchedulerConfig};

#[derive(Default)]
struct Client {
    binds: Mutex<Vec<(String, Sym)>>,
    messages: Mutex<Vec<String>>,
}

impl ClusterClient for Client {
    fn bind(&self, pod: &Pod, node: Sym) -> Result<(), String> {
        self.binds.lock().push((pod.name.to_string(), node));
        Ok(())
    }
    fn pod_exists_unassigned(&self, _pod: &Pod) -> bool {
        true
    }
    fn set_unschedulable(&self, _pod: &Pod, _reason: &str, message: &str) {
        self.messages.lock().push(message.to_string());
    }
}

/// The batching/ folder's profile: PodTopologySpread without default constraints, so that
/// pods can be signed (kube's default profile's system defaults make every pod unsignable).
fn no_default_spreading() -> Profile {
    let mut p = Profile::default_profile();
    p.plugin_args.insert(
        "PodTopologySpread".into(),
        serde_json::json!({"defaultingType": "List", "defaultConstraints": []}),
    );
    p
}

fn setup(
    profile: Profile,
    batching: bool,
    nodes: usize,
    cpu: i64,
) -> (Arc<Scheduler>, Arc<Client>) {
    let cfg = SchedulerConfig {
        profiles: vec![profile],
        parallelism: 1,
        opportunistic_batching: batching,
        ..SchedulerConfig::default()
    };
    setup_cfg(cfg, nodes, cpu)
}

fn setup_cfg(cfg: SchedulerConfig, nodes: usize, cpu: i64) -> (Arc<Scheduler>, Arc<Client>) {
    let client = Arc::new(Client::default());
    let sched = Scheduler::new(
        cfg,
        &Registry::in_tree(),
        client.clone(),
        Some(Arc::new(VirtualClock::new())),
    )
    .unwrap();
    for i in 0..nodes {
        let mut n = Node::named(&format!("node-{i}"));
        n.allocatable = Resource {
            milli_cpu: cpu,
            memory: 16 << 30,
            allowed_pod_number: 110,
            ..Resource::default()
        };
        sched.on_node_add(Arc::new(n));
    }
    (sched, client)
}

fn pod(name: &str, cpu: i64, host_port: Option<i32>, labels: &[(&str, &str)]) -> Arc<Pod> {
    let req = Resource {
        milli_cpu: cpu,
        memory: 100 << 20,
        ..Resource::default()
    };
    let spec = PodSpecInfo {
        scheduler_name: Sym::new("default-scheduler"),
        requests: req.clone(),
        non_zero_requests: req,
        host_ports: host_port
            .map(|port| HostPort {
                ip: Sym::new("0.0.0.0"),
                protocol: Sym::new("TCP"),
                port,
            })
            .into_iter()
            .collect(),
        ..PodSpecInfo::default()
    };
    let mut p = Pod::new("ns", name, Arc::new(spec));
    p.labels = Arc::new(Labels::from_pairs(labels.iter().copied()));
    Arc::new(p)
}

/// `n` pods `p0`, `p1`, … of one shape.
fn numbered(n: usize, cpu: i64, host_port: Option<i32>, labels: &[(&str, &str)]) -> Vec<Arc<Pod>> {
    (0..n)
        .map(|i| pod(&format!("p{i}"), cpu, host_port, labels))
        .collect()
}

/// Adds the pods, then schedules until the queue is empty.
fn schedule_all(s: &Scheduler, pods: &[Arc<Pod>]) {
    for p in pods {
        s.on_pod_add(p.clone());
    }
    while let Some(q) = s.queue.try_pop() {
        s.schedule_popped(q);
    }
}

fn counters(s: &Scheduler) -> BTreeMap<(String, String), u64> {
    s.metrics()
        .batch_counters()
        .into_iter()
        .map(|(m, _, l, n)| ((m.to_string(), l.map_or("", |(_, v)| v).to_string()), n))
        .collect()
}

fn count(s: &Scheduler, metric: &str, label: &str) -> u64 {
    counters(s)
        .get(&(metric.to_string(), label.to_string()))
        .copied()
        .unwrap_or(0)
}

fn per_node(c: &Client) -> BTreeMap<Sym, usize> {
    let mut m = BTreeMap::new();
    for (_, n) in c.binds.lock().iter() {
        *m.entry(*n).or_default() += 1;
    }
    m
}

#[test]
fn host_port_conflict_batches_every_pod_after_the_first() {
    // HostPortConflict: one pod per node; pod N's node is infeasible for pod N+1, so each
    // later pod takes the next cached node on a hint.
    let (s, c) = setup(no_default_spreading(), true, 20, 4000);
    let pods = numbered(20, 100, Some(80), &[("signature", "a")]);
    schedule_all(&s, &pods);
    assert_eq!(c.binds.lock().len(), 20);
    assert!(per_node(&c).values().all(|&n| n == 1), "{:?}", per_node(&c));
    assert_eq!(s.batched_pods(), 19);
    assert_eq!(count(&s, "scheduler_batch_attempts_total", "hint_used"), 19);
    assert_eq!(count(&s, "scheduler_batch_attempts_total", "no_hint"), 1);
    // The last chosen node failed Filter again each time (its port is taken): no rescore.
    assert_eq!(count(&s, "scheduler_batch_rescore_attempts_total", ""), 0);
}

#[test]
fn resource_saturation_batches_and_never_overcommits() {
    // ResourceSaturation: 3 CPU pods on 4 CPU nodes, one per node.
    let (s, c) = setup(no_default_spreading(), true, 10, 4000);
    let pods = numbered(10, 3000, None, &[]);
    schedule_all(&s, &pods);
    assert_eq!(c.binds.lock().len(), 10);
    assert!(per_node(&c).values().all(|&n| n == 1));
    assert_eq!(s.batched_pods(), 9);
}

#[test]
fn a_last_node_still_feasible_is_rescored_and_competes_again() {
    // Small pods: the last chosen node still fits the next pod, so it is filtered and scored
    // again and goes back among the candidates ("rescored node wins/loses"); no node is ever
    // given more than it has.
    let (s, c) = setup(no_default_spreading(), true, 4, 1000);
    let pods = numbered(12, 300, None, &[]);
    schedule_all(&s, &pods);
    assert_eq!(c.binds.lock().len(), 12);
    assert!(per_node(&c).values().all(|&n| n <= 3), "{:?}", per_node(&c));
    assert!(count(&s, "scheduler_batch_rescore_attempts_total", "") > 0);
    assert!(s.batched_pods() > 0);
    // Least-allocated scoring with fresh scores spreads the pods: 3 per node.
    assert!(per_node(&c).values().all(|&n| n == 3), "{:?}", per_node(&c));
}

#[test]
fn pods_of_different_signatures_get_no_hint() {
    // "a second pod with a different signature doesn't get a hint": InterPodAffinity signs
    // the labels, which alternate.
    let (s, c) = setup(no_default_spreading(), true, 10, 4000);
    let pods: Vec<_> = (0..10)
        .map(|i| {
            let v = if i % 2 == 0 { "a" } else { "b" };
            pod(&format!("p{i}"), 100, Some(80), &[("signature", v)])
        })
        .collect();
    schedule_all(&s, &pods);
    assert_eq!(c.binds.lock().len(), 10);
    assert_eq!(s.batched_pods(), 0);
    assert_eq!(
        count(
            &s,
            "scheduler_batch_cache_flushed_total",
            "pod_incompatible"
        ),
        9
    );
}

#[test]
fn kubes_default_profile_signs_no_pod() {
    // PodTopologySpread's system default constraints make every pod unsignable.
    let (s, c) = setup(Profile::default_profile(), true, 10, 4000);
    let pods = numbered(10, 100, Some(80), &[]);
    schedule_all(&s, &pods);
    assert_eq!(c.binds.lock().len(), 10);
    assert_eq!(s.batched_pods(), 0);
    // As in kube, the profile still asks for hints and stores results: every attempt is
    // counted without a hint, and each store is dropped as the pod has no signature (the
    // last one because no other node was left).
    assert_eq!(count(&s, "scheduler_batch_attempts_total", "no_hint"), 10);
    assert_eq!(count(&s, "scheduler_batch_attempts_total", "hint_used"), 0);
    assert_eq!(
        count(
            &s,
            "scheduler_batch_cache_flushed_total",
            "pod_not_batchable"
        ),
        9
    );
    assert_eq!(
        count(&s, "scheduler_batch_cache_flushed_total", "empty_list"),
        1
    );
}

#[test]
fn the_gate_off_batches_nothing() {
    let (s, c) = setup(no_default_spreading(), false, 10, 4000);
    let pods = numbered(10, 100, Some(80), &[]);
    schedule_all(&s, &pods);
    assert_eq!(c.binds.lock().len(), 10);
    assert_eq!(s.batched_pods(), 0);
}

#[test]
fn resize_preemption_turns_signatures_off() {
    // kube's default profile under InPlacePodVerticalScalingSchedulerPreemption runs
    // DeferredPodScheduling, which does not sign: no pod is batched.
    let (s, c) = setup_cfg(
        SchedulerConfig {
            profiles: vec![no_default_spreading()],
            parallelism: 1,
            opportunistic_batching: true,
            resize_preemption: true,
            ..SchedulerConfig::default()
        },
        10,
        4000,
    );
    let pods = numbered(10, 100, Some(80), &[]);
    schedule_all(&s, &pods);
    assert_eq!(c.binds.lock().len(), 10);
    assert_eq!(s.batched_pods(), 0);
    assert_eq!(
        count(
            &s,
            "scheduler_batch_cache_flushed_total",
            "pod_not_batchable"
        ),
        9
    );
}

#[test]
fn a_failed_pod_breaks_the_chain() {
    // "pod doesn't get hint if previous pod didn't scheduled": a pod that fits nowhere
    // between two pods of one signature; the third pod's cycle does not follow a stored one.
    let (s, c) = setup(no_default_spreading(), true, 3, 4000);
    let pods = [
        pod("p0", 100, Some(80), &[]),
        pod("huge", 100_000, Some(80), &[]),
        pod("p1", 100, Some(80), &[]),
    ];
    for p in &pods {
        s.on_pod_add(p.clone());
        let q = s.queue.try_pop().expect("in activeQ");
        s.schedule_popped(q);
    }
    assert_eq!(c.binds.lock().len(), 2);
    assert_eq!(s.batched_pods(), 0);
    assert_eq!(
        count(&s, "scheduler_batch_cache_flushed_total", "pod_skipped"),
        1
    );
}

#[test]
fn a_nominated_pod_gets_no_hint_and_goes_to_its_nominated_node() {
    // "a second pod with a nominated node does not get a hint", and kube's
    // evaluateNominatedNode: the nominated node alone through Filter, chosen when it passes,
    // though an emptier node would score higher.
    let (s, c) = setup(no_default_spreading(), true, 3, 4000);
    schedule_all(&s, &[pod("p0", 100, Some(80), &[])]);
    let first = c.binds.lock()[0].1;
    // The busiest node that fits: the one p0 took has its port taken, so pick another and
    // load it so that it scores lowest.
    let target = (0..3)
        .map(|i| Sym::new(&format!("node-{i}")))
        .find(|&n| n != first)
        .unwrap();
    let mut load = (*pod("load", 3000, None, &[])).clone();
    load.node_name = Some(target);
    s.on_pod_add(Arc::new(load));
    let mut nominated = (*pod("p1", 100, Some(80), &[])).clone();
    nominated.nominated_node_name = Some(target);
    schedule_all(&s, &[Arc::new(nominated)]);
    assert_eq!(c.binds.lock()[1], ("p1".to_string(), target));
    assert_eq!(
        count(&s, "scheduler_batch_cache_flushed_total", "pod_nominated"),
        1
    );
    assert_eq!(s.batched_pods(), 0);
}

#[test]
fn a_nominated_node_is_tried_first_without_batching_too() {
    // kube v1.37.2's findNodesThatFitPod tries status.nominatedNodeName first whatever the
    // gates say.
    let (s, c) = setup(Profile::default_profile(), false, 3, 4000);
    let mut load = (*pod("load", 3000, None, &[])).clone();
    load.node_name = Some(Sym::new("node-1"));
    s.on_pod_add(Arc::new(load));
    let mut p = (*pod("p", 100, None, &[])).clone();
    p.nominated_node_name = Some(Sym::new("node-1"));
    schedule_all(&s, &[Arc::new(p)]);
    assert_eq!(*c.binds.lock(), vec![("p".to_string(), Sym::new("node-1"))]);
    // A nominated node that no longer fits: every node is filtered and scored.
    let mut q = (*pod("q", 2000, None, &[])).clone();
    q.nominated_node_name = Some(Sym::new("node-1"));
    schedule_all(&s, &[Arc::new(q)]);
    assert_ne!(c.binds.lock()[1].1, Sym::new("node-1"));
}

#[test]
fn signatures_follow_what_kube_signs() {
    let (s, _) = setup(no_default_spreading(), true, 1, 4000);
    let fwk = &s.frameworks()[0];
    let a = pod("a", 100, Some(80), &[("app", "x")]);
    let b = pod("b", 100, Some(80), &[("app", "x")]);
    // Names differ, nothing else: equal.
    assert_eq!(fwk.sign_pod(&a), fwk.sign_pod(&b));
    assert!(fwk.sign_pod(&a).is_some());
    // Labels (InterPodAffinity), requests (NodeResourcesFit), host ports (NodePorts) differ.
    assert_ne!(
        fwk.sign_pod(&a),
        fwk.sign_pod(&pod("c", 100, Some(80), &[("app", "y")]))
    );
    assert_ne!(
        fwk.sign_pod(&a),
        fwk.sign_pod(&pod("c", 200, Some(80), &[("app", "x")]))
    );
    assert_ne!(
        fwk.sign_pod(&a),
        fwk.sign_pod(&pod("c", 100, Some(81), &[("app", "x")]))
    );
    // Volume sources other than ConfigMap and Secret are signed.
    let mut v = (*a.spec).clone();
    v.volume_sources = vec![Arc::from(r#"{"emptyDir":{}}"#)];
    let with_volume = Pod::new("ns", "v", Arc::new(v));
    let mut with_volume = with_volume;
    with_volume.labels = a.labels.clone();
    assert_ne!(fwk.sign_pod(&a), fwk.sign_pod(&with_volume));
    // A pod with spread constraints is refused by PodTopologySpread.
    let mut spread = (*a.spec).clone();
    spread.topology_spread_constraints = vec![tidegate_engine::api::TopologySpreadConstraint {
        max_skew: 1,
        topology_key: Sym::new("zone"),
        when_unsatisfiable: tidegate_engine::api::UnsatisfiableConstraintAction::DoNotSchedule,
        label_selector: None,
        min_domains: None,
        node_affinity_policy: tidegate_engine::api::NodeInclusionPolicy::Honor,
        node_taints_policy: tidegate_engine::api::NodeInclusionPolicy::Ignore,
        match_label_keys: vec![],
    }];
    assert_eq!(fwk.sign_pod(&Pod::new("ns", "s", Arc::new(spread))), None);
    // Any podAffinity or podAntiAffinity struct, even without terms, is refused by
    // InterPodAffinity.
    let mut empty_affinity = (*a.spec).clone();
    empty_affinity.pod_affinity_present = true;
    assert_eq!(
        fwk.sign_pod(&Pod::new("ns", "e", Arc::new(empty_affinity))),
        None
    );
    // kube's default profile signs nothing.
    let (d, _) = setup(Profile::default_profile(), true, 1, 4000);
    assert_eq!(d.frameworks()[0].sign_pod(&a), None);
}

#[test]
fn nodes_outside_a_prefilter_subset_name_the_plugin_that_narrowed_them() {
    // kube's findNodesThatFitPod: the nodes a PreFilterResult leaves out get "node(s) didn't
    // satisfy plugin(s) [<plugins with nodes>]", and those plugins join the diagnosis'
    // unschedulable plugins (pkg/scheduler/schedule_one.go, framework/runtime/framework.go
    // RunPreFilterPlugins, kubernetes/kubernetes v1.37.2).
    use tidegate_engine::api::{NodeSelector, NodeSelectorTerm, Operator, Requirement};
    let (s, c) = setup(Profile::default_profile(), true, 3, 1000);
    let mut spec = (*pod("pinned", 2000, None, &[]).spec).clone();
    spec.required_node_affinity = Some(NodeSelector {
        terms: vec![NodeSelectorTerm {
            match_expressions: vec![],
            match_fields: vec![Requirement {
                key: Sym::new("metadata.name"),
                op: Operator::In,
                values: vec![Sym::new("node-0")],
                int_value: 0,
            }],
        }],
    });
    let p = Arc::new(Pod::new("ns", "pinned", Arc::new(spec)));
    schedule_all(&s, std::slice::from_ref(&p));
    let info = s.queue.pending_info(&p.key).expect("pending");
    let mut plugins = info.unschedulable_plugins.clone();
    plugins.sort_unstable();
    assert_eq!(plugins, vec!["NodeAffinity", "NodeResourcesFit"]);
    assert_eq!(
        c.messages.lock().first().map(String::as_str),
        Some(
            "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) \
             [NodeAffinity]. preemption: 0/3 nodes are available: 1 No preemption victims \
             found for incoming pod, 2 Preemption is not helpful for scheduling."
        )
    );
}
