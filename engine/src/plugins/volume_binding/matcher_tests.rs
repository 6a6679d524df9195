//! The binder's matcher and scorer, ported with the rest of `binder_tests.rs` (whose module
//! doc gives the provenance and the differences from kube's tables): kubernetes/component-helpers
//! storage/volume/pv_helpers_test.go (v0.37.2) TestFindMatchVolumeWithNode, and
//! pkg/scheduler/framework/plugins/volumebinding/scorer_test.go TestScore.

use super::*;

// ---- TestFindMatchVolumeWithNode (component-helpers pv_helpers_test.go) ----

/// `makeTestVolume(uid, name, capacity, available, modfn)`: a local volume, RWO and ROX,
/// told apart by the label `uid`.
fn match_pv(uid: &str, name: &str, size: &str, available: bool, class: &str) -> Value {
    let mut v = json!({
        "metadata": {"name": name, "uid": uid, "labels": {"uid": uid}},
        "spec": {"capacity": {"storage": size}, "local": {"path": "/tmp"},
                 "accessModes": ["ReadWriteOnce", "ReadOnlyMany"], "volumeMode": "Filesystem"}
    });
    if available {
        v["status"] = json!({"phase": "Available"});
    }
    if !class.is_empty() {
        v["spec"]["storageClassName"] = json!(class);
    }
    v
}

fn with_affinity(mut v: Value, value: &str) -> Value {
    v["spec"]["nodeAffinity"] = json!({"required": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "key1", "operator": "In", "values": [value]}]}]}});
    v
}

fn match_volumes() -> Vec<Value> {
    let mut prebound = with_affinity(
        match_pv("affinity-prebound", "affinity003", "100G", true, "wait"),
        "value1",
    );
    prebound["spec"]["claimRef"] = json!({"name": "claim02", "namespace": "myns"});
    vec![
        match_pv("local-small", "local001", "5G", true, ""),
        match_pv("local-pd-very-large", "local002", "200E", true, "large"),
        with_affinity(
            match_pv("affinity-pv", "affinity001", "100G", true, "wait"),
            "value1",
        ),
        with_affinity(
            match_pv("affinity-pv2", "affinity002", "150G", true, "wait"),
            "value1",
        ),
        prebound,
        with_affinity(
            match_pv("affinity-pv3", "affinity003", "200G", true, "wait"),
            "value3",
        ),
        with_affinity(
            match_pv("affinity-pv4", "affinity004", "200G", false, "wait"),
            "value4",
        ),
    ]
}

fn with_vac(mut volumes: Vec<Value>, vac: &str) -> Vec<Value> {
    for v in &mut volumes {
        v["spec"]["volumeAttributesClassName"] = json!(vac);
    }
    volumes
}

/// `makeTestPersistentVolumeClaim(name, "100G", modes, modfn)` with an optional VAC.
fn match_claim(name: &str, mode: &str, vac: Option<&str>) -> Value {
    let mut v = json!({
        "metadata": {"name": name, "namespace": "myns"},
        "spec": {"accessModes": [mode], "resources": {"requests": {"storage": "100G"}},
                 "storageClassName": "wait", "volumeMode": "Filesystem"}
    });
    if let Some(vac) = vac {
        v["spec"]["volumeAttributesClassName"] = json!(vac);
    }
    v
}

/// (scenario, claim, node's `key1` value, volumes, excluded volume names, expected uid).
type MatchCase = (
    &'static str,
    Value,
    &'static str,
    Vec<Value>,
    Vec<&'static str>,
    &'static str,
);

/// `FindMatchingVolume(claim, volumes, node, excluded, true, true)` for each case.
fn run_match(cases: Vec<MatchCase>) {
    for (name, claim, value, volumes, excluded, want) in cases {
        let claim = Arc::new(pvc_of(&claim));
        let pvs: Vec<Arc<PersistentVolume>> = volumes.iter().map(|v| Arc::new(pv_of(v))).collect();
        let chosen: Vec<Binding> = (excluded.iter())
            .map(|n| Binding {
                pv: Arc::new(pv_of(&match_pv("", n, "1G", true, ""))),
                pvc: claim.clone(),
            })
            .collect();
        let node = node_with("", &[("key1", value)]);
        let got = find_matching_volume(&claim, &pvs, &node, &chosen);
        let uid = got
            .and_then(|pv| pv.labels.get(Sym::new("uid")))
            .map(|u| u.to_string_lossy());
        assert_eq!(uid.as_deref().unwrap_or(""), want, "{name}");
    }
}

