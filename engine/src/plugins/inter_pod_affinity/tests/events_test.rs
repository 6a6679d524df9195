use super::*;

// ---- events -------------------------------------------------------------------------------

#[test]
fn events_to_register() {
    let ev = plugin().events_to_register();
    assert_eq!(
        ev,
        vec![
            ClusterEvent::new(
                EventResource::Pod,
                ActionType::ADD
                    .union(ActionType::UPDATE_POD_LABEL)
                    .union(ActionType::DELETE)
            ),
            ClusterEvent::new(
                EventResource::Node,
                ActionType::ADD.union(ActionType::UPDATE_NODE_LABEL)
            ),
        ]
    );
    // An assigned pod's label update and delete match; a taint update does not.
    let m = |e: ClusterEvent| ev.iter().any(|r| r.matches(&e));
    assert!(m(ClusterEvent::new(
        EventResource::AssignedPod,
        ActionType::UPDATE_POD_LABEL
    )));
    assert!(m(ClusterEvent::new(
        EventResource::AssignedPod,
        ActionType::DELETE
    )));
    assert!(!m(ClusterEvent::new(
        EventResource::Node,
        ActionType::UPDATE_NODE_TAINT
    )));
}

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/interpodaffinity/plugin_test.go (Test_isSchedulableAfterPodChange).
#[test]
fn is_schedulable_after_pod_change() {
    use QueueingHint::{Queue, QueueSkip};
    let sv = &["securityscan", "value2"];
    let aff = || pod().name("p").aff_in("service", "region", sv).obj();
    let anti = || pod().name("p").anti_in("service", "region", sv).obj();
    let two = || {
        pod()
            .name("p")
            .aff_exists("aaa", "hostname")
            .aff_exists("bbb", "hostname")
            .obj()
    };
    let on = |l: &[(&str, &str)]| pod().node("fake-node").labels(l).obj();
    let off = |l: &[(&str, &str)]| pod().labels(l).obj();
    let scan = [("service", "securityscan")];
    // (name, pod, old, new, want)
    type Case = (&'static str, Pod, Option<Pod>, Option<Pod>, QueueingHint);
    let cases: Vec<Case> = vec![
        (
            "add a pod matching the affinity",
            aff(),
            None,
            Some(on(&scan)),
            Queue,
        ),
        (
            "add an unscheduled pod",
            aff(),
            None,
            Some(off(&scan)),
            QueueSkip,
        ),
        (
            "add a pod not matching the affinity",
            aff(),
            None,
            Some(on(&[("aaa", "a")])),
            QueueSkip,
        ),
        (
            "update a pod from non-match to match",
            aff(),
            Some(on(&[("aaa", "a")])),
            Some(on(&scan)),
            Queue,
        ),
        (
            "the updated pod matches before and after",
            aff(),
            Some(on(&[("service", "value2")])),
            Some(on(&scan)),
            QueueSkip,
        ),
        (
            "update an unscheduled pod",
            aff(),
            Some(off(&scan)),
            Some(off(&scan)),
            QueueSkip,
        ),
        (
            "update a pod from match to non-match",
            aff(),
            Some(on(&scan)),
            Some(on(&[("aaa", "a")])),
            QueueSkip,
        ),
        (
            "match to non-match, several terms",
            two(),
            Some(on(&[("aaa", "a")])),
            Some(on(&scan)),
            QueueSkip,
        ),
        (
            "non-match to match, several terms",
            two(),
            Some(on(&[("aaa", "a")])),
            Some(on(&[("aaa", ""), ("bbb", "")])),
            Queue,
        ),
        (
            "a pod stops matching the anti-affinity",
            anti(),
            Some(on(&scan)),
            Some(on(&[("service", "aaaa")])),
            Queue,
        ),
        (
            "a pod starts matching the anti-affinity",
            anti(),
            Some(on(&[("service", "bbb")])),
            Some(on(&scan)),
            QueueSkip,
        ),
        (
            "delete a pod not matching the anti-affinity",
            anti(),
            Some(on(&[("aaa", "a")])),
            None,
            QueueSkip,
        ),
        (
            "delete a pod matching the anti-affinity",
            anti(),
            Some(on(&scan)),
            None,
            Queue,
        ),
    ];
    let pl = plugin();
    for (name, p, old, new, want) in cases {
        let obj = |x: &Option<Pod>| match x {
            Some(p) => EventObject::Pod(Arc::new(p.clone())),
            None => EventObject::None,
        };
        let ev = ClusterEvent::new(EventResource::AssignedPod, ActionType::ADD);
        let got = pl.queueing_hint(&ev, &p, &obj(&old), &obj(&new)).unwrap();
        assert_eq!(got, want, "{name}");
    }
    // No objects (an event raised without them): Queue.
    let ev = ClusterEvent::new(EventResource::AssignedPod, ActionType::UPDATE_POD_LABEL);
    assert_eq!(
        pl.queueing_hint(&ev, &aff(), &EventObject::None, &EventObject::None),
        Ok(Queue)
    );
}

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/interpodaffinity/plugin_test.go (Test_isSchedulableAfterNodeChange).
#[test]
fn is_schedulable_after_node_change() {
    use QueueingHint::{Queue, QueueSkip};
    let sv = &["securityscan", "value2"];
    let aff = |topo: &str| pod().name("p").aff_in("service", topo, sv).obj();
    let anti = || {
        pod()
            .name("p")
            .req_anti(term(&[("another", IN, &["label"])], "zone"))
            .obj()
    };
    let n = |l: &[(&str, &str)]| node("node-a", l);
    let z1 = [("zone", "zone1")];
    // (name, pod, old, new, want)
    type Case = (&'static str, Pod, Option<Node>, Node, QueueingHint);
    let cases: Vec<Case> = vec![
        (
            "add a node with the affinity key",
            aff("zone"),
            None,
            n(&z1),
            Queue,
        ),
        (
            "add a node without the key",
            aff("region"),
            None,
            n(&z1),
            QueueSkip,
        ),
        (
            "update a label that is not the key",
            aff("zone"),
            Some(n(&[("aaa", "a")])),
            n(&[("aaa", "b")]),
            QueueSkip,
        ),
        (
            "add an unrelated label",
            aff("zone"),
            Some(n(&z1)),
            n(&[("zone", "zone1"), ("unrelated-label", "unrelated")]),
            QueueSkip,
        ),
        (
            "change the affinity key's value",
            aff("zone"),
            Some(n(&z1)),
            n(&[("zone", "zone2")]),
            Queue,
        ),
        (
            "gain the affinity key",
            aff("zone"),
            Some(n(&[("aaa", "a")])),
            n(&z1),
            Queue,
        ),
        (
            "add a node with the anti-affinity key",
            anti(),
            None,
            n(&z1),
            Queue,
        ),
        (
            "add a node without the anti-affinity key",
            anti(),
            None,
            n(&[]),
            Queue,
        ),
        (
            "add an unrelated label (anti-affinity)",
            anti(),
            Some(n(&z1)),
            n(&[("zone", "zone1"), ("unrelated-label", "unrelated")]),
            QueueSkip,
        ),
        (
            "change the anti-affinity key's value",
            anti(),
            Some(n(&z1)),
            n(&[("zone", "zone2")]),
            Queue,
        ),
        (
            "gain the anti-affinity key",
            anti(),
            Some(n(&[("aaa", "a")])),
            n(&z1),
            QueueSkip,
        ),
        (
            "lose the anti-affinity key",
            anti(),
            Some(n(&z1)),
            n(&[("aaa", "a")]),
            Queue,
        ),
    ];
    let pl = plugin();
    for (name, p, old, new, want) in cases {
        let old = match old {
            Some(o) => EventObject::Node(Arc::new(o)),
            None => EventObject::None,
        };
        let ev = ClusterEvent::new(EventResource::Node, ActionType::ADD);
        let got = pl
            .queueing_hint(&ev, &p, &old, &EventObject::Node(Arc::new(new)))
            .unwrap();
        assert_eq!(got, want, "{name}");
    }
}

/// PreFilter and PreScore match a running pod's terms once per run of pods sharing their
/// spec and labels (`Arc`s, as pods stamped from one template do) and namespace. Pods that
/// share the `Arc`s but not the namespace must still be judged apart: here 3 of 6 pods per
/// node, identical but for the namespace, are in the namespace the terms name.
#[test]
fn pods_sharing_spec_and_labels_are_told_apart_by_namespace() {
    let nodes: Vec<Node> = (0..4)
        .map(|i| {
            node(
                &format!("n{i}"),
                &[("zone", ["z0", "z1"][i % 2]), ("hostname", "h")],
            )
        })
        .collect();
    // The running pods: required and preferred affinity of their own (matched against the
    // incoming pod in PreScore), all sharing one spec and one label set.
    // Their term names no namespace: it means the running pod's own.
    let template = pod()
        .label("app", "web")
        .req_aff(term(&[("app", Operator::In, &["web"])], "zone"))
        .obj();
    let mut pods = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        for j in 0..6 {
            let mut p = template.clone();
            let ns = ["a", "b"][j % 2];
            p.namespace = Sym::new(ns);
            p.key = crate::api::PodKey::new(ns, &format!("p-{i}-{j}"));
            p.name = Arc::from(format!("p-{i}-{j}").as_str());
            p.uid = p.name.clone();
            p.node_name = Some(n.name);
            pods.push(p);
        }
    }
    assert!(
        Arc::ptr_eq(&pods[0].spec, &pods[1].spec) && Arc::ptr_eq(&pods[0].labels, &pods[1].labels)
    );
    let snap = snapshot(&nodes, &pods);
    let incoming = pod()
        .ns("a")
        .label("app", "web")
        .req_aff(term_ns(
            &[("app", Operator::In, &["web"])],
            "zone",
            &["a"],
            None,
        ))
        .req_anti(term_ns(
            &[("app", Operator::In, &["web"])],
            "hostname",
            &["a"],
            None,
        ))
        .obj();
    let s = plugin().compute_pre_filter_state(&incoming, &snap);
    // Two nodes per zone, three pods of namespace `a` on each.
    for z in ["z0", "z1"] {
        assert_eq!(
            s.affinity_counts.get(Sym::new("zone"), Sym::new(z)),
            6,
            "{z}"
        );
    }
    assert_eq!(
        s.anti_affinity_counts
            .get(Sym::new("hostname"), Sym::new("h")),
        12
    );
    // PreScore: a running pod's required affinity term (its own namespace) matches the
    // incoming pod only when they share the namespace: hardPodAffinityWeight 1 for each of
    // the 3 pods of that namespace per node, 6 per zone, whichever namespace it is.
    for ns in ["a", "b"] {
        let mut p = incoming.clone();
        p.namespace = Sym::new(ns);
        let ps = plugin().compute_pre_score_state(&p, &snap);
        for z in ["z0", "z1"] {
            assert_eq!(
                ps.topology_score.get(Sym::new("zone"), Sym::new(z)),
                Some(6),
                "{ns} {z}"
            );
        }
    }
}
