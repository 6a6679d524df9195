//! Claims shared by a pod group (kube v1.37.2's DRAWorkloadResourceClaims parts of
//! `dynamicresources.go`): a PodGroup's `spec.resourceClaims` name claims for the whole
//! group.
//!
//! # Protocol
//!
//! - **Binding.** A member's claim entry that is also one of its group's (same name, same
//!   claim or template: kube's `resourceclaim.BindTo`) is reserved for the PodGroup
//!   (`{scheduling.k8s.io, podgroups, name, uid}`), not for the pod. A claim reserved for
//!   the group counts as reserved for each member (`IsReservedForPod` with group
//!   reservations accepted), so later members write nothing at PreBind.
//! - **Sharing a pending allocation within one pod-group cycle.** The first member that
//!   allocates a group claim leaves its allocation in flight (Reserve); a later member of
//!   the same cycle that finds the claim in the cycle's [`GroupClaims::pending`] reuses that
//!   allocation (PreFilter: the claim is usable only on the allocation's nodes; Filter:
//!   passed through, not allocated again) and adds itself as a sharer (Reserve). Unreserve
//!   drops one sharer; the last drops the allocation and the cycle's record of it. Across
//!   cycles nothing is shared: a pod of another cycle waits for the allocation in flight
//!   ("in the process of being allocated").
//! - **Binding race.** Members' binding cycles run after the group's cycle. The first
//!   PreBind writes the allocation and the group's reservation; a member whose PreFilter saw
//!   the claim unallocated then fails ("got allocated elsewhere in the meantime"), is
//!   unreserved and retried, and on its retry finds the claim reserved for its group.
//! - **PodGroupPostFilter** (a group's cycle ended Unschedulable; not for composite groups
//!   nor, with TopologyAwareWorkloadScheduling, for groups with scheduling constraints):
//!   every unscheduled member's PostFilter (deallocate one claim no one else uses); if some
//!   member had nothing to free and no pod of the group is scheduled, the group's claims:
//!   one unavailable claim reserved for nobody or only for the group is deallocated, else
//!   an allocated group claim loses the group's reservation. It always answers
//!   Unschedulable, with kube's messages.

use super::plugin::{DynamicResources, NAME};
use super::state::{DraState, GroupClaims, group_claims_of_cycle};
use crate::api::dra::{ClaimConsumer, ResourceClaim};
use crate::api::{Pod, PodGroup};
use crate::framework::interface::{PodGroupHandle, PodGroupPostFilterPlugin};
use crate::framework::pod_group::{PodGroupCycleState, PodGroupInfo, PodGroupPostFilterResult};
use crate::framework::status::{Code, Status};
use std::sync::Arc;

impl DynamicResources {
    /// kube's `getPodGroupSnapshot`: the pod's PodGroup when DRAWorkloadResourceClaims is on
    /// and the pod names one; `Err` with kube's message when it is not known.
    pub(super) fn pod_group(&self, pod: &Pod) -> Result<Option<Arc<PodGroup>>, String> {
        let (true, Some(groups), Some(name)) = (
            self.workload_claims,
            &self.pod_groups,
            &pod.spec.scheduling_group,
        ) else {
            return Ok(None);
        };
        groups
            .pod_group_of(pod.namespace, name)
            .map(Some)
            .ok_or_else(|| {
                format!(
                    "pod group state not found for pod group {}/{name}",
                    pod.namespace
                )
            })
    }

    /// kube's `podResourceClaimBindings`: what each of the pod's claims (in `claims`'
    /// order, the pod's entries that have a claim) is reserved for.
    pub(super) fn bindings(
        &self,
        pod: &Pod,
        claims: &[Arc<ResourceClaim>],
    ) -> Result<Vec<ClaimConsumer>, String> {
        let own = || ClaimConsumer::Pod {
            name: pod.name.clone(),
            uid: pod.uid.clone(),
        };
        let group = self.pod_group(pod)?;
        let Some(group) = group else {
            return Ok(vec![own(); claims.len()]);
        };
        let mut out = Vec::with_capacity(claims.len());
        for entry in &pod.spec.resource_claims {
            if !self.claim_named(pod, entry)? {
                continue;
            }
            out.push(if group.binds(entry) {
                ClaimConsumer::PodGroup {
                    name: group.key.name.clone(),
                    uid: group.uid.clone(),
                }
            } else {
                own()
            });
        }
        Ok(out)
    }

