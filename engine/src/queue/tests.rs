//! Queue behaviour tests. Cases follow kube-scheduler's
//! `pkg/scheduler/backend/queue/scheduling_queue_test.go` (TestPriorityQueue_Add,
//! TestPriorityQueue_Pop, TestPriorityQueue_Update, TestPriorityQueue_Delete,
//! TestPriorityQueue_MoveAllToActiveOrBackoffQueue, TestBackOffFlow,
//! TestPriorityQueue_flushUnschedulablePodsLeftover, TestPodSchedulingGates...) re-expressed for
//! this API.

use super::*;
use crate::api::{PodSpecInfo, Sym};
use crate::clock::{Clock, VirtualClock};
use crate::framework::events::{ActionType, ClusterEvent, EventResource};
use crate::framework::interface::{Plugin, PreEnqueuePlugin};
use crate::framework::status::{Code, Status};
use crate::plugins::priority_sort::PrioritySort;
use crate::plugins::scheduling_gates::SchedulingGates;
use std::sync::Mutex as StdMutex;

fn pod(name: &str, priority: i32, gates: &[&str]) -> Arc<Pod> {
    let spec = PodSpecInfo {
        priority,
        scheduler_name: Sym::new("default-scheduler"),
        scheduling_gates: gates.iter().map(|g| Arc::from(*g)).collect(),
        ..Default::default()
    };
    Arc::new(Pod::new("ns", name, Arc::new(spec)))
}

/// A PreEnqueue plugin that rejects pods whose name is in its deny list and records calls.
struct Recorder {
    name: &'static str,
    deny: StdMutex<Vec<String>>,
    calls: Arc<StdMutex<Vec<&'static str>>>,
}

impl Plugin for Recorder {
    fn name(&self) -> &'static str {
        self.name
    }
}

impl PreEnqueuePlugin for Recorder {
    fn pre_enqueue(&self, pod: &Pod) -> Status {
        self.calls.lock().unwrap().push(self.name);
        if self.deny.lock().unwrap().iter().any(|n| **n == *pod.name) {
            Status::new(Code::Unschedulable, "denied")
        } else {
            Status::success()
        }
    }
}

struct Fixture {
    q: SchedulingQueue,
    clock: Arc<VirtualClock>,
    metrics: Arc<Metrics>,
}

fn fixture_with(pre_enqueue: Vec<Arc<dyn PreEnqueuePlugin>>) -> Fixture {
    fixture_cfg(pre_enqueue, QueueConfig::default())
}

fn fixture_cfg(pre_enqueue: Vec<Arc<dyn PreEnqueuePlugin>>, cfg: QueueConfig) -> Fixture {
    let clock = Arc::new(VirtualClock::new());
    let metrics = Arc::new(Metrics::new());
    let mut pe = AHashMap::new();
    pe.insert(Sym::new("default-scheduler"), pre_enqueue);
    let mut events = AHashMap::new();
    events.insert(
        "SchedulingGates",
        vec![ClusterEvent::new(
            EventResource::Pod,
            ActionType::UPDATE_POD_SCHEDULING_GATES_ELIMINATED,
        )],
    );
    events.insert(
        "NodeResourcesFit",
        vec![ClusterEvent::new(EventResource::Node, ActionType::ADD)],
    );
    let q = SchedulingQueue::new(
        Arc::new(PrioritySort),
        pe,
        events,
        clock.clone(),
        metrics.clone(),
        cfg,
    );
    Fixture { q, clock, metrics }
}

/// `SchedulerPopFromBackoffQ` off: kube's behaviour before 1.33.
fn fixture_without_pop_from_backoff() -> Fixture {
    fixture_cfg(
        vec![Arc::new(SchedulingGates)],
        QueueConfig {
            pop_from_backoff: false,
            ..QueueConfig::default()
        },
    )
}

fn fixture() -> Fixture {
    fixture_with(vec![Arc::new(SchedulingGates)])
}

fn pop_name(q: &SchedulingQueue) -> Option<String> {
    q.try_pop().map(|p| p.pod.name.to_string())
}

#[test]
fn pops_by_priority_then_enqueue_time() {
    let f = fixture();
    f.q.add(pod("low", 1, &[]));
    f.clock.advance(Duration::from_millis(1));
    f.q.add(pod("high", 10, &[]));
    f.clock.advance(Duration::from_millis(1));
    f.q.add(pod("low2", 1, &[]));
    assert_eq!(pop_name(&f.q).as_deref(), Some("high"));
    assert_eq!(pop_name(&f.q).as_deref(), Some("low"));
    assert_eq!(pop_name(&f.q).as_deref(), Some("low2"));
    assert_eq!(pop_name(&f.q), None);
}

