//! The example plugins through the real scheduler, enabled by a KubeSchedulerConfiguration
//! (the JSON form of the YAML a user writes).

use parking_lot::Mutex;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};
use tidegate_engine::ClusterClient;
use tidegate_engine::Registry;
use tidegate_engine::api::Labels;
use tidegate_engine::api::Resource;
use tidegate_engine::api::{Node, Pod, PodKey, PodSpecInfo, Sym};
use tidegate_engine::clock::VirtualClock;
use tidegate_engine::config::KubeSchedulerConfiguration;
use tidegate_engine::{Scheduler, SchedulerConfig};
use tidegate_examples::quota_gate::{GATE, Quota, QuotaController};

#[derive(Default)]
struct Client {
    binds: Mutex<Vec<String>>,
}

impl ClusterClient for Client {
    fn bind(&self, pod: &Pod, _: Sym) -> Result<(), String> {
        self.binds.lock().push(pod.name.to_string());
        Ok(())
    }
    fn pod_exists_unassigned(&self, _: &Pod) -> bool {
        true
    }
}

fn scheduler(config: serde_json::Value, quota: Arc<Quota>) -> (Arc<Scheduler>, Arc<Client>) {
    let mut registry = Registry::in_tree();
    tidegate_examples::register(&mut registry, quota);
    let resolved = KubeSchedulerConfiguration::from_json(&config)
        .and_then(|c| c.resolve())
        .expect("valid config");
    let cfg = SchedulerConfig {
        profiles: resolved.profiles,
        parallelism: 1,
        ..SchedulerConfig::default()
    };
    let client = Arc::new(Client::default());
    let sched = Scheduler::new(
        cfg,
        &registry,
        client.clone(),
        Some(Arc::new(VirtualClock::new())),
    )
    .expect("plugins build");
    let mut n = Node::named("n1");
    n.allocatable = Resource {
        milli_cpu: 64_000,
        memory: 64 << 30,
        allowed_pod_number: 1000,
        ..Resource::default()
    };
    sched.on_node_add(Arc::new(n));
    (sched, client)
}

fn pod(ns: &str, name: &str, gates: &[&str], labels: &[(&str, &str)]) -> Arc<Pod> {
    let spec = PodSpecInfo {
        scheduler_name: Sym::new("default-scheduler"),
        scheduling_gates: gates.iter().map(|g| Arc::from(*g)).collect(),
        ..PodSpecInfo::default()
    };
    let mut p = Pod::new(ns, name, Arc::new(spec));
    p.labels = Arc::new(Labels::from_pairs(labels.iter().copied()));
    Arc::new(p)
}

/// Runs scheduling cycles until activeQ is empty.
fn drain(s: &Scheduler) {
    while let Some(q) = s.queue.try_pop() {
        s.schedule_popped(q);
    }
}

#[test]
fn the_quota_gate_admits_pods_while_quota_remains_and_more_as_pods_go() {
    let quota = Arc::new(Quota::default());
    quota.set_limit("team", 2);
    let config = serde_json::json!({
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler",
                      "plugins": {"preEnqueue": {"enabled": [{"name": "QuotaGate"}]}}}]
    });
    let (s, c) = scheduler(config, quota.clone());
    // The controller's "API update": the same pod without the quota gate.
    let weak: Arc<Mutex<Weak<Scheduler>>> = Arc::new(Mutex::new(Arc::downgrade(&s)));
    let w = weak.clone();
    let controller = QuotaController::new(
        quota.clone(),
        Box::new(move |p: &Arc<Pod>| {
            let mut spec = (*p.spec).clone();
            spec.scheduling_gates.retain(|g| &**g != GATE);
            let mut new = (**p).clone();
            new.spec = Arc::new(spec);
            if let Some(s) = w.lock().upgrade() {
                s.on_pod_update(p, Arc::new(new));
            }
        }),
    );
    let pods: Vec<Arc<Pod>> = (0..5)
        .map(|i| pod("team", &format!("p{i}"), &[GATE], &[]))
        .collect();
    for p in &pods {
        s.on_pod_add(p.clone());
        controller.on_pod_add(p);
    }
    drain(&s);
    assert_eq!(*c.binds.lock(), vec!["p0", "p1"]);
    assert_eq!(quota.usage("team"), (2, 3));
    assert_eq!(s.queue.counts().gated, 3);

    // Someone strips the gate of p4 by hand: QuotaGate still holds it.
    let mut spec = (*pods[4].spec).clone();
    spec.scheduling_gates.clear();
    let mut stripped = (*pods[4]).clone();
    stripped.spec = Arc::new(spec);
    s.on_pod_update(&pods[4], Arc::new(stripped));
    drain(&s);
    assert_eq!(s.queue.locate(&PodKey::new("team", "p4")), Some("gated"));
    assert_eq!(
        s.queue
            .pending_info(&PodKey::new("team", "p4"))
            .unwrap()
            .gating_plugin,
        Some("QuotaGate")
    );

    // p0 finishes: one slot, p2 (first in line) goes.
    let mut bound = (*pods[0]).clone();
    bound.node_name = Some(Sym::new("n1"));
    s.on_pod_delete(&bound);
    controller.on_pod_delete(&bound);
    drain(&s);
    assert_eq!(*c.binds.lock(), vec!["p0", "p1", "p2"]);
    assert_eq!(quota.usage("team"), (2, 2));

    // Pods in namespaces without a limit are not the plugin's business.
    s.on_pod_add(pod("free", "x", &[], &[]));
    drain(&s);
    assert_eq!(c.binds.lock().last().map(String::as_str), Some("x"));
}

