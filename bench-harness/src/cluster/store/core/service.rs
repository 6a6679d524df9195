//! Services (kube's `pkg/registry/core/service`): stored as plain objects; a watch handler
//! keeps the scheduler's view of them (kube's Service lister): each namespace's Services in
//! creation order with their selectors, which PodTopologySpread's system default constraints
//! read (kube's `helper.DefaultSelector`, in `client.rs`).

use crate::cluster::store::generic::{Handler, WatchEvent};
use crate::cluster::store::kind::{Kind, KubeObject, Version, check, decode};
use ahash::AHashMap;
use k8s_openapi::api::core::v1 as core;
use parking_lot::RwLock;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
use tidegate_engine::api::LabelSelector;
use tidegate_engine::api::Sym;

/// A Service as the scheduler reads it.
pub(crate) struct ServiceRec {
    pub(crate) name: String,
    /// `spec.selector` as a label set, and as a selector for matching pods (None: a Service
    /// without a selector, which selects nothing).
    pub(crate) selector: Option<(BTreeMap<String, String>, LabelSelector)>,
}

/// The Services of each namespace, in creation order.
pub(crate) type Services = Arc<RwLock<AHashMap<Sym, Vec<ServiceRec>>>>;

/// `spec.selector` as a label set, if the Service has one.
fn selector_set(obj: &Value) -> Option<BTreeMap<String, String>> {
    serde_json::from_value(check::at(obj, "spec.selector")?.clone()).ok()
}

/// The selector must be a valid label selector (kube validates its keys and values).
fn validate(obj: &Value) -> Vec<(String, String)> {
    match selector_set(obj).map(crate::cluster::store::selector_of) {
        Some(Err(e)) => vec![(e.field.clone(), e.detail.clone())],
        _ => Vec::new(),
    }
}

pub static SERVICE: Kind = Kind {
    kind: "Service",
    group: "",
    resource: "services",
    versions: &[Version {
        version: "v1",
        decode: decode::<core::Service>,
    }],
    namespaced: true,
    status: true,
    unconditional_update: true,
    immutable: &[],
    validate,
    needs_plugin: check::no_plugin,
    gated: check::ungated,
    scheduler_handler: None,
    // kube's scheduler has no Service informer: Services reach it through the lister only.
    event: None,
    indexes: &[],
};

/// The record of a stored Service.
fn record(o: &Arc<dyn KubeObject>) -> (Sym, ServiceRec) {
    let json = o.to_json();
    let selector = selector_set(&json).and_then(|set| {
        let sel = crate::cluster::store::selector_of(set.clone()).ok()?;
        Some((set, sel))
    });
    let m = o.meta();
    (
        Sym::new(m.namespace.as_deref().unwrap_or_default()),
        ServiceRec {
            name: m.name.clone().unwrap_or_default(),
            selector,
        },
    )
}

/// The watch handler that keeps `services` in step with the stored Services.
pub(crate) fn lister(services: Services) -> Handler {
    Arc::new(move |ev: &WatchEvent<'_>| {
        let mut all = services.write();
        match ev {
            WatchEvent::Added(o) => {
                let (ns, rec) = record(o);
                all.entry(ns).or_default().push(rec);
            }
            WatchEvent::Modified { new, .. } => {
                let (ns, rec) = record(new);
                let list = all.entry(ns).or_default();
                match list.iter_mut().find(|r| r.name == rec.name) {
                    Some(r) => *r = rec,
                    None => list.push(rec),
                }
            }
            WatchEvent::Deleted(o) => {
                let (ns, rec) = record(o);
                if let Some(list) = all.get_mut(&ns) {
                    list.retain(|r| r.name != rec.name);
                }
            }
        }
    })
}
