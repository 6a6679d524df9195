//! The generic shape of a stored kind (kube's `genericregistry.Store`): one `KindStore` per
//! registered kind (`mod.rs` builds them from [`super::registry::KINDS`]), with create, update
//! (resourceVersion checked), delete (finalizers honoured), get and list by kind, watch
//! handlers and indexes, and the scheduler's event for each change as kube's informers deliver
//! it. The shape of a kind and of its objects is `kind.rs`'s; the access by Rust type (which
//! looks the type's kind up in the table) is `registry.rs`'s: this file takes a [`Kind`] and
//! never reads the table, which names the kinds' files that build on it.
//!
//! Protocol and invariants:
//! - Objects are keyed by `(namespace, name)` (`""` for cluster-scoped kinds) and listed in
//!   that order.
//! - Every write takes the kind's writer lock for its whole length, delivery included, so the
//!   watch handlers and the scheduler see one kind's events in the order of the writes. The
//!   objects themselves sit behind a separate lock held only while the map changes, so a reader
//!   (a lister, a hint reading the kind) never waits for a delivery.
//! - Lock order: a kind's writer lock, then the store's state lock (names, namespaces, the
//!   resourceVersion counter), each released before the kind's data lock is taken. Handlers
//!   run under the writer lock: they may read any kind but must not write the kind they watch.
//! - resourceVersions come from the one counter pods and nodes use (an etcd revision): every
//!   write bumps it. A write carrying a resourceVersion that is not the stored one fails with
//!   kube's Conflict; one carrying none is unconditional where the kind allows it (kube's
//!   `AllowUnconditionalUpdate`), else invalid.
//! - A create sets uid, resourceVersion and generation 1, and drops the status of a kind with
//!   a status subresource. A PUT keeps what the server manages (uid, creation and deletion
//!   timestamps, generation, unless the object outside metadata and status changed) and, for
//!   such kinds, the stored status; a PUT of `/status` changes only the status.
//! - A delete removes the object, unless it has finalizers: then it gets a deletionTimestamp and
//!   stays until an update empties its finalizers (no kind stored here deletes gracefully).

use super::kind::{Kind, KubeObject};
use super::{Store, StoreError};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use parking_lot::{Mutex, RwLock};
use std::any::Any;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use tidegate_engine::ActionType;
use tidegate_engine::ApiObject;

/// A decoded object and its kind, ready to store (what `createAny` and `updateAny` hold).
#[derive(Clone, Debug)]
pub struct StoredObject {
    pub kind: &'static Kind,
    pub obj: Arc<dyn KubeObject>,
}

