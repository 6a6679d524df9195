//! The structured allocator's search on small clusters. Cases follow kube v1.37.2's table
//! (kubernetes/kubernetes
//! staging/src/k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting/allocator_testing.go:
//! "simple", "small-and-large", "all-devices-*", "prioritized-list-*", "with-constraint",
//! "tainted-*", "partitionable-devices-*", "missing-class"), written with this crate's types.
//!
//! Device selectors here are not CEL: [`Sel`] reads `true`, `false`, `attr <name> = <v>`
//! (a string attribute's value) and `fails-on <device>` (an evaluation error there), so that these tests exercise the search alone; the CEL
//! selectors get their own tests with the evaluator.

use super::AllocatorFeatures;
use super::allocator::{AllocError, Allocator, SelectorEval};
use crate::api::dra::*;
use crate::api::labels::{NodeSelector, NodeSelectorTerm, Operator, Requirement};
use crate::api::{Labels, Node, Quantity, Sym};
use crate::framework::dra_manager::AllocatedDevices;
use ahash::AHashSet;
use std::collections::BTreeMap;
use std::sync::Arc;

pub(super) struct Sel;

impl SelectorEval for Sel {
    fn matches(
        &self,
        expression: &str,
        slice: &ResourceSlice,
        index: usize,
    ) -> Result<bool, String> {
        let device = &slice.devices[index];
        match expression.split_whitespace().collect::<Vec<_>>().as_slice() {
            ["true"] => Ok(true),
            ["false"] => Ok(false),
            ["attr", name, "=", v] => Ok(matches!(
                device.attributes.get(*name),
                Some(AttributeValue::String(s)) if &**s == *v
            )),
            ["fails-on", name] if &*device.name == *name => Err(format!("fails on {name}")),
            ["fails-on", _] => Ok(true),
            _ => Err(format!("no such test selector {expression:?}")),
        }
    }
}

pub(super) const DRIVER: &str = "driver.example.com";

pub(super) fn node(name: &str) -> Node {
    let mut n = Node::named(name);
    n.labels = Arc::new(Labels::default());
    n
}

pub(super) fn device(name: &str, attrs: &[(&str, &str)]) -> Device {
    Device {
        name: name.into(),
        name_sym: Sym::new(name),
        attributes: attrs
            .iter()
            .map(|(k, v)| {
                (
                    Arc::from(format!("{DRIVER}/{k}")),
                    AttributeValue::String((*v).into()),
                )
            })
            .collect(),
        list_index: BTreeMap::new(),
        capacity: BTreeMap::new(),
        consumes_counters: Vec::new(),
        taints: Vec::new(),
        allow_multiple_allocations: false,
        capacities: Default::default(),
        cel_value: Default::default(),
        nodes: None,
    }
}

pub(super) fn slice(
    name: &str,
    node: &str,
    generation: i64,
    devices: Vec<Device>,
) -> Arc<ResourceSlice> {
    Arc::new(ResourceSlice {
        name: name.into(),
        driver: Sym::new(DRIVER),
        pool: node.into(),
        pool_sym: Sym::new(node),
        pool_generation: generation,
        pool_slice_count: 1,
        nodes: NodeSelection::Node(Sym::new(node)),
        draws_counters: devices.iter().any(|d| !d.consumes_counters.is_empty()),
        uses_compatibility_groups: (devices.iter().flat_map(|d| &d.consumes_counters))
            .any(|c| !c.compatibility_groups.is_empty()),
        devices,
        overlaps: Default::default(),
        columns: Default::default(),
        shared_counters: BTreeMap::new(),
    })
}

pub(super) fn class(name: &str, selector: &str) -> Arc<DeviceClass> {
    Arc::new(DeviceClass {
        name: name.into(),
        selectors: vec![selector.into()],
        extended_resource_name: None,
        created: 0,
    })
}

pub(super) fn alt(name: &str, class: &str, mode: AllocationMode) -> RequestAlternative {
    RequestAlternative {
        name: name.into(),
        device_class_name: class.into(),
        selectors: Vec::new(),
        mode,
        admin_access: false,
        tolerations: Vec::new(),
        capacity: BTreeMap::new(),
    }
}

pub(super) fn request(name: &str, class: &str, count: i64) -> DeviceRequest {
    DeviceRequest {
        name: name.into(),
        alternatives: vec![alt(name, class, AllocationMode::ExactCount(count))],
        prioritized: false,
    }
}

pub(super) fn claim(name: &str, requests: Vec<DeviceRequest>) -> ResourceClaim {
    ResourceClaim {
        namespace: Sym::new("ns"),
        name: name.into(),
        uid: name.into(),
        requests,
        constraints: Vec::new(),
        allocation: None,
        reserved_for: Vec::new(),
        reserved_for_groups: Vec::new(),
        deleting: false,
        controller_uid: None,
        controller_pod_group: None,
        extended: false,
    }
}

