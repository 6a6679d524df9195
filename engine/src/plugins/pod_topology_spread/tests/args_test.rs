use super::*;

// ---- args (pkg/scheduler/apis/config/validation/validation_pluginargs_test.go) ---------------

// Ported from kubernetes/kubernetes
// pkg/scheduler/apis/config/validation/validation_pluginargs_test.go
// (TestValidatePodTopologySpreadArgs)
#[test]
fn args_validation() {
    let decode = |v: serde_json::Value| -> PodTopologySpreadArgs {
        crate::framework::registry::decode_args(Some(&v)).unwrap()
    };
    let ok = decode(serde_json::json!({
        "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "ScheduleAnyway"},
            {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
        ],
        "defaultingType": "List"
    }));
    assert_eq!(ok.validate(), Ok(DefaultingType::List));
    assert_eq!(
        PodTopologySpreadArgs::default().validate(),
        Ok(DefaultingType::System)
    );

    let cases: Vec<(&str, serde_json::Value, &str)> = vec![
        (
            "maxSkew less than zero",
            serde_json::json!({"defaultConstraints": [
                {"maxSkew": -1, "topologyKey": "node", "whenUnsatisfiable": "ScheduleAnyway"}],
                "defaultingType": "List"}),
            "defaultConstraints[0].maxSkew: Invalid value: -1: not in valid range (0, inf)",
        ),
        (
            "empty topology key",
            serde_json::json!({"defaultConstraints": [
                {"maxSkew": 1, "topologyKey": "", "whenUnsatisfiable": "ScheduleAnyway"}],
                "defaultingType": "List"}),
            "defaultConstraints[0].topologyKey: Required value: can not be empty",
        ),
        (
            "whenUnsatisfiable is empty",
            serde_json::json!({"defaultConstraints": [
                {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": ""}],
                "defaultingType": "List"}),
            "defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty",
        ),
        (
            "whenUnsatisfiable contains unsupported action",
            serde_json::json!({"defaultConstraints": [
                {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "none"}],
                "defaultingType": "List"}),
            "defaultConstraints[0].whenUnsatisfiable: Unsupported value: \"none\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\"",
        ),
        (
            "duplicated constraints",
            serde_json::json!({"defaultConstraints": [
                {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"},
                {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"}],
                "defaultingType": "List"}),
            "defaultConstraints[1]: Duplicate value: \"{node, DoNotSchedule}\"",
        ),
        (
            "label selector present",
            serde_json::json!({"defaultConstraints": [
                {"maxSkew": 1, "topologyKey": "key", "whenUnsatisfiable": "DoNotSchedule",
                 "labelSelector": {"matchLabels": {"a": "b"}}}],
                "defaultingType": "List"}),
            "defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod",
        ),
        (
            "list default constraints, no constraints",
            serde_json::json!({"defaultingType": "List"}),
            "",
        ),
        (
            "system default constraints, but has constraints",
            serde_json::json!({"defaultConstraints": [
                {"maxSkew": 1, "topologyKey": "key", "whenUnsatisfiable": "DoNotSchedule"}],
                "defaultingType": "System"}),
            "defaultingType: Invalid value: \"System\": when .defaultConstraints are not empty",
        ),
        (
            "unsupported defaulting type",
            serde_json::json!({"defaultingType": "Magic"}),
            "defaultingType: Unsupported value: \"Magic\": supported values: \"System\", \"List\"",
        ),
        (
            "several errors are aggregated",
            serde_json::json!({"defaultConstraints": [
                {"maxSkew": 0, "topologyKey": "", "whenUnsatisfiable": "DoNotSchedule"}],
                "defaultingType": "List"}),
            "[defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf), defaultConstraints[0].topologyKey: Required value: can not be empty]",
        ),
    ];
    for (name, v, want) in cases {
        let got = decode(v).validate();
        if want.is_empty() {
            assert!(got.is_ok(), "{name}: {got:?}");
        } else {
            assert_eq!(got, Err(want.to_string()), "{name}");
        }
    }
    // Unknown fields are refused by the decoder.
    let bad = serde_json::json!({"defaultConstraint": []});
    assert!(crate::framework::registry::decode_args::<PodTopologySpreadArgs>(Some(&bad)).is_err());
}

// Registration: kube's default plugins (pkg/scheduler/apis/config/v1/default_plugins.go) put
// PodTopologySpread after NodeResourcesFit with weight 2.
#[test]
fn registered_with_kube_default_position_and_weight() {
    let names: Vec<&str> = crate::plugins::DEFAULT_PLUGINS
        .iter()
        .map(|(n, _)| *n)
        .collect();
    let i = names.iter().position(|n| *n == NAME).unwrap();
    assert_eq!(crate::plugins::DEFAULT_PLUGINS[i].1, 2);
    let fit = names.iter().position(|n| *n == "NodeResourcesFit").unwrap();
    assert!(i > fit);
    let reg = crate::framework::Registry::in_tree();
    assert!(reg.get(NAME).is_some());
    // Bad args surface kube's message from the factory.
    let ctx = crate::framework::PluginContext {
        client: Arc::new(FakeClient(None)),
        waiting_pods: Default::default(),
        pool: None,
        features: Default::default(),
        dra: Default::default(),
        volumes: Default::default(),
    };
    let bad = serde_json::json!({"defaultingType": "Magic"});
    let err = (reg.get(NAME).unwrap())(&ctx, Some(&bad)).err().unwrap();
    assert!(err.starts_with("defaultingType: Unsupported value"));
    assert!((reg.get(NAME).unwrap())(&ctx, None).is_ok());
}
