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
//! - **PodGroup added** with claims from templates (DRAWorkloadResourceClaims): one claim per
//!   template entry, owned by the PodGroup (`generateName: <group>-<claim>-`), then the
//!   group's `status.resourceClaimStatuses`; its members waiting for them are synced.
//! - **A member's entry the group shares** (same name and template as one of the group's):
//!   no claim of its own; the pod's status names the group's claim.
//! - **Pod deleted**: every claim reserved for it loses the reservation; a claim left reserved
//!   for nobody that the scheduler allocated (its finalizer) is deallocated and loses the
//!   finalizer (`syncClaim`); a claim the pod owned is then deleted.
//!
//! The controller acts synchronously in the store's pod hooks, where kube's runs in workers
//! a moment later: the scheduler sees the same sequence of writes.

use crate::cluster::controller::Controller;
use crate::cluster::store::{KubeObject, Store, Subresource, resource};
use k8s_openapi::api::resource::v1 as k;
use k8s_openapi::api::scheduling::v1beta1 as sched;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use std::any::Any;
use std::sync::Arc;
use tidegate_engine::api::{ClaimSource, Pod, PodResourceClaim};

/// kube's annotation naming the pod claim a generated claim is for.
const POD_CLAIM_NAME: &str = "resource.kubernetes.io/pod-claim-name";

#[derive(Debug, Default)]
pub struct ResourceClaimController;

impl Controller for ResourceClaimController {
    fn on_pod_add(&self, store: &Store, pod: &Arc<Pod>) {
        sync_pod(store, pod);
    }