pub(super) struct Cluster {
    pub(super) slices: Vec<Arc<ResourceSlice>>,
    pub(super) classes: Vec<Arc<DeviceClass>>,
    pub(super) allocated: AHashSet<DeviceId>,
    /// Allocated shares of shared devices (DRAConsumableCapacity).
    pub(super) shares: Vec<AllocatedDevice>,
    pub(super) features: AllocatorFeatures,
}

impl Cluster {
    pub(super) fn new(slices: Vec<Arc<ResourceSlice>>) -> Cluster {
        Cluster {
            slices,
            classes: vec![class("gpu", "true")],
            allocated: AHashSet::new(),
            shares: Vec::new(),
            features: AllocatorFeatures {
                admin_access: true,
                prioritized_list: true,
                partitionable_devices: true,
                device_taints: true,
                list_type_attributes: false,
                consumable_capacity: true,
                fractional_capacity_range: true,
                compatibility_groups: true,
            },
        }
    }

    pub(super) fn allocate(
        &self,
        on: &str,
        claims: &[&ResourceClaim],
    ) -> Result<Option<Vec<Allocation>>, String> {
        let classes = |n: &str| self.classes.iter().find(|c| &*c.name == n).cloned();
        let mut allocated = AllocatedDevices::from_set(self.allocated.clone());
        for d in &self.shares {
            allocated.insert(d, self.features.consumable_capacity);
        }
        let a = Allocator {
            features: self.features,
            allocated: &allocated,
            classes: &classes,
            slices: &self.slices,
            all_slices: super::pools::AllSlices::List(&self.slices),
            remote_pools: &[],
            selectors: &Sel,
            only: None,
            pools: None,
        };
        a.allocate(&node(on), claims).map_err(|e| e.to_string())
    }
}

/// The devices of each allocation, as `request:device`.
pub(super) fn picked(r: &[Allocation]) -> Vec<Vec<String>> {
    r.iter()
        .map(|a| {
            a.devices
                .iter()
                .map(|d| format!("{}:{}", d.request, d.device.device))
                .collect()
        })
        .collect()
}

#[test]
fn simple_takes_the_first_device_and_pins_the_claim_to_the_node() {
    let c = Cluster::new(vec![slice(
        "s0",
        "node-0",
        1,
        vec![device("d0", &[]), device("d1", &[])],
    )]);
    let cl = claim("c", vec![request("r", "gpu", 1)]);
    let r = c.allocate("node-0", &[&cl]).unwrap().expect("a solution");
    assert_eq!(picked(&r), [["r:d0"]]);
    let sel = r[0]
        .node_selector
        .as_ref()
        .expect("local devices pin the node");
    assert_eq!(sel.terms[0].match_fields[0].key, Sym::new("metadata.name"));
    assert_eq!(sel.terms[0].match_fields[0].values, [Sym::new("node-0")]);
    // Another node reaches no slice.
    assert_eq!(c.allocate("node-1", &[&cl]).unwrap(), None);
}

#[test]
fn devices_in_use_or_too_few_leave_no_solution() {
    let mut c = Cluster::new(vec![slice(
        "s0",
        "node-0",
        1,
        vec![device("d0", &[]), device("d1", &[])],
    )]);
    let three = claim("c", vec![request("r", "gpu", 3)]);
    assert_eq!(c.allocate("node-0", &[&three]).unwrap(), None);
    c.allocated.insert(DeviceId {
        driver: Sym::new(DRIVER),
        pool: Sym::new("node-0"),
        device: Sym::new("d0"),
    });
    let one = claim("c", vec![request("r", "gpu", 1)]);
    let r = c.allocate("node-0", &[&one]).unwrap().unwrap();
    assert_eq!(picked(&r), [["r:d1"]]);
    // Two claims of one device each share nothing: the second gets none.
    let two = claim("c2", vec![request("r", "gpu", 1)]);
    assert_eq!(c.allocate("node-0", &[&one, &two]).unwrap(), None);
}

#[test]
fn a_missing_class_is_an_error() {
    let c = Cluster::new(vec![slice("s0", "node-0", 1, vec![device("d0", &[])])]);
    let cl = claim("c", vec![request("r", "tpu", 1)]);
    let e = c.allocate("node-0", &[&cl]).unwrap_err();
    assert!(e.contains("could not retrieve device class tpu"), "{e}");
}

#[test]
fn selectors_of_class_and_request_both_apply() {
    let mut c = Cluster::new(vec![slice(
        "s0",
        "node-0",
        1,
        vec![
            device("d0", &[("model", "a")]),
            device("d1", &[("model", "b")]),
            device("d2", &[("model", "b")]),
        ],
    )]);
    c.classes
        .push(class("b-only", &format!("attr {DRIVER}/model = b")));
    let mut req = request("r", "b-only", 1);
    req.alternatives[0].selectors = vec![Arc::from("true")];
    let cl = claim("c", vec![req]);
    let r = c.allocate("node-0", &[&cl]).unwrap().unwrap();
    assert_eq!(picked(&r), [["r:d1"]]);
}

