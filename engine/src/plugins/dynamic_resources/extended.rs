//! Extended resources backed by DRA (DRAExtendedResource; kube v1.37.2's
//! `pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources.go`).
//!
//! # Protocol
//!
//! A pod that requests an extended resource (`example.com/gpu: 1`, or a class's implicit
//! `deviceclass.resource.kubernetes.io/<class>`) which some DeviceClass backs gets one more
//! claim, after its own: the claim made for it by an earlier cycle (annotated, controlled by
//! the pod), or else a claim held in memory only, with no requests, named
//! `<extended-resources>`.
//!
//! - **Filter** fills the in-memory claim for the node: each resource the node does not
//!   offer itself (no allocatable of it) but a class backs becomes one `ExactCount` request
//!   per container (`container-<i>-request-<j>`), short-lived init containers sharing the
//!   largest of their requests; a resource that is neither offered nor backed fails the node.
//!   NodeResourcesFit leaves the same resources to this plugin.
//! - **Reserve** holds the node's allocation in flight under the in-memory claim's UID.
//! - **PreBind** creates the claim in the API (`generateName: <pod>-extended-resources-`,
//!   with the requests), writes its allocation and the pod's reservation as for any claim,
//!   and records in the pod's `status.extendedResourceClaimStatus` which container's
//!   resource each request serves.
//! - **Unreserve** drops the in-flight allocation and deletes a claim PreBind created.
//!
//! A claim found from an earlier cycle that already has requests makes every node fail
//! ("cannot schedule extended resource claim"), as in kube.

use crate::api::Sym;
use crate::api::dra::{
    AllocationMode, DeviceRequest, EXTENDED_RESOURCE_CLAIM_ANNOTATION, RequestAlternative,
    ResourceClaim,
};
use crate::api::extended_requests::ExtendedResourceContainer;
use crate::api::{Pod, Resource};
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::resource::v1 as k;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use std::collections::BTreeMap;
use std::sync::Arc;

/// kube's `specialClaimInMemName`.
pub(crate) const IN_MEMORY_NAME: &str = "<extended-resources>";

/// One request of the claim made for extended resources: `count` devices of `class`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ExactRequest {
    pub(crate) name: Arc<str>,
    pub(crate) class: Arc<str>,
    pub(crate) count: i64,
}

/// The claim's requests on one node, and which request serves each container's resource.
pub(crate) type NodeRequests = (Vec<ExactRequest>, Vec<Mapping>);

/// The claim for extended resources as Filter fills it for a node.
#[derive(Debug)]
pub(crate) struct NodeExtended {
    /// The in-memory claim with the requests, for the allocator.
    pub(crate) claim: Arc<ResourceClaim>,
    pub(crate) requests: Vec<ExactRequest>,
    pub(crate) mappings: Vec<Mapping>,
    /// The shape id of the claims to allocate with this one ([`super::node_memo`]), taken
    /// on first use.
    pub(crate) shape: std::sync::OnceLock<u64>,
}

/// Which request serves a container's resource (kube's `ContainerExtendedResourceRequest`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Mapping {
    pub(crate) container: Arc<str>,
    pub(crate) resource: Sym,
    pub(crate) request: Arc<str>,
}

/// kube's `hasDeviceClassMappedExtendedResource`: whether some request of the pod is for an
/// extended resource a class backs.
pub(crate) fn requests_backed_resource(requests: &Resource, backed: impl Fn(Sym) -> bool) -> bool {
    requests.scalar.iter().any(|&(name, v)| {
        v != 0
            && crate::api::resource_names::is_dra_extended_resource_name(&name.as_arc())
            && backed(name)
    })
}

