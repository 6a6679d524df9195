//! Devices and slices for the selector tests (`cel.rs`, `cel_columns.rs`,
//! `cel_columns_prop.rs`).

use crate::api::dra::{AttributeValue, Device, ResourceSlice};
use crate::api::{Quantity, Sym};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A slice of `driver` holding `devices`, on no node.
pub(super) fn slice_of(driver: &str, devices: Vec<Device>) -> ResourceSlice {
    ResourceSlice {
        name: "s".into(),
        driver: Sym::new(driver),
        pool: "p".into(),
        pool_sym: Sym::new("p"),
        pool_generation: 1,
        pool_slice_count: 1,
        nodes: crate::api::dra::NodeSelection::AllNodes,
        draws_counters: false,
        uses_compatibility_groups: false,
        devices,
        overlaps: Default::default(),
        columns: Default::default(),
        shared_counters: BTreeMap::new(),
    }
}

pub(super) fn device(
    driver: &str,
    attributes: &[(&str, AttributeValue)],
    capacity: &[(&str, &str)],
) -> Device {
    let qualify = |n: &str| -> Arc<str> {
        if n.contains('/') {
            n.into()
        } else {
            format!("{driver}/{n}").into()
        }
    };
    Device {
        name: "d".into(),
        name_sym: Sym::new("d"),
        attributes: attributes
            .iter()
            .map(|(n, v)| (qualify(n), v.clone()))
            .collect(),
        list_index: BTreeMap::new(),
        capacity: capacity
            .iter()
            .map(|(n, q)| (qualify(n), Quantity::parse(q).unwrap()))
            .collect::<BTreeMap<_, _>>(),
        consumes_counters: Vec::new(),
        taints: Vec::new(),
        allow_multiple_allocations: false,
        capacities: Default::default(),
        cel_value: Default::default(),
        nodes: None,
    }
}