#[test]
fn all_devices_takes_every_selectable_one_and_refuses_an_incomplete_pool() {
    let c = Cluster::new(vec![slice(
        "s0",
        "node-0",
        1,
        vec![device("d0", &[]), device("d1", &[])],
    )]);
    let all = claim(
        "c",
        vec![DeviceRequest {
            name: "r".into(),
            alternatives: vec![alt("r", "gpu", AllocationMode::All)],
            prioritized: false,
        }],
    );
    let r = c.allocate("node-0", &[&all]).unwrap().unwrap();
    assert_eq!(picked(&r), [["r:d0", "r:d1"]]);
    let mut incomplete = (*slice("s0", "node-0", 1, vec![device("d0", &[])])).clone();
    incomplete.pool_slice_count = 2;
    let c = Cluster::new(vec![Arc::new(incomplete)]);
    let e = c.allocate("node-0", &[&all]).unwrap_err();
    assert!(e.contains("is currently being updated"), "{e}");
}

#[test]
fn the_newest_generation_of_a_pool_counts() {
    let c = Cluster::new(vec![
        slice("old", "node-0", 1, vec![device("d-old", &[])]),
        slice("new", "node-0", 2, vec![device("d-new", &[])]),
    ]);
    let cl = claim("c", vec![request("r", "gpu", 1)]);
    let r = c.allocate("node-0", &[&cl]).unwrap().unwrap();
    assert_eq!(picked(&r), [["r:d-new"]]);
}

#[test]
fn a_prioritized_list_falls_back_to_the_next_alternative() {
    let c = Cluster::new(vec![slice(
        "s0",
        "node-0",
        1,
        vec![device("d0", &[]), device("d1", &[])],
    )]);
    let req = DeviceRequest {
        name: "r".into(),
        alternatives: vec![
            alt("r/big", "gpu", AllocationMode::ExactCount(3)),
            alt("r/small", "gpu", AllocationMode::ExactCount(1)),
        ],
        prioritized: true,
    };
    let cl = claim("c", vec![req]);
    let r = c.allocate("node-0", &[&cl]).unwrap().unwrap();
    assert_eq!(picked(&r), [["r/small:d0"]]);
}

#[test]
fn match_attribute_backtracks_to_devices_that_share_the_value() {
    let c = Cluster::new(vec![slice(
        "s0",
        "node-0",
        1,
        vec![
            device("d0", &[("numa", "0")]),
            device("d1", &[("numa", "1")]),
            device("d2", &[("numa", "1")]),
            device("d3", &[("numa", "1")]),
            device("d4", &[]),
        ],
    )]);
    let mut cl = claim("c", vec![request("a", "gpu", 1), request("b", "gpu", 2)]);
    cl.constraints.push(DeviceConstraint {
        requests: Vec::new(),
        match_attribute: Some(format!("{DRIVER}/numa").into()),
        distinct_attribute: None,
    });
    // a on d0 leaves b no second device of NUMA node 0: the search goes back to a.
    let r = c.allocate("node-0", &[&cl]).unwrap().unwrap();
    assert_eq!(picked(&r), [["a:d1", "b:d2", "b:d3"]]);
    // A constraint naming only b leaves a free.
    let mut only_b = cl.clone();
    only_b.constraints[0].requests = vec![Arc::from("b")];
    let r = c.allocate("node-0", &[&only_b]).unwrap().unwrap();
    assert_eq!(picked(&r), [["a:d0", "b:d1", "b:d2"]]);
}

#[test]
fn a_taint_blocks_a_device_unless_the_request_tolerates_it() {
    let mut tainted = device("d0", &[]);
    tainted.taints.push(DeviceTaint {
        key: "broken".into(),
        value: "".into(),
        effect: "NoSchedule".into(),
    });
    let mut harmless = device("d1", &[]);
    harmless.taints.push(DeviceTaint {
        key: "note".into(),
        value: "".into(),
        effect: "None".into(),
    });
    let c = Cluster::new(vec![slice("s0", "node-0", 1, vec![tainted, harmless])]);
    let cl = claim("c", vec![request("r", "gpu", 1)]);
    let r = c.allocate("node-0", &[&cl]).unwrap().unwrap();
    assert_eq!(picked(&r), [["r:d1"]], "the None effect does not block");
    let mut tolerant = claim("c", vec![request("r", "gpu", 2)]);
    tolerant.requests[0].alternatives[0]
        .tolerations
        .push(DeviceToleration {
            key: "broken".into(),
            exists: true,
            value: "".into(),
            effect: "".into(),
        });
    let r = c.allocate("node-0", &[&tolerant]).unwrap().unwrap();
    assert_eq!(picked(&r), [["r:d0", "r:d1"]]);
    let untolerated = claim("c", vec![request("r", "gpu", 2)]);
    assert_eq!(c.allocate("node-0", &[&untolerated]).unwrap(), None);
}

