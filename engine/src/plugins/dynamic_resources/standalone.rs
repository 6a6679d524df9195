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
use crate::api::dra::{self, DeviceClass, ResourceSlice};
use crate::features::Features;
use crate::framework::dra_manager::AllocatedDevices;
use ahash::AHashMap;
use k8s_openapi::api::resource::v1 as k;
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
    /// The classes, the slices (sorted by name, as the scheduler reads them) and the claims
    /// already allocated, whose devices are taken. An object that does not convert is an
    /// error naming it.
    pub fn new(
        classes: &[Arc<k::DeviceClass>],
        slices: &[Arc<k::ResourceSlice>],
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
            features: AllocatorFeatures {
                admin_access: features.dra_admin_access,
                prioritized_list: features.dra_prioritized_list,
                partitionable_devices: features.dra_partitionable_devices,
                device_taints: features.dra_device_taints,
            },
            cel: CelSelectors::new(),
        };
        for c in classes {
            let v = dra::device_class(c).map_err(|e| named("DeviceClass", &c.metadata.name, e))?;
            out.classes.insert(v.name.clone(), Arc::new(v));
        }
        for s in slices {
            let v =
                dra::resource_slice(s).map_err(|e| named("ResourceSlice", &s.metadata.name, e))?;
            out.slices.push(Arc::new(v));
        }
        out.slices.sort_by(|a, b| a.name.cmp(&b.name));
        for c in claims {
            out.hold(c)?;
        }
        Ok(out)
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
            if !d.admin_access {
                self.allocated.insert(d.device);
            }
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
        let classes = |n: &str| self.classes.get(n).cloned();
        let a = Allocator {
            features: self.features,
            allocated: &self.allocated,
            classes: &classes,
            slices: &self.slices,
            all_slices: &self.slices,
            selectors: &self.cel,
        };
        let result = match a.allocate(node, &[&v]) {
            Ok(Some(mut r)) if r.len() == 1 => r.pop().expect("one"),
            Ok(_) | Err(AllocError::OnNode(_)) => return Ok(None),
            Err(AllocError::Fatal(e)) => return Err(e),
        };
        for d in &result.devices {
            if !d.admin_access {
                self.allocated.insert(d.device);
            }
        }
        Ok(Some(dra::allocation_to_api(&result)))
    }
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
