//! The scheduling and binding cycles through the real scheduler: Permit Wait (allow, timeout),
//! Unreserve in reverse order on a later failure, and binding running beside the next
//! scheduling cycles. Behaviour after kube-scheduler's `schedule_one.go` and
//! `framework/runtime/framework.go` (WaitOnPermit, RunReservePluginsUnreserve), and the cases of
//! `pkg/scheduler/schedule_one_test.go` / `framework/runtime/framework_test.go`
//! (TestPermitPlugins, TestUnReserve...) in kubernetes/kubernetes.

use parking_lot::{Condvar, Mutex};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tidegate_engine::PluginSet;
use tidegate_engine::Registry;
use tidegate_engine::api::Resource;
use tidegate_engine::api::{Node, Pod, PodKey, PodSpecInfo, Sym};
use tidegate_engine::clock::VirtualClock;
use tidegate_engine::{
    ClusterClient, Code, CycleState, PermitPlugin, Plugin, PreBindPlugin, Profile, ReservePlugin,
    Status,
};
use tidegate_engine::{Scheduler, SchedulerConfig};

#[derive(Default)]
struct Client {
    binds: Mutex<Vec<(String, Sym)>>,
    /// Binds and `status.nominatedNodeName` patches, in order: `bind:<pod>:<node>`,
    /// `nominate:<pod>:<node>` (`-` clears).
    writes: Mutex<Vec<String>>,
}

impl ClusterClient for Client {
    fn bind(&self, pod: &Pod, node: Sym) -> Result<(), String> {
        self.binds.lock().push((pod.name.to_string(), node));
        self.writes.lock().push(format!("bind:{}:{node}", pod.name));
        Ok(())
    }
    fn set_unschedulable(&self, pod: &Pod, reason: &str, message: &str) {
        self.writes
            .lock()
            .push(format!("condition:{}:{reason}:{message}", pod.name));
    }
    fn set_nominated_node_name(&self, pod: &Pod, node: Option<Sym>) {
        let node = node.map_or("-".to_string(), |n| n.to_string());
        self.writes
            .lock()
            .push(format!("nominate:{}:{node}", pod.name));
    }
    fn pod_exists_unassigned(&self, _: &Pod) -> bool {
        true
    }
}

/// What the test plugins saw, in order, with a condition to wait on.
#[derive(Default)]
struct Log {
    lines: Mutex<Vec<String>>,
    changed: Condvar,
}

impl Log {
    fn push(&self, s: String) {
        self.lines.lock().push(s);
        self.changed.notify_all();
    }
    fn lines(&self) -> Vec<String> {
        self.lines.lock().clone()
    }
    /// Waits (up to 5 s) until `line` has been logged.
    fn wait_for(&self, line: &str) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut l = self.lines.lock();
        while !l.iter().any(|x| x == line) {
            if self.changed.wait_until(&mut l, deadline).timed_out() {
                return l.iter().any(|x| x == line);
            }
        }
        true
    }
}

/// Reserve plugin that logs `reserve:<plugin>:<pod>` and `unreserve:<plugin>:<pod>`.
struct Recorder {
    name: &'static str,
    log: Arc<Log>,
}

impl Plugin for Recorder {
    fn name(&self) -> &'static str {
        self.name
    }
    fn into_reserve(self: Arc<Self>) -> Option<Arc<dyn ReservePlugin>> {
        Some(self)
    }
}

impl ReservePlugin for Recorder {
    fn reserve(&self, _: &mut CycleState, pod: &Pod, _: Sym) -> Status {
        self.log.push(format!("reserve:{}:{}", self.name, pod.name));
        Status::success()
    }
    fn unreserve(&self, _: &mut CycleState, pod: &Pod, _: Sym) {
        self.log
            .push(format!("unreserve:{}:{}", self.name, pod.name));
    }
}

/// Permit plugin that makes pods named `wait-*` wait.
struct Gang {
    timeout: Duration,
}

impl Plugin for Gang {
    fn name(&self) -> &'static str {
        "Gang"
    }
    fn into_permit(self: Arc<Self>) -> Option<Arc<dyn PermitPlugin>> {
        Some(self)
    }
}