#[test]
fn partitions_share_their_pools_counters() {
    let q = |s: &str| Quantity::parse(s).unwrap();
    let part = |name: &str| {
        let mut d = device(name, &[]);
        d.consumes_counters.push(CounterConsumption {
            counter_set: "gpu-0".into(),
            counters: BTreeMap::from([(Arc::from("memory"), q("6Gi"))]),
            compatibility_groups: Vec::new(),
        });
        d
    };
    let mut devices = (*slice("s0", "node-0", 1, vec![part("p0"), part("p1")])).clone();
    devices.pool_slice_count = 2;
    let counters = ResourceSlice {
        name: "counters".into(),
        devices: Vec::new(),
        shared_counters: BTreeMap::from([(
            Arc::from("gpu-0"),
            BTreeMap::from([(Arc::from("memory"), q("10Gi"))]),
        )]),
        ..devices.clone()
    };
    let mut c = Cluster::new(vec![Arc::new(devices), Arc::new(counters)]);
    let one = claim("c", vec![request("r", "gpu", 1)]);
    let r = c.allocate("node-0", &[&one]).unwrap().unwrap();
    assert_eq!(picked(&r), [["r:p0"]]);
    // 6Gi + 6Gi exceeds the 10Gi the two partitions share.
    let two = claim("c", vec![request("r", "gpu", 2)]);
    assert_eq!(c.allocate("node-0", &[&two]).unwrap(), None);
    // An allocated partition's counters are gone for the others.
    c.allocated.insert(id("node-0", "p0"));
    assert_eq!(c.allocate("node-0", &[&one]).unwrap(), None);
    // Without the feature, devices that consume counters are never taken.
    c.allocated.clear();
    c.features.partitionable_devices = false;
    assert_eq!(c.allocate("node-0", &[&one]).unwrap(), None);
}

#[test]
fn a_pool_with_a_device_named_twice_is_invalid_and_fails_the_node() {
    let c = Cluster::new(vec![
        slice("s0", "node-0", 1, vec![device("d0", &[])]),
        Arc::new(ResourceSlice {
            name: "s1".into(),
            ..(*slice("s1", "node-0", 1, vec![device("d0", &[])])).clone()
        }),
    ]);
    // Two slices of one pool that says it has one: they cannot both be complete, so make
    // the pool two slices long.
    let slices: Vec<Arc<ResourceSlice>> = c
        .slices
        .iter()
        .map(|s| {
            Arc::new(ResourceSlice {
                pool_slice_count: 2,
                ..(**s).clone()
            })
        })
        .collect();
    let c = Cluster::new(slices);
    let cl = claim("c", vec![request("r", "gpu", 1)]);
    let e = c.allocate("node-0", &[&cl]).unwrap_err();
    assert!(e.contains("invalid resource pools"), "{e}");
}

/// The allocator with the real CEL selectors: a class selecting by driver and a claim
/// selector reading an attribute (the shape of kube's `dra/` templates).
#[test]
fn cel_selectors_choose_the_devices() {
    let c = Cluster::new(vec![slice(
        "s0",
        "node-0",
        1,
        vec![
            device("d0", &[("model", "a")]),
            device("d1", &[("model", "b")]),
        ],
    )]);
    let classes = [class("cel", &format!("device.driver == \"{DRIVER}\""))];
    let lookup = |n: &str| classes.iter().find(|c| &*c.name == n).cloned();
    let cel = super::cel::CelSelectors::new();
    let a = Allocator {
        features: c.features,
        allocated: &AllocatedDevices::from_set(c.allocated.clone()),
        classes: &lookup,
        slices: &c.slices,
        all_slices: super::pools::AllSlices::List(&c.slices),
        remote_pools: &[],
        selectors: &cel,
        only: None,
        pools: None,
    };
    let mut req = request("r", "cel", 1);
    req.alternatives[0].selectors =
        vec![format!("device.attributes[\"{DRIVER}\"].model == \"b\"").into()];
    let cl = claim("c", vec![req]);
    let r = a.allocate(&node("node-0"), &[&cl]).unwrap().unwrap();
    assert_eq!(picked(&r), [["r:d1"]]);
    // A selector reading an attribute the device lacks fails the allocation, as in kube.
    let mut bad = request("r", "cel", 1);
    bad.alternatives[0].selectors =
        vec![format!("device.attributes[\"{DRIVER}\"].vendor == \"x\"").into()];
    let e = a
        .allocate(&node("node-0"), &[&claim("c", vec![bad])])
        .unwrap_err();
    assert!(matches!(e, AllocError::Fatal(_)), "{e}");
    let e = e.to_string();
    assert!(e.contains("no such key: vendor"), "{e}");
}

