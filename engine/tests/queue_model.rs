//! A small sequential reference model of the queue semantics (reference §1, QueueingHints off
//! for the unschedulable pool), and proptest comparing random operation sequences against the
//! real `SchedulingQueue`: after every operation each pod must be where the model says.

use proptest::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tidegate_engine::api::{Pod, PodKey, PodSpecInfo, Sym};
use tidegate_engine::framework::events::{ActionType, ClusterEvent, EventResource};
use tidegate_engine::metrics::Metrics;
use tidegate_engine::queue::clock::{Clock, VirtualClock};
use tidegate_engine::queue::{QueueConfig, QueuedPodInfo, SchedulingQueue};

const GATES: [&str; 2] = ["g/a", "g/b"];

fn pod(i: u8, gates: usize) -> Arc<Pod> {
    let name = format!("p{i}");
    let spec = PodSpecInfo {
        scheduler_name: Sym::new("default-scheduler"),
        priority: i32::from(i % 3),
        scheduling_gates: GATES[..gates].iter().map(|g| Arc::from(*g)).collect(),
        ..Default::default()
    };
    Arc::new(Pod::new("m", &name, Arc::new(spec)))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Where {
    Active,
    Backoff(Duration),
    Unschedulable,
    Gated(usize),
    InFlight { cycle: i64, deleted: bool },
}

#[derive(Clone, Debug)]
struct MPod {
    at: Where,
    priority: i32,
    timestamp: Duration,
    attempts: u32,
}

/// The reference model.
#[derive(Default)]
struct Model {
    pods: BTreeMap<u8, MPod>,
    sched_cycle: i64,
    move_request_cycle: i64,
    next_backoff_flush: Duration,
    next_unsched_flush: Duration,
}

fn backoff(attempts: u32) -> Duration {
    if attempts == 0 {
        return Duration::ZERO;
    }
    (Duration::from_secs(1) * (1u32 << (attempts - 1).min(10))).min(Duration::from_secs(10))
}

impl Model {
    fn new() -> Model {
        Model {
            move_request_cycle: -1,
            next_backoff_flush: Duration::from_secs(1),
            next_unsched_flush: Duration::from_secs(30),
            ..Default::default()
        }
    }

    fn requeue(p: &mut MPod, now: Duration) {
        let exp = p.timestamp + backoff(p.attempts);
        p.at = if p.attempts > 0 && exp > now {
            Where::Backoff(exp)
        } else {
            Where::Active
        };
    }

    fn flush(&mut self, now: Duration) {
        if now >= self.next_backoff_flush {
            self.next_backoff_flush = now + Duration::from_secs(1);
            for p in self.pods.values_mut() {
                if let Where::Backoff(exp) = p.at
                    && exp <= now
                {
                    p.at = Where::Active;
                }
            }
        }
        if now >= self.next_unsched_flush {
            self.next_unsched_flush = now + Duration::from_secs(30);
            for p in self.pods.values_mut() {
                if p.at == Where::Unschedulable
                    && now.saturating_sub(p.timestamp) > Duration::from_secs(300)
                {
                    Self::requeue(p, now);
                }
            }
        }
    }

    fn pop(&mut self, now: Duration) -> Option<u8> {
        self.flush(now);
        let best = self
            .pods
            .iter()
            .filter(|(_, p)| p.at == Where::Active)
            .min_by_key(|(_, p)| (-p.priority, p.timestamp))
            .map(|(k, _)| *k)?;
        self.sched_cycle += 1;
        let p = self.pods.get_mut(&best).unwrap();
        p.attempts += 1;
        p.at = Where::InFlight {
            cycle: self.sched_cycle,
            deleted: false,
        };
        Some(best)
    }
}

#[derive(Clone, Debug)]
enum Op {
    Add(u8, usize),
    RemoveGate(u8),
    Delete(u8),
    Pop,
    /// Hand back the oldest in-flight pod: rejected by a plugin (true) or an error.
    Fail(bool),
    Bind,
    NodeAdd,
    Advance(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u8..12, 0usize..3).prop_map(|(i, g)| Op::Add(i, g)),
        2 => (0u8..12).prop_map(Op::RemoveGate),
        1 => (0u8..12).prop_map(Op::Delete),
        3 => Just(Op::Pop),
        2 => any::<bool>().prop_map(Op::Fail),
        1 => Just(Op::Bind),
        1 => Just(Op::NodeAdd),
        2 => prop_oneof![1u64..2_000, 2_000u64..400_000].prop_map(Op::Advance),
    ]
}

