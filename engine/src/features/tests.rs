use super::*;

fn set(pairs: &[(&str, bool)]) -> BTreeMap<String, bool> {
    pairs.iter().map(|&(n, v)| (n.to_string(), v)).collect()
}

#[test]
fn the_generated_table_is_sorted_and_has_kubes_gates() {
    assert!(KUBE_GATES.windows(2).all(|w| w[0].0 < w[1].0));
    // kube's own, the API server's, client-go's and zpages' gates are all there.
    for name in [
        "NodeDeclaredFeatures",
        "SchedulerPopFromBackoffQ",
        "APIResponseCompression",
        "WatchListClient",
        "ComponentStatusz",
    ] {
        assert!(gate(name).is_some(), "{name} missing");
    }
    assert!(KUBE_GATES.len() > 200);
}

#[test]
fn every_classified_gate_is_a_kube_gate_or_a_kept_removed_one() {
    for (name, _) in SCHEDULER_GATES {
        let known = KUBE_GATES.iter().any(|(n, _)| n == name)
            || REMOVED_GATES.iter().any(|(n, _)| n == name);
        assert!(
            known,
            "{name} is neither a kube v1.37 gate nor a kept removed one"
        );
    }
}

#[test]
fn defaults_follow_kubes_versioned_specs() {
    // provenance: pkg/features/kube_features.go (kubernetes v1.37.2)
    let g = gate("NodeDeclaredFeatures").unwrap();
    assert!(!g.default_at(35));
    assert!(g.default_at(36));
    assert!(g.spec_at(37).unwrap().locked);
    assert!(gate("SchedulerPopFromBackoffQ").unwrap().default_at(37));
    assert!(!gate("SchedulerAsyncAPICalls").unwrap().default_at(37));
    // Removed from kube, kept: on, as it was when removed.
    assert!(gate("SchedulerQueueingHints").unwrap().default_at(37));
    assert!(FeatureGates::default().enabled("SchedulerQueueingHints"));
}

#[test]
fn no_gates_is_kube_v1_37_and_supported() {
    let g = FeatureGates::for_workload(&BTreeMap::new()).unwrap();
    assert_eq!(g.emulated_minor, 37);
    assert!(g.enabled("NodeDeclaredFeatures"));
    assert!(Features::default().node_declared_features);
}

#[test]
fn an_unknown_gate_is_refused_with_its_name() {
    let e = FeatureGates::for_workload(&set(&[("NoSuchGate", true)])).unwrap_err();
    assert_eq!(e.gate, "NoSuchGate");
    assert!(e.reason.contains("not a feature gate of kube v1.37"), "{e}");
}

#[test]
fn a_locked_gate_set_against_its_lock_is_refused() {
    let e = FeatureGates::for_workload(&set(&[("InPlacePodVerticalScaling", false)])).unwrap_err();
    assert_eq!(e.gate, "InPlacePodVerticalScaling");
    assert!(e.reason.contains("locked to true"), "{e}");
    // Set to its locked value: fine.
    FeatureGates::for_workload(&set(&[("InPlacePodVerticalScaling", true)])).unwrap();
}

#[test]
fn node_declared_features_off_emulates_v1_36_as_scheduler_perf_does() {
    // provenance: test/integration/scheduler_perf/scheduler_perf.go (kubernetes v1.37.2):
    // "Only emulate v1.36 when NodeDeclaredFeatures is explicitly disabled."
    let g = FeatureGates::for_workload(&set(&[("NodeDeclaredFeatures", false)])).unwrap();
    assert_eq!(g.emulated_minor, 36);
    assert!(!g.enabled("NodeDeclaredFeatures"));
    assert!(!Features::from_gates(&g).node_declared_features);
    let on = FeatureGates::for_workload(&set(&[("NodeDeclaredFeatures", true)])).unwrap();
    assert_eq!(on.emulated_minor, 37);
}

#[test]
fn a_value_tidegate_does_not_model_makes_the_workload_unsupported() {
    let e = FeatureGates::for_workload(&set(&[("InterPodAffinityHostnameFastPath", true)]))
        .unwrap_err();
    assert_eq!(
        (e.gate.as_str(), e.value),
        ("InterPodAffinityHostnameFastPath", true)
    );
    assert!(e.reason.starts_with("unsupported: on, kube checks"), "{e}");
    // The same gate at the value tidegate follows is accepted.
    FeatureGates::for_workload(&set(&[("InterPodAffinityHostnameFastPath", false)])).unwrap();
}

#[test]
fn identical_and_modelled_gates_are_accepted_either_way() {
    for v in [true, false] {
        for name in [
            "DRAConsumableCapacity",
            "SchedulerAsyncAPICalls",
            "SchedulerPopFromBackoffQ",
            "OpportunisticBatching",
            "GenericWorkload",
            "CompositePodGroup",
        ] {
            let g = FeatureGates::for_workload(&set(&[(name, v)])).unwrap();
            assert_eq!(g.enabled(name), v);
        }
    }
}

#[test]
fn the_first_unsupported_gate_by_name_is_reported() {
    let e = FeatureGates::for_workload(&set(&[
        ("MatchLabelKeysInPodTopologySpread", false),
        ("InterPodAffinityHostnameFastPath", true),
    ]))
    .unwrap_err();
    assert_eq!(e.gate, "InterPodAffinityHostnameFastPath");
}

#[test]
fn every_only_gate_matches_kubes_default_at_v1_37() {
    // Otherwise every workload would be unsupported: tidegate follows kube's defaults.
    for (name, s) in SCHEDULER_GATES {
        if let Support::Only(v, _) = s {
            assert_eq!(gate(name).unwrap().default_at(KUBE_MINOR), *v, "{name}");
        }
    }
}

#[test]
fn the_docs_table_is_current() {
    let want = markdown_table();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/feature-gates.md");
    let doc = std::fs::read_to_string(path).unwrap_or_default();
    if std::env::var_os("TIDEGATE_BLESS").is_some() {
        let head = doc.split("\n| gate |").next().unwrap_or("").trim_end();
        std::fs::write(path, format!("{head}\n\n{want}")).unwrap();
        return;
    }
    assert!(
        doc.contains(&want),
        "docs/feature-gates.md is stale: TIDEGATE_BLESS=1 cargo test -p tidegate-engine the_docs_table_is_current"
    );
}
