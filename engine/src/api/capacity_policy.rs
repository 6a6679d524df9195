//! A shared device's capacity request policy (DRAConsumableCapacity; kube v1.37.2
//! `resource.k8s.io/v1` `CapacityRequestPolicy`), converted and validated as kube's API
//! server does (`pkg/apis/resource/validation/validation.go`, `validateRequestPolicy`).
//!
//! A device with `allowMultipleAllocations` may be shared by several claims; each share
//! consumes some of its capacities. The policy says what a share may ask for: `default`
//! when the claim asks nothing, and either a list of `validValues` (ascending, the default
//! among them) or a `validRange` (`min`, optional `max` and `step`; a request rounds up to
//! `min + k * step`). The allocator's arithmetic is in
//! `plugins/dynamic_resources/capacity.rs`.
//!
//! Validation follows kube with DRAFractionalCapacityRange on (its default in v1.37): a
//! range with a fractional bound is checked in thousandths. Messages print the quantities
//! in the canonical form the text was parsed from (kube prints `Quantity.String()`, which
//! is the same for every canonical text, as workload files write them).

use super::convert::{ConvertError, invalid, parse_quantity};
use super::quantity::Quantity;
use k8s_openapi::api::resource::v1 as k;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as KQuantity;

/// kube's `CapacityRequestPolicyDiscreteMaxOptions`.
const MAX_VALID_VALUES: usize = 10;

/// A device's capacity (`DeviceCapacity`).
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceCapacity {
    pub value: Quantity,
    pub policy: Option<RequestPolicy>,
}

/// `CapacityRequestPolicy`.
#[derive(Clone, Debug, PartialEq)]
pub struct RequestPolicy {
    pub default: Option<Quantity>,
    /// Ascending (validated).
    pub valid_values: Vec<Quantity>,
    pub valid_range: Option<ValidRange>,
}

/// `CapacityRequestPolicyRange` (its `min` is required).
#[derive(Clone, Debug, PartialEq)]
pub struct ValidRange {
    pub min: Quantity,
    pub max: Option<Quantity>,
    pub step: Option<Quantity>,
}

impl ValidRange {
    /// kube's `useMilli` with DRAFractionalCapacityRange `fractional`: some bound is not
    /// whole, every bound holds in thousandths, and the step is at least `1m`.
    pub fn use_milli(&self, fractional: bool) -> bool {
        let bounds = [Some(&self.min), self.max.as_ref(), self.step.as_ref()];
        fractional
            && bounds.iter().flatten().all(|q| exact_milli(q).is_some())
            && self.step.as_ref().is_none_or(|s| s.milli_value() >= 1)
    }
}

/// kube's `safeMilliValue`: the value in thousandths when that is exact.
pub fn exact_milli(q: &Quantity) -> Option<i64> {
    let milli = q.milli_value();
    (Quantity::from_milli(milli) == *q).then_some(milli)
}

/// One kube field error, as the conversion reports the first.
fn err(path: &str, field: &str, value: &str, detail: impl Into<String>) -> ConvertError {
    invalid(format!("{path}.{field}"), value, detail)
}

/// Converts and validates the policy of capacity `value` (at `path`, the capacity's
/// `requestPolicy`). `shared`: the device allows multiple allocations (a policy on any
/// other device is forbidden).
pub(crate) fn request_policy(
    p: &k::CapacityRequestPolicy,
    value: &Quantity,
    value_text: &str,
    shared: bool,
    path: &str,
) -> Result<RequestPolicy, ConvertError> {
    if !shared {
        return Err(invalid(
            path.to_string(),
            "",
            "Forbidden: allowMultipleAllocations must be true",
        ));
    }
    let q = |field: &str, v: &KQuantity| parse_quantity(|| format!("{path}.{field}"), v);
    let default = p.default.as_ref().map(|d| q("default", d)).transpose()?;
    let valid_values = p
        .valid_values
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, v)| q(&format!("validValues[{i}]"), v))
        .collect::<Result<Vec<_>, _>>()?;
    // `min` is required by the schema (k8s-openapi refuses a range without it).
    let valid_range = match &p.valid_range {
        None => None,
        Some(r) => Some(ValidRange {
            min: q("validRange.min", &r.min)?,
            max: r.max.as_ref().map(|m| q("validRange.max", m)).transpose()?,
            step: (r.step.as_ref())
                .map(|s| q("validRange.step", s))
                .transpose()?,
        }),
    };
    let policy = RequestPolicy {
        default,
        valid_values,
        valid_range,
    };
    validate(&policy, p, value, value_text, path)?;
    Ok(policy)
}

