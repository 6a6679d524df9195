//! DeviceTaintRules (DRADeviceTaintRules): taints an administrator puts on devices without
//! changing the driver's ResourceSlices.
//!
//! kube's scheduler never reads the rules itself: its ResourceSlice tracker
//! (staging/src/k8s.io/dynamic-resource-allocation/resourceslice/tracker/tracker.go) hands
//! it each slice with the taints of every rule that selects the slice's devices appended to
//! theirs, and re-syncs the slices a rule selects when the rule comes, changes or goes. The
//! rules here follow that:
//!
//! - a rule without `deviceSelector` selects no device;
//! - `driver`, `pool` and `device` each narrow the selection when set (all unset: every
//!   device of every slice);
//! - a device's taints are its own, then the rules' in rule-name order. kube appends them in
//!   its informer's list order, which is a map's; the allocator reads the taints as a set,
//!   so only the set matters.

use super::Sym;
use super::dra::{DeviceTaint, ResourceSlice};
use k8s_openapi::api::resource::v1 as k;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A DeviceTaintRule in the scheduler's form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceTaintRule {
    pub name: Arc<str>,
    /// `None`: the rule selects nothing.
    pub selector: Option<TaintSelector>,
    pub taint: DeviceTaint,
}

/// `spec.deviceSelector`: the devices a rule taints (`None` fields match any).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaintSelector {
    pub driver: Option<Sym>,
    pub pool: Option<Sym>,
    pub device: Option<Sym>,
}

/// The rule in the scheduler's form (the store validated it).
pub fn device_taint_rule(r: &k::DeviceTaintRule) -> DeviceTaintRule {
    let s = r.spec.device_selector.as_ref();
    let opt = |v: &Option<String>| v.as_deref().map(Sym::new);
    DeviceTaintRule {
        name: Arc::from(r.metadata.name.as_deref().unwrap_or("")),
        selector: s.map(|s| TaintSelector {
            driver: opt(&s.driver),
            pool: opt(&s.pool),
            device: opt(&s.device),
        }),
        taint: DeviceTaint::from_api(&r.spec.taint),
    }
}

impl DeviceTaintRule {
    /// Whether the rule may taint a device of `slice` (driver and pool match).
    pub fn reaches(&self, slice: &ResourceSlice) -> bool {
        self.selector.as_ref().is_some_and(|s| {
            s.driver.is_none_or(|d| d == slice.driver)
                && s.pool.is_none_or(|p| p == slice.pool_sym)
                && (s.device).is_none_or(|name| slice.devices.iter().any(|d| d.name_sym == name))
        })
    }

    fn selects(&self, device: Sym) -> bool {
        (self.selector.as_ref()).is_some_and(|s| s.device.is_none_or(|d| d == device))
    }
}

/// `slice` as kube's tracker hands it to the scheduler: with the taints of the `rules`
/// (by name) that select its devices. `None` when no rule selects any of its devices, so
/// the caller keeps the slice as the driver wrote it.
pub fn with_taint_rules(
    slice: &ResourceSlice,
    rules: &BTreeMap<Arc<str>, Arc<DeviceTaintRule>>,
) -> Option<ResourceSlice> {
    let reaching: Vec<&DeviceTaintRule> = rules
        .values()
        .filter(|r| r.reaches(slice))
        .map(|r| &**r)
        .collect();
    if reaching.is_empty() {
        return None;
    }
    let mut patched = slice.clone();
    for device in &mut patched.devices {
        for r in &reaching {
            if r.selects(device.name_sym) {
                device.taints.push(r.taint.clone());
            }
        }
    }
    Some(patched)
}

#[cfg(test)]
mod tests {
    //! The rule matching of kube's tracker (`applyPatches` in
    //! staging/src/k8s.io/dynamic-resource-allocation/resourceslice/tracker/tracker.go).
    use super::*;
    use crate::api::dra::resource_slice;
    use serde_json::json;

    fn slice(driver: &str, pool: &str, devices: &[&str]) -> ResourceSlice {
        let devices: Vec<_> = devices.iter().map(|d| json!({"name": d})).collect();
        let s: k::ResourceSlice = serde_json::from_value(json!({
            "metadata": {"name": format!("{driver}-{pool}")},
            "spec": {"driver": driver, "nodeName": "n", "devices": devices,
                     "pool": {"name": pool, "generation": 1, "resourceSliceCount": 1}}
        }))
        .unwrap();
        let mut s = resource_slice(&s).unwrap();
        s.devices[0].taints.push(taint("own"));
        s
    }

    fn taint(key: &str) -> DeviceTaint {
        DeviceTaint {
            key: key.into(),
            value: "".into(),
            effect: "NoSchedule".into(),
        }
    }

    fn rule(name: &str, selector: Option<serde_json::Value>) -> (Arc<str>, Arc<DeviceTaintRule>) {
        let r: k::DeviceTaintRule = serde_json::from_value(json!({
            "metadata": {"name": name},
            "spec": {"deviceSelector": selector,
                     "taint": {"key": name, "effect": "NoSchedule"}}
        }))
        .unwrap();
        (name.into(), Arc::new(device_taint_rule(&r)))
    }

    fn keys(s: &ResourceSlice) -> Vec<Vec<String>> {
        (s.devices.iter())
            .map(|d| d.taints.iter().map(|t| t.key.to_string()).collect())
            .collect()
    }

    #[test]
    fn a_rule_without_a_selector_taints_nothing() {
        let rules = BTreeMap::from([rule("r", None)]);
        assert_eq!(with_taint_rules(&slice("d", "p", &["a"]), &rules), None);
    }

    #[test]
    fn an_empty_selector_taints_every_device_after_its_own_taints() {
        let rules = BTreeMap::from([rule("r", Some(json!({})))]);
        let s = with_taint_rules(&slice("d", "p", &["a", "b"]), &rules).unwrap();
        assert_eq!(keys(&s), [vec!["own", "r"], vec!["r"]]);
    }

    #[test]
    fn driver_pool_and_device_each_narrow_the_selection() {
        let s = slice("d", "p", &["a", "b"]);
        let cases = [
            (
                json!({"driver": "d"}),
                Some(vec![vec!["own", "r"], vec!["r"]]),
            ),
            (json!({"driver": "e"}), None),
            (
                json!({"pool": "p"}),
                Some(vec![vec!["own", "r"], vec!["r"]]),
            ),
            (json!({"pool": "q"}), None),
            (json!({"device": "b"}), Some(vec![vec!["own"], vec!["r"]])),
            (json!({"device": "c"}), None),
            (json!({"driver": "d", "pool": "q", "device": "b"}), None),
            (
                json!({"driver": "d", "pool": "p", "device": "b"}),
                Some(vec![vec!["own"], vec!["r"]]),
            ),
        ];
        for (sel, want) in cases {
            let rules = BTreeMap::from([rule("r", Some(sel.clone()))]);
            let got = with_taint_rules(&s, &rules).map(|p| keys(&p));
            let want = want.map(|w| {
                w.into_iter()
                    .map(|d| d.into_iter().map(String::from).collect())
                    .collect::<Vec<Vec<String>>>()
            });
            assert_eq!(got, want, "selector {sel}");
        }
    }

    #[test]
    fn several_rules_add_their_taints_in_name_order() {
        let rules = BTreeMap::from([
            rule("z", Some(json!({"device": "a"}))),
            rule("m", Some(json!({}))),
        ]);
        let s = with_taint_rules(&slice("d", "p", &["a"]), &rules).unwrap();
        assert_eq!(keys(&s), [vec!["own", "m", "z"]]);
    }
}