#[test]
fn gated_pods_are_held_apart_and_never_popped() {
    let f = fixture();
    f.q.add(pod("g", 100, &["a", "b"]));
    f.q.add(pod("p", 0, &[]));
    let c = f.q.counts();
    assert_eq!((c.active, c.gated), (1, 1));
    assert_eq!(f.q.locate(&PodKey::new("ns", "g")), Some("gated"));
    assert_eq!(pop_name(&f.q).as_deref(), Some("p"));
    assert_eq!(pop_name(&f.q), None);
    let info = f.q.pending_info(&PodKey::new("ns", "g")).unwrap();
    assert_eq!(info.gating_plugin, Some("SchedulingGates"));
    assert_eq!(info.attempts, 0);
    assert_eq!(f.metrics.unschedulable_pods(), vec![("SchedulingGates", 1)]);
    assert_eq!(
        f.q.gated_per_gate(),
        vec![(Arc::from("a"), 1), (Arc::from("b"), 1)]
    );
}

#[test]
fn removing_some_gates_keeps_the_pod_gated_and_the_last_one_moves_it() {
    let f = fixture();
    let two = pod("g", 0, &["a", "b"]);
    f.q.add(two.clone());
    let one = pod("g", 0, &["b"]);
    f.q.update(&two, one.clone());
    assert_eq!(f.q.locate(&two.key), Some("gated"));
    assert_eq!(f.q.gated_per_gate(), vec![(Arc::from("b"), 1)]);
    let none = pod("g", 0, &[]);
    f.q.update(&one, none);
    assert_eq!(f.q.locate(&two.key), Some("active"));
    let c = f.q.counts();
    assert_eq!((c.active, c.gated), (1, 0));
    let popped = f.q.try_pop().unwrap();
    assert!(popped.initial_attempt_timestamp.is_some());
    assert_eq!(popped.attempts, 1);
    // The per-plugin gauge drops when the pod is popped.
    assert_eq!(f.metrics.unschedulable_pods(), vec![("SchedulingGates", 0)]);
}

#[test]
fn ungated_pod_keeps_its_original_enqueue_time() {
    let f = fixture();
    let g = pod("early-gated", 0, &["a"]);
    f.q.add(g.clone());
    f.clock.advance(Duration::from_secs(5));
    f.q.add(pod("later", 0, &[]));
    f.q.update(&g, pod("early-gated", 0, &[]));
    // Same priority: the pod added first goes first even though it was ungated later.
    assert_eq!(pop_name(&f.q).as_deref(), Some("early-gated"));
}

#[test]
fn delete_removes_the_pod_wherever_it_is() {
    let f = fixture();
    f.q.add(pod("a", 0, &[]));
    f.q.add(pod("g", 0, &["x"]));
    f.q.delete(&PodKey::new("ns", "a"));
    f.q.delete(&PodKey::new("ns", "g"));
    assert_eq!(f.q.counts(), PendingCounts::default());
    assert_eq!(f.metrics.unschedulable_pods(), vec![("SchedulingGates", 0)]);
    // Deleted while in flight: dropped when handed back.
    f.q.add(pod("b", 0, &[]));
    let b = f.q.try_pop().unwrap();
    f.q.delete(&b.pod.key);
    f.q.add_unschedulable_if_not_present(b, 1).unwrap();
    assert_eq!(f.q.counts(), PendingCounts::default());
}

#[test]
fn pre_enqueue_runs_the_gating_plugin_first() {
    let calls = Arc::new(StdMutex::new(Vec::new()));
    let first = Arc::new(Recorder {
        name: "First",
        deny: StdMutex::new(vec![]),
        calls: calls.clone(),
    });
    let second = Arc::new(Recorder {
        name: "Second",
        deny: StdMutex::new(vec!["p".into()]),
        calls: calls.clone(),
    });
    let f = fixture_with(vec![first.clone(), second.clone()]);
    f.q.add(pod("p", 0, &[]));
    assert_eq!(*calls.lock().unwrap(), vec!["First", "Second"]);
    assert_eq!(f.q.locate(&PodKey::new("ns", "p")), Some("gated"));
    assert_eq!(
        f.q.pending_info(&PodKey::new("ns", "p"))
            .unwrap()
            .gating_plugin,
        Some("Second")
    );
    // Re-run (Activate): the plugin that gated it runs first, and it stops there.
    calls.lock().unwrap().clear();
    let mut info = f.q.pending_info(&PodKey::new("ns", "p")).unwrap();
    assert!(!f.q.run_pre_enqueue(&mut info));
    assert_eq!(*calls.lock().unwrap(), vec!["Second"]);
    // Once it passes, the others run after it.
    second.deny.lock().unwrap().clear();
    calls.lock().unwrap().clear();
    assert!(f.q.run_pre_enqueue(&mut info));
    assert_eq!(*calls.lock().unwrap(), vec!["Second", "First"]);
    assert_eq!(info.gating_plugin, None);
}