/// kube's `validateRequestPolicy` (the first error).
fn validate(
    policy: &RequestPolicy,
    p: &k::CapacityRequestPolicy,
    value: &Quantity,
    value_text: &str,
    path: &str,
) -> Result<(), ConvertError> {
    if !policy.valid_values.is_empty() && policy.valid_range.is_some() {
        return Err(invalid(
            path.to_string(),
            "",
            "Forbidden: exactly one policy can be specified, cannot specify \"validValues\" and \"validRange\" at the same time",
        ));
    }
    let text = |o: Option<&KQuantity>| o.map(|q| q.0.clone()).unwrap_or_default();
    if !policy.valid_values.is_empty() {
        let Some(default) = &policy.default else {
            return Err(err(
                path,
                "default",
                "",
                "Required value: required when validValues is defined",
            ));
        };
        let texts: Vec<&str> = p.valid_values.iter().flatten().map(|q| &*q.0).collect();
        return valid_values(
            default,
            &text(p.default.as_ref()),
            &policy.valid_values,
            &texts,
            value,
            value_text,
            path,
        );
    }
    if let Some(range) = &policy.valid_range {
        let Some(default) = &policy.default else {
            return Err(err(
                path,
                "default",
                "",
                "Required value: required when validRange is defined",
            ));
        };
        let r = p.valid_range.as_ref().expect("a range was converted");
        let texts = RangeTexts {
            default: text(p.default.as_ref()),
            min: r.min.0.clone(),
            max: text(r.max.as_ref()),
            step: text(r.step.as_ref()),
            capacity: value_text.to_string(),
        };
        return valid_range(default, range, value, &texts, &format!("{path}.validRange"));
    }
    Ok(())
}

/// kube's `validateRequestPolicyValidValues`.
fn valid_values(
    default: &Quantity,
    default_text: &str,
    values: &[Quantity],
    texts: &[&str],
    capacity: &Quantity,
    capacity_text: &str,
    path: &str,
) -> Result<(), ConvertError> {
    let path = format!("{path}.validValues");
    for i in 1..values.len() {
        if values[i - 1] > values[i] {
            return Err(invalid(
                format!("{path}[{i}]"),
                texts[i],
                "values must be sorted in ascending order",
            ));
        }
    }
    if values.len() > MAX_VALID_VALUES {
        return Err(invalid(
            path,
            "",
            format!(
                "Too many: {}: must have at most {MAX_VALID_VALUES} items",
                values.len()
            ),
        ));
    }
    for (i, v) in values.iter().enumerate() {
        if v > capacity {
            return Err(invalid(
                format!("{path}[{i}]"),
                texts[i],
                format!("option is larger than capacity value: {capacity_text}"),
            ));
        }
        if let Some(j) = values[..i].iter().position(|w| w == v) {
            return Err(invalid(format!("{path}[{i}]"), texts[j], "Duplicate value"));
        }
    }
    if !values.contains(default) {
        return Err(invalid(
            path,
            default_text,
            "default value is not valid according to the requestPolicy",
        ));
    }
    Ok(())
}

/// The quantities' texts, for messages.
struct RangeTexts {
    default: String,
    min: String,
    max: String,
    step: String,
    capacity: String,
}

/// kube's `validateRequestPolicyRange`.
fn valid_range(
    default: &Quantity,
    r: &ValidRange,
    capacity: &Quantity,
    t: &RangeTexts,
    path: &str,
) -> Result<(), ConvertError> {
    if r.min > *capacity {
        return Err(err(
            path,
            "min",
            &t.min,
            format!("min is larger than capacity value: {}", t.capacity),
        ));
    }
    if *default < r.min {
        return Err(err(
            path,
            "default",
            &t.default,
            format!("default is less than min: {}", t.min),
        ));
    }
    if let Some(max) = &r.max {
        if r.min > *max {
            return Err(err(
                path,
                "max",
                &t.min,
                format!("min is larger than max: {}", t.max),
            ));
        }
        if max > capacity {
            return Err(err(
                path,
                "max",
                &t.max,
                format!("max is larger than capacity value: {}", t.capacity),
            ));
        }
        if default > max {
            return Err(err(
                path,
                "default",
                &t.default,
                format!("default is more than max: {}", t.max),
            ));
        }
    }
    // DRAFractionalCapacityRange (on): a fractional bound or default is checked in
    // thousandths, each of them exact there.
    let bounds = [
        ("default", default, &t.default),
        ("min", &r.min, &t.min),
        ("max", r.max.as_ref().unwrap_or(&r.min), &t.max),
        ("step", r.step.as_ref().unwrap_or(&r.min), &t.step),
    ];
    let use_milli = bounds.iter().any(|(_, q, _)| q.is_fractional());
    if use_milli
        && let Some((field, _, text)) = bounds.iter().find(|(_, q, _)| exact_milli(q).is_none())
    {
        return Err(err(
            path,
            field,
            text,
            "value cannot be represented as a milli value",
        ));
    }
    match &r.step {
        Some(step) => valid_step(default, r, step, capacity, t, path, (use_milli, &bounds)),
        None => Ok(()),
    }
}

/// A bound's field name, value and text.
type Bound<'a> = (&'a str, &'a Quantity, &'a String);