fn admin(mut c: ResourceClaim) -> ResourceClaim {
    for r in &mut c.requests {
        for a in &mut r.alternatives {
            a.admin_access = true;
        }
    }
    c
}

pub(super) fn id(pool: &str, device: &str) -> DeviceId {
    DeviceId {
        driver: Sym::new(DRIVER),
        pool: Sym::new(pool),
        device: Sym::new(device),
    }
}

/// kube's "all-devices-some-allocated", "all-devices-some-allocated-admin-access",
/// "count-devices-some-allocated-admin-access", "separate-claims-share-device-admin-access"
/// and "admin-access-claims-device-allocating-for-non-admin-access".
#[test]
fn admin_access_ignores_other_claims_devices() {
    let mut c = Cluster::new(vec![slice(
        "s0",
        "node-0",
        1,
        vec![device("d0", &[]), device("d1", &[])],
    )]);
    c.allocated.insert(id("node-0", "d0"));
    let all = |name: &str| DeviceRequest {
        name: name.into(),
        alternatives: vec![alt(name, "gpu", AllocationMode::All)],
        prioritized: false,
    };
    assert_eq!(
        c.allocate("node-0", &[&claim("c", vec![all("r")])])
            .unwrap(),
        None
    );
    let r = c
        .allocate("node-0", &[&admin(claim("c", vec![all("r")]))])
        .unwrap()
        .unwrap();
    assert_eq!(picked(&r), [["r:d0", "r:d1"]]);
    assert!(r[0].devices.iter().all(|d| d.admin_access));
    let r = c
        .allocate(
            "node-0",
            &[&admin(claim("c", vec![request("r", "gpu", 2)]))],
        )
        .unwrap()
        .unwrap();
    assert_eq!(picked(&r), [["r:d0", "r:d1"]]);
    c.allocated.clear();
    let (a, b) = (
        admin(claim("a", vec![request("r", "gpu", 1)])),
        admin(claim("b", vec![request("r", "gpu", 1)])),
    );
    let r = c.allocate("node-0", &[&a, &b]).unwrap().unwrap();
    assert_eq!(
        picked(&r),
        [["r:d0"], ["r:d0"]],
        "admin claims share a device"
    );
    let plain = claim("p", vec![request("r", "gpu", 1)]);
    let r = c.allocate("node-0", &[&plain, &b]).unwrap().unwrap();
    assert_eq!(picked(&r), [["r:d0"], ["r:d0"]]);
    assert_eq!(
        (r[0].devices[0].admin_access, r[1].devices[0].admin_access),
        (false, true)
    );
    // Without the feature, asking for admin access is an error.
    c.features.admin_access = false;
    let e = c.allocate("node-0", &[&b]).unwrap_err();
    assert!(
        e.contains("admin access is requested, but the feature is disabled"),
        "{e}"
    );
}

/// kube's "network-attached-device", "unsuccessful-allocation-network-attached-device",
/// "many-network-attached-devices" and "local-and-network-attached-devices": the claim's node
/// selector is the union of its devices' slices' selectors, or the one node of a local device.
#[test]
fn network_attached_devices_give_the_union_of_their_selectors() {
    let region = |v: &str| NodeSelector {
        terms: vec![NodeSelectorTerm {
            match_expressions: vec![Requirement {
                key: Sym::new("region"),
                op: Operator::In,
                values: vec![Sym::new(v)],
                int_value: 0,
            }],
            match_fields: Vec::new(),
        }],
    };
    let net = |pool: &str, nodes: NodeSelection| {
        Arc::new(ResourceSlice {
            pool: pool.into(),
            pool_sym: Sym::new(pool),
            nodes,
            ..(*slice("s", "unused", 1, vec![device("d0", &[])])).clone()
        })
    };
    let mut n1 = Node::named("node-1");
    n1.labels = Arc::new(Labels::from_pairs([("region", "region-1")]));
    let mut n2 = Node::named("node-2");
    n2.labels = Arc::new(Labels::from_pairs([("region", "region-2")]));
    let c = Cluster::new(vec![
        net("p1", NodeSelection::Selector(region("region-1"))),
        net("p2", NodeSelection::AllNodes),
    ]);
    let classes = |n: &str| c.classes.iter().find(|x| &*x.name == n).cloned();
    let a = Allocator {
        features: c.features,
        allocated: &AllocatedDevices::from_set(c.allocated.clone()),
        classes: &classes,
        slices: &c.slices,
        all_slices: super::pools::AllSlices::List(&c.slices),
        remote_pools: &[],
        selectors: &Sel,
        only: None,
        pools: None,
    };
    let two = claim("c", vec![request("r", "gpu", 2)]);
    let r = a.allocate(&n1, &[&two]).unwrap().unwrap();
    assert_eq!(r[0].node_selector, Some(region("region-1")));
    // node-2 is outside the region: one device (for all nodes) is not two.
    assert_eq!(a.allocate(&n2, &[&two]).unwrap(), None);
    let one = claim("c", vec![request("r", "gpu", 1)]);
    let r = a.allocate(&n2, &[&one]).unwrap().unwrap();
    assert_eq!(
        r[0].node_selector, None,
        "a device for all nodes restricts nothing"
    );
    // Once a device is local to a node, the claim is for that node.
    let mut slices = c.slices.clone();
    slices.push(net("p3", NodeSelection::Node(Sym::new("node-1"))));
    let b = Allocator {
        slices: &slices,
        all_slices: super::pools::AllSlices::List(&slices),
        remote_pools: &[],
        ..a
    };
    let three = claim("c", vec![request("r", "gpu", 3)]);
    let r = b.allocate(&n1, &[&three]).unwrap().unwrap();
    let sel = r[0].node_selector.as_ref().unwrap();
    assert_eq!(sel.terms[0].match_fields[0].values, [Sym::new("node-1")]);
}

