//! Pod Scheduling Readiness through the object store, as an informer would deliver it.

use k8s_openapi::api::core::v1 as core;
use std::sync::Arc;
use std::time::Duration;
use tidegate_bench::cluster::store::Store;
use tidegate_engine::Registry;
use tidegate_engine::api::{PodKey, convert};
use tidegate_engine::{Scheduler, SchedulerConfig};

fn node() -> core::Node {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": "n1"},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "10"}}
    }))
    .unwrap()
}

fn pod(gates: &[&str]) -> core::Pod {
    let gates: Vec<_> = gates
        .iter()
        .map(|g| serde_json::json!({"name": g}))
        .collect();
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": "p"},
        "spec": {"schedulingGates": gates, "containers": [{"name": "c", "image": "pause"}]}
    }))
    .unwrap()
}

fn setup() -> (Arc<Store>, Arc<Scheduler>, std::thread::JoinHandle<()>) {
    let store = Store::new(1);
    let cfg = SchedulerConfig {
        parallelism: 1,
        ..SchedulerConfig::default()
    };
    let sched = Scheduler::new(cfg, &Registry::in_tree(), store.clone(), None).unwrap();
    store.attach(sched.clone());
    let n = node();
    let converted = convert::node(&n).unwrap();
    store.create_node(n, converted).unwrap();
    let h = sched.run();
    (store, sched, h)
}

fn create(store: &Store, p: &core::Pod) {
    let spec = Arc::new(convert::pod_spec_info(p.spec.as_ref().unwrap()).unwrap());
    store
        .create_pod(&Arc::new(p.clone()), "default", spec)
        .unwrap();
}

#[test]
fn a_pod_schedules_only_when_its_last_gate_is_removed() {
    let (store, sched, h) = setup();
    let key = PodKey::new("default", "p");
    create(&store, &pod(&["a", "b"]));
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(sched.queue.locate(&key), Some("gated"));
    assert_eq!(store.ns_stats("default").bound, 0);
    assert_eq!(
        store.ns_stats("default").attempted_unbound,
        1,
        "SchedulingGated condition"
    );

    store.update_pod(&pod(&["b"]), "default").unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(sched.queue.locate(&key), Some("gated"));
    assert_eq!(store.ns_stats("default").bound, 0);

    store.update_pod(&pod(&[]), "default").unwrap();
    assert!(store.wait_ns("default", Duration::from_secs(5), |s| s.bound == 1));
    assert_eq!(
        store.placements(),
        vec![("default".into(), "p".into(), "n1".into())]
    );
    sched.stop();
    h.join().unwrap();
    store.detach();
}

#[test]
fn the_store_rejects_invalid_gate_operations() {
    let (store, sched, h) = setup();
    // nodeName together with gates is forbidden at creation.
    let mut bad = pod(&["a"]);
    bad.spec.as_mut().unwrap().node_name = Some("n1".into());
    let spec = Arc::new(convert::pod_spec_info(bad.spec.as_ref().unwrap()).unwrap());
    let e = store
        .create_pod(&Arc::new(bad), "default", spec)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(
            "spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"
        ),
        "{e}"
    );
    // Gates may only be removed.
    create(&store, &pod(&["a"]));
    let e = store
        .update_pod(&pod(&["a", "x"]), "default")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new scheduling gate 'x'"),
        "{e}"
    );
    // Binding a gated pod is refused (409 Conflict).
    let p = tidegate_engine::api::convert::pod(&{
        let mut p = pod(&["a"]);
        p.metadata.namespace = Some("default".into());
        p
    })
    .unwrap();
    use tidegate_engine::ClusterClient;
    let e = store
        .bind(&p, tidegate_engine::api::Sym::new("n1"))
        .unwrap_err();
    assert!(e.contains("has non-empty .spec.schedulingGates"), "{e}");
    sched.stop();
    h.join().unwrap();
    store.detach();
}

/// Pods are kept per namespace: listing, counting and deleting in one namespace never sees
/// another's pods, and the run's counts add up across namespaces.
#[test]
fn namespaces_keep_their_own_pods_and_counts_add_up() {
    let (store, sched, h) = setup();
    let mut gated = pod(&["hold"]);
    gated.metadata.name = None;
    gated.metadata.generate_name = Some("g-".into());
    let gated = Arc::new(gated);
    let gspec = Arc::new(convert::pod_spec_info(gated.spec.as_ref().unwrap()).unwrap());
    for _ in 0..5 {
        store.create_pod(&gated, "held", gspec.clone()).unwrap();
    }
    let mut plain = pod(&[]);
    plain.metadata.name = None;
    plain.metadata.generate_name = Some("p-".into());
    // Deleted at once once bound (a grace period would leave it terminating: no kubelet).
    plain
        .spec
        .as_mut()
        .unwrap()
        .termination_grace_period_seconds = Some(0);
    let plain = Arc::new(plain);
    let pspec = Arc::new(convert::pod_spec_info(plain.spec.as_ref().unwrap()).unwrap());
    for _ in 0..3 {
        store.create_pod(&plain, "measured", pspec.clone()).unwrap();
    }
    assert!(store.wait_ns("measured", Duration::from_secs(5), |s| s.bound == 3));

    let held = store.list_pods("held", &Default::default());
    let measured = store.list_pods("measured", &Default::default());
    assert_eq!(held.len(), 5);
    assert_eq!(measured.len(), 3);
    assert!(held.iter().all(|k| k.split().0 == "held"));
    assert!(measured.iter().all(|k| k.split().0 == "measured"));
    assert!(store.list_pods("nowhere", &Default::default()).is_empty());

    let s = store.ns_stats("held");
    assert_eq!((s.pods, s.bound, s.attempted_unbound), (5, 0, 5));
    assert!(store.delete_pod(&measured[0]));
    assert!(!store.delete_pod(&measured[0]), "already gone");
    let s = store.ns_stats("measured");
    assert_eq!((s.pods, s.bound), (2, 2));
    assert_eq!(store.ns_stats("held").pods, 5, "other namespace untouched");

    let c = store.counts();
    assert_eq!((c.created, c.deleted, c.bound, c.unbound), (8, 1, 2, 5));
    assert_eq!(c.created, c.bound + c.unbound + c.terminating + c.deleted);
    assert_eq!(store.unbound_pods().len(), 5);
    assert_eq!(store.placements().len(), 2);
    sched.stop();
    h.join().unwrap();
    store.detach();
}
