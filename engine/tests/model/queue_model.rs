//! A small sequential reference model of the queue semantics (reference §1, QueueingHints off
//! for the unschedulable pool), and [`check`], which runs an operation sequence on the real
//! `SchedulingQueue` and on the model side by side: after every operation each pod must be where
//! the model says. The model runs with `SchedulerPopFromBackoffQ` off and on (1 s expiry windows,
//! whole-second flushes, Pop from the rejection heap of backoffQ when activeQ is empty).
//!
//! Shared by `engine/tests/queue_model.rs` (proptest) and `fuzz/fuzz_targets/queue_ops.rs`
//! (cargo-fuzz), which both include this file with `#[path]`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tidegate_engine::QueuedPodInfo;
use tidegate_engine::api::{Pod, PodKey, PodSpecInfo, Sym};
use tidegate_engine::clock::{Clock, VirtualClock};
use tidegate_engine::metrics::Metrics;
use tidegate_engine::{ActionType, ClusterEvent, EventResource};
use tidegate_engine::{QueueConfig, SchedulingQueue};

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
    /// Expiry, and whether the pod was rejected by a plugin (else it failed with an error).
    Backoff(Duration, bool),
    Unschedulable,
    Gated(usize),
    InFlight {
        cycle: i64,
        deleted: bool,
    },
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
    /// SchedulerPopFromBackoffQ.
    pfb: bool,
}

fn window(t: Duration) -> Duration {
    Duration::from_secs(t.as_secs())
}

fn backoff(attempts: u32) -> Duration {
    if attempts == 0 {
        return Duration::ZERO;
    }
    (Duration::from_secs(1) * (1u32 << (attempts - 1).min(10))).min(Duration::from_secs(10))
}

impl Model {
    fn new(pfb: bool) -> Model {
        Model {
            pfb,
            move_request_cycle: -1,
            next_backoff_flush: Duration::from_secs(1),
            next_unsched_flush: Duration::from_secs(30),
            ..Default::default()
        }
    }

    fn expiry(&self, p: &MPod) -> Duration {
        let e = p.timestamp + backoff(p.attempts);
        if self.pfb { window(e) } else { e }
    }

    fn backing_off(&self, p: &MPod, now: Duration) -> bool {
        p.attempts > 0
            && if self.pfb {
                self.expiry(p) >= window(now)
            } else {
                self.expiry(p) > now
            }
    }

    /// A pod a move sends back (it was rejected by a plugin: it sat in the unschedulable pool).
    fn requeue(&self, p: &mut MPod, now: Duration) {
        p.at = if self.backing_off(p, now) {
            Where::Backoff(self.expiry(p), true)
        } else {
            Where::Active
        };
    }

    fn flush(&mut self, now: Duration) {
        if now >= self.next_backoff_flush {
            let limit = if self.pfb {
                self.next_backoff_flush = window(now) + Duration::from_secs(1);
                window(now)
            } else {
                self.next_backoff_flush = now + Duration::from_secs(1);
                now + Duration::from_nanos(1)
            };
            for p in self.pods.values_mut() {
                if let Where::Backoff(exp, _) = p.at
                    && exp < limit
                {
                    p.at = Where::Active;
                }
            }
        }
        if now >= self.next_unsched_flush {
            self.next_unsched_flush = now + Duration::from_secs(30);
            let stale: Vec<u8> = self
                .pods
                .iter()
                .filter(|(_, p)| {
                    p.at == Where::Unschedulable
                        && now.saturating_sub(p.timestamp) > Duration::from_secs(300)
                })
                .map(|(k, _)| *k)
                .collect();
            for k in stale {
                let mut p = self.pods[&k].clone();
                self.requeue(&mut p, now);
                self.pods.insert(k, p);
            }
        }
    }

