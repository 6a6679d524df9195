//! The registry of kinds: one table, [`KINDS`], naming every kind the store keeps through its
//! generic shape ([`super::generic`]), each defined in its API group's file as kube's
//! `pkg/registry/<group>/<kind>` defines its strategy, and [`lookup`]. Adding a kind is adding
//! its [`Kind`] (`kind.rs` holds its shape) to its group's file (or a new file) and one line to
//! [`KINDS`]. Pods, nodes and namespaces have their own stores (`core/`): they are converted for
//! the scheduler.
//!
//! Also here, what needs the table: a Rust type's kind ([`StoredObject::new`] and the
//! store's typed access: [`Store::get`], [`Store::list`], [`Store::create`],
//! [`Store::update`]), the run summary's counts ([`Store::object_counts`]) and the replay to a
//! newly attached scheduler. The kinds' files sit below this table, so only the parent
//! (`mod.rs`) and files outside this folder import it.

use super::generic::{StoredObject, Subresource, key_of};
use super::kind::{Kind, KubeObject, KubeType};
use super::{Store, StoreError};
use super::{core, policy, resource, scheduling, storage};
use std::any::Any;
use std::sync::Arc;
use tidegate_engine::ActionType;
use tidegate_engine::ApiObject;

/// Every kind stored through the generic shape.
pub static KINDS: &[&Kind] = &[
    &core::service::SERVICE,
    &core::config::CONFIG_MAP,
    &core::config::SECRET,
    &core::config::SERVICE_ACCOUNT,
    &core::config::LIMIT_RANGE,
    &core::config::RESOURCE_QUOTA,
    &core::volume::PERSISTENT_VOLUME,
    &core::volume::PERSISTENT_VOLUME_CLAIM,
    &policy::POD_DISRUPTION_BUDGET,
    &storage::STORAGE_CLASS,
    &storage::CSI_NODE,
    &storage::CSI_DRIVER,
    &storage::CSI_STORAGE_CAPACITY,
    &storage::VOLUME_ATTACHMENT,
    &resource::DEVICE_CLASS,
    &resource::RESOURCE_SLICE,
    &resource::RESOURCE_CLAIM,
    &resource::RESOURCE_CLAIM_TEMPLATE,
    &resource::DEVICE_TAINT_RULE,
    &scheduling::PRIORITY_CLASS,
    &scheduling::POD_GROUP,
    &scheduling::WORKLOAD,
    &scheduling::COMPOSITE_POD_GROUP,
];

/// The registered kind named `kind`.
pub fn lookup(kind: &str) -> Option<&'static Kind> {
    KINDS.iter().copied().find(|k| k.kind == kind)
}

impl StoredObject {
    /// A typed object of a registered kind and version.
    pub fn new<T: KubeType>(obj: T) -> Result<StoredObject, StoreError> {
        let kind = lookup(T::KIND)
            .filter(|k| k.group == T::GROUP && k.version(T::API_VERSION).is_some())
            .ok_or_else(|| {
                StoreError::Invalid(format!(
                    "no matches for kind {:?} in version {:?}",
                    T::KIND,
                    T::API_VERSION
                ))
            })?;
        Ok(StoredObject {
            kind,
            obj: Arc::new(obj),
        })
    }
}

impl Store {
    /// The object `name` of `T`'s kind, as a `T`.
    pub fn get<T: KubeType>(&self, namespace: &str, name: &str) -> Option<Arc<T>> {
        let kind = lookup(T::KIND)?;
        typed(self.kind_store(kind).get(&key_of(kind, namespace, name))?)
    }

    /// Every object of `T`'s kind (in `namespace`, if given), as `T`s, sorted.
    pub fn list<T: KubeType>(&self, namespace: Option<&str>) -> Vec<Arc<T>> {
        lookup(T::KIND).map_or_else(Vec::new, |kind| {
            self.list_objects(kind, namespace)
                .into_iter()
                .filter_map(typed)
                .collect()
        })
    }

    /// Creates a typed object (see [`Store::create_object`]).
    pub fn create<T: KubeType>(&self, obj: T, namespace: &str) -> Result<String, StoreError> {
        self.create_object(&StoredObject::new(obj)?, namespace)
    }

    /// PUT of a typed object (see [`Store::update_object`]).
    pub fn update<T: KubeType>(
        &self,
        obj: T,
        namespace: &str,
        sub: Subresource,
    ) -> Result<(), StoreError> {
        self.update_object(&StoredObject::new(obj)?, namespace, sub)
    }

    /// Objects of every registered kind with their count, for the run summary: `(kind, n)`
    /// for each kind that has objects.
    pub fn object_counts(&self) -> Vec<(&'static str, usize)> {
        KINDS
            .iter()
            .map(|k| (k.kind, self.kind_store(k).len()))
            .filter(|(_, n)| *n > 0)
            .collect()
    }

    /// Replays every stored object of a watched kind to a newly attached scheduler as an add
    /// (an informer's initial list).
    pub(super) fn replay_objects(&self, s: &tidegate_engine::Scheduler) {
        for kind in KINDS {
            let Some(resource) = kind.event else {
                continue;
            };
            for o in self.list_objects(kind, None) {
                if let Some(handler) = kind.scheduler_handler {
                    handler(s, None, Some(&o));
                    continue;
                }
                let any = ApiObject(o as Arc<dyn Any + Send + Sync>);
                s.on_object_event(resource, ActionType::ADD, None, Some(any));
            }
        }
    }
}

/// A stored object as `T`: itself when stored as `T`, else converted through its JSON (an
/// object created in another served version of the kind).
fn typed<T: KubeType>(o: Arc<dyn KubeObject>) -> Option<Arc<T>> {
    let any: Arc<dyn Any + Send + Sync> = o.clone();
    any.downcast::<T>().ok().or_else(|| {
        let mut json = o.to_json();
        json["apiVersion"] = serde_json::Value::from(T::API_VERSION);
        serde_json::from_value(json).ok().map(Arc::new)
    })
}
