use super::*;

// ---- filtering ----------------------------------------------------------------------------

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/interpodaffinity/filtering_test.go (TestRequiredAffinitySingleNode).
#[test]
fn required_affinity_single_node() {
    let pod_label = [("service", "securityscan")];
    let pod_label2 = [("security", "S1")];
    let existing = || pod().labels(&pod_label).node("node1").obj();
    let node1 = node("node1", &[("region", "r1"), ("zone", "z11")]);
    let sv = &["securityscan", "value2"];
    let ns_team1 = || Some(sel(&[("team", IN, &["team1"])]));
    // (name, pod, pods, want prefilter skip, want filter status)
    type Case = (&'static str, Pod, Vec<Pod>, bool, Option<Status>);
    let cases: Vec<Case> = vec![
        (
            "no required pod affinity, no existing pods: Skip",
            pod().obj(),
            vec![],
            true,
            None,
        ),
        (
            "PodAffinity In matches the existing pod",
            pod()
                .labels(&pod_label2)
                .aff_in("service", "region", sv)
                .obj(),
            vec![existing()],
            false,
            None,
        ),
        (
            "PodAffinity NotIn matches the existing pod",
            pod()
                .labels(&pod_label2)
                .aff_not_in("service", "region", &["securityscan3", "value3"])
                .obj(),
            vec![existing()],
            false,
            None,
        ),
        (
            "PodAffinity does not match because of a different namespace",
            pod()
                .labels(&pod_label2)
                .req_aff(term_ns(
                    &[("service", IN, sv)],
                    "",
                    &["DiffNameSpace"],
                    None,
                ))
                .obj(),
            vec![
                pod()
                    .ns("ns")
                    .label("service", "securityscan")
                    .node("node1")
                    .obj(),
            ],
            false,
            Some(unresolvable(AFF)),
        ),
        (
            "PodAffinity selector does not match the existing pod",
            pod()
                .labels(&pod_label)
                .aff_in("service", "", &["antivirusscan", "value2"])
                .obj(),
            vec![existing()],
            false,
            Some(unresolvable(AFF)),
        ),
        (
            "different operators in several required terms, all match",
            pod()
                .labels(&pod_label2)
                .req_aff(term(
                    &[("service", EXISTS, &[]), ("wrongkey", NOT_EXISTS, &[])],
                    "region",
                ))
                .req_aff(term(
                    &[
                        ("service", IN, &["securityscan"]),
                        ("service", NOT_IN, &["WrongValue"]),
                    ],
                    "region",
                ))
                .obj(),
            vec![existing()],
            false,
            None,
        ),
        (
            "matchExpressions are ANDed: one item does not match",
            pod()
                .labels(&pod_label2)
                .req_aff(term(
                    &[("service", EXISTS, &[]), ("wrongkey", NOT_EXISTS, &[])],
                    "region",
                ))
                .req_aff(term(
                    &[
                        ("service", IN, &["securityscan2"]),
                        ("service", NOT_IN, &["WrongValue"]),
                    ],
                    "region",
                ))
                .obj(),
            vec![existing()],
            false,
            Some(unresolvable(AFF)),
        ),
        (
            "PodAffinity and PodAntiAffinity satisfied",
            pod()
                .labels(&pod_label2)
                .aff_in("service", "region", sv)
                .anti_in("service", "node", &["antivirusscan", "value2"])
                .obj(),
            vec![existing()],
            false,
            None,
        ),
        (
            "PodAffinity, PodAntiAffinity and its symmetry satisfied",
            pod()
                .labels(&pod_label2)
                .aff_in("service", "region", sv)
                .anti_in("service", "node", &["antivirusscan", "value2"])
                .obj(),
            vec![
                pod()
                    .node("node1")
                    .labels(&pod_label)
                    .anti_in("service", "node", &["antivirusscan", "value2"])
                    .obj(),
            ],
            false,
            None,
        ),
        (
            "PodAffinity satisfied, PodAntiAffinity not",
            pod()
                .labels(&pod_label2)
                .aff_in("service", "region", sv)
                .anti_in("service", "zone", sv)
                .obj(),
            vec![existing()],
            false,
            Some(unsched(ANTI)),
        ),
        (
            "PodAffinity and PodAntiAffinity satisfied, the existing pod's anti-affinity not",
            pod()
                .labels(&pod_label)
                .aff_in("service", "region", sv)
                .anti_in("service", "node", &["antivirusscan", "value2"])
                .obj(),
            vec![
                pod()
                    .labels(&pod_label)
                    .node("node1")
                    .anti_in("service", "zone", sv)
                    .obj(),
            ],
            false,
            Some(unsched(EXISTING)),
        ),
        (
            "the pod's NotIn affinity does not match itself nor the existing pods",
            pod()
                .labels(&pod_label)
                .aff_not_in("service", "region", sv)
                .obj(),
            vec![pod().label("service", "securityscan").node("node2").obj()],
            false,
            Some(unresolvable(AFF)),
        ),
        (
            "existing pod's anti-affinity is respected for a pod without terms",
            pod().labels(&pod_label).obj(),
            vec![
                pod()
                    .node("node1")
                    .labels(&pod_label)
                    .anti_in("service", "zone", sv)
                    .obj(),
            ],
            false,
            Some(unsched(EXISTING)),
        ),
        (
            "existing pod's anti-affinity does not match: Skip",
            pod().labels(&pod_label).obj(),
            vec![
                pod()
                    .node("node1")
                    .labels(&pod_label)
                    .anti_not_in("service", "zone", sv)
                    .obj(),
            ],
            true,
            None,
        ),
        (
            "the pod's anti-affinity matches the existing pod, not the other way around",
            pod()
                .labels(&pod_label)
                .anti_exists("service", "region")
                .anti_exists("security", "region")
                .obj(),
            vec![
                pod()
                    .node("node1")
                    .labels(&pod_label2)
                    .anti_exists("security", "zone")
                    .obj(),
            ],
            false,
            Some(unsched(ANTI)),
        ),
        (
            "symmetry a1: partial match on terms",
            pod()
                .labels(&pod_label)
                .anti_exists("service", "zone")
                .anti_exists("security", "zone")
                .obj(),
            vec![
                pod()
                    .node("node1")
                    .labels(&pod_label2)
                    .anti_exists("security", "zone")
                    .obj(),
            ],
            false,
            Some(unsched(ANTI)),
        ),
        (
            "symmetry a2: partial match on terms",
            pod()
                .labels(&pod_label2)
                .anti_exists("security", "zone")
                .obj(),
            vec![
                pod()
                    .node("node1")
                    .labels(&pod_label)
                    .anti_exists("service", "zone")
                    .anti_exists("security", "zone")
                    .obj(),
            ],
            false,
            Some(unsched(EXISTING)),
        ),
        (
            "symmetry b1: partial match on terms",
            pod()
                .labels(&[("abc", ""), ("xyz", "")])
                .anti_exists("abc", "zone")
                .anti_exists("def", "zone")
                .obj(),
            vec![
                pod()
                    .node("node1")
                    .labels(&[("def", ""), ("xyz", "")])
                    .anti_exists("abc", "zone")
                    .anti_exists("def", "zone")
                    .obj(),
            ],
            false,
            Some(unsched(ANTI)),
        ),
        (
            "symmetry b2: partial match on terms",
            pod()
                .labels(&[("def", ""), ("xyz", "")])
                .anti_exists("abc", "zone")
                .anti_exists("def", "zone")
                .obj(),
            vec![
                pod()
                    .node("node1")
                    .labels(&[("abc", ""), ("xyz", "")])
                    .anti_exists("abc", "zone")
                    .anti_exists("def", "zone")
                    .obj(),
            ],
            false,
            Some(unsched(ANTI)),
        ),
        (
            "affinity with NamespaceSelector",
            pod()
                .labels(&pod_label2)
                .req_aff(term_ns(&[("service", IN, sv)], "region", &[], ns_team1()))
                .obj(),
            vec![
                pod()
                    .ns("subteam1.team1")
                    .labels(&pod_label)
                    .node("node1")
                    .obj(),
            ],
            false,
            None,
        ),
        (
            "affinity with non-matching NamespaceSelector",
            pod()
                .labels(&pod_label2)
                .req_aff(term_ns(&[("service", IN, sv)], "region", &[], ns_team1()))
                .obj(),
            vec![
                pod()
                    .ns("subteam1.team2")
                    .labels(&pod_label)
                    .node("node1")
                    .obj(),
            ],
            false,
            Some(unresolvable(AFF)),
        ),
        (
            "anti-affinity with matching NamespaceSelector",
            pod()
                .ns("subteam1.team1")
                .labels(&pod_label2)
                .req_anti(term_ns(&[("service", IN, sv)], "zone", &[], ns_team1()))
                .obj(),
            vec![
                pod()
                    .ns("subteam2.team1")
                    .labels(&pod_label)
                    .node("node1")
                    .obj(),
            ],
            false,
            Some(unsched(ANTI)),
        ),
        (
            "anti-affinity with matching all NamespaceSelector",
            pod()
                .ns("subteam1.team1")
                .labels(&pod_label2)
                .req_anti(term_ns(
                    &[("service", IN, sv)],
                    "zone",
                    &[],
                    Some(LabelSelector::default()),
                ))
                .obj(),
            vec![
                pod()
                    .ns("subteam2.team1")
                    .labels(&pod_label)
                    .node("node1")
                    .obj(),
            ],
            false,
            Some(unsched(ANTI)),
        ),
        (
            "anti-affinity with non-matching NamespaceSelector",
            pod()
                .ns("subteam1.team1")
                .labels(&pod_label2)
                .req_anti(term_ns(&[("service", IN, sv)], "zone", &[], ns_team1()))
                .obj(),
            vec![
                pod()
                    .ns("subteam1.team2")
                    .labels(&pod_label)
                    .node("node1")
                    .obj(),
            ],
            false,
            None,
        ),
    ];
    let pl = plugin();
    for (name, p, pods, want_skip, want) in cases {
        let snap = snapshot(std::slice::from_ref(&node1), &pods);
        let (pre, got) = run_filter(&pl, &p, &snap, &["node1"]);
        if want_skip {
            assert!(pre.is_skip(), "{name}: PreFilter {pre:?}");
            continue;
        }
        assert!(pre.is_success(), "{name}: PreFilter {pre:?}");
        let want = want.unwrap_or_else(Status::success);
        assert!(
            same(&got[0], &want),
            "{name}: got {:?}, want {want:?}",
            got[0]
        );
    }
}

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/interpodaffinity/filtering_test.go (TestRequiredAffinityMultipleNodes).
#[test]
fn required_affinity_multiple_nodes() {
    let china = [("region", "China")];
    let china_az1 = [("region", "China"), ("az", "az1")];
    let india = [("region", "India")];
    let ok = Status::success;
    // (name, pod, pods, nodes, want skip, want per node)
    type Case = (&'static str, Pod, Vec<Pod>, Vec<Node>, bool, Vec<Status>);
    let cases: Vec<Case> = vec![
        (
            "all nodes of the matching pod's region",
            pod().aff_in("foo", "region", &["bar"]).obj(),
            vec![pod().name("p1").node("node1").label("foo", "bar").obj()],
            vec![
                node("node1", &china),
                node("node2", &china_az1),
                node("node3", &india),
            ],
            false,
            vec![ok(), ok(), unresolvable(AFF)],
        ),
        (
            "the first pod of a collection with affinity to itself goes anywhere",
            pod()
                .labels(&[("foo", "bar"), ("service", "securityscan")])
                .aff_in("foo", "zone", &["bar"])
                .aff_in("service", "zone", &["securityscan"])
                .obj(),
            vec![pod().name("p1").node("nodeA").label("foo", "bar").obj()],
            vec![
                node("nodeA", &[("zone", "az1"), ("hostname", "h1")]),
                node("nodeB", &[("zone", "az2"), ("hostname", "h2")]),
            ],
            false,
            vec![ok(), ok()],
        ),
        (
            "the first pod of a collection needs the topology keys",
            pod()
                .labels(&[("foo", "bar"), ("service", "securityscan")])
                .aff_in("foo", "zone", &["bar"])
                .aff_in("service", "zone", &["securityscan"])
                .obj(),
            vec![pod().name("p1").node("nodeA").label("foo", "bar").obj()],
            vec![
                node("nodeA", &[("zoneLabel", "az1"), ("hostname", "h1")]),
                node("nodeB", &[("zoneLabel", "az2"), ("hostname", "h2")]),
            ],
            false,
            vec![unresolvable(AFF), unresolvable(AFF)],
        ),
        (
            "anti-affinity refuses the whole region of the matching pod",
            pod().anti_in("foo", "region", &["abc"]).obj(),
            vec![pod().node("nodeA").label("foo", "abc").obj()],
            vec![
                node("nodeA", &[("region", "r1"), ("hostname", "nodeA")]),
                node("nodeB", &[("region", "r1"), ("hostname", "nodeB")]),
            ],
            false,
            vec![unsched(ANTI), unsched(ANTI)],
        ),
        (
            "anti-affinity matches when any term matches",
            pod()
                .anti_in("foo", "region", &["abc"])
                .anti_in("service", "zone", &["securityscan"])
                .obj(),
            vec![
                pod()
                    .node("nodeA")
                    .labels(&[("foo", "abc"), ("service", "securityscan")])
                    .obj(),
            ],
            vec![
                node(
                    "nodeA",
                    &[("region", "r1"), ("zone", "z1"), ("hostname", "nodeA")],
                ),
                node(
                    "nodeB",
                    &[("region", "r1"), ("zone", "z2"), ("hostname", "nodeB")],
                ),
            ],
            false,
            vec![unsched(ANTI), unsched(ANTI)],
        ),
        (
            "anti-affinity: another region is fine",
            pod().anti_in("foo", "region", &["abc"]).obj(),
            vec![pod().node("nodeA").label("foo", "abc").obj()],
            vec![
                node("nodeA", &china),
                node("nodeB", &china_az1),
                node("nodeC", &india),
            ],
            false,
            vec![unsched(ANTI), unsched(ANTI), ok()],
        ),
        (
            "anti-affinity of a pod in another namespace does not count",
            pod()
                .ns("NS1")
                .label("foo", "123")
                .anti_in("foo", "region", &["bar"])
                .obj(),
            vec![
                pod().node("nodeA").ns("NS1").label("foo", "bar").obj(),
                pod()
                    .node("nodeC")
                    .ns("NS2")
                    .anti_in("foo", "region", &["123"])
                    .obj(),
            ],
            vec![
                node("nodeA", &china),
                node("nodeB", &china_az1),
                node("nodeC", &india),
            ],
            false,
            vec![unsched(ANTI), unsched(ANTI), ok()],
        ),
        (
            "existing pod's term with a topology key no node has: Skip",
            pod().label("foo", "").obj(),
            vec![
                pod()
                    .node("nodeA")
                    .anti_exists("foo", "invalid-node-label")
                    .obj(),
            ],
            vec![
                node(
                    "nodeA",
                    &[("region", "r1"), ("zone", "z1"), ("hostname", "nodeA")],
                ),
                node(
                    "nodeB",
                    &[("region", "r1"), ("zone", "z1"), ("hostname", "nodeB")],
                ),
            ],
            true,
            vec![],
        ),
        (
            "incoming pod's anti-affinity: the topology key is checked too",
            pod()
                .node("nodeA")
                .anti_exists("foo", "invalid-node-label")
                .obj(),
            vec![pod().node("nodeA").label("foo", "").obj()],
            vec![
                node(
                    "nodeA",
                    &[("region", "r1"), ("zone", "z1"), ("hostname", "nodeA")],
                ),
                node(
                    "nodeB",
                    &[("region", "r1"), ("zone", "z1"), ("hostname", "nodeB")],
                ),
            ],
            false,
            vec![ok(), ok()],
        ),
        (
            "existing pods' anti-affinity in two topologies",
            pod().label("foo", "").label("bar", "").obj(),
            vec![
                pod().node("nodeA").anti_exists("foo", "zone").obj(),
                pod().node("nodeA").anti_exists("bar", "region").obj(),
            ],
            vec![
                node(
                    "nodeA",
                    &[("region", "r1"), ("zone", "z1"), ("hostname", "nodeA")],
                ),
                node(
                    "nodeB",
                    &[("region", "r1"), ("zone", "z2"), ("hostname", "nodeB")],
                ),
            ],
            false,
            vec![unsched(EXISTING), unsched(EXISTING)],
        ),
    ];
    let pl = plugin();
    for (name, p, pods, nodes, want_skip, want) in cases {
        let snap = snapshot(&nodes, &pods);
        let names: Vec<String> = nodes.iter().map(|n| n.name.as_arc().to_string()).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let (pre, got) = run_filter(&pl, &p, &snap, &names);
        if want_skip {
            assert!(pre.is_skip(), "{name}: PreFilter {pre:?}");
            continue;
        }
        assert!(pre.is_success(), "{name}: PreFilter {pre:?}");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(same(g, w), "{name}: node {i}: got {g:?}, want {w:?}");
        }
    }
}

#[test]
fn filter_without_pre_filter_state_is_an_error() {
    let pl = plugin();
    let snap = snapshot(&[node("n", &[])], &[]);
    let st = pl.filter(
        &CycleState::new(),
        &pod().obj(),
        snap.get(Sym::new("n")).unwrap(),
    );
    assert_eq!(st.code(), Code::Error);
}

// After kubernetes/kubernetes
// pkg/scheduler/framework/plugins/interpodaffinity/filtering_test.go (TestPreFilterStateAddRemovePod):
// AddPod on the state of a cluster without the pod equals the state of the cluster with it,
// and RemovePod undoes it.
#[test]
fn add_and_remove_pod_update_the_counts() {
    let nodes = [
        node(
            "nodeA",
            &[("region", "r1"), ("zone", "z11"), ("hostname", "nodeA")],
        ),
        node(
            "nodeB",
            &[("region", "r1"), ("zone", "z12"), ("hostname", "nodeB")],
        ),
        node(
            "nodeC",
            &[("region", "r2"), ("zone", "z21"), ("hostname", "nodeC")],
        ),
    ];
    let incoming = pod()
        .name("incoming")
        .label("security", "S1")
        .aff_in("security", "region", &["S1"])
        .anti_in("service", "zone", &["securityscan"])
        .obj();
    let base = vec![pod().node("nodeA").label("security", "S1").obj()];
    let added = [
        // Matches the pod's affinity.
        pod().node("nodeC").label("security", "S1").obj(),
        // Matches the pod's anti-affinity.
        pod().node("nodeB").label("service", "securityscan").obj(),
        // Its anti-affinity matches the pod.
        pod()
            .node("nodeC")
            .anti_in("security", "zone", &["S1"])
            .obj(),
    ];
    let pl = plugin();
    let snap = snapshot(&nodes, &base);
    let mut state = CycleState::new();
    assert!(pl.pre_filter(&mut state, &incoming, &snap).1.is_success());
    let before = state
        .read::<PreFilterState>(PRE_FILTER_STATE_KEY)
        .unwrap()
        .clone();

    let mut all = base.clone();
    all.extend(added.iter().cloned());
    let full = snapshot(&nodes, &all);
    let mut want_state = CycleState::new();
    pl.pre_filter(&mut want_state, &incoming, &full);
    let want = want_state
        .read::<PreFilterState>(PRE_FILTER_STATE_KEY)
        .unwrap();

    for p in &added {
        let n = snap.get(p.node_name.unwrap()).unwrap();
        assert!(pl.add_pod(&mut state, &incoming, p, n).is_success());
    }
    let got = state.read::<PreFilterState>(PRE_FILTER_STATE_KEY).unwrap();
    assert_eq!(got.affinity_counts, want.affinity_counts);
    assert_eq!(got.anti_affinity_counts, want.anti_affinity_counts);
    assert_eq!(
        got.existing_anti_affinity_counts,
        want.existing_anti_affinity_counts
    );
    assert_eq!(
        got.affinity_counts.get(Sym::new("region"), Sym::new("r2")),
        1
    );
    assert_eq!(
        got.anti_affinity_counts
            .get(Sym::new("zone"), Sym::new("z12")),
        1
    );
    assert_eq!(
        got.existing_anti_affinity_counts
            .get(Sym::new("zone"), Sym::new("z21")),
        1
    );
    // nodeC is now refused by the existing pod's anti-affinity, nodeB by the pod's own.
    let f = |s: &CycleState, n: &str| pl.filter(s, &incoming, snap.get(Sym::new(n)).unwrap());
    assert!(same(&f(&state, "nodeC"), &unsched(EXISTING)));
    assert!(same(&f(&state, "nodeB"), &unsched(ANTI)));
    assert!(f(&state, "nodeA").is_success());

    for p in &added {
        let n = snap.get(p.node_name.unwrap()).unwrap();
        assert!(pl.remove_pod(&mut state, &incoming, p, n).is_success());
    }
    let got = state.read::<PreFilterState>(PRE_FILTER_STATE_KEY).unwrap();
    assert_eq!(got.affinity_counts, before.affinity_counts);
    assert_eq!(got.anti_affinity_counts, before.anti_affinity_counts);
    assert!(got.existing_anti_affinity_counts.is_empty());
    assert!(got.anti_affinity_counts.is_empty());
    // Without state, the extensions report an error.
    let mut empty = CycleState::new();
    let n = snap.get(Sym::new("nodeA")).unwrap();
    assert_eq!(
        pl.add_pod(&mut empty, &incoming, &added[0], n).code(),
        Code::Error
    );
}

#[test]
fn topology_counts_drop_zero_entries_and_track_keys() {
    let (zone, a, b) = (Sym::new("zone"), Sym::new("a"), Sym::new("b"));
    let mut c = TopologyCounts::default();
    c.add(zone, a, 2);
    c.add(zone, b, 1);
    assert!(c.any_positive_on(&Labels::from_pairs([("zone", "a")])));
    assert!(!c.any_positive_on(&Labels::from_pairs([("zone", "c")])));
    c.add(zone, a, -2);
    assert_eq!(c.len(), 1);
    c.add(zone, b, -1);
    assert!(c.is_empty());
    assert!(!c.any_positive_on(&Labels::from_pairs([("zone", "b")])));
    assert_eq!(c, TopologyCounts::default());
}

#[test]
fn match_label_keys_resolve_against_the_terms_owner() {
    // The incoming pod wants the zone of pods with its own `app` value.
    let mut t = term(&[("tier", EXISTS, &[])], "zone");
    t.match_label_keys = vec![Sym::new("app")];
    let nodes = [node("n1", &[("zone", "z1")]), node("n2", &[("zone", "z2")])];
    let pods = [
        pod()
            .node("n1")
            .labels(&[("tier", "x"), ("app", "web")])
            .obj(),
        pod()
            .node("n2")
            .labels(&[("tier", "x"), ("app", "db")])
            .obj(),
    ];
    let snap = snapshot(&nodes, &pods);
    let p = pod().label("app", "db").req_aff(t).obj();
    let (_, got) = run_filter(&plugin(), &p, &snap, &["n1", "n2"]);
    assert!(same(&got[0], &unresolvable(AFF)));
    assert!(got[1].is_success());
}

/// Enough nodes for the parallel pass: the counts are the same as counted one by one.
#[test]
fn parallel_pre_filter_counts_every_node() {
    let nodes: Vec<Node> = (0..600)
        .map(|i| {
            node(
                &format!("n{i}"),
                &[("zone", ["z0", "z1", "z2"][i % 3]), ("hostname", "h")],
            )
        })
        .collect();
    let pods: Vec<Pod> = (0..600)
        .map(|i| {
            let b = pod().node(&format!("n{i}")).label("app", "web");
            if i % 2 == 0 {
                b.anti_exists("other", "zone").obj()
            } else {
                b.obj()
            }
        })
        .collect();
    let snap = snapshot(&nodes, &pods);
    let incoming = pod()
        .label("other", "1")
        .aff_in("app", "zone", &["web"])
        .anti_in("app", "hostname", &["web"])
        .obj();
    let s = plugin().compute_pre_filter_state(&incoming, &snap);
    for z in ["z0", "z1", "z2"] {
        assert_eq!(s.affinity_counts.get(Sym::new("zone"), Sym::new(z)), 200);
        assert_eq!(
            s.existing_anti_affinity_counts
                .get(Sym::new("zone"), Sym::new(z)),
            100
        );
    }
    assert_eq!(
        s.anti_affinity_counts
            .get(Sym::new("hostname"), Sym::new("h")),
        600
    );
}
