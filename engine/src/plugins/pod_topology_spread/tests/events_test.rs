use super::*;

// ---- plugin_test.go: QueueingHints ------------------------------------------------------------

fn node_ev(action: ActionType) -> ClusterEvent {
    ClusterEvent::new(EventResource::Node, action)
}
fn pod_ev(action: ActionType) -> ClusterEvent {
    ClusterEvent::new(EventResource::Pod, action)
}
fn n_obj(labels: &[(&str, &str)]) -> EventObject {
    EventObject::Node(Arc::new(node("node-a", labels)))
}
fn p_obj(p: Pod) -> EventObject {
    EventObject::Pod(Arc::new(p))
}

use QueueingHint::{Queue, QueueSkip};

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/podtopologyspread/plugin_test.go (Test_isSchedulableAfterNodeChange)
#[test]
fn hint_after_node_change() {
    let pl = plugin();
    let one = pod("p").c(1, "zone", Hard, foo()).obj();
    let two = pod("p")
        .c(1, "zone", Hard, foo())
        .c(1, "node", Hard, foo())
        .obj();
    let none = EventObject::None;
    let cases: Vec<(
        &str,
        &Pod,
        ClusterEvent,
        EventObject,
        EventObject,
        QueueingHint,
    )> = vec![
        (
            "node updates label which matches topologyKey",
            &one,
            node_ev(ActionType::UPDATE_NODE_LABEL),
            n_obj(&[("zone", "zone1")]),
            n_obj(&[("zone", "zone2")]),
            Queue,
        ),
        (
            "node that doesn't match topologySpreadConstraints updates non-related label",
            &one,
            node_ev(ActionType::UPDATE_NODE_LABEL),
            n_obj(&[("foo", "bar1")]),
            n_obj(&[("foo", "bar2")]),
            QueueSkip,
        ),
        (
            "node that match topologySpreadConstraints adds non-related label",
            &two,
            node_ev(ActionType::UPDATE_NODE_LABEL),
            n_obj(&[("zone", "zone1"), ("node", "node1"), ("foo", "bar")]),
            n_obj(&[("zone", "zone1"), ("node", "node1")]),
            // No topology key changed and the taints are equal (1.34's expectation).
            QueueSkip,
        ),
        (
            "create node with non-related labels",
            &one,
            node_ev(ActionType::ADD),
            none.clone(),
            n_obj(&[("foo", "bar")]),
            QueueSkip,
        ),
        (
            "create node with related labels",
            &one,
            node_ev(ActionType::ADD),
            none.clone(),
            n_obj(&[("zone", "zone1")]),
            Queue,
        ),
        (
            "delete node with non-related labels",
            &one,
            node_ev(ActionType::DELETE),
            n_obj(&[("foo", "bar")]),
            none.clone(),
            QueueSkip,
        ),
        (
            "delete node with related labels",
            &one,
            node_ev(ActionType::DELETE),
            n_obj(&[("zone", "zone1")]),
            none.clone(),
            Queue,
        ),
        (
            "add node with related labels that only match one of topologySpreadConstraints",
            &two,
            node_ev(ActionType::ADD),
            none.clone(),
            n_obj(&[("zone", "zone1")]),
            QueueSkip,
        ),
        (
            "add node with related labels that match all topologySpreadConstraints",
            &two,
            node_ev(ActionType::ADD),
            none.clone(),
            n_obj(&[("zone", "zone1"), ("node", "node1")]),
            Queue,
        ),
        (
            "update node with related labels that only match one of topologySpreadConstraints",
            &two,
            node_ev(ActionType::UPDATE_NODE_LABEL),
            n_obj(&[("zone", "zone1")]),
            n_obj(&[("zone", "zone1")]),
            QueueSkip,
        ),
        (
            "update node with related labels that match all topologySpreadConstraints",
            &two,
            node_ev(ActionType::UPDATE_NODE_LABEL),
            n_obj(&[("zone", "zone1"), ("node", "node1")]),
            n_obj(&[("zone", "zone1"), ("node", "node2")]),
            Queue,
        ),
    ];
    for (name, p, ev, old, new, want) in cases {
        assert_eq!(
            pl.queueing_hint(&ev, p, &old, &new).unwrap(),
            want,
            "{name}"
        );
    }
    // UpdateNodeTaint: a matching node whose taints changed may help (NodeTaintsPolicy).
    let before = node("node-a", &[("zone", "zone1")]);
    let after = tainted(before.clone());
    let h = pl
        .queueing_hint(
            &node_ev(ActionType::UPDATE_NODE_TAINT),
            &one,
            &EventObject::Node(Arc::new(before.clone())),
            &EventObject::Node(Arc::new(after)),
        )
        .unwrap();
    assert_eq!(h, Queue);
    let h = pl
        .queueing_hint(
            &node_ev(ActionType::UPDATE_NODE_TAINT),
            &one,
            &EventObject::Node(Arc::new(before.clone())),
            &EventObject::Node(Arc::new(before)),
        )
        .unwrap();
    assert_eq!(h, QueueSkip);
}

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/podtopologyspread/plugin_test.go (Test_isSchedulableAfterPodChange)
#[test]
fn hint_after_pod_change() {
    let pl = plugin();
    let one = pod("p").label("foo", "").c(1, "zone", Hard, foo()).obj();
    let two = pod("p")
        .label("foo", "")
        .c(1, "zone", Hard, foo())
        .c(1, "node", Hard, bar())
        .obj();
    let none = EventObject::None;
    let add = pod_ev(ActionType::ADD);
    let del = pod_ev(ActionType::DELETE);
    let upd = pod_ev(ActionType::UPDATE_POD_LABEL);
    let cases: Vec<(
        &str,
        &Pod,
        ClusterEvent,
        EventObject,
        EventObject,
        QueueingHint,
    )> = vec![
        (
            "add pod with labels match topologySpreadConstraints selector",
            &one,
            add,
            none.clone(),
            p_obj(pod("q").node("fake-node").label("foo", "").obj()),
            Queue,
        ),
        (
            "add un-scheduled pod",
            &one,
            add,
            none.clone(),
            p_obj(pod("q").label("foo", "").obj()),
            QueueSkip,
        ),
        (
            "update un-scheduled pod",
            &one,
            upd,
            p_obj(pod("q").label("bar", "").obj()),
            p_obj(pod("q").label("foo", "").obj()),
            QueueSkip,
        ),
        (
            "delete un-scheduled pod",
            &one,
            del,
            p_obj(pod("q").label("foo", "").obj()),
            none.clone(),
            QueueSkip,
        ),
        (
            "add pod with different namespace",
            &one,
            add,
            none.clone(),
            p_obj(
                pod("q")
                    .node("fake-node")
                    .ns("fake-namespace")
                    .label("foo", "")
                    .obj(),
            ),
            QueueSkip,
        ),
        (
            "add pod with labels don't match topologySpreadConstraints selector",
            &one,
            add,
            none.clone(),
            p_obj(pod("q").node("fake-node").label("bar", "").obj()),
            QueueSkip,
        ),
        (
            "delete pod with labels that match topologySpreadConstraints selector",
            &one,
            del,
            p_obj(pod("q").node("fake-node").label("foo", "").obj()),
            none.clone(),
            Queue,
        ),
        (
            "delete pod with labels that don't match topologySpreadConstraints selector",
            &one,
            del,
            p_obj(pod("q").node("fake-node").label("bar", "").obj()),
            none.clone(),
            QueueSkip,
        ),
        (
            "update pod's non-related label",
            &one,
            upd,
            p_obj(
                pod("q")
                    .node("fake-node")
                    .label("foo", "")
                    .label("bar", "bar1")
                    .obj(),
            ),
            p_obj(
                pod("q")
                    .node("fake-node")
                    .label("foo", "")
                    .label("bar", "bar2")
                    .obj(),
            ),
            QueueSkip,
        ),
        (
            "add pod's label that matches topologySpreadConstraints selector",
            &one,
            upd,
            p_obj(pod("q").node("fake-node").obj()),
            p_obj(pod("q").node("fake-node").label("foo", "").obj()),
            Queue,
        ),
        (
            "delete pod label that matches topologySpreadConstraints selector",
            &one,
            upd,
            p_obj(pod("q").node("fake-node").label("foo", "").obj()),
            p_obj(pod("q").node("fake-node").obj()),
            Queue,
        ),
        (
            "change pod's label that matches topologySpreadConstraints selector",
            &one,
            upd,
            p_obj(pod("q").node("fake-node").label("foo", "foo1").obj()),
            p_obj(pod("q").node("fake-node").label("foo", "foo2").obj()),
            QueueSkip,
        ),
        (
            "add pod's label that matches topologySpreadConstraints selector with multi topologySpreadConstraints",
            &two,
            upd,
            p_obj(pod("q").node("fake-node").label("foo", "").obj()),
            p_obj(
                pod("q")
                    .node("fake-node")
                    .label("foo", "")
                    .label("bar", "bar2")
                    .obj(),
            ),
            Queue,
        ),
        (
            "change pod's label that doesn't match topologySpreadConstraints selector with multi topologySpreadConstraints",
            &two,
            upd,
            p_obj(pod("q").node("fake-node").label("foo", "").obj()),
            p_obj(
                pod("q")
                    .node("fake-node")
                    .label("foo", "")
                    .label("baz", "")
                    .obj(),
            ),
            QueueSkip,
        ),
        (
            "change pod's label that match topologySpreadConstraints selector with multi topologySpreadConstraints",
            &two,
            upd,
            p_obj(
                pod("q")
                    .node("fake-node")
                    .label("foo", "")
                    .label("bar", "")
                    .obj(),
            ),
            p_obj(
                pod("q")
                    .node("fake-node")
                    .label("foo", "")
                    .label("bar", "bar2")
                    .obj(),
            ),
            QueueSkip,
        ),
    ];
    for (name, p, ev, old, new, want) in cases {
        assert_eq!(
            pl.queueing_hint(&ev, p, &old, &new).unwrap(),
            want,
            "{name}"
        );
    }

    // The target pod's own label update: Queue when it changes a selector's verdict.
    let target = pod("p").c(1, "zone", Hard, foo()).c(1, "node", Hard, bar());
    let h = pl
        .queueing_hint(
            &upd,
            &target.clone().label("foo", "").obj(),
            &p_obj(target.clone().obj()),
            &p_obj(target.clone().label("foo", "").obj()),
        )
        .unwrap();
    assert_eq!(h, Queue);
    let h = pl
        .queueing_hint(
            &upd,
            &target.clone().label("foo", "").obj(),
            &p_obj(target.clone().obj()),
            &p_obj(target.clone().label("unrelated", "").obj()),
        )
        .unwrap();
    assert_eq!(h, QueueSkip);

    // The target pod got a toleration: Queue only with a NodeTaintsPolicy: Honor constraint.
    let tol = pod_ev(ActionType::UPDATE_POD_TOLERATIONS);
    let honor = pod("p")
        .label("foo", "")
        .spread(tsc(1, "zone", Hard, foo()).taints(Honor));
    let with_tol = honor.clone().toleration_exists("example.com/t");
    let h = pl
        .queueing_hint(
            &tol,
            &honor.clone().obj(),
            &p_obj(honor.clone().obj()),
            &p_obj(with_tol.obj()),
        )
        .unwrap();
    assert_eq!(h, Queue);
    let plain = pod("p").label("foo", "").c(1, "zone", Hard, foo());
    let h = pl
        .queueing_hint(
            &tol,
            &plain.clone().obj(),
            &p_obj(plain.clone().obj()),
            &p_obj(plain.clone().toleration_exists("example.com/t").obj()),
        )
        .unwrap();
    assert_eq!(h, QueueSkip);
}

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/podtopologyspread/plugin.go (EventsToRegister, QHint on)
#[test]
fn events_to_register() {
    let ev = plugin().events_to_register();
    assert_eq!(
        ev,
        vec![
            ClusterEvent::new(
                EventResource::Pod,
                ActionType(
                    ActionType::ADD.0
                        | ActionType::UPDATE_POD_LABEL.0
                        | ActionType::UPDATE_POD_TOLERATIONS.0
                        | ActionType::DELETE.0
                )
            ),
            ClusterEvent::new(
                EventResource::Node,
                ActionType(
                    ActionType::ADD.0
                        | ActionType::DELETE.0
                        | ActionType::UPDATE_NODE_LABEL.0
                        | ActionType::UPDATE_NODE_TAINT.0
                )
            ),
        ]
    );
    // An assigned pod's add matches the Pod registration.
    assert!(ev[0].matches(&ClusterEvent::new(
        EventResource::AssignedPod,
        ActionType::ADD
    )));
}