/// The step rules of kube's `validateRequestPolicyRange` (`milli`: whether the range is
/// checked in thousandths, and its bounds).
fn valid_step(
    default: &Quantity,
    r: &ValidRange,
    step: &Quantity,
    capacity: &Quantity,
    t: &RangeTexts,
    path: &str,
    (use_milli, bounds): (bool, &[Bound]),
) -> Result<(), ConvertError> {
    if step.is_negative() || step.is_zero() {
        return Err(err(path, "step", &t.step, "must be greater than zero"));
    }
    let one_step = r.min.checked_add(step);
    if one_step.is_none_or(|s| s > *capacity) {
        return Err(err(
            path,
            "step",
            &t.step,
            format!("one step is larger than capacity value: {}", t.capacity),
        ));
    }
    let int_max = Quantity::from_i64(i64::MAX);
    if !use_milli
        && let Some((field, q, text)) =
            (bounds.iter()).find(|(_, q, _)| q.is_negative() || **q > int_max)
    {
        let detail = if q.is_negative() {
            "must be greater than or equal to 0".to_string()
        } else {
            format!("must not be larger than {}", i64::MAX)
        };
        return Err(err(path, field, text, detail));
    }
    let at = |q: &Quantity| {
        if use_milli {
            q.milli_value()
        } else {
            q.value()
        }
    };
    let multiple = |v: &Quantity| (at(v) - at(&r.min)) % at(step) == 0;
    if !multiple(default) {
        return Err(err(
            path,
            "step",
            &t.default,
            format!(
                "value is not a multiple of a given step ({}) from ({})",
                t.step, t.min
            ),
        ));
    }
    if let Some(max) = &r.max
        && !multiple(max)
    {
        return Err(err(
            path,
            "step",
            &t.max,
            format!(
                "value is not a multiple of a given step ({}) from ({})",
                t.step, t.min
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The first error for a capacity of `value` with `policy` (JSON), on a shared device.
    fn error(value: &str, policy: serde_json::Value) -> Option<String> {
        let p: k::CapacityRequestPolicy = serde_json::from_value(policy).unwrap();
        let v = Quantity::parse(value).unwrap();
        request_policy(&p, &v, value, true, "p")
            .err()
            .map(|e| format!("{}: {:?}: {}", e.field, e.value, e.detail))
    }

    /// One case per rule of kube's `validateRequestPolicy` (pkg/apis/resource/validation/
    /// validation.go; its own tables are in validation_device_capacity_test.go); values ours.
    #[test]
    fn policies_are_validated_as_kube_does() {
        for (value, policy, want) in [
            (
                "10G",
                json!({"default": "1G", "validRange": {"min": "1G", "step": "1G"}}),
                None,
            ),
            (
                "10G",
                json!({"default": "1G", "validValues": ["1G", "2G"]}),
                None,
            ),
            (
                "10G",
                json!({"default": "1G", "validValues": ["1G"], "validRange": {"min": "1G"}}),
                Some(
                    "p: \"\": Forbidden: exactly one policy can be specified, cannot specify \"validValues\" and \"validRange\" at the same time",
                ),
            ),
            (
                "10G",
                json!({"validRange": {"min": "1G"}}),
                Some("p.default: \"\": Required value: required when validRange is defined"),
            ),
            (
                "10G",
                json!({"default": "1G", "validValues": ["2G", "1G"]}),
                Some("p.validValues[1]: \"1G\": values must be sorted in ascending order"),
            ),
            (
                "10G",
                json!({"default": "3G", "validValues": ["1G", "2G"]}),
                Some(
                    "p.validValues: \"3G\": default value is not valid according to the requestPolicy",
                ),
            ),
            (
                "1G",
                json!({"default": "1G", "validValues": ["1G", "2G"]}),
                Some("p.validValues[1]: \"2G\": option is larger than capacity value: 1G"),
            ),
            (
                "1G",
                json!({"default": "2G", "validRange": {"min": "2G"}}),
                Some("p.validRange.min: \"2G\": min is larger than capacity value: 1G"),
            ),
            (
                "10G",
                json!({"default": "1G", "validRange": {"min": "2G"}}),
                Some("p.validRange.default: \"1G\": default is less than min: 2G"),
            ),
            (
                "10G",
                json!({"default": "2G", "validRange": {"min": "2G", "max": "20G"}}),
                Some("p.validRange.max: \"20G\": max is larger than capacity value: 10G"),
            ),
            (
                "10G",
                json!({"default": "2G", "validRange": {"min": "2G", "step": "0"}}),
                Some("p.validRange.step: \"0\": must be greater than zero"),
            ),
            (
                "10G",
                json!({"default": "2G", "validRange": {"min": "2G", "max": "9G", "step": "2G"}}),
                Some(
                    "p.validRange.step: \"9G\": value is not a multiple of a given step (2G) from (2G)",
                ),
            ),
            (
                "1",
                json!({"default": "200m", "validRange": {"min": "200m", "step": "100m"}}),
                None,
            ),
        ] {
            assert_eq!(error(value, policy.clone()).as_deref(), want, "{policy}");
        }
        // A policy on a device that is not shared is forbidden.
        let p: k::CapacityRequestPolicy = serde_json::from_value(json!({"default": "1"})).unwrap();
        let e = request_policy(&p, &Quantity::from_i64(1), "1", false, "p").unwrap_err();
        assert_eq!(e.detail, "Forbidden: allowMultipleAllocations must be true");
    }
}
