//! Deferred in-place resizes through the real scheduler, with and without
//! `InPlacePodVerticalScalingSchedulerPreemption` (`SchedulerConfig::resize_preemption`).
//! Cases after kube's test/integration/scheduler/preemption/deferred_resize_preemption_test.go
//! (TestDeferredResizePodPreemption, TestDeferredResizeQueueingHandlers) and
//! pkg/scheduler/eventhandlers_test.go (the deferred-resize cases of TestUpdatePod*) in
//! kubernetes/kubernetes.

use parking_lot::Mutex;
use std::sync::{Arc, Weak};
use tidegate_engine::ClusterClient;
use tidegate_engine::PodNominator;
use tidegate_engine::Registry;
use tidegate_engine::api::Resource;
use tidegate_engine::api::{Node, Pod, PodResize, PodSpecInfo, ResizePending, Sym};
use tidegate_engine::clock::VirtualClock;
use tidegate_engine::{Scheduler, SchedulerConfig};

#[derive(Default)]
struct Client {
    sched: Mutex<Weak<Scheduler>>,
    deleted: Mutex<Vec<String>>,
    pods: Mutex<Vec<Arc<Pod>>>,
    unschedulable: Mutex<Vec<String>>,
}

impl ClusterClient for Client {
    fn bind(&self, _: &Pod, _: Sym) -> Result<(), String> {
        Ok(())
    }
    fn pod_exists_unassigned(&self, pod: &Pod) -> bool {
        !self.deleted.lock().contains(&pod.name.to_string())
    }
    fn set_unschedulable(&self, pod: &Pod, _reason: &str, _message: &str) {
        self.unschedulable.lock().push(pod.name.to_string());
    }
    fn delete_pod(&self, pod: &Pod) -> Result<(), String> {
        self.deleted.lock().push(pod.name.to_string());
        let stored = self.pods.lock().iter().find(|p| p.key == pod.key).cloned();
        if let (Some(s), Some(p)) = (self.sched.lock().upgrade(), stored) {
            s.on_pod_delete(&p);
        }
        Ok(())
    }
}

fn setup(resize_preemption: bool) -> (Arc<Scheduler>, Arc<Client>) {
    let client = Arc::new(Client::default());
    let cfg = SchedulerConfig {
        parallelism: 1,
        resize_preemption,
        ..SchedulerConfig::default()
    };
    let sched = Scheduler::new(
        cfg,
        &Registry::in_tree(),
        client.clone(),
        Some(Arc::new(VirtualClock::new())),
    )
    .unwrap();
    *client.sched.lock() = Arc::downgrade(&sched);
    for name in ["n1", "n2"] {
        let mut n = Node::named(name);
        n.allocatable = Resource {
            milli_cpu: 1000,
            memory: 1 << 30,
            allowed_pod_number: 110,
            ..Resource::default()
        };
        sched.on_node_add(Arc::new(n));
    }
    (sched, client)
}

fn pod(name: &str, priority: i32, cpu: i64, node: &str) -> Pod {
    let req = Resource {
        milli_cpu: cpu,
        ..Resource::default()
    };
    let spec = PodSpecInfo {
        scheduler_name: Sym::new("default-scheduler"),
        priority,
        requests: req.clone(),
        non_zero_requests: req,
        ..PodSpecInfo::default()
    };
    let mut p = Pod::new("ns", name, Arc::new(spec));
    p.node_name = Some(Sym::new(node));
    p
}

fn running(s: &Scheduler, c: &Client, p: Pod) -> Arc<Pod> {
    let p = Arc::new(p);
    c.pods.lock().push(p.clone());
    s.on_pod_add(p.clone());
    p
}

/// `old` resized in place to `cpu`, the kubelet answering Deferred: it holds what `old` asked.
fn deferred(old: &Pod, cpu: i64) -> Arc<Pod> {
    let mut p = pod(&old.name, old.priority(), cpu, "n1");
    p.resource_version = old.resource_version + 1;
    let counted = Resource {
        milli_cpu: cpu.max(old.spec.requests.milli_cpu),
        ..Resource::default()
    };
    p.resize = Some(Arc::new(PodResize {
        pending: Some(ResizePending::Deferred),
        requests: counted.clone(),
        non_zero_requests: counted,
    }));
    Arc::new(p)
}