#[test]
fn scheduling_gates_message_is_kubes() {
    let st = SchedulingGates.pre_enqueue(&pod("x", 0, &["a", "b"]));
    assert_eq!(st.code(), Code::UnschedulableAndUnresolvable);
    assert_eq!(st.message(), "waiting for scheduling gates: [a b]");
    assert!(SchedulingGates.pre_enqueue(&pod("y", 0, &[])).is_success());
}

#[test]
fn backoff_doubles_from_1s_to_10s() {
    let f = fixture();
    let mut q = QueuedPodInfo::new(pod("a", 0, &[]), Duration::ZERO);
    let want = [0, 1, 2, 4, 8, 10, 10];
    for (attempts, secs) in want.iter().enumerate() {
        q.attempts = attempts as u32;
        assert_eq!(f.q.backoff_duration(&q), Duration::from_secs(*secs));
    }
}

#[test]
fn failed_pods_wait_in_backoff_and_return_after_the_flush() {
    let f = fixture_without_pop_from_backoff();
    f.q.add(pod("a", 0, &[]));
    let a = f.q.try_pop().unwrap();
    // An error (no rejector plugins) goes to backoff; attempts = 1 -> 1 s.
    f.q.add_unschedulable_if_not_present(a, f.q.scheduling_cycle())
        .unwrap();
    assert_eq!(f.q.counts().backoff, 1);
    f.clock.advance(Duration::from_millis(900));
    assert!(f.q.try_pop().is_none());
    f.clock.advance(Duration::from_millis(200));
    let again = f.q.try_pop().expect("backoff done after the 1 s flush");
    assert_eq!(again.attempts, 2);
    assert_eq!(again.consecutive_errors_count, 1);
}

#[test]
fn unschedulable_pods_move_only_on_events_their_rejectors_registered() {
    let f = fixture();
    f.q.add(pod("a", 0, &[]));
    let mut a = f.q.try_pop().unwrap();
    a.unschedulable_plugins = vec!["NodeResourcesFit"];
    f.q.add_unschedulable_if_not_present(a, f.q.scheduling_cycle())
        .unwrap();
    assert_eq!(f.q.counts().unschedulable, 1);
    // An event nobody registered does nothing.
    f.q.move_all_to_active_or_backoff(ClusterEvent::new(
        EventResource::AssignedPod,
        ActionType::ADD,
    ));
    assert_eq!(f.q.counts().unschedulable, 1);
    // NodeAdd helps; the pod is still backing off (attempts 1, 1 s), so it goes to backoffQ.
    f.q.move_all_to_active_or_backoff(ClusterEvent::new(EventResource::Node, ActionType::ADD));
    let c = f.q.counts();
    assert_eq!((c.unschedulable, c.backoff), (0, 1));
}

#[test]
fn a_move_request_during_the_cycle_sends_the_pod_to_backoff() {
    let f = fixture();
    f.q.add(pod("a", 0, &[]));
    let mut a = f.q.try_pop().unwrap();
    let cycle = f.q.scheduling_cycle();
    f.q.move_all_to_active_or_backoff(ClusterEvent::new(EventResource::Node, ActionType::ADD));
    a.unschedulable_plugins = vec!["NodeResourcesFit"];
    f.q.add_unschedulable_if_not_present(a, cycle).unwrap();
    assert_eq!(f.q.counts().backoff, 1);
}

#[test]
fn leftover_flush_moves_stale_unschedulable_pods_but_never_gated_ones() {
    let f = fixture();
    f.q.add(pod("g", 0, &["hold"]));
    f.q.add(pod("a", 0, &[]));
    let mut a = f.q.try_pop().unwrap();
    a.unschedulable_plugins = vec!["NodeResourcesFit"];
    f.q.add_unschedulable_if_not_present(a, f.q.scheduling_cycle())
        .unwrap();
    f.clock.advance(Duration::from_secs(301));
    f.q.flush();
    let c = f.q.counts();
    assert_eq!((c.unschedulable, c.gated), (0, 1));
    assert_eq!(c.active + c.backoff, 1);
}

