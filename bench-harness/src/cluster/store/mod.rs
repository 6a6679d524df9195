//! An in-process object store that stands in for the API server.
//!
//! It validates creates and updates as the API server does (scheduling-gate rules), names
//! objects (`generateName` + a random suffix from a seeded RNG), sets `PodScheduled=False,
//! reason SchedulingGated` on gated pods at creation, and delivers add, update and delete
//! events to the scheduler's handlers as an informer would. Events are delivered while the
//! store lock is held, so the scheduler sees every object's events in order.
//!
//! Accounting (the counts in the run summary): `created` pods, pods `deleted`, and pods
//! currently bound; pending pods are counted by the scheduler's queue.
//!
//! Writes (creates, updates, deletes) are here; reads, waits and the collectors' bind
//! records are in `queries`; the scheduler's side (bind, status updates, deletes of
//! victims, listers) in `client`.

mod client;
mod queries;

use crate::error::InputError;
use ahash::{AHashMap, AHashSet};
use k8s_openapi::api::core::v1 as core;
use parking_lot::{Condvar, Mutex, RwLock};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tidegate_engine::ClusterClient;
use tidegate_engine::Scheduler;
use tidegate_engine::api::validation::{validate_pod_create, validate_pod_update};
use tidegate_engine::api::{Labels, Pod, PodKey, PodSpecInfo, Sym, convert};
use tidegate_engine::clock::{Clock, RealClock, Time};

/// Per-namespace counters used by barriers and waits.
#[derive(Clone, Copy, Debug, Default)]
pub struct NsStats {
    /// Pods that exist in the namespace.
    pub pods: usize,
    /// Pods currently bound.
    pub bound: usize,
    /// Unbound pods that carry a PodScheduled condition (gated, or tried and failed).
    pub attempted_unbound: usize,
}

struct PodRec {
    obj: Arc<core::Pod>,
    pod: Arc<Pod>,
    /// The node it is bound to (interned: no allocation per bound pod).
    node: Option<Sym>,
    /// The PodScheduled=False condition `(reason, message)`; every gated pod shares one.
    condition: Option<Arc<(String, String)>>,
    /// Deletion requested while finalizers remain: the object stays with a deletionTimestamp.
    terminating: bool,
}

#[derive(Default)]
struct Collector {
    namespaces: AHashSet<String>,
    /// Only pods whose labels include all of these (empty: every pod).
    selector: BTreeMap<String, String>,
    start: Option<Time>,
    binds: Vec<Duration>,
}

/// A Service-style selector (a label set) as a label selector (also the oracle's).
pub(crate) fn selector_of(
    set: BTreeMap<String, String>,
) -> Result<tidegate_engine::api::LabelSelector, convert::ConvertError> {
    convert::label_selector(
        &k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector {
            match_labels: Some(set),
            match_expressions: None,
        },
        "spec.selector",
    )
}

/// The pod object's labels include every pair of `selector`.
fn labels_match(obj: &core::Pod, selector: &BTreeMap<String, String>) -> bool {
    selector.iter().all(|(k, v)| {
        obj.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(k))
            .is_some_and(|x| x == v)
    })
}

/// One namespace's pods and counters. Pods are kept per namespace, as the API server keys
/// them (`/pods/<namespace>/<name>`): every pod operation touches only its own namespace's
/// map, so pods held elsewhere (say, 500,000 gated pods in another namespace) cost a measured
/// namespace nothing, and listing a namespace never walks the others.
#[derive(Default)]
struct NsPods {
    pods: AHashMap<PodKey, PodRec>,
    stats: NsStats,
}

struct State {
    nodes: AHashMap<String, (Arc<core::Node>, Arc<tidegate_engine::api::Node>)>,
    namespaces: BTreeMap<String, Arc<core::Namespace>>,
    /// Pods by namespace (an entry exists for every namespace created or used).
    ns: AHashMap<String, NsPods>,
    rv: u64,
    uid: u64,
    rng: ChaCha8Rng,
    created: u64,
    deleted: u64,
    binds: u64,
    /// Binding calls so far (the draws of an injected bind failure depend on it).
    bind_calls: u64,
    /// `--inject bind-failure=RATE`: probability and seed.
    bind_failure: Option<(f64, u64)>,
    collectors: Vec<Option<Collector>>,
    /// The labels of the last template seen, shared by the pods stamped from it.
    last_labels: Option<(Arc<core::Pod>, Arc<tidegate_engine::api::Labels>)>,
}

impl State {
    fn pod(&self, key: &PodKey) -> Option<&PodRec> {
        self.ns.get(key.split().0)?.pods.get(key)
    }

    /// The pod's record and its namespace's counters.
    fn pod_mut(&mut self, key: &PodKey) -> Option<(&mut PodRec, &mut NsStats)> {
        let ns = self.ns.get_mut(key.split().0)?;
        let rec = ns.pods.get_mut(key)?;
        Some((rec, &mut ns.stats))
    }