/// A change, as a watch handler sees it.
pub enum WatchEvent<'a> {
    Added(&'a Arc<dyn KubeObject>),
    Modified {
        old: &'a Arc<dyn KubeObject>,
        new: &'a Arc<dyn KubeObject>,
    },
    Deleted(&'a Arc<dyn KubeObject>),
}

/// A watch handler (kube's `ResourceEventHandler`), called for every change of its kind.
pub type Handler = Arc<dyn Fn(&WatchEvent<'_>) + Send + Sync>;

type ObjectKey = (String, String);

/// One kind's objects and indexes.
struct Objects {
    objects: BTreeMap<ObjectKey, Arc<dyn KubeObject>>,
    /// Per index of the kind: key → objects filed under it.
    indexes: Vec<BTreeMap<String, BTreeSet<ObjectKey>>>,
    /// Objects ever created and ever removed (a deletion held by finalizers counts when the
    /// object goes): `created = deleted + objects.len()`.
    created: u64,
    deleted: u64,
}

/// One kind's store.
pub(crate) struct KindStore {
    kind: &'static Kind,
    /// Serializes writes and their delivery (see the module doc).
    writer: Mutex<()>,
    data: RwLock<Objects>,
    handlers: RwLock<Vec<Handler>>,
}

impl KindStore {
    pub(crate) fn new(kind: &'static Kind) -> KindStore {
        KindStore {
            kind,
            writer: Mutex::new(()),
            data: RwLock::new(Objects {
                objects: BTreeMap::new(),
                indexes: vec![BTreeMap::new(); kind.indexes.len()],
                created: 0,
                deleted: 0,
            }),
            handlers: RwLock::new(Vec::new()),
        }
    }

    pub(super) fn get(&self, key: &ObjectKey) -> Option<Arc<dyn KubeObject>> {
        self.data.read().objects.get(key).cloned()
    }

    /// Objects of the kind ever created and ever removed.
    pub(super) fn created_deleted(&self) -> (u64, u64) {
        let d = self.data.read();
        (d.created, d.deleted)
    }

    /// How many objects the kind has.
    pub(super) fn len(&self) -> usize {
        self.data.read().objects.len()
    }

    /// Stores `obj` at `key` (None: removes it), refiling it in every index.
    fn put(&self, key: &ObjectKey, obj: Option<&Arc<dyn KubeObject>>) {
        self.put_json(key, obj, None);
    }

    /// [`Self::put`] with the JSON of the object stored now and of `obj`, when the caller
    /// has them (the indexes read them).
    fn put_json(
        &self,
        key: &ObjectKey,
        obj: Option<&Arc<dyn KubeObject>>,
        json: Option<(&serde_json::Value, Option<&serde_json::Value>)>,
    ) {
        let mut d = self.data.write();
        let old = match obj {
            Some(o) => d.objects.insert(key.clone(), o.clone()),
            None => d.objects.remove(key),
        };
        match (&old, obj) {
            (None, Some(_)) => d.created += 1,
            (Some(_), None) => d.deleted += 1,
            _ => {}
        }
        if self.kind.indexes.is_empty() {
            return;
        }
        let (old_json, new_json) = match json {
            Some((o, n)) => (
                old.is_some().then_some(Cow::Borrowed(o)),
                n.map(Cow::Borrowed),
            ),
            None => (
                old.map(|o| Cow::Owned(o.to_json())),
                obj.map(|o| Cow::Owned(o.to_json())),
            ),
        };
        for (i, ix) in self.kind.indexes.iter().enumerate() {
            for k in old_json.iter().flat_map(|j| (ix.keys)(j)) {
                if let Some(set) = d.indexes[i].get_mut(&k) {
                    set.remove(key);
                    if set.is_empty() {
                        d.indexes[i].remove(&k);
                    }
                }
            }
            for k in new_json.iter().flat_map(|j| (ix.keys)(j)) {
                d.indexes[i].entry(k).or_default().insert(key.clone());
            }
        }
    }
}

/// Which part of an object a PUT writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subresource {
    /// The object (its status kept, for kinds with a status subresource).
    Main,
    /// `/status`: only the status.
    Status,
}

/// The key of `name` of `kind` in `namespace`.
pub(super) fn key_of(kind: &Kind, namespace: &str, name: &str) -> ObjectKey {
    let ns = if kind.namespaced { namespace } else { "" };
    (ns.to_string(), name.to_string())
}

/// `obj` decoded again after a change of its JSON (as the version it was decoded from).
fn redecode(
    kind: &Kind,
    obj: &Arc<dyn KubeObject>,
    json: serde_json::Value,
) -> Result<Box<dyn KubeObject>, StoreError> {
    let api_version = json
        .get("apiVersion")
        .and_then(|v| v.as_str())
        .unwrap_or_default();
    let v = kind
        .version(api_version)
        .ok_or_else(|| StoreError::Invalid(format!("{:?}: no version {api_version:?}", obj)))?;
    (v.decode)(&json).map_err(|e| {
        StoreError::Invalid(format!(
            "{} is invalid: {}: {}",
            kind.kind, e.field, e.message
        ))
    })
}

/// Whether two objects differ outside metadata and status (what bumps the generation).
fn body_differs(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    let outside = |k: &String| k != "metadata" && k != "status";
    match (a.as_object(), b.as_object()) {
        (Some(a), Some(b)) => {
            a.keys().filter(|k| outside(k)).count() != b.keys().filter(|k| outside(k)).count()
                || a.iter()
                    .filter(|(k, _)| outside(k))
                    .any(|(k, v)| b.get(k) != Some(v))
        }
        _ => a != b,
    }
}

/// kube's "X is invalid: a, b".
fn invalid(kind: &Kind, name: &str, errs: &[(String, String)]) -> StoreError {
    let list: Vec<String> = errs.iter().map(|(f, m)| format!("{f}: {m}")).collect();
    StoreError::Invalid(format!(
        "{} {name:?} is invalid: {}",
        kind.kind,
        list.join(", ")
    ))
}

impl Store {
    pub(super) fn kind_store(&self, kind: &Kind) -> &KindStore {
        self.kinds
            .get(kind.kind)
            .expect("every registered kind has a store")
    }

    /// Adds a watch handler to `kind`: it sees every later change (kube's informer handler).
    pub fn watch(&self, kind: &str, handler: Handler) -> Result<(), StoreError> {
        let k = self
            .kinds
            .get(kind)
            .ok_or_else(|| StoreError::Invalid(format!("no kind {kind:?} is stored")))?;
        k.handlers.write().push(handler);
        Ok(())
    }

    /// Tells the handlers and the scheduler (`action`: ADD, UPDATE or DELETE).
    fn deliver(&self, ks: &KindStore, ev: &WatchEvent<'_>) {
        for h in ks.handlers.read().iter() {
            h(ev);
        }
        let (Some(resource), Some(s)) = (ks.kind.event, self.sched()) else {
            return;
        };
        if let Some(handler) = ks.kind.scheduler_handler {
            let (old, new) = match ev {
                WatchEvent::Added(o) => (None, Some(*o)),
                WatchEvent::Modified { old, new } => (Some(*old), Some(*new)),
                WatchEvent::Deleted(o) => (Some(*o), None),
            };
            handler(&s, old, new);
            return;
        }
        let any =
            |o: &Arc<dyn KubeObject>| Some(ApiObject(o.clone() as Arc<dyn Any + Send + Sync>));
        let (action, old, new) = match ev {
            WatchEvent::Added(o) => (ActionType::ADD, None, any(o)),
            WatchEvent::Modified { old, new } => (ActionType::UPDATE, any(old), any(new)),
            WatchEvent::Deleted(o) => (ActionType::DELETE, any(o), None),
        };
        s.on_object_event(resource, action, old, new);
    }

    /// Creates an object of a registered kind (`createAny`, `churn`) in `namespace` (ignored
    /// for cluster-scoped kinds; created if missing). Returns its name.
    pub fn create_object(&self, o: &StoredObject, namespace: &str) -> Result<String, StoreError> {
        let kind = o.kind;
        let ks = self.kind_store(kind);
        let mut json = o.obj.to_json();
        let shown = o.obj.meta().name.clone().unwrap_or_default();
        let mut errs = (kind.gated)(&mut json, None, &self.api_gates());
        errs.extend((kind.validate)(&json));
        if !errs.is_empty() {
            return Err(invalid(kind, &shown, &errs));
        }
        if o.obj
            .meta()
            .resource_version
            .as_deref()
            .is_some_and(|v| !v.is_empty())
        {
            return Err(invalid(
                kind,
                &shown,
                &[(
                    "metadata.resourceVersion".into(),
                    "resourceVersion should not be set on objects to be created".into(),
                )],
            ));
        }
        let _w = ks.writer.lock();
        let ns = if kind.namespaced { namespace } else { "" };
        let (name, rv, uid) = {
            let mut st = self.state.lock();
            if kind.namespaced {
                self.ensure_namespace(&mut st, ns);
            }
            let name = Self::name_for(&mut st, o.obj.meta(), |_, n| {
                ks.data.read().objects.contains_key(&key_of(kind, ns, n))
            })?;
            if ks.get(&key_of(kind, ns, &name)).is_some() {
                return Err(StoreError::AlreadyExists {
                    kind: kind.resource,
                    name,
                });
            }
            st.rv += 1;
            st.object_uid += 1;
            (name, st.rv, format!("uid-obj-{:08}", st.object_uid))
        };
        if kind.status
            && let Some(m) = json.as_object_mut()
        {
            m.remove("status");
        }
        let mut obj = redecode(kind, &o.obj, json)?;
        let meta = obj.meta_mut();
        meta.name = Some(name.clone());
        meta.namespace = kind.namespaced.then(|| ns.to_string());
        meta.uid = Some(uid);
        meta.resource_version = Some(rv.to_string());
        meta.generation = Some(1);
        meta.deletion_timestamp = None;
        let obj: Arc<dyn KubeObject> = Arc::from(obj);
        ks.put(&key_of(kind, ns, &name), Some(&obj));
        self.deliver(ks, &WatchEvent::Added(&obj));
        drop(_w);
        for w in self.watchers() {
            w.object_added(self, &obj);
        }
        self.after_volume_write(kind, ns, &name);
        Ok(name)
    }

    /// PUT of an object of a registered kind (`updateAny`): of the object, or of its
    /// `/status`. The object must exist; a resourceVersion it carries must be the stored one.
    pub fn update_object(
        &self,
        o: &StoredObject,
        namespace: &str,
        sub: Subresource,
    ) -> Result<(), StoreError> {
        let kind = o.kind;
        let ks = self.kind_store(kind);
        if sub == Subresource::Status && !kind.status {
            return Err(StoreError::Invalid(format!(
                "the server could not find the requested resource ({} has no status \
                 subresource, which updateAny writes after the object, as upstream does)",
                kind.resource
            )));
        }
        let name = o
            .obj
            .meta()
            .name
            .clone()
            .filter(|n| !n.is_empty())
            .ok_or_else(|| StoreError::Invalid("metadata.name: Required value".into()))?;
        let _w = ks.writer.lock();
        let key = key_of(kind, namespace, &name);
        let old = ks.get(&key).ok_or_else(|| StoreError::NotFound {
            kind: kind.resource,
            name: name.clone(),
        })?;
        let rv = (o.obj.meta().resource_version.as_deref()).filter(|v| !v.is_empty());
        if rv.is_none() && !kind.unconditional_update {
            return Err(invalid(
                kind,
                &name,
                &[(
                    "metadata.resourceVersion".into(),
                    "Invalid value: 0: must be specified for an update".into(),
                )],
            ));
        }
        if let Some(rv) = rv
            && Some(rv) != old.meta().resource_version.as_deref()
        {
            return Err(StoreError::Conflict {
                resource: kind.resource,
                name,
            });
        }
        let (old_json, given) = (old.to_json(), o.obj.to_json());
        let json = match sub {
            Subresource::Main => {
                let mut j = given;
                if let (true, Some(m)) = (kind.status, j.as_object_mut()) {
                    match old_json.get("status") {
                        Some(s) => m.insert("status".into(), s.clone()),
                        None => m.remove("status"),
                    };
                }
                j
            }
            Subresource::Status => {
                let mut j = old_json.clone();
                if let Some(m) = j.as_object_mut() {
                    match given.get("status") {
                        Some(s) => m.insert("status".into(), s.clone()),
                        None => m.remove("status"),
                    };
                }
                j
            }
        };
        let mut json = json;
        let mut errs = (kind.gated)(&mut json, Some(&old_json), &self.api_gates());
        errs.extend((kind.validate)(&json));
        for f in kind.immutable {
            if json.get(*f) != old_json.get(*f) {
                let shown = json.get(*f).cloned().unwrap_or_default();
                errs.push((
                    f.to_string(),
                    format!("Invalid value: {shown}: field is immutable"),
                ));
            }
        }
        if !errs.is_empty() {
            return Err(invalid(kind, &name, &errs));
        }
        let bump = body_differs(&json, &old_json);
        let mut new = redecode(kind, &o.obj, json)?;
        let (om, nm) = (old.meta(), new.meta_mut());
        nm.namespace = om.namespace.clone();
        nm.uid = om.uid.clone();
        nm.creation_timestamp = om.creation_timestamp.clone();
        nm.deletion_timestamp = om.deletion_timestamp.clone();
        nm.deletion_grace_period_seconds = om.deletion_grace_period_seconds;
        nm.generation = om.generation.map(|g| g + i64::from(bump));
        nm.resource_version = om.resource_version.clone();
        let new_json = new.to_json();
        if new_json == old_json {
            // kube's storage writes nothing for an update that changes nothing: no new
            // resourceVersion, no event (updateAny's status PUT of an unchanged status).
            return Ok(());
        }
        self.commit_update(ks, &key, &old, (old_json, new_json), new);
        drop(_w);
        self.after_volume_write(kind, namespace, &name);
        Ok(())
    }

    /// scheduler_perf's fake PV controller sees every volume added or updated.
    fn after_volume_write(&self, kind: &'static Kind, namespace: &str, name: &str) {
        if kind.resource == "persistentvolumes"
            && let Some(pv) =
                self.get::<k8s_openapi::api::core::v1::PersistentVolume>(namespace, name)
        {
            self.sync_fake_pv_controller(&pv);
        }
    }

    /// The end of [`Self::update_object`]: `new` (with `jsons`: the stored object's JSON and
    /// its own) stored at `key` under a new resourceVersion, or deleted when it was marked for
    /// deletion and has no finalizer left, and the event delivered. The caller holds the
    /// kind's writer lock.
    fn commit_update(
        &self,
        ks: &KindStore,
        key: &ObjectKey,
        old: &Arc<dyn KubeObject>,
        jsons: (serde_json::Value, serde_json::Value),
        mut new: Box<dyn KubeObject>,
    ) {
        let (old_json, mut new_json) = jsons;
        let rv = {
            let mut st = self.state.lock();
            st.rv += 1;
            st.rv
        };
        let nm = new.meta_mut();
        nm.resource_version = Some(rv.to_string());
        if let Some(m) = new_json.get_mut("metadata").and_then(|m| m.as_object_mut()) {
            m.insert("resourceVersion".into(), rv.to_string().into());
        }
        let finalized =
            nm.deletion_timestamp.is_some() && nm.finalizers.as_ref().is_none_or(|f| f.is_empty());
        let new: Arc<dyn KubeObject> = Arc::from(new);
        if finalized {
            // kube's registry deletes an object marked for deletion once its last finalizer
            // is gone.
            ks.put_json(key, None, Some((&old_json, None)));
            self.deliver(ks, &WatchEvent::Deleted(&new));
        } else {
            ks.put_json(key, Some(&new), Some((&old_json, Some(&new_json))));
            self.deliver(ks, &WatchEvent::Modified { old, new: &new });
        }
    }

    /// Deletes an object of a registered kind; one with finalizers only gets a
    /// deletionTimestamp. False if there is none.
    pub fn delete_object(&self, kind: &'static Kind, namespace: &str, name: &str) -> bool {
        let ks = self.kind_store(kind);
        let _w = ks.writer.lock();
        let key = key_of(kind, namespace, name);
        let Some(old) = ks.get(&key) else {
            return false;
        };
        if old.meta().deletion_timestamp.is_some() {
            return true;
        }
        let rv = {
            let mut st = self.state.lock();
            st.rv += 1;
            st.rv
        };
        if old
            .meta()
            .finalizers
            .as_ref()
            .is_some_and(|f| !f.is_empty())
        {
            let mut new = old.clone_object();
            let m = new.meta_mut();
            m.deletion_timestamp = Some(self.timestamp());
            m.deletion_grace_period_seconds = Some(0);
            m.resource_version = Some(rv.to_string());
            let new: Arc<dyn KubeObject> = Arc::from(new);
            ks.put(&key, Some(&new));
            self.deliver(
                ks,
                &WatchEvent::Modified {
                    old: &old,
                    new: &new,
                },
            );
        } else {
            ks.put(&key, None);
            self.deliver(ks, &WatchEvent::Deleted(&old));
        }
        true
    }

    /// The store clock's time as an API timestamp (the Unix epoch plus the run's time).
    pub(super) fn timestamp(&self) -> Time {
        let ns = self.clock.now().as_nanos() as i128;
        Time(k8s_openapi::jiff::Timestamp::from_nanosecond(ns).unwrap_or_default())
    }

    /// `(created, deleted)`: objects of `kind` ever created and ever removed (one held by
    /// finalizers counts when it goes), so `created = deleted + list_objects(kind).len()`.
    pub fn created_deleted(&self, kind: &Kind) -> (u64, u64) {
        self.kind_store(kind).created_deleted()
    }

    /// Objects of `kind`, sorted by namespace and name; `namespace` None lists every one.
    pub fn list_objects(&self, kind: &Kind, namespace: Option<&str>) -> Vec<Arc<dyn KubeObject>> {
        let d = self.kind_store(kind).data.read();
        d.objects
            .iter()
            .filter(|((ns, _), _)| namespace.is_none_or(|n| !kind.namespaced || n == ns))
            .map(|(_, o)| o.clone())
            .collect()
    }

    /// The objects of `kind` filed under `key` in its index `index`, sorted.
    pub fn by_index(&self, kind: &Kind, index: &str, key: &str) -> Vec<Arc<dyn KubeObject>> {
        let Some(i) = kind.indexes.iter().position(|ix| ix.name == index) else {
            return Vec::new();
        };
        let d = self.kind_store(kind).data.read();
        d.indexes[i]
            .get(key)
            .into_iter()
            .flatten()
            .filter_map(|k| d.objects.get(k).cloned())
            .collect()
    }
}