#[test]
fn activate_reruns_pre_enqueue() {
    let f = fixture();
    f.q.add(pod("a", 0, &[]));
    let mut a = f.q.try_pop().unwrap();
    a.unschedulable_plugins = vec!["NodeResourcesFit"];
    f.q.add_unschedulable_if_not_present(a, f.q.scheduling_cycle())
        .unwrap();
    f.q.activate(&[PodKey::new("ns", "a")]);
    assert_eq!(f.q.counts().active, 1);
}

#[test]
fn close_wakes_a_blocked_pop() {
    let f = Arc::new(fixture());
    let f2 = f.clone();
    let t = std::thread::spawn(move || f2.q.pop().is_none());
    std::thread::sleep(Duration::from_millis(20));
    f.q.close();
    assert!(t.join().unwrap());
    let _ = f.clock.now();
}

#[test]
fn errors_and_rejections_back_off_in_separate_heaps() {
    let f = fixture_without_pop_from_backoff();
    f.q.add(pod("err", 0, &[]));
    f.q.add(pod("rej", 0, &[]));
    let e = f.q.try_pop().unwrap();
    let mut r = f.q.try_pop().unwrap();
    let cycle = f.q.scheduling_cycle();
    f.q.add_unschedulable_if_not_present(e, cycle).unwrap();
    // A move request during the cycle sends the rejected pod to backoff too.
    f.q.move_all_to_active_or_backoff(ClusterEvent::new(EventResource::Node, ActionType::ADD));
    r.unschedulable_plugins = vec!["NodeResourcesFit"];
    f.q.add_unschedulable_if_not_present(r, cycle).unwrap();
    assert_eq!(f.q.backoff_lens(), (1, 1));
    f.clock.advance(Duration::from_millis(1100));
    let mut names = vec![pop_name(&f.q).unwrap(), pop_name(&f.q).unwrap()];
    names.sort();
    assert_eq!(names, vec!["err", "rej"]);
}

#[test]
fn gate_wait_is_measured_from_creation_to_the_last_gate() {
    let f = fixture();
    let g = pod("g", 0, &["a", "b"]);
    f.q.add(g.clone());
    f.clock.advance(Duration::from_secs(3));
    let one = pod("g", 0, &["b"]);
    f.q.update(&g, one.clone());
    f.clock.advance(Duration::from_secs(4));
    f.q.update(&one, pod("g", 0, &[]));
    let h = f
        .metrics
        .histograms()
        .into_iter()
        .find(|h| h.series == Series::GateWait)
        .expect("one sample");
    assert_eq!(h.hist.len(), 1);
    assert!(
        (h.exact_quantile(0.5) - 7.0).abs() < 0.01,
        "{}",
        h.exact_quantile(0.5)
    );
}

// ---- QueueingHints ---------------------------------------------------------------------------

/// A plugin whose hint answers QueueSkip unless the event's node is named "helpful".
struct Picky;

impl crate::framework::interface::EnqueueExtensions for Picky {
    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![
            ClusterEvent::new(EventResource::Node, ActionType::ADD),
            ClusterEvent::new(EventResource::Pod, ActionType::UPDATE_POD_LABEL),
            ClusterEvent::new(EventResource::PersistentVolume, ActionType::ADD),
        ]
    }
    fn queueing_hint(
        &self,
        event: &ClusterEvent,
        _pod: &Pod,
        _old: &crate::framework::events::EventObject,
        new: &crate::framework::events::EventObject,
    ) -> Result<crate::framework::events::QueueingHint, String> {
        use crate::framework::events::{EventObject, QueueingHint};
        Ok(match new {
            EventObject::Node(n) if &*n.name.as_arc() == "helpful" => QueueingHint::Queue,
            EventObject::Object(o) if o.downcast_ref::<&str>() == Some(&"helpful") => {
                QueueingHint::Queue
            }
            _ if event.action == ActionType::UPDATE_POD_LABEL => QueueingHint::Queue,
            _ => QueueingHint::QueueSkip,
        })
    }
}

fn hinted() -> Fixture {
    let clock = Arc::new(VirtualClock::new());
    let metrics = Arc::new(Metrics::new());
    let mut pe = AHashMap::new();
    pe.insert(
        Sym::new("default-scheduler"),
        vec![Arc::new(SchedulingGates) as Arc<dyn PreEnqueuePlugin>],
    );
    let picky = Arc::new(Picky);
    let mut events = AHashMap::new();
    events.insert(
        "Picky",
        crate::framework::interface::EnqueueExtensions::events_to_register(&*picky),
    );
    let mut hints: AHashMap<&'static str, Arc<dyn crate::framework::interface::EnqueueExtensions>> =
        AHashMap::new();
    hints.insert("Picky", picky);
    let q = SchedulingQueue::new(
        Arc::new(PrioritySort),
        pe,
        events,
        clock.clone(),
        metrics.clone(),
        QueueConfig::default(),
    )
    .with_queueing_hints(hints);
    Fixture { q, clock, metrics }
}

