//! The DRA state of a record (`kube-reference/perf/dra.go`): each `dra` line carries the
//! DeviceClasses, ResourceSlices and ResourceClaims that are new or changed since the last,
//! those that left, and (when it changed) the set of in-flight allocations. The replay hands
//! them to tidegate's scheduler as its informers would (add, update, delete events), and sets
//! its in-flight allocations to kube's, so the attempt after the line sees the DRA state
//! kube's attempt saw.
//!
//! Each claim kube's allocator ran for since the previous line is judged once: the first
//! time a line shows it newly allocated, or in flight (its allocation reserved and not yet
//! written, as in a burst of attempts). On the state after the line, with every other
//! claim's devices held (allocated or in flight), tidegate's allocator must find an
//! allocation of the claim made of exactly kube's devices, on the first node (by name) its
//! allocation's node selector reaches
//! ([`tidegate_engine::ClaimAllocator::check_allocation`]). A failure is a disagreement.
//!
//! The in-flight set is recorded before each attempt only. A pod-group cycle ends with no
//! attempt after kube undid its tried placements, so the set recorded last may hold the last
//! trial's allocations: at the cycle's end the replay drops those its members' nodes cannot
//! use ([`DraObjects::drop_undone_trials`]).

use k8s_openapi::api::resource::v1 as k;
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::Arc;
use tidegate_engine::api::{ClaimSource, Node, Pod};
use tidegate_engine::{ActionType, ApiObject, ClaimAllocator, EventResource, Scheduler};

/// The pending entry of the devices in flight for claims kube's tracker does not list (the
/// scheduler's in-memory claim for a pod's extended resources; `UnlistedClaim` in `dra.go`).
const UNLISTED: &str = "<unlisted>";

/// A `dra` line's `dra` field (`DRAState` in `dra.go`).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct DraLine {
    device_classes: Vec<k::DeviceClass>,
    resource_slices: Vec<k::ResourceSlice>,
    resource_claims: Vec<k::ResourceClaim>,
    /// `kind/namespace/name`.
    deleted: Vec<String>,
    pending: Vec<Pending>,
    pending_set: bool,
}

#[derive(Clone, Debug, Deserialize)]
struct Pending {
    /// `namespace/name`.
    claim: String,
    allocation: k::AllocationResult,
}

/// The DRA objects replayed so far, by `kind/namespace/name` (the `old` of the next update),
/// and each claim's UID by `namespace/name`.
#[derive(Default)]
pub(super) struct DraObjects {
    objects: HashMap<String, (EventResource, ApiObject)>,
    claim_uids: HashMap<String, String>,
    /// Objects replayed (the report counts them).
    pub(super) applied: usize,
    /// Kube's claim allocations judged with tidegate's allocator.
    pub(super) allocations_checked: usize,
    /// The claims (`namespace/name`) judged so far, and kube's in-flight allocations now.
    judged: std::collections::HashSet<String>,
    in_flight: HashMap<String, k::AllocationResult>,
    /// kube's last recorded in-flight allocations, by claim UID, as handed to tidegate.
    recorded_pending: Vec<(String, k::AllocationResult)>,
}

