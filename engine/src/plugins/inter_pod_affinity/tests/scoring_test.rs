use super::*;

// ---- scoring ------------------------------------------------------------------------------

/// PreScore over `nodes` (all feasible), then Score and NormalizeScore; `None` for Skip.
fn run_score(pl: &InterPodAffinity, p: &Pod, nodes: &[Node], pods: &[Pod]) -> Option<Vec<i64>> {
    let snap = snapshot(nodes, pods);
    let infos: Vec<&crate::framework::NodeInfo> =
        nodes.iter().map(|n| &**snap.get(n.name).unwrap()).collect();
    let mut state = CycleState::new();
    let st = pl.pre_score(&mut state, p, &infos, &snap);
    if st.is_skip() {
        return None;
    }
    assert!(st.is_success(), "{st:?}");
    let mut scores: Vec<i64> = infos
        .iter()
        .map(|n| pl.score(&state, p, n).unwrap())
        .collect();
    assert!(pl.normalize_score(&state, p, &mut scores).is_success());
    Some(scores)
}

struct Affinities {
    stay_s1_region: PodAffinity,
    stay_s2_region: PodAffinity,
    affinity3: PodAffinity,
    hard: PodAffinity,
    away_s1_az: PodAffinity,
    away_s2_az: PodAffinity,
    stay_s1_region_away_s2_az: PodAffinity,
    ns_selector: PodAffinity,
    anti_ns_selector: PodAffinity,
}