fn node(name: &str) -> crate::framework::events::EventObject {
    crate::framework::events::EventObject::Node(Arc::new(crate::api::Node {
        name: Sym::new(name),
        labels: Arc::default(),
        taints: Arc::new([]),
        unschedulable: false,
        allocatable: Default::default(),
        ..Default::default()
    }))
}

fn park(f: &Fixture, name: &str, plugins: Vec<&'static str>, pending: Vec<&'static str>) {
    f.q.add(pod(name, 0, &[]));
    let mut p = f.q.try_pop().unwrap();
    p.unschedulable_plugins = plugins;
    p.pending_plugins = pending;
    f.q.add_unschedulable_if_not_present(p, f.q.scheduling_cycle())
        .unwrap();
}

#[test]
fn hints_decide_which_events_requeue() {
    use crate::framework::events::EventObject;
    let f = hinted();
    park(&f, "a", vec!["Picky"], vec![]);
    assert_eq!(f.q.counts().unschedulable, 1);
    let node_add = ClusterEvent::new(EventResource::Node, ActionType::ADD);
    f.q.on_cluster_event(node_add, EventObject::None, node("useless"));
    assert_eq!(
        f.q.counts().unschedulable,
        1,
        "QueueSkip leaves the pod parked"
    );
    f.q.on_cluster_event(node_add, EventObject::None, node("helpful"));
    assert_eq!(
        f.q.counts().backoff,
        1,
        "Queue: after backoff, still backing off"
    );
    let timed: Vec<_> = f
        .metrics
        .histograms()
        .into_iter()
        .filter(|h| matches!(h.series, Series::QueueingHint("Picky", ..)))
        .collect();
    assert_eq!(
        timed.iter().map(|h| h.hist.len()).sum::<u64>(),
        2,
        "every hint call is timed"
    );
}

/// Events of the kinds only plugins read reach the pods only through a plugin that
/// registered the resource and action itself (kube starts no informer otherwise, not even for
/// a wildcard registration): then the hint sees the object and decides.
#[test]
fn informer_events_reach_only_the_resources_plugins_registered() {
    use crate::framework::events::{ApiObject, EventObject};
    let mut f = hinted();
    let mut events = AHashMap::new();
    events.insert(
        "Picky",
        crate::framework::interface::EnqueueExtensions::events_to_register(&Picky),
    );
    events.insert(
        "Everything",
        vec![ClusterEvent::new(EventResource::Wildcard, ActionType::ALL)],
    );
    let mut hints: AHashMap<&'static str, Arc<dyn crate::framework::interface::EnqueueExtensions>> =
        AHashMap::new();
    hints.insert("Picky", Arc::new(Picky));
    f.q = SchedulingQueue::new(
        Arc::new(PrioritySort),
        AHashMap::new(),
        events,
        f.clock.clone(),
        f.metrics.clone(),
        QueueConfig::default(),
    )
    .with_queueing_hints(hints);
    park(&f, "picky", vec!["Picky"], vec![]);
    park(&f, "any", vec!["Everything"], vec![]);
    let obj = |s: &'static str| EventObject::Object(ApiObject(Arc::new(s)));
    let ev = |r, a| ClusterEvent::new(r, a);
    f.q.on_informer_event(
        ev(EventResource::PersistentVolumeClaim, ActionType::ADD),
        EventObject::None,
        obj("helpful"),
    );
    f.q.on_informer_event(
        ev(EventResource::PersistentVolume, ActionType::DELETE),
        obj("helpful"),
        EventObject::None,
    );
    assert_eq!(f.q.counts().unschedulable, 2, "no informer for these");
    let pv_add = ev(EventResource::PersistentVolume, ActionType::ADD);
    f.q.on_informer_event(pv_add, EventObject::None, obj("useless"));
    assert_eq!(
        f.q.counts().unschedulable,
        1,
        "Picky's hint skipped; the wildcard registration took it"
    );
    f.q.on_informer_event(pv_add, EventObject::None, obj("helpful"));
    assert_eq!(f.q.counts().unschedulable, 0, "the hint asked for it");
    assert_eq!(pv_add.label(), "PersistentVolumeAdd");
    assert_eq!(
        ev(EventResource::CSINode, ActionType::UPDATE).label(),
        "storage.k8s.io/CSINodeUpdate"
    );
}

