//! Types shared by the framework and the layers above it (kube's `framework/types.go`):
//! [`QueuedPodInfo`], the pod as the scheduling queue holds it, and [`Nominating`], how a
//! nomination is made.

use crate::api::{Pod, PodKey, Sym};
use crate::clock::Time;
use std::sync::Arc;

/// A pod in the queue with its scheduling bookkeeping (kube's `QueuedPodInfo`).
#[derive(Clone, Debug)]
pub struct QueuedPodInfo {
    pub pod: Arc<Pod>,
    /// When the pod was added; refreshed when it comes back after a failed attempt.
    pub timestamp: Time,
    /// Incremented on every Pop.
    pub attempts: u32,
    pub unschedulable_count: u32,
    pub consecutive_errors_count: u32,
    /// Set the first time the pod enters activeQ (so SLI latency excludes time spent gated).
    pub initial_attempt_timestamp: Option<Time>,
    pub unschedulable_plugins: Vec<&'static str>,
    pub pending_plugins: Vec<&'static str>,
    /// The PreEnqueue plugin that keeps the pod gated, if any.
    pub gating_plugin: Option<&'static str>,
}

impl QueuedPodInfo {
    pub fn new(pod: Arc<Pod>, now: Time) -> QueuedPodInfo {
        QueuedPodInfo {
            pod,
            timestamp: now,
            attempts: 0,
            unschedulable_count: 0,
            consecutive_errors_count: 0,
            initial_attempt_timestamp: None,
            unschedulable_plugins: Vec::new(),
            pending_plugins: Vec::new(),
            gating_plugin: None,
        }
    }

    pub fn key(&self) -> &PodKey {
        &self.pod.key
    }

    pub fn gated(&self) -> bool {
        self.gating_plugin.is_some()
    }

    pub(crate) fn rejectors(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.unschedulable_plugins
            .iter()
            .chain(self.pending_plugins.iter())
            .copied()
    }
}

/// How a nomination is made (kube's `NominatingInfo` with its `NominatingMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nominating {
    /// Use the pod's `status.nominatedNodeName`.
    FromStatus,
    /// Nominate to this node (preemption); `Sym::EMPTY` clears the nomination.
    Override(Sym),
}
