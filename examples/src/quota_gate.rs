//! A namespace quota gate (KEP-3521, "dynamic quota management").
//!
//! Protocol:
//! - Pods are created with the scheduling gate [`GATE`]. The SchedulingGates plugin keeps them
//!   out of activeQ.
//! - The [`QuotaController`] sees each pod added (an informer would feed it). While the pod's
//!   namespace has admitted fewer pods than its limit, it marks the pod admitted and then
//!   removes the gate (an update through the API server: here a callback). Pods over quota wait,
//!   in creation order.
//! - When an admitted pod is deleted, its slot is free again and the controller admits the next
//!   waiting pod of that namespace.
//! - The [`QuotaGate`] PreEnqueue plugin refuses, in a namespace with a limit, every pod the
//!   controller has not admitted: removing the gate by hand does not bypass the quota.
//!
//! Invariant: per namespace, admitted pods ≤ limit; a pod is admitted at most once, and waits
//! in at most one place (the waiting list or, once admitted, the scheduler).

use ahash::{AHashMap, AHashSet};
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::{Arc, Weak};
use tidegate_bench::cluster::store::Store;
use tidegate_engine::Registry;
use tidegate_engine::api::{Pod, PodKey, Sym};
use tidegate_engine::{ActionType, ClusterEvent, EventObject, EventResource, QueueingHint};
use tidegate_engine::{Code, EnqueueExtensions, Plugin, PreEnqueuePlugin, Status};

/// The scheduling gate the quota controller owns.
pub const GATE: &str = "example.com/quota";
/// The plugin's name in KubeSchedulerConfiguration.
pub const NAME: &str = "QuotaGate";

#[derive(Default)]
struct State {
    limits: AHashMap<Sym, usize>,
    admitted: AHashMap<Sym, AHashSet<PodKey>>,
    waiting: AHashMap<Sym, VecDeque<Arc<Pod>>>,
}

/// Quota state shared by the controller and the plugin.
#[derive(Default)]
pub struct Quota {
    state: Mutex<State>,
}

impl Quota {
    /// Sets the pod limit of a namespace.
    pub fn set_limit(&self, namespace: &str, pods: usize) {
        self.state.lock().limits.insert(Sym::new(namespace), pods);
    }

    pub fn is_admitted(&self, pod: &Pod) -> bool {
        self.state
            .lock()
            .admitted
            .get(&pod.namespace)
            .is_some_and(|s| s.contains(&pod.key))
    }

    /// Forgets every admission and waiting pod (a new workload, a new cluster); the limits
    /// stay.
    pub fn reset(&self) {
        let mut st = self.state.lock();
        st.admitted.clear();
        st.waiting.clear();
    }

    /// (admitted, waiting) in a namespace.
    pub fn usage(&self, namespace: &str) -> (usize, usize) {
        let st = self.state.lock();
        let ns = Sym::new(namespace);
        (
            st.admitted.get(&ns).map_or(0, |s| s.len()),
            st.waiting.get(&ns).map_or(0, |q| q.len()),
        )
    }
}

/// Removes the quota gate from a pod (an update through the API server).
pub type Ungate = Box<dyn Fn(&Arc<Pod>) + Send + Sync>;

/// The controller side: admits pods while quota remains.
pub struct QuotaController {
    quota: Arc<Quota>,
    ungate: Ungate,
}

impl QuotaController {
    pub fn new(quota: Arc<Quota>, ungate: Ungate) -> QuotaController {
        QuotaController { quota, ungate }
    }

    /// A pod was created. Pods with the gate in a namespace with a limit wait for admission.
    pub fn on_pod_add(&self, pod: &Arc<Pod>) {
        let gated = pod.spec.scheduling_gates.iter().any(|g| &**g == GATE);
        {
            let mut st = self.quota.state.lock();
            if !gated || !st.limits.contains_key(&pod.namespace) {
                return;
            }
            st.waiting
                .entry(pod.namespace)
                .or_default()
                .push_back(pod.clone());
        }
        self.admit(pod.namespace);
    }

    /// A pod was deleted: an admitted pod frees its slot; a waiting one leaves the line.
    pub fn on_pod_delete(&self, pod: &Pod) {
        {
            let mut st = self.quota.state.lock();
            if let Some(q) = st.waiting.get_mut(&pod.namespace) {
                q.retain(|p| p.key != pod.key);
            }
            if let Some(s) = st.admitted.get_mut(&pod.namespace) {
                s.remove(&pod.key);
            }
        }
        self.admit(pod.namespace);
    }

