use super::*;

// ---- filtering_test.go: TestPreFilterState -----------------------------------------------------

struct PfCase {
    name: &'static str,
    pod: Pod,
    nodes: Vec<Node>,
    existing: Vec<Pod>,
    /// `(key, maxSkew, minDomains, affinity policy, taints policy)` per constraint.
    constraints: Vec<(
        &'static str,
        i32,
        i32,
        NodeInclusionPolicy,
        NodeInclusionPolicy,
    )>,
    paths: Vec<[(String, i32); 2]>,
    counts: Vec<Counts>,
}

fn check_pf(pl: &PodTopologySpread, c: PfCase) {
    let snap = snapshot(c.nodes, c.existing);
    let s = pre_filter_state(pl, &c.pod, &snap);
    let got_cs: Vec<_> = s
        .constraints
        .iter()
        .map(|k| {
            (
                k.topology_key.to_string_lossy(),
                k.max_skew,
                k.min_domains,
                k.node_affinity_policy,
                k.node_taints_policy,
            )
        })
        .collect();
    let want_cs: Vec<_> = c
        .constraints
        .iter()
        .map(|(k, m, d, a, t)| (k.to_string(), *m, *d, *a, *t))
        .collect();
    assert_eq!(got_cs, want_cs, "{}: constraints", c.name);
    assert_eq!(got_counts(&s), c.counts, "{}: TpValueToMatchNum", c.name);
    let got_paths: Vec<_> = s.critical_paths.iter().map(paths).collect();
    assert_eq!(got_paths, c.paths, "{}: CriticalPaths", c.name);
}

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go (TestPreFilterState)
#[test]
fn pre_filter_state_table() {
    let pl = plugin();
    let z = ("zone", 1, 1, Honor, Ignore);
    let n = ("node", 1, 1, Honor, Ignore);
    let cases = vec![
        PfCase {
            name: "clean cluster with one spreadConstraint",
            pod: pod("p")
                .label("foo", "")
                .c(5, "zone", Hard, label_sel("foo", "bar"))
                .obj(),
            nodes: four_nodes(),
            existing: vec![],
            constraints: vec![("zone", 5, 1, Honor, Ignore)],
            paths: vec![cp(("zone1", 0), ("zone2", 0))],
            counts: vec![counts(&[("zone1", 0), ("zone2", 0)])],
        },
        PfCase {
            name: "normal case with one spreadConstraint",
            pod: pod("p").label("foo", "").c(1, "zone", Hard, foo()).obj(),
            nodes: four_nodes(),
            existing: foo_pods(&[("node-a", 2), ("node-b", 1), ("node-y", 2)]),
            constraints: vec![z],
            paths: vec![cp(("zone2", 2), ("zone1", 3))],
            counts: vec![counts(&[("zone1", 3), ("zone2", 2)])],
        },
        PfCase {
            name: "normal case with null label selector",
            pod: pod("p").label("foo", "").c(1, "zone", Hard, None).obj(),
            nodes: four_nodes(),
            existing: foo_pods(&[("node-a", 2), ("node-b", 1), ("node-y", 2)]),
            constraints: vec![z],
            paths: vec![cp(("zone2", 0), ("zone1", 0))],
            counts: vec![counts(&[("zone1", 0), ("zone2", 0)])],
        },
        PfCase {
            name: "normal case with one spreadConstraint, on a 3-zone cluster",
            pod: pod("p").label("foo", "").c(1, "zone", Hard, foo()).obj(),
            nodes: {
                let mut v = four_nodes();
                v.push(node("node-o", &[("zone", "zone3"), ("node", "node-o")]));
                v.push(node("node-p", &[("zone", "zone3"), ("node", "node-p")]));
                v
            },
            existing: foo_pods(&[("node-a", 2), ("node-b", 1), ("node-y", 2)]),
            constraints: vec![z],
            paths: vec![cp(("zone3", 0), ("zone2", 2))],
            counts: vec![counts(&[("zone1", 3), ("zone2", 2), ("zone3", 0)])],
        },
        PfCase {
            name: "namespace mismatch doesn't count",
            pod: pod("p").label("foo", "").c(1, "zone", Hard, foo()).obj(),
            nodes: four_nodes(),
            existing: vec![
                pod("p-a1").node("node-a").label("foo", "").obj(),
                pod("p-a2").ns("ns1").node("node-a").label("foo", "").obj(),
                pod("p-b1").node("node-b").label("foo", "").obj(),
                pod("p-y1").ns("ns2").node("node-y").label("foo", "").obj(),
                pod("p-y2").node("node-y").label("foo", "").obj(),
            ],
            constraints: vec![z],
            paths: vec![cp(("zone2", 1), ("zone1", 2))],
            counts: vec![counts(&[("zone1", 2), ("zone2", 1)])],
        },
        PfCase {
            name: "normal case with two spreadConstraints",
            pod: pod("p")
                .label("foo", "")
                .c(1, "zone", Hard, foo())
                .c(1, "node", Hard, foo())
                .obj(),
            nodes: four_nodes(),
            existing: foo_pods(&[("node-a", 2), ("node-b", 1), ("node-y", 4)]),
            constraints: vec![z, n],
            paths: vec![
                cp(("zone1", 3), ("zone2", 4)),
                cp(("node-x", 0), ("node-b", 1)),
            ],
            counts: vec![
                counts(&[("zone1", 3), ("zone2", 4)]),
                counts(&[("node-a", 2), ("node-b", 1), ("node-x", 0), ("node-y", 4)]),
            ],
        },
        PfCase {
            name: "soft spreadConstraints should be bypassed",
            pod: pod("p")
                .label("foo", "")
                .c(1, "zone", Soft, foo())
                .c(1, "zone", Hard, foo())
                .c(1, "node", Soft, foo())
                .c(1, "node", Hard, foo())
                .obj(),
            nodes: vec![
                node("node-a", &[("zone", "zone1"), ("node", "node-a")]),
                node("node-b", &[("zone", "zone1"), ("node", "node-b")]),
                node("node-y", &[("zone", "zone2"), ("node", "node-y")]),
            ],
            existing: foo_pods(&[("node-a", 2), ("node-b", 1), ("node-y", 4)]),
            constraints: vec![z, n],
            paths: vec![
                cp(("zone1", 3), ("zone2", 4)),
                cp(("node-b", 1), ("node-a", 2)),
            ],
            counts: vec![
                counts(&[("zone1", 3), ("zone2", 4)]),
                counts(&[("node-a", 2), ("node-b", 1), ("node-y", 4)]),
            ],
        },
        PfCase {
            name: "different labelSelectors - simple version",
            pod: pod("p")
                .label("foo", "")
                .label("bar", "")
                .c(1, "zone", Hard, foo())
                .c(1, "node", Hard, bar())
                .obj(),
            nodes: vec![
                node("node-a", &[("zone", "zone1"), ("node", "node-a")]),
                node("node-b", &[("zone", "zone1"), ("node", "node-b")]),
                node("node-y", &[("zone", "zone2"), ("node", "node-y")]),
            ],
            existing: vec![
                pod("p-a").node("node-a").label("foo", "").obj(),
                pod("p-b").node("node-b").label("bar", "").obj(),
            ],
            constraints: vec![z, n],
            paths: vec![
                cp(("zone2", 0), ("zone1", 1)),
                cp(("node-a", 0), ("node-y", 0)),
            ],
            counts: vec![
                counts(&[("zone1", 1), ("zone2", 0)]),
                counts(&[("node-a", 0), ("node-b", 1), ("node-y", 0)]),
            ],
        },
        PfCase {
            name: "different labelSelectors - complex pods",
            pod: pod("p")
                .label("foo", "")
                .label("bar", "")
                .c(1, "zone", Hard, foo())
                .c(1, "node", Hard, bar())
                .obj(),
            nodes: vec![
                node("node-a", &[("zone", "zone1"), ("node", "node-a")]),
                node("node-b", &[("zone", "zone1"), ("node", "node-b")]),
                node("node-y", &[("zone", "zone2"), ("node", "node-y")]),
            ],
            existing: vec![
                pod("p-a1").node("node-a").label("foo", "").obj(),
                pod("p-a2")
                    .node("node-a")
                    .label("foo", "")
                    .label("bar", "")
                    .obj(),
                pod("p-b1").node("node-b").label("foo", "").obj(),
                pod("p-y1").node("node-y").label("foo", "").obj(),
                pod("p-y2")
                    .node("node-y")
                    .label("foo", "")
                    .label("bar", "")
                    .obj(),
                pod("p-y3").node("node-y").label("foo", "").obj(),
                pod("p-y4")
                    .node("node-y")
                    .label("foo", "")
                    .label("bar", "")
                    .obj(),
            ],
            constraints: vec![z, n],
            paths: vec![
                cp(("zone1", 3), ("zone2", 4)),
                cp(("node-b", 0), ("node-a", 1)),
            ],
            counts: vec![
                counts(&[("zone1", 3), ("zone2", 4)]),
                counts(&[("node-a", 1), ("node-b", 0), ("node-y", 2)]),
            ],
        },
        PfCase {
            name: "two spreadConstraints, and with podAffinity",
            pod: pod("p")
                .label("foo", "")
                .node_affinity("node", Operator::NotIn, &["node-x"])
                .c(1, "zone", Hard, foo())
                .c(1, "node", Hard, foo())
                .obj(),
            nodes: four_nodes(),
            existing: foo_pods(&[("node-a", 2), ("node-b", 1), ("node-y", 4)]),
            constraints: vec![z, n],
            paths: vec![
                cp(("zone1", 3), ("zone2", 4)),
                cp(("node-b", 1), ("node-a", 2)),
            ],
            counts: vec![
                counts(&[("zone1", 3), ("zone2", 4)]),
                counts(&[("node-a", 2), ("node-b", 1), ("node-y", 4)]),
            ],
        },
        PfCase {
            name: "NodeAffinityPolicy honored with labelSelectors",
            pod: pod("p")
                .label("foo", "")
                .node_selector("foo", "")
                .c(1, "node", Hard, bar())
                .obj(),
            nodes: vec![
                node("node-a", &[("node", "node-a"), ("foo", "")]),
                node("node-b", &[("node", "node-b"), ("foo", "")]),
                node("node-c", &[("node", "node-c"), ("bar", "")]),
            ],
            existing: vec![
                pod("p-a").node("node-a").label("bar", "").obj(),
                pod("p-b").node("node-b").label("bar", "").obj(),
                pod("p-c").node("node-b").label("bar", "").obj(),
                pod("p-d").node("node-c").obj(),
            ],
            constraints: vec![n],
            paths: vec![cp(("node-a", 1), ("node-b", 2))],
            counts: vec![counts(&[("node-a", 1), ("node-b", 2)])],
        },
        PfCase {
            name: "NodeAffinityPolicy ignored with labelSelectors",
            pod: pod("p")
                .label("foo", "")
                .node_selector("foo", "")
                .spread(tsc(1, "node", Hard, bar()).affinity(Ignore))
                .obj(),
            nodes: vec![
                node("node-a", &[("node", "node-a"), ("foo", "")]),
                node("node-b", &[("node", "node-b"), ("foo", "")]),
                node("node-c", &[("node", "node-c"), ("bar", "")]),
            ],
            existing: vec![
                pod("p-a").node("node-a").label("bar", "").obj(),
                pod("p-b").node("node-b").label("bar", "").obj(),
                pod("p-c").node("node-b").label("bar", "").obj(),
                pod("p-d").node("node-c").obj(),
            ],
            constraints: vec![("node", 1, 1, Ignore, Ignore)],
            paths: vec![cp(("node-c", 0), ("node-a", 1))],
            counts: vec![counts(&[("node-a", 1), ("node-b", 2), ("node-c", 0)])],
        },
        PfCase {
            name: "NodeAffinityPolicy honored with nodeAffinity",
            pod: pod("p")
                .label("foo", "")
                .node_affinity("foo", Operator::In, &[""])
                .c(1, "node", Hard, bar())
                .obj(),
            nodes: vec![
                node("node-a", &[("node", "node-a"), ("foo", "")]),
                node("node-b", &[("node", "node-b"), ("foo", "")]),
                node("node-c", &[("node", "node-c"), ("bar", "")]),
            ],
            existing: vec![
                pod("p-a").node("node-a").label("bar", "").obj(),
                pod("p-c").node("node-b").label("bar", "").obj(),
                pod("p-d").node("node-b").label("bar", "").obj(),
                pod("p-e").node("node-c").obj(),
            ],
            constraints: vec![n],
            paths: vec![cp(("node-a", 1), ("node-b", 2))],
            counts: vec![counts(&[("node-a", 1), ("node-b", 2)])],
        },
        PfCase {
            name: "NodeTaintsPolicy ignored",
            pod: pod("p").label("foo", "").c(1, "node", Hard, bar()).obj(),
            nodes: vec![
                node("node-a", &[("node", "node-a")]),
                node("node-b", &[("node", "node-b")]),
                tainted(node("node-c", &[("node", "node-c"), ("bar", "")])),
            ],
            existing: vec![
                pod("p-a").node("node-a").label("bar", "").obj(),
                pod("p-b").node("node-b").label("bar", "").obj(),
                pod("p-c").node("node-b").label("bar", "").obj(),
                pod("p-d").node("node-c").obj(),
            ],
            constraints: vec![n],
            paths: vec![cp(("node-c", 0), ("node-a", 1))],
            counts: vec![counts(&[("node-a", 1), ("node-b", 2), ("node-c", 0)])],
        },
        PfCase {
            name: "NodeTaintsPolicy honored",
            pod: pod("p")
                .label("foo", "")
                .spread(tsc(1, "node", Hard, bar()).taints(Honor))
                .obj(),
            nodes: vec![
                node("node-a", &[("node", "node-a")]),
                node("node-b", &[("node", "node-b")]),
                tainted(node("node-c", &[("node", "node-c"), ("bar", "")])),
            ],
            existing: vec![
                pod("p-a").node("node-a").label("bar", "").obj(),
                pod("p-b").node("node-b").label("bar", "").obj(),
                pod("p-c").node("node-b").label("bar", "").obj(),
                pod("p-d").node("node-c").obj(),
            ],
            constraints: vec![("node", 1, 1, Honor, Honor)],
            paths: vec![cp(("node-a", 1), ("node-b", 2))],
            counts: vec![counts(&[("node-a", 1), ("node-b", 2)])],
        },
        PfCase {
            name: "NodeTaintsPolicy honored with tolerated taints",
            pod: pod("p")
                .label("foo", "")
                .toleration_exists("node.kubernetes.io/unschedulable")
                .spread(tsc(1, "node", Hard, bar()).taints(Honor))
                .obj(),
            nodes: vec![
                node("node-a", &[("node", "node-a")]),
                node("node-b", &[("node", "node-b")]),
                tainted(node("node-c", &[("node", "node-c"), ("bar", "")])),
            ],
            existing: vec![
                pod("p-a").node("node-a").label("bar", "").obj(),
                pod("p-b").node("node-b").label("bar", "").obj(),
                pod("p-c").node("node-b").label("bar", "").obj(),
                pod("p-d").node("node-c").obj(),
            ],
            constraints: vec![("node", 1, 1, Honor, Honor)],
            paths: vec![cp(("node-c", 0), ("node-a", 1))],
            counts: vec![counts(&[("node-a", 1), ("node-b", 2), ("node-c", 0)])],
        },
        PfCase {
            name: "two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
            pod: pod("p")
                .label("foo", "")
                .node_selector("foo", "")
                .c(1, "zone", Hard, foo())
                .spread(tsc(1, "node", Hard, foo()).affinity(Ignore))
                .obj(),
            nodes: vec![
                node(
                    "node-a",
                    &[("zone", "zone1"), ("node", "node-a"), ("foo", "")],
                ),
                node("node-b", &[("zone", "zone1"), ("node", "node-b")]),
                node(
                    "node-x",
                    &[("zone", "zone2"), ("node", "node-x"), ("foo", "")],
                ),
            ],
            existing: foo_pods(&[("node-b", 2), ("node-x", 1)]),
            constraints: vec![z, ("node", 1, 1, Ignore, Ignore)],
            paths: vec![
                cp(("zone1", 0), ("zone2", 1)),
                cp(("node-a", 0), ("node-x", 1)),
            ],
            counts: vec![
                counts(&[("zone1", 0), ("zone2", 1)]),
                counts(&[("node-a", 0), ("node-b", 2), ("node-x", 1)]),
            ],
        },
        PfCase {
            name: "two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
            pod: pod("p")
                .label("foo", "")
                .spread(tsc(1, "zone", Hard, foo()).taints(Honor))
                .c(1, "node", Hard, foo())
                .obj(),
            nodes: vec![
                node(
                    "node-a",
                    &[("zone", "zone1"), ("node", "node-a"), ("foo", "")],
                ),
                tainted(node("node-b", &[("zone", "zone1"), ("node", "node-b")])),
                node(
                    "node-x",
                    &[("zone", "zone2"), ("node", "node-x"), ("foo", "")],
                ),
            ],
            existing: foo_pods(&[("node-b", 2), ("node-x", 1)]),
            constraints: vec![("zone", 1, 1, Honor, Honor), n],
            paths: vec![
                cp(("zone1", 0), ("zone2", 1)),
                cp(("node-a", 0), ("node-x", 1)),
            ],
            counts: vec![
                counts(&[("zone1", 0), ("zone2", 1)]),
                counts(&[("node-a", 0), ("node-b", 2), ("node-x", 1)]),
            ],
        },
        PfCase {
            name: "two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
            pod: pod("p")
                .label("foo", "")
                .node_selector("foo", "")
                .spread(tsc(1, "zone", Hard, foo()).affinity(Ignore))
                .spread(tsc(1, "node", Hard, foo()).taints(Honor))
                .obj(),
            nodes: vec![
                node("node-a", &[("zone", "zone1"), ("node", "node-a")]),
                tainted(node(
                    "node-b",
                    &[("zone", "zone1"), ("node", "node-b"), ("foo", "")],
                )),
                node(
                    "node-x",
                    &[("zone", "zone2"), ("node", "node-x"), ("foo", "")],
                ),
                node(
                    "node-y",
                    &[("zone", "zone2"), ("node", "node-y"), ("foo", "")],
                ),
            ],
            existing: foo_pods(&[("node-a", 2), ("node-x", 2), ("node-y", 1)]),
            constraints: vec![("zone", 1, 1, Ignore, Ignore), ("node", 1, 1, Honor, Honor)],
            paths: vec![
                cp(("zone1", 2), ("zone2", 3)),
                cp(("node-y", 1), ("node-x", 2)),
            ],
            counts: vec![
                counts(&[("zone1", 2), ("zone2", 3)]),
                counts(&[("node-x", 2), ("node-y", 1)]),
            ],
        },
        PfCase {
            // kube's "matchLabelKeys ignored when feature gate disabled" has the gate off;
            // with it on (1.34), `bar` joins the selector as `bar In ("")`.
            name: "matchLabelKeys merged into the selector",
            pod: pod("p")
                .label("foo", "")
                .label("bar", "")
                .spread(tsc(1, "zone", Hard, foo()).match_label_keys(&["bar"]))
                .obj(),
            nodes: four_nodes(),
            existing: vec![
                pod("p-a1").node("node-a").label("foo", "").obj(),
                pod("p-a2")
                    .node("node-a")
                    .label("foo", "")
                    .label("bar", "")
                    .obj(),
                pod("p-b1").node("node-b").label("foo", "").obj(),
                pod("p-y1")
                    .node("node-y")
                    .label("foo", "")
                    .label("bar", "")
                    .obj(),
                pod("p-y2")
                    .node("node-y")
                    .label("foo", "")
                    .label("bar", "")
                    .obj(),
            ],
            constraints: vec![z],
            paths: vec![cp(("zone1", 1), ("zone2", 2))],
            counts: vec![counts(&[("zone1", 1), ("zone2", 2)])],
        },
    ];
    for c in cases {
        check_pf(&pl, c);
    }
}

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go (TestPreFilterState:
// "default constraints and a service", "... that doesn't match", "... but pod has
// constraints", "default soft constraints and a service")
#[test]
fn pre_filter_default_constraints() {
    let defaults = vec![
        default_c(3, "node", "DoNotSchedule"),
        default_c(2, "node", "ScheduleAnyway"),
        default_c(5, "rack", "DoNotSchedule"),
    ];
    let svc = label_sel("foo", "bar");
    let pl = plugin_with(list_args(defaults.clone()), svc.clone());
    let p = pod("p").label("foo", "bar").label("baz", "kar").obj();
    let s = pre_filter_state(&pl, &p, &snapshot(vec![], vec![]));
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
            ("node".to_string(), 3, svc.clone()),
            ("rack".to_string(), 5, svc.clone())
        ]
    );
    assert_eq!(
        s.critical_paths,
        vec![CriticalPaths::default(), CriticalPaths::default()]
    );
    assert!((0..2).all(|i| s.tp_value_to_match_num.domains(i) == 0));

    // Nothing selects the pod: the defaults do not apply.
    let pl = plugin_with(list_args(vec![default_c(3, "node", "DoNotSchedule")]), None);
    let (_, st) = run_pre_filter(&pl, &p, &snapshot(vec![], vec![]));
    assert!(st.is_skip());

    // The pod's own constraints win over the defaults.
    let pl = plugin_with(
        list_args(vec![default_c(2, "node", "DoNotSchedule")]),
        svc.clone(),
    );
    let own = pod("p")
        .label("foo", "bar")
        .label("baz", "tar")
        .c(1, "zone", Hard, label_sel("baz", "tar"))
        .c(2, "planet", Soft, label_sel("fot", "rok"))
        .obj();
    let s = pre_filter_state(&pl, &own, &snapshot(vec![], vec![]));
    assert_eq!(s.constraints.len(), 1);
    assert_eq!(s.constraints[0].topology_key, Sym::new("zone"));
    assert_eq!(s.constraints[0].selector, label_sel("baz", "tar"));

    // Only soft defaults: PreFilter skips.
    let pl = plugin_with(
        list_args(vec![default_c(2, "node", "ScheduleAnyway")]),
        svc.clone(),
    );
    let (_, st) = run_pre_filter(&pl, &p, &snapshot(vec![], vec![]));
    assert!(st.is_skip());

    // System defaults are all ScheduleAnyway: PreFilter always skips pods without constraints.
    let pl = plugin_with(PodTopologySpreadArgs::default(), svc);
    let (_, st) = run_pre_filter(&pl, &p, &snapshot(four_nodes(), vec![]));
    assert!(st.is_skip());
    // ...and a pod without hard constraints skips too.
    let soft = pod("p").label("foo", "").c(1, "zone", Soft, foo()).obj();
    let (_, st) = run_pre_filter(&plugin(), &soft, &snapshot(four_nodes(), vec![]));
    assert!(st.is_skip());
}

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go (TestPreFilterStateAddPod)
#[test]
fn pre_filter_state_add_pod() {
    struct C {
        name: &'static str,
        preemptor: Pod,
        added: Pod,
        existing: Vec<Pod>,
        node_idx: usize,
        nodes: Vec<Node>,
        paths: Vec<[(String, i32); 2]>,
        counts: Vec<Counts>,
    }
    let two = || {
        vec![
            node("node-a", &[("zone", "zone1"), ("node", "node-a")]),
            node("node-b", &[("zone", "zone1"), ("node", "node-b")]),
        ]
    };
    let axes = || {
        vec![
            node("node-a", &[("zone", "zone1"), ("node", "node-a")]),
            node("node-x", &[("zone", "zone2"), ("node", "node-x")]),
        ]
    };
    let three = || {
        vec![
            node("node-a", &[("zone", "zone1"), ("node", "node-a")]),
            node("node-b", &[("zone", "zone1"), ("node", "node-b")]),
            node("node-x", &[("zone", "zone2"), ("node", "node-x")]),
        ]
    };
    let on_node = || pod("p").label("foo", "").c(1, "node", Hard, foo()).obj();
    let zone_node = || {
        pod("p")
            .label("foo", "")
            .c(1, "zone", Hard, foo())
            .c(1, "node", Hard, foo())
            .obj()
    };
    let foo_bar = || {
        pod("p")
            .label("foo", "")
            .label("bar", "")
            .c(1, "zone", Hard, foo())
            .c(1, "node", Hard, bar())
            .obj()
    };
    let cases = vec![
        C {
            name: "node a and b both impact current min match",
            preemptor: on_node(),
            added: pod("p-a1").node("node-a").label("foo", "").obj(),
            existing: vec![],
            node_idx: 0,
            nodes: two(),
            paths: vec![cp(("node-b", 0), ("node-a", 1))],
            counts: vec![counts(&[("node-a", 1), ("node-b", 0)])],
        },
        C {
            name: "only node a impacts current min match",
            preemptor: on_node(),
            added: pod("p-a1").node("node-a").label("foo", "").obj(),
            existing: foo_pods(&[("node-b", 1)]),
            node_idx: 0,
            nodes: two(),
            paths: vec![cp(("node-a", 1), ("node-b", 1))],
            counts: vec![counts(&[("node-a", 1), ("node-b", 1)])],
        },
        C {
            name: "add a pod in a different namespace doesn't change topologyKeyToMinPodsMap",
            preemptor: on_node(),
            added: pod("p-a1").ns("ns1").node("node-a").label("foo", "").obj(),
            existing: foo_pods(&[("node-b", 1)]),
            node_idx: 0,
            nodes: two(),
            paths: vec![cp(("node-a", 0), ("node-b", 1))],
            counts: vec![counts(&[("node-a", 0), ("node-b", 1)])],
        },
        C {
            name: "add pod on non-critical node won't trigger re-calculation",
            preemptor: on_node(),
            added: pod("p-b2").node("node-b").label("foo", "").obj(),
            existing: foo_pods(&[("node-b", 1)]),
            node_idx: 1,
            nodes: two(),
            paths: vec![cp(("node-a", 0), ("node-b", 2))],
            counts: vec![counts(&[("node-a", 0), ("node-b", 2)])],
        },
        C {
            name: "node a and x both impact topologyKeyToMinPodsMap on zone and node",
            preemptor: zone_node(),
            added: pod("p-a1").node("node-a").label("foo", "").obj(),
            existing: vec![],
            node_idx: 0,
            nodes: axes(),
            paths: vec![
                cp(("zone2", 0), ("zone1", 1)),
                cp(("node-x", 0), ("node-a", 1)),
            ],
            counts: vec![
                counts(&[("zone1", 1), ("zone2", 0)]),
                counts(&[("node-a", 1), ("node-x", 0)]),
            ],
        },
        C {
            name: "only node a impacts topologyKeyToMinPodsMap on zone and node",
            preemptor: zone_node(),
            added: pod("p-a1").node("node-a").label("foo", "").obj(),
            existing: foo_pods(&[("node-x", 1)]),
            node_idx: 0,
            nodes: axes(),
            paths: vec![
                cp(("zone1", 1), ("zone2", 1)),
                cp(("node-a", 1), ("node-x", 1)),
            ],
            counts: vec![
                counts(&[("zone1", 1), ("zone2", 1)]),
                counts(&[("node-a", 1), ("node-x", 1)]),
            ],
        },
        C {
            name: "node a impacts topologyKeyToMinPodsMap on node, node x impacts topologyKeyToMinPodsMap on zone",
            preemptor: zone_node(),
            added: pod("p-a1").node("node-a").label("foo", "").obj(),
            existing: foo_pods(&[("node-b", 2), ("node-x", 1)]),
            node_idx: 0,
            nodes: three(),
            paths: vec![
                cp(("zone2", 1), ("zone1", 3)),
                cp(("node-a", 1), ("node-x", 1)),
            ],
            counts: vec![
                counts(&[("zone1", 3), ("zone2", 1)]),
                counts(&[("node-a", 1), ("node-b", 2), ("node-x", 1)]),
            ],
        },
        C {
            name: "Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on zone",
            preemptor: foo_bar(),
            added: pod("p-a1").node("node-a").label("foo", "").obj(),
            existing: vec![
                pod("p-b1")
                    .node("node-b")
                    .label("foo", "")
                    .label("bar", "")
                    .obj(),
                pod("p-x1")
                    .node("node-x")
                    .label("foo", "")
                    .label("bar", "")
                    .obj(),
                pod("p-x2").node("node-x").label("bar", "").obj(),
            ],
            node_idx: 0,
            nodes: three(),
            paths: vec![
                cp(("zone2", 1), ("zone1", 2)),
                cp(("node-a", 0), ("node-b", 1)),
            ],
            counts: vec![
                counts(&[("zone1", 2), ("zone2", 1)]),
                counts(&[("node-a", 0), ("node-b", 1), ("node-x", 2)]),
            ],
        },
        C {
            name: "Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on both zone and node",
            preemptor: foo_bar(),
            added: pod("p-a1")
                .node("node-a")
                .label("foo", "")
                .label("bar", "")
                .obj(),
            existing: vec![
                pod("p-b1").node("node-b").label("bar", "").obj(),
                pod("p-x1")
                    .node("node-x")
                    .label("foo", "")
                    .label("bar", "")
                    .obj(),
                pod("p-x2").node("node-x").label("bar", "").obj(),
            ],
            node_idx: 0,
            nodes: three(),
            paths: vec![
                cp(("zone1", 1), ("zone2", 1)),
                cp(("node-a", 1), ("node-b", 1)),
            ],
            counts: vec![
                counts(&[("zone1", 1), ("zone2", 1)]),
                counts(&[("node-a", 1), ("node-b", 1), ("node-x", 2)]),
            ],
        },
        C {
            name: "add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
            preemptor: pod("p")
                .label("foo", "")
                .node_affinity("foo", Operator::NotIn, &["bar"])
                .c(1, "zone", Hard, foo())
                .obj(),
            added: pod("p-a1")
                .node("node-a")
                .label("foo", "")
                .label("zone", "zone1")
                .obj(),
            existing: vec![
                pod("p-a2")
                    .node("node-a")
                    .label("foo", "")
                    .label("zone", "zone1")
                    .obj(),
                pod("p-b1")
                    .node("node-b")
                    .label("foo", "")
                    .label("zone", "zone2")
                    .obj(),
            ],
            node_idx: 0,
            nodes: vec![
                node(
                    "node-a",
                    &[("zone", "zone1"), ("node", "node-a"), ("foo", "bar")],
                ),
                node(
                    "node-b",
                    &[("zone", "zone2"), ("node", "node-b"), ("foo", "")],
                ),
            ],
            paths: vec![cp(("zone2", 1), ("", MAX))],
            counts: vec![counts(&[("zone2", 1)])],
        },
        C {
            name: "add a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled",
            preemptor: pod("p").label("foo", "").c(1, "zone", Hard, foo()).obj(),
            added: pod("p-b1")
                .node("node-b")
                .label("foo", "")
                .label("zone", "zone2")
                .obj(),
            existing: vec![
                pod("p-a1")
                    .node("node-a")
                    .label("foo", "")
                    .label("zone", "zone1")
                    .obj(),
                pod("p-b2")
                    .node("node-b")
                    .label("foo", "")
                    .label("zone", "zone2")
                    .obj(),
            ],
            node_idx: 1,
            nodes: vec![
                node(
                    "node-a",
                    &[("zone", "zone1"), ("node", "node-a"), ("foo", "bar")],
                ),
                node(
                    "node-b",
                    &[("zone", "zone2"), ("node", "node-b"), ("foo", "")],
                ),
            ],
            paths: vec![cp(("zone1", 1), ("zone2", 2))],
            counts: vec![counts(&[("zone1", 1), ("zone2", 2)])],
        },
    ];
    let pl = plugin();
    for c in cases {
        let target = c.nodes[c.node_idx].name;
        let snap = snapshot(c.nodes, c.existing);
        let (mut cs, st) = run_pre_filter(&pl, &c.preemptor, &snap);
        assert!(st.is_success(), "{}", c.name);
        let ni = snap.get(target).unwrap().clone();
        let ext = pl.pre_filter_extensions().unwrap();
        assert!(
            ext.add_pod(&mut cs, &c.preemptor, &c.added, &ni)
                .is_success()
        );
        let s = cs.read::<PreFilterState>(PRE_FILTER_STATE_KEY).unwrap();
        assert_eq!(got_counts(s), c.counts, "{}: counts", c.name);
        let got: Vec<_> = s.critical_paths.iter().map(paths).collect();
        assert_eq!(got, c.paths, "{}: paths", c.name);
    }
}

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go
// (TestPreFilterStateRemovePod)
#[test]
fn pre_filter_state_remove_pod() {
    let pl = plugin();
    // "pods spread across zones as 3/1, preemptor pod uses 1 as a victim".
    let nodes = four_nodes();
    let existing = foo_pods(&[("node-a", 1), ("node-b", 2), ("node-x", 1)]);
    let victim = existing[0].clone();
    let p = pod("p").label("foo", "").c(1, "zone", Hard, foo()).obj();
    let snap = snapshot(nodes, existing);
    let (mut cs, _) = run_pre_filter(&pl, &p, &snap);
    let ni = snap.get(Sym::new("node-a")).unwrap().clone();
    let ext = pl.pre_filter_extensions().unwrap();
    assert!(ext.remove_pod(&mut cs, &p, &victim, &ni).is_success());
    let s = cs.read::<PreFilterState>(PRE_FILTER_STATE_KEY).unwrap();
    assert_eq!(got_counts(s), vec![counts(&[("zone1", 2), ("zone2", 1)])]);
    assert_eq!(paths(&s.critical_paths[0]), cp(("zone2", 1), ("zone1", 2)));

    // "victim pod doesn't match the selector": nothing changes.
    let other = pod("p-c").node("node-a").label("bar", "").obj();
    let snap = snapshot(four_nodes(), foo_pods(&[("node-a", 1), ("node-x", 2)]));
    let (mut cs, _) = run_pre_filter(&pl, &p, &snap);
    let ni = snap.get(Sym::new("node-a")).unwrap().clone();
    assert!(ext.remove_pod(&mut cs, &p, &other, &ni).is_success());
    let s = cs.read::<PreFilterState>(PRE_FILTER_STATE_KEY).unwrap();
    assert_eq!(got_counts(s), vec![counts(&[("zone1", 1), ("zone2", 2)])]);

    // Without a PreFilter state AddPod/RemovePod report an error.
    let mut empty = CycleState::new();
    let st = ext.remove_pod(&mut empty, &p, &other, &ni);
    assert_eq!(st.code(), Code::Error);
    assert!(st.message().contains("PreFilterPodTopologySpread"));
}
