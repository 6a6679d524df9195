//! A pod updated while its scheduling cycle runs (kube's `addEventsIfPodInFlight`, and the
//! failure handler's refresh of the pod from the informer cache): if the attempt fails, the
//! pod's own update decides whether it is requeued, judged on the updated object. Found
//! running upstream's EventHandlingPodUpdate (test/integration/scheduler_perf/event_handling/
//! in kubernetes/kubernetes), where one pod in a thousand, updated to tolerate a cordon while
//! in flight, stayed unschedulable for good.

mod common;

use std::sync::Arc;
use tidegate_engine::Scheduler;
use tidegate_engine::api::{Pod, PodSpecInfo, Sym, TaintEffect, Toleration};

fn scheduler(hints: bool) -> Arc<Scheduler> {
    common::one_node_scheduler(hints, "cordoned", &[], true)
}

fn pod(tolerate_cordon: bool, rv: u64) -> Pod {
    let mut spec = PodSpecInfo {
        scheduler_name: Sym::new("default-scheduler"),
        ..PodSpecInfo::default()
    };
    if tolerate_cordon {
        spec.tolerations.push(Toleration {
            key: Sym::new("node.kubernetes.io/unschedulable"),
            exists: true,
            value: Sym::new(""),
            effect: Some(TaintEffect::NoSchedule),
        });
    }
    let mut p = Pod::new("ns", "p", Arc::new(spec));
    p.resource_version = rv;
    p
}

fn updated_in_flight_then_failed(hints: bool) -> Arc<Scheduler> {
    let s = scheduler(hints);
    let old = pod(false, 1);
    s.on_pod_add(Arc::new(old.clone()));
    let q = s.queue.try_pop().expect("the pod is active");
    // The update lands while the cycle (still on the old object) runs.
    s.on_pod_update(&old, Arc::new(pod(true, 2)));
    s.schedule_popped(q);
    s
}

#[test]
fn with_hints_the_pods_own_update_in_flight_requeues_it() {
    let s = updated_in_flight_then_failed(true);
    let key = pod(false, 1).key;
    assert_ne!(
        s.queue.locate(&key),
        Some("unschedulable"),
        "NodeUnschedulable's hint for the added toleration says Queue"
    );
    let info = s.queue.pending_info(&key).expect("still queued");
    assert_eq!(
        info.pod.spec.tolerations.len(),
        1,
        "requeued as the updated object"
    );
}

#[test]
fn without_hints_an_update_in_flight_sends_the_pod_back_to_active() {
    let s = updated_in_flight_then_failed(false);
    let key = pod(false, 1).key;
    assert_eq!(s.queue.locate(&key), Some("active"));
    // And now it schedules (the cordon is tolerated).
    let q = s.queue.try_pop().unwrap();
    s.schedule_popped(q);
    assert_eq!(s.queue.locate(&key), None);
    assert_eq!(
        s.stats.scheduled.load(std::sync::atomic::Ordering::Relaxed),
        1
    );
}