    /// Admits waiting pods of `ns` while quota remains; ungates them outside the lock (the
    /// update reaches the scheduler, whose PreEnqueue asks [`Quota::is_admitted`]).
    fn admit(&self, ns: Sym) {
        let mut admitted = Vec::new();
        {
            let mut st = self.quota.state.lock();
            let limit = st.limits.get(&ns).copied().unwrap_or(usize::MAX);
            loop {
                let used = st.admitted.get(&ns).map_or(0, |s| s.len());
                if used >= limit {
                    break;
                }
                let Some(p) = st.waiting.get_mut(&ns).and_then(|q| q.pop_front()) else {
                    break;
                };
                st.admitted.entry(ns).or_default().insert(p.key.clone());
                admitted.push(p);
            }
        }
        for p in &admitted {
            (self.ungate)(p);
        }
    }
}

/// The controller as the harness runs it beside the scheduler
/// ([`tidegate_bench::cluster::controller::Controller`]): pods created and deleted in the workload's
/// store reach the [`QuotaController`], whose ungate is an API update of that store.
pub fn harness_controller(
    quota: Arc<Quota>,
) -> Arc<dyn tidegate_bench::cluster::controller::Controller> {
    let store: Arc<Mutex<Weak<Store>>> = Arc::default();
    let api = store.clone();
    let inner = QuotaController::new(
        quota.clone(),
        Box::new(move |pod| {
            if let Some(s) = api.lock().upgrade() {
                // The pod may be gone already (deleted meanwhile): nothing to admit then.
                let _ = s.remove_scheduling_gate(&pod.key, GATE);
            }
        }),
    );
    Arc::new(HarnessQuota {
        quota,
        store,
        inner,
    })
}

struct HarnessQuota {
    quota: Arc<Quota>,
    store: Arc<Mutex<Weak<Store>>>,
    inner: QuotaController,
}

impl tidegate_bench::cluster::controller::Controller for HarnessQuota {
    fn start(&self, store: &Arc<Store>) {
        self.quota.reset();
        *self.store.lock() = Arc::downgrade(store);
    }
    fn on_pod_add(&self, _store: &Store, pod: &Arc<Pod>) {
        self.inner.on_pod_add(pod);
    }
    fn on_pod_delete(&self, _store: &Store, pod: &Pod) {
        self.inner.on_pod_delete(pod);
    }
}

/// The PreEnqueue side.
pub struct QuotaGate {
    quota: Arc<Quota>,
}

impl QuotaGate {
    pub fn new(quota: Arc<Quota>) -> QuotaGate {
        QuotaGate { quota }
    }
}

impl Plugin for QuotaGate {
    fn name(&self) -> &'static str {
        NAME
    }
    fn into_pre_enqueue(self: Arc<Self>) -> Option<Arc<dyn PreEnqueuePlugin>> {
        Some(self)
    }
    fn into_enqueue_extensions(self: Arc<Self>) -> Option<Arc<dyn EnqueueExtensions>> {
        Some(self)
    }
}

impl PreEnqueuePlugin for QuotaGate {
    fn pre_enqueue(&self, pod: &Pod) -> Status {
        let limited = self.quota.state.lock().limits.contains_key(&pod.namespace);
        if !limited || self.quota.is_admitted(pod) {
            Status::success()
        } else {
            Status::new(
                Code::UnschedulableAndUnresolvable,
                format!(
                    "namespace {} has no quota left for this pod",
                    pod.namespace.to_string_lossy()
                ),
            )
        }
    }
}

impl EnqueueExtensions for QuotaGate {
    /// Admission comes with the pod's own update (the controller ungates it).
    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![ClusterEvent::new(EventResource::Pod, ActionType::UPDATE)]
    }
    fn queueing_hint(
        &self,
        _event: &ClusterEvent,
        pod: &Pod,
        _old: &EventObject,
        new: &EventObject,
    ) -> Result<QueueingHint, String> {
        let own = new.pod().is_some_and(|p| p.key == pod.key);
        Ok(if own && self.quota.is_admitted(pod) {
            QueueingHint::Queue
        } else {
            QueueingHint::QueueSkip
        })
    }
}

/// Registers [`QuotaGate`] under [`NAME`], sharing `quota` with the controller.
pub fn register(registry: &mut Registry, quota: Arc<Quota>) {
    registry.register(NAME, move |_| Arc::new(QuotaGate::new(quota.clone())));
}