#[test]
fn find_match_volume_with_node() {
    let (rwo, rwx) = ("ReadWriteOnce", "ReadWriteMany");
    let vols = match_volumes;
    let cases: Vec<MatchCase> = vec![
        (
            "success-match",
            match_claim("claim01", rwo, None),
            "value1",
            vols(),
            vec![],
            "affinity-pv",
        ),
        (
            "success-prebound",
            match_claim("claim02", rwo, None),
            "value1",
            vols(),
            vec![],
            "affinity-prebound",
        ),
        (
            "success-exclusion",
            match_claim("claim01", rwo, None),
            "value1",
            vols(),
            vec!["affinity001"],
            "affinity-pv2",
        ),
        (
            "fail-exclusion",
            match_claim("claim01", rwo, None),
            "value1",
            vols(),
            vec!["affinity001", "affinity002", "affinity002-vac"],
            "",
        ),
        (
            "fail-accessmode",
            match_claim("claim01", rwx, None),
            "value1",
            vols(),
            vec![],
            "",
        ),
        (
            "fail-nodeaffinity",
            match_claim("claim01", rwo, None),
            "value2",
            vols(),
            vec![],
            "",
        ),
        (
            "fail-prebound-node-affinity",
            match_claim("claim02", rwo, None),
            "value3",
            vols(),
            vec![],
            "",
        ),
        (
            "fail-nonavaliable",
            match_claim("claim04", rwo, None),
            "value4",
            vols(),
            vec![],
            "",
        ),
        (
            "success-bad-and-good-node-affinity",
            match_claim("claim03", rwo, None),
            "value3",
            vols(),
            vec![],
            "affinity-pv3",
        ),
        (
            "success-match-with-vac",
            match_claim("claim01", rwo, Some("gold")),
            "value1",
            with_vac(vols(), "gold"),
            vec![],
            "affinity-pv",
        ),
        (
            "fail-vac",
            match_claim("claim01", rwo, Some("silver")),
            "value1",
            vols(),
            vec![],
            "",
        ),
        (
            "fail-prebound-vac",
            match_claim("claim02", rwo, Some("silver")),
            "value1",
            with_vac(vols(), "gold"),
            vec![],
            "",
        ),
    ];
    run_match(cases);
}

#[test]
fn find_match_volume_smallest_first_of_equals() {
    let rwo = "ReadWriteOnce";
    let mut reversed = match_volumes();
    reversed.reverse();
    let mut tie = match_volumes();
    tie.push(with_affinity(
        match_pv("affinity-pv-twin", "affinity005", "100G", true, "wait"),
        "value1",
    ));
    let cases: Vec<MatchCase> = vec![
        // tidegate: the smallest volume that fits wins, wherever it is listed
        // (pv_helpers.go `FindMatchingVolume`, `smallestVolume`).
        (
            "tidegate: smallest-regardless-of-order",
            match_claim("claim01", rwo, None),
            "value1",
            reversed,
            vec![],
            "affinity-pv",
        ),
        // tidegate: of equal volumes the first listed wins (the comparison is strict).
        (
            "tidegate: first-of-equals",
            match_claim("claim01", rwo, None),
            "value1",
            tie,
            vec![],
            "affinity-pv",
        ),
    ];
    run_match(cases);
}

// ---- TestScore (scorer_test.go), through the plugin's Score ----

/// The score of a node whose static bindings have, per class, (requested, capacity).
fn score_of(classes: &[(&str, i64, i64)]) -> i64 {
    let pl = VolumeBinding::new(Arc::new(VolumeListers::default()), Arc::new(NoopClient));
    let node = NodeInfo::new(Arc::new(Node::named("node-a")));
    let static_bindings = (classes.iter().enumerate())
        .map(|(i, (class, requested, capacity))| Binding {
            pv: Arc::new(pv_of(&json!({
                "metadata": {"name": format!("pv-{i}")},
                "spec": {"storageClassName": class, "capacity": {"storage": capacity.to_string()}}
            }))),
            pvc: Arc::new(pvc_of(&json!({
                "metadata": {"name": format!("pvc-{i}"), "namespace": NS},
                "spec": {"storageClassName": class,
                         "resources": {"requests": {"storage": requested.to_string()}}}
            }))),
        })
        .collect();
    let volumes = PodVolumes {
        static_bindings,
        dynamic_provisions: vec![],
    };
    let mut cs = CycleState::default();
    cs.write(
        STATE_KEY,
        State(Arc::new(StateData {
            by_node: parking_lot::Mutex::new([(node.name(), volumes)].into_iter().collect()),
            ..StateData::default()
        })),
    );
    pl.score(&cs, &test_pod(&[]), &node).unwrap()
}

#[test]
fn score_default_shape() {
    let (hdd, ssd) = ("hdd", "ssd");
    // default shape, single class
    for (requested, want) in [(0, 100), (30, 70), (50, 50), (100, 0)] {
        assert_eq!(score_of(&[(hdd, requested, 100)]), want, "{requested}");
    }
    // default shape, multiple classes
    for (h, s, want) in [
        (0, 0, 100),
        (0, 30, 85),
        (30, 30, 70),
        (30, 60, 55),
        (50, 50, 50),
        (50, 100, 25),
        (100, 100, 0),
    ] {
        assert_eq!(score_of(&[(hdd, h, 100), (ssd, s, 100)]), want, "{h} {s}");
    }
}