/// The claim held in memory for `pod` until PreBind creates it (kube's in `preFilter`).
pub(crate) fn in_memory_claim(pod: &Pod) -> Arc<ResourceClaim> {
    Arc::new(ResourceClaim {
        namespace: pod.namespace,
        name: Arc::from(IN_MEMORY_NAME),
        // kube draws a random UID; any value unique to the pod serves as the key of the
        // in-flight allocation.
        uid: Arc::from(format!("{}/extended-resources", pod.uid)),
        requests: Vec::new(),
        constraints: Vec::new(),
        allocation: None,
        reserved_for: Vec::new(),
        reserved_for_groups: Vec::new(),
        deleting: false,
        controller_uid: Some(pod.uid.clone()),
        controller_pod_group: None,
        extended: true,
    })
}

/// The resources of the pod this node leaves to DRA (kube's `filterExtendedResources`):
/// `Ok` with them, sorted by name, or `Err` when the node neither offers a resource nor has
/// it backed.
pub(crate) fn node_resources(
    requests: &Resource,
    allocatable: &Resource,
    backed: impl Fn(Sym) -> bool,
) -> Result<Vec<(Sym, i64)>, ()> {
    let mut out = Vec::new();
    for &(name, v) in &requests.scalar {
        if v == 0 || !crate::api::resource_names::is_dra_extended_resource_name(&name.as_arc()) {
            continue;
        }
        let offered = allocatable.scalar.iter().find(|(n, _)| *n == name);
        let have = offered.map_or(0, |(_, a)| *a);
        if have == 0 && backed(name) {
            out.push((name, v));
        } else if offered.is_none() {
            return Err(());
        }
    }
    out.sort_by_key(|a| a.0.as_arc());
    Ok(out)
}

/// kube's `createResourceRequestAndMappings`: container `c`'s request for `resource`, less
/// what `reusable` requests already give it (an init container reuses the long-lived
/// containers' requests from its own position on).
fn container_request(
    c: &ExtendedResourceContainer,
    resource: Sym,
    class: &Arc<str>,
    reusable: &[&ExactRequest],
) -> (Option<ExactRequest>, Vec<Mapping>) {
    let Some(r) = c.requests.iter().find(|r| r.resource == resource) else {
        return (None, Vec::new());
    };
    let Some(want) = r.count.filter(|&n| n != 0) else {
        return (None, Vec::new());
    };
    let mapping = |request: &Arc<str>| Mapping {
        container: c.name.clone(),
        resource,
        request: request.clone(),
    };
    let mut mappings = Vec::new();
    let mut sum = 0;
    for r in reusable {
        sum += r.count;
        mappings.push(mapping(&r.name));
        if sum >= want {
            return (None, mappings);
        }
    }
    let name: Arc<str> = Arc::from(format!("container-{}-request-{}", c.index, r.position));
    mappings.push(mapping(&name));
    let request = ExactRequest {
        name,
        class: class.clone(),
        count: want - sum,
    };
    (Some(request), mappings)
}

/// kube's `createRequestsAndMappings`: the claim's requests (sorted by name) and which
/// request serves each container's resource, for `resources` (sorted by name) with the
/// class backing each (`class_of`).
pub(crate) fn requests_and_mappings(
    containers: &[ExtendedResourceContainer],
    resources: &[Sym],
    class_of: impl Fn(Sym) -> Option<Arc<str>>,
) -> NodeRequests {
    let mut requests = Vec::new();
    let mut mappings = Vec::new();
    for &resource in resources {
        let Some(class) = class_of(resource) else {
            continue;
        };
        let mut long_lived: Vec<(usize, ExactRequest)> = Vec::new();
        let mut long_mappings = Vec::new();
        for c in containers.iter().filter(|c| !c.short_lived) {
            let (r, m) = container_request(c, resource, &class, &[]);
            long_lived.extend(r.map(|r| (c.index, r)));
            long_mappings.extend(m);
        }
        let mut largest: Option<ExactRequest> = None;
        let mut short_names: Vec<Arc<str>> = Vec::new();
        let mut short_mappings: Vec<Mapping> = Vec::new();
        for c in containers.iter().filter(|c| c.short_lived) {
            let reusable: Vec<&ExactRequest> = long_lived
                .iter()
                .filter(|(i, _)| *i >= c.index)
                .map(|(_, r)| r)
                .collect();
            let (r, m) = container_request(c, resource, &class, &reusable);
            if let Some(r) = r {
                if !short_names.contains(&r.name) {
                    short_names.push(r.name.clone());
                }
                if largest.as_ref().is_none_or(|l| l.count < r.count) {
                    largest = Some(r);
                }
            }
            short_mappings.extend(m);
        }
        // The init containers run one after another: the largest request serves them all.
        if let Some(l) = &largest
            && short_names.len() > 1
        {
            for m in &mut short_mappings {
                if m.request != l.name && short_names.contains(&m.request) {
                    m.request = l.name.clone();
                }
            }
        }
        requests.extend(largest);
        requests.extend(long_lived.into_iter().map(|(_, r)| r));
        mappings.extend(long_mappings);
        mappings.extend(short_mappings);
    }
    requests.sort_by(|a, b| a.name.cmp(&b.name));
    (requests, mappings)
}

