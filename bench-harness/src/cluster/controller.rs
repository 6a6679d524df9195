//! Controllers beside the scheduler, as a quota manager or a job controller runs beside
//! kube-scheduler: they watch pods through the store (an informer, here a callback) and act
//! through it (API updates).
//!
//! Protocol: each workload starts with [`Controller::start`] and its fresh store. The store
//! calls [`Controller::on_pod_add`] after every pod it creates and
//! [`Controller::on_pod_delete`] after every pod it removes, always *after* releasing its own
//! lock and after the scheduler has seen the event, so a controller may call back into the
//! store (say [`Store::remove_scheduling_gate`]) from inside a hook. Hooks run on the thread
//! that made the change: an op's thread, a background op's, or the scheduler's (preemption
//! deletes victims).
//!
//! The store does not know this trait: a controller is attached as one of the store's
//! [`PodWatcher`]s ([`Store::add_controller`]), so the dependency runs one way, from
//! controllers to the store.

use crate::cluster::store::{KubeObject, PodWatcher, Store};
use std::sync::Arc;
use tidegate_engine::api::Pod;

pub trait Controller: Send + Sync {
    /// A workload starts; `store` is its API server until it ends (keep a `Weak` to it if the
    /// controller acts outside the hooks).
    fn start(&self, _store: &Arc<Store>) {}
    /// A pod was created.
    fn on_pod_add(&self, _store: &Store, _pod: &Arc<Pod>) {}
    /// A pod was deleted (removed from the store; a pod held by finalizers is not deleted yet).
    fn on_pod_delete(&self, _store: &Store, _pod: &Pod) {}
    /// An object of another kind was created (after the scheduler has seen it).
    fn on_object_add(&self, _store: &Store, _obj: &Arc<dyn KubeObject>) {}
}

/// A controller seen through the store's watcher hook.
impl PodWatcher for Arc<dyn Controller> {
    fn pod_added(&self, store: &Store, pod: &Arc<Pod>) {
        self.on_pod_add(store, pod);
    }
    fn pod_deleted(&self, store: &Store, pod: &Pod) {
        self.on_pod_delete(store, pod);
    }
    fn object_added(&self, store: &Store, obj: &Arc<dyn KubeObject>) {
        self.on_object_add(store, obj);
    }
}

impl Store {
    /// Adds a controller: it sees every pod created or deleted from now on.
    pub fn add_controller(&self, c: Arc<dyn Controller>) {
        self.add_watcher(Arc::new(c));
    }
}
