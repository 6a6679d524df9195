//! The allocator with compatibility groups (DRADeviceCompatibilityGroups). The cases are
//! kube v1.37.2's "compatibility-groups-*" entries of kubernetes/kubernetes
//! staging/src/k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting/allocator_testing.go,
//! each named as there: one pool of a device slice and a counter slice (counter sets
//! `counter-set-1` and `counter-set-2` of 4 each).

use super::allocator_tests::{Cluster, claim, device, id, picked, request, slice};
use crate::api::Quantity;
use crate::api::dra::*;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A device drawing `amount` from each of `sets` (counter set, groups).
fn part(name: &str, amount: &str, sets: &[(&str, &[&str])]) -> Device {
    let mut d = device(name, &[]);
    for (set, groups) in sets {
        d.consumes_counters.push(CounterConsumption {
            counter_set: Arc::from(*set),
            counters: BTreeMap::from([(Arc::from("capacity-0"), Quantity::parse(amount).unwrap())]),
            compatibility_groups: groups.iter().map(|g| Arc::from(*g)).collect(),
        });
    }
    d
}

/// The pool `pool` on node-0: a slice of `devices` and a slice of the two counter sets.
fn pool(pool: &str, devices: Vec<Device>) -> Vec<Arc<ResourceSlice>> {
    let mut with_devices = (*slice(&format!("{pool}-devices"), "node-0", 1, devices)).clone();
    with_devices.pool = pool.into();
    with_devices.pool_sym = crate::api::Sym::new(pool);
    with_devices.pool_slice_count = 2;
    let four = || BTreeMap::from([(Arc::from("capacity-0"), Quantity::parse("4").unwrap())]);
    let counters = ResourceSlice {
        name: format!("{pool}-counters").into(),
        devices: Vec::new(),
        draws_counters: false,
        uses_compatibility_groups: false,
        shared_counters: BTreeMap::from([
            (Arc::from("counter-set-1"), four()),
            (Arc::from("counter-set-2"), four()),
        ]),
        ..with_devices.clone()
    };
    vec![Arc::new(with_devices), Arc::new(counters)]
}

const MIG: &[&str] = &["mig"];
const VGPU: &[&str] = &["vgpu"];

fn two_requests() -> ResourceClaim {
    claim(
        "claim-0",
        vec![request("req-0", "gpu", 1), request("req-1", "gpu", 1)],
    )
}

#[test]
fn devices_on_one_counter_set_need_a_common_group() {
    let set1 = "counter-set-1";
    for (name, devices, want) in [
        (
            "compatibility-groups-compatible",
            vec![
                part("device-1", "2", &[(set1, MIG)]),
                part("device-2", "2", &[(set1, MIG)]),
            ],
            Some(vec![vec!["req-0:device-1", "req-1:device-2"]]),
        ),
        (
            "compatibility-groups-incompatible",
            vec![
                part("device-1", "2", &[(set1, MIG)]),
                part("device-2", "2", &[(set1, VGPU)]),
            ],
            None,
        ),
        (
            "compatibility-groups-multiple-counter-sets",
            vec![
                part("device-1", "2", &[(set1, MIG)]),
                part("device-2", "2", &[("counter-set-2", VGPU)]),
            ],
            Some(vec![vec!["req-0:device-1", "req-1:device-2"]]),
        ),
        (
            "compatibility-groups-multiple-counter-sets-spanning-device",
            vec![
                part("device-1", "1", &[(set1, MIG)]),
                part("device-2", "1", &[(set1, VGPU), ("counter-set-2", VGPU)]),
            ],
            None,
        ),
    ] {
        let c = Cluster::new(pool("pool-1", devices));
        let got = c.allocate("node-0", &[&two_requests()]).unwrap();
        let want: Option<Vec<Vec<String>>> = want.map(|w| {
            w.iter()
                .map(|a| a.iter().map(|s| s.to_string()).collect())
                .collect()
        });
        assert_eq!(got.as_deref().map(picked), want, "{name}");
    }
}

#[test]
fn allocated_peers_seed_the_intersection_and_claims_share_it() {
    let set1 = "counter-set-1";
    let one = claim("claim-0", vec![request("req-0", "gpu", 1)]);
    // "compatibility-groups-incompatible-with-allocated-peer" / "...-compatible-with-...".
    for (second, want) in [(VGPU, None), (MIG, Some(vec![vec!["req-0:device-2"]]))] {
        let mut c = Cluster::new(pool(
            "pool-1",
            vec![
                part("device-1", "1", &[(set1, MIG)]),
                part("device-2", "1", &[(set1, second)]),
            ],
        ));
        c.allocated.insert(id("pool-1", "device-1"));
        let got = c.allocate("node-0", &[&one]).unwrap();
        let want: Option<Vec<Vec<String>>> = want.map(|w| {
            w.iter()
                .map(|a| a.iter().map(|s| s.to_string()).collect())
                .collect()
        });
        assert_eq!(got.as_deref().map(picked), want, "{second:?}");
    }
    // "compatibility-groups-multiple-claims" and "...-multiple-claims-incompatible".
    let other = claim("claim-1", vec![request("req-0", "gpu", 1)]);
    for (second, fits) in [(MIG, true), (VGPU, false)] {
        let c = Cluster::new(pool(
            "pool-1",
            vec![
                part("device-1", "1", &[(set1, MIG)]),
                part("device-2", "1", &[(set1, second)]),
            ],
        ));
        let got = c.allocate("node-0", &[&one, &other]).unwrap();
        assert_eq!(got.is_some(), fits, "{second:?}");
    }
}

