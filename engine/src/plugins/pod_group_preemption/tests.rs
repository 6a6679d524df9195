//! Ported from kubernetes/kubernetes pkg/scheduler/framework/preemption/podgrouppreemption_test.go (v1.37.2)
//!
//! The same harness as kube's: a Filter that fits pods by a `size` label (default 1) against a
//! node capacity looked up by name, and a scheduling function that places the preemptor's
//! members round-robin by the capacities' index, succeeding with at least `minCount` (1
//! without a gang policy). One case is left out: "Priority: StartTime of pods from same group
//! with disruption mode single" orders two equal victims by `status.startTime`, which
//! tidegate's pods do not carry (`victims` module doc).

use super::victims::{ListedGroups, cross_node_victims};
use super::*;
use crate::api::{
    DisruptionMode, LabelSelector, Labels, Node, Operator, PodGroupKey, PodGroupPolicy,
    PodSpecInfo, Requirement,
};
use crate::framework::{NodeInfo, Snapshot};
use std::collections::BTreeSet;

const LOW: i32 = 0;
const MID: i32 = 100;
const HIGH: i32 = 1000;

#[derive(Clone, Default)]
struct P {
    name: &'static str,
    node: &'static str,
    priority: i32,
    group: Option<&'static str>,
    size: Option<&'static str>,
    app_foo: bool,
    terminating: bool,
    preempt_never: bool,
    nominated: Option<&'static str>,
}

fn p(name: &'static str, node: &'static str, priority: i32) -> P {
    P {
        name,
        node,
        priority,
        ..P::default()
    }
}

impl P {
    fn group(mut self, g: &'static str) -> P {
        self.group = Some(g);
        self
    }
    fn size(mut self, s: &'static str) -> P {
        self.size = Some(s);
        self
    }
    fn app_foo(mut self) -> P {
        self.app_foo = true;
        self
    }
    fn terminating(mut self) -> P {
        self.terminating = true;
        self
    }
    fn never(mut self) -> P {
        self.preempt_never = true;
        self
    }
    fn nominated(mut self, n: &'static str) -> P {
        self.nominated = Some(n);
        self
    }
    fn build(&self) -> Arc<Pod> {
        let spec = PodSpecInfo {
            priority: self.priority,
            preempt_never: self.preempt_never,
            scheduling_group: self.group.map(Arc::from),
            ..PodSpecInfo::default()
        };
        let mut pod = Pod::new("default", self.name, Arc::new(spec));
        let mut labels = Vec::new();
        if let Some(s) = self.size {
            labels.push(("size", s));
        }
        if self.app_foo {
            labels.push(("app", "foo"));
        }
        pod.labels = Arc::new(Labels::from_pairs(labels));
        pod.node_name = (!self.node.is_empty()).then(|| Sym::new(self.node));
        pod.nominated_node_name = self.nominated.map(Sym::new);
        pod.deletion_timestamp = self.terminating;
        Arc::new(pod)
    }
}

fn pg(name: &str, priority: i32, mode: DisruptionMode, policy: PodGroupPolicy) -> Arc<PodGroup> {
    Arc::new(PodGroup {
        priority,
        disruption_mode: mode,
        ..PodGroup::new(PodGroupKey::new("default", name), policy)
    })
}

fn all(name: &str, priority: i32) -> Arc<PodGroup> {
    pg(name, priority, DisruptionMode::All, PodGroupPolicy::Basic)
}

fn single(name: &str, priority: i32) -> Arc<PodGroup> {
    pg(
        name,
        priority,
        DisruptionMode::Single,
        PodGroupPolicy::Basic,
    )
}

fn pdb_app_foo() -> Arc<PodDisruptionBudget> {
    Arc::new(PodDisruptionBudget {
        namespace: Sym::new("default"),
        name: Arc::from("pdb"),
        selector: Some(LabelSelector {
            requirements: vec![Requirement {
                key: Sym::new("app"),
                op: Operator::In,
                values: vec![Sym::new("foo")],
                int_value: 0,
            }],
        }),
        disruptions_allowed: 0,
        disrupted_pods: vec![],
    })
}

fn size_of(pod: &Pod) -> i64 {
    pod.labels
        .get(Sym::new("size"))
        .and_then(|s| s.to_string_lossy().parse().ok())
        .unwrap_or(1)
}