    /// Whether the pod's entry names a claim (a template's claim the controller did not
    /// make on purpose does not).
    fn claim_named(&self, pod: &Pod, entry: &crate::api::PodResourceClaim) -> Result<bool, String> {
        Ok(match &entry.source {
            crate::api::ClaimSource::Template(_) => pod
                .resource_claim_statuses
                .iter()
                .flat_map(|s| s.iter())
                .any(|(n, c)| *n == entry.name && c.is_some()),
            _ => true,
        })
    }

    /// kube's `deallocatePodGroupClaims`.
    fn deallocate_group_claims(&self, state: Option<&GroupClaims>, pod: &Pod) -> Status {
        let Some(name) = &pod.spec.scheduling_group else {
            return Status::success();
        };
        let Some(groups) = &self.pod_groups else {
            return Status::error("generic workload feature gate is disabled");
        };
        let key = crate::api::PodGroupKey {
            namespace: pod.namespace,
            name: name.clone(),
        };
        if groups.scheduled_pods_count(&key) > 0 {
            return Status::success();
        }
        let group = match self.pod_group(pod) {
            Ok(g) => g,
            Err(e) => return Status::error(e),
        };
        let members: Vec<Arc<DraState>> = state
            .map(|s| s.pods.lock().values().cloned().collect())
            .unwrap_or_default();
        for s in &members {
            for &i in s.unavailable.lock().iter() {
                let claim = &s.claims[i].claim;
                let for_group = group.as_ref().is_some_and(|g| {
                    claim.reserved_for.len() == 1 && claim.reserved_for[0] == g.uid
                });
                if claim.reserved_for.is_empty() || for_group {
                    return match self.client.deallocate_resource_claim(claim) {
                        Ok(()) => Status::new(
                            Code::Unschedulable,
                            "deallocation of PodGroup ResourceClaim completed",
                        ),
                        Err(e) => Status::error(e),
                    };
                }
            }
        }
        let Some(group) = group else {
            return Status::success();
        };
        for entry in &group.resource_claims {
            let (claim_name, check_owner) = match group.claim_name(entry) {
                Ok(Some(n)) => n,
                Ok(None) => continue,
                Err(e) => return Status::error(e),
            };
            let Some(claim) = self.dra.claim(group.key.namespace, &claim_name) else {
                return Status::error(format!(
                    "resourceclaim.resource.k8s.io {claim_name:?} not found"
                ));
            };
            if check_owner && claim.controller_uid.as_deref() != Some(&*group.uid) {
                continue;
            }
            if claim.allocation.is_some()
                && claim.is_reserved_for(pod, true)
                && self
                    .client
                    .unreserve_resource_claim_for(&claim, &group.uid)
                    .is_ok()
            {
                return Status::new(Code::Unschedulable, "ResourceClaim unreserved for PodGroup");
            }
        }
        Status::success()
    }
}

impl PodGroupPostFilterPlugin for DynamicResources {
    fn pod_group_post_filter(
        &self,
        _handle: &mut dyn PodGroupHandle,
        state: &mut PodGroupCycleState,
        pod_group: &PodGroupInfo,
    ) -> (Option<PodGroupPostFilterResult>, Status) {
        if pod_group.is_composite() {
            return (None, Status::code_only(Code::Unschedulable));
        }
        if self.topology_aware
            && pod_group
                .pod_group
                .as_ref()
                .is_some_and(|g| !g.topology_keys.is_empty())
        {
            return (None, Status::code_only(Code::Unschedulable));
        }
        let group = match group_claims_of_cycle(state) {
            Ok(g) => g,
            // kube's statusError of `fwk.ErrNotFound`: the runner names the plugin.
            Err(()) => return (None, Status::error("not found")),
        };
        let mut unreserve_group = false;
        if let Some(g) = &group {
            let pods = g.pods.lock().clone();
            if !pods.is_empty() {
                for pod in &pod_group.unscheduled_pods {
                    let Some(s) = pods.get(&pod.key) else {
                        continue;
                    };
                    let (found, st) = self.deallocate_or_delete(pod, s);
                    if st.code() == Code::Error {
                        return (None, st);
                    }
                    unreserve_group |= !found;
                }
            }
        }
        if unreserve_group
            && self.workload_claims
            && let Some(first) = pod_group.unscheduled_pods.first()
        {
            let st = self.deallocate_group_claims(group.as_deref(), first);
            if !st.is_success() {
                return (None, st.with_plugin(NAME));
            }
        }
        (
            None,
            Status::new(
                Code::Unschedulable,
                "deallocation and deletion of ResourceClaims completed",
            ),
        )
    }
}