/// kube's "with-constraint-not-matching-int-attribute-all-devices": in `All` mode a device
/// that breaks a constraint is an error, not a dead end.
#[test]
fn all_devices_that_break_a_constraint_are_an_error() {
    let num = |n: i64| {
        let mut d = device(&format!("d{n}"), &[]);
        d.attributes
            .insert(format!("{DRIVER}/numa").into(), AttributeValue::Int(n));
        d
    };
    let c = Cluster::new(vec![slice("s0", "node-0", 1, vec![num(1), num(2)])]);
    let mut cl = claim(
        "claim-0",
        vec![DeviceRequest {
            name: "req-0".into(),
            alternatives: vec![alt("req-0", "gpu", AllocationMode::All)],
            prioritized: false,
        }],
    );
    cl.constraints.push(DeviceConstraint {
        requests: Vec::new(),
        match_attribute: Some(format!("{DRIVER}/numa").into()),
        distinct_attribute: None,
    });
    let e = c.allocate("node-0", &[&cl]).unwrap_err();
    assert!(
        e.contains("request req-0: cannot add device driver.example.com/node-0/d2 because a claim constraint would not be satisfied"),
        "{e}"
    );
}

/// A device with typed attributes (lists too), indexed as conversion indexes it.
fn typed_device(name: &str, attrs: Vec<(&str, AttributeValue)>) -> Device {
    let mut d = device(name, &[]);
    d.attributes = attrs
        .into_iter()
        .map(|(k, v)| (Arc::from(format!("{DRIVER}/{k}")), v))
        .collect();
    d.index_lists();
    d
}

fn strs(v: &[&str]) -> AttributeValue {
    AttributeValue::Strings(v.iter().map(|s| Arc::from(*s)).collect())
}

/// Cases of kube's table for DRAListTypeAttributes (kubernetes/kubernetes
/// staging/src/k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting/allocator_testing.go:
/// "list-attributes-match-constaint-*", "list-attributes-match-constraint-backtrack-needs-intersection-restore",
/// "list-attributes-disabled-match-constraint-with-lists"): one claim, one request of
/// `count` devices, `matchAttribute` on `attr`.
/// A matchAttribute case: name, attribute, count, the devices' attributes, the gate, and
/// the devices picked (`None`: no allocation).
type MatchCase = (
    &'static str,
    &'static str,
    i64,
    Vec<Vec<(&'static str, AttributeValue)>>,
    bool,
    Option<&'static [&'static str]>,
);