impl DraObjects {
    /// Applies `line`; returns the disagreements of the allocations it judged.
    pub(super) fn apply(
        &mut self,
        sched: &Scheduler,
        nodes: &HashMap<String, Arc<Node>>,
        line: DraLine,
    ) -> Result<Vec<String>, String> {
        // Claims kube allocated since the last line: (namespace/name, claim, allocation).
        let mut newly: Vec<(String, k::ResourceClaim, k::AllocationResult)> = line
            .resource_claims
            .iter()
            .filter_map(|c| {
                let a = c.status.as_ref()?.allocation.clone()?;
                let nn = format!(
                    "{}/{}",
                    c.metadata.namespace.as_deref().unwrap_or(""),
                    c.metadata.name.as_deref().unwrap_or("")
                );
                let before = self.claim(&nn);
                (!before.is_some_and(has_allocation)).then(|| (nn, c.clone(), a))
            })
            .collect();
        let pending_now = line.pending_set.then(|| line.pending.clone());
        for c in line.device_classes {
            let key = format!("DeviceClass//{}", c.metadata.name.as_deref().unwrap_or(""));
            self.put(sched, key, EventResource::DeviceClass, Arc::new(c));
        }
        for s in line.resource_slices {
            let key = format!(
                "ResourceSlice//{}",
                s.metadata.name.as_deref().unwrap_or("")
            );
            self.put(sched, key, EventResource::ResourceSlice, Arc::new(s));
        }
        for c in line.resource_claims {
            let nn = format!(
                "{}/{}",
                c.metadata.namespace.as_deref().unwrap_or(""),
                c.metadata.name.as_deref().unwrap_or("")
            );
            self.claim_uids
                .insert(nn.clone(), c.metadata.uid.clone().unwrap_or_default());
            self.put(
                sched,
                format!("ResourceClaim/{nn}"),
                EventResource::ResourceClaim,
                Arc::new(c),
            );
        }
        for key in line.deleted {
            if let Some((resource, old)) = self.objects.remove(&key) {
                sched.on_object_event(resource, ActionType::DELETE, Some(old), None);
            }
            if let Some(nn) = key.strip_prefix("ResourceClaim/") {
                self.claim_uids.remove(nn);
            }
        }
        if line.pending_set {
            let mut pending = Vec::with_capacity(line.pending.len());
            for p in line.pending {
                // The devices in flight for claims kube's tracker does not list go in under
                // their entry's name.
                let uid = match self.claim_uids.get(&p.claim) {
                    Some(uid) => uid.clone(),
                    None if p.claim == UNLISTED => p.claim.clone(),
                    None => {
                        return Err(format!("in-flight allocation of unknown claim {}", p.claim));
                    }
                };
                pending.push((uid, p.allocation));
            }
            sched.replace_pending_claim_allocations(&pending)?;
            self.recorded_pending = pending;
        }
        if let Some(p) = pending_now {
            self.in_flight = p.into_iter().map(|p| (p.claim, p.allocation)).collect();
            let mut started: Vec<(&String, &k::AllocationResult)> = self.in_flight.iter().collect();
            started.sort_by(|a, b| a.0.cmp(b.0));
            for (nn, a) in started {
                if let Some(c) = self.claim(nn) {
                    newly.push((nn.clone(), c.clone(), a.clone()));
                }
            }
        }
        let mut disagreements = Vec::new();
        for (nn, claim, allocation) in newly {
            if !self.judged.insert(nn.clone()) {
                continue;
            }
            self.allocations_checked += 1;
            if let Err(e) = self.judge(sched, nodes, &nn, &claim, &allocation) {
                disagreements.push(format!("kube's allocation of claim {nn}: {e}"));
            }
        }
        Ok(disagreements)
    }

    /// Sets tidegate's in-flight allocations back to kube's last recorded ones: kube undid
    /// a pod-group placement (its `reverted` lines), unreserving the members, whose claims
    /// the replay's own Reserve of each member had put in flight.
    pub(super) fn restore_pending(&self, sched: &Scheduler) -> Result<(), String> {
        sched.replace_pending_claim_allocations(&self.recorded_pending)
    }

    /// kube's pod-group cycle ended (its `podGroup` line): kube undid every placement it
    /// tried and committed the chosen one by running Reserve again on the state that
    /// placement's evaluation left. The recorder writes the in-flight allocations only
    /// before an attempt, so the last recorded set may predate that undo: it still holds
    /// what the last tried placement reserved. A claim named by `members` (each with the
    /// node kube sent it to binding; `None`: not sent) whose allocation in flight no
    /// member naming it can use there is such a trial's, undone: it goes, from the
    /// recorded set and from tidegate's. Kept: claims any of `others` (pods bound outside
    /// this cycle) names, which an earlier commit may still hold. Not covered: a trial's
    /// allocation a member's node can use (kept, though kube may have committed other
    /// devices; its API write replaces it), and the in-flight devices of extended resources
    /// (no claim names them). Returns the claims dropped.
    pub(super) fn drop_undone_trials(
        &mut self,
        sched: &Scheduler,
        nodes: &HashMap<String, Arc<Node>>,
        members: &[(&Pod, Option<&str>)],
        others: &[&Pod],
    ) -> Result<Vec<String>, String> {
        let held: std::collections::HashSet<String> =
            others.iter().flat_map(|p| claim_names(p)).collect();
        // Each claim the members name, with the nodes they were sent to.
        let mut named: std::collections::BTreeMap<String, Vec<&Node>> = Default::default();
        for (pod, node) in members {
            let node = node.and_then(|n| nodes.get(n)).map(|n| &**n);
            for nn in claim_names(pod) {
                named.entry(nn).or_default().extend(node);
            }
        }
        let mut dropped = Vec::new();
        for (nn, sent_to) in named {
            let Some(uid) = self.claim_uids.get(&nn).filter(|_| !held.contains(&nn)) else {
                continue;
            };
            let Some(i) = self.recorded_pending.iter().position(|(u, _)| u == uid) else {
                continue;
            };
            let a = tidegate_engine::api::dra::allocation(&self.recorded_pending[i].1)
                .map_err(|e| format!("in-flight allocation of claim {nn}: {e}"))?;
            let usable = sent_to.iter().any(|n| {
                a.node_selector
                    .as_ref()
                    .is_none_or(|s| s.matches(n.name, &n.labels))
            });
            if !usable {
                self.recorded_pending.remove(i);
                sched.drop_pending_claim_allocation(uid);
                dropped.push(nn);
            }
        }
        Ok(dropped)
    }