/// kube's test framework: the snapshot, `mockFilterPlugin` and `mockSchedulingFunc`.
struct MockHost {
    snapshot: Snapshot,
    /// (node, capacity) in the table's order.
    capacities: Vec<(&'static str, i64)>,
    preemptor: Vec<Arc<Pod>>,
    min_count: usize,
    schedule_calls: usize,
}

impl MockHost {
    fn new(nodes: &[&str], pods: &[Arc<Pod>], capacities: Vec<(&'static str, i64)>) -> MockHost {
        let mut snapshot = Snapshot::default();
        for (i, n) in nodes.iter().enumerate() {
            let mut ni = NodeInfo::new(Arc::new(Node::named(n)));
            for p in pods.iter().filter(|p| p.node_name == Some(Sym::new(n))) {
                ni.add_pod(p);
            }
            snapshot.index.insert(Sym::new(n), i);
            snapshot.nodes.push(Arc::new(ni));
        }
        MockHost {
            snapshot,
            capacities,
            preemptor: vec![],
            min_count: 1,
            schedule_calls: 0,
        }
    }

    fn used(&self, node: Sym) -> i64 {
        self.snapshot
            .get(node)
            .map_or(0, |ni| ni.pods.iter().map(|p| size_of(p)).sum())
    }

    fn node_mut(&mut self, node: Sym) -> Result<&mut NodeInfo, String> {
        let i = *self
            .snapshot
            .index
            .get(&node)
            .ok_or_else(|| format!("node {node:?} not in the snapshot"))?;
        Ok(Arc::make_mut(&mut self.snapshot.nodes[i]))
    }
}

impl DomainHost for MockHost {
    fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }
    fn remove_pod(&mut self, pod: &Pod, node: Sym) -> Result<(), String> {
        self.node_mut(node)?.remove_pod(pod);
        Ok(())
    }
    fn add_pod(&mut self, pod: &Arc<Pod>, node: Sym) -> Result<(), String> {
        self.node_mut(node)?.add_pod(pod);
        Ok(())
    }
    fn pre_filter_add_pod(&self, _: &mut CycleState, _: &Pod, _: &Pod, _: Sym) -> Status {
        Status::success()
    }
    fn pre_filter_remove_pod(&self, _: &mut CycleState, _: &Pod, _: &Pod, _: Sym) -> Status {
        Status::success()
    }
    fn filter(&self, _: &CycleState, pod: &Pod, node: Sym) -> Status {
        let cap = self
            .capacities
            .iter()
            .find(|(n, _)| Sym::new(n) == node)
            .map_or(0, |&(_, c)| c);
        if self.used(node) + size_of(pod) > cap {
            Status::new(Code::Unschedulable, "not enough capacity")
        } else {
            Status::success()
        }
    }
    fn schedule(&mut self) -> (Vec<Assignment>, Status) {
        self.schedule_calls += 1;
        let nodes: Vec<Sym> = self.snapshot.nodes.iter().map(|n| n.name()).collect();
        let mut used: Vec<i64> = nodes.iter().map(|&n| self.used(n)).collect();
        let mut out = Vec::new();
        let mut next = 0;
        for pod in &self.preemptor {
            for step in 0..nodes.len() {
                let i = (next + step) % nodes.len();
                if used[i] + size_of(pod) <= self.capacities[i].1 {
                    out.push(Assignment {
                        pod: pod.clone(),
                        node: nodes[i],
                        state: CycleState::new(),
                    });
                    used[i] += size_of(pod);
                    next = (i + 1) % nodes.len();
                    break;
                }
            }
        }
        if out.len() >= self.min_count {
            (out, Status::success())
        } else {
            (Vec::new(), Status::new(Code::Unschedulable, "gang"))
        }
    }
}

struct Case {
    name: &'static str,
    nodes: &'static [&'static str],
    pods: Vec<P>,
    groups: Vec<Arc<PodGroup>>,
    /// The preemptor group's priority and gang minCount (`None`: basic).
    preemptor: (i32, Option<i32>),
    members: Vec<P>,
    pdb: bool,
    capacities: Vec<(&'static str, i64)>,
    /// `None`: UnschedulableAndUnresolvable.
    want: Option<&'static [&'static str]>,
    groups_disrupted: usize,
    pdb_violations: usize,
}

