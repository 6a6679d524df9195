//! The allocator with shared devices (DRAConsumableCapacity). The cases are kube v1.37.2's
//! "consumable-capacity-*" entries of kubernetes/kubernetes
//! staging/src/k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting/allocator_testing.go,
//! each named as there, with its devices, policies and expected results; the helpers
//! [`range_policy`] and [`values_policy`] are that file's `withCapacityRequestPolicyRange`
//! (default 2, min 2, step 2, max 4) and `withCapacityRequestPolicyValidValues`.

use super::allocator_tests::{Cluster, DRIVER, alt, claim, class, device, slice};
use crate::api::Quantity;
use crate::api::capacity_policy::{DeviceCapacity, RequestPolicy, ValidRange};
use crate::api::dra::*;
use std::collections::BTreeMap;
use std::sync::Arc;

const CAP0: &str = "capacity-0";

fn q(s: &str) -> Quantity {
    Quantity::parse(s).unwrap()
}

fn range_policy() -> Option<RequestPolicy> {
    Some(RequestPolicy {
        default: Some(q("2")),
        valid_values: Vec::new(),
        valid_range: Some(ValidRange {
            min: q("2"),
            max: Some(q("4")),
            step: Some(q("2")),
        }),
    })
}

fn values_policy(default: &str, more: &[&str]) -> Option<RequestPolicy> {
    let mut valid_values = vec![q(default)];
    valid_values.extend(more.iter().map(|v| q(v)));
    Some(RequestPolicy {
        default: Some(q(default)),
        valid_values,
        valid_range: None,
    })
}

/// A device allowing several allocations with capacities `(name, value)` under `policy`.
fn shared(name: &str, caps: &[(&str, &str)], policy: Option<RequestPolicy>) -> Device {
    let mut d = device(name, &[]);
    d.allow_multiple_allocations = true;
    for (n, v) in caps {
        d.capacity.insert(Arc::from(format!("{DRIVER}/{n}")), q(v));
        let c = DeviceCapacity {
            value: q(v),
            policy: policy.clone(),
        };
        d.capacities.insert(Arc::from(*n), c);
    }
    d
}

/// A request for `count` devices (`None`: all), each share asking `ask` of capacity-0.
fn ask(name: &str, count: Option<i64>, ask: Option<&str>) -> DeviceRequest {
    let mode = count.map_or(AllocationMode::All, AllocationMode::ExactCount);
    let mut a = alt(name, "gpu", mode);
    if let Some(v) = ask {
        a.capacity.insert(Arc::from(CAP0), q(v));
    }
    DeviceRequest {
        name: name.into(),
        alternatives: vec![a],
        prioritized: false,
    }
}

/// Each allocation's devices as `request:device`, with `=amount` for a share.
fn shares(r: &[Allocation]) -> Vec<Vec<String>> {
    r.iter()
        .map(|a| {
            (a.devices.iter())
                .map(|d| {
                    let mut s = format!("{}:{}", d.request, d.device.device);
                    if d.share_id.is_some() {
                        let c: Vec<String> = (d.consumed_capacity.values())
                            .map(|v| v.value().to_string())
                            .collect();
                        s.push_str(&format!("={}", c.join(",")));
                    }
                    s
                })
                .collect()
        })
        .collect()
}

fn on_node(devices: Vec<Device>) -> Cluster {
    Cluster::new(vec![slice("s0", "node-0", 1, devices)])
}

/// Allocates one claim per entry of `claims` (requests each) and compares with `want`
/// (`None`: no solution).
fn check(name: &str, c: &Cluster, claims: Vec<Vec<DeviceRequest>>, want: Option<Vec<Vec<&str>>>) {
    let claims: Vec<ResourceClaim> = (claims.into_iter().enumerate())
        .map(|(i, r)| claim(&format!("claim-{i}"), r))
        .collect();
    let refs: Vec<&ResourceClaim> = claims.iter().collect();
    let got = c
        .allocate("node-0", &refs)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let want: Option<Vec<Vec<String>>> = want.map(|w| {
        w.iter()
            .map(|a| a.iter().map(|s| s.to_string()).collect())
            .collect()
    });
    assert_eq!(got.as_deref().map(shares), want, "{name}");
}

/// A case: kube's name, the node's devices, each claim's requests, the expected results.
type Case<'a> = (
    &'a str,
    Vec<Device>,
    Vec<Vec<DeviceRequest>>,
    Option<Vec<Vec<&'a str>>>,
);

