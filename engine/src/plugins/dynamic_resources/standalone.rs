//! The structured allocator outside a scheduling cycle, for harnesses: scheduler_perf's
//! `allocResourceClaims` op allocates claims with kube's allocator on a node of its choosing
//! before any pod needs them (`test/integration/scheduler_perf/dra.go`).
//!
//! A [`ClaimAllocator`] is built from the API objects once; every claim it allocates holds
//! its devices for the claims allocated after it, as the op's rebuilt allocated state does.

use super::AllocatorFeatures;
use super::allocator::{AllocError, Allocator};
use super::cel::CelSelectors;
use crate::api::Node;
use crate::api::convert::ConvertError;
use crate::api::dra::{self, DeviceClass, DeviceId, ResourceSlice};
use crate::api::dra_taint_rule::{self, DeviceTaintRule};
use crate::features::Features;
use crate::framework::dra_manager::AllocatedDevices;
use ahash::AHashMap;
use k8s_openapi::api::resource::v1 as k;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Allocates claims one at a time over a fixed set of classes and slices.
pub struct ClaimAllocator {
    classes: AHashMap<Arc<str>, Arc<DeviceClass>>,
    slices: Vec<Arc<ResourceSlice>>,
    allocated: AllocatedDevices,
    features: AllocatorFeatures,
    cel: CelSelectors,
}

impl ClaimAllocator {
    /// The classes, the slices (sorted by name, as the scheduler reads them, with the taints
    /// of the `taint_rules` when DRADeviceTaintRules is on) and the claims already
    /// allocated, whose devices are taken. An object that does not convert is an error
    /// naming it.
    pub fn new(
        classes: &[Arc<k::DeviceClass>],
        slices: &[Arc<k::ResourceSlice>],
        taint_rules: &[Arc<k::DeviceTaintRule>],
        claims: &[Arc<k::ResourceClaim>],
        features: &Features,
    ) -> Result<ClaimAllocator, String> {
        let named = |what: &str, n: &Option<String>, e: ConvertError| {
            format!("{what} {:?}: {e}", n.as_deref().unwrap_or(""))
        };
        let mut out = ClaimAllocator {
            classes: AHashMap::new(),
            slices: Vec::new(),
            allocated: AllocatedDevices::default(),
            features: AllocatorFeatures::from_gates(features),
            cel: CelSelectors::new(),
        };
        for c in classes {
            let v = dra::device_class(c).map_err(|e| named("DeviceClass", &c.metadata.name, e))?;
            out.classes.insert(v.name.clone(), Arc::new(v));
        }
        let rules: BTreeMap<Arc<str>, Arc<DeviceTaintRule>> = (taint_rules.iter())
            .filter(|_| features.dra_device_taint_rules)
            .map(|r| {
                let r = dra_taint_rule::device_taint_rule(r);
                (r.name.clone(), Arc::new(r))
            })
            .collect();
        for s in slices {
            let v =
                dra::resource_slice(s).map_err(|e| named("ResourceSlice", &s.metadata.name, e))?;
            let v = dra_taint_rule::with_taint_rules(&v, &rules).unwrap_or(v);
            out.slices.push(Arc::new(v));
        }
        out.slices.sort_by(|a, b| a.name.cmp(&b.name));
        for c in claims {
            out.hold(c)?;
        }
        Ok(out)
    }

    /// The allocator over this state for `claim` on `node` (`only`: the devices it may take).
    fn run(
        &self,
        node: &Node,
        claim: &dra::ResourceClaim,
        only: Option<&ahash::AHashSet<DeviceId>>,
    ) -> Result<Option<Vec<dra::Allocation>>, AllocError> {
        let classes = |n: &str| self.classes.get(n).cloned();
        Allocator {
            features: self.features,
            allocated: &self.allocated,
            classes: &classes,
            slices: &self.slices,
            all_slices: super::pools::AllSlices::List(&self.slices),
            remote_pools: &[],
            selectors: &self.cel,
            only,
            pools: None,
        }
        .allocate(node, &[claim])
    }

    /// Takes the devices of an allocated claim.
    fn hold(&mut self, c: &k::ResourceClaim) -> Result<(), String> {
        let v = dra::resource_claim(c).map_err(|e| {
            format!(
                "ResourceClaim {:?}: {e}",
                c.metadata.name.as_deref().unwrap_or("")
            )
        })?;
        for d in v.allocation.iter().flat_map(|a| &a.devices) {
            self.allocated.insert(d, self.features.consumable_capacity);
        }
        Ok(())
    }