fn check_match_cases(cases: Vec<MatchCase>) {
    for (name, attr, count, devices, gate, want) in cases {
        let devices = devices
            .into_iter()
            .enumerate()
            .map(|(i, a)| typed_device(&format!("d{i}"), a))
            .collect();
        let mut c = Cluster::new(vec![slice("s0", "node-0", 1, devices)]);
        c.features.list_type_attributes = gate;
        let mut cl = claim("c", vec![request("r", "gpu", count)]);
        cl.constraints.push(DeviceConstraint {
            requests: Vec::new(),
            match_attribute: Some(format!("{DRIVER}/{attr}").into()),
            distinct_attribute: None,
        });
        let got = c.allocate("node-0", &[&cl]).unwrap();
        let got = got.map(|r| picked(&r).concat());
        let want = want.map(|w| w.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(got, want, "{name}");
    }
}

fn string_list(v: &[&str]) -> Vec<(&'static str, AttributeValue)> {
    vec![("str", strs(v))]
}

#[test]
fn match_attribute_over_string_lists_needs_a_common_element() {
    use AttributeValue as V;
    let s = string_list;
    check_match_cases(vec![
        (
            "list-of-string-values-with-common-elements",
            "str",
            2,
            vec![
                s(&["value1", "value2", "value3"]),
                s(&["value2", "value3", "value4"]),
            ],
            true,
            Some(&["r:d0", "r:d1"]),
        ),
        (
            "list-of-string-values-with-partially-common-elements",
            "str",
            3,
            vec![
                s(&["value1", "value2"]),
                s(&["value2", "value3"]),
                s(&["value3", "value1"]),
            ],
            true,
            None,
        ),
        (
            "backtrack-needs-intersection-restore",
            "str",
            3,
            vec![
                s(&["value1", "value2"]),
                s(&["value1"]),
                s(&["value2"]),
                s(&["value2"]),
            ],
            true,
            Some(&["r:d0", "r:d2", "r:d3"]),
        ),
        (
            "list-of-string-values-without-common-elements",
            "str",
            2,
            vec![s(&["value1", "value2"]), s(&["value3", "value4"])],
            true,
            None,
        ),
        (
            "mixed-scalar-and-list-of-string-values-with-common-elements",
            "str",
            2,
            vec![
                vec![("str", V::String("value1".into()))],
                s(&["value1", "value2"]),
            ],
            true,
            Some(&["r:d0", "r:d1"]),
        ),
    ]);
}

/// Under a list-attribute matchAttribute, the search passes over the devices that share no
/// element with the first one unseen, but only where kube would see nothing there either:
/// a selector failing on such a device (d1) still ends the allocation with its error, as
/// kube's search evaluates d1's selectors before its constraint refuses it. Without the
/// failing selector, the same devices give d0 and d2.
#[test]
fn a_selector_failing_on_a_refused_device_still_ends_the_allocation() {
    let devices = [&["a", "b"][..], &["c"], &["b"]]
        .iter()
        .enumerate()
        .map(|(i, v)| typed_device(&format!("d{i}"), string_list(v)))
        .collect();
    let mut c = Cluster::new(vec![slice("s0", "node-0", 1, devices)]);
    c.features.list_type_attributes = true;
    let claim_with = |selector: &str| {
        let mut cl = claim("c", vec![request("r", "gpu", 2)]);
        cl.requests[0].alternatives[0].selectors = vec![selector.into()];
        cl.constraints.push(DeviceConstraint {
            requests: Vec::new(),
            match_attribute: Some(format!("{DRIVER}/str").into()),
            distinct_attribute: None,
        });
        cl
    };
    let err = c
        .allocate("node-0", &[&claim_with("fails-on d1")])
        .unwrap_err();
    assert!(err.contains("fails on d1"), "{err}");
    let got = c.allocate("node-0", &[&claim_with("true")]).unwrap();
    assert_eq!(
        got.map(|r| picked(&r).concat()),
        Some(vec!["r:d0".to_string(), "r:d2".to_string()])
    );
}

#[test]
fn match_attribute_over_typed_lists_needs_a_common_element() {
    use AttributeValue as V;
    let s = string_list;
    check_match_cases(vec![
        (
            "list-of-int-values-with-common-elements",
            "numa",
            2,
            vec![
                vec![("numa", V::Ints(vec![0, 1, 2].into()))],
                vec![("numa", V::Ints(vec![1, 2, 3].into()))],
            ],
            true,
            Some(&["r:d0", "r:d1"]),
        ),
        (
            "list-of-bool-values-with-common-elements",
            "b",
            2,
            vec![
                vec![("b", V::Bools(vec![true, false].into()))],
                vec![("b", V::Bool(false))],
            ],
            true,
            Some(&["r:d0", "r:d1"]),
        ),
        (
            "list-of-version-values-with-common-elements",
            "v",
            2,
            vec![
                vec![(
                    "v",
                    V::Versions(vec![Arc::from("1.0.0"), Arc::from("2.0.0")].into()),
                )],
                vec![("v", V::Version("2.0.0".into()))],
            ],
            true,
            Some(&["r:d0", "r:d1"]),
        ),
        (
            "strings-and-ints-never-meet",
            "x",
            2,
            vec![
                vec![("x", strs(&["1"]))],
                vec![("x", V::Ints(vec![1].into()))],
            ],
            true,
            None,
        ),
        (
            "disabled-match-constraint-with-lists",
            "str",
            2,
            vec![
                s(&["value1", "value2", "value3"]),
                s(&["value2", "value3", "value4"]),
            ],
            false,
            None,
        ),
    ]);
}

/// Cases of kube's table for `distinctAttribute` (kubernetes/kubernetes
/// staging/src/k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting/allocator_testing.go:
/// "distinct-constraint-single-request-*", "list-attributes-distinct-constraint-*"): the
/// devices' values differ, or under DRAListTypeAttributes their sets are pairwise disjoint.
#[test]
fn distinct_attribute_keeps_values_apart() {
    use AttributeValue as V;
    type Case = (
        &'static str,
        Vec<(&'static str, i64)>,
        Vec<V>,
        bool,
        Option<&'static [&'static str]>,
    );
    let one = |v: &str| V::String(v.into());
    let cases: Vec<Case> = vec![
        (
            "single-request-count-3-not-distinct",
            vec![("r", 3)],
            vec![one("value1"), one("value2"), one("value1")],
            false,
            None,
        ),
        (
            "single-request-count-3-all-distinct",
            vec![("r", 3)],
            vec![one("value1"), one("value2"), one("value3")],
            false,
            Some(&["r:d0", "r:d1", "r:d2"]),
        ),
        (
            "scalar-skips-a-repeated-value",
            vec![("r", 2)],
            vec![one("value1"), one("value1"), one("value2")],
            false,
            Some(&["r:d0", "r:d2"]),
        ),
        (
            "lists-are-never-distinct-without-the-gate",
            vec![("r", 2)],
            vec![strs(&["value1"]), strs(&["value2"])],
            false,
            None,
        ),
        (
            "list-of-string-values-all-distinct",
            vec![("r", 2)],
            vec![strs(&["value1", "value2"]), strs(&["value3", "value4"])],
            true,
            Some(&["r:d0", "r:d1"]),
        ),
        (
            "list-of-string-values-with-common-elements",
            vec![("r", 2)],
            vec![
                strs(&["value1", "value2", "value3"]),
                strs(&["value2", "value4", "value5"]),
            ],
            true,
            None,
        ),
        (
            "mixed-scalar-and-list-with-common-elements",
            vec![("r", 2)],
            vec![one("value2"), strs(&["value2", "value4"])],
            true,
            None,
        ),
        (
            "backtrack-needs-remove",
            vec![("r0", 1), ("r1", 1), ("r2", 1)],
            vec![
                strs(&["value1", "value2", "value3"]),
                strs(&["value3", "value4", "value5"]),
                strs(&["value1", "value2"]),
                strs(&["value3", "value4"]),
                strs(&["value5", "value6"]),
            ],
            true,
            Some(&["r0:d2", "r1:d3", "r2:d4"]),
        ),
    ];
    for (name, requests, values, gate, want) in cases {
        let devices = values
            .into_iter()
            .enumerate()
            .map(|(i, v)| typed_device(&format!("d{i}"), vec![("str", v)]))
            .collect();
        let mut c = Cluster::new(vec![slice("s0", "node-0", 1, devices)]);
        c.features.list_type_attributes = gate;
        let requests = requests
            .iter()
            .map(|(r, n)| request(r, "gpu", *n))
            .collect();
        let mut cl = claim("c", requests);
        cl.constraints.push(DeviceConstraint {
            requests: Vec::new(),
            match_attribute: None,
            distinct_attribute: Some(format!("{DRIVER}/str").into()),
        });
        let got = c.allocate("node-0", &[&cl]).unwrap();
        let got = got.map(|r| picked(&r).concat());
        let want = want.map(|w| w.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(got, want, "{name}");
    }
}

/// `pools::node_pools` keeps a node's pools per slice index and node object: the same object
/// gets the kept pools, a changed object (its labels decide which node selectors reach it)
/// gets them gathered afresh.
#[test]
fn a_nodes_kept_pools_follow_its_object() {
    use crate::framework::dra_manager::SliceIndex;
    let zone = |v: &str| NodeSelector {
        terms: vec![NodeSelectorTerm {
            match_expressions: vec![Requirement {
                key: Sym::new("zone"),
                op: Operator::In,
                values: vec![Sym::new(v)],
                int_value: 0,
            }],
            match_fields: Vec::new(),
        }],
    };
    let net = Arc::new(ResourceSlice {
        pool: "net".into(),
        pool_sym: Sym::new("net"),
        nodes: NodeSelection::Selector(zone("a")),
        ..(*slice("s", "unused", 1, vec![device("d0", &[])])).clone()
    });
    let mut index = SliceIndex {
        generation: 1,
        by_node: Default::default(),
        other: vec![net.clone()],
        counters: Default::default(),
        by_pool: Default::default(),
        memo: Default::default(),
        node_memo: Default::default(),
    };
    index
        .by_pool
        .insert((net.driver, net.pool.clone()), vec![net.clone()]);
    let features = Cluster::new(vec![]).features;
    let with_zone = |z: &str| {
        let mut n = Node::named("node-1");
        n.labels = Arc::new(Labels::from_pairs([("zone", z)]));
        Arc::new(n)
    };
    let in_a = with_zone("a");
    let first = super::pools::node_pools(&index, &in_a, features);
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].targeting.len(), 1);
    assert!(Arc::ptr_eq(
        &first,
        &super::pools::node_pools(&index, &in_a, features)
    ));
    // The node's labels changed: the zone-a slice no longer reaches it.
    let in_b = with_zone("b");
    assert!(super::pools::node_pools(&index, &in_b, features).is_empty());
}