#[test]
fn shares_consume_what_they_ask_or_the_whole_capacity() {
    let r0 = |v: Option<&str>| vec![ask("req-0", Some(1), v)];
    let cases: Vec<Case> = vec![
        (
            "consumable-capacity-multi-allocatable-device-with-missing-capacity-request",
            vec![shared("device-1", &[("capacity-1", "1")], None)],
            vec![r0(Some("1"))],
            None,
        ),
        (
            "consumable-capacity-multi-allocatable-device-without-capacity-without-capacity-request",
            vec![shared("device-1", &[], None)],
            vec![r0(None), r0(None)],
            Some(vec![vec!["req-0:device-1="], vec!["req-0:device-1="]]),
        ),
        (
            "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request",
            vec![
                shared("device-1", &[(CAP0, "1")], None),
                shared("device-2", &[(CAP0, "1")], None),
            ],
            vec![r0(None), r0(None)],
            Some(vec![vec!["req-0:device-1=1"], vec!["req-0:device-2=1"]]),
        ),
        (
            "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request-block",
            vec![shared("device-1", &[(CAP0, "2")], None)],
            vec![r0(None), r0(None)],
            None,
        ),
        (
            "consumable-capacity-multi-allocatable-device-without-policy-with-capacity-request",
            vec![shared("device-1", &[(CAP0, "2")], None)],
            vec![r0(Some("1")), r0(Some("1"))],
            Some(vec![vec!["req-0:device-1=1"], vec!["req-0:device-1=1"]]),
        ),
        (
            "consumable-capacity-multi-allocatable-device-with-policy-without-capacity-request",
            vec![shared("device-1", &[(CAP0, "4")], range_policy())],
            vec![r0(None), r0(None)],
            Some(vec![vec!["req-0:device-1=2"], vec!["req-0:device-1=2"]]),
        ),
    ];
    for (name, devices, claims, want) in cases {
        check(name, &on_node(devices), claims, want);
    }
}

#[test]
fn policies_round_shares_up_or_refuse_them() {
    let r0 = |v: Option<&str>| vec![ask("req-0", Some(1), v)];
    let cases: Vec<Case> = vec![
        (
            "consumable-capacity-multi-allocatable-device-with-zero-request-policy",
            vec![shared("device-1", &[(CAP0, "1")], values_policy("0", &[]))],
            vec![r0(None), r0(None)],
            Some(vec![vec!["req-0:device-1=0"], vec!["req-0:device-1=0"]]),
        ),
        (
            "consumable-capacity-multi-allocatable-device-violates-zero-request-policy",
            vec![shared("device-1", &[(CAP0, "1")], values_policy("0", &[]))],
            vec![r0(Some("1"))],
            None,
        ),
        (
            "consumable-capacity-multi-allocatable-device-with-range-policy-with-capacity-request",
            vec![shared("device-1", &[(CAP0, "4")], range_policy())],
            vec![r0(Some("1")), r0(Some("1"))],
            Some(vec![vec!["req-0:device-1=2"], vec!["req-0:device-1=2"]]),
        ),
        (
            "consumable-capacity-multi-allocatable-device-with-range-policy-step",
            vec![shared("device-1", &[(CAP0, "4")], range_policy())],
            vec![r0(Some("3"))],
            Some(vec![vec!["req-0:device-1=4"]]),
        ),
        (
            "consumable-capacity-multi-allocatable-device-with-valid-values-policy",
            vec![shared(
                "device-1",
                &[(CAP0, "4")],
                values_policy("1", &["2"]),
            )],
            vec![r0(Some("2"))],
            Some(vec![vec!["req-0:device-1=2"]]),
        ),
        (
            "consumable-capacity-multi-allocatable-device-with-valid-values-policy-round-up",
            vec![shared(
                "device-1",
                &[(CAP0, "3")],
                values_policy("1", &["3"]),
            )],
            vec![r0(Some("2"))],
            Some(vec![vec!["req-0:device-1=3"]]),
        ),
        (
            "consumable-capacity-multi-allocatable-device-with-exceeded-consumable-capacity-request",
            vec![shared("device-1", &[(CAP0, "2")], range_policy())],
            vec![r0(Some("1")), r0(Some("2"))],
            None,
        ),
        (
            "consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy",
            vec![shared("device-1", &[(CAP0, "10")], range_policy())],
            vec![r0(Some("6"))],
            None,
        ),
    ];
    for (name, devices, claims, want) in cases {
        check(name, &on_node(devices), claims, want);
    }
}