/// The deferred pod's update, then one scheduling attempt; the pods evicted.
fn resize_and_attempt(s: &Scheduler, c: &Client, old: &Arc<Pod>, new: Arc<Pod>) -> Vec<String> {
    c.pods.lock().retain(|p| p.key != old.key);
    c.pods.lock().push(new.clone());
    s.on_pod_update(old, new);
    let q = s.queue.try_pop().expect("the deferred pod is in activeQ");
    s.schedule_popped(q);
    let mut d = c.deleted.lock().clone();
    d.sort();
    d
}

#[test]
fn a_deferred_pod_preempts_lower_priority_pods_on_its_own_node_only() {
    let (s, c) = setup(true);
    let resizer = running(&s, &c, pod("resizer", 100, 300, "n1"));
    running(&s, &c, pod("v1", 10, 200, "n1"));
    running(&s, &c, pod("v2", 10, 200, "n1"));
    running(&s, &c, pod("high", 1000, 100, "n1"));
    running(&s, &c, pod("elsewhere", 1, 100, "n2"));
    // 700 + 200 + 200 + 100 = 1200 on 1000: one 200m victim suffices, the other is reprieved.
    let evicted = resize_and_attempt(&s, &c, &resizer, deferred(&resizer, 700));
    assert_eq!(evicted.len(), 1, "{evicted:?}");
    assert!(evicted[0].starts_with('v'), "{evicted:?}");
    // The attempt failed unschedulable: no status write and no nomination for a bound pod.
    assert!(c.unschedulable.lock().is_empty());
    assert!(
        s.queue
            .nominator
            .nominated_pods_for_node(Sym::new("n1"))
            .is_empty()
    );
    assert_eq!(s.queue.locate(&resizer.key), Some("backoff"));
    assert_eq!(
        s.stats
            .unschedulable
            .load(std::sync::atomic::Ordering::Relaxed),
        1
    );
}

#[test]
fn higher_priority_pods_are_never_victims() {
    let (s, c) = setup(true);
    let resizer = running(&s, &c, pod("resizer", 100, 300, "n1"));
    running(&s, &c, pod("high", 1000, 600, "n1"));
    let evicted = resize_and_attempt(&s, &c, &resizer, deferred(&resizer, 700));
    assert!(evicted.is_empty());
}

#[test]
fn a_deferred_pod_that_fits_fails_to_be_assumed_and_backs_off() {
    let (s, c) = setup(true);
    let resizer = running(&s, &c, pod("resizer", 100, 300, "n1"));
    running(&s, &c, pod("v1", 10, 200, "n1"));
    // 700 + 200 on 1000: it fits; kube's assume then fails (the pod is cached): an error.
    let evicted = resize_and_attempt(&s, &c, &resizer, deferred(&resizer, 700));
    assert!(evicted.is_empty());
    assert_eq!(s.stats.errors.load(std::sync::atomic::Ordering::Relaxed), 1);
    assert_eq!(s.queue.locate(&resizer.key), Some("backoff"));
}

#[test]
fn the_queue_follows_the_deferred_condition_only_with_the_gate() {
    // Gate off (kube's default): a deferred pod is never queued; the node counts its
    // desired resources and nothing is evicted.
    let (s, c) = setup(false);
    let resizer = running(&s, &c, pod("resizer", 100, 300, "n1"));
    running(&s, &c, pod("v1", 10, 500, "n1"));
    let grown = deferred(&resizer, 700);
    s.on_pod_update(&resizer, grown.clone());
    assert!(s.queue.try_pop().is_none());
    assert!(c.deleted.lock().is_empty());
    // Gate on: queued when it becomes deferred, removed when it stops being deferred.
    let (s, c) = setup(true);
    let resizer = running(&s, &c, pod("resizer", 100, 300, "n1"));
    let grown = deferred(&resizer, 700);
    s.on_pod_update(&resizer, grown.clone());
    assert_eq!(s.queue.locate(&resizer.key), Some("active"));
    let mut actuated = pod("resizer", 100, 700, "n1");
    actuated.resource_version = grown.resource_version + 1;
    s.on_pod_update(&grown, Arc::new(actuated));
    assert_eq!(s.queue.locate(&resizer.key), None);
    // Deleted while deferred: gone from the queue too.
    let again = deferred(&resizer, 900);
    s.on_pod_add(again.clone());
    assert_eq!(s.queue.locate(&again.key), Some("active"));
    s.on_pod_delete(&again);
    assert_eq!(s.queue.locate(&again.key), None);
    let _ = c;
}
