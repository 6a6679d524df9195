use super::*;

// ---- scoring_test.go ---------------------------------------------------------------------------

pub(super) fn run_pre_score(
    pl: &PodTopologySpread,
    p: &Pod,
    snap: &Snapshot,
    feasible: &[Sym],
) -> (CycleState, Status) {
    let mut cs = CycleState::new();
    let infos: Vec<&NodeInfo> = feasible.iter().map(|n| &**snap.get(*n).unwrap()).collect();
    let st = pl.pre_score(&mut cs, p, &infos, snap);
    (cs, st)
}

fn scores(
    pl: &PodTopologySpread,
    p: &Pod,
    nodes: Vec<Node>,
    failed: Vec<Node>,
    existing: Vec<Pod>,
) -> Vec<(String, i64)> {
    let feasible: Vec<Sym> = nodes.iter().map(|n| n.name).collect();
    let mut all = nodes;
    all.extend(failed);
    let snap = snapshot(all, existing);
    let (cs, st) = run_pre_score(pl, p, &snap, &feasible);
    assert!(st.is_success(), "PreScore: {st}");
    let mut raw: Vec<i64> = feasible
        .iter()
        .map(|n| pl.score(&cs, p, snap.get(*n).unwrap()).unwrap())
        .collect();
    assert!(pl.has_normalize());
    assert!(pl.normalize_score(&cs, p, &mut raw).is_success());
    feasible
        .iter()
        .map(|n| n.to_string_lossy())
        .zip(raw)
        .collect()
}

fn want_scores(v: &[(&str, i64)]) -> Vec<(String, i64)> {
    v.iter().map(|(n, s)| (n.to_string(), *s)).collect()
}

const HOST: &str = "kubernetes.io/hostname";

fn hosts(names: &[&str]) -> Vec<Node> {
    names.iter().map(|n| node(n, &[(HOST, n)])).collect()
}

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/podtopologyspread/scoring_test.go (TestPreScoreSkip)
#[test]
fn pre_score_skip() {
    let nodes = hosts(&["node-a", "node-b"]);
    let snap = snapshot(nodes, vec![]);
    let feasible = [Sym::new("node-a"), Sym::new("node-b")];
    // The pod doesn't have soft topology spread constraints.
    let p = pod("p").obj();
    assert!(run_pre_score(&plugin(), &p, &snap, &feasible).1.is_skip());
    // Default constraints and a replicaset that doesn't match.
    let pl = plugin_with(
        list_args(vec![default_c(2, "planet", "ScheduleAnyway")]),
        None,
    );
    let p = pod("p").label("foo", "bar").label("baz", "sup").obj();
    assert!(run_pre_score(&pl, &p, &snap, &feasible).1.is_skip());
    // No nodes at all.
    let p = pod("p").label("foo", "").c(1, HOST, Soft, foo()).obj();
    let empty = snapshot(vec![], vec![]);
    assert!(run_pre_score(&plugin(), &p, &empty, &[]).1.is_skip());
}

pub(super) fn ps_counts(s: &PreScoreState) -> Vec<BTreeMap<String, i64>> {
    s.topology_value_to_pod_counts
        .iter()
        .map(|m| m.iter().map(|(k, v)| (k.to_string_lossy(), *v)).collect())
        .collect()
}