fn gang_config(timeout_s: u64) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler",
                      "plugins": {"multiPoint": {"enabled": [{"name": "Gang"}]}},
                      "pluginConfig": [{"name": "Gang", "args": {"permitWaitingTimeSeconds": timeout_s}}]}]
    })
}

fn member(group: &str, min: &str, i: usize) -> Arc<Pod> {
    pod(
        "ns",
        &format!("{group}-{i}"),
        &[],
        &[
            (tidegate_examples::gang::GROUP_LABEL, group),
            (tidegate_examples::gang::MIN_AVAILABLE_LABEL, min),
        ],
    )
}

fn eventually(mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    f()
}

#[test]
fn a_gang_binds_only_when_all_its_members_are_reserved() {
    let (s, c) = scheduler(gang_config(60), Arc::new(Quota::default()));
    let handle = s.run();
    s.on_pod_add(member("g", "3", 0));
    s.on_pod_add(member("g", "3", 1));
    assert!(eventually(|| s.waiting_pods.len() == 2));
    assert!(c.binds.lock().is_empty());
    s.on_pod_add(pod("ns", "solo", &[], &[]));
    assert!(eventually(|| c.binds.lock().len() == 1));
    s.on_pod_add(member("g", "3", 2));
    assert!(eventually(|| c.binds.lock().len() == 4));
    let mut got = c.binds.lock().clone();
    got.sort();
    assert_eq!(got, vec!["g-0", "g-1", "g-2", "solo"]);
    assert_eq!(s.waiting_pods.len(), 0);
    s.stop();
    handle.join().unwrap();
}

#[test]
fn an_incomplete_gang_is_rejected_whole_when_a_member_times_out() {
    let (s, c) = scheduler(gang_config(1), Arc::new(Quota::default()));
    let handle = s.run();
    s.on_pod_add(member("h", "3", 0));
    s.on_pod_add(member("h", "3", 1));
    assert!(eventually(|| s.waiting_pods.len() == 2));
    // After the 1 s timeout both are back in the queue with the plugin as rejector.
    assert!(eventually(|| {
        ["h-0", "h-1"]
            .iter()
            .all(|n| s.queue.locate(&PodKey::new("ns", n)) == Some("unschedulable"))
    }));
    assert!(c.binds.lock().is_empty());
    for n in ["h-0", "h-1"] {
        let info = s.queue.pending_info(&PodKey::new("ns", n)).unwrap();
        assert_eq!(info.unschedulable_plugins, vec!["Gang"]);
    }
    s.stop();
    handle.join().unwrap();
}

#[test]
fn bad_args_are_refused_with_the_field() {
    let mut registry = Registry::in_tree();
    tidegate_examples::register(&mut registry, Arc::new(Quota::default()));
    let resolved = KubeSchedulerConfiguration::from_json(&gang_config(0))
        .and_then(|c| c.resolve())
        .unwrap();
    let cfg = SchedulerConfig {
        profiles: resolved.profiles,
        ..SchedulerConfig::default()
    };
    let err = Scheduler::new(cfg, &registry, Arc::new(Client::default()), None)
        .err()
        .expect("refused");
    assert!(
        err.to_string().contains("permitWaitingTimeSeconds"),
        "{err}"
    );
}