impl PermitPlugin for Gang {
    fn permit(&self, _: &mut CycleState, pod: &Pod, _: Sym) -> (Status, Duration) {
        if pod.name.starts_with("wait-") {
            (Status::code_only(Code::Wait), self.timeout)
        } else {
            (Status::success(), Duration::ZERO)
        }
    }
}

/// PreBind plugin: fails pods named `fail-*`; for pods named `slow-*`, waits until the log
/// shows `reserve:R1:<next>` (the next pod's scheduling cycle) before it lets them bind. Its
/// PreBindPreFlight says it has work for `fail-*`, `slow-*` and `work-*` pods, fails for
/// `pferr-*` and rejects `pfrej-*` (which kube does not allow).
struct Gate {
    log: Arc<Log>,
}

impl Plugin for Gate {
    fn name(&self) -> &'static str {
        "Gate"
    }
    fn into_pre_bind(self: Arc<Self>) -> Option<Arc<dyn PreBindPlugin>> {
        Some(self)
    }
}

impl PreBindPlugin for Gate {
    fn pre_bind_pre_flight(&self, _: &CycleState, pod: &Pod, _: Sym) -> Status {
        if pod.name.starts_with("pferr-") {
            return Status::error("on PreBindPreFlight");
        }
        if pod.name.starts_with("pfrej-") {
            return Status::new(Code::Unschedulable, "rejected on prebindpreflight");
        }
        if ["fail-", "slow-", "work-"]
            .iter()
            .any(|p| pod.name.starts_with(p))
        {
            Status::success()
        } else {
            Status::skip()
        }
    }
    fn pre_bind(&self, _: &mut CycleState, pod: &Pod, _: Sym) -> Status {
        if pod.name.starts_with("fail-") {
            return Status::error("pre-bind failed on purpose");
        }
        if pod.name.starts_with("slow-") {
            let saw = self.log.wait_for("reserve:R1:next");
            self.log
                .push(format!("prebind {} saw next: {saw}", pod.name));
        }
        Status::success()
    }
}

struct Setup {
    sched: Arc<Scheduler>,
    client: Arc<Client>,
    log: Arc<Log>,
}

fn setup(permit_timeout: Duration) -> Setup {
    setup_with(permit_timeout, true)
}

fn setup_with(permit_timeout: Duration, expectation: bool) -> Setup {
    let log = Arc::new(Log::default());
    let mut registry = Registry::in_tree();
    for name in ["R1", "R2"] {
        let log = log.clone();
        registry.register(name, move |_| {
            Arc::new(Recorder {
                name,
                log: log.clone(),
            })
        });
    }
    registry.register("Gang", move |_| {
        Arc::new(Gang {
            timeout: permit_timeout,
        })
    });
    let gate_log = log.clone();
    registry.register("Gate", move |_| {
        Arc::new(Gate {
            log: gate_log.clone(),
        })
    });
    let mut profile = Profile::default_profile();
    let set = |names: &[&str]| PluginSet {
        enabled: names.iter().map(|n| (n.to_string(), 0)).collect(),
        disabled: vec![],
    };
    profile.plugins.reserve = set(&["R1", "R2"]);
    profile.plugins.permit = set(&["Gang"]);
    profile.plugins.pre_bind = set(&["Gate"]);
    let cfg = SchedulerConfig {
        profiles: vec![profile],
        parallelism: 1,
        nominated_node_name_for_expectation: expectation,
        // Backoff never expires: a failed pod stays where the failure handler put it.
        ..SchedulerConfig::default()
    };
    let client = Arc::new(Client::default());
    let sched = Scheduler::new(
        cfg,
        &registry,
        client.clone(),
        Some(Arc::new(VirtualClock::new())),
    )
    .expect("valid profile");
    let mut node = Node::named("n1");
    node.allocatable = Resource {
        milli_cpu: 4000,
        memory: 8 << 30,
        allowed_pod_number: 110,
        ..Resource::default()
    };
    sched.on_node_add(Arc::new(node));
    Setup { sched, client, log }
}

fn pod(name: &str) -> Arc<Pod> {
    let spec = PodSpecInfo {
        scheduler_name: Sym::new("default-scheduler"),
        ..PodSpecInfo::default()
    };
    Arc::new(Pod::new("ns", name, Arc::new(spec)))
}

