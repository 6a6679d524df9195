//! The search takes each set of a request's devices once (`allocator.rs`, `Location`), where
//! kube's stable allocator
//! (staging/src/k8s.io/dynamic-resource-allocation/structured/internal/stable/allocator_stable.go,
//! `allocateOne`) tries every ordering. Both must find the same first solution: for random
//! nodes with partitionable devices (shared counters), attributes, allocated devices, and
//! claims with several requests, `matchAttribute`/`distinctAttribute` constraints and
//! prioritized lists, the answer with every ordering searched equals the answer without.

use super::allocator::every_ordering;
use super::allocator_tests::{Cluster, alt, claim, device, request, slice};
use crate::api::Quantity;
use crate::api::dra::*;
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A device: its `model` and `zone` attributes (small alphabets, so that constraints
/// bind), and how much of the pool's `mem` counter it draws (0: none).
type DeviceSpec = (u8, u8, u8);

/// A request: the class selector's model (`None`: any), how many devices, and whether it
/// is a prioritized list whose second choice takes one device of any model.
type RequestSpec = (Option<u8>, u8, bool);

fn node_devices(specs: &[DeviceSpec], mem: u8) -> Vec<Arc<ResourceSlice>> {
    let q = |n: u8| Quantity::parse(&format!("{n}Gi")).unwrap();
    let devices: Vec<Device> = specs
        .iter()
        .enumerate()
        .map(|(i, &(model, zone, draw))| {
            let (model, zone) = (format!("m{model}"), format!("z{zone}"));
            let mut d = device(&format!("d{i}"), &[("model", &model), ("zone", &zone)]);
            if draw > 0 {
                d.consumes_counters.push(CounterConsumption {
                    counter_set: "set".into(),
                    counters: BTreeMap::from([(Arc::from("mem"), q(draw))]),
                    compatibility_groups: Vec::new(),
                });
            }
            d
        })
        .collect();
    // The counters in a slice of their own (a slice has devices or counters, not both).
    let mut s = (*slice("s0", "node-0", 1, devices)).clone();
    s.pool_slice_count = 2;
    let counters = ResourceSlice {
        name: "counters".into(),
        devices: Vec::new(),
        draws_counters: false,
        shared_counters: BTreeMap::from([(
            Arc::from("set"),
            BTreeMap::from([(Arc::from("mem"), q(mem))]),
        )]),
        ..s.clone()
    };
    vec![Arc::new(s), Arc::new(counters)]
}

fn the_claim(requests: &[RequestSpec], constraint: u8) -> ResourceClaim {
    let requests = requests
        .iter()
        .enumerate()
        .map(|(i, &(model, count, listed))| {
            let class = match model {
                Some(m) => format!("model-{m}"),
                None => "gpu".to_string(),
            };
            let mut r = request(&format!("r{i}"), &class, i64::from(count));
            if listed {
                r.prioritized = true;
                r.alternatives[0].name = format!("r{i}/a").into();
                r.alternatives.push(alt(
                    &format!("r{i}/b"),
                    "gpu",
                    AllocationMode::ExactCount(1),
                ));
            }
            r
        })
        .collect();
    let mut c = claim("c", requests);
    let attr = |a: &str| Some(Arc::from(format!("{}/{a}", super::allocator_tests::DRIVER)));
    c.constraints = match constraint {
        1 => vec![DeviceConstraint {
            requests: Vec::new(),
            match_attribute: attr("zone"),
            distinct_attribute: None,
        }],
        2 => vec![DeviceConstraint {
            requests: Vec::new(),
            match_attribute: None,
            distinct_attribute: attr("model"),
        }],
        _ => Vec::new(),
    };
    c
}

fn answer(
    cluster: &Cluster,
    c: &ResourceClaim,
    every: bool,
) -> Result<Option<Vec<Allocation>>, String> {
    every_ordering::ON.with(|on| on.set(every));
    let r = cluster.allocate("node-0", &[c]);
    every_ordering::ON.with(|on| on.set(false));
    r
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, .. ProptestConfig::default() })]

    #[test]
    fn each_set_once_finds_the_first_solution_of_every_ordering(
        devices in prop::collection::vec((0u8..3, 0u8..2, 0u8..4), 1..8),
        mem in 3u8..16,
        allocated in prop::collection::vec(prop::bool::weighted(0.2), 8),
        requests in prop::collection::vec((prop::option::of(0u8..3), 1u8..4, any::<bool>()), 1..3),
        constraint in 0u8..3,
    ) {
        let mut cluster = Cluster::new(node_devices(&devices, mem));
        for m in 0..3 {
            cluster.classes.push(super::allocator_tests::class(
                &format!("model-{m}"),
                &format!("attr model = m{m}"),
            ));
        }
        for (i, _) in devices.iter().enumerate().filter(|(i, _)| allocated[*i]) {
            cluster.allocated.insert(super::allocator_tests::id("node-0", &format!("d{i}")));
        }
        let c = the_claim(&requests, constraint);
        let every = answer(&cluster, &c, true);
        let once = answer(&cluster, &c, false);
        prop_assert_eq!(once, every);
    }
}
