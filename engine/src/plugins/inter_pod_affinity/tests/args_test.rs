use super::*;

// ---- args ---------------------------------------------------------------------------------

// After kubernetes/kubernetes pkg/scheduler/apis/config/validation/validation_pluginargs_test.go
// (TestValidateInterPodAffinityArgs).
#[test]
fn args_defaults_and_validation() {
    let ctx = crate::framework::PluginContext {
        client: client(),
        waiting_pods: Default::default(),
        pool: None,
        features: Default::default(),
        dra: Default::default(),
        volumes: Default::default(),
    };
    let build = |v: serde_json::Value| factory(&ctx, Some(&v)).map(|_| ());
    assert!(factory(&ctx, None).is_ok());
    assert_eq!(
        decode_args::<InterPodAffinityArgs>(Some(&serde_json::json!({}))).unwrap(),
        InterPodAffinityArgs::default()
    );
    assert_eq!(InterPodAffinityArgs::default().hard_pod_affinity_weight, 1);
    assert!(build(serde_json::json!({"hardPodAffinityWeight": 0})).is_ok());
    assert!(build(serde_json::json!({"hardPodAffinityWeight": 100})).is_ok());
    assert_eq!(
        build(serde_json::json!({"hardPodAffinityWeight": -1})).unwrap_err(),
        "hardPodAffinityWeight: Invalid value: -1: not in valid range [0-100]"
    );
    assert_eq!(
        build(serde_json::json!({"hardPodAffinityWeight": 101})).unwrap_err(),
        "hardPodAffinityWeight: Invalid value: 101: not in valid range [0-100]"
    );
    assert!(build(serde_json::json!({"bogus": 1})).is_err());
    let args: InterPodAffinityArgs = decode_args(Some(
        &serde_json::json!({"ignorePreferredTermsOfExistingPods": true}),
    ))
    .unwrap();
    assert!(args.ignore_preferred_terms_of_existing_pods);
    assert_eq!(args.hard_pod_affinity_weight, 1);
}

#[test]
fn registered_by_default_with_weight_2_after_node_resources_fit() {
    let d = crate::plugins::DEFAULT_PLUGINS;
    let i = d.iter().position(|(n, _)| *n == NAME).unwrap();
    assert_eq!(d[i].1, 2);
    let fit = d
        .iter()
        .position(|(n, _)| *n == crate::plugins::node_resources_fit::NAME)
        .unwrap();
    assert!(fit < i);
    assert!(crate::framework::Registry::in_tree().get(NAME).is_some());
}