/// Polls `f` for up to 5 s.
fn eventually(mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    f()
}

#[test]
fn a_waiting_pod_binds_once_its_permit_plugin_allows_it() {
    let s = setup(Duration::from_secs(60));
    let handle = s.sched.run();
    s.sched.on_pod_add(pod("wait-a"));
    let key = PodKey::new("ns", "wait-a");
    assert!(eventually(|| s.sched.waiting_pods.get(&key).is_some()));
    let wp = s.sched.waiting_pods.get(&key).unwrap();
    assert_eq!(wp.pending_plugins(), vec!["Gang"]);
    assert_eq!(wp.node(), Sym::new("n1"));
    // Waiting: reserved, not bound.
    std::thread::sleep(Duration::from_millis(20));
    assert!(s.client.binds.lock().is_empty());
    wp.allow("Gang");
    assert!(eventually(|| s.client.binds.lock().len() == 1));
    assert_eq!(s.client.binds.lock()[0], ("wait-a".into(), Sym::new("n1")));
    assert!(s.sched.waiting_pods.get(&key).is_none());
    assert!(!s.log.lines().iter().any(|l| l.starts_with("unreserve")));
    s.sched.stop();
    handle.join().unwrap();
}

#[test]
fn a_permit_timeout_unreserves_in_reverse_order_and_requeues_with_the_plugin() {
    let s = setup(Duration::from_millis(50));
    let handle = s.sched.run();
    s.sched.on_pod_add(pod("wait-b"));
    let key = PodKey::new("ns", "wait-b");
    assert!(eventually(|| {
        s.sched.queue.locate(&key) == Some("unschedulable")
    }));
    assert!(s.client.binds.lock().is_empty());
    assert_eq!(
        s.log.lines(),
        vec![
            "reserve:R1:wait-b",
            "reserve:R2:wait-b",
            "unreserve:R2:wait-b",
            "unreserve:R1:wait-b"
        ]
    );
    let info = s.sched.queue.pending_info(&key).unwrap();
    assert_eq!(info.unschedulable_plugins, vec!["Gang"]);
    assert_eq!(info.attempts, 1);
    // The assumed pod was forgotten: the node holds nothing.
    assert!(!s.sched.cache.is_assumed(&key));
    // Gang has no EnqueueExtensions, so (as kube's defaultEnqueueExtension) it is registered
    // for every event: a node joining moves its rejected pod out of the unschedulable pool.
    s.sched.on_node_add(Arc::new(Node::named("n2")));
    assert!(eventually(|| {
        s.sched.queue.locate(&key) != Some("unschedulable")
    }));
    s.sched.stop();
    handle.join().unwrap();
}

#[test]
fn a_pre_bind_error_unreserves_in_reverse_order_and_backs_off() {
    let s = setup(Duration::from_secs(60));
    let handle = s.sched.run();
    s.sched.on_pod_add(pod("fail-c"));
    let key = PodKey::new("ns", "fail-c");
    assert!(eventually(|| s.sched.queue.locate(&key) == Some("backoff")));
    assert!(s.client.binds.lock().is_empty());
    assert_eq!(
        s.log.lines(),
        vec![
            "reserve:R1:fail-c",
            "reserve:R2:fail-c",
            "unreserve:R2:fail-c",
            "unreserve:R1:fail-c"
        ]
    );
    // An error names no rejector plugin.
    let info = s.sched.queue.pending_info(&key).unwrap();
    assert!(info.unschedulable_plugins.is_empty());
    s.sched.stop();
    handle.join().unwrap();
}

#[test]
fn binding_runs_beside_the_next_scheduling_cycle() {
    let s = setup(Duration::from_secs(60));
    let handle = s.sched.run();
    // The first pod's PreBind holds until the second pod has been reserved: with binding on
    // the scheduling thread this could not happen (it would wait out its 5 s and say so).
    s.sched.on_pod_add(pod("slow-a"));
    assert!(s.log.wait_for("reserve:R1:slow-a"));
    s.sched.on_pod_add(pod("next"));
    assert!(eventually(|| s.client.binds.lock().len() == 2));
    let lines = s.log.lines();
    assert!(
        lines.contains(&"prebind slow-a saw next: true".to_string()),
        "{lines:?}"
    );
    s.sched.stop();
    handle.join().unwrap();
}

