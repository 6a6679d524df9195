//! ResourceClaim writes by the scheduler (DynamicResources' PreBind, Unreserve and PostFilter,
//! through [`ClusterClient`]) and by the ResourceClaim controller, as kube's clients make them:
//! each is a PUT of the claim (or of its `/status`) at the stored resourceVersion, so the
//! informer's update event reaches the scheduler before the call returns. Pods' generated
//! claim names go into `status.resourceClaimStatuses` here too.

use super::*;
use k8s_openapi::api::resource::v1 as resource;
use tidegate_engine::api::dra::{self, Allocation, ClaimConsumer, ResourceClaim};

/// kube's `ResourceClaimReservedForMaxSize`.
const RESERVED_FOR_MAX: usize = 256;

/// kube's `resourceapi.Finalizer`: set by the scheduler on a claim it allocates.
pub const CLAIM_FINALIZER: &str = "resource.kubernetes.io/delete-protection";

/// Whether the claim carries the scheduler's finalizer.
fn has_finalizer(c: &resource::ResourceClaim) -> bool {
    c.metadata
        .finalizers
        .iter()
        .flatten()
        .any(|f| f == CLAIM_FINALIZER)
}

impl Store {
    /// The stored claim `namespace/name` as the API's type.
    pub fn resource_claim(
        &self,
        namespace: &str,
        name: &str,
    ) -> Option<Arc<resource::ResourceClaim>> {
        self.get::<resource::ResourceClaim>(namespace, name)
    }

    /// PUT of a claim's metadata and spec (`sub` None) or of its status.
    pub fn put_resource_claim(
        &self,
        claim: resource::ResourceClaim,
        sub: Subresource,
    ) -> Result<(), String> {
        let ns = claim.metadata.namespace.clone().unwrap_or_default();
        self.update(claim, &ns, sub).map_err(|e| e.to_string())
    }

    /// Sets a pod's `status.resourceClaimStatuses` (the ResourceClaim controller's status
    /// update); the informer's update reaches the scheduler. False if the pod is gone.
    pub fn set_resource_claim_statuses(
        &self,
        key: &PodKey,
        statuses: Vec<(String, Option<String>)>,
    ) -> bool {
        self.patch_pod_status(
            key,
            |rec| rec.terminating,
            |status, p| {
                status.resource_claim_statuses = Some(
                    statuses
                        .iter()
                        .map(|(name, claim)| corev1::PodResourceClaimStatus {
                            name: name.clone(),
                            resource_claim_name: claim.clone(),
                        })
                        .collect(),
                );
                p.resource_claim_statuses = (!statuses.is_empty()).then(|| {
                    statuses
                        .iter()
                        .map(|(n, c)| {
                            (
                                Arc::<str>::from(n.as_str()),
                                c.as_deref().map(Arc::<str>::from),
                            )
                        })
                        .collect()
                });
            },
        )
    }

    /// kube's `bindClaim`: with an allocation, the finalizer first (an update of the claim),
    /// then the status with the allocation and the consumer (the pod, or its PodGroup) in
    /// `reservedFor`. The API server's rules for `reservedFor` hold: unique UIDs, at most
    /// 256 entries.
    pub(super) fn reserve_claim(
        &self,
        claim: &ResourceClaim,
        allocation: Option<&Allocation>,
        consumer: &ClaimConsumer,
    ) -> Result<(), String> {
        let (ns, name) = (claim.namespace.to_string_lossy(), &*claim.name);
        let gone = || format!("resourceclaims.resource.k8s.io {name:?} not found");
        let mut c = (*self.resource_claim(&ns, name).ok_or_else(gone)?).clone();
        if c.metadata.deletion_timestamp.is_some() {
            return Err(format!("claim {ns}/{name} got deleted in the meantime"));
        }
        if let Some(a) = allocation {
            if c.status.as_ref().is_some_and(|s| s.allocation.is_some()) {
                return Err(format!(
                    "claim {ns}/{name} got allocated elsewhere in the meantime"
                ));
            }
            let fins = c.metadata.finalizers.get_or_insert_with(Vec::new);
            if !fins.iter().any(|f| f == CLAIM_FINALIZER) {
                fins.push(CLAIM_FINALIZER.to_string());
                self.put_resource_claim(c, Subresource::Main)
                    .map_err(|e| format!("add finalizer to claim {ns}/{name}: {e}"))?;
                c = (*self.resource_claim(&ns, name).ok_or_else(gone)?).clone();
            }
            c.status.get_or_insert_with(Default::default).allocation =
                Some(dra::allocation_to_api(a));
        }
        let what = if allocation.is_some() {
            "add allocation and reservation to"
        } else {
            "add reservation to"
        };
        let reserved = c
            .status
            .get_or_insert_with(Default::default)
            .reserved_for
            .get_or_insert_with(Vec::new);
        let invalid = |field: String| {
            format!(
                "{what} claim {ns}/{name}: ResourceClaim.resource.k8s.io {name:?} is invalid: {field}"
            )
        };
        if reserved.iter().any(|r| r.uid == **consumer.uid()) {
            return Err(invalid(format!(
                "status.reservedFor[{}]: Duplicate value: {:?}",
                reserved.len(),
                consumer.uid()
            )));
        }
        if reserved.len() >= RESERVED_FOR_MAX {
            return Err(invalid(format!(
                "status.reservedFor: Too many: {}: must have at most {RESERVED_FOR_MAX} items",
                reserved.len() + 1
            )));
        }
        reserved.push(consumer.to_api());
        self.put_resource_claim(c, Subresource::Status)
            .map_err(|e| format!("{what} claim {ns}/{name}: {e}"))
    }

