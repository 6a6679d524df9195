// Ported from kubernetes/kubernetes pkg/scheduler/framework/plugins/gangscheduling/gangscheduling_test.go (v1.37.2)
// (TestPlacementFeasible, Test_isSchedulableAfterPodAdded, Test_isSchedulableAfterPodGroupAdded,
// Test_isSchedulableAfterPodGroupUpdated: the rows without composite pod groups; PreEnqueue
// and Permit from TestGangSchedulingFlow's steps).

use super::*;
use crate::api::{PodGroupKey, PodSpecInfo};
use crate::framework::events::ApiObject;

fn group(ns: &str, name: &str, policy: PodGroupPolicy) -> Arc<PodGroup> {
    Arc::new(PodGroup {
        uid: Arc::from(format!("uid-{name}")),
        ..PodGroup::new(PodGroupKey::new(ns, name), policy)
    })
}

fn pod(ns: &str, name: &str, group: Option<&str>, node: Option<&str>) -> Arc<Pod> {
    let spec = PodSpecInfo {
        scheduling_group: group.map(Arc::from),
        ..Default::default()
    };
    let mut p = Pod::new(ns, name, Arc::new(spec));
    p.node_name = node.map(Sym::new);
    Arc::new(p)
}

fn gang(min_count: i32) -> PodGroupPolicy {
    PodGroupPolicy::Gang { min_count }
}

#[test]
fn placement_feasible_table() {
    use Code::*;
    // (name, minCount (0: basic), childrenCount, podStatuses, expectedStatuses, initialScheduledCount)
    type Case<'a> = (&'a str, i32, usize, &'a [Code], &'a [Code], usize);
    let cases: &[Case] = &[
        (
            "All pods succeed, minCount met at end",
            2,
            2,
            &[Success, Success],
            &[Wait, Success],
            0,
        ),
        (
            "First pod fails, minCount not satisfiable",
            3,
            3,
            &[Unschedulable],
            &[Unschedulable],
            0,
        ),
        (
            "Second pod fails, minCount not satisfiable",
            2,
            2,
            &[Success, Unschedulable],
            &[Wait, Unschedulable],
            0,
        ),
        (
            "Non-gang pod group with 0 scheduled pods fails",
            0,
            1,
            &[Unschedulable],
            &[Unschedulable],
            0,
        ),
        (
            "Non-gang pod group with succeeds once 1 pod is scheduled",
            0,
            1,
            &[Success],
            &[Success],
            0,
        ),
        (
            "Non-gang pod group with 1 initially scheduled pod succeeds",
            0,
            1,
            &[Unschedulable],
            &[Success],
            1,
        ),
        (
            "More than minCount pods, all succeed",
            2,
            3,
            &[Success, Success, Success],
            &[Wait, Success, Success],
            0,
        ),
        (
            "More than minCount pods, first fails",
            2,
            3,
            &[Unschedulable, Success, Success],
            &[Wait, Wait, Success],
            0,
        ),
        (
            "More than minCount pods, minCount not satisfiable",
            2,
            3,
            &[Unschedulable, Unschedulable],
            &[Wait, Unschedulable],
            0,
        ),
        (
            "1 pod scheduled, 2 unscheduled pods succeed, minCount 3 met",
            3,
            2,
            &[Success, Success],
            &[Wait, Success],
            1,
        ),
        (
            "minCount already met by scheduled pods",
            2,
            1,
            &[Unschedulable],
            &[Success],
            2,
        ),
        (
            "1 pod scheduled, minCount 3, first unscheduled fails, not enough remaining",
            3,
            2,
            &[Unschedulable],
            &[Unschedulable],
            1,
        ),
        (
            "1 pod scheduled, minCount 4, first unscheduled succeeds, not enough remaining",
            4,
            2,
            &[Success],
            &[Unschedulable],
            1,
        ),
    ];
    let pl = GangScheduling::new(WaitingPods::new());
    for &(name, min, children, statuses, want, initial) in cases {
        let policy = if min > 0 {
            gang(min)
        } else {
            PodGroupPolicy::Basic
        };
        let info = PodGroupInfo::new(
            PodGroupKey::new("default", "test-pg"),
            Some(group("default", "test-pg", policy)),
        );
        let mut scheduled = initial;
        for (i, code) in statuses.iter().enumerate() {
            if *code == Success {
                scheduled += 1;
            }
            let progress = PlacementProgress {
                remaining: children - (i + 1),
                scheduled,
            };
            let got =
                pl.placement_feasible(&CycleState::new(), &mut CycleState::new(), &info, progress);
            assert_eq!(got.code(), want[i], "{name}: step {i}");
        }
    }
}

#[test]
fn placement_feasible_messages() {
    let p = PlacementProgress {
        remaining: 1,
        scheduled: 1,
    };
    assert_eq!(
        placement_feasible(2, p).message(),
        "minCount (2) is not yet satisfied: 1 scheduled, 1 remaining"
    );
    assert_eq!(
        placement_feasible(3, p).message(),
        "minCount (3) cannot be satisfied: 1 scheduled, 1 remaining"
    );
}