/// kube's `updatePodInSchedulingQueue` (pkg/scheduler/eventhandlers.go): while the pod is
/// assumed (its binding cycle runs), its updates are bypassed, so it never goes through
/// scheduling a second time (kube #96071); an update that repeats the resourceVersion (a
/// resync) is bypassed too.
#[test]
fn updates_of_an_assumed_pod_are_bypassed() {
    let s = setup(Duration::from_secs(60));
    let handle = s.sched.run();
    let mut first = (*pod("slow-u")).clone();
    first.resource_version = 1;
    let first = Arc::new(first);
    s.sched.on_pod_add(first.clone());
    // slow-u is past Permit (Done called) and holds in PreBind until "next" is reserved.
    assert!(s.log.wait_for("reserve:R1:slow-u"));
    let key = PodKey::new("ns", "slow-u");
    // Past Permit, Done releases the in-flight record: the pod is in no queue, only assumed.
    assert!(eventually(|| s.sched.queue.locate(&key).is_none()));
    assert!(s.sched.cache.is_assumed(&key));
    let mut updated = (*first).clone();
    updated.resource_version = 2;
    s.sched.on_pod_update(&first, Arc::new(updated));
    // Not queued again: no UnscheduledPodUpdate entry, and the pod is in no queue.
    let requeued = |s: &Setup| {
        s.sched
            .metrics()
            .incoming_pods()
            .iter()
            .any(|((_, ev), n)| ev == "UnscheduledPodUpdate" && *n > 0)
    };
    assert!(!requeued(&s), "{:?}", s.sched.metrics().incoming_pods());
    assert_eq!(s.sched.queue.locate(&key), None);
    s.sched.on_pod_add(pod("next"));
    assert!(eventually(|| s.client.binds.lock().len() == 2));
    assert!(!requeued(&s));
    s.sched.stop();
    handle.join().unwrap();
}

/// The same resourceVersion twice (an informer resync) changes nothing for a queued pod.
#[test]
fn a_resync_with_the_same_resource_version_is_bypassed() {
    let s = setup(Duration::from_secs(60));
    let mut p = (*pod("resync")).clone();
    p.resource_version = 7;
    let p = Arc::new(p);
    s.sched.on_pod_add(p.clone());
    let q = s.sched.queue.try_pop().expect("queued");
    s.sched.queue.done(&q.pod.key);
    // Not in any queue now; an update with a new resourceVersion would add it back.
    s.sched.on_pod_update(&p, p.clone());
    assert_eq!(s.sched.queue.locate(&p.key), None);
    let mut newer = (*p).clone();
    newer.resource_version = 8;
    s.sched.on_pod_update(&p, Arc::new(newer));
    assert_eq!(s.sched.queue.locate(&p.key), Some("active"));
}

/// kube's two-pass filter (`RunFilterPluginsWithNominatedPods`, framework/runtime/framework.go;
/// cases after TestFilterPluginsWithNominatedPods in framework_test.go): a pod nominated to a
/// node with at least the incoming pod's priority keeps its room; a lower one does not.
#[test]
fn nominated_pods_of_higher_or_equal_priority_keep_their_room() {
    use tidegate_engine::Nominating;
    let s = setup(Duration::from_secs(60));
    // n1 has one pod slot left after nothing: make it exactly one.
    let mut node = Node::named("n1");
    node.allocatable = Resource {
        milli_cpu: 4000,
        memory: 8 << 30,
        allowed_pod_number: 1,
        ..Resource::default()
    };
    s.sched.on_node_update(&Node::named("n1"), Arc::new(node));
    let with_priority = |name: &str, priority: i32| {
        let spec = PodSpecInfo {
            scheduler_name: Sym::new("default-scheduler"),
            priority,
            ..PodSpecInfo::default()
        };
        Arc::new(Pod::new("ns", name, Arc::new(spec)))
    };
    let nominated = with_priority("nominated", 100);
    s.sched
        .queue
        .nominator
        .add(&nominated, Nominating::Override(Sym::new("n1")));

    // Lower priority: the nominated pod takes the only slot.
    s.sched.on_pod_add(with_priority("low", 10));
    let low = s.sched.queue.try_pop().unwrap();
    s.sched.schedule_popped(low);
    assert!(s.client.binds.lock().is_empty());
    assert_eq!(
        s.sched.queue.locate(&PodKey::new("ns", "low")),
        Some("unschedulable")
    );
    let info = s
        .sched
        .queue
        .pending_info(&PodKey::new("ns", "low"))
        .unwrap();
    assert_eq!(info.unschedulable_plugins, vec!["NodeResourcesFit"]);

    // Higher priority: the nomination does not count against it.
    s.sched.on_pod_add(with_priority("high", 1000));
    let high = s.sched.queue.try_pop().unwrap();
    s.sched.schedule_popped(high);
    assert_eq!(s.client.binds.lock().len(), 1);
    assert_eq!(s.client.binds.lock()[0].0, "high");
}