/// The in-memory claim with the node's requests, for the allocator.
pub(crate) fn claim_for_node(
    claim: &ResourceClaim,
    requests: &[ExactRequest],
) -> Arc<ResourceClaim> {
    let mut c = claim.clone();
    c.requests = requests
        .iter()
        .map(|r| DeviceRequest {
            name: r.name.clone(),
            alternatives: vec![RequestAlternative {
                name: r.name.clone(),
                device_class_name: r.class.clone(),
                selectors: Vec::new(),
                mode: AllocationMode::ExactCount(r.count),
                admin_access: false,
                tolerations: Vec::new(),
                capacity: BTreeMap::new(),
            }],
            prioritized: false,
        })
        .collect();
    Arc::new(c)
}

/// The claim PreBind creates for `pod` (kube's `createExtendedResourceClaimInAPI`).
pub(crate) fn api_claim(pod: &Pod, requests: &[ExactRequest]) -> k::ResourceClaim {
    k::ResourceClaim {
        metadata: ObjectMeta {
            namespace: Some(pod.namespace.to_string_lossy()),
            generate_name: Some(format!("{}-extended-resources-", pod.name)),
            owner_references: Some(vec![OwnerReference {
                api_version: "v1".into(),
                kind: "Pod".into(),
                name: pod.name.to_string(),
                uid: pod.uid.to_string(),
                controller: Some(true),
                block_owner_deletion: None,
            }]),
            annotations: Some(BTreeMap::from([(
                EXTENDED_RESOURCE_CLAIM_ANNOTATION.to_string(),
                "true".to_string(),
            )])),
            ..Default::default()
        },
        spec: Some(k::ResourceClaimSpec {
            devices: Some(k::DeviceClaim {
                requests: Some(
                    requests
                        .iter()
                        .map(|r| k::DeviceRequest {
                            name: r.name.to_string(),
                            exactly: Some(k::ExactDeviceRequest {
                                device_class_name: r.class.to_string(),
                                allocation_mode: Some("ExactCount".into()),
                                count: Some(r.count),
                                ..Default::default()
                            }),
                            ..Default::default()
                        })
                        .collect(),
                ),
                ..Default::default()
            }),
        }),
        status: None,
    }
}

/// The pod's `status.extendedResourceClaimStatus` naming `claim`.
pub(crate) fn pod_status(
    claim: &str,
    mappings: &[Mapping],
) -> core::PodExtendedResourceClaimStatus {
    core::PodExtendedResourceClaimStatus {
        resource_claim_name: claim.to_string(),
        request_mappings: mappings
            .iter()
            .map(|m| core::ContainerExtendedResourceRequest {
                container_name: m.container.to_string(),
                resource_name: m.resource.to_string_lossy(),
                request_name: m.request.to_string(),
            })
            .collect(),
    }
}

#[cfg(test)]
#[path = "extended_tests.rs"]
mod tests;
