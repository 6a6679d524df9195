//! The containers' requests for extended resources that DRA may back (DRAExtendedResource),
//! kept per container: the DynamicResources plugin turns them into the device requests of
//! the claim it makes for the pod (kube's `createRequestsAndMappings`), which name each
//! container and the resource's position among the container's requests.

use super::Sym;
use super::resource_names::is_dra_extended_resource_name;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as KQuantity;
use std::collections::BTreeMap;
use std::sync::Arc;

/// One container (init containers first, then the others) that requests some resource with
/// a DRA extended resource name (kube's `IsDRAExtendedResourceName`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtendedResourceContainer {
    /// The position among `initContainers` followed by `containers`.
    pub index: usize,
    pub name: Arc<str>,
    /// An init container that is not a sidecar: it runs alone, before the others.
    pub short_lived: bool,
    pub requests: Vec<ExtendedRequest>,
}

/// One request of a container for such a resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtendedRequest {
    pub resource: Sym,
    /// The quantity as a whole number (kube's `AsInt64`); `None` when it is not one.
    pub count: Option<i64>,
    /// The resource's position among the names of all the container's requests, sorted.
    pub position: usize,
}

/// The pod's containers with such requests (empty for nearly every pod).
pub(crate) fn extended_resource_containers(spec: &core::PodSpec) -> Vec<ExtendedResourceContainer> {
    let inits = spec.init_containers.iter().flatten().map(|c| {
        let sidecar = c.restart_policy.as_deref() == Some("Always");
        (c, !sidecar)
    });
    let all = inits.chain(spec.containers.iter().map(|c| (c, false)));
    all.enumerate()
        .filter_map(|(index, (c, short_lived))| {
            let requests = container(c);
            (!requests.is_empty()).then(|| ExtendedResourceContainer {
                index,
                name: Arc::from(c.name.as_str()),
                short_lived,
                requests,
            })
        })
        .collect()
}

fn container(c: &core::Container) -> Vec<ExtendedRequest> {
    let Some(res) = &c.resources else {
        return Vec::new();
    };
    // Requests after API defaulting: a limit stands for a missing request.
    let mut merged: BTreeMap<&str, &KQuantity> = BTreeMap::new();
    for (k, v) in res.requests.iter().flatten() {
        merged.insert(k, v);
    }
    for (k, v) in res.limits.iter().flatten() {
        merged.entry(k).or_insert(v);
    }
    merged
        .iter()
        .enumerate()
        .filter(|(_, (k, _))| is_dra_extended_resource_name(k))
        .map(|(position, (k, v))| ExtendedRequest {
            resource: Sym::new(k),
            count: super::quantity::Quantity::parse(&v.0)
                .ok()
                .and_then(|q| q.as_i64()),
            position,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn containers_with_dra_extended_resource_requests() {
        let spec: core::PodSpec = serde_json::from_value(json!({
            "initContainers": [
                {"name": "init", "resources": {"requests": {"example.com/gpu": "2"}}},
                {"name": "side", "restartPolicy": "Always",
                 "resources": {"limits": {"deviceclass.resource.kubernetes.io/c": "1"}}},
            ],
            "containers": [
                {"name": "plain", "resources": {"requests": {"cpu": "1"}}},
                {"name": "app", "resources": {"requests": {"cpu": "1", "example.com/gpu": "500m",
                 "memory": "1Gi"}, "limits": {"example.com/gpu": "1"}}},
            ],
        }))
        .unwrap();
        let got = extended_resource_containers(&spec);
        let gpu = Sym::new("example.com/gpu");
        assert_eq!(got.len(), 3);
        assert_eq!(
            (got[0].index, &*got[0].name, got[0].short_lived),
            (0, "init", true)
        );
        assert_eq!(
            got[0].requests,
            [ExtendedRequest {
                resource: gpu,
                count: Some(2),
                position: 0
            }]
        );
        assert_eq!((got[1].index, got[1].short_lived), (1, false));
        assert_eq!(got[2].index, 3);
        // cpu < example.com/gpu < memory; the request (not the limit) is read, and is not
        // a whole number.
        assert_eq!(
            got[2].requests,
            [ExtendedRequest {
                resource: gpu,
                count: None,
                position: 1
            }]
        );
    }
}