fn queue(clock: Arc<VirtualClock>) -> SchedulingQueue {
    // The model encodes the QueueingHints-off rules (move-request cycle) and the backoff of
    // kube before SchedulerPopFromBackoffQ (that gate's rules are unit-tested in
    // engine/src/queue/tests.rs).
    let cfg = QueueConfig {
        queueing_hints: false,
        pop_from_backoff: false,
        ..QueueConfig::default()
    };
    SchedulingQueue::gates_only(clock, Arc::new(Metrics::new()), cfg).with_plugin_events(
        "NodeResourcesFit",
        vec![ClusterEvent::new(EventResource::Node, ActionType::ADD)],
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 4 } else { 256 }, ..ProptestConfig::default() })]

    #[test]
    fn the_queue_matches_the_reference_model(ops in proptest::collection::vec(op(), 1..120)) {
        let clock = Arc::new(VirtualClock::new());
        let q = queue(clock.clone());
        let mut m = Model::new();
        let mut in_flight: Vec<(u8, QueuedPodInfo, i64)> = Vec::new();
        for op in ops {
            // Distinct timestamps: PrioritySort has no tie-break beyond the enqueue time.
            clock.advance(Duration::from_nanos(1));
            let now = clock.now();
            match op {
                Op::Add(i, g) => {
                    if let std::collections::btree_map::Entry::Vacant(e) = m.pods.entry(i) {
                        q.add(pod(i, g));
                        e.insert(MPod {
                            at: if g > 0 { Where::Gated(g) } else { Where::Active },
                            priority: i32::from(i % 3),
                            timestamp: now,
                            attempts: 0,
                        });
                    }
                }
                Op::RemoveGate(i) => {
                    if let Some(p) = m.pods.get_mut(&i)
                        && let Where::Gated(n) = p.at
                    {
                        q.update(&pod(i, n), pod(i, n - 1));
                        if n == 1 {
                            Model::requeue(p, now);
                        } else {
                            p.at = Where::Gated(n - 1);
                        }
                    }
                }
                Op::Delete(i) => {
                    if let Some(p) = m.pods.get_mut(&i) {
                        q.delete(&PodKey::new("m", &format!("p{i}")));
                        match &mut p.at {
                            Where::InFlight { deleted, .. } => *deleted = true,
                            _ => {
                                m.pods.remove(&i);
                            }
                        }
                    }
                }
                Op::Pop => {
                    let want = m.pop(now);
                    let got = q.try_pop();
                    prop_assert_eq!(got.as_ref().map(|x| x.pod.name.to_string()), want.map(|i| format!("p{i}")));
                    if let (Some(i), Some(info)) = (want, got) {
                        prop_assert_eq!(info.attempts, m.pods[&i].attempts);
                        in_flight.push((i, info, q.scheduling_cycle()));
                    }
                }
                Op::Fail(rejected) => {
                    if !in_flight.is_empty() {
                        let (i, mut info, cycle) = in_flight.remove(0);
                        if rejected {
                            info.unschedulable_plugins = vec!["NodeResourcesFit"];
                        }
                        q.add_unschedulable_if_not_present(info, cycle).unwrap();
                        let mrc = m.move_request_cycle;
                        let p = m.pods.get_mut(&i).unwrap();
                        let Where::InFlight { cycle: pc, deleted } = p.at else { panic!("not in flight") };
                        if deleted {
                            m.pods.remove(&i);
                        } else {
                            p.timestamp = now;
                            p.at = if !rejected || mrc >= pc {
                                Where::Backoff(now + backoff(p.attempts))
                            } else {
                                Where::Unschedulable
                            };
                        }
                    }
                }
                Op::Bind => {
                    if !in_flight.is_empty() {
                        let (i, info, _) = in_flight.remove(0);
                        q.done(&info.pod.key);
                        m.pods.remove(&i);
                    }
                }
                Op::NodeAdd => {
                    q.move_all_to_active_or_backoff(ClusterEvent::new(EventResource::Node, ActionType::ADD));
                    m.move_request_cycle = m.sched_cycle;
                    for p in m.pods.values_mut() {
                        if p.at == Where::Unschedulable {
                            Model::requeue(p, now);
                        }
                    }
                }
                Op::Advance(ms) => {
                    clock.advance(Duration::from_millis(ms));
                    q.flush();
                    m.flush(clock.now());
                }
            }
            // Compare every pod's place.
            for i in 0..12u8 {
                let at = q.locate(&PodKey::new("m", &format!("p{i}")));
                let want = m.pods.get(&i).map(|p| match p.at {
                    Where::Active => "active",
                    Where::Backoff(_) => "backoff",
                    Where::Unschedulable => "unschedulable",
                    Where::Gated(_) => "gated",
                    Where::InFlight { .. } => "in-flight",
                });
                prop_assert_eq!(at, want, "pod p{} after {:?}", i, op);
            }
        }
    }
}