#[test]
fn a_pending_plugin_queue_requeues_immediately() {
    use crate::framework::events::EventObject;
    let f = hinted();
    park(&f, "a", vec![], vec!["Picky"]);
    assert_eq!(f.q.counts().unschedulable, 1);
    f.q.on_cluster_event(
        ClusterEvent::new(EventResource::Node, ActionType::ADD),
        EventObject::None,
        node("helpful"),
    );
    assert_eq!(f.q.counts().active, 1, "Pending + Queue skips the backoff");
}

#[test]
fn events_seen_in_flight_are_replayed_when_the_pod_comes_back() {
    use crate::framework::events::EventObject;
    let f = hinted();
    f.q.add(pod("a", 0, &[]));
    let mut p = f.q.try_pop().unwrap();
    let node_add = ClusterEvent::new(EventResource::Node, ActionType::ADD);
    f.q.on_cluster_event(node_add, EventObject::None, node("helpful"));
    assert_eq!(f.q.in_flight_events(), 2, "marker + event");
    p.unschedulable_plugins = vec!["Picky"];
    f.q.add_unschedulable_if_not_present(p, f.q.scheduling_cycle())
        .unwrap();
    assert_eq!(
        f.q.counts().backoff,
        1,
        "the helpful NodeAdd during the cycle counts"
    );
    assert_eq!(
        f.q.in_flight_events(),
        0,
        "nothing left once no pod is in flight"
    );
    // An unhelpful event during the cycle: parked.
    f.clock.advance(Duration::from_secs(2));
    let mut p = f.q.try_pop().unwrap();
    f.q.on_cluster_event(node_add, EventObject::None, node("useless"));
    p.unschedulable_plugins = vec!["Picky"];
    f.q.add_unschedulable_if_not_present(p, f.q.scheduling_cycle())
        .unwrap();
    assert_eq!(f.q.counts().unschedulable, 1);
    // done() also prunes.
    f.q.add(pod("b", 0, &[]));
    let b = f.q.try_pop().unwrap();
    f.q.on_cluster_event(node_add, EventObject::None, node("x"));
    f.q.done(&b.pod.key);
    assert_eq!(f.q.in_flight_events(), 0);
}

#[test]
fn a_label_update_requeues_an_unschedulable_pod_whose_rejector_registered_it() {
    let f = hinted();
    park(&f, "a", vec!["Picky"], vec![]);
    let old = pod("a", 0, &[]);
    // A generic update (nothing the plugins registered): stays.
    f.q.update(&old, pod("a", 0, &[]));
    assert_eq!(f.q.counts().unschedulable, 1);
    let mut relabelled = (*pod("a", 0, &[])).clone();
    relabelled.labels = Arc::new(crate::api::Labels::from_pairs([("tier", "web")]));
    f.q.update(&old, Arc::new(relabelled));
    assert_eq!(f.q.counts().unschedulable, 0);
    assert_eq!(f.q.counts().backoff, 1);
}

