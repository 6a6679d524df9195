//! One plugin's extension points alone, for the differential oracle: it follows what kube's
//! Reserve (or Unreserve) of one plugin left behind for a pod kube placed, where the rest of
//! the cycle is replayed otherwise (`Scheduler::reserve_volumes`, `Scheduler::fits_member`).

use super::cycle_state::CycleState;
use super::runtime::Framework;
use super::snapshot::Snapshot;
use super::status::Status;
use crate::api::{Pod, Sym};

impl Framework {
    /// The Reserve plugin `name` as a `T`, where it offers itself ([`Plugin::as_any`](super::interface::Plugin::as_any)):
    /// for the oracle hooks that reach one plugin's own state.
    pub(crate) fn reserve_plugin<T: 'static>(&self, name: &str) -> Option<&T> {
        self.reserve
            .iter()
            .find(|p| p.name() == name)?
            .as_any()?
            .downcast_ref()
    }

    /// One plugin's PreFilter, Filter on `node` and Reserve, on `state` (the oracle follows
    /// what kube's Reserve of that plugin left behind for a pod kube bound). A plugin this
    /// profile does not run at one of the points is skipped there.
    pub(crate) fn run_reserve_of(
        &self,
        name: &str,
        state: &mut CycleState,
        pod: &Pod,
        snapshot: &Snapshot,
        node: Sym,
    ) -> Status {
        if let Some(p) = self.pre_filter.iter().find(|p| p.name() == name) {
            let (_, s) = p.pre_filter(state, pod, snapshot);
            if !s.is_success() {
                return s;
            }
        }
        let Some(ni) = snapshot.get(node) else {
            return Status::error(format!("node {node} not in the snapshot"));
        };
        if let Some(p) = self.filter.iter().find(|p| p.name() == name) {
            let s = p.filter(state, pod, ni);
            if !s.is_success() {
                return s;
            }
        }
        self.run_reserve_only(name, state, pod, node)
    }

    /// Reserve of every plugin but `name` (see [`Scheduler::fits_member`]).
    ///
    /// [`Scheduler::fits_member`]: crate::Scheduler::fits_member
    pub(crate) fn run_reserve_except(
        &self,
        name: &str,
        state: &mut CycleState,
        pod: &Pod,
        node: Sym,
    ) -> Status {
        for p in self.reserve.iter().filter(|p| p.name() != name) {
            let s = p.reserve(state, pod, node);
            if !s.is_success() {
                return s.with_plugin(p.name());
            }
        }
        Status::success()
    }

    /// One plugin's Reserve alone, on `state` as it is (no PreFilter or Filter first).
    pub(crate) fn run_reserve_only(
        &self,
        name: &str,
        state: &mut CycleState,
        pod: &Pod,
        node: Sym,
    ) -> Status {
        match self.reserve.iter().find(|p| p.name() == name) {
            Some(p) => p.reserve(state, pod, node),
            None => Status::success(),
        }
    }

    /// One plugin's Unreserve (the oracle's undo of a placement it followed, see
    /// [`Framework::run_reserve_of`]).
    pub(crate) fn run_unreserve_of(
        &self,
        name: &str,
        state: &mut CycleState,
        pod: &Pod,
        node: Sym,
    ) {
        if let Some(p) = self.reserve.iter().find(|p| p.name() == name) {
            p.unreserve(state, pod, node);
        }
    }
}