    fn pop(&mut self, now: Duration) -> Option<u8> {
        self.flush(now);
        let active = self
            .pods
            .iter()
            .filter(|(_, p)| p.at == Where::Active)
            .min_by_key(|(_, p)| (-p.priority, p.timestamp))
            .map(|(k, _)| *k);
        // PopFromBackoffQ: with activeQ empty, the first pod of the rejection heap (expiry
        // window, then QueueSort).
        let from_backoff = || {
            self.pods
                .iter()
                .filter_map(|(k, p)| match p.at {
                    Where::Backoff(exp, true) => Some((k, exp, p)),
                    _ => None,
                })
                .min_by_key(|(_, exp, p)| (*exp, -p.priority, p.timestamp))
                .map(|(k, _, _)| *k)
        };
        let best = match active {
            Some(k) => k,
            None if self.pfb => from_backoff()?,
            None => return None,
        };
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
pub enum Op {
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

impl Op {
    /// Decodes one operation from two bytes (the fuzzer's form): the first picks the kind with
    /// the proptest strategy's weights, the second its argument.
    pub fn from_bytes(kind: u8, arg: u8) -> Op {
        match kind % 15 {
            0..=2 => Op::Add(arg % 12, usize::from(arg / 12 % 3)),
            3..=4 => Op::RemoveGate(arg % 12),
            5 => Op::Delete(arg % 12),
            6..=8 => Op::Pop,
            9..=10 => Op::Fail(arg.is_multiple_of(2)),
            11 => Op::Bind,
            12 => Op::NodeAdd,
            _ => Op::Advance(if arg < 128 {
                1 + u64::from(arg) * 15
            } else {
                2_000 + u64::from(arg - 128) * 3_100
            }),
        }
    }
}

fn queue(clock: Arc<VirtualClock>, pop_from_backoff: bool) -> SchedulingQueue {
    // The model encodes the QueueingHints-off rules (move-request cycle); backoff with
    // SchedulerPopFromBackoffQ as asked.
    let cfg = QueueConfig {
        queueing_hints: false,
        pop_from_backoff,
        ..QueueConfig::default()
    };
    SchedulingQueue::gates_only(clock, Arc::new(Metrics::new()), cfg).with_plugin_events(
        "NodeResourcesFit",
        vec![ClusterEvent::new(EventResource::Node, ActionType::ADD)],
    )
}

/// The fuzzer's form of [`check`]: the first byte picks SchedulerPopFromBackoffQ (odd: on),
/// then two bytes per operation ([`Op::from_bytes`]), at most 400 operations.
pub fn check_bytes(data: &[u8]) -> Result<(), String> {
    let Some((&first, rest)) = data.split_first() else {
        return Ok(());
    };
    let ops = rest
        .chunks_exact(2)
        .take(400)
        .map(|c| Op::from_bytes(c[0], c[1]))
        .collect();
    check(ops, first % 2 == 1)
}

/// Runs `ops` on the real queue and on the model side by side; the first place where they
/// disagree is the error.
pub fn check(ops: Vec<Op>, pfb: bool) -> Result<(), String> {
    {
        let clock = Arc::new(VirtualClock::new());
        let q = queue(clock.clone(), pfb);
        let mut m = Model::new(pfb);
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
                            at: if g > 0 {
                                Where::Gated(g)
                            } else {
                                Where::Active
                            },
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
                            let mut pp = p.clone();
                            m.requeue(&mut pp, now);
                            m.pods.insert(i, pp);
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
                    let got_name = got.as_ref().map(|x| x.pod.name.to_string());
                    let want_name = want.map(|i| format!("p{i}"));
                    if got_name != want_name {
                        return Err(format!("Pop: queue {got_name:?}, model {want_name:?}"));
                    }
                    if let (Some(i), Some(info)) = (want, got) {
                        if info.attempts != m.pods[&i].attempts {
                            return Err(format!(
                                "Pop p{i}: attempts {} in the queue, {} in the model",
                                info.attempts, m.pods[&i].attempts
                            ));
                        }
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
                        let mut p = m.pods[&i].clone();
                        let Where::InFlight { cycle: pc, deleted } = p.at else {
                            panic!("not in flight")
                        };
                        if deleted {
                            m.pods.remove(&i);
                        } else {
                            p.timestamp = now;
                            p.at = if !rejected || mrc >= pc {
                                Where::Backoff(m.expiry(&p), rejected)
                            } else {
                                Where::Unschedulable
                            };
                            m.pods.insert(i, p);
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
                    q.move_all_to_active_or_backoff(ClusterEvent::new(
                        EventResource::Node,
                        ActionType::ADD,
                    ));
                    m.move_request_cycle = m.sched_cycle;
                    let parked: Vec<u8> = m
                        .pods
                        .iter()
                        .filter(|(_, p)| p.at == Where::Unschedulable)
                        .map(|(k, _)| *k)
                        .collect();
                    for k in parked {
                        let mut p = m.pods[&k].clone();
                        m.requeue(&mut p, now);
                        m.pods.insert(k, p);
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
                    Where::Backoff(..) => "backoff",
                    Where::Unschedulable => "unschedulable",
                    Where::Gated(_) => "gated",
                    Where::InFlight { .. } => "in-flight",
                });
                if at != want {
                    return Err(format!(
                        "pod p{i} after {op:?}: queue {at:?}, model {want:?}"
                    ));
                }
            }
        }
    }
    Ok(())
}