    /// The stored objects of `kind`, by key.
    fn typed<T: Send + Sync + 'static>(&self, kind: &str) -> Vec<Arc<T>> {
        let mut v: Vec<(&String, &ApiObject)> = self
            .objects
            .iter()
            .filter(|(key, _)| key.split('/').next() == Some(kind))
            .map(|(key, (_, o))| (key, o))
            .collect();
        v.sort_by(|a, b| a.0.cmp(b.0));
        v.into_iter()
            .filter_map(|(_, o)| o.0.clone().downcast::<T>().ok())
            .collect()
    }

    /// The stored claim `namespace/name`.
    fn claim(&self, nn: &str) -> Option<&k::ResourceClaim> {
        self.objects
            .get(&format!("ResourceClaim/{nn}"))
            .and_then(|(_, o)| o.downcast_ref::<k::ResourceClaim>())
    }

    /// One claim's allocation by kube, on the state replayed so far (module doc).
    fn judge(
        &self,
        sched: &Scheduler,
        nodes: &HashMap<String, Arc<Node>>,
        nn: &str,
        claim: &k::ResourceClaim,
        allocation: &k::AllocationResult,
    ) -> Result<(), String> {
        let classes: Vec<Arc<k::DeviceClass>> = self.typed("DeviceClass");
        let slices: Vec<Arc<k::ResourceSlice>> = self.typed("ResourceSlice");
        // Every other claim, holding its devices whether written or in flight.
        let mut others: Vec<Arc<k::ResourceClaim>> = self
            .typed::<k::ResourceClaim>("ResourceClaim")
            .into_iter()
            .filter_map(|c| {
                let key = format!(
                    "{}/{}",
                    c.metadata.namespace.as_deref().unwrap_or(""),
                    c.metadata.name.as_deref().unwrap_or("")
                );
                if key == nn {
                    return None;
                }
                match self.in_flight.get(&key) {
                    Some(a) if !has_allocation(&c) => {
                        let mut c = (*c).clone();
                        c.status.get_or_insert_with(Default::default).allocation = Some(a.clone());
                        Some(Arc::new(c))
                    }
                    _ => Some(c),
                }
            })
            .collect();
        // The devices in flight for claims kube's tracker does not list hold too.
        if let Some(a) = self.in_flight.get(UNLISTED) {
            let mut c = k::ResourceClaim::default();
            c.metadata.name = Some(UNLISTED.into());
            c.status = Some(k::ResourceClaimStatus {
                allocation: Some(a.clone()),
                ..Default::default()
            });
            others.push(Arc::new(c));
        }
        let converted =
            tidegate_engine::api::dra::allocation(allocation).map_err(|e| e.to_string())?;
        let mut names: Vec<&String> = nodes.keys().collect();
        names.sort();
        let node = names
            .into_iter()
            .map(|n| &nodes[n])
            .find(|n| {
                converted
                    .node_selector
                    .as_ref()
                    .is_none_or(|s| s.matches(n.name, &n.labels))
            })
            .ok_or("its node selector reaches no node of the record")?;
        // The recorded slices carry the rules' taints already (kube's tracker's view).
        let alloc = ClaimAllocator::new(&classes, &slices, &[], &others, sched.features())?;
        alloc.check_allocation(claim, node, allocation)
    }

    fn put<T: Send + Sync + 'static>(
        &mut self,
        sched: &Scheduler,
        key: String,
        resource: EventResource,
        obj: Arc<T>,
    ) {
        self.applied += 1;
        let new = ApiObject(obj);
        match self.objects.insert(key, (resource, new.clone())) {
            None => sched.on_object_event(resource, ActionType::ADD, None, Some(new)),
            Some((_, old)) => {
                sched.on_object_event(resource, ActionType::UPDATE, Some(old), Some(new))
            }
        }
    }
}

/// The claims `pod` names (`namespace/name`): its own, and those made from templates for it.
fn claim_names(pod: &Pod) -> Vec<String> {
    pod.spec
        .resource_claims
        .iter()
        .filter_map(|pc| match &pc.source {
            ClaimSource::Claim(n) => Some(n.clone()),
            ClaimSource::Template(_) => pod
                .resource_claim_statuses
                .iter()
                .flat_map(|s| s.iter())
                .find(|(n, _)| *n == pc.name)
                .and_then(|(_, made)| made.clone()),
            ClaimSource::Unsupported => None,
        })
        .map(|n| format!("{}/{n}", pod.namespace))
        .collect()
}

fn has_allocation(c: &k::ResourceClaim) -> bool {
    c.status.as_ref().is_some_and(|s| s.allocation.is_some())
}