fn ps_state(pl: &PodTopologySpread, p: &Pod, nodes: Vec<Node>) -> PreScoreState {
    let feasible: Vec<Sym> = nodes.iter().map(|n| n.name).collect();
    let snap = snapshot(nodes, vec![]);
    let (cs, st) = run_pre_score(pl, p, &snap, &feasible);
    assert!(st.is_success(), "{st}");
    cs.read::<PreScoreState>(PRE_SCORE_STATE_KEY)
        .unwrap()
        .clone()
}

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/podtopologyspread/scoring_test.go (TestPreScoreStateEmptyNodes)
#[test]
fn pre_score_state_table() {
    let zone_host = |n: &str, z: Option<&str>| match z {
        Some(z) => node(n, &[("zone", z), (HOST, n)]),
        None => node(n, &[(HOST, n)]),
    };
    let m = |pairs: &[(&str, i64)]| -> BTreeMap<String, i64> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    };
    let w = topology_normalizing_weight;

    // normal case
    let p = pod("p")
        .label("foo", "")
        .c(1, "zone", Soft, foo())
        .c(1, HOST, Soft, foo())
        .obj();
    let nodes = vec![
        zone_host("node-a", Some("zone1")),
        zone_host("node-b", Some("zone1")),
        zone_host("node-x", Some("zone2")),
    ];
    let s = ps_state(&plugin(), &p, nodes);
    assert!(s.ignored_nodes.is_empty());
    assert_eq!(
        ps_counts(&s),
        vec![m(&[("zone1", 0), ("zone2", 0)]), m(&[])]
    );
    assert_eq!(s.topology_normalizing_weight, vec![w(2), w(3)]);

    // null selector
    let p = pod("p").label("foo", "").c(1, "zone", Soft, None).obj();
    let nodes = vec![
        zone_host("node-a", Some("zone1")),
        zone_host("node-b", Some("zone1")),
        zone_host("node-x", Some("zone2")),
    ];
    let s = ps_state(&plugin(), &p, nodes);
    assert_eq!(s.constraints[0].selector, None);
    assert_eq!(ps_counts(&s), vec![m(&[("zone1", 0), ("zone2", 0)])]);
    assert_eq!(s.topology_normalizing_weight, vec![w(2)]);

    // node-x doesn't have label zone
    let p = pod("p")
        .label("foo", "")
        .c(1, "zone", Soft, foo())
        .c(1, HOST, Soft, bar())
        .obj();
    let nodes = vec![
        zone_host("node-a", Some("zone1")),
        zone_host("node-b", Some("zone1")),
        zone_host("node-x", None),
    ];
    let s = ps_state(&plugin(), &p, nodes);
    assert_eq!(s.ignored_nodes.len(), 1);
    assert!(s.ignored_nodes.contains(&Sym::new("node-x")));
    assert_eq!(s.ignored_at, vec![false, false, true]);
    assert_eq!(ps_counts(&s), vec![m(&[("zone1", 0)]), m(&[])]);
    assert_eq!(s.topology_normalizing_weight, vec![w(1), w(2)]);

    // system default constraints and a replicaset: nodes without a zone are a zone of their own.
    let pl = plugin_with(PodTopologySpreadArgs::default(), foo());
    let p = pod("p").label("foo", "tar").label("baz", "sup").obj();
    let nodes = vec![
        node("node-a", &[(HOST, "node-a"), (LABEL_TOPOLOGY_ZONE, "mars")]),
        node("node-b", &[(HOST, "node-b"), (LABEL_TOPOLOGY_ZONE, "mars")]),
        node("node-c", &[(HOST, "node-c")]),
        node("node-d", &[(HOST, "node-d")]),
    ];
    let s = ps_state(&pl, &p, nodes);
    let got: Vec<_> = s
        .constraints
        .iter()
        .map(|c| {
            (
                c.topology_key.to_string_lossy(),
                c.max_skew,
                c.selector.clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (HOST.to_string(), 3, foo()),
            (LABEL_TOPOLOGY_ZONE.to_string(), 5, foo())
        ]
    );
    assert!(s.ignored_nodes.is_empty());
    assert_eq!(ps_counts(&s), vec![m(&[]), m(&[("mars", 0), ("", 0)])]);
    assert_eq!(s.topology_normalizing_weight, vec![w(4), w(2)]);

    // default constraints and a replicaset
    let pl = plugin_with(
        list_args(vec![
            default_c(1, HOST, "ScheduleAnyway"),
            default_c(2, "rack", "DoNotSchedule"),
            default_c(2, "planet", "ScheduleAnyway"),
        ]),
        foo(),
    );
    let nodes = vec![node(
        "node-a",
        &[("rack", "rack1"), (HOST, "node-a"), ("planet", "mars")],
    )];
    let s = ps_state(&pl, &p, nodes);
    let keys: Vec<_> = s
        .constraints
        .iter()
        .map(|c| c.topology_key.to_string_lossy())
        .collect();
    assert_eq!(keys, [HOST, "planet"]);
    assert_eq!(ps_counts(&s), vec![m(&[]), m(&[("mars", 0)])]);
    assert_eq!(s.topology_normalizing_weight, vec![w(1), w(1)]);

    // default constraints and a replicaset, but pod has constraints
    let pl = plugin_with(
        list_args(vec![default_c(2, "galaxy", "ScheduleAnyway")]),
        foo(),
    );
    let p = pod("p")
        .label("foo", "bar")
        .label("baz", "sup")
        .c(1, "zone", Hard, bar())
        .c(2, "planet", Soft, label_sel("baz", "sup"))
        .obj();
    let nodes = vec![node(
        "node-a",
        &[("planet", "mars"), ("galaxy", "andromeda")],
    )];
    let s = ps_state(&pl, &p, nodes);
    assert_eq!(s.constraints.len(), 1);
    assert_eq!(s.constraints[0].selector, label_sel("baz", "sup"));
    assert_eq!(ps_counts(&s), vec![m(&[("mars", 0)])]);
    assert_eq!(s.topology_normalizing_weight, vec![w(1)]);
}

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/podtopologyspread/scoring_test.go (TestPodTopologySpreadScore)
#[test]
fn score_table() {
    let pl = plugin();
    let on_host = |skew: i32, sel: Option<LabelSelector>| {
        pod("p").label("foo", "").c(skew, HOST, Soft, sel).obj()
    };
    let abcd = || hosts(&["node-a", "node-b", "node-c", "node-d"]);
    let c4321 = || foo_pods(&[("node-a", 4), ("node-b", 3), ("node-c", 2), ("node-d", 1)]);
    let zone_nodes = |names: &[(&str, &str)]| -> Vec<Node> {
        names
            .iter()
            .map(|(n, z)| node(n, &[("zone", z), (HOST, n)]))
            .collect()
    };
    type Case = (
        &'static str,
        Pod,
        Vec<Node>,
        Vec<Node>,
        Vec<Pod>,
        Vec<(&'static str, i64)>,
    );
    let cases: Vec<Case> = vec![
        (
            "one constraint on node, no existing pods",
            on_host(1, foo()),
            hosts(&["node-a", "node-b"]),
            vec![],
            vec![],
            vec![("node-a", 100), ("node-b", 100)],
        ),
        (
            "one constraint on node, only one node is candidate",
            on_host(1, foo()),
            hosts(&["node-a"]),
            hosts(&["node-b"]),
            foo_pods(&[("node-a", 2), ("node-b", 1)]),
            vec![("node-a", 100)],
        ),
        (
            "one constraint on node, all nodes have the same number of matching pods",
            on_host(1, foo()),
            hosts(&["node-a", "node-b"]),
            vec![],
            foo_pods(&[("node-a", 1), ("node-b", 1)]),
            vec![("node-a", 100), ("node-b", 100)],
        ),
        (
            "one constraint on node, all 4 nodes are candidates",
            on_host(1, foo()),
            abcd(),
            vec![],
            foo_pods(&[("node-a", 2), ("node-b", 1), ("node-d", 3)]),
            vec![
                ("node-a", 20),
                ("node-b", 60),
                ("node-c", 100),
                ("node-d", 0),
            ],
        ),
        (
            "one constraint on node, null selector",
            on_host(1, None),
            abcd(),
            vec![],
            foo_pods(&[("node-a", 2), ("node-b", 1), ("node-d", 3)]),
            vec![
                ("node-a", 100),
                ("node-b", 100),
                ("node-c", 100),
                ("node-d", 100),
            ],
        ),
        (
            "one constraint on node, all 4 nodes are candidates, maxSkew=2",
            on_host(2, foo()),
            abcd(),
            vec![],
            foo_pods(&[("node-a", 2), ("node-b", 1), ("node-d", 3)]),
            vec![
                ("node-a", 33),
                ("node-b", 66),
                ("node-c", 100),
                ("node-d", 16),
            ],
        ),
        (
            "one constraint on node, all 4 nodes are candidates, maxSkew=3",
            on_host(3, foo()),
            abcd(),
            vec![],
            c4321(),
            vec![
                ("node-a", 44),
                ("node-b", 66),
                ("node-c", 77),
                ("node-d", 100),
            ],
        ),
        (
            "one constraint on node, 3 out of 4 nodes are candidates",
            on_host(1, foo()),
            hosts(&["node-a", "node-b", "node-x"]),
            hosts(&["node-y"]),
            foo_pods(&[("node-a", 4), ("node-b", 2), ("node-x", 1), ("node-y", 3)]),
            vec![("node-a", 33), ("node-b", 83), ("node-x", 100)],
        ),
        (
            "one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
            on_host(1, foo()),
            vec![
                node("node-a", &[(HOST, "node-a")]),
                node("node-b", &[("n", "node-b")]),
                node("node-x", &[(HOST, "node-x")]),
            ],
            hosts(&["node-y"]),
            foo_pods(&[("node-a", 4), ("node-b", 2), ("node-x", 1), ("node-y", 3)]),
            vec![("node-a", 16), ("node-b", 0), ("node-x", 100)],
        ),
        (
            "one constraint on zone, 3 out of 4 nodes are candidates",
            pod("p").label("foo", "").c(1, "zone", Soft, foo()).obj(),
            zone_nodes(&[
                ("node-a", "zone1"),
                ("node-b", "zone1"),
                ("node-x", "zone2"),
            ]),
            zone_nodes(&[("node-y", "zone2")]),
            foo_pods(&[("node-a", 4), ("node-b", 2), ("node-x", 1), ("node-y", 3)]),
            vec![("node-a", 75), ("node-b", 75), ("node-x", 100)],
        ),
        (
            "two Constraints on zone and node, 2 out of 4 nodes are candidates",
            pod("p")
                .label("foo", "")
                .c(1, "zone", Soft, foo())
                .c(1, HOST, Soft, foo())
                .obj(),
            zone_nodes(&[("node-a", "zone1"), ("node-x", "zone2")]),
            zone_nodes(&[("node-b", "zone1"), ("node-y", "zone2")]),
            foo_pods(&[("node-a", 2), ("node-b", 1), ("node-x", 2), ("node-y", 4)]),
            vec![("node-a", 100), ("node-x", 63)],
        ),
        (
            "two Constraints on zone, 2 out of 4 nodes are candidates",
            pod("p")
                .label("foo", "")
                .label("bar", "")
                .c(1, "zone", Soft, foo())
                .c(1, "zone", Soft, bar())
                .obj(),
            vec![
                node("node-a", &[("zone", "zone1")]),
                node("node-x", &[("zone", "zone2")]),
            ],
            vec![
                node("node-b", &[("zone", "zone1")]),
                node("node-y", &[("zone", "zone2")]),
            ],
            vec![
                pod("p-a1")
                    .node("node-a")
                    .label("foo", "")
                    .label("bar", "")
                    .obj(),
                pod("p-a2").node("node-a").label("foo", "").obj(),
                pod("p-b1")
                    .node("node-b")
                    .label("foo", "")
                    .label("bar", "")
                    .obj(),
                pod("p-y1").node("node-y").label("foo", "").obj(),
                pod("p-y2")
                    .node("node-y")
                    .label("foo", "")
                    .label("bar", "")
                    .obj(),
                pod("p-y3").node("node-y").label("foo", "").obj(),
            ],
            vec![("node-a", 85), ("node-x", 100)],
        ),
        (
            "two Constraints on zone and node, with different labelSelectors",
            pod("p")
                .label("foo", "")
                .label("bar", "")
                .c(1, "zone", Soft, foo())
                .c(1, HOST, Soft, bar())
                .obj(),
            zone_nodes(&[
                ("node-a", "zone1"),
                ("node-b", "zone1"),
                ("node-x", "zone2"),
                ("node-y", "zone2"),
            ]),
            vec![],
            vec![
                pod("p-a1").node("node-a").label("foo", "").obj(),
                pod("p-b1")
                    .node("node-b")
                    .label("foo", "")
                    .label("bar", "")
                    .obj(),
                pod("p-y1").node("node-y").label("foo", "").obj(),
                pod("p-y2").node("node-y").label("bar", "").obj(),
            ],
            vec![
                ("node-a", 60),
                ("node-b", 20),
                ("node-x", 100),
                ("node-y", 60),
            ],
        ),
        (
            "two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
            pod("p")
                .label("foo", "")
                .label("bar", "")
                .c(1, "zone", Soft, foo())
                .c(1, HOST, Soft, bar())
                .obj(),
            zone_nodes(&[
                ("node-a", "zone1"),
                ("node-b", "zone1"),
                ("node-x", "zone2"),
                ("node-y", "zone2"),
            ]),
            vec![],
            vec![
                pod("p-b1").node("node-b").label("bar", "").obj(),
                pod("p-x1").node("node-x").label("foo", "").obj(),
                pod("p-y1")
                    .node("node-y")
                    .label("foo", "")
                    .label("bar", "")
                    .obj(),
            ],
            vec![
                ("node-a", 100),
                ("node-b", 60),
                ("node-x", 40),
                ("node-y", 0),
            ],
        ),
        (
            "two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
            pod("p")
                .label("foo", "")
                .label("bar", "")
                .c(1, "zone", Soft, foo())
                .c(1, HOST, Soft, bar())
                .obj(),
            zone_nodes(&[
                ("node-a", "zone1"),
                ("node-b", "zone1"),
                ("node-x", "zone2"),
            ]),
            zone_nodes(&[("node-y", "zone2")]),
            vec![
                pod("p-a1").node("node-a").label("foo", "").obj(),
                pod("p-b1")
                    .node("node-b")
                    .label("foo", "")
                    .label("bar", "")
                    .obj(),
                pod("p-y1").node("node-y").label("foo", "").obj(),
                pod("p-y2").node("node-y").label("bar", "").obj(),
            ],
            vec![("node-a", 50), ("node-b", 25), ("node-x", 100)],
        ),
        (
            "existing pods in a different namespace do not count",
            on_host(1, foo()),
            hosts(&["node-a", "node-b"]),
            vec![],
            vec![
                pod("p-a1").ns("ns1").node("node-a").label("foo", "").obj(),
                pod("p-a2").node("node-a").label("foo", "").obj(),
                pod("p-b1").node("node-b").label("foo", "").obj(),
                pod("p-b2").node("node-b").label("foo", "").obj(),
            ],
            vec![("node-a", 100), ("node-b", 33)],
        ),
        (
            "terminating Pods should be excluded",
            on_host(1, foo()),
            hosts(&["node-a", "node-b"]),
            vec![],
            vec![
                pod("p-a")
                    .node("node-a")
                    .label("foo", "")
                    .terminating()
                    .obj(),
                pod("p-b").node("node-b").label("foo", "").obj(),
            ],
            vec![("node-a", 100), ("node-b", 0)],
        ),
        (
            "minDomains has no effect when ScheduleAnyway",
            pod("p")
                .label("foo", "")
                .spread(tsc(2, "node", Soft, foo()).min_domains(10))
                .obj(),
            vec![
                node("node-a", &[("node", "node-a")]),
                node("node-b", &[("node", "node-b")]),
                node("node-c", &[("node", "node-c")]),
            ],
            vec![],
            foo_pods(&[("node-a", 2), ("node-b", 2), ("node-c", 1)]),
            vec![("node-a", 75), ("node-b", 75), ("node-c", 100)],
        ),
        (
            "NodeAffinityPolicy honoed with labelSelectors",
            pod("p")
                .label("foo", "")
                .node_selector("foo", "")
                .c(1, "node", Soft, foo())
                .obj(),
            vec![
                node("node-a", &[("node", "node-a"), ("foo", "")]),
                node("node-b", &[("node", "node-b"), ("foo", "")]),
                node("node-c", &[("node", "node-c")]),
            ],
            vec![],
            foo_pods(&[("node-a", 2), ("node-b", 1), ("node-c", 1)]),
            vec![("node-a", 0), ("node-b", 33), ("node-c", 100)],
        ),
        (
            "NodeAffinityPolicy ignored with labelSelectors",
            pod("p")
                .label("foo", "")
                .node_selector("foo", "")
                .spread(tsc(1, "node", Soft, foo()).affinity(Ignore))
                .obj(),
            vec![
                node("node-a", &[("node", "node-a"), ("foo", "")]),
                node("node-b", &[("node", "node-b"), ("foo", "")]),
                node("node-c", &[("node", "node-c")]),
            ],
            vec![],
            foo_pods(&[("node-a", 2), ("node-b", 1), ("node-c", 1)]),
            vec![("node-a", 66), ("node-b", 100), ("node-c", 100)],
        ),
        (
            "NodeAffinityPolicy honoed with nodeAffinity",
            pod("p")
                .label("foo", "")
                .node_affinity("foo", Operator::In, &[""])
                .c(1, "node", Soft, foo())
                .obj(),
            vec![
                node("node-a", &[("node", "node-a"), ("foo", "")]),
                node("node-b", &[("node", "node-b"), ("foo", "")]),
                node("node-c", &[("node", "node-c")]),
            ],
            vec![],
            foo_pods(&[("node-a", 2), ("node-b", 1), ("node-c", 1)]),
            vec![("node-a", 0), ("node-b", 33), ("node-c", 100)],
        ),
        (
            "NodeTaintsPolicy honored",
            pod("p")
                .label("foo", "")
                .spread(tsc(1, "node", Soft, foo()).taints(Honor))
                .obj(),
            vec![
                node("node-a", &[("node", "node-a")]),
                node("node-b", &[("node", "node-b")]),
                tainted(node("node-c", &[("node", "node-c")])),
            ],
            vec![],
            foo_pods(&[("node-a", 2), ("node-b", 1), ("node-c", 1)]),
            vec![("node-a", 0), ("node-b", 33), ("node-c", 100)],
        ),
    ];
    for (name, p, nodes, failed, existing, want) in cases {
        assert_eq!(
            scores(&pl, &p, nodes, failed, existing),
            want_scores(&want),
            "{name}"
        );
    }
}

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/podtopologyspread/scoring_test.go (TestPodTopologySpreadScore:
// "system defaulting, nodes don't have zone, pods match service")
#[test]
fn score_with_system_defaults() {
    let pl = plugin_with(PodTopologySpreadArgs::default(), exists("foo"));
    let p = pod("p").label("foo", "").obj();
    let got = scores(
        &pl,
        &p,
        hosts(&["node-a", "node-b", "node-c", "node-d"]),
        vec![],
        foo_pods(&[("node-a", 4), ("node-b", 3), ("node-c", 2), ("node-d", 1)]),
    );
    assert_eq!(
        got,
        want_scores(&[
            ("node-a", 44),
            ("node-b", 66),
            ("node-c", 77),
            ("node-d", 100)
        ])
    );
}

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/podtopologyspread/scoring.go (topologyNormalizingWeight,
// scoreForCount) and common.go (countPodsMatchSelector's empty-selector short-cut in 1.34)
#[test]
fn weights_and_empty_selector_counting() {
    assert!((topology_normalizing_weight(0) - 2f64.ln()).abs() < 1e-12);
    assert!((topology_normalizing_weight(3) - 5f64.ln()).abs() < 1e-12);
    assert_eq!(super::scoring::score_for_count(2, 3, 1.5), 5.0);
    let pods: crate::framework::node_info::PodList =
        std::iter::once(Arc::new(pod("x").label("foo", "").obj())).collect();
    let ns = Sym::new("default");
    assert_eq!(
        common::count_pods_match_selector(&pods, foo().as_ref(), ns),
        1
    );
    assert_eq!(common::count_pods_match_selector(&pods, None, ns), 0);
    let everything = LabelSelector::default();
    assert_eq!(
        common::count_pods_match_selector(&pods, Some(&everything), ns),
        0
    );
}
