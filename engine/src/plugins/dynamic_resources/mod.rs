//! Dynamic Resource Allocation (kube v1.37.2's DynamicResources plugin and the structured
//! allocator of `k8s.io/dynamic-resource-allocation`). Issue 34 builds it up in steps; so far:
//!
//! - [`pools`]: the resource pools a node can allocate from;
//! - [`allocator`]: the structured allocator's search (stable variant), with device
//!   selectors behind [`allocator::SelectorEval`];
//! - [`cel`]: the selectors in CEL (kube's DRA environment; each expression compiled once).
//!
//! Nothing registers the plugin yet: pods with resource claims are still refused at the
//! boundary (`api::convert`), so no workload changes.

// The allocator is reached from its tests only until the plugin that calls it lands.
#![cfg_attr(
    not(test),
    allow(
        dead_code,
        reason = "the DynamicResources plugin that calls it is the next step"
    )
)]

pub(crate) mod allocator;
pub(crate) mod cel;
pub(crate) mod pools;

#[cfg(test)]
mod allocator_tests;

/// The allocator's feature switches (kube's `structured.Features`), from the gates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct AllocatorFeatures {
    pub(crate) admin_access: bool,
    pub(crate) prioritized_list: bool,
    pub(crate) partitionable_devices: bool,
    pub(crate) device_taints: bool,
}
