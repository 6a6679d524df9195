//! Dynamic Resource Allocation (kube v1.37.2's DynamicResources plugin and the structured
//! allocator of `k8s.io/dynamic-resource-allocation`):
//!
//! - [`plugin`]: the DynamicResources plugin (its module doc states the protocol);
//! - [`pod_group_claims`]: claims shared by a pod group (DRAWorkloadResourceClaims) and the
//!   plugin's PodGroupPostFilter;
//! - [`pools`]: the resource pools a node can allocate from;
//! - [`allocator`]: the structured allocator's search (stable variant), with device
//!   selectors behind [`allocator::SelectorEval`];
//! - [`capacity`]: consumable capacity's arithmetic (shares of a device);
//! - [`compat_groups`]: compatibility groups' running intersection;
//! - [`cel`]: the selectors in CEL (kube's DRA environment; each expression compiled once);
//! - [`cel_columns`]: the plain selectors evaluated over a slice's attribute columns;
//! - [`cel_cost`]: the worst-case cost kube's API server limits a stored selector to;
//! - [`node_memo`]: the allocator's answers kept per node between cycles;
//! - [`state`]: the plugin's cycle state, and what a pod-group cycle's members share;
//! - [`standalone`]: the allocator outside a cycle, for harnesses (`allocResourceClaims`).

pub(crate) mod allocator;
pub(crate) mod capacity;
pub(crate) mod cel;
pub(crate) mod cel_columns;
pub(crate) mod cel_cost;
pub(crate) mod compat_groups;
pub(crate) mod extended;
pub(crate) mod extended_scoring;
pub(crate) mod node_memo;
pub(crate) mod plugin;
pub(crate) mod pod_group_claims;
pub(crate) mod pools;
pub(crate) mod standalone;
pub(crate) mod state;

#[cfg(test)]
mod allocator_capacity_tests;
#[cfg(test)]
mod allocator_groups_tests;
#[cfg(test)]
mod allocator_order_prop;
#[cfg(test)]
mod allocator_tests;
#[cfg(test)]
mod cel_columns_prop;
#[cfg(test)]
mod test_devices;

/// The allocator's feature switches (kube's `structured.Features`), from the gates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct AllocatorFeatures {
    pub(crate) admin_access: bool,
    pub(crate) prioritized_list: bool,
    pub(crate) partitionable_devices: bool,
    pub(crate) device_taints: bool,
    /// DRAListTypeAttributes: attributes are sets (kube's experimental allocator).
    pub(crate) list_type_attributes: bool,
    /// DRAConsumableCapacity: devices allowing several allocations are shared, and requests
    /// consume their capacities ([`capacity`]).
    pub(crate) consumable_capacity: bool,
    /// DRAFractionalCapacityRange: request policies' ranges round in thousandths.
    pub(crate) fractional_capacity_range: bool,
    /// DRADeviceCompatibilityGroups: devices on one counter set must share a group
    /// ([`compat_groups`]); off, slices declaring groups are ignored.
    pub(crate) compatibility_groups: bool,
}

impl AllocatorFeatures {
    pub(crate) fn from_gates(f: &crate::features::Features) -> AllocatorFeatures {
        AllocatorFeatures {
            admin_access: f.dra_admin_access,
            prioritized_list: f.dra_prioritized_list,
            partitionable_devices: f.dra_partitionable_devices,
            device_taints: f.dra_device_taints,
            list_type_attributes: f.dra_list_type_attributes,
            consumable_capacity: f.dra_consumable_capacity,
            fractional_capacity_range: f.dra_fractional_capacity_range,
            compatibility_groups: f.dra_device_compatibility_groups,
        }
    }
}
