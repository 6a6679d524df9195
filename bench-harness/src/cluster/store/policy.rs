//! PodDisruptionBudgets, policy/v1 (kube's `pkg/registry/policy/poddisruptionbudget`):
//! stored as plain objects; a watch handler keeps the converted budgets DefaultPreemption reads
//! (kube's PDB lister), in creation order.

use crate::cluster::store::generic::{Handler, WatchEvent};
use crate::cluster::store::kind::{Kind, KubeObject, Version, check, decode};
use k8s_openapi::api::policy::v1 as policy;
use parking_lot::RwLock;
use serde_json::Value;
use std::sync::Arc;
use tidegate_engine::api::{PodDisruptionBudget, convert};

/// The converted budgets, in creation order.
pub(crate) type Budgets = Arc<RwLock<Vec<Arc<PodDisruptionBudget>>>>;

/// The budget must convert (its selector and its minAvailable/maxUnavailable).
fn validate(obj: &Value) -> Vec<(String, String)> {
    let Ok(pdb) = serde_json::from_value::<policy::PodDisruptionBudget>(obj.clone()) else {
        return Vec::new();
    };
    match convert::pod_disruption_budget(&pdb) {
        Ok(_) => Vec::new(),
        Err(e) => vec![(
            e.field.clone(),
            format!("Invalid value: {:?}: {}", e.value, e.detail),
        )],
    }
}

pub static POD_DISRUPTION_BUDGET: Kind = Kind {
    kind: "PodDisruptionBudget",
    group: "policy",
    resource: "poddisruptionbudgets.policy",
    versions: &[Version {
        version: "v1",
        decode: decode::<policy::PodDisruptionBudget>,
    }],
    namespaced: true,
    status: true,
    unconditional_update: false,
    immutable: &[],
    validate,
    needs_plugin: check::no_plugin,
    gated: check::ungated,
    scheduler_handler: None,
    event: None,
    indexes: &[],
};

/// A stored budget, converted (namespace and name set by the store).
fn converted(o: &Arc<dyn KubeObject>) -> Option<Arc<PodDisruptionBudget>> {
    let pdb: policy::PodDisruptionBudget = serde_json::from_value(o.to_json()).ok()?;
    convert::pod_disruption_budget(&pdb).ok().map(Arc::new)
}

/// The watch handler that keeps `budgets` in step with the stored PodDisruptionBudgets.
pub(crate) fn lister(budgets: Budgets) -> Handler {
    Arc::new(move |ev: &WatchEvent<'_>| {
        let mut all = budgets.write();
        let same = |p: &PodDisruptionBudget, o: &Arc<dyn KubeObject>| {
            let m = o.meta();
            Some(&*p.name) == m.name.as_deref()
                && Some(p.namespace.to_string_lossy().as_str()) == m.namespace.as_deref()
        };
        match ev {
            WatchEvent::Added(o) => all.extend(converted(o)),
            WatchEvent::Modified { new, .. } => {
                let Some(c) = converted(new) else {
                    return;
                };
                match all.iter_mut().find(|p| same(p, new)) {
                    Some(p) => *p = c,
                    None => all.push(c),
                }
            }
            WatchEvent::Deleted(o) => all.retain(|p| !same(p, o)),
        }
    })
}