    /// The claim's allocation on `node` (`Ok(None)`: it does not fit there); on success its
    /// devices are taken for the claims that follow. `Err` for what kube's allocator reports
    /// as an error.
    pub fn allocate(
        &mut self,
        claim: &k::ResourceClaim,
        node: &Node,
    ) -> Result<Option<k::AllocationResult>, String> {
        let v = dra::resource_claim(claim).map_err(|e| e.to_string())?;
        let result = match self.run(node, &v, None) {
            Ok(Some(mut r)) if r.len() == 1 => r.pop().expect("one"),
            Ok(_) | Err(AllocError::OnNode(_)) => return Ok(None),
            Err(AllocError::Fatal(e)) => return Err(e),
        };
        for d in &result.devices {
            self.allocated.insert(d, self.features.consumable_capacity);
        }
        Ok(Some(dra::allocation_to_api(&result)))
    }
}

impl ClaimAllocator {
    /// Judges another allocator's result (kube's, in the differential): `Ok` when tidegate's
    /// allocator, on this state and `node`, finds an allocation of `claim` made of exactly
    /// `allocation`'s devices (each request's selectors, counts, `matchAttribute`
    /// constraints, taints and counters hold), and none of those devices is held by another
    /// claim (admin access aside). `Err` says what fails. The search runs restricted to
    /// those devices, so its backtracking tries every way of assigning them to the requests.
    /// Not judged: whether an `All` request took every matching device of the node.
    pub fn check_allocation(
        &self,
        claim: &k::ResourceClaim,
        node: &Node,
        allocation: &k::AllocationResult,
    ) -> Result<(), String> {
        let mut v = dra::resource_claim(claim).map_err(|e| e.to_string())?;
        v.allocation = None;
        let theirs = dra::allocation(allocation).map_err(|e| e.to_string())?;
        let only: ahash::AHashSet<DeviceId> = theirs.devices.iter().map(|d| d.device).collect();
        if let Some(d) = theirs
            .devices
            .iter()
            .find(|d| !d.admin_access && self.allocated.contains(&d.device))
        {
            return Err(format!("device {} is allocated to another claim", d.device));
        }
        let mut listed: Vec<String> = only.iter().map(|d| d.to_string()).collect();
        listed.sort();
        match self.run(node, &v, Some(&only)) {
            Ok(Some(r)) => {
                let ours: ahash::AHashSet<DeviceId> = r
                    .iter()
                    .flat_map(|a| &a.devices)
                    .map(|d| d.device)
                    .collect();
                if ours == only {
                    same_shares(&theirs, &r[0])
                } else {
                    Err(format!(
                        "on node {}, the claim needs {} of the devices [{}], not all of them",
                        node.name,
                        ours.len(),
                        listed.join(", ")
                    ))
                }
            }
            Ok(None) => Err(format!(
                "on node {}, no allocation of the claim is made of the devices [{}]",
                node.name,
                listed.join(", ")
            )),
            Err(e) => Err(format!("on node {}: {e}", node.name)),
        }
    }
}

/// The shares of shared devices (DRAConsumableCapacity) consume the same in both results:
/// each of `theirs` matches one of `ours` on the device and the consumed capacity (share
/// IDs are drawn at random by kube and differ).
fn same_shares(theirs: &dra::Allocation, ours: &dra::Allocation) -> Result<(), String> {
    let mut left: Vec<&dra::AllocatedDevice> = ours
        .devices
        .iter()
        .filter(|d| d.share_id.is_some())
        .collect();
    for t in theirs.devices.iter().filter(|d| d.share_id.is_some()) {
        let hit = left
            .iter()
            .position(|o| o.device == t.device && o.consumed_capacity == t.consumed_capacity);
        match hit {
            Some(i) => {
                left.swap_remove(i);
            }
            None => {
                let ours: Vec<_> = (ours.devices.iter())
                    .filter(|o| o.device == t.device)
                    .map(|o| (o.share_id.is_some(), &o.consumed_capacity))
                    .collect();
                return Err(format!(
                    "device {}: kube's share consumes {:?}, tidegate's (shared, consumed) {ours:?}",
                    t.device, t.consumed_capacity
                ));
            }
        }
    }
    Ok(())
}

/// Why kube's API server refuses a DRA CEL selector (`validateCELExpression`, v1.37.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SelectorError {
    /// Longer than `CELSelectorExpressionMaxLength` bytes.
    TooLong,
    /// Does not compile in the DRA environment (the compiler's message).
    Invalid(String),
    /// Its worst-case cost exceeds `CELSelectorExpressionMaxCost` (`cel_cost`).
    TooComplex,
}

