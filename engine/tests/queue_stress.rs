//! Stress: 4 informer threads (each owning its pods, so one pod's events stay in order, as an
//! informer delivers them), a scheduling thread that pops and hands pods back, and an event
//! thread that fires cluster events and moves a virtual clock: 1,000,000 random operations.
//! At the end every pod must be in exactly the state its owner's model says (absent, gated, or
//! in one of activeQ/backoffQ/unschedulable), nothing may be in flight, and the gauges must
//! equal the counts.

use ahash::AHashMap;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tidegate_engine::api::{Pod, PodKey, PodSpecInfo, Sym};
use tidegate_engine::clock::VirtualClock;
use tidegate_engine::metrics::Metrics;
use tidegate_engine::{ActionType, ClusterEvent, EventResource};
use tidegate_engine::{QueueConfig, QueueError, SchedulingQueue};

const WORKERS: usize = 4;
const PODS_PER_WORKER: usize = 2_000;

fn total_ops() -> usize {
    if cfg!(miri) { 2_000 } else { 1_000_000 }
}

fn pod(name: &str, gates: &[&'static str]) -> Arc<Pod> {
    let spec = PodSpecInfo {
        scheduler_name: Sym::new("default-scheduler"),
        priority: (name.len() % 3) as i32,
        scheduling_gates: gates.iter().map(|g| Arc::from(*g)).collect(),
        ..Default::default()
    };
    Arc::new(Pod::new("stress", name, Arc::new(spec)))
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Model {
    Absent,
    /// Exists with this many gates (0 = schedulable).
    Exists(usize),
}

#[test]
fn a_million_random_operations_keep_every_pod_in_exactly_one_place() {
    let clock = Arc::new(VirtualClock::new());
    let metrics = Arc::new(Metrics::new());
    let cfg = QueueConfig {
        active_shards: 4,
        ..QueueConfig::default()
    };
    let q = Arc::new(
        SchedulingQueue::gates_only(clock.clone(), metrics.clone(), cfg).with_plugin_events(
            "NodeResourcesFit",
            vec![ClusterEvent::new(EventResource::Node, ActionType::ADD)],
        ),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let per_worker = total_ops() / WORKERS;

    // The scheduling thread: pop, then hand back as unschedulable (a rejector) or as an error.
    let popper = {
        let (q, stop) = (q.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut rng = ChaCha8Rng::seed_from_u64(99);
            let mut n = 0u64;
            while !stop.load(Ordering::Acquire) {
                match q.try_pop() {
                    Some(mut p) => {
                        n += 1;
                        if rng.random_bool(0.7) {
                            p.unschedulable_plugins = vec!["NodeResourcesFit"];
                        }
                        let cycle = q.scheduling_cycle();
                        // While the pod was out, its owner may have deleted it and added it
                        // again: the new copy is queued, and this one is refused, as kube's
                        // AddUnschedulableIfNotPresent refuses it (its scheduler logs that).
                        let refused = |e: QueueError| -> Result<(), QueueError> {
                            match e {
                                QueueError::AlreadyPresent(_) => Ok(()),
                            }
                        };
                        q.add_unschedulable_if_not_present(p, cycle)
                            .or_else(refused)
                            .unwrap();
                    }
                    None => std::thread::yield_now(),
                }
            }
            n
        })
    };
    // Cluster events and time.
    let ticker = {
        let (q, stop, clock) = (q.clone(), stop.clone(), clock.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Acquire) {
                q.move_all_to_active_or_backoff(ClusterEvent::new(
                    EventResource::Node,
                    ActionType::ADD,
                ));
                clock.advance(Duration::from_millis(300));
                q.flush();
                std::thread::sleep(Duration::from_micros(200));
            }
        })
    };
    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            let q = q.clone();
            std::thread::spawn(move || {
                let mut rng = ChaCha8Rng::seed_from_u64(w as u64);
                let mut model = vec![Model::Absent; PODS_PER_WORKER];
                const GATES: [&str; 3] = ["g/a", "g/b", "g/c"];
                for _ in 0..per_worker {
                    let i = rng.random_range(0..PODS_PER_WORKER);
                    let name = format!("w{w}-{i}");
                    match model[i] {
                        Model::Absent => {
                            let n = rng.random_range(0..=3);
                            q.add(pod(&name, &GATES[..n]));
                            model[i] = Model::Exists(n);
                        }
                        Model::Exists(n) => {
                            if n > 0 && rng.random_bool(0.5) {
                                // Remove one gate (the last one when n == 1).
                                q.update(&pod(&name, &GATES[..n]), pod(&name, &GATES[..n - 1]));
                                model[i] = Model::Exists(n - 1);
                            } else if rng.random_bool(0.3) {
                                q.delete(&PodKey::new("stress", &name));
                                model[i] = Model::Absent;
                            } else {
                                // An update that changes nothing the queue cares about.
                                q.update(&pod(&name, &GATES[..n]), pod(&name, &GATES[..n]));
                            }
                        }
                    }
                }
                model
            })
        })
        .collect();
    let models: Vec<Vec<Model>> = workers.into_iter().map(|w| w.join().unwrap()).collect();
    stop.store(true, Ordering::Release);
    let popped = popper.join().unwrap();
    ticker.join().unwrap();
    assert!(popped > 0, "the scheduler thread popped nothing");

    // Check every pod against its model.
    let mut expected = (0usize, 0usize); // (existing, gated)
    let mut per_gate: AHashMap<&str, i64> = AHashMap::new();
    for (w, model) in models.iter().enumerate() {
        for (i, m) in model.iter().enumerate() {
            let key = PodKey::new("stress", &format!("w{w}-{i}"));
            let at = q.locate(&key);
            match *m {
                Model::Absent => assert_eq!(at, None, "{key} should be gone"),
                Model::Exists(0) => {
                    expected.0 += 1;
                    assert!(
                        matches!(at, Some("active" | "backoff" | "unschedulable")),
                        "{key}: {at:?}"
                    );
                }
                Model::Exists(n) => {
                    expected.0 += 1;
                    expected.1 += 1;
                    assert_eq!(at, Some("gated"), "{key} has {n} gates");
                    for g in &["g/a", "g/b", "g/c"][..n] {
                        *per_gate.entry(g).or_default() += 1;
                    }
                }
            }
        }
    }
    let c = q.counts();
    assert_eq!(c.in_flight, 0);
    assert_eq!(c.total(), expected.0, "{c:?}");
    assert_eq!(c.gated, expected.1);
    let mut want: Vec<(Arc<str>, i64)> = per_gate
        .into_iter()
        .map(|(k, v)| (Arc::from(k), v))
        .collect();
    want.sort();
    assert_eq!(q.gated_per_gate(), want);
}
