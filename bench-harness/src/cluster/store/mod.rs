//! An in-process object store that stands in for the API server, one store per kind, laid
//! out as kube's registry (`pkg/registry/<group>/<kind>`).
//!
//! It validates creates and updates as the API server does, names objects (`generateName` +
//! a random suffix from a seeded RNG), and delivers add, update and delete events to the
//! scheduler's handlers as an informer would, in the order of the writes.
//!
//! - `core/pod.rs`, `core/node.rs`, `core/namespace.rs`: pods, nodes and namespaces, kept
//!   converted for the scheduler under the one state lock (pods stamped from shared
//!   templates; `PodScheduled=False, reason SchedulingGated` on gated pods at creation; the
//!   pods of each node indexed). Their events are delivered while the lock is held.
//! - Every other kind goes through the generic shape (`generic.rs`: create, update with a
//!   resourceVersion check, delete with finalizers, list, watch handlers, indexes), one
//!   [`kind::Kind`] per kind in its group's file (`core/`, `policy.rs`, `storage.rs`,
//!   `resource.rs`, `scheduling.rs`) and one line in the table `registry::KINDS`. Services and
//!   PodDisruptionBudgets feed the scheduler's listers through watch handlers.
//! - Imports point one way: `kind.rs` (the shape of a kind, its objects, decoding) ←
//!   `generic.rs` ← the kinds' files ← `registry.rs` (the table, [`registry::lookup`], the
//!   access by Rust type); only this file and files outside the folder read the table.
//! - `queries.rs`: reads, waits, the collectors' bind records; `client.rs`: the scheduler's
//!   side (bind, status updates, deletes of victims, listers).
//!
//! Locks: the state lock (pods, nodes, namespaces, names, the resourceVersion counter) is
//! never held while a kind's writer lock is taken (`generic.rs` states the order).
//!
//! Accounting (the counts in the run summary): `created` pods, pods `deleted`, and pods
//! currently bound; pending pods are counted by the scheduler's queue.

mod claims;
mod client;
pub mod core;
pub mod generic;
pub mod kind;
pub mod policy;
mod queries;
pub mod registry;
pub mod resource;
pub mod scheduling;
pub mod storage;

pub use claims::CLAIM_FINALIZER;
pub use generic::{Handler, StoredObject, Subresource, WatchEvent};
pub use kind::{ApiGates, KubeObject, KubeType};

use crate::error::InputError;
use ahash::{AHashMap, AHashSet};
use k8s_openapi::api::core::v1 as corev1;
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
    obj: Arc<corev1::Pod>,
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
fn labels_match(obj: &corev1::Pod, selector: &BTreeMap<String, String>) -> bool {
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
    nodes: AHashMap<String, (Arc<corev1::Node>, Arc<tidegate_engine::api::Node>)>,
    namespaces: BTreeMap<String, Arc<corev1::Namespace>>,
    /// Pods by namespace (an entry exists for every namespace created or used).
    ns: AHashMap<String, NsPods>,
    /// The pods bound to each node (kube's pods-by-node index).
    pods_by_node: AHashMap<Sym, AHashSet<PodKey>>,
    /// The last resourceVersion given (every kind's writes share it, as etcd's revision).
    rv: u64,
    uid: u64,
    /// The uids given to objects of the generic kinds (a counter apart from the pods').
    object_uid: u64,
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
    last_labels: Option<(Arc<corev1::Pod>, Arc<tidegate_engine::api::Labels>)>,
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
    /// `spec.schedulingGroup.podGroupName`: the PodGroup the pod belongs to.
    pub pod_group: Option<String>,
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
    /// An object of a registered kind (not a pod) was created. Default: ignored.
    fn object_added(&self, _store: &Store, _obj: &Arc<dyn KubeObject>) {}
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
    /// The store of each registered kind, by kind name.
    kinds: AHashMap<&'static str, generic::KindStore>,
    /// Services by namespace as the scheduler reads them (kept by a watch handler; read by
    /// PodTopologySpread's default constraints without the store lock).
    services: core::service::Services,
    /// PodDisruptionBudgets, converted (kept by a watch handler; read by DefaultPreemption
    /// without the store lock).
    pdbs: policy::Budgets,
    /// Watchers of pods becoming scheduled, by namespace (createPods' steady state: an
    /// informer handler that sees nodeName go from empty to set).
    scheduled_watchers: Mutex<Vec<(String, crossbeam::channel::Sender<PodKey>)>>,
    /// The feature gates the API server's validation reads (the workload's; all off until
    /// set, as kube's defaults for the gates it names are).
    api_gates: RwLock<ApiGates>,
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
    /// A write carrying a resourceVersion that is not the stored one (kube's 409).
    #[error(
        "Operation cannot be fulfilled on {resource} {name:?}: the object has been modified; please apply your changes to the latest version and try again"
    )]
    Conflict {
        resource: &'static str,
        name: String,
    },
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
        let kinds: AHashMap<&'static str, generic::KindStore> = registry::KINDS
            .iter()
            .map(|k| (k.kind, generic::KindStore::new(k)))
            .collect();
        let store = Arc::new(Store {
            clock,
            kinds,
            state: Mutex::new(State {
                nodes: AHashMap::new(),
                namespaces: BTreeMap::new(),
                ns: AHashMap::new(),
                pods_by_node: AHashMap::new(),
                rv: 0,
                uid: 0,
                object_uid: 0,
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
            services: Default::default(),
            pdbs: Default::default(),
            scheduled_watchers: Mutex::new(Vec::new()),
            watchers: RwLock::new(Vec::new()),
            api_gates: RwLock::new(ApiGates::default()),
        });
        let listers = [
            (
                core::service::SERVICE.kind,
                core::service::lister(store.services.clone()),
            ),
            (
                policy::POD_DISRUPTION_BUDGET.kind,
                policy::lister(store.pdbs.clone()),
            ),
        ];
        for (kind, handler) in listers {
            store.watch(kind, handler).expect("a registered kind");
        }
        store
    }

    /// Refuses a binding with probability `rate` from now on (`--inject bind-failure`), as an
    /// API server under trouble does; the draws depend on `seed` and the call count.
    pub fn inject_bind_failures(&self, rate: f64, seed: u64) {
        self.state.lock().bind_failure = (rate > 0.0).then_some((rate, seed));
    }

    /// Sets the feature gates the API server's validation and field dropping read (the
    /// workload's, before anything is created).
    pub fn set_api_gates(&self, gates: ApiGates) {
        *self.api_gates.write() = gates;
    }

    /// The feature gates the API server's validation reads.
    pub fn api_gates(&self) -> ApiGates {
        *self.api_gates.read()
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
        drop(st);
        self.replay_objects(&s);
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

    /// Deletes an object created by [`Store::create_any`] (churn's recreate mode). False if
    /// it is gone already.
    pub fn delete_any(&self, kind: &str, namespace: &str, name: &str) -> bool {
        match kind {
            "Pod" => self.delete_pod(&PodKey::new(namespace, name)),
            "Node" => self.delete_node(name),
            "Namespace" => false,
            other => {
                registry::lookup(other).is_some_and(|k| self.delete_object(k, namespace, name))
            }
        }
    }
}
