//! Node declared features (KEP-5328, the `NodeDeclaredFeatures` gate): nodes publish
//! `status.declaredFeatures`, the scheduler infers from a pod's spec which of them the pod
//! needs, and the NodeDeclaredFeatures plugin keeps the pod off nodes lacking one.
//!
//! Both sides are bit sets over kube's feature registry
//! (`k8s.io/component-helpers/nodedeclaredfeatures`, v0.37.2), sorted by name as kube's
//! `Framework` sorts it. A node's list maps as kube's `TryMap` maps it: a merge walk over the
//! list as given (the kubelet publishes it sorted), names not in the registry ignored.

use k8s_openapi::api::core::v1 as core;

/// The registered features, sorted by name (bit `i` of a [`FeatureSet`] is `REGISTRY[i]`).
pub(crate) const REGISTRY: [&str; 9] = [
    "DRANodeAllocatableResources",
    "DRAOptionalNodeOperations",
    "ExtendWebSocketsToKubelet",
    "InPlacePodLevelResourcesVerticalScaling",
    "InPlacePodVerticalScalingInitContainers",
    "InPlacePodVerticalScalingMemoryBackedVolumes",
    "RestartAllContainersOnContainerExits",
    "UserNamespacesHostNetworkSupport",
    "VolumeBindMountOptions",
];

/// A set of registered features.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FeatureSet(pub u16);

impl FeatureSet {
    pub const EMPTY: FeatureSet = FeatureSet(0);

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Every feature of `self` is in `other`.
    pub fn is_subset(self, other: FeatureSet) -> bool {
        self.0 & !other.0 == 0
    }

    /// The names, in registry order.
    pub fn names(self) -> Vec<&'static str> {
        (0..REGISTRY.len())
            .filter(|i| self.0 & (1 << i) != 0)
            .map(|i| REGISTRY[i])
            .collect()
    }

    fn with(self, i: usize) -> FeatureSet {
        FeatureSet(self.0 | (1 << i))
    }
}

fn bit(name: &str) -> usize {
    REGISTRY
        .iter()
        .position(|n| *n == name)
        .expect("registered feature")
}

/// kube's `FeatureMapper.TryMap`: a merge walk of `declared` (expected sorted) against the
/// registry; unknown names are skipped.
pub(crate) fn try_map<S: AsRef<str>>(declared: &[S]) -> FeatureSet {
    let (mut i, mut j, mut s) = (0, 0, FeatureSet::EMPTY);
    while i < declared.len() && j < REGISTRY.len() {
        let d = declared[i].as_ref();
        match d.cmp(REGISTRY[j]) {
            std::cmp::Ordering::Equal => {
                s = s.with(j);
                i += 1;
                j += 1;
            }
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
        }
    }
    s
}

/// kube's `InferForPodScheduling` over the registry: the features a pod needs of its node.
/// Of kube v1.37's features, three are inferred at scheduling time:
/// `RestartAllContainersOnContainerExits` (a container or init container with a restart
/// rule whose action is `RestartAllContainers`), `UserNamespacesHostNetworkSupport`
/// (`hostNetwork` with `hostUsers: false`) and `VolumeBindMountOptions` (a volume mount of
/// any container with `bindMountOptions`). None has a maximum version.
pub(crate) fn infer_for_scheduling(spec: &core::PodSpec) -> FeatureSet {
    let mut s = FeatureSet::EMPTY;
    let containers = || {
        spec.containers
            .iter()
            .chain(spec.init_containers.iter().flatten())
    };
    let restarts_all = containers().any(|c| {
        c.restart_policy_rules
            .iter()
            .flatten()
            .any(|r| r.action == "RestartAllContainers")
    });
    if restarts_all {
        s = s.with(bit("RestartAllContainersOnContainerExits"));
    }
    if spec.host_network == Some(true) && spec.host_users == Some(false) {
        s = s.with(bit("UserNamespacesHostNetworkSupport"));
    }
    let bind_mounts = containers()
        .flat_map(|c| c.volume_mounts.iter().flatten())
        .chain(
            spec.ephemeral_containers
                .iter()
                .flatten()
                .flat_map(|c| c.volume_mounts.iter().flatten()),
        )
        .any(|m| m.bind_mount_options.as_ref().is_some_and(|o| !o.is_empty()));
    if bind_mounts {
        s = s.with(bit("VolumeBindMountOptions"));
    }
    s
}

#[cfg(test)]
mod tests {
    // provenance: staging/src/k8s.io/component-helpers/nodedeclaredfeatures/featureset_test.go
    // (TryMap) and features/*/feature_test.go (InferForScheduling), kubernetes v1.37.2.
    use super::*;

    #[test]
    fn the_registry_is_sorted_as_kube_sorts_it() {
        assert!(REGISTRY.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn try_map_ignores_unknown_names() {
        let s = try_map(&["Feature1", "RestartAllContainersOnContainerExits", "Zzz"]);
        assert_eq!(s.names(), vec!["RestartAllContainersOnContainerExits"]);
        assert_eq!(try_map::<&str>(&[]), FeatureSet::EMPTY);
        let all = try_map(&REGISTRY);
        assert_eq!(all.names(), REGISTRY.to_vec());
    }

    #[test]
    fn try_map_walks_the_list_as_given() {
        // kube's merge walk assumes a sorted list: out of order, the earlier name is passed.
        let s = try_map(&["VolumeBindMountOptions", "DRANodeAllocatableResources"]);
        assert_eq!(s.names(), vec!["VolumeBindMountOptions"]);
    }

    #[test]
    fn subset() {
        let a = try_map(&["DRAOptionalNodeOperations"]);
        let b = try_map(&["DRAOptionalNodeOperations", "VolumeBindMountOptions"]);
        assert!(a.is_subset(b));
        assert!(!b.is_subset(a));
        assert!(FeatureSet::EMPTY.is_subset(FeatureSet::EMPTY));
    }

    fn spec(v: serde_json::Value) -> core::PodSpec {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn inference_from_the_pod_spec() {
        let plain = spec(serde_json::json!({"containers": [{"name": "c"}]}));
        assert!(infer_for_scheduling(&plain).is_empty());
        let restart = spec(
            serde_json::json!({"containers": [{"name": "c", "restartPolicyRules": [
            {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}]}]}),
        );
        assert_eq!(
            infer_for_scheduling(&restart).names(),
            vec!["RestartAllContainersOnContainerExits"]
        );
        let restart_one = spec(
            serde_json::json!({"containers": [{"name": "c", "restartPolicyRules": [
            {"action": "Restart", "exitCodes": {"operator": "In", "values": [42]}}]}]}),
        );
        assert!(infer_for_scheduling(&restart_one).is_empty());
        let userns = spec(serde_json::json!({"hostNetwork": true, "hostUsers": false,
            "containers": [{"name": "c"}]}));
        assert_eq!(
            infer_for_scheduling(&userns).names(),
            vec!["UserNamespacesHostNetworkSupport"]
        );
        let host_users =
            spec(serde_json::json!({"hostNetwork": true, "containers": [{"name": "c"}]}));
        assert!(infer_for_scheduling(&host_users).is_empty());
        let bind = spec(
            serde_json::json!({"initContainers": [{"name": "i", "volumeMounts": [
            {"name": "v", "mountPath": "/v", "bindMountOptions": ["ro"]}]}], "containers": [{"name": "c"}]}),
        );
        assert_eq!(
            infer_for_scheduling(&bind).names(),
            vec!["VolumeBindMountOptions"]
        );
    }
}