/// "compatibility-groups-taint-rollback": a tainted first candidate's narrowing is undone.
#[test]
fn a_refused_device_leaves_the_intersection_as_it_was() {
    let set1 = "counter-set-1";
    let mut tainted = part("device-1", "2", &[(set1, MIG)]);
    tainted.taints.push(DeviceTaint {
        key: "example.com/taint".into(),
        value: "".into(),
        effect: "NoSchedule".into(),
    });
    let c = Cluster::new(pool(
        "pool-1",
        vec![tainted, part("device-2", "2", &[(set1, VGPU)])],
    ));
    let one = claim("claim-0", vec![request("req-0", "gpu", 1)]);
    let got = c.allocate("node-0", &[&one]).unwrap().unwrap();
    assert_eq!(picked(&got), [["req-0:device-2"]]);
}

/// "compatibility-groups-disabled-skips-grouped-pool" and
/// "...-disabled-skips-ungrouped-device-in-grouped-pool": without the feature a slice with
/// groups is ignored and its pool is incomplete; other pools serve.
#[test]
fn without_the_feature_a_grouped_slice_blocks_its_pool() {
    let mut slices = pool(
        "pool-1",
        vec![part("device-1", "2", &[("counter-set-1", MIG)])],
    );
    slices.extend(pool(
        "pool-2",
        vec![part("device-2", "2", &[("counter-set-2", &[])])],
    ));
    let mut c = Cluster::new(slices);
    c.features.compatibility_groups = false;
    let one = claim("claim-0", vec![request("req-0", "gpu", 1)]);
    let got = c.allocate("node-0", &[&one]).unwrap().unwrap();
    assert_eq!(picked(&got), [["req-0:device-2"]]);
    let mut grouped = pool(
        "pool-1",
        vec![part("device-1", "1", &[("counter-set-1", MIG)])],
    );
    let mut plain = (*grouped[0]).clone();
    plain.name = "pool-1-plain".into();
    plain.devices = vec![part("device-2", "1", &[("counter-set-1", &[])])];
    plain.uses_compatibility_groups = false;
    for s in &mut grouped {
        Arc::make_mut(s).pool_slice_count = 3;
    }
    plain.pool_slice_count = 3;
    grouped.push(Arc::new(plain));
    let mut c = Cluster::new(grouped);
    c.features.compatibility_groups = false;
    assert_eq!(c.allocate("node-0", &[&one]).unwrap(), None);
    // With the feature the ungrouped device is taken (no grouped peer is allocated).
    c.features.compatibility_groups = true;
    let got = c.allocate("node-0", &[&one]).unwrap().unwrap();
    assert_eq!(picked(&got), [["req-0:device-1"]]);
}

/// The pools of other nodes that reach a node only through their counter slices are judged
/// once per slice index ([`super::pools::remote_pools`]); with the node's own slices they
/// give the node the pools kube's `GatherPools` gives it over every slice: an incomplete
/// pool and an invalid one are there (an `All` request fails on the first), a complete
/// valid one without a device for the node may be left out.
#[test]
fn pools_reaching_a_node_only_by_counters_are_judged_once() {
    use super::pools::{AllSlices, gather_pools, remote_pools};
    use crate::framework::dra_manager::SliceIndex;
    let on_node_1 = |mut v: Vec<Arc<ResourceSlice>>| {
        let d = Arc::make_mut(&mut v[0]);
        d.nodes = NodeSelection::Node(crate::api::Sym::new("node-1"));
        v
    };
    let mut all = pool("p0", vec![part("a", "1", &[("counter-set-1", &[])])]);
    all.push(pool("p1", vec![part("b", "1", &[("counter-set-1", &[])])]).remove(1));
    all.extend(on_node_1(pool(
        "p2",
        vec![part("c", "1", &[("missing", &[])])],
    )));
    all.extend(on_node_1(pool(
        "p3",
        vec![part("d", "1", &[("counter-set-1", &[])])],
    )));
    all.sort_by(|a, b| a.name.cmp(&b.name));
    let key = |s: &Arc<ResourceSlice>| (s.driver, s.pool.clone());
    let mut index = SliceIndex {
        generation: 1,
        by_node: Default::default(),
        other: Vec::new(),
        counters: Default::default(),
        by_pool: Default::default(),
        memo: Default::default(),
        node_memo: Default::default(),
    };
    for s in &all {
        index.by_pool.entry(key(s)).or_default().push(s.clone());
        if s.shared_counters.is_empty() {
            let NodeSelection::Node(n) = s.nodes else {
                unreachable!()
            };
            index.by_node.entry(n).or_default().push(s.clone());
        } else {
            index.counters.entry(key(s)).or_default().push(s.clone());
        }
    }
    let c = Cluster::new(Vec::new());
    let node = super::allocator_tests::node("node-0");
    let whole = gather_pools(&all, AllSlices::List(&all), &node, c.features, &[]);
    let remote = remote_pools(&index, c.features);
    let local = index.for_node(node.name);
    let indexed = gather_pools(
        &local,
        AllSlices::ByPool(&index.by_pool),
        &node,
        c.features,
        &remote,
    );
    let show = |pools: &[super::pools::Pool]| -> Vec<String> {
        (pools.iter())
            .filter(|p| p.incomplete || p.invalid.is_some() || !p.targeting.is_empty())
            .map(|p| {
                format!(
                    "{} {} {:?} {}",
                    p.id.1,
                    p.incomplete,
                    p.invalid,
                    p.targeting.len()
                )
            })
            .collect()
    };
    assert_eq!(show(&indexed), show(&whole));
    assert_eq!(
        show(&indexed),
        [
            "p0 false None 1",
            "p1 true None 0",
            "p2 false Some(\"counter set missing not found\") 0"
        ]
    );
    // The node's slices hold its own pool's only.
    assert!(local.iter().all(|s| &*s.pool == "p0"), "{local:?}");
}
