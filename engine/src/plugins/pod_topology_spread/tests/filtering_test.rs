use super::*;

// ---- filtering_test.go: TestSingleConstraint / TestMultipleConstraints ---------------------------

fn filter_codes(
    pl: &PodTopologySpread,
    p: &Pod,
    nodes: Vec<Node>,
    existing: Vec<Pod>,
) -> Vec<(String, Code)> {
    let names: Vec<Sym> = nodes.iter().map(|n| n.name).collect();
    let snap = snapshot(nodes, existing);
    let (cs, st) = run_pre_filter(pl, p, &snap);
    assert!(st.is_success(), "PreFilter: {st}");
    names
        .iter()
        .map(|n| {
            let st = pl.filter(&cs, p, snap.get(*n).unwrap());
            (n.to_string_lossy(), st.code())
        })
        .collect()
}

fn want_codes(v: &[(&str, Code)]) -> Vec<(String, Code)> {
    v.iter().map(|(n, c)| (n.to_string(), *c)).collect()
}

/// `(name, pod, nodes, existing pods, expected code per node)`.
type FilterCase = (
    &'static str,
    Pod,
    Vec<Node>,
    Vec<Pod>,
    Vec<(&'static str, Code)>,
);

use Code::{Success as OK, Unschedulable as U, UnschedulableAndUnresolvable as UU};

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go (TestSingleConstraint)
#[test]
fn single_constraint_table() {
    let pl = plugin();
    let std = foo_pods(&[("node-a", 2), ("node-b", 1), ("node-y", 3)]); // 2/1/0/3
    let cases: Vec<FilterCase> = vec![
        (
            "no existing pods",
            pod("p").label("foo", "").c(1, "zone", Hard, foo()).obj(),
            four_nodes(),
            vec![],
            vec![
                ("node-a", OK),
                ("node-b", OK),
                ("node-x", OK),
                ("node-y", OK),
            ],
        ),
        (
            "no existing pods, incoming pod doesn't match itself",
            pod("p").label("foo", "").c(1, "zone", Hard, bar()).obj(),
            four_nodes(),
            vec![],
            vec![
                ("node-a", OK),
                ("node-b", OK),
                ("node-x", OK),
                ("node-y", OK),
            ],
        ),
        (
            "existing pods in a different namespace do not count",
            pod("p").label("foo", "").c(1, "zone", Hard, foo()).obj(),
            four_nodes(),
            vec![
                pod("p-a1").ns("ns1").node("node-a").label("foo", "").obj(),
                pod("p-b1").ns("ns2").node("node-b").label("foo", "").obj(),
                pod("p-x1").node("node-x").label("foo", "").obj(),
                pod("p-y1").node("node-y").label("foo", "").obj(),
                pod("p-y2").node("node-y").label("foo", "").obj(),
            ],
            vec![("node-a", OK), ("node-b", OK), ("node-x", U), ("node-y", U)],
        ),
        (
            "pods spread across zones as 3/3, all nodes fit",
            pod("p").label("foo", "").c(1, "zone", Hard, foo()).obj(),
            four_nodes(),
            std.clone(),
            vec![
                ("node-a", OK),
                ("node-b", OK),
                ("node-x", OK),
                ("node-y", OK),
            ],
        ),
        (
            "pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
            pod("p").label("foo", "").c(1, "zone", Hard, foo()).obj(),
            vec![
                node("node-a", &[("zone", "zone1"), ("node", "node-a")]),
                node("node-b", &[("zon", "zone1"), ("node", "node-b")]),
                node("node-x", &[("zone", "zone2"), ("node", "node-x")]),
                node("node-y", &[("zone", "zone2"), ("node", "node-y")]),
            ],
            foo_pods(&[("node-a", 1), ("node-b", 1), ("node-x", 1), ("node-y", 1)]),
            vec![("node-a", OK), ("node-b", UU), ("node-x", U), ("node-y", U)],
        ),
        (
            "pod cannot be scheduled as all nodes don't have label 'rack'",
            pod("p").label("foo", "").c(1, "rack", Hard, foo()).obj(),
            vec![
                node("node-a", &[("zone", "zone1"), ("node", "node-a")]),
                node("node-x", &[("zone", "zone2"), ("node", "node-x")]),
            ],
            vec![],
            vec![("node-a", UU), ("node-x", UU)],
        ),
        (
            "pods spread across nodes as 2/1/0/3, only node-x fits",
            pod("p").label("foo", "").c(1, "node", Hard, foo()).obj(),
            four_nodes(),
            std.clone(),
            vec![("node-a", U), ("node-b", U), ("node-x", OK), ("node-y", U)],
        ),
        (
            "pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
            pod("p").label("foo", "").c(2, "node", Hard, foo()).obj(),
            four_nodes(),
            std.clone(),
            vec![("node-a", U), ("node-b", OK), ("node-x", OK), ("node-y", U)],
        ),
        (
            "pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
            pod("p").label("bar", "").c(1, "node", Hard, foo()).obj(),
            four_nodes(),
            std.clone(),
            vec![("node-a", U), ("node-b", OK), ("node-x", OK), ("node-y", U)],
        ),
        (
            "incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
            pod("p")
                .label("foo", "")
                .node_affinity("node", Operator::In, &["node-a", "node-y"])
                .c(1, "node", Hard, foo())
                .obj(),
            four_nodes(),
            std.clone(),
            vec![
                ("node-a", OK),
                ("node-b", OK),
                ("node-x", OK),
                ("node-y", U),
            ],
        ),
        (
            "terminating Pods should be excluded",
            pod("p").label("foo", "").c(1, "node", Hard, foo()).obj(),
            vec![
                node("node-a", &[("node", "node-a")]),
                node("node-b", &[("node", "node-b")]),
            ],
            vec![
                pod("p-a")
                    .node("node-a")
                    .label("foo", "")
                    .terminating()
                    .obj(),
                pod("p-b").node("node-b").label("foo", "").obj(),
            ],
            vec![("node-a", OK), ("node-b", U)],
        ),
        (
            "incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
            pod("p")
                .label("foo", "")
                .node_affinity("node", Operator::NotIn, &["node-b"])
                .c(1, "zone", Hard, foo())
                .obj(),
            four_nodes(),
            foo_pods(&[("node-b", 2), ("node-y", 1)]),
            vec![("node-a", OK), ("node-b", OK), ("node-x", U), ("node-y", U)],
        ),
        (
            "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then the third node fits",
            pod("p")
                .label("foo", "")
                .spread(tsc(2, "node", Hard, foo()).min_domains(4))
                .obj(),
            vec![
                node("node-a", &[("node", "node-a")]),
                node("node-b", &[("node", "node-b")]),
                node("node-c", &[("node", "node-c")]),
            ],
            foo_pods(&[("node-a", 2), ("node-b", 2), ("node-c", 1)]),
            vec![("node-a", U), ("node-b", U), ("node-c", OK)],
        ),
        (
            "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, then the all nodes fit",
            pod("p")
                .label("foo", "")
                .spread(tsc(2, "node", Hard, foo()).min_domains(2))
                .obj(),
            vec![
                node("node-a", &[("node", "node-a")]),
                node("node-b", &[("node", "node-b")]),
                node("node-c", &[("node", "node-c")]),
            ],
            foo_pods(&[("node-a", 2), ("node-b", 2), ("node-c", 1)]),
            vec![("node-a", OK), ("node-b", OK), ("node-c", OK)],
        ),
        (
            "pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the third and fourth nodes fit",
            pod("p")
                .label("foo", "")
                .spread(tsc(2, "zone", Hard, foo()).min_domains(3))
                .obj(),
            four_nodes(),
            foo_pods(&[("node-a", 1), ("node-b", 1), ("node-y", 1)]),
            vec![("node-a", U), ("node-b", U), ("node-x", OK), ("node-y", OK)],
        ),
        (
            "pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then the all nodes fit",
            pod("p")
                .label("foo", "")
                .spread(tsc(2, "zone", Hard, foo()).min_domains(1))
                .obj(),
            four_nodes(),
            foo_pods(&[("node-a", 1), ("node-b", 1), ("node-y", 1)]),
            vec![
                ("node-a", OK),
                ("node-b", OK),
                ("node-x", OK),
                ("node-y", OK),
            ],
        ),
        (
            "NodeAffinityPolicy honored with labelSelectors",
            pod("p")
                .label("foo", "")
                .node_selector("foo", "")
                .c(1, "node", Hard, foo())
                .obj(),
            vec![
                node("node-a", &[("node", "node-a"), ("foo", "")]),
                node("node-b", &[("node", "node-b"), ("foo", "")]),
                node("node-x", &[("node", "node-x"), ("foo", "")]),
                node("node-y", &[("node", "node-y")]),
            ],
            foo_pods(&[("node-a", 1), ("node-b", 1), ("node-y", 1)]),
            vec![("node-a", U), ("node-b", U), ("node-x", OK), ("node-y", OK)],
        ),
    ];
    for (name, p, nodes, existing, want) in cases {
        assert_eq!(
            filter_codes(&pl, &p, nodes, existing),
            want_codes(&want),
            "{name}"
        );
    }
}

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go (TestMultipleConstraints)
#[test]
fn multiple_constraints_table() {
    let pl = plugin();
    let zn = |sel_zone: Option<LabelSelector>, sel_node: Option<LabelSelector>| {
        pod("p")
            .label("foo", "")
            .label("bar", "")
            .c(1, "zone", Hard, sel_zone)
            .c(1, "node", Hard, sel_node)
    };
    let cases: Vec<FilterCase> = vec![
        (
            "two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
            zn(foo(), foo()).obj(),
            four_nodes(),
            foo_pods(&[("node-a", 2), ("node-b", 1), ("node-y", 3)]),
            vec![("node-a", U), ("node-b", U), ("node-x", OK), ("node-y", U)],
        ),
        (
            "two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
            zn(foo(), foo()).obj(),
            four_nodes(),
            foo_pods(&[("node-a", 2), ("node-b", 1), ("node-y", 4)]),
            vec![("node-a", U), ("node-b", U), ("node-x", U), ("node-y", U)],
        ),
        (
            "Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
            zn(foo(), bar()).obj(),
            four_nodes(),
            vec![
                pod("p-a1").node("node-a").label("foo", "").obj(),
                pod("p-y1").node("node-y").label("bar", "").obj(),
            ],
            vec![("node-a", U), ("node-b", U), ("node-x", OK), ("node-y", U)],
        ),
        (
            "Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
            zn(foo(), bar()).obj(),
            four_nodes(),
            vec![
                pod("p-a1").node("node-a").label("foo", "").obj(),
                pod("p-x1").node("node-x").label("bar", "").obj(),
                pod("p-y1").node("node-y").label("bar", "").obj(),
            ],
            vec![("node-a", U), ("node-b", U), ("node-x", U), ("node-y", U)],
        ),
        (
            "Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
            zn(foo(), bar()).obj(),
            four_nodes(),
            vec![
                pod("p-a1").node("node-a").label("foo", "").obj(),
                pod("p-a2")
                    .node("node-a")
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
            vec![("node-a", U), ("node-b", OK), ("node-x", U), ("node-y", U)],
        ),
        (
            "Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
            pod("p")
                .label("bar", "")
                .c(1, "zone", Hard, foo())
                .c(1, "node", Hard, bar())
                .obj(),
            four_nodes(),
            vec![
                pod("p-a1").node("node-a").label("foo", "").obj(),
                pod("p-x1").node("node-x").label("bar", "").obj(),
                pod("p-y1").node("node-y").label("bar", "").obj(),
            ],
            vec![("node-a", OK), ("node-b", OK), ("node-x", U), ("node-y", U)],
        ),
        (
            "two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
            pod("p")
                .label("foo", "")
                .c(1, "zone", Hard, foo())
                .c(1, "node", Hard, foo())
                .obj(),
            vec![
                node("node-a", &[("zone", "zone1"), ("node", "node-a")]),
                node("node-b", &[("zone", "zone1"), ("node", "node-b")]),
                node("node-x", &[("zone", "zone2")]),
                node("node-y", &[("zone", "zone2"), ("node", "node-y")]),
            ],
            foo_pods(&[("node-a", 1), ("node-y", 1)]),
            vec![("node-a", U), ("node-b", OK), ("node-x", UU), ("node-y", U)],
        ),
        (
            "two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
            pod("p")
                .label("foo", "")
                .node_selector("foo", "")
                .c(1, "zone", Hard, foo())
                .spread(tsc(1, "node", Hard, foo()).affinity(Ignore))
                .obj(),
            vec![
                node(
                    "node-a",
                    &[("zone", "zone1"), ("node", "node-a"), ("foo", "")],
                ),
                node(
                    "node-b",
                    &[("zone", "zone1"), ("node", "node-b"), ("foo", "")],
                ),
                node(
                    "node-x",
                    &[("zone", "zone2"), ("node", "node-x"), ("foo", "")],
                ),
                node("node-y", &[("zone", "zone2"), ("node", "node-y")]),
            ],
            foo_pods(&[("node-a", 1), ("node-b", 1), ("node-y", 1)]),
            vec![("node-a", U), ("node-b", U), ("node-x", OK), ("node-y", U)],
        ),
        (
            "two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
            pod("p")
                .label("foo", "")
                .spread(tsc(1, "zone", Hard, foo()).taints(Honor))
                .c(1, "node", Hard, foo())
                .obj(),
            vec![
                node(
                    "node-a",
                    &[("zone", "zone1"), ("node", "node-a"), ("foo", "")],
                ),
                node(
                    "node-b",
                    &[("zone", "zone1"), ("node", "node-b"), ("foo", "")],
                ),
                node(
                    "node-x",
                    &[("zone", "zone2"), ("node", "node-x"), ("foo", "")],
                ),
                tainted(node("node-y", &[("zone", "zone2"), ("node", "node-y")])),
            ],
            foo_pods(&[("node-a", 1), ("node-b", 1), ("node-y", 1)]),
            vec![("node-a", U), ("node-b", U), ("node-x", OK), ("node-y", U)],
        ),
        (
            "two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
            pod("p")
                .label("foo", "")
                .node_selector("foo", "")
                .c(1, "zone", Hard, foo())
                .c(1, "node", Hard, foo())
                .obj(),
            vec![
                node(
                    "node-a",
                    &[("zone", "zone1"), ("node", "node-a"), ("foo", "")],
                ),
                node("node-b", &[("zone", "zone1"), ("node", "node-b")]),
                node(
                    "node-x",
                    &[("zone", "zone2"), ("node", "node-x"), ("foo", "")],
                ),
                tainted(node(
                    "node-y",
                    &[("zone", "zone2"), ("node", "node-y"), ("foo", "")],
                )),
            ],
            foo_pods(&[("node-a", 1), ("node-b", 1), ("node-y", 1)]),
            vec![("node-a", U), ("node-b", OK), ("node-x", OK), ("node-y", U)],
        ),
        (
            "two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
            pod("p")
                .label("foo", "")
                .node_selector("foo", "")
                .spread(tsc(1, "zone", Hard, foo()).taints(Honor))
                .spread(tsc(1, "node", Hard, foo()).affinity(Ignore))
                .obj(),
            vec![
                node(
                    "node-a",
                    &[("zone", "zone1"), ("node", "node-a"), ("foo", "")],
                ),
                node("node-b", &[("zone", "zone1"), ("node", "node-b")]),
                node(
                    "node-x",
                    &[("zone", "zone2"), ("node", "node-x"), ("foo", "")],
                ),
                tainted(node(
                    "node-y",
                    &[("zone", "zone2"), ("node", "node-y"), ("foo", "")],
                )),
            ],
            foo_pods(&[("node-a", 1), ("node-b", 1), ("node-y", 1)]),
            vec![("node-a", U), ("node-b", U), ("node-x", OK), ("node-y", U)],
        ),
    ];
    for (name, p, nodes, existing, want) in cases {
        assert_eq!(
            filter_codes(&pl, &p, nodes, existing),
            want_codes(&want),
            "{name}"
        );
    }
}

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go (TestSingleConstraint:
// the statuses carry kube's reasons) and plugin.go (ErrReason* constants)
#[test]
fn filter_reasons_and_missing_state() {
    let pl = plugin();
    let p = pod("p").label("foo", "").c(1, "zone", Hard, foo()).obj();
    let snap = snapshot(
        vec![
            node("node-a", &[("zone", "zone1")]),
            node("node-b", &[("zone", "zone2")]),
            node("node-c", &[]),
        ],
        foo_pods(&[("node-a", 1)]),
    );
    let (cs, _) = run_pre_filter(&pl, &p, &snap);
    let st = pl.filter(&cs, &p, snap.get(Sym::new("node-a")).unwrap());
    assert_eq!(st.code(), Code::Unschedulable);
    assert_eq!(
        st.reasons(),
        ["node(s) didn't match pod topology spread constraints"]
    );
    let st = pl.filter(&cs, &p, snap.get(Sym::new("node-c")).unwrap());
    assert_eq!(st.code(), Code::UnschedulableAndUnresolvable);
    assert_eq!(
        st.reasons(),
        ["node(s) didn't match pod topology spread constraints (missing required label)"]
    );
    assert!(
        pl.filter(&cs, &p, snap.get(Sym::new("node-b")).unwrap())
            .is_success()
    );
    // Filter without PreFilter state is an error, as kube's getPreFilterState.
    let st = pl.filter(
        &CycleState::new(),
        &p,
        snap.get(Sym::new("node-b")).unwrap(),
    );
    assert_eq!(st.code(), Code::Error);
}

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go (criticalPaths update
// semantics exercised by TestPreFilterStateAddPod/RemovePod)
#[test]
fn critical_paths_keep_the_minimum_first() {
    let s = |v: &str| Sym::new(v);
    let mut p = CriticalPaths::default();
    p.update(s("a"), 3);
    p.update(s("b"), 1);
    p.update(s("c"), 2);
    assert_eq!(paths(&p), cp(("b", 1), ("c", 2)));
    // An existing entry growing past the other swaps them.
    p.update(s("b"), 5);
    assert_eq!(paths(&p), cp(("c", 2), ("b", 5)));
    // A new value between the two replaces the second.
    p.update(s("d"), 3);
    assert_eq!(paths(&p), cp(("c", 2), ("d", 3)));
    // A value not smaller than both is not tracked.
    p.update(s("e"), 9);
    assert_eq!(paths(&p), cp(("c", 2), ("d", 3)));
}