#[test]
fn all_mode_takes_every_device_whose_capacities_hold_the_share() {
    let cases: Vec<Case> = vec![
        (
            "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-no-capacity",
            vec![
                shared("device-1", &[(CAP0, "2")], None),
                shared("device-2", &[], None),
            ],
            vec![vec![ask("req-0", None, Some("2"))]],
            Some(vec![vec!["req-0:device-1=2"]]),
        ),
        (
            "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-insufficient-capacity",
            vec![
                shared("device-1", &[(CAP0, "2")], None),
                shared("device-2", &[(CAP0, "1")], None),
            ],
            vec![vec![ask("req-0", None, Some("2"))]],
            Some(vec![vec!["req-0:device-1=2"]]),
        ),
        (
            "consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-sufficient",
            vec![
                shared("device-1", &[(CAP0, "2")], None),
                shared("device-2", &[(CAP0, "1")], None),
            ],
            vec![vec![
                ask("req-0", Some(1), Some("1")),
                ask("req-1", None, Some("1")),
            ]],
            Some(vec![vec![
                "req-0:device-1=1",
                "req-1:device-1=1",
                "req-1:device-2=1",
            ]]),
        ),
    ];
    for (name, devices, claims, want) in cases {
        check(name, &on_node(devices), claims, want);
    }
}

/// A share held by an allocated claim.
fn held_share(device: &str, amount: &str) -> AllocatedDevice {
    AllocatedDevice {
        request: "req-0".into(),
        device: super::allocator_tests::id("node-0", device),
        admin_access: false,
        share_id: Some("held".into()),
        consumed_capacity: BTreeMap::from([(Arc::from(CAP0), q(amount))]),
    }
}

#[test]
fn allocated_shares_leave_what_they_do_not_consume() {
    let r0 = vec![ask("req-0", Some(1), Some("2"))];
    // "consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining"
    let mut c = on_node(vec![shared("device-1", &[(CAP0, "4")], range_policy())]);
    c.shares.push(held_share("device-1", "2"));
    check(
        "use-remaining",
        &c,
        vec![r0.clone()],
        Some(vec![vec!["req-0:device-1=2"]]),
    );
    // "consumable-capacity-multi-allocatable-device-with-no-available-consumable-capacity"
    let mut c = on_node(vec![shared("device-1", &[(CAP0, "2")], range_policy())]);
    c.shares.push(held_share("device-1", "2"));
    check("no-available", &c, vec![r0.clone()], None);
    // "consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device"
    let mut c = on_node(vec![
        shared("device-1", &[(CAP0, "2")], range_policy()),
        shared("device-2", &[(CAP0, "2")], range_policy()),
    ]);
    c.shares.push(held_share("device-1", "2"));
    check(
        "next-device",
        &c,
        vec![r0],
        Some(vec![vec!["req-0:device-2=2"]]),
    );
    // With DRAConsumableCapacity off a shared device is held whole.
    let mut c = on_node(vec![shared("device-1", &[], None), device("device-2", &[])]);
    c.shares.push(held_share("device-1", "2"));
    c.features.consumable_capacity = false;
    check(
        "disabled",
        &c,
        vec![vec![ask("req-0", Some(1), None)]],
        Some(vec![vec!["req-0:device-2"]]),
    );
}

/// "consumable-capacity-with-multi-allocatable-device-backtrack": the first claim's two
/// requests must match on an attribute, so both shares go to the NIC with room for two.
#[test]
fn shares_backtrack_with_constraints() {
    let mut d2 = shared("device-2", &[(CAP0, "2")], range_policy());
    let mut d1 = shared("device-1", &[(CAP0, "4")], range_policy());
    let attr: Arc<str> = Arc::from(format!("{DRIVER}/stringAttribute"));
    d2.attributes
        .insert(attr.clone(), AttributeValue::String("v1".into()));
    d1.attributes
        .insert(attr.clone(), AttributeValue::String("v2".into()));
    let c = on_node(vec![d2, d1]);
    let mut first = claim(
        "claim-0",
        vec![
            ask("req-0", Some(1), Some("2")),
            ask("req-1", Some(1), Some("2")),
        ],
    );
    first.constraints.push(DeviceConstraint {
        requests: Vec::new(),
        match_attribute: Some(attr),
        distinct_attribute: None,
    });
    let second = claim("claim-1", vec![ask("req-0", Some(1), Some("2"))]);
    let got = c.allocate("node-0", &[&first, &second]).unwrap().unwrap();
    assert_eq!(
        shares(&got),
        [
            vec!["req-0:device-1=2", "req-1:device-1=2"],
            vec!["req-0:device-2=2"]
        ]
    );
    // Share IDs are UUIDs, distinct within and across claims, the same on every run.
    let ids: Vec<&str> = (got.iter().flat_map(|a| &a.devices))
        .map(|d| d.share_id.as_deref().unwrap())
        .collect();
    assert!(
        ids.iter()
            .all(|i| i.len() == 36 && i.as_bytes()[14] == b'4'),
        "{ids:?}"
    );
    assert!(
        ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2],
        "{ids:?}"
    );
    let again = c.allocate("node-0", &[&first, &second]).unwrap().unwrap();
    assert_eq!(again, got);
}