    fn has_pod(&self, key: &PodKey) -> bool {
        self.pod(key).is_some()
    }

    fn all_pods(&self) -> impl Iterator<Item = (&PodKey, &PodRec)> {
        self.ns.values().flat_map(|n| n.pods.iter())
    }
}

/// One pod at the end of a run (`--dump-pods`).
#[derive(Clone, Debug)]
pub struct PodState {
    pub key: PodKey,
    pub node: Option<String>,
    pub gates: Vec<String>,
    /// The PodScheduled=False condition `(reason, message)`, if any.
    pub condition: Option<(String, String)>,
    pub terminating: bool,
}

/// Final counts of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreCounts {
    pub created: u64,
    pub deleted: u64,
    pub bound: u64,
    /// Pods whose deletion waits on finalizers (bound or not).
    pub terminating: u64,
    /// Successful bindings, including pods deleted afterwards.
    pub binds: u64,
    /// Unbound pods that are not terminating.
    pub unbound: u64,
}

/// What the store tells of pod changes, always after releasing its lock (so a watcher may
/// call back into the store): how controllers beside the scheduler see the cluster. The store
/// owns this hook and knows nothing of what implements it.
pub trait PodWatcher: Send + Sync {
    /// A pod was created.
    fn pod_added(&self, store: &Store, pod: &Arc<Pod>);
    /// A pod was deleted (removed from the store).
    fn pod_deleted(&self, store: &Store, pod: &Pod);
}

pub struct Store {
    /// Times binds for the collectors.
    clock: Arc<dyn Clock>,
    /// Watchers (controllers) told of pod creations and deletions (after the lock is released).
    watchers: RwLock<Vec<Arc<dyn PodWatcher>>>,
    state: Mutex<State>,
    changed: Condvar,
    scheduler: RwLock<Option<Arc<Scheduler>>>,
    /// Namespace labels for the scheduler's namespace lister (read by PreFilter without the
    /// store lock).
    ns_labels: RwLock<AHashMap<Sym, Arc<Labels>>>,
    /// Services by namespace: name, and the selector (None: a Service without a selector,
    /// which selects nothing). Read by PodTopologySpread's default constraints without the
    /// store lock.
    services: RwLock<AHashMap<Sym, Vec<ServiceRec>>>,
    /// PodDisruptionBudgets (read by DefaultPreemption without the store lock).
    pdbs: RwLock<Vec<Arc<tidegate_engine::api::PodDisruptionBudget>>>,
    /// Objects of kinds nothing here reads (kind, namespace, name).
    inert: Mutex<std::collections::BTreeSet<(String, String, String)>>,
    /// Watchers of pods becoming scheduled, by namespace (createPods' steady state: an
    /// informer handler that sees nodeName go from empty to set).
    scheduled_watchers: Mutex<Vec<(String, crossbeam::channel::Sender<PodKey>)>>,
}

struct ServiceRec {
    name: String,
    /// `spec.selector` as a label set, and as a selector for matching pods.
    selector: Option<(
        BTreeMap<String, String>,
        tidegate_engine::api::LabelSelector,
    )>,
}

/// The condition of every gated pod, shared rather than built per pod.
static GATED_CONDITION: std::sync::LazyLock<Arc<(String, String)>> =
    std::sync::LazyLock::new(|| {
        Arc::new((
            "SchedulingGated".to_string(),
            "Scheduling is blocked due to non-empty scheduling gates".to_string(),
        ))
    });

/// The label the API server puts on every namespace (`kubernetes.io/metadata.name`).
const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