/// kube's `deleteNodeFromCache` raises NodeDelete: a pod PodTopologySpread rejected (its
/// hint: the deleted node carried the constraint's topology key) moves; a pod
/// NodeResourcesFit rejected (which did not register NodeDelete) stays.
#[test]
fn a_node_delete_moves_only_the_pods_whose_rejector_registered_it() {
    use tidegate_engine::api::{LabelSelector, Labels};
    use tidegate_engine::api::{
        NodeInclusionPolicy, TopologySpreadConstraint, UnsatisfiableConstraintAction,
    };
    let s = setup(Duration::from_secs(60));
    let mut n2 = Node::named("n2");
    n2.labels = Arc::new(Labels::from_pairs([("zone", "b")]));
    s.sched.on_node_add(Arc::new(n2));
    let spread = PodSpecInfo {
        scheduler_name: Sym::new("default-scheduler"),
        topology_spread_constraints: vec![TopologySpreadConstraint {
            max_skew: 1,
            topology_key: Sym::new("zone"),
            when_unsatisfiable: UnsatisfiableConstraintAction::DoNotSchedule,
            label_selector: Some(LabelSelector::default()),
            min_domains: None,
            node_affinity_policy: NodeInclusionPolicy::Honor,
            node_taints_policy: NodeInclusionPolicy::Ignore,
            match_label_keys: vec![],
        }],
        ..PodSpecInfo::default()
    };
    let park = |p: Arc<Pod>, rejector: &'static str| {
        s.sched.queue.add(p);
        let mut q = s.sched.queue.try_pop().unwrap();
        q.unschedulable_plugins = vec![rejector];
        s.sched
            .queue
            .add_unschedulable_if_not_present(q, s.sched.queue.scheduling_cycle())
            .unwrap();
    };
    park(
        Arc::new(Pod::new("ns", "spread", Arc::new(spread))),
        "PodTopologySpread",
    );
    park(pod("fit"), "NodeResourcesFit");
    assert_eq!(s.sched.queue.counts().unschedulable, 2);
    s.sched.on_node_delete(Sym::new("n2"));
    assert_ne!(
        s.sched.queue.locate(&PodKey::new("ns", "spread")),
        Some("unschedulable")
    );
    assert_eq!(
        s.sched.queue.locate(&PodKey::new("ns", "fit")),
        Some("unschedulable")
    );
    assert_eq!(s.sched.cache.node_count(), 1);
}

/// NominatedNodeNameForExpectation, after kube's `bindingCycle` (schedule_one.go) and
/// TestSchedulerScheduleOne's cases "prebind is called and nominated node name is set, if
/// preflight returns success", "prebind isn't called and nominated node name isn't set, if
/// preflight returns skip" and "nominated node name is set, permit plugin is working in wait
/// on permit phase" (pkg/scheduler/schedule_one_test.go in kubernetes/kubernetes): the pod's node is written as
/// its nominatedNodeName before PreBind when a PreBind plugin's PreBindPreFlight says it has
/// work, and before the wait when Permit makes the pod wait; not otherwise.
#[test]
fn the_node_is_written_as_nomination_before_pre_bind_work_or_a_permit_wait() {
    let s = setup(Duration::from_secs(60));
    let handle = s.sched.run();
    s.sched.on_pod_add(pod("work-a"));
    assert!(eventually(|| s.client.binds.lock().len() == 1));
    s.sched.on_pod_add(pod("plain-b"));
    assert!(eventually(|| s.client.binds.lock().len() == 2));
    s.sched.on_pod_add(pod("wait-c"));
    let key = PodKey::new("ns", "wait-c");
    assert!(eventually(|| s.sched.waiting_pods.get(&key).is_some()));
    assert_eq!(
        s.client.writes.lock().last().map(String::as_str),
        Some("nominate:wait-c:n1"),
        "written before the pod waits"
    );
    s.sched.waiting_pods.get(&key).unwrap().allow("Gang");
    assert!(eventually(|| s.client.binds.lock().len() == 3));
    assert_eq!(
        *s.client.writes.lock(),
        vec![
            "nominate:work-a:n1",
            "bind:work-a:n1",
            "bind:plain-b:n1",
            "nominate:wait-c:n1",
            "bind:wait-c:n1",
        ]
    );
    s.sched.stop();
    handle.join().unwrap();
}