/// The affinities of kube's scoring tables.
fn affinities() -> Affinities {
    let s1 = || term(&[("security", IN, &["S1"])], "region");
    let s2 = || term(&[("security", IN, &["S2"])], "region");
    let in_az = |v: &str| term(&[("security", IN, &[v])], "az");
    let ns_term = || {
        term_ns(
            &[("security", IN, &["S1"])],
            "region",
            &["subteam2.team2"],
            Some(sel(&[("team", IN, &["team1"])])),
        )
    };
    Affinities {
        stay_s1_region: PodAffinity {
            preferred_affinity: vec![w(5, s1())],
            ..Default::default()
        },
        stay_s2_region: PodAffinity {
            preferred_affinity: vec![w(6, s2())],
            ..Default::default()
        },
        affinity3: PodAffinity {
            preferred_affinity: vec![
                w(
                    8,
                    term(
                        &[("security", NOT_IN, &["S1"]), ("security", IN, &["S2"])],
                        "region",
                    ),
                ),
                w(
                    2,
                    term(
                        &[("security", EXISTS, &[]), ("wrongkey", NOT_EXISTS, &[])],
                        "region",
                    ),
                ),
            ],
            ..Default::default()
        },
        hard: PodAffinity {
            required_affinity: vec![
                term(&[("security", IN, &["S1", "value2"])], "region"),
                term(
                    &[("security", EXISTS, &[]), ("wrongkey", NOT_EXISTS, &[])],
                    "region",
                ),
            ],
            ..Default::default()
        },
        away_s1_az: PodAffinity {
            preferred_anti_affinity: vec![w(5, in_az("S1"))],
            ..Default::default()
        },
        away_s2_az: PodAffinity {
            preferred_anti_affinity: vec![w(5, in_az("S2"))],
            ..Default::default()
        },
        stay_s1_region_away_s2_az: PodAffinity {
            preferred_affinity: vec![w(8, s1())],
            preferred_anti_affinity: vec![w(5, in_az("S2"))],
            ..Default::default()
        },
        ns_selector: PodAffinity {
            preferred_affinity: vec![w(5, ns_term())],
            ..Default::default()
        },
        anti_ns_selector: PodAffinity {
            preferred_anti_affinity: vec![w(5, ns_term())],
            ..Default::default()
        },
    }
}

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/interpodaffinity/scoring_test.go (TestPreferredAffinity).
#[test]
fn preferred_affinity() {
    let a = affinities();
    let china = [("region", "China")];
    let india = [("region", "India")];
    let az1 = [("az", "az1")];
    let az2 = [("az", "az2")];
    let china_az1 = [("region", "China"), ("az", "az1")];
    let s1 = [("security", "S1")];
    let s2 = [("security", "S2")];
    let on = |n: &str, l: &[(&str, &str)]| pod().node(n).labels(l).obj();
    let with = |n: &str, l: &[(&str, &str)], aff: &PodAffinity| {
        pod().node(n).labels(l).affinity(aff).obj()
    };
    let m = MAX_NODE_SCORE;
    // (name, pod, pods, nodes, want; None = Skip)
    type Case = (&'static str, Pod, Vec<Pod>, Vec<Node>, Option<Vec<i64>>);
    let cases: Vec<Case> = vec![
        (
            "no affinity anywhere: Skip",
            pod().labels(&s1).obj(),
            vec![],
            vec![
                node("node1", &china),
                node("node2", &india),
                node("node3", &az1),
            ],
            None,
        ),
        (
            "affinity: matching pods in the topology score high",
            pod().labels(&s1).affinity(&a.stay_s1_region).obj(),
            vec![on("node1", &s1), on("node2", &s2), on("node3", &s1)],
            vec![
                node("node1", &china),
                node("node2", &india),
                node("node3", &az1),
            ],
            Some(vec![m, 0, 0]),
        ),
        (
            "affinity: every node of the matching domain scores the same",
            pod().affinity(&a.stay_s1_region).obj(),
            vec![on("node1", &s1)],
            vec![
                node("node1", &china),
                node("node2", &china_az1),
                node("node3", &india),
            ],
            Some(vec![m, m, 0]),
        ),
        (
            "affinity: the region with more matches scores high",
            pod().labels(&s1).affinity(&a.stay_s2_region).obj(),
            vec![
                on("node1", &s2),
                on("node1", &s2),
                on("node2", &s2),
                on("node3", &s2),
                on("node4", &s2),
                on("node5", &s2),
            ],
            vec![
                node("node1", &china),
                node("node2", &india),
                node("node3", &china),
                node("node4", &china),
                node("node5", &india),
            ],
            Some(vec![m, 0, m, m, 0]),
        ),
        (
            "affinity: different operators, some match failures",
            pod().labels(&s1).affinity(&a.affinity3).obj(),
            vec![on("node1", &s1), on("node2", &s2), on("node3", &s1)],
            vec![
                node("node1", &china),
                node("node2", &india),
                node("node3", &az1),
            ],
            Some(vec![20, m, 0]),
        ),
        (
            "affinity symmetry: existing pods' preferred terms",
            pod().labels(&s2).obj(),
            vec![
                with("node1", &s1, &a.stay_s1_region),
                with("node2", &s2, &a.stay_s2_region),
            ],
            vec![
                node("node1", &china),
                node("node2", &india),
                node("node3", &az1),
            ],
            Some(vec![0, m, 0]),
        ),
        (
            "affinity symmetry with namespace selector",
            pod().ns("subteam1.team1").labels(&s1).obj(),
            vec![
                with("node1", &s1, &a.ns_selector),
                with("node2", &s2, &a.stay_s2_region),
            ],
            vec![
                node("node1", &china),
                node("node2", &india),
                node("node3", &az1),
            ],
            Some(vec![m, 0, 0]),
        ),
        (
            "anti-affinity symmetry with namespace selector",
            pod().ns("subteam1.team1").labels(&s1).obj(),
            vec![
                with("node1", &s1, &a.anti_ns_selector),
                with("node2", &s2, &a.stay_s2_region),
            ],
            vec![
                node("node1", &china),
                node("node2", &india),
                node("node3", &az1),
            ],
            Some(vec![0, m, m]),
        ),
        (
            "affinity symmetry: existing pods' required terms at hardPodAffinityWeight",
            pod().labels(&s1).obj(),
            vec![with("node1", &s1, &a.hard), with("node2", &s2, &a.hard)],
            vec![
                node("node1", &china),
                node("node2", &india),
                node("node3", &az1),
            ],
            Some(vec![m, m, 0]),
        ),
        (
            "anti-affinity: a node without matching pods scores high",
            pod().labels(&s1).affinity(&a.away_s1_az).obj(),
            vec![on("node1", &s1), on("node2", &s2)],
            vec![node("node1", &az1), node("node2", &china)],
            Some(vec![0, m]),
        ),
        (
            "anti-affinity: a node without the topology key scores high",
            pod().labels(&s1).affinity(&a.away_s1_az).obj(),
            vec![on("node1", &s1), on("node2", &s1)],
            vec![node("node1", &az1), node("node2", &china)],
            Some(vec![0, m]),
        ),
        (
            "anti-affinity: more matching pods score lower",
            pod().labels(&s1).affinity(&a.away_s1_az).obj(),
            vec![on("node1", &s1), on("node1", &s1), on("node2", &s2)],
            vec![node("node1", &az1), node("node2", &india)],
            Some(vec![0, m]),
        ),
        (
            "anti-affinity symmetry",
            pod().labels(&s2).obj(),
            vec![
                with("node1", &s1, &a.away_s2_az),
                with("node2", &s2, &a.away_s1_az),
            ],
            vec![node("node1", &az1), node("node2", &az2)],
            Some(vec![0, m]),
        ),
        (
            "affinity and anti-affinity",
            pod()
                .labels(&s1)
                .affinity(&a.stay_s1_region_away_s2_az)
                .obj(),
            vec![on("node1", &s1), on("node2", &s1)],
            vec![node("node1", &china), node("node2", &az1)],
            Some(vec![m, 0]),
        ),
        (
            "affinity and anti-affinity, pods with the same labels",
            pod()
                .labels(&s1)
                .affinity(&a.stay_s1_region_away_s2_az)
                .obj(),
            vec![
                on("node1", &s1),
                on("node1", &s1),
                on("node2", &s1),
                on("node3", &s1),
                on("node3", &s1),
                on("node4", &s1),
                on("node5", &s1),
            ],
            vec![
                node("node1", &china_az1),
                node("node2", &india),
                node("node3", &china),
                node("node4", &china),
                node("node5", &india),
            ],
            Some(vec![m, 0, m, m, 0]),
        ),
        (
            "affinity, anti-affinity and symmetry",
            pod()
                .labels(&s1)
                .affinity(&a.stay_s1_region_away_s2_az)
                .obj(),
            vec![
                on("node1", &s1),
                on("node2", &s2),
                with("node3", &[], &a.stay_s1_region_away_s2_az),
                with("node4", &[], &a.away_s1_az),
            ],
            vec![
                node("node1", &china),
                node("node2", &az1),
                node("node3", &india),
                node("node4", &az2),
            ],
            Some(vec![m, 0, m, 0]),
        ),
        (
            "some nodes of a topology without pods with affinity",
            pod().labels(&s1).obj(),
            vec![
                on("node1", &s1),
                with("node2", &[], &a.stay_s1_region_away_s2_az),
            ],
            vec![node("node1", &china), node("node2", &china)],
            Some(vec![0, 0]),
        ),
    ];
    let pl = plugin();
    for (name, p, pods, nodes, want) in cases {
        let got = run_score(&pl, &p, &nodes, &pods);
        assert_eq!(got, want, "{name}");
    }
}

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/interpodaffinity/scoring_test.go
// (TestPreferredAffinityWithHardPodAffinitySymmetricWeight).
#[test]
fn hard_pod_affinity_symmetric_weight() {
    let a = affinities();
    let china = [("region", "China")];
    let india = [("region", "India")];
    let az1 = [("az", "az1")];
    let s1 = [("service", "S1")];
    let hard = PodAffinity {
        required_affinity: vec![term(&[("service", IN, &["S1"])], "region")],
        ..Default::default()
    };
    let pods = || {
        vec![
            pod().node("node1").affinity(&hard).obj(),
            pod().node("node2").affinity(&hard).obj(),
        ]
    };
    let nodes = [
        node("node1", &china),
        node("node2", &india),
        node("node3", &az1),
    ];
    let incoming = pod().labels(&s1).obj();
    let m = MAX_NODE_SCORE;
    let got = run_score(&plugin(), &incoming, &nodes, &pods());
    assert_eq!(got, Some(vec![m, m, 0]));
    // hardPodAffinityWeight 0: the existing pods' required terms do not count; nothing else
    // applies.
    let zero = plugin_with(InterPodAffinityArgs {
        hard_pod_affinity_weight: 0,
        ..Default::default()
    });
    assert_eq!(run_score(&zero, &incoming, &nodes, &pods()), None);
    // With preferred terms of its own the pod is scored, the hard terms still ignored.
    let with_pref = pod().labels(&s1).affinity(&a.stay_s1_region).obj();
    assert_eq!(
        run_score(&zero, &with_pref, &nodes, &pods()),
        None,
        "no pod matches security=S1"
    );
}

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/interpodaffinity/scoring_test.go
// (TestPreferredAffinity, ignorePreferredTermsOfExistingPods cases).
#[test]
fn ignore_preferred_terms_of_existing_pods() {
    let a = affinities();
    let china = [("region", "China")];
    let india = [("region", "India")];
    let az1 = [("az", "az1")];
    let s1 = [("security", "S1")];
    let s2 = [("security", "S2")];
    let nodes = [
        node("node1", &china),
        node("node2", &india),
        node("node3", &az1),
    ];
    let pods = [
        pod()
            .node("node1")
            .labels(&s1)
            .affinity(&a.stay_s1_region)
            .obj(),
        pod()
            .node("node2")
            .labels(&s2)
            .affinity(&a.stay_s2_region)
            .obj(),
    ];
    let ignore = plugin_with(InterPodAffinityArgs {
        ignore_preferred_terms_of_existing_pods: true,
        ..Default::default()
    });
    let m = MAX_NODE_SCORE;
    // Without terms of its own, the pod is not scored at all.
    assert_eq!(
        run_score(&ignore, &pod().labels(&s2).obj(), &nodes, &pods),
        None
    );
    // The default considers the existing pods' preferences.
    assert_eq!(
        run_score(&plugin(), &pod().labels(&s2).obj(), &nodes, &pods),
        Some(vec![0, m, 0])
    );
    // With terms of its own, every term counts again: its own 5 on China, node2's pod's 6
    // on India.
    let p = pod().labels(&s2).affinity(&a.stay_s1_region).obj();
    assert_eq!(run_score(&ignore, &p, &nodes, &pods), Some(vec![83, m, 0]));
}

#[test]
fn pre_score_skips_without_feasible_nodes_and_normalize_is_min_max() {
    let pl = plugin();
    let a = affinities();
    let snap = snapshot(&[node("n", &[])], &[]);
    let p = pod().affinity(&a.stay_s1_region).obj();
    assert!(
        pl.pre_score(&mut CycleState::new(), &p, &[], &snap)
            .is_skip()
    );
    let mut s = vec![-5, 0, 5, 10];
    scoring::normalize(&mut s);
    assert_eq!(s, vec![0, 33, 66, 100]);
    let mut s = vec![7, 7];
    scoring::normalize(&mut s);
    assert_eq!(s, vec![0, 0]);
}