    /// Takes `uid` out of the claim's `reservedFor`; with `deallocate_when_unused`, a claim
    /// left reserved for nobody that carries the scheduler's finalizer loses its allocation
    /// and the finalizer (the ResourceClaim controller's `syncClaim`).
    pub fn unreserve_claim(
        &self,
        ns: &str,
        name: &str,
        uid: &str,
        deallocate_when_unused: bool,
    ) -> Result<(), String> {
        let Some(c) = self.resource_claim(ns, name) else {
            return Ok(());
        };
        let mut c = (*c).clone();
        let status = c.status.get_or_insert_with(Default::default);
        let reserved = status.reserved_for.get_or_insert_with(Vec::new);
        let before = reserved.len();
        reserved.retain(|r| r.uid != uid);
        if reserved.len() == before {
            return Ok(());
        }
        let unused = reserved.is_empty();
        if unused {
            status.reserved_for = None;
        }
        let finalizer = has_finalizer(&c);
        let deallocate = deallocate_when_unused && unused && finalizer;
        if deallocate {
            c.status.get_or_insert_with(Default::default).allocation = None;
        }
        self.put_resource_claim(c, Subresource::Status)?;
        if deallocate {
            self.drop_claim_finalizer(ns, name)?;
        }
        Ok(())
    }

    /// Removes the scheduler's finalizer from a claim (an update of the claim).
    pub fn drop_claim_finalizer(&self, ns: &str, name: &str) -> Result<(), String> {
        let Some(c) = self.resource_claim(ns, name) else {
            return Ok(());
        };
        let mut c = (*c).clone();
        let Some(f) = c.metadata.finalizers.as_mut() else {
            return Ok(());
        };
        let before = f.len();
        f.retain(|x| x != CLAIM_FINALIZER);
        if f.len() == before {
            return Ok(());
        }
        self.put_resource_claim(c, Subresource::Main)
    }

    /// The controller's cleanup of a claim whose owner is gone: the scheduler's allocation
    /// and finalizer removed (`syncClaim` on a claim being deleted), so that deleting it
    /// removes it at once.
    pub fn release_claim(&self, ns: &str, name: &str) -> Result<(), String> {
        let Some(c) = self.resource_claim(ns, name) else {
            return Ok(());
        };
        if !has_finalizer(&c) {
            return Ok(());
        }
        if c.status.as_ref().is_some_and(|s| s.allocation.is_some()) {
            let mut c = (*c).clone();
            if let Some(s) = c.status.as_mut() {
                s.allocation = None;
            }
            self.put_resource_claim(c, Subresource::Status)?;
        }
        self.drop_claim_finalizer(ns, name)
    }

    /// DynamicResources' PreBind for extended resources: the claim created (a POST with
    /// `generateName`), read back as the scheduler's type.
    pub(super) fn create_claim(
        &self,
        claim: resource::ResourceClaim,
    ) -> Result<Arc<ResourceClaim>, String> {
        let ns = claim.metadata.namespace.clone().unwrap_or_default();
        let name = self.create(claim, &ns).map_err(|e| e.to_string())?;
        let stored = self
            .resource_claim(&ns, &name)
            .ok_or_else(|| format!("resourceclaims.resource.k8s.io {name:?} not found"))?;
        dra::resource_claim(&stored)
            .map(Arc::new)
            .map_err(|e| e.to_string())
    }

    /// kube's `deleteClaim`: the scheduler's finalizer removed, then the claim deleted.
    pub(super) fn delete_claim(&self, claim: &ResourceClaim) -> Result<(), String> {
        let ns = claim.namespace.to_string_lossy();
        self.drop_claim_finalizer(&ns, &claim.name)?;
        self.delete_object(&super::resource::RESOURCE_CLAIM, &ns, &claim.name);
        Ok(())
    }

    /// DynamicResources' PreBind: the pod's `status.extendedResourceClaimStatus`. False if
    /// the pod is gone.
    pub fn set_extended_resource_claim_status(
        &self,
        key: &PodKey,
        status: corev1::PodExtendedResourceClaimStatus,
    ) -> bool {
        self.patch_pod_status(
            key,
            |_| false,
            |s, _| s.extended_resource_claim_status = Some(status),
        )
    }

    /// DynamicResources' PostFilter: the claim loses its allocation, reservations and device
    /// statuses.
    pub(super) fn deallocate_claim(&self, claim: &ResourceClaim) -> Result<(), String> {
        let ns = claim.namespace.to_string_lossy();
        let Some(c) = self.resource_claim(&ns, &claim.name) else {
            return Err(format!(
                "resourceclaims.resource.k8s.io {:?} not found",
                claim.name
            ));
        };
        let mut c = (*c).clone();
        if let Some(s) = c.status.as_mut() {
            s.allocation = None;
            s.reserved_for = None;
            s.devices = None;
        }
        self.put_resource_claim(c, Subresource::Status)
    }
}