const SUFFIX_CHARS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// Why a request to the store failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    #[error("{0}")]
    Invalid(String),
    /// The API server's "Pod X is invalid: a, b", with each field error kept.
    #[error("{kind} {name:?} is invalid: {}", errs.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))]
    InvalidFields {
        kind: &'static str,
        name: String,
        errs: Vec<tidegate_engine::api::validation::FieldError>,
    },
    #[error("{kind} {name:?} already exists")]
    AlreadyExists { kind: &'static str, name: String },
    #[error("{kind} {name:?} not found")]
    NotFound { kind: &'static str, name: String },
}

impl StoreError {
    /// As bad input found while running `file`.
    pub fn into_input(self, file: &Path, field: &str) -> InputError {
        InputError::new(file, None, field, self.to_string())
    }
}

/// The API server's "Pod X is invalid: a, b" for validation errors.
fn invalid_pod(name: &str, errs: &[tidegate_engine::api::validation::FieldError]) -> StoreError {
    StoreError::InvalidFields {
        kind: "Pod",
        name: name.to_string(),
        errs: errs.to_vec(),
    }
}

impl Store {
    pub fn new(seed: u64) -> Arc<Store> {
        Store::with_clock(seed, Arc::new(RealClock::new()))
    }

    /// A store whose collectors time binds on `clock` (the run's virtual clock, say).
    pub fn with_clock(seed: u64, clock: Arc<dyn Clock>) -> Arc<Store> {
        Arc::new(Store {
            clock,
            state: Mutex::new(State {
                nodes: AHashMap::new(),
                namespaces: BTreeMap::new(),
                ns: AHashMap::new(),
                rv: 0,
                uid: 0,
                rng: ChaCha8Rng::seed_from_u64(seed ^ 0x7469_6465_6761_7465),
                created: 0,
                deleted: 0,
                binds: 0,
                bind_calls: 0,
                bind_failure: None,
                collectors: Vec::new(),
                last_labels: None,
            }),
            changed: Condvar::new(),
            scheduler: RwLock::new(None),
            ns_labels: RwLock::new(AHashMap::new()),
            services: RwLock::new(AHashMap::new()),
            pdbs: RwLock::new(Vec::new()),
            inert: Mutex::new(Default::default()),
            scheduled_watchers: Mutex::new(Vec::new()),
            watchers: RwLock::new(Vec::new()),
        })
    }

    /// Refuses a binding with probability `rate` from now on (`--inject bind-failure`), as an
    /// API server under trouble does; the draws depend on `seed` and the call count.
    pub fn inject_bind_failures(&self, rate: f64, seed: u64) {
        self.state.lock().bind_failure = (rate > 0.0).then_some((rate, seed));
    }

    /// The names of the stored nodes, sorted.
    pub fn node_names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.state.lock().nodes.keys().cloned().collect();
        v.sort_unstable();
        v
    }

    /// A label update of node `name` (`--inject node-updates`): label `key` set to `value`,
    /// and the scheduler gets the update event. False when the node is gone.
    pub fn touch_node(&self, name: &str, key: &str, value: &str) -> bool {
        let Some((obj, _)) = self.state.lock().nodes.get(name).cloned() else {
            return false;
        };
        let mut obj = (*obj).clone();
        obj.metadata
            .labels
            .get_or_insert_with(Default::default)
            .insert(key.to_string(), value.to_string());
        match convert::node(&obj) {
            Ok(node) => self.update_node(obj, node).is_ok(),
            Err(_) => false,
        }
    }

    /// A status update of node `name` setting `status.declaredFeatures` (a kubelet's report;
    /// scheduler_perf's `nodedeclaredfeatures` tests do it by hand); the scheduler gets the
    /// update event. False when the node is gone.
    pub fn set_node_declared_features(&self, name: &str, features: &[String]) -> bool {
        let Some((obj, _)) = self.state.lock().nodes.get(name).cloned() else {
            return false;
        };
        let mut obj = (*obj).clone();
        obj.status
            .get_or_insert_with(Default::default)
            .declared_features = Some(features.to_vec());
        match convert::node(&obj) {
            Ok(node) => self.update_node(obj, node).is_ok(),
            Err(_) => false,
        }
    }

    /// Adds a watcher: it sees every pod created or deleted from now on.
    pub fn add_watcher(&self, w: Arc<dyn PodWatcher>) {
        self.watchers.write().push(w);
    }

    fn watchers(&self) -> Vec<Arc<dyn PodWatcher>> {
        let w = self.watchers.read();
        if w.is_empty() { Vec::new() } else { w.clone() }
    }

    /// Connects the scheduler's event handlers. Objects already stored are replayed as adds
    /// (an informer's initial list).
    pub fn attach(&self, s: Arc<Scheduler>) {
        let st = self.state.lock();
        for (_, n) in st.nodes.values() {
            s.on_node_add(n.clone());
        }
        for (_, r) in st.all_pods() {
            s.on_pod_add(r.pod.clone());
        }
        *self.scheduler.write() = Some(s);
    }

    /// Disconnects the scheduler (breaks the reference cycle at the end of a workload).
    pub fn detach(&self) {
        *self.scheduler.write() = None;
    }

    fn sched(&self) -> Option<Arc<Scheduler>> {
        self.scheduler.read().clone()
    }

    /// The object's name, or one generated from `generateName` with a random 5-character
    /// suffix. Like the API server (RetryGenerateName), a generated name that is taken is
    /// drawn again, up to 8 times.
    fn name_for(
        st: &mut State,
        meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
        taken: impl Fn(&State, &str) -> bool,
    ) -> Result<String, StoreError> {
        if let Some(n) = meta.name.as_ref().filter(|n| !n.is_empty()) {
            return Ok(n.clone());
        }
        let prefix = meta
            .generate_name
            .as_deref()
            .filter(|p| !p.is_empty())
            .ok_or_else(|| {
                StoreError::Invalid(
                    "metadata.name: Required value: name or generateName is required".into(),
                )
            })?;
        let mut name = String::new();
        for _ in 0..8 {
            let suffix: String = (0..5)
                .map(|_| SUFFIX_CHARS[st.rng.random_range(0..SUFFIX_CHARS.len())] as char)
                .collect();
            name = format!("{prefix}{suffix}");
            if !taken(st, &name) {
                break;
            }
        }
        Ok(name)
    }

    pub fn create_namespace(&self, mut ns: core::Namespace) -> Result<String, StoreError> {
        let mut st = self.state.lock();
        let name = Self::name_for(&mut st, &ns.metadata, |s, n| s.namespaces.contains_key(n))?;
        if st.namespaces.contains_key(&name) {
            return Err(StoreError::AlreadyExists {
                kind: "namespace",
                name,
            });
        }
        ns.metadata.name = Some(name.clone());
        ns.metadata
            .labels
            .get_or_insert_default()
            .insert(NAMESPACE_NAME_LABEL.to_string(), name.clone());
        self.ns_labels.write().insert(
            Sym::new(&name),
            Arc::new(convert::labels_of(&ns.metadata.labels)),
        );
        st.namespaces.insert(name.clone(), Arc::new(ns));
        st.ns.entry(name.clone()).or_default();
        Ok(name)
    }

    /// Creates the namespace if it does not exist (ops that create into a namespace).
    pub fn ensure_namespace_exists(&self, name: &str) {
        let mut st = self.state.lock();
        self.ensure_namespace(&mut st, name);
    }

    fn ensure_namespace(&self, st: &mut State, name: &str) {
        if !st.namespaces.contains_key(name) {
            let labels = BTreeMap::from([(NAMESPACE_NAME_LABEL.to_string(), name.to_string())]);
            self.ns_labels.write().insert(
                Sym::new(name),
                Arc::new(convert::labels_of(&Some(labels.clone()))),
            );
            let ns = core::Namespace {
                metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                    name: Some(name.to_string()),
                    labels: Some(labels),
                    ..Default::default()
                },
                ..Default::default()
            };
            st.namespaces.insert(name.to_string(), Arc::new(ns));
        }
        if !st.ns.contains_key(name) {
            st.ns.insert(name.to_string(), NsPods::default());
        }
    }

    pub fn create_node(
        &self,
        mut node: core::Node,
        converted: tidegate_engine::api::Node,
    ) -> Result<String, StoreError> {
        let mut st = self.state.lock();
        let name = Self::name_for(&mut st, &node.metadata, |s, n| s.nodes.contains_key(n))?;
        if st.nodes.contains_key(&name) {
            return Err(StoreError::AlreadyExists { kind: "node", name });
        }
        st.rv += 1;
        node.metadata.name = Some(name.clone());
        node.metadata.resource_version = Some(st.rv.to_string());
        let mut internal = converted;
        internal.name = Sym::new(&name);
        internal.resource_version = st.rv;
        let internal = Arc::new(internal);
        st.nodes
            .insert(name.clone(), (Arc::new(node), internal.clone()));
        if let Some(s) = self.sched() {
            s.on_node_add(internal);
        }
        Ok(name)
    }

    /// `createNodes` as kube's `IntegrationTestNodePreparer` does it: the node is named first
    /// (its name, or `generateName` plus a suffix) and labelled `kubernetes.io/hostname=<name>`,
    /// then created. Spreading and affinity on hostname rely on that label.
    pub fn create_prepared_node(
        &self,
        mut node: core::Node,
        converted: tidegate_engine::api::Node,
    ) -> Result<String, StoreError> {
        const HOSTNAME: &str = "kubernetes.io/hostname";
        let name = {
            let mut st = self.state.lock();
            Self::name_for(&mut st, &node.metadata, |s, n| s.nodes.contains_key(n))?
        };
        node.metadata.name = Some(name.clone());
        node.metadata
            .labels
            .get_or_insert_with(Default::default)
            .insert(HOSTNAME.to_string(), name.clone());
        let host = Sym::new(HOSTNAME);
        let pairs: Vec<(String, String)> = converted
            .labels
            .iter()
            .filter(|(k, _)| *k != host)
            .map(|(k, v)| (k.to_string_lossy(), v.to_string_lossy()))
            .chain(std::iter::once((HOSTNAME.to_string(), name.clone())))
            .collect();
        let mut converted = converted;
        converted.labels = Arc::new(tidegate_engine::api::Labels::from_pairs(
            pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        ));
        self.create_node(node, converted)
    }

    /// Creates a pod from `template` (its metadata's name or generateName, its spec). The
    /// template object and `spec` (its converted spec) are shared, not copied: the store keeps
    /// only the pod's identity besides them and builds the full object when an update needs it.
    pub fn create_pod(
        &self,
        template: &Arc<core::Pod>,
        namespace: &str,
        spec: Arc<PodSpecInfo>,
    ) -> Result<PodKey, StoreError> {
        let errs = validate_pod_create(template);
        let mut st = self.state.lock();
        let name = Self::name_for(&mut st, &template.metadata, |s, n| {
            s.has_pod(&PodKey::new(namespace, n))
        })?;
        if !errs.is_empty() {
            return Err(invalid_pod(&name, &errs));
        }
        let key = PodKey::new(namespace, &name);
        if st.has_pod(&key) {
            return Err(StoreError::AlreadyExists { kind: "pod", name });
        }
        self.ensure_namespace(&mut st, namespace);
        st.rv += 1;
        st.uid += 1;
        let node = template
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .filter(|n| !n.is_empty());
        let labels = match &st.last_labels {
            Some((t, l)) if Arc::ptr_eq(t, template) => l.clone(),
            _ => {
                let l = Arc::new(convert::labels_of(&template.metadata.labels));
                st.last_labels = Some((template.clone(), l.clone()));
                l
            }
        };
        let uid = format!("uid-{:08}", st.uid);
        let node = node.as_deref().map(Sym::new);
        let internal = Arc::new(convert::pod_from_parts(
            convert::PodParts {
                namespace,
                name: &name,
                uid: &uid,
                resource_version: st.rv,
                node_name: node,
                nominated_node_name: template
                    .status
                    .as_ref()
                    .and_then(|s| s.nominated_node_name.as_deref())
                    .filter(|n| !n.is_empty())
                    .map(Sym::new),
            },
            labels,
            spec,
        ));
        let gated = internal.is_gated();
        let condition = gated.then(|| GATED_CONDITION.clone());
        st.created += 1;
        let ns = st.ns.get_mut(namespace).expect("ensure_namespace made it");
        ns.stats.pods += 1;
        if node.is_some() {
            ns.stats.bound += 1;
        } else if condition.is_some() {
            ns.stats.attempted_unbound += 1;
        }
        ns.pods.insert(
            key.clone(),
            PodRec {
                obj: template.clone(),
                pod: internal.clone(),
                node,
                condition,
                terminating: false,
            },
        );
        if node.is_some() {
            // Upstream's throughput collector counts a pod whose add event already carries a
            // nodeName as scheduled, as it counts a bind.
            let now = self.clock.now();
            for c in st.collectors.iter_mut().flatten() {
                if c.namespaces.contains(namespace)
                    && labels_match(template, &c.selector)
                    && let Some(start) = c.start
                {
                    c.binds.push(now.saturating_sub(start));
                }
            }
        }
        if let Some(s) = self.sched() {
            s.on_pod_add(internal.clone());
        }
        if node.is_some() {
            self.notify_scheduled(&key);
        }
        self.changed.notify_all();
        drop(st);
        for w in self.watchers() {
            w.pod_added(self, &internal);
        }
        Ok(key)
    }

    /// Removes one scheduling gate from a pod (a controller's API update: kube allows
    /// removing gates, never adding them).
    pub fn remove_scheduling_gate(&self, key: &PodKey, gate: &str) -> Result<(), StoreError> {
        let mut st = self.state.lock();
        let Some(rec) = st.pod(key) else {
            return Err(StoreError::NotFound {
                kind: "pod",
                name: key.to_string(),
            });
        };
        let mut obj = Self::materialize(key, rec);
        if let Some(spec) = obj.spec.as_mut()
            && let Some(gates) = spec.scheduling_gates.as_mut()
        {
            gates.retain(|g| g.name != gate);
        }
        self.replace_pod(&mut st, key, obj)
    }

    /// Delivers the key of every pod of `namespace` that becomes scheduled (bound, or created
    /// with a nodeName) from now on, until the receiver is dropped.
    pub fn watch_scheduled(&self, namespace: &str) -> crossbeam::channel::Receiver<PodKey> {
        let (tx, rx) = crossbeam::channel::unbounded();
        self.scheduled_watchers
            .lock()
            .push((namespace.to_string(), tx));
        rx
    }

    fn notify_scheduled(&self, key: &PodKey) {
        let mut w = self.scheduled_watchers.lock();
        if w.is_empty() {
            return;
        }
        let ns = key.split().0;
        // A dropped receiver ends its watch.
        w.retain(|(n, tx)| n != ns || tx.send(key.clone()).is_ok());
    }

    /// A name for a namespaced object of `kind` (its own, or generated) that `taken` does not
    /// hold yet; the namespace is created if needed.
    fn name_in(
        &self,
        namespace: &str,
        meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
        kind: &'static str,
        taken: impl Fn(&str) -> bool,
    ) -> Result<String, StoreError> {
        let mut st = self.state.lock();
        self.ensure_namespace(&mut st, namespace);
        let name = Self::name_for(&mut st, meta, |_, n| taken(n))?;
        if taken(&name) {
            return Err(StoreError::AlreadyExists { kind, name });
        }
        Ok(name)
    }

    /// Creates an object of any supported kind (`createAny`, `churn`) in `namespace` (for
    /// namespaced kinds). Returns its name.
    pub fn create_any(
        &self,
        obj: &crate::cluster::objects::AnyObject,
        namespace: &str,
    ) -> Result<String, StoreError> {
        use crate::cluster::objects::AnyObject;
        match obj {
            AnyObject::Pod { obj, spec } => self
                .create_pod(obj, namespace, spec.clone())
                .map(|k| k.split().1.to_string()),
            AnyObject::Node { obj, converted } => {
                self.create_node((**obj).clone(), (**converted).clone())
            }
            AnyObject::Namespace(ns) => self.create_namespace((**ns).clone()),
            AnyObject::Service(svc) => {
                let name = self.name_in(namespace, &svc.metadata, "service", |n| {
                    self.services
                        .read()
                        .get(&Sym::new(namespace))
                        .is_some_and(|v| v.iter().any(|r| r.name == n))
                })?;
                let selector = match svc.spec.as_ref().and_then(|s| s.selector.clone()) {
                    None => None,
                    Some(set) => {
                        let sel = selector_of(set.clone()).map_err(|e| {
                            StoreError::Invalid(format!(
                                "Service {name:?} is invalid: {}: {}",
                                e.field, e.detail
                            ))
                        })?;
                        Some((set, sel))
                    }
                };
                self.services
                    .write()
                    .entry(Sym::new(namespace))
                    .or_default()
                    .push(ServiceRec {
                        name: name.clone(),
                        selector,
                    });
                Ok(name)
            }
            AnyObject::Pdb(pdb) => {
                let mut pdb = (**pdb).clone();
                let name = self.name_in(namespace, &pdb.metadata, "poddisruptionbudget", |n| {
                    self.pdbs
                        .read()
                        .iter()
                        .any(|p| &*p.name == n && p.namespace == Sym::new(namespace))
                })?;
                pdb.metadata.name = Some(name.clone());
                pdb.metadata.namespace = Some(namespace.to_string());
                let converted = crate::cluster::objects::pdb(&pdb).ok_or_else(|| {
                    StoreError::Invalid(format!("PodDisruptionBudget {name:?} is invalid"))
                })?;
                self.pdbs.write().push(Arc::new(converted));
                Ok(name)
            }
            AnyObject::Inert {
                kind,
                name,
                generate_name,
            } => {
                let ns = if obj.namespaced() { namespace } else { "" };
                let mut st = self.state.lock();
                if !ns.is_empty() {
                    self.ensure_namespace(&mut st, ns);
                }
                let meta = k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                    name: name.clone(),
                    generate_name: generate_name.clone(),
                    ..Default::default()
                };
                let key = |n: &str| (kind.clone(), ns.to_string(), n.to_string());
                let n = Self::name_for(&mut st, &meta, |_, n| self.inert.lock().contains(&key(n)))?;
                if !self.inert.lock().insert(key(&n)) {
                    return Err(StoreError::AlreadyExists {
                        kind: "object",
                        name: n,
                    });
                }
                Ok(n)
            }
        }
    }

    /// Deletes an object created by [`Store::create_any`] (churn's recreate mode). False if
    /// it is gone already.
    pub fn delete_any(&self, kind: &str, namespace: &str, name: &str) -> bool {
        match kind {
            "Pod" => self.delete_pod(&PodKey::new(namespace, name)),
            "Node" => self.delete_node(name),
            "Service" => {
                let mut svcs = self.services.write();
                let Some(v) = svcs.get_mut(&Sym::new(namespace)) else {
                    return false;
                };
                let before = v.len();
                v.retain(|r| r.name != name);
                before != v.len()
            }
            "PodDisruptionBudget" => {
                let mut pdbs = self.pdbs.write();
                let before = pdbs.len();
                pdbs.retain(|p| !(&*p.name == name && p.namespace == Sym::new(namespace)));
                before != pdbs.len()
            }
            "Namespace" => false,
            other => self.inert.lock().remove(&(
                other.to_string(),
                namespace.to_string(),
                name.to_string(),
            )),
        }
    }

    /// PUT of a node object and of its status (the `updateAny` op): the stored node becomes
    /// the rendered object as it is (labels included: a hostname label that createNodes added
    /// and the template leaves out is gone, as on an API server). The scheduler gets the
    /// update event.
    pub fn update_node(
        &self,
        mut node: core::Node,
        converted: tidegate_engine::api::Node,
    ) -> Result<(), StoreError> {
        let name = node
            .metadata
            .name
            .clone()
            .filter(|n| !n.is_empty())
            .ok_or_else(|| StoreError::Invalid("metadata.name: Required value".into()))?;
        let mut st = self.state.lock();
        let Some((_, old)) = st.nodes.get(&name).cloned() else {
            return Err(StoreError::NotFound { kind: "node", name });
        };
        st.rv += 1;
        node.metadata.resource_version = Some(st.rv.to_string());
        let mut internal = converted;
        internal.name = Sym::new(&name);
        internal.resource_version = st.rv;
        let internal = Arc::new(internal);
        st.nodes
            .insert(name.clone(), (Arc::new(node), internal.clone()));
        if let Some(s) = self.sched() {
            s.on_node_update(&old, internal);
        }
        self.changed.notify_all();
        Ok(())
    }

    /// Deletes a node; the scheduler gets the delete event. Pods bound to it stay bound, as
    /// nothing here runs the pod garbage collector.
    pub fn delete_node(&self, name: &str) -> bool {
        let mut st = self.state.lock();
        if st.nodes.remove(name).is_none() {
            return false;
        }
        st.rv += 1;
        if let Some(s) = self.sched() {
            s.on_node_delete(Sym::new(name));
        }
        self.changed.notify_all();
        true
    }

    /// Services, PodDisruptionBudgets and other objects stored, for the run summary.
    pub fn object_counts(&self) -> (usize, usize, usize) {
        (
            self.services.read().values().map(Vec::len).sum(),
            self.pdbs.read().len(),
            self.inert.lock().len(),
        )
    }

    /// The full object of a stored pod (template or last PUT, with its identity and binding).
    fn materialize(key: &PodKey, rec: &PodRec) -> core::Pod {
        let mut o = (*rec.obj).clone();
        let (ns, name) = key.split();
        o.metadata.name = Some(name.to_string());
        o.metadata.namespace = Some(ns.to_string());
        o.metadata.uid = Some(rec.pod.uid.to_string());
        o.metadata.resource_version = Some(rec.pod.resource_version.to_string());
        if let (Some(n), Some(spec)) = (rec.node, o.spec.as_mut()) {
            spec.node_name = Some(n.to_string_lossy());
        }
        o
    }

    /// The key of the stored pod `new` names in `namespace`, and the stored object as it is.
    fn stored_pod(
        st: &State,
        new: &core::Pod,
        namespace: &str,
    ) -> Result<(PodKey, core::Pod), StoreError> {
        let name = new
            .metadata
            .name
            .as_deref()
            .filter(|n| !n.is_empty())
            .ok_or_else(|| StoreError::Invalid("metadata.name: Required value".into()))?;
        let key = PodKey::new(namespace, name);
        let rec = st.pod(&key).ok_or(StoreError::NotFound {
            kind: "pod",
            name: key.to_string(),
        })?;
        let obj = Self::materialize(&key, rec);
        Ok((key, obj))
    }

    /// Stores `obj` as the new version of the pod at `key` (converted, binding kept, a new
    /// resourceVersion) and sends the update event. Removing the last gate of an unbound pod
    /// clears its SchedulingGated condition (the scheduler sets its own later).
    fn replace_pod(
        &self,
        st: &mut State,
        key: &PodKey,
        mut obj: core::Pod,
    ) -> Result<(), StoreError> {
        let name = key.split().1;
        let spec = obj.spec.clone().unwrap_or_default();
        let info = convert::pod_spec_info(&spec)
            .map_err(|e| StoreError::Invalid(format!("Pod {name:?} is invalid: {e}")))?;
        st.rv += 1;
        obj.metadata.resource_version = Some(st.rv.to_string());
        let obj = Arc::new(obj);
        let (rec, ns) = st.pod_mut(key).expect("the caller found it");
        let old_internal = rec.pod.clone();
        let mut internal = convert::pod_with_spec(&obj, Arc::new(info));
        internal.node_name = old_internal.node_name;
        let internal = Arc::new(internal);
        rec.obj = obj;
        rec.pod = internal.clone();
        if old_internal.is_gated() && !internal.is_gated() && rec.node.is_none() {
            rec.condition = None;
            ns.attempted_unbound -= 1;
        }
        if let Some(s) = self.sched() {
            s.on_pod_update(&old_internal, internal);
        }
        self.changed.notify_all();
        Ok(())
    }

    /// PUT of a pod object (the `updateAny` op). Status and binding are kept.
    pub fn update_pod(&self, new: &core::Pod, namespace: &str) -> Result<(), StoreError> {
        let mut st = self.state.lock();
        let (key, old_obj) = Self::stored_pod(&st, new, namespace)?;
        let mut obj = new.clone();
        obj.metadata.namespace = Some(namespace.to_string());
        obj.metadata.uid = old_obj.metadata.uid.clone();
        let bound = old_obj.spec.as_ref().and_then(|s| s.node_name.clone());
        if let (Some(n), Some(spec)) = (bound, obj.spec.as_mut())
            && spec.node_name.as_deref().is_none_or(str::is_empty)
        {
            spec.node_name = Some(n);
        }
        let errs = validate_pod_update(&obj, &old_obj);
        if !errs.is_empty() {
            return Err(invalid_pod(key.split().1, &errs));
        }
        self.replace_pod(&mut st, &key, obj)
    }

    /// `updateAny` with `subresources: [resize]`, as upstream's executor does it: a PUT on
    /// `pods/resize`, then a PUT on `pods/status` with the same object.
    ///
    /// The resize subresource (kube's `podResizeStrategy`) keeps everything of the stored pod
    /// but the containers' `resources` and `resizePolicy`, taken from `new` by container name
    /// (a container `new` names that the pod lacks is refused). The status PUT then replaces
    /// the status with `new`'s (`qosClass` backfilled, spec and binding kept).
    ///
    /// Without a kubelet nothing else writes the status: a template without one (upstream's
    /// `pod-preemptor-resize.yaml`) leaves no `allocatedResources` and no `PodResizePending`
    /// condition, so the scheduler counts the new requests at once (kube's `PodRequests` falls
    /// back to the spec) and nothing is deferred. A template that carries the kubelet's answer
    /// (container statuses with `allocatedResources`, a `PodResizePending` condition) gets it
    /// stored and seen by the scheduler (`api::convert::pod_resize_status`).
    pub fn resize_pod(&self, new: &core::Pod, namespace: &str) -> Result<(), StoreError> {
        let mut st = self.state.lock();
        let (key, mut obj) = Self::stored_pod(&st, new, namespace)?;
        let new_containers = new
            .spec
            .as_ref()
            .map(|s| s.containers.as_slice())
            .unwrap_or_default();
        let spec = obj.spec.get_or_insert_with(Default::default);
        for nc in new_containers {
            let Some(c) = spec.containers.iter_mut().find(|c| c.name == nc.name) else {
                return Err(StoreError::Invalid(format!(
                    "Pod {:?} is invalid: spec.containers: Not found: {:?}",
                    key.split().1,
                    nc.name
                )));
            };
            c.resources = nc.resources.clone();
            c.resize_policy = nc.resize_policy.clone();
        }
        let qos = obj.status.as_ref().and_then(|s| s.qos_class.clone());
        let mut status = new.status.clone().unwrap_or_default();
        if status.qos_class.is_none() {
            status.qos_class = qos;
        }
        obj.status = Some(status);
        self.replace_pod(&mut st, &key, obj)
    }

    /// Deletes a pod as the API server does. A pod with finalizers only gets a
    /// deletionTimestamp (it is "terminating" until its finalizers are removed, which nothing
    /// here does). So does a bound pod with a grace period (its `terminationGracePeriodSeconds`,
    /// which the API defaults to 30): the API server waits for its kubelet to confirm, and a
    /// scheduler_perf cluster has none, so it stays terminating on its node (kube's pod
    /// strategy, `CheckGracefulDelete`: an unbound pod, or a grace period of 0, goes at once).
    pub fn delete_pod(&self, key: &PodKey) -> bool {
        self.delete_pod_with_grace(key, None)
    }

    /// [`Store::delete_pod`] with `DeleteOptions.gracePeriodSeconds`: `Some(g)` overrides the
    /// pod's own period (scheduler_perf's steady state deletes with 0).
    pub fn delete_pod_with_grace(&self, key: &PodKey, grace_seconds: Option<i64>) -> bool {
        let mut st = self.state.lock();
        let Some((rec, _)) = st.pod_mut(key) else {
            return false;
        };
        if rec.terminating {
            return true;
        }
        let graceful = rec.node.is_some()
            && grace_seconds
                .or_else(|| {
                    let spec = rec.obj.spec.as_ref()?;
                    spec.termination_grace_period_seconds
                })
                .unwrap_or(30)
                > 0;
        if graceful
            || rec
                .obj
                .metadata
                .finalizers
                .as_ref()
                .is_some_and(|f| !f.is_empty())
        {
            rec.terminating = true;
            let old = rec.pod.clone();
            let mut new = (*old).clone();
            new.deletion_timestamp = true;
            let new = Arc::new(new);
            rec.pod = new.clone();
            st.rv += 1;
            if let Some(s) = self.sched() {
                s.on_pod_update(&old, new);
            }
            self.changed.notify_all();
            return true;
        }
        let Some(ns) = st.ns.get_mut(key.split().0) else {
            return false;
        };
        let Some(rec) = ns.pods.remove(key) else {
            return false;
        };
        let n = &mut ns.stats;
        n.pods -= 1;
        if rec.node.is_some() {
            n.bound -= 1;
        } else if rec.condition.is_some() {
            n.attempted_unbound -= 1;
        }
        st.deleted += 1;
        let mut gone = (*rec.pod).clone();
        gone.node_name = rec.node;
        if let Some(s) = self.sched() {
            s.on_pod_delete(&gone);
        }
        self.changed.notify_all();
        drop(st);
        for w in self.watchers() {
            w.pod_deleted(self, &gone);
        }
        true
    }
}