/// A PreBind failure after the nomination was written clears it again (kube's
/// handleBindingCycleError passes clearNominatedNode; its failure handler patches the status
/// it reads back with the nomination); with the gate off nothing is written at all.
#[test]
fn a_pre_bind_failure_clears_the_nomination_the_binding_cycle_wrote() {
    let s = setup(Duration::from_secs(60));
    let handle = s.sched.run();
    s.sched.on_pod_add(pod("fail-a"));
    let key = PodKey::new("ns", "fail-a");
    assert!(eventually(|| s.sched.queue.locate(&key) == Some("backoff")));
    assert!(eventually(|| s.client.writes.lock().len() == 3));
    let writes = s.client.writes.lock().clone();
    assert_eq!(writes[0], "nominate:fail-a:n1");
    assert!(writes[1].starts_with("condition:fail-a:SchedulerError:"));
    assert_eq!(
        writes[2], "nominate:fail-a:-",
        "after the condition, as kube's patch"
    );
    // The requeued pod carries what the binding cycle wrote until the clearing update.
    let queued = s.sched.queue.pending_info(&key).unwrap();
    assert_eq!(queued.pod.nominated_node_name, Some(Sym::new("n1")));
    s.sched.stop();
    handle.join().unwrap();

    let s = setup_with(Duration::from_secs(60), false);
    let handle = s.sched.run();
    s.sched.on_pod_add(pod("work-b"));
    s.sched.on_pod_add(pod("fail-c"));
    let key = PodKey::new("ns", "fail-c");
    assert!(eventually(|| s.sched.queue.locate(&key) == Some("backoff")));
    assert!(eventually(|| s.client.binds.lock().len() == 1));
    assert!(eventually(|| s.client.writes.lock().len() == 2));
    let writes = s.client.writes.lock().clone();
    assert!(
        !writes.iter().any(|w| w.starts_with("nominate:")),
        "{writes:?}"
    );
    s.sched.stop();
    handle.join().unwrap();
}

/// A PreBindPreFlight that fails or answers Unschedulable ends the binding cycle with an error
/// before anything is written (TestSchedulerScheduleOne's "prebindpreflight failed with status
/// code error" and "... unschedulable", pkg/scheduler/schedule_one_test.go): the pod is
/// forgotten and backs off, with kube's messages.
#[test]
fn a_failed_pre_bind_pre_flight_is_an_error_and_writes_no_nomination() {
    let s = setup(Duration::from_secs(60));
    let handle = s.sched.run();
    s.sched.on_pod_add(pod("pferr-a"));
    s.sched.on_pod_add(pod("pfrej-b"));
    for name in ["pferr-a", "pfrej-b"] {
        let key = PodKey::new("ns", name);
        assert!(eventually(|| s.sched.queue.locate(&key) == Some("backoff")));
        assert!(!s.sched.cache.is_assumed(&key));
    }
    assert!(eventually(|| s.client.writes.lock().len() == 2));
    let mut writes = s.client.writes.lock().clone();
    writes.sort();
    assert_eq!(
        writes,
        vec![
            "condition:pferr-a:SchedulerError:running PreBindPreFlight \"Gate\": on PreBindPreFlight",
            "condition:pfrej-b:SchedulerError:PreBindPreFlight Gate returned \"Unschedulable\", which is unsupported. It is supposed to return Success, Skip, or Error status",
        ]
    );
    s.sched.stop();
    handle.join().unwrap();
}