fn case(name: &'static str, nodes: &'static [&'static str]) -> Case {
    Case {
        name,
        nodes,
        pods: vec![],
        groups: vec![],
        preemptor: (HIGH, None),
        members: vec![p("p", "", HIGH)],
        pdb: false,
        capacities: vec![],
        want: Some(&[]),
        groups_disrupted: 0,
        pdb_violations: 0,
    }
}

fn caps(c: &[(&'static str, i64)]) -> Vec<(&'static str, i64)> {
    c.to_vec()
}

fn cases() -> Vec<Case> {
    let one_each = |n: &[&'static str]| n.iter().map(|&x| (x, 1)).collect::<Vec<_>>();
    let three = &["node1", "node2", "node3"][..];
    let four = &["node1", "node2", "node3", "node4"][..];
    vec![
        Case {
            pods: vec![
                p("p1", "node1", LOW).size("1"),
                p("p2", "node1", LOW).size("1").group("pg1"),
            ],
            groups: vec![single("pg1", LOW)],
            members: vec![p("p", "", HIGH).size("1")],
            capacities: caps(&[("node1", 2)]),
            // p1 is less important than p2: it is in no pod group.
            want: Some(&["p1"]),
            ..case("Priority: mix of no groups and pod groups", &["node1"])
        },
        Case {
            pods: vec![
                p("p1", "node1", LOW).group("pg1"),
                p("p2", "node2", LOW).group("pg1"),
            ],
            groups: vec![all("pg1", LOW)],
            capacities: caps(&[("node1", 1), ("node2", 1)]),
            want: Some(&["p1", "p2"]),
            groups_disrupted: 1,
            ..case(
                "Pod group with disruption mode group not reprieved",
                &["node1", "node2"],
            )
        },
        Case {
            pods: vec![
                p("p1", "node1", LOW).group("pg1"),
                p("p2", "node2", LOW).group("pg1"),
                p("p3", "node3", LOW).group("pg2"),
                p("p4", "node4", MID),
                p("p5", "node5", HIGH).group("pg3"),
            ],
            groups: vec![single("pg1", LOW), single("pg2", LOW), single("pg3", HIGH)],
            members: vec![p("p-1", "", HIGH), p("p-2", "", HIGH), p("p-3", "", HIGH)],
            capacities: caps(&[
                ("node1", 2),
                ("node2", 1),
                ("node3", 2),
                ("node4", 2),
                ("node5", 2),
            ]),
            want: Some(&["p2"]),
            groups_disrupted: 1,
            ..case(
                "Complex Mixed: Shared, different, and no groups",
                &["node1", "node2", "node3", "node4", "node5"],
            )
        },
        Case {
            pods: vec![
                p("victim-pdb", "node1", LOW).app_foo().group("pg1"),
                p("victim-no-pdb", "node1", LOW).group("pg1"),
            ],
            pdb: true,
            capacities: caps(&[("node1", 2)]),
            want: Some(&["victim-no-pdb"]),
            groups_disrupted: 1,
            ..case("PDB: Mixed groups", &["node1"])
        },
        Case {
            pods: vec![
                p("p1", "node1", LOW),
                p("p2", "node2", LOW).group("pg1"),
                p("p3", "node3", LOW).group("pg2"),
            ],
            members: vec![p("p-1", "", HIGH)],
            capacities: one_each(three),
            want: Some(&["p1"]),
            ..case(
                "PodGroup preemptor with PreemptLowerPriority preemption policy performs preemption",
                three,
            )
        },
        Case {
            pods: vec![
                p("victim", "node2", LOW).terminating(),
                p("other-victim", "node1", LOW),
            ],
            members: vec![p("p1", "", HIGH), p("p2", "", HIGH).nominated("node1")],
            capacities: caps(&[("node1", 1), ("node2", 1)]),
            want: Some(&["other-victim", "victim"]),
            ..case(
                "Preemptor group is eligible if terminating pods are on non-nominated nodes",
                &["node1", "node2"],
            )
        },
        Case {
            pods: vec![
                p("victim", "node1", LOW).group("victim-pg").terminating(),
                p("other-victim", "node1", LOW),
            ],
            groups: vec![all("victim-pg", HIGH)],
            preemptor: (MID, None),
            members: vec![p("p1", "", MID), p("p2", "", MID).nominated("node1")],
            capacities: caps(&[("node1", 2), ("node2", 1)]),
            want: Some(&["other-victim"]),
            ..case(
                "Preemptor group is eligible if nominated node has terminating pod belonging to a pod group of higher priority",
                &["node1", "node2"],
            )
        },
        Case {
            pods: vec![
                p("victim", "node1", LOW).group("victim-pg").terminating(),
                p("other-victim", "node1", LOW),
            ],
            groups: vec![single("victim-pg", HIGH)],
            preemptor: (MID, None),
            members: vec![p("p1", "", MID), p("p2", "", MID).nominated("node1")],
            capacities: caps(&[("node1", 2), ("node2", 1)]),
            want: Some(&["other-victim"]),
            ..case(
                "Preemptor group is eligible if nominated node has terminating pod belonging to a pod group of higher priority with nil DisruptionMode",
                &["node1", "node2"],
            )
        },
        Case {
            pods: vec![p("p1", "node1", LOW)],
            capacities: caps(&[("node1", 1)]),
            want: Some(&["p1"]),
            ..case("Preempt single lower priority pod", &["node1"])
        },
        Case {
            pods: vec![
                p("p1", "node1", LOW),
                p("p2", "node1", MID),
                p("p3", "node1", HIGH),
            ],
            capacities: caps(&[("node1", 2)]),
            want: Some(&["p1", "p2"]),
            ..case("Priority: Prefer lower priority victim", &["node1"])
        },
        Case {
            pods: vec![
                p("p1", "node1", LOW),
                p("p2", "node1", LOW),
                p("p3", "node1", LOW),
                p("p4", "node1", LOW),
            ],
            capacities: caps(&[("node1", 3)]),
            // Equal victims are reprieved in key order (kube: by start time).
            want: Some(&["p3", "p4"]),
            ..case("Efficiency: Preempt minimum number of victims", &["node1"])
        },
        Case {
            pods: vec![
                p("victim-pdb", "node1", LOW).app_foo(),
                p("victim-no-pdb", "node1", LOW),
            ],
            pdb: true,
            capacities: caps(&[("node1", 2)]),
            want: Some(&["victim-no-pdb"]),
            ..case("PDB: Prefer non-violating victim", &["node1"])
        },
        Case {
            pods: vec![
                p("victim-pdb", "node1", LOW).app_foo(),
                p("victim-no-pdb", "node1", MID),
            ],
            pdb: true,
            capacities: caps(&[("node1", 2)]),
            want: Some(&["victim-no-pdb"]),
            ..case(
                "PDB: Prefer removing non-violating victim over lower priority violating victim",
                &["node1"],
            )
        },
        Case {
            pods: vec![
                p("p1", "node1", LOW),
                p("p2", "node2", LOW).group("pg1"),
                p("p3", "node3", LOW).group("pg2"),
            ],
            groups: vec![single("pg1", LOW), single("pg2", LOW)],
            members: vec![p("p-1", "", HIGH)],
            capacities: one_each(three),
            want: Some(&["p1"]),
            ..case(
                "PodGroup preemptor with PreemptLowerPriority preemption policy performs preemption with PodGroup victims",
                three,
            )
        },
        Case {
            pods: vec![
                p("p1", "node1", LOW),
                p("p2", "node2", LOW).group("pg1"),
                p("p3", "node3", LOW).group("pg2"),
            ],
            groups: vec![single("pg1", LOW), single("pg2", LOW)],
            members: vec![p("p-1", "", HIGH).never()],
            capacities: one_each(three),
            want: Some(&["p1"]),
            ..case(
                "PodGroup preemptor with PreemptLowerPriority preemption policy performs preemption with PodGroup victims, ignoring member pod preemption policy",
                three,
            )
        },
        Case {
            pods: vec![
                p("p1", "node1", LOW).app_foo(),
                p("p2", "node1", MID).app_foo(),
            ],
            pdb: true,
            capacities: caps(&[("node1", 2)]),
            want: Some(&["p1"]),
            pdb_violations: 1,
            ..case(
                "PDB: Prefer lower priority pod for preemption, when preemption without pdb violation is not possible",
                &["node1"],
            )
        },
        Case {
            pods: vec![
                p("p1", "node1", LOW).group("pg1"),
                p("p2", "node2", LOW).group("pg1"),
            ],
            groups: vec![all("pg1", LOW)],
            // As kube's table: the second entry names node1 again, so Filter finds no
            // capacity for node2 while the scheduling function reads 2 for it by index.
            capacities: caps(&[("node1", 1), ("node1", 2)]),
            want: Some(&["p1", "p2"]),
            groups_disrupted: 1,
            ..case("PodGroup: Preempt group as a whole", &["node1", "node2"])
        },
        Case {
            pods: vec![
                p("p1", "node1", LOW),
                p("g1-1", "node1", LOW).group("pg1"),
                p("g1-2", "node1", LOW).group("pg1"),
            ],
            groups: vec![all("pg1", LOW)],
            capacities: caps(&[("node1", 3)]),
            want: Some(&["p1"]),
            ..case(
                "PodGroup: Prefer single pod over podGroup for preemption candidate",
                &["node1"],
            )
        },
        Case {
            pods: vec![
                p("g1-1", "node1", LOW).group("pg1"),
                p("g1-2", "node1", LOW).group("pg1"),
                p("p1", "node1", MID),
            ],
            groups: vec![all("pg1", LOW)],
            capacities: caps(&[("node1", 3)]),
            want: Some(&["g1-1", "g1-2"]),
            groups_disrupted: 1,
            ..case(
                "PodGroup: Preempt group as a whole on single node",
                &["node1"],
            )
        },
        Case {
            pods: vec![
                p("g1-1", "node1", LOW).app_foo().group("pg1"),
                p("g1-2", "node1", LOW).group("pg1"),
                p("p1", "node1", LOW),
            ],
            groups: vec![all("pg1", LOW)],
            pdb: true,
            capacities: caps(&[("node1", 3)]),
            want: Some(&["p1"]),
            ..case("PDB: Unit violation if any member violates", &["node1"])
        },
        Case {
            pods: vec![p("p1", "node1", HIGH)],
            preemptor: (MID, None),
            members: vec![p("p", "", MID)],
            capacities: caps(&[("node1", 100)]),
            want: None,
            ..case(
                "Failure: Cannot preempt the victim with higher priority",
                &["node1"],
            )
        },
        Case {
            pods: vec![p("p1", "node1", MID)],
            preemptor: (MID, None),
            members: vec![p("p", "", MID)],
            capacities: caps(&[("node1", 100)]),
            want: None,
            ..case(
                "Failure: Cannot preempt the victim with equal priority",
                &["node1"],
            )
        },
        Case {
            preemptor: (MID, None),
            members: vec![p("p", "", MID)],
            capacities: caps(&[("node1", 100)]),
            want: None,
            ..case("Failure: Cannot preempt if node is empty", &["node1"])
        },
        Case {
            pods: vec![
                p("p1", "node1", HIGH).group("pg1"),
                p("p2", "node2", HIGH).group("pg1"),
            ],
            groups: vec![all("pg1", MID)],
            capacities: caps(&[("node1", 1), ("node2", 1)]),
            want: Some(&["p1", "p2"]),
            groups_disrupted: 1,
            ..case(
                "Priority divergence: candidate victim PodGroup has lower priority than the Pods from that group",
                &["node1", "node2"],
            )
        },
        Case {
            pods: vec![
                p("p1", "node1", LOW).group("pg1"),
                p("p2", "node2", LOW).group("pg1"),
            ],
            groups: vec![all("pg1", MID)],
            preemptor: (MID, None),
            members: vec![p("p", "", MID)],
            capacities: caps(&[("node1", 1), ("node2", 1)]),
            want: None,
            ..case(
                "Priority divergence: candidate victim PodGroup has higher priority than the Pods from that group",
                &["node1", "node2"],
            )
        },
        Case {
            pods: vec![
                p("p1", "node1", LOW),
                p("p2", "node2", LOW),
                p("p3", "node3", HIGH),
                p("p4", "node4", HIGH),
            ],
            preemptor: (HIGH, Some(1)),
            members: vec![p("p-a", "", HIGH), p("p-b", "", HIGH), p("p-c", "", HIGH)],
            capacities: one_each(four),
            want: Some(&["p1", "p2"]),
            ..case(
                "Gang scheduling: schedule as many pods as possible without preempting higher priority pods, but still more than minCount",
                four,
            )
        },
        Case {
            pods: vec![
                p("v1", "node1", MID).group("victim-pg"),
                p("v2", "node2", MID).group("victim-pg"),
                p("v3", "node3", LOW),
            ],
            groups: vec![pg(
                "victim-pg",
                MID,
                DisruptionMode::All,
                PodGroupPolicy::Gang { min_count: 1 },
            )],
            preemptor: (HIGH, Some(1)),
            members: vec![p("p-a", "", HIGH), p("p-b", "", HIGH), p("p-c", "", HIGH)],
            capacities: one_each(three),
            want: Some(&["v1", "v2", "v3"]),
            groups_disrupted: 1,
            ..case(
                "Gang scheduling: do not reprieve victim pod group of lower priority",
                three,
            )
        },
        Case {
            pods: vec![
                p("v1", "node1", MID).group("victim-pg"),
                p("v2", "node2", MID).group("victim-pg"),
                p("v3", "node3", HIGH).group("victim-pg2"),
                p("v4", "node4", HIGH).group("victim-pg2"),
            ],
            groups: vec![
                pg(
                    "victim-pg",
                    MID,
                    DisruptionMode::All,
                    PodGroupPolicy::Gang { min_count: 2 },
                ),
                pg(
                    "victim-pg2",
                    HIGH,
                    DisruptionMode::All,
                    PodGroupPolicy::Gang { min_count: 2 },
                ),
            ],
            preemptor: (HIGH, Some(1)),
            members: vec![p("p-a", "", HIGH), p("p-b", "", HIGH), p("p-c", "", HIGH)],
            capacities: one_each(four),
            want: Some(&["v1", "v2"]),
            groups_disrupted: 1,
            ..case(
                "Gang scheduling: preempt a pod group victim but do not schedule full pod group",
                four,
            )
        },
        Case {
            pods: vec![
                p("p1", "node1", LOW),
                p("p2", "node2", LOW),
                p("p3", "node3", HIGH),
                p("p4", "node4", HIGH),
            ],
            members: vec![p("p-a", "", HIGH), p("p-b", "", HIGH), p("p-c", "", HIGH)],
            capacities: one_each(four),
            want: Some(&["p1", "p2"]),
            ..case(
                "Basic scheduling: schedule as many pods as possible without preempting higher priority pods",
                four,
            )
        },
        Case {
            pods: vec![
                p("v1", "node1", MID).group("victim-pg"),
                p("v2", "node2", MID).group("victim-pg"),
                p("v3", "node3", LOW),
            ],
            groups: vec![pg(
                "victim-pg",
                MID,
                DisruptionMode::All,
                PodGroupPolicy::Gang { min_count: 1 },
            )],
            members: vec![p("p-a", "", HIGH), p("p-b", "", HIGH), p("p-c", "", HIGH)],
            capacities: one_each(three),
            want: Some(&["v1", "v2", "v3"]),
            groups_disrupted: 1,
            ..case(
                "Basic scheduling: do not reprieve victim pod group of lower priority",
                three,
            )
        },
        Case {
            pods: vec![
                p("v1", "node1", MID).group("victim-pg"),
                p("v2", "node2", MID).group("victim-pg"),
                p("v3", "node3", HIGH).group("victim-pg2"),
                p("v4", "node4", HIGH).group("victim-pg2"),
            ],
            groups: vec![
                pg(
                    "victim-pg",
                    MID,
                    DisruptionMode::All,
                    PodGroupPolicy::Gang { min_count: 2 },
                ),
                pg(
                    "victim-pg2",
                    HIGH,
                    DisruptionMode::All,
                    PodGroupPolicy::Gang { min_count: 2 },
                ),
            ],
            members: vec![p("p-a", "", HIGH), p("p-b", "", HIGH), p("p-c", "", HIGH)],
            capacities: one_each(four),
            want: Some(&["v1", "v2"]),
            groups_disrupted: 1,
            ..case(
                "Basic scheduling: preempt a pod group victim but do not schedule full pod group",
                four,
            )
        },
    ]
}

#[test]
fn select_victims_on_domain_follows_kube_table() {
    for c in cases() {
        let pods: Vec<Arc<Pod>> = c.pods.iter().map(P::build).collect();
        let mut host = MockHost::new(c.nodes, &pods, c.capacities.clone());
        host.preemptor = c.members.iter().map(P::build).collect();
        host.min_count = c.preemptor.1.unwrap_or(1) as usize;
        let lookup = ListedGroups(c.groups.clone());
        let preemptor = PodGroupPreemptor {
            priority: c.preemptor.0,
            pods: host.preemptor.clone(),
            preempt_never: false,
        };
        let pdbs = if c.pdb { vec![pdb_app_foo()] } else { vec![] };
        let snap = &host.snapshot;
        let all = cross_node_victims(snap.nodes.iter().map(|n| &**n), snap, Some(&lookup));
        let got =
            select_victims_on_domain(&mut host, &preemptor, all, &pdbs, &more_important_victim);
        match (c.want, got) {
            (None, Err(st)) => assert_eq!(
                st.code(),
                Code::UnschedulableAndUnresolvable,
                "{}: {st:?}",
                c.name
            ),
            (None, Ok(r)) => panic!("{}: want a failure, got {:?}", c.name, r.pods),
            (Some(_), Err(st)) => panic!("{}: unexpected {st:?}", c.name),
            (Some(want), Ok(r)) => {
                let got: BTreeSet<&str> = r.pods.iter().map(|p| &*p.name).collect();
                let want: BTreeSet<&str> = want.iter().copied().collect();
                assert_eq!(got, want, "{}", c.name);
                assert_eq!(
                    r.num_pod_group_disruptions, c.groups_disrupted,
                    "{}: group disruptions",
                    c.name
                );
                assert_eq!(
                    r.num_pdb_violations, c.pdb_violations,
                    "{}: PDB violations",
                    c.name
                );
            }
        }
    }
}

/// Every table case leaves the snapshot as it found it apart from the victims removed
/// (kube's caller restores it; here the reprieve's own assumptions must be undone).
#[test]
fn the_reprieve_undoes_its_assumed_members() {
    let pods: Vec<Arc<Pod>> = [p("p1", "node1", LOW), p("p2", "node1", LOW)]
        .iter()
        .map(P::build)
        .collect();
    let mut host = MockHost::new(&["node1"], &pods, caps(&[("node1", 3)]));
    host.preemptor = vec![p("a", "", HIGH).build(), p("b", "", HIGH).build()];
    let preemptor = PodGroupPreemptor {
        priority: HIGH,
        pods: host.preemptor.clone(),
        preempt_never: false,
    };
    let none = ListedGroups(vec![]);
    let snap = &host.snapshot;
    let all = cross_node_victims(snap.nodes.iter().map(|n| &**n), snap, Some(&none));
    let r =
        select_victims_on_domain(&mut host, &preemptor, all, &[], &more_important_victim).unwrap();
    assert_eq!(r.pods.len(), 1);
    let left: Vec<&str> = host.snapshot.nodes[0]
        .pods
        .iter()
        .map(|p| &*p.name)
        .collect();
    assert_eq!(
        left,
        ["p1"],
        "the reprieved victim is back, the members are not"
    );
    assert_eq!(host.schedule_calls, 1);
}

// Ported from kubernetes/kubernetes pkg/scheduler/framework/preemption/podgrouppreemption_test.go (v1.37.2)
// (TestPodGroupEvaluator_SelectVictimsOnDomain_NominatedNodes): a member the algorithm could
// not place is not nominated.
#[test]
fn only_assigned_members_are_nominated() {
    let pods = vec![p("p3", "node1", LOW).build()];
    let mut host = MockHost::new(&["node1"], &pods, caps(&[("node1", 1)]));
    host.preemptor = vec![p("p1", "", HIGH).build(), p("p2", "", HIGH).build()];
    let preemptor = PodGroupPreemptor {
        priority: HIGH,
        pods: host.preemptor.clone(),
        preempt_never: false,
    };
    let none = ListedGroups(vec![]);
    let snap = &host.snapshot;
    let all = cross_node_victims(snap.nodes.iter().map(|n| &**n), snap, Some(&none));
    let r =
        select_victims_on_domain(&mut host, &preemptor, all, &[], &more_important_victim).unwrap();
    assert_eq!(
        r.nominations,
        vec![(PodKey::new("default", "p1"), Sym::new("node1"))]
    );
}

// Ported from kubernetes/kubernetes pkg/scheduler/framework/preemption/podgrouppreemption_test.go (v1.37.2)
// (TestPodGroupEvaluator_Preempt, with PodGroupPreemptionPolicy on).
#[test]
fn preempt_checks_policy_and_ongoing_preemption_first() {
    struct Pre {
        name: &'static str,
        pods: Vec<P>,
        groups: Vec<Arc<PodGroup>>,
        group_never: bool,
        members: Vec<P>,
        /// `Some`: Ongoing with these nominations; `None`: not eligible.
        want: Option<Vec<(&'static str, &'static str)>>,
    }
    let pending = || vec![p("p1", "", HIGH), p("p2", "", HIGH).nominated("node1")];
    let noms = || Some(vec![("p1", ""), ("p2", "node1")]);
    let three_pods = || {
        vec![
            p("p1", "node1", LOW),
            p("p2", "node2", LOW).group("pg1"),
            p("p3", "node3", LOW).group("pg2"),
        ]
    };
    let cases = vec![
        Pre {
            name: "Preemptor group returns success with current nominating infos if member has nominated node with terminating pods",
            pods: vec![p("victim", "node1", LOW).terminating()],
            groups: vec![],
            group_never: false,
            members: pending(),
            want: noms(),
        },
        Pre {
            name: "Preemptor group returns success with current nominating infos if nominated node has terminating pod belonging to a pod group of lower priority",
            pods: vec![p("victim", "node1", HIGH).group("victim-pg").terminating()],
            groups: vec![all("victim-pg", LOW)],
            group_never: false,
            members: pending(),
            want: noms(),
        },
        Pre {
            name: "Preemptor group returns success with current nominating infos if nominated node has terminating pod belonging to a pod group of lower priority with DisruptionModePod",
            pods: vec![p("victim", "node1", HIGH).group("victim-pg").terminating()],
            groups: vec![single("victim-pg", LOW)],
            group_never: false,
            members: pending(),
            want: noms(),
        },
        Pre {
            name: "PodGroup preemptor with PreemptNever policy does not perform preemption",
            pods: three_pods(),
            groups: vec![],
            group_never: true,
            members: vec![p("p-1", "", HIGH), p("p-2", "", HIGH)],
            want: None,
        },
        Pre {
            name: "PodGroup preemptor with PreemptNever preemption policy does not perform preemption with PodGroup victims",
            pods: three_pods(),
            groups: vec![single("pg1", LOW), single("pg2", LOW)],
            group_never: true,
            members: vec![p("p-1", "", HIGH), p("p-2", "", HIGH)],
            want: None,
        },
    ];
    for c in cases {
        let pods: Vec<Arc<Pod>> = c.pods.iter().map(P::build).collect();
        let nodes: &[&str] = if c.pods.len() == 3 {
            &["node1", "node2", "node3"]
        } else {
            &["node1"]
        };
        let mut host = MockHost::new(nodes, &pods, caps(&[("node1", 1)]));
        let mut group = (*pg(
            "preemptor-pg",
            HIGH,
            DisruptionMode::Single,
            PodGroupPolicy::Basic,
        ))
        .clone();
        group.preemption_policy_set = c.group_never;
        group.preempt_never = c.group_never;
        let members: Vec<Arc<Pod>> = c.members.iter().map(P::build).collect();
        let preemptor = PodGroupPreemptor::new(Some(&group), members, true);
        let lookup = ListedGroups(c.groups.clone());
        let got = evaluate(&mut host, &preemptor, &lookup, &[]);
        assert_eq!(
            host.schedule_calls, 0,
            "{}: the algorithm must not rerun",
            c.name
        );
        match (c.want, got) {
            (None, Err(st)) => {
                assert_eq!(st.code(), Code::Unschedulable, "{}", c.name);
                assert_eq!(st.message(), "not eligible due to preemptionPolicy=Never.");
            }
            (Some(want), Ok(Outcome::Ongoing(got))) => {
                let want: Vec<(PodKey, Sym)> = want
                    .iter()
                    .map(|(p, n)| (PodKey::new("default", p), Sym::new(n)))
                    .collect();
                assert_eq!(got, want, "{}", c.name);
            }
            (w, g) => panic!("{}: want {w:?}, got {g:?}", c.name),
        }
    }
}

// The preemptor's policy (kube's resolvePreemptionPolicy): the group's own with
// PodGroupPreemptionPolicy on, any member's Never with it off.
#[test]
fn preemption_policy_resolves_as_kube() {
    let mut g = (*single("g", HIGH)).clone();
    let never_member = vec![p("m", "", HIGH).never().build()];
    let plain_member = vec![p("m", "", HIGH).build()];
    assert!(!PodGroupPreemptor::new(Some(&g), never_member.clone(), true).preempt_never);
    assert!(PodGroupPreemptor::new(Some(&g), never_member.clone(), false).preempt_never);
    g.preemption_policy_set = true;
    g.preempt_never = true;
    assert!(PodGroupPreemptor::new(Some(&g), plain_member.clone(), true).preempt_never);
    assert!(!PodGroupPreemptor::new(Some(&g), plain_member, false).preempt_never);
    assert_eq!(
        PodGroupPreemptor::new(Some(&g), never_member, true).priority,
        HIGH
    );
}