/// kube's `AssignedPodAdded` pre-filter (TestPriorityQueue_AssignedPodAdded,
/// `pkg/scheduler/backend/queue/scheduling_queue_test.go`): only the pods with a required
/// affinity term that selects the added pod, and the pods PodTopologySpread rejected in its
/// namespace, are considered; of those, only the ones whose rejector registered the event move.
#[test]
fn assigned_pod_add_moves_only_the_affinity_and_spread_candidates() {
    use crate::api::labels::{LabelSelector, Labels, Operator, Requirement};
    use crate::api::{PodAffinity, PodAffinityTerm};
    let clock = Arc::new(VirtualClock::new());
    let metrics = Arc::new(Metrics::new());
    let mut pe: AHashMap<Sym, Vec<Arc<dyn PreEnqueuePlugin>>> = AHashMap::new();
    pe.insert(
        Sym::new("default-scheduler"),
        vec![Arc::new(SchedulingGates)],
    );
    let add = ClusterEvent::new(EventResource::AssignedPod, ActionType::ADD);
    let mut events = AHashMap::new();
    events.insert("InterPodAffinity", vec![add]);
    events.insert("PodTopologySpread", vec![add]);
    events.insert(
        "NodeResourcesFit",
        vec![ClusterEvent::new(EventResource::Node, ActionType::ADD)],
    );
    let q = SchedulingQueue::new(
        Arc::new(PrioritySort),
        pe,
        events,
        clock.clone(),
        metrics,
        QueueConfig::default(),
    );
    let wants = |name: &str, value: &str| {
        let spec = PodSpecInfo {
            scheduler_name: Sym::new("default-scheduler"),
            pod_affinity: PodAffinity {
                required_affinity: vec![PodAffinityTerm {
                    label_selector: Some(LabelSelector {
                        requirements: vec![Requirement {
                            key: Sym::new("app"),
                            op: Operator::In,
                            values: vec![Sym::new(value)],
                            int_value: 0,
                        }],
                    }),
                    namespaces: vec![],
                    namespace_selector: None,
                    topology_key: Sym::new("zone"),
                    match_label_keys: vec![],
                    mismatch_label_keys: vec![],
                }],
                ..PodAffinity::default()
            },
            ..Default::default()
        };
        Arc::new(Pod::new("ns", name, Arc::new(spec)))
    };
    let park = |p: Arc<Pod>, rejector: &'static str| {
        q.add(p);
        let mut qp = q.try_pop().unwrap();
        qp.unschedulable_plugins = vec![rejector];
        q.add_unschedulable_if_not_present(qp, q.scheduling_cycle())
            .unwrap();
    };
    park(wants("aff", "x"), "InterPodAffinity");
    park(wants("aff-y", "y"), "InterPodAffinity");
    park(wants("aff-fit", "x"), "NodeResourcesFit");
    park(pod("spread", 0, &[]), "PodTopologySpread");
    park(pod("fit", 0, &[]), "NodeResourcesFit");
    // A later event in the pods' own cycles would send them to backoff; none came.
    assert_eq!(q.counts().unschedulable, 5);

    let mut added = Pod::new("ns", "web", Arc::new(PodSpecInfo::default()));
    added.labels = Arc::new(Labels::from_pairs([("app", "x")]));
    added.node_name = Some(Sym::new("n1"));
    q.assigned_pod_added(Arc::new(added), None);

    let at = |n: &str| q.locate(&PodKey::new("ns", n));
    assert_eq!(at("aff"), Some("backoff"));
    assert_eq!(at("spread"), Some("backoff"));
    assert_eq!(at("aff-y"), Some("unschedulable"));
    assert_eq!(at("aff-fit"), Some("unschedulable"));
    assert_eq!(at("fit"), Some("unschedulable"));

    // A pod added in another namespace helps neither the spread pod nor same-namespace terms.
    let mut other = Pod::new("other", "web", Arc::new(PodSpecInfo::default()));
    other.labels = Arc::new(Labels::from_pairs([("app", "y")]));
    other.node_name = Some(Sym::new("n1"));
    q.assigned_pod_added(Arc::new(other), None);
    assert_eq!(at("aff-y"), Some("unschedulable"));
}

// ---- SchedulerPopFromBackoffQ (on by default, as in kube 1.33+) ----------------------------
// Semantics after kubernetes/kubernetes pkg/scheduler/backend/queue/backoff_queue.go and
// active_queue.go (1.34-era): expiries truncated to 1 s windows, backing off while the expiry
// window is not before now's, Pop takes the first plugin-rejected pod from backoffQ when
// activeQ is empty, PreEnqueue at the door of backoffQ.

/// Parks `name` in backoffQ as rejected by NodeResourcesFit (a move request during its cycle
/// sends it to backoff rather than the unschedulable pool).
fn park_in_backoff(f: &Fixture, name: &str, priority: i32) {
    f.q.add(pod(name, priority, &[]));
    let mut p = f.q.try_pop().unwrap();
    let cycle = f.q.scheduling_cycle();
    f.q.move_all_to_active_or_backoff(ClusterEvent::new(EventResource::Node, ActionType::ADD));
    p.unschedulable_plugins = vec!["NodeResourcesFit"];
    f.q.add_unschedulable_if_not_present(p, cycle).unwrap();
}

#[test]
fn an_empty_active_q_pops_from_backoff_rejected_pods_only() {
    let f = fixture();
    park_in_backoff(&f, "rej", 0);
    assert_eq!(f.q.counts().backoff, 1);
    // Still backing off (1 s), but activeQ is empty: Pop takes it.
    let p = f.q.try_pop().expect("popped from backoffQ");
    assert_eq!(&*p.pod.name, "rej");
    assert_eq!(p.attempts, 2);
    let popped_from_backoff = f
        .metrics
        .incoming_pods()
        .into_iter()
        .find(|((q, ev), _)| *q == "active" && ev == "PopFromBackoffQ")
        .map(|(_, n)| n);
    assert_eq!(popped_from_backoff, Some(1));
    // A pod that failed with an error is never taken early.
    f.q.add(pod("err", 0, &[]));
    let e = f.q.try_pop().unwrap();
    f.q.add_unschedulable_if_not_present(e, f.q.scheduling_cycle())
        .unwrap();
    assert_eq!(f.q.backoff_lens(), (0, 1));
    assert!(f.q.try_pop().is_none());

    // Gate off: the rejected pod waits out its backoff.
    let g = fixture_without_pop_from_backoff();
    park_in_backoff(&g, "rej", 0);
    assert!(g.q.try_pop().is_none());
}