#[test]
fn pre_enqueue_waits_for_the_group_and_the_quorum() {
    let wp = WaitingPods::new();
    let pl = GangScheduling::new(wp.clone());
    let groups = wp.pod_groups();
    let p1 = pod("default", "p1", Some("pg"), None);
    // No group at all: not a member.
    assert!(
        pl.pre_enqueue(&pod("default", "x", None, None))
            .is_success()
    );
    groups.add_pod(&p1);
    let st = pl.pre_enqueue(&p1);
    assert_eq!(st.code(), Code::UnschedulableAndUnresolvable);
    assert_eq!(
        st.message(),
        "waiting for pods's pod group \"pg\" to appear in scheduling queue"
    );
    groups.set_pod_group(group("default", "pg", gang(2)));
    let st = pl.pre_enqueue(&p1);
    assert_eq!(st.code(), Code::UnschedulableAndUnresolvable);
    assert_eq!(
        st.message(),
        "waiting for minCount pods from a gang to appear in scheduling queue"
    );
    // A bound member counts toward the quorum too.
    groups.add_pod(&pod("default", "p2", Some("pg"), Some("n1")));
    assert!(pl.pre_enqueue(&p1).is_success());
    // A basic group needs only its object.
    groups.set_pod_group(group("default", "basic", PodGroupPolicy::Basic));
    assert!(
        pl.pre_enqueue(&pod("default", "b", Some("basic"), None))
            .is_success()
    );
}

#[test]
fn permit_waits_for_the_quorum_and_activates_the_rest() {
    let wp = WaitingPods::new();
    let pl = GangScheduling::new(wp.clone());
    let groups = wp.pod_groups();
    groups.set_pod_group(group("default", "pg", gang(2)));
    let p1 = pod("default", "p1", Some("pg"), None);
    let p2 = pod("default", "p2", Some("pg"), None);
    groups.add_pod(&p1);
    groups.add_pod(&p2);
    groups.assume_pod(&pod("default", "p1", Some("pg"), Some("n1")));
    let mut state = CycleState::new();
    let (st, timeout) = pl.permit(&mut state, &p1, Sym::new("n1"));
    assert_eq!(st.code(), Code::Wait);
    assert_eq!(timeout, PERMIT_TIMEOUT);
    assert_eq!(state.pods_to_activate, vec![p2.key.clone()]);
    groups.assume_pod(&pod("default", "p2", Some("pg"), Some("n1")));
    let (st, _) = pl.permit(&mut CycleState::new(), &p2, Sym::new("n1"));
    assert!(st.is_success());
}

#[test]
fn hints_after_pod_added() {
    let pl = GangScheduling::new(WaitingPods::new());
    let ev = ClusterEvent::new(EventResource::UnscheduledPod, ActionType::ADD);
    let h = |p: &Arc<Pod>, added: &Arc<Pod>| {
        pl.queueing_hint(&ev, p, &EventObject::None, &EventObject::Pod(added.clone()))
            .unwrap()
    };
    let p = pod("default", "p", Some("pg"), None);
    // "add a newPod which matches the pod's scheduling group"
    assert_eq!(
        h(&p, &pod("default", "n", Some("pg"), None)),
        QueueingHint::Queue
    );
    // "add a newPod with NodeName set which matches the pod's scheduling group"
    assert_eq!(
        h(&p, &pod("default", "n", Some("pg"), Some("node1"))),
        QueueingHint::Queue
    );
    // "add a newPod which doesn't match the pod's namespace"
    assert_eq!(
        h(&p, &pod("foo", "n", Some("pg"), None)),
        QueueingHint::QueueSkip
    );
    // "add a newPod which doesn't match the pod's pod group name"
    let p1 = pod("default", "p", Some("pg1"), None);
    assert_eq!(
        h(&p1, &pod("default", "n", Some("pg2"), None)),
        QueueingHint::QueueSkip
    );
    // "add a newPod without scheduling group"
    assert_eq!(
        h(&p, &pod("default", "n", None, None)),
        QueueingHint::QueueSkip
    );
    // "add a newPod to a pod without scheduling group"
    assert_eq!(
        h(
            &pod("default", "p", None, None),
            &pod("default", "n", Some("pg"), None)
        ),
        QueueingHint::QueueSkip
    );
}

#[test]
fn hints_after_pod_group_added_and_updated() {
    let pl = GangScheduling::new(WaitingPods::new());
    let add = ClusterEvent::new(EventResource::PodGroup, ActionType::ADD);
    let upd = ClusterEvent::new(EventResource::PodGroup, ActionType::UPDATE);
    let obj = |g: Arc<PodGroup>| EventObject::Object(ApiObject(g));
    let p = pod("default", "p", Some("pg"), None);
    let h = |ev: &ClusterEvent, old: EventObject, new: EventObject| {
        pl.queueing_hint(ev, &p, &old, &new).unwrap()
    };
    // Added: "add a pod group which matches the pod's scheduling group"
    assert_eq!(
        h(
            &add,
            EventObject::None,
            obj(group("default", "pg", gang(2)))
        ),
        QueueingHint::Queue
    );
    // "add a pod group which doesn't match the pod's namespace" / name
    assert_eq!(
        h(&add, EventObject::None, obj(group("foo", "pg", gang(2)))),
        QueueingHint::QueueSkip
    );
    assert_eq!(
        h(
            &add,
            EventObject::None,
            obj(group("default", "pg2", gang(2)))
        ),
        QueueingHint::QueueSkip
    );
    // Updated: minCount decreased → Queue; increased or same → Skip; basic → Skip.
    let u = |o: PodGroupPolicy, n: PodGroupPolicy| {
        h(
            &upd,
            obj(group("default", "pg", o)),
            obj(group("default", "pg", n)),
        )
    };
    assert_eq!(u(gang(5), gang(3)), QueueingHint::Queue);
    assert_eq!(u(gang(3), gang(5)), QueueingHint::QueueSkip);
    assert_eq!(u(gang(3), gang(3)), QueueingHint::QueueSkip);
    assert_eq!(u(PodGroupPolicy::Basic, gang(3)), QueueingHint::QueueSkip);
    assert_eq!(u(gang(3), PodGroupPolicy::Basic), QueueingHint::QueueSkip);
    assert_eq!(
        h(
            &upd,
            obj(group("default", "other", gang(5))),
            obj(group("default", "other", gang(3)))
        ),
        QueueingHint::QueueSkip
    );
}