impl SelectorError {
    /// kube's field error for `expression`, the text after `<field path>: `.
    pub fn message(&self, expression: &str) -> String {
        match self {
            SelectorError::TooLong => format!(
                "Too long: may not be more than {} bytes",
                super::cel_cost::CEL_SELECTOR_MAX_LENGTH
            ),
            SelectorError::Invalid(detail) => format!("Invalid value: {expression:?}: {detail}"),
            SelectorError::TooComplex => "Forbidden: too complex, exceeds cost limit".into(),
        }
    }
}

/// kube's validation of a stored DRA CEL selector (a DeviceClass's or a claim request's
/// `cel.expression`): its length, that it compiles, and its worst-case cost.
pub fn validate_cel_selector(expression: &str) -> Result<(), SelectorError> {
    static CEL: std::sync::LazyLock<CelSelectors> = std::sync::LazyLock::new(CelSelectors::new);
    if expression.len() > super::cel_cost::CEL_SELECTOR_MAX_LENGTH {
        return Err(SelectorError::TooLong);
    }
    // cel's message goes on to draw the source and a caret on further lines; one line here.
    let program = CEL.compile(expression).map_err(|e| {
        SelectorError::Invalid(e.lines().next().unwrap_or_default().trim_end().to_string())
    })?;
    if super::cel_cost::estimate(program.expression()) > super::cel_cost::CEL_SELECTOR_MAX_COST {
        return Err(SelectorError::TooComplex);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> Arc<T> {
        Arc::new(serde_json::from_value(v).unwrap())
    }

    fn claim(name: &str) -> Arc<k::ResourceClaim> {
        obj(json!({
            "metadata": {"name": name, "namespace": "ns", "uid": name},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {
                "deviceClassName": "gpu",
                "selectors": [{"cel": {"expression": "device.attributes[\"d\"].model == \"a\""}}]
            }}]}}
        }))
    }

    fn allocation(device: &str) -> k::AllocationResult {
        serde_json::from_value(json!({"devices": {"results": [
            {"request": "r", "driver": "d", "pool": "node-0", "device": device}
        ]}}))
        .unwrap()
    }

    fn allocator(held: &[(&str, &str)]) -> ClaimAllocator {
        let class: Arc<k::DeviceClass> = obj(json!({"metadata": {"name": "gpu"}, "spec": {}}));
        let slice: Arc<k::ResourceSlice> = obj(json!({
            "metadata": {"name": "s"},
            "spec": {"driver": "d", "nodeName": "node-0",
                "pool": {"name": "node-0", "generation": 1, "resourceSliceCount": 1},
                "devices": [
                    {"name": "a0", "attributes": {"model": {"string": "a"}}},
                    {"name": "a1", "attributes": {"model": {"string": "a"}}},
                    {"name": "b0", "attributes": {"model": {"string": "b"}}}
                ]}
        }));
        let claims: Vec<Arc<k::ResourceClaim>> = held
            .iter()
            .map(|(name, device)| {
                let mut c = (*claim(name)).clone();
                c.status = Some(k::ResourceClaimStatus {
                    allocation: Some(allocation(device)),
                    ..Default::default()
                });
                Arc::new(c)
            })
            .collect();
        ClaimAllocator::new(&[class], &[slice], &[], &claims, &Features::default()).unwrap()
    }

    /// kube's allocation is judged on the devices it names: one the claim's selector takes
    /// and no other claim holds is accepted; a device the selector refuses, or one held by
    /// another claim, or more devices than the request asks for, is not.
    #[test]
    fn another_allocators_result_is_accepted_only_when_it_is_one_tidegate_could_make() {
        let node = Node::named("node-0");
        let c = claim("c");
        let free = allocator(&[]);
        assert_eq!(free.check_allocation(&c, &node, &allocation("a1")), Ok(()));
        let refused = free
            .check_allocation(&c, &node, &allocation("b0"))
            .unwrap_err();
        assert!(refused.contains("no allocation"), "{refused}");
        let held = allocator(&[("other", "a1")]);
        let taken = held
            .check_allocation(&c, &node, &allocation("a1"))
            .unwrap_err();
        assert!(taken.contains("allocated to another claim"), "{taken}");
        assert_eq!(held.check_allocation(&c, &node, &allocation("a0")), Ok(()));
        let two: k::AllocationResult = serde_json::from_value(json!({"devices": {"results": [
            {"request": "r", "driver": "d", "pool": "node-0", "device": "a0"},
            {"request": "r", "driver": "d", "pool": "node-0", "device": "a1"}
        ]}}))
        .unwrap();
        let extra = free.check_allocation(&c, &node, &two).unwrap_err();
        assert!(extra.contains("needs 1 of the devices"), "{extra}");
    }
}
