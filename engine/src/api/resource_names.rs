//! Kubernetes' resource-name predicates (`pkg/apis/core/v1/helper/helpers.go`,
//! `pkg/scheduler/util/utils.go`): which names are extended, scalar, or DRA extended
//! resources. A leaf: every other module of `api` may use it.

/// kube's `IsPrefixedNativeResource`: a name in a `*kubernetes.io/` namespace.
fn is_prefixed_native_resource(name: &str) -> bool {
    name.contains("kubernetes.io/")
}

/// kube's `IsExtendedResourceName`: fully qualified, outside the `kubernetes.io` namespaces
/// and not `requests.`-prefixed (the API server has checked the rest of the name).
pub(crate) fn is_extended_resource_name(name: &str) -> bool {
    name.contains('/') && !is_prefixed_native_resource(name) && !name.starts_with("requests.")
}

/// kube's `IsScalarResourceName` (`pkg/scheduler/util`): extended resources, hugepages,
/// prefixed native resources (`*kubernetes.io/…`, DRA's implicit
/// `deviceclass.resource.kubernetes.io/<class>` among them) and attachable volumes.
pub(crate) fn is_scalar_resource_name(name: &str) -> bool {
    is_extended_resource_name(name)
        || name.starts_with("hugepages-")
        || is_prefixed_native_resource(name)
        || name.starts_with("attachable-volumes-")
}

/// The prefix of a DeviceClass's implicit extended resource name (kube's
/// `resourceapi.ResourceDeviceClassPrefix`).
pub const DEVICE_CLASS_RESOURCE_PREFIX: &str = "deviceclass.resource.kubernetes.io/";

/// kube's `IsDRAExtendedResourceName`: an extended resource name, or a DeviceClass's implicit
/// one.
pub(crate) fn is_dra_extended_resource_name(name: &str) -> bool {
    is_extended_resource_name(name) || name.starts_with(DEVICE_CLASS_RESOURCE_PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubes_resource_name_predicates() {
        assert!(is_scalar_resource_name("example.com/gpu"));
        assert!(is_scalar_resource_name("hugepages-2Mi"));
        // Provenance: pkg/scheduler/util/utils.go (IsScalarResourceName) and
        // pkg/apis/core/v1/helper/helpers.go (IsExtendedResourceName, IsPrefixedNativeResource).
        assert!(is_scalar_resource_name("kubernetes.io/foo"));
        assert!(is_scalar_resource_name(
            "deviceclass.resource.kubernetes.io/gpu"
        ));
        assert!(!is_extended_resource_name("kubernetes.io/foo"));
        assert!(!is_extended_resource_name("requests.example.com/foo"));
        assert!(is_extended_resource_name("example.com/gpu"));
        assert!(is_dra_extended_resource_name(
            "deviceclass.resource.kubernetes.io/gpu"
        ));
        assert!(!is_dra_extended_resource_name("kubernetes.io/foo"));
        assert!(!is_scalar_resource_name("storage"));
    }
}
