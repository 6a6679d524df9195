//! DRAConsumableCapacity's arithmetic (kube v1.37.2
//! `k8s.io/dynamic-resource-allocation/structured/internal/incubating/consumable_capacity.go`).
//!
//! A share of a device consumes **every** capacity of the device: what the claim's request
//! asks of it, rounded up by the capacity's request policy (to `min + k * step` of a valid
//! range, or to the next valid value), or, when it asks nothing, the policy's default or
//! the whole capacity. A share fits when each capacity's policy allows the amount and the
//! amount, plus what allocated shares and this search's earlier shares consume, stays
//! within the capacity's value. Capacities are named as the slice and the claim write them
//! (kube compares the names as written).
//!
//! A request whose rounding leaves the 64-bit range (or the range of thousandths, on the
//! fractional path of DRAFractionalCapacityRange), or a negative amount, is an error that
//! ends the allocation, as kube's; everything else that does not fit only skips the device.

use crate::api::capacity_policy::{DeviceCapacity, RequestPolicy, ValidRange, exact_milli};
use crate::api::quantity::Quantity;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Capacity name → amount.
pub(crate) type Consumed = BTreeMap<Arc<str>, Quantity>;

/// kube's `CmpRequestOverCapacity`: whether a share asking `requests` fits the device with
/// `capacities`, which allocated shares use `current` of and this search `allocating` of;
/// `Err` (kube's message after `capacity "NAME": `) ends the allocation.
pub(crate) fn fits(
    current: Option<&Consumed>,
    requests: &Consumed,
    capacities: &BTreeMap<Arc<str>, DeviceCapacity>,
    allocating: Option<&Consumed>,
    fractional: bool,
) -> Result<bool, String> {
    if requests.keys().any(|n| !capacities.contains_key(n)) {
        return Ok(false);
    }
    // Every amount is resolved first: an error ends the allocation whichever capacity
    // would have skipped the device (kube's order, independent of its map's).
    for (name, cap) in capacities {
        checked_amount(name, requests.get(name), cap, fractional)?;
    }
    for (name, cap) in capacities {
        let amount = checked_amount(name, requests.get(name), cap, fractional)?;
        if violates_policy(&amount, cap.policy.as_ref(), fractional) {
            return Ok(false);
        }
        let total = [current, allocating]
            .into_iter()
            .flatten()
            .filter_map(|m| m.get(name))
            .try_fold(amount, |sum, q| sum.checked_add(q));
        // A sum past the exactly held range is past every capacity.
        if total.is_none_or(|t| t > cap.value) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// [`amount`], with kube's error prefix, refusing a negative amount.
fn checked_amount(
    name: &str,
    requested: Option<&Quantity>,
    cap: &DeviceCapacity,
    fractional: bool,
) -> Result<Quantity, String> {
    let amount =
        amount(requested, cap, fractional).map_err(|e| format!("capacity {name:?}: {e}"))?;
    if amount.is_negative() {
        return Err(format!("capacity {name:?}: capacity value is negative"));
    }
    Ok(amount)
}

/// kube's `GetConsumedCapacityFromRequest`: what a share asking `requests` consumes of each
/// capacity (negative amounts are refused here, as `CmpRequestOverCapacity` refuses them).
pub(crate) fn consumed_capacity(
    requests: &Consumed,
    capacities: &BTreeMap<Arc<str>, DeviceCapacity>,
    fractional: bool,
) -> Result<Consumed, String> {
    capacities
        .iter()
        .map(|(name, cap)| {
            let amount = checked_amount(name, requests.get(name), cap, fractional)?;
            Ok((name.clone(), amount))
        })
        .collect()
}

/// kube's `calculateConsumedCapacity`.
fn amount(
    requested: Option<&Quantity>,
    cap: &DeviceCapacity,
    fractional: bool,
) -> Result<Quantity, String> {
    let Some(requested) = requested else {
        // kube's `fillEmptyRequest`.
        return Ok(cap
            .policy
            .as_ref()
            .and_then(|p| p.default)
            .unwrap_or(cap.value));
    };
    let Some(policy) = &cap.policy else {
        return Ok(*requested);
    };
    if let Some(range) = &policy.valid_range {
        return round_up_range(requested, range, fractional);
    }
    Ok(policy
        .valid_values
        .iter()
        .find(|v| requested <= *v)
        .copied()
        .unwrap_or(*requested))
}

const NOT_REPRESENTABLE: &str =
    "capacity request cannot be represented in the device's range arithmetic";

/// A quantity for messages: whole numbers as such, others in thousandths.
fn show(q: &Quantity) -> String {
    if q.is_fractional() {
        format!("{}m", q.milli_value())
    } else {
        q.value().to_string()
    }
}

/// kube's `roundUpRange`: below `min` gives `min`; with a step, the next `min + k * step`.
fn round_up_range(
    requested: &Quantity,
    range: &ValidRange,
    fractional: bool,
) -> Result<Quantity, String> {
    if *requested < range.min {
        return Ok(range.min);
    }
    let Some(step) = &range.step else {
        return Ok(*requested);
    };
    let milli = range.use_milli(fractional);
    let (req, step, min) = if milli {
        let Some(req) = exact_milli(requested) else {
            return Err(format!(
                "{NOT_REPRESENTABLE}: request {} is not a representable milli value",
                show(requested)
            ));
        };
        (req, step.milli_value(), range.min.milli_value())
    } else {
        if *requested > Quantity::from_i64(i64::MAX) {
            return Err(format!(
                "{NOT_REPRESENTABLE}: request {} exceeds MaxInt64",
                show(requested)
            ));
        }
        (requested.value(), step.value(), range.min.value())
    };
    if step <= 0 {
        return Ok(*requested);
    }
    let added = req - min;
    let n = added / step + i64::from(added % step != 0);
    let value = step.checked_mul(n).and_then(|s| s.checked_add(min));
    match value {
        Some(v) if milli => Ok(Quantity::from_milli(v)),
        Some(v) => Ok(Quantity::from_i64(v)),
        None => Err(format!(
            "{NOT_REPRESENTABLE}: rounding request {} up to the next step passes {}",
            show(requested),
            if milli {
                "the milli-value range"
            } else {
                "MaxInt64"
            }
        )),
    }
}

/// kube's `violatesPolicy`: the amount is not one the policy allows.
fn violates_policy(amount: &Quantity, policy: Option<&RequestPolicy>, fractional: bool) -> bool {
    let Some(policy) = policy else {
        return false;
    };
    if policy.default.as_ref() == Some(amount) {
        return false;
    }
    if let Some(range) = &policy.valid_range {
        if range.max.as_ref().is_some_and(|max| amount > max) {
            return true;
        }
        let Some(step) = &range.step else {
            return false;
        };
        let (value, step, min) = if range.use_milli(fractional) {
            let Some(v) = exact_milli(amount) else {
                return true;
            };
            (v, step.milli_value(), range.min.milli_value())
        } else {
            (amount.value(), step.value(), range.min.value())
        };
        return step != 0 && (value - min) % step != 0;
    }
    !policy.valid_values.is_empty() && !policy.valid_values.contains(amount)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap()
    }

    fn range(min: &str, max: Option<&str>, step: Option<&str>) -> ValidRange {
        ValidRange {
            min: q(min),
            max: max.map(q),
            step: step.map(q),
        }
    }

    fn capacity(value: &str, policy: Option<RequestPolicy>) -> BTreeMap<Arc<str>, DeviceCapacity> {
        BTreeMap::from([(
            Arc::from("bw"),
            DeviceCapacity {
                value: q(value),
                policy,
            },
        )])
    }

    fn ranged(default: &str, r: ValidRange) -> Option<RequestPolicy> {
        Some(RequestPolicy {
            default: Some(q(default)),
            valid_values: Vec::new(),
            valid_range: Some(r),
        })
    }

    fn ask(v: &str) -> Consumed {
        BTreeMap::from([(Arc::from("bw"), q(v))])
    }

    fn valued(default: Option<&str>, values: &[&str]) -> Option<RequestPolicy> {
        Some(RequestPolicy {
            default: default.map(q),
            valid_values: values.iter().map(|v| q(v)).collect(),
            valid_range: None,
        })
    }

    /// kube's `testCalculateConsumedCapacity` table (`Ok(None)`: an error), from
    /// staging/src/k8s.io/dynamic-resource-allocation/structured/internal/incubating/consumable_capacity_test.go.
    #[test]
    fn consumed_amounts_follow_the_policy() {
        let max = i64::MAX.to_string();
        let max_m1 = (i64::MAX - 1).to_string();
        let max_p1 = "9223372036854775808";
        let big = "9224372036854776E3";
        let r = |min, max, step| ranged("1", range(min, max, step));
        let with_default = |d: &str, p: Option<RequestPolicy>| {
            p.map(|p| RequestPolicy {
                default: Some(q(d)),
                ..p
            })
        };
        #[rustfmt::skip]
        type Case<'a> = (&'a str, Option<&'a str>, &'a str, Option<RequestPolicy>, bool, Option<&'a str>);
        let cases: Vec<Case> = vec![
            (
                "empty",
                None,
                "1",
                Some(RequestPolicy {
                    default: None,
                    valid_values: vec![],
                    valid_range: None,
                }),
                false,
                Some("1"),
            ),
            (
                "request-above-maxint64-is-rejected",
                Some("18446744073709551619"),
                "18446744073709551619",
                with_default("0", r("0", None, Some("3"))),
                false,
                None,
            ),
            (
                "rounded-value-above-maxint64-is-rejected",
                Some(&max),
                max_p1,
                with_default("0", r("0", None, Some("2"))),
                false,
                None,
            ),
            (
                "max-safe-boundary-rounds-to-maxint64",
                Some(&max_m1),
                &max,
                r("1", None, Some("2")),
                false,
                Some(&max),
            ),
            (
                "min in range",
                None,
                "2",
                r("1", None, None),
                false,
                Some("1"),
            ),
            (
                "default in set",
                None,
                "2",
                valued(Some("1"), &["1"]),
                false,
                Some("1"),
            ),
            (
                "more than min in range",
                Some("2"),
                "2",
                r("1", None, None),
                false,
                Some("2"),
            ),
            (
                "less than min in range",
                Some("1"),
                "2",
                r("2", None, None),
                false,
                Some("2"),
            ),
            (
                "with step (round up)",
                Some("2"),
                "3",
                r("1", None, Some("2")),
                false,
                Some("3"),
            ),
            (
                "with step (no remaining)",
                Some("2"),
                "2",
                r("1", None, Some("1")),
                false,
                Some("2"),
            ),
            (
                "fractional step round up (0.25 to 0.3)",
                Some("250m"),
                "1",
                with_default("200m", r("200m", Some("1"), Some("100m"))),
                true,
                Some("300m"),
            ),
            (
                "fractional step already aligned (0.4 = min+2*step)",
                Some("400m"),
                "1",
                with_default("200m", r("200m", Some("1"), Some("100m"))),
                true,
                Some("400m"),
            ),
            (
                "valid value in set",
                Some("2"),
                "3",
                valued(Some("1"), &["1", "2", "3"]),
                false,
                Some("2"),
            ),
            (
                "set (round up)",
                Some("2"),
                "3",
                valued(Some("1"), &["1", "3"]),
                false,
                Some("3"),
            ),
            (
                "larger than set",
                Some("3"),
                "3",
                valued(Some("1"), &["1", "2"]),
                false,
                Some("3"),
            ),
            (
                "fractional-step-request-not-milli-representable-is-rejected",
                Some(big),
                big,
                r("100m", None, Some("100m")),
                true,
                None,
            ),
        ];
        for (name, req, value, policy, fractional, want) in cases {
            let cap = DeviceCapacity {
                value: q(value),
                policy,
            };
            let got = amount(req.map(q).as_ref(), &cap, fractional);
            match want {
                Some(w) => assert_eq!(got, Ok(q(w)), "{name}"),
                None => assert!(got.unwrap_err().starts_with(NOT_REPRESENTABLE), "{name}"),
            }
        }
        // "fractional-step-rounded-value-passes-milli-range-is-rejected"
        let req = Quantity::from_milli(i64::MAX - 1);
        let cap = DeviceCapacity {
            value: Quantity::from_milli(i64::MAX),
            policy: with_default("100m", r("100m", None, Some("100m"))),
        };
        assert!(
            amount(Some(&req), &cap, true)
                .unwrap_err()
                .contains("milli-value range")
        );
    }

    /// kube's `testViolateCapacityRequestPolicy` table (same file).
    #[test]
    fn amounts_the_policy_does_not_allow_violate_it() {
        let frac = || ranged("200m", range("200m", Some("1"), Some("100m")));
        #[rustfmt::skip]
        let cases: Vec<(&str, &str, Option<RequestPolicy>, bool, bool)> = vec![
            ("no constraint", "1", None, false, false),
            ("less than maximum", "1", ranged("1", range("1", Some("2"), None)), false, false),
            ("more than maximum", "2", ranged("1", range("1", Some("1"), None)), false, true),
            ("in set", "1", valued(Some("1"), &["1"]), false, false),
            ("not in set", "2", valued(Some("1"), &["1"]), false, true),
            ("fractional step aligned (0.3 = min+1*step)", "300m", frac(), true, false),
            ("fractional step not aligned (0.25 is not a multiple of 0.1 from 0.2)", "250m", frac(), true, true),
            ("requested value overflows milli representation", "9224372036854776E3", ranged("1", range("1", None, Some("1"))), true, true),
        ];
        for (name, v, policy, fractional, want) in cases {
            assert_eq!(
                violates_policy(&q(v), policy.as_ref(), fractional),
                want,
                "{name}"
            );
        }
    }

    /// kube's `testUseMilli` table (same file).
    #[test]
    fn thousandths_are_used_where_every_bound_holds_them() {
        let big = "9224372036854776E3";
        for (name, r, fractional, want) in [
            (
                "fractional disabled",
                range("200m", Some("1"), Some("100m")),
                false,
                false,
            ),
            (
                "all fractional, fits in milli",
                range("200m", Some("1"), Some("100m")),
                true,
                true,
            ),
            (
                "all integer, fits in milli",
                range("1", Some("3"), Some("1")),
                true,
                true,
            ),
            (
                "min overflows milli, falls back to integer",
                range(big, None, Some("1")),
                true,
                false,
            ),
            (
                "step too small (sub-milli)",
                range("1", None, Some("0")),
                true,
                false,
            ),
        ] {
            assert_eq!(r.use_milli(fractional), want, "{name}");
        }
    }

    /// kube's `testCmpRequestOverCapacityFatalBeatsSoft` (same file): an unrepresentable
    /// request is an error even where another capacity would only skip the device.
    #[test]
    fn an_unrepresentable_request_beats_a_soft_mismatch() {
        let mut caps = capacity("1", None);
        caps.insert(
            "c1".into(),
            DeviceCapacity {
                value: q("9223372036854775808"),
                policy: Some(RequestPolicy {
                    default: None,
                    valid_values: Vec::new(),
                    valid_range: Some(range("0", None, Some("2"))),
                }),
            },
        );
        let mut requests = ask("2");
        requests.insert("c1".into(), Quantity::from_i64(i64::MAX));
        let err = fits(None, &requests, &caps, None, false).unwrap_err();
        assert!(
            err.starts_with("capacity \"c1\": capacity request cannot"),
            "{err}"
        );
    }

    #[test]
    fn valid_values_round_up_to_the_next_option() {
        let policy = Some(RequestPolicy {
            default: Some(q("1Gi")),
            valid_values: vec![q("1Gi"), q("2Gi"), q("4Gi")],
            valid_range: None,
        });
        let caps = capacity("4Gi", policy);
        let got = consumed_capacity(&ask("1.5Gi"), &caps, true).unwrap();
        assert_eq!(got["bw"], q("2Gi"));
        // Above every option the request stands, and then violates the policy.
        assert!(!fits(None, &ask("5Gi"), &caps, None, true).unwrap());
        assert!(fits(None, &ask("3Gi"), &caps, None, true).unwrap());
    }

    /// The scheduler_perf ConsumableCapacity shape: four shares of 2500M fill 10G.
    #[test]
    fn shares_fit_until_the_capacity_is_used_up() {
        let caps = capacity("10G", ranged("1M", range("1M", None, Some("8"))));
        let share = consumed_capacity(&ask("2500M"), &caps, true).unwrap();
        let mut held = Consumed::new();
        for _ in 0..4 {
            assert!(fits(Some(&held), &ask("2500M"), &caps, None, true).unwrap());
            held.insert(
                "bw".into(),
                held.get("bw")
                    .map_or(share["bw"], |h| h.checked_add(&share["bw"]).unwrap()),
            );
        }
        assert!(!fits(Some(&held), &ask("2500M"), &caps, None, true).unwrap());
        // What this search already takes counts too.
        assert!(!fits(None, &ask("2500M"), &caps, Some(&held), true).unwrap());
        // Asking nothing consumes the default; a capacity the device lacks skips it.
        assert_eq!(
            consumed_capacity(&Consumed::new(), &caps, true).unwrap()["bw"],
            q("1M")
        );
        let other = BTreeMap::from([(Arc::from("memory"), q("1"))]);
        assert!(!fits(None, &other, &caps, None, true).unwrap());
    }

    #[test]
    fn without_a_policy_a_share_consumes_what_it_asks_or_everything() {
        let caps = capacity("8", None);
        assert_eq!(
            consumed_capacity(&ask("3"), &caps, true).unwrap()["bw"],
            q("3")
        );
        assert_eq!(
            consumed_capacity(&Consumed::new(), &caps, true).unwrap()["bw"],
            q("8")
        );
        assert!(!fits(Some(&ask("6")), &ask("3"), &caps, None, true).unwrap());
        assert!(fits(Some(&ask("5")), &ask("3"), &caps, None, true).unwrap());
    }

    #[test]
    fn amounts_off_the_step_or_over_the_max_violate_the_policy() {
        let p = ranged("2", range("2", Some("10"), Some("4"))).unwrap();
        assert!(
            violates_policy(&q("4"), Some(&p), true),
            "thousandths, when every bound holds them"
        );
        assert!(!violates_policy(&q("2"), Some(&p), false));
        assert!(!violates_policy(&q("6"), Some(&p), false));
        assert!(violates_policy(&q("7"), Some(&p), false));
        assert!(violates_policy(&q("14"), Some(&p), false));
        let err = consumed_capacity(&ask("-1"), &capacity("8", None), true).unwrap_err();
        assert_eq!(err, "capacity \"bw\": capacity value is negative");
    }
}