#[test]
fn active_pods_come_before_backoff_and_ties_in_a_window_go_by_priority() {
    let f = fixture();
    f.clock.advance(Duration::from_millis(100));
    park_in_backoff(&f, "low", 1);
    f.clock.advance(Duration::from_millis(300));
    park_in_backoff(&f, "high", 9);
    // Expiries 1.1 s and 1.4 s share the 1 s window: QueueSort order (priority) decides.
    f.q.add(pod("fresh", 0, &[]));
    assert_eq!(pop_name(&f.q).as_deref(), Some("fresh"));
    assert_eq!(pop_name(&f.q).as_deref(), Some("high"));
    assert_eq!(pop_name(&f.q).as_deref(), Some("low"));
    assert_eq!(pop_name(&f.q), None);
}

#[test]
fn backoff_ends_at_the_window_after_the_expiry() {
    let f = fixture();
    f.clock.advance(Duration::from_millis(300));
    // An error: 1 s backoff from 0.3 s, expiry 1.3 s, window [1 s, 2 s).
    f.q.add(pod("err", 0, &[]));
    let e = f.q.try_pop().unwrap();
    f.q.add_unschedulable_if_not_present(e, f.q.scheduling_cycle())
        .unwrap();
    f.clock.set(Duration::from_millis(1500));
    assert!(f.q.try_pop().is_none(), "still in its expiry window");
    f.clock.set(Duration::from_millis(2000));
    assert_eq!(pop_name(&f.q).as_deref(), Some("err"));
}

#[test]
fn pre_enqueue_runs_when_a_pod_enters_backoff() {
    let gate = Arc::new(Recorder {
        name: "Gate",
        deny: StdMutex::new(vec![]),
        calls: Arc::new(StdMutex::new(Vec::new())),
    });
    let f = fixture_cfg(vec![gate.clone()], QueueConfig::default());
    f.q.add(pod("a", 0, &[]));
    let mut a = f.q.try_pop().unwrap();
    let cycle = f.q.scheduling_cycle();
    f.q.move_all_to_active_or_backoff(ClusterEvent::new(EventResource::Node, ActionType::ADD));
    a.unschedulable_plugins = vec!["NodeResourcesFit"];
    gate.deny.lock().unwrap().push("a".into());
    f.q.add_unschedulable_if_not_present(a, cycle).unwrap();
    let c = f.q.counts();
    assert_eq!((c.backoff, c.gated), (0, 1), "{c:?}");
    assert!(f.q.try_pop().is_none());
}

/// PreEnqueue's extension-point duration is recorded on every run; the per-plugin one for a
/// 10 % sample of runs (kube's `pluginMetricsSamplePercent`, pkg/scheduler/schedule_one.go,
/// used by `runPreEnqueuePlugins` in pkg/scheduler/backend/queue/scheduling_queue.go).
#[test]
fn pre_enqueue_plugin_durations_are_sampled() {
    use crate::framework::metrics::{ExtensionPoint, Series};
    let f = fixture();
    let runs = 4_000;
    for i in 0..runs {
        f.q.add(pod(&format!("p{i}"), 0, &[]));
    }
    let count = |want: &dyn Fn(&Series) -> bool| -> u64 {
        f.metrics
            .histograms()
            .iter()
            .filter(|h| want(&h.series))
            .map(|h| h.hist.len())
            .sum()
    };
    let point = count(&|s| matches!(s, Series::ExtensionPoint(ExtensionPoint::PreEnqueue, _)));
    let plugin = count(&|s| {
        matches!(
            s,
            Series::Plugin("SchedulingGates", ExtensionPoint::PreEnqueue, _)
        )
    });
    assert_eq!(point, runs);
    // 10 % of 4,000 is 400; a binomial spread of ±20 %, with room to spare.
    assert!((250..=550).contains(&plugin), "{plugin} of {runs} sampled");
}

/// The draw itself: about one call in ten, on any thread.
#[test]
fn plugin_metric_draws_are_about_one_in_ten() {
    let draws = |n: usize| {
        (0..n)
            .filter(|_| crate::framework::metrics::sample_plugin_metrics())
            .count()
    };
    assert!((700..=1_300).contains(&draws(10_000)));
    let other = std::thread::spawn(move || draws(10_000)).join().unwrap();
    assert!((700..=1_300).contains(&other), "{other}");
}