    fn on_object_add(&self, store: &Store, obj: &Arc<dyn KubeObject>) {
        let any: &dyn Any = obj.as_ref();
        if let Some(pg) = any.downcast_ref::<sched::PodGroup>() {
            sync_pod_group(store, pg);
        }
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

/// kube's `syncPod`: a claim for each of the pod's template entries, or (an entry its
/// PodGroup shares) the group's claim, then the pod's `status.resourceClaimStatuses`. A
/// pod whose group is not known yet, or whose group's claim is not made yet, is left
/// without a status (kube retries; here the group's creation syncs its members).
fn sync_pod(store: &Store, pod: &Pod) {
    let templates: Vec<&PodResourceClaim> = pod
        .spec
        .resource_claims
        .iter()
        .filter(|c| matches!(c.source, ClaimSource::Template(_)))
        .collect();
    if templates.is_empty() || pod.node_name.is_some() || pod.resource_claim_statuses.is_some() {
        return;
    }
    let ns = pod.namespace.to_string_lossy();
    // The group in the scheduler's form: its `binds` is kube's `BindTo`.
    let group = match &pod.spec.scheduling_group {
        Some(g) => match store
            .get::<sched::PodGroup>(&ns, g)
            .and_then(|pg| tidegate_engine::api::convert::pod_group(&pg).ok())
        {
            Some(pg) => Some(pg),
            None => return,
        },
        None => None,
    };
    // The claim the controller made for the group's entry, from the group's status.
    let group_claim = |pg: &tidegate_engine::api::PodGroup, entry: &PodResourceClaim| {
        pg.claim_name(entry)
            .ok()
            .flatten()
            .map(|(n, _)| n.to_string())
    };
    let gates = store.api_gates();
    // The group's claims first: nothing is made for the pod while one is missing (kube
    // would find the claims it made on its retry; this controller does not look for them).
    let shared = |entry: &PodResourceClaim| group.as_ref().filter(|pg| pg.binds(entry));
    let waiting = templates.iter().any(|e| {
        shared(e)
            .is_some_and(|pg| !gates.dra_workload_resource_claims || group_claim(pg, e).is_none())
    });
    if waiting {
        return;
    }
    let mut statuses = Vec::with_capacity(templates.len());
    for entry in templates {
        let ClaimSource::Template(template) = &entry.source else {
            continue;
        };
        if let Some(pg) = shared(entry) {
            statuses.push((entry.name.to_string(), group_claim(pg, entry)));
            continue;
        }
        let Some(t) = store.get::<k::ResourceClaimTemplate>(&ns, template) else {
            return;
        };
        let owner = OwnerReference {
            api_version: "v1".into(),
            kind: "Pod".into(),
            name: pod.name.to_string(),
            uid: pod.uid.to_string(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        };
        let Ok(name) = store.create(claim_from_template(owner, &ns, &entry.name, &t), &ns) else {
            return;
        };
        statuses.push((entry.name.to_string(), Some(name)));
    }
    store.set_resource_claim_statuses(&pod.key, statuses);
}

/// kube's `syncPodGroup`: a claim for each of the group's template entries, then the group's
/// `status.resourceClaimStatuses`; then its members waiting for them are synced (kube's
/// controller enqueues them on the group's update).
fn sync_pod_group(store: &Store, pg: &sched::PodGroup) {
    let ns = pg.metadata.namespace.clone().unwrap_or_default();
    let name = pg.metadata.name.clone().unwrap_or_default();
    let mut made = Vec::new();
    for entry in pg.spec.resource_claims.iter().flatten() {
        let Some(template) = &entry.resource_claim_template_name else {
            continue;
        };
        if group_claim_name(pg, &entry.name).is_some() {
            continue;
        }
        let Some(t) = store.get::<k::ResourceClaimTemplate>(&ns, template) else {
            break;
        };
        let owner = OwnerReference {
            api_version: "scheduling.k8s.io/v1beta1".into(),
            kind: "PodGroup".into(),
            name: name.clone(),
            uid: pg.metadata.uid.clone().unwrap_or_default(),
            controller: Some(true),
            block_owner_deletion: None,
        };
        let Ok(claim) = store.create(claim_from_template(owner, &ns, &entry.name, &t), &ns) else {
            break;
        };
        made.push(sched::PodGroupResourceClaimStatus {
            name: entry.name.clone(),
            resource_claim_name: Some(claim),
        });
    }
    if made.is_empty() {
        return;
    }
    let Some(now) = store.get::<sched::PodGroup>(&ns, &name) else {
        return;
    };
    let mut now = (*now).clone();
    let status = now.status.get_or_insert_with(Default::default);
    status
        .resource_claim_statuses
        .get_or_insert_with(Vec::new)
        .extend(made);
    if store.update(now, &ns, Subresource::Status).is_err() {
        return;
    }
    for pod in store.unbound_group_members(&ns, &name) {
        sync_pod(store, &pod);
    }
}

/// The claim the controller made for the group's entry `entry`, from the group's status.
fn group_claim_name(pg: &sched::PodGroup, entry: &str) -> Option<String> {
    pg.status
        .as_ref()?
        .resource_claim_statuses
        .as_ref()?
        .iter()
        .find(|s| s.name == entry)?
        .resource_claim_name
        .clone()
}

/// kube's `generateName` for a generated claim: `<owner>-<entry>-`, or past 57 characters
/// both names cut in proportion to their lengths and joined by one hyphen (no trailing one).
fn generate_name(owner: &str, entry: &str) -> String {
    const MAX_BASE: usize = 57;
    let full = format!("{owner}-{entry}-");
    if full.len() <= MAX_BASE {
        return full;
    }
    let cut = |s: &str| {
        let mut n = s.len() * MAX_BASE / full.len();
        while !s.is_char_boundary(n) {
            n -= 1;
        }
        s[..n].to_string()
    };
    format!("{}-{}", cut(owner), cut(entry))
}

/// kube's `handleClaim` / `handlePodGroupClaim`: the claim generated for the entry
/// `claim_name` of the owner (a pod or a PodGroup).
fn claim_from_template(
    owner: OwnerReference,
    namespace: &str,
    claim_name: &str,
    t: &k::ResourceClaimTemplate,
) -> k::ResourceClaim {
    let spec = t.spec.clone().unwrap_or_default();
    let mut annotations = spec
        .metadata
        .as_ref()
        .and_then(|m| m.annotations.clone())
        .unwrap_or_default();
    annotations.insert(POD_CLAIM_NAME.to_string(), claim_name.to_string());
    k::ResourceClaim {
        metadata: ObjectMeta {
            generate_name: Some(generate_name(&owner.name, claim_name)),
            namespace: Some(namespace.to_string()),
            labels: spec.metadata.as_ref().and_then(|m| m.labels.clone()),
            annotations: Some(annotations),
            owner_references: Some(vec![owner]),
            ..Default::default()
        },
        spec: spec.spec,
        status: None,
    }
}

#[cfg(test)]
mod tests {
    use super::generate_name;

    #[test]
    fn generated_names_cut_both_parts_in_proportion_past_57_characters() {
        // Provenance: pkg/controller/resourceclaim/controller.go (handleClaim).
        assert_eq!(generate_name("pod", "gpu"), "pod-gpu-");
        let owner = "a".repeat(60);
        let got = generate_name(&owner, "claim");
        // 60 * 57 / 67 = 51, 5 * 57 / 67 = 4.
        assert_eq!(got, format!("{}-clai", "a".repeat(51)));
    }
}