/// "consumable-capacity-multi-allocatable-device-with-subrequest": the first subrequest
/// asks more than the NIC has; the second fits.
#[test]
fn a_prioritized_list_falls_back_to_a_share_that_fits() {
    let c = on_node(vec![shared("device-1", &[(CAP0, "2")], range_policy())]);
    let sub = |n: &str, v: Option<&str>| {
        ask(&format!("req-0/{n}"), Some(1), v)
            .alternatives
            .remove(0)
    };
    let req = DeviceRequest {
        name: "req-0".into(),
        alternatives: vec![
            sub("subReq-0", Some("4")),
            sub("subReq-1", Some("2")),
            sub("subReq-1", None),
        ],
        prioritized: true,
    };
    check(
        "subrequest",
        &c,
        vec![vec![req]],
        Some(vec![vec!["req-0/subReq-1:device-1=2"]]),
    );
}

#[test]
fn unrepresentable_negative_or_disabled_requests_are_errors() {
    let one = |v: &str| vec![claim("claim-0", vec![ask("req-0", Some(1), Some(v))])];
    let err = |c: &Cluster, claims: Vec<ResourceClaim>| {
        let refs: Vec<&ResourceClaim> = claims.iter().collect();
        c.allocate("node-0", &refs).unwrap_err()
    };
    // "consumable-capacity-range-policy-request-above-int64-rejected" and
    // "...-rounded-value-overflow-rejected".
    let c = on_node(vec![shared("device-1", &[(CAP0, "4")], range_policy())]);
    for v in ["18446744073709551616", "9223372036854775807"] {
        let e = err(&c, one(v));
        assert!(e.contains("cannot be represented"), "{v}: {e}");
    }
    // "consumable-capacity-negative-request-aborts"
    let c = on_node(vec![shared("device-1", &[(CAP0, "10")], None)]);
    assert!(err(&c, one("-5")).contains("negative"));
    // "consumable-capacity-disabled-feature" (and "...-with-prioritized-list").
    let mut c = on_node(vec![device("device-1", &[])]);
    c.features.consumable_capacity = false;
    let e = err(&c, one("1"));
    assert!(
        e.ends_with("request req-0: has capacity requests, but the DRAConsumableCapacity feature is disabled"),
        "{e}"
    );
    let mut sub = ask("req-0/subReq-0", Some(1), Some("1"))
        .alternatives
        .remove(0);
    sub.device_class_name = class("gpu", "true").name.clone();
    let req = DeviceRequest {
        name: "req-0".into(),
        alternatives: vec![sub.clone(), sub],
        prioritized: true,
    };
    let e = err(&c, vec![claim("claim-0", vec![req])]);
    assert!(e.ends_with("subrequest subReq-0: has capacity requests, but the DRAConsumableCapacity feature is disabled"), "{e}");
}

/// Not one of kube's table cases: the order of kube's incubating `allocateOne` (staging/src/
/// k8s.io/dynamic-resource-allocation/structured/internal/incubating/allocator_incubating.go,
/// `startLocation`), which looks for a request's next device after its previous one. So one
/// request takes a shared device at most once, though the device has room for two shares
/// (two requests may each take one).
#[test]
fn one_request_takes_a_shared_device_once() {
    let two_shares = |name: &str| shared(name, &[(CAP0, "2")], None);
    let two = || vec![ask("req-0", Some(2), Some("1"))];
    check(
        "two shares from two devices",
        &on_node(vec![two_shares("device-1"), two_shares("device-2")]),
        vec![two()],
        Some(vec![vec!["req-0:device-1=1", "req-0:device-2=1"]]),
    );
    check(
        "two shares of one device",
        &on_node(vec![two_shares("device-1")]),
        vec![two()],
        None,
    );
    check(
        "one share each for two requests",
        &on_node(vec![two_shares("device-1")]),
        vec![vec![
            ask("req-0", Some(1), Some("1")),
            ask("req-1", Some(1), Some("1")),
        ]],
        Some(vec![vec!["req-0:device-1=1", "req-1:device-1=1"]]),
    );
}
