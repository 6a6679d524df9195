//! kube's ResourceClaim controller (`pkg/controller/resourceclaim`), which scheduler_perf
//! starts beside the scheduler when a workload names the DynamicResourceAllocation gate.
//!
//! - **Pod added** with claims from templates: one claim per template entry, made from the
//!   template (`generateName: <pod>-<claim>-`, capped at 57 characters as kube caps it; the
//!   template's labels and annotations; the annotation `resource.kubernetes.io/pod-claim-name`;
//!   the pod as controlling owner), then the pod's `status.resourceClaimStatuses` naming them.
//!   The claims exist before the status names them, so the scheduler's PreEnqueue finds them
//!   as soon as the pod's update arrives. A missing template leaves the pod without a status:
//!   it waits, gated by DynamicResources, as in kube (whose controller retries).
//! - **Pod deleted**: every claim reserved for it loses the reservation; a claim left reserved
//!   for nobody that the scheduler allocated (its finalizer) is deallocated and loses the
//!   finalizer (`syncClaim`); a claim the pod owned is then deleted.
//!
//! The controller acts synchronously in the store's pod hooks, where kube's runs in workers
//! a moment later: the scheduler sees the same sequence of writes.

use crate::cluster::controller::Controller;
use crate::cluster::store::{Store, resource};
use k8s_openapi::api::resource::v1 as k;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use std::sync::Arc;
use tidegate_engine::api::{ClaimSource, Pod};

/// kube's annotation naming the pod claim a generated claim is for.
const POD_CLAIM_NAME: &str = "resource.kubernetes.io/pod-claim-name";

#[derive(Debug, Default)]
pub struct ResourceClaimController;

impl Controller for ResourceClaimController {
    fn on_pod_add(&self, store: &Store, pod: &Arc<Pod>) {
        let templates: Vec<_> = pod
            .spec
            .resource_claims
            .iter()
            .filter_map(|c| match &c.source {
                ClaimSource::Template(t) => Some((c.name.clone(), t.clone())),
                _ => None,
            })
            .collect();
        if templates.is_empty() || pod.node_name.is_some() {
            return;
        }
        let ns = pod.namespace.to_string_lossy();
        let mut statuses = Vec::with_capacity(templates.len());
        for (claim_name, template) in templates {
            let Some(t) = store.get::<k::ResourceClaimTemplate>(&ns, &template) else {
                return;
            };
            let Ok(name) = store.create(claim_from_template(pod, &claim_name, &t), &ns) else {
                return;
            };
            statuses.push((claim_name.to_string(), Some(name)));
        }
        store.set_resource_claim_statuses(&pod.key, statuses);
    }

    fn on_pod_delete(&self, store: &Store, pod: &Pod) {
        let ns = pod.namespace.to_string_lossy();
        let key = format!("{ns}/{}", pod.name);
        for obj in store.by_index(&resource::RESOURCE_CLAIM, "pod", &key) {
            let Some(name) = obj.meta().name.clone() else {
                continue;
            };
            // The controller's writes are retried in kube; a conflict cannot happen here (the
            // hook is the only writer at this moment), and a vanished claim needs nothing.
            let _ = store.unreserve_claim(&ns, &name, &pod.uid, true);
            let owned = obj
                .meta()
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.controller == Some(true) && o.kind == "Pod" && o.uid == *pod.uid);
            if owned {
                let _ = store.release_claim(&ns, &name);
                store.delete_object(&resource::RESOURCE_CLAIM, &ns, &name);
            }
        }
    }
}

/// kube's `handleClaim`: the claim generated for `pod`'s entry `claim_name`.
fn claim_from_template(
    pod: &Pod,
    claim_name: &str,
    t: &k::ResourceClaimTemplate,
) -> k::ResourceClaim {
    let mut generate = format!("{}-{}-", pod.name, claim_name);
    if generate.len() > 57 {
        let mut cut = 57;
        while !generate.is_char_boundary(cut) {
            cut -= 1;
        }
        generate.truncate(cut);
    }
    let spec = t.spec.clone().unwrap_or_default();
    let mut annotations = spec
        .metadata
        .as_ref()
        .and_then(|m| m.annotations.clone())
        .unwrap_or_default();
    annotations.insert(POD_CLAIM_NAME.to_string(), claim_name.to_string());
    k::ResourceClaim {
        metadata: ObjectMeta {
            generate_name: Some(generate),
            namespace: Some(pod.namespace.to_string_lossy()),
            labels: spec.metadata.as_ref().and_then(|m| m.labels.clone()),
            annotations: Some(annotations),
            owner_references: Some(vec![OwnerReference {
                api_version: "v1".into(),
                kind: "Pod".into(),
                name: pod.name.to_string(),
                uid: pod.uid.to_string(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            ..Default::default()
        },
        spec: spec.spec,
        status: None,
    }
}
