//! tidegate-engine: kube-scheduler's scheduling queue and scheduling framework, rebuilt in Rust.
//!
//! Layout (one folder per subsystem, names after the kube-scheduler concepts):
//! - [`api`]: Kubernetes objects in, compact internal forms out; quantities; validation.
//! - [`queue`]: the scheduling queue (activeQ, backoffQ, unschedulable pool, gated set).
//! - [`framework`]: extension points, Status, CycleState, NodeInfo, the plugin runtime and the
//!   parallel filter.
//! - [`plugins`]: the in-tree plugins and the registry.
//! - [`cache`]: nodes, assumed/bound pods and the per-cycle snapshot.
//! - [`metrics`]: kube's metric names and buckets, recorded on every call.
//! - [`scheduler`]: `schedule_one` and the informer-facing event handlers.
//!
//! The engine does no I/O: the cluster reaches it through the event handlers on
//! [`scheduler::Scheduler`] and it reaches the cluster only through
//! [`framework::ClusterClient`].

#![warn(unreachable_pub)]

pub mod api;
pub mod cache;
pub mod clock;
pub mod config;
pub mod framework;
pub mod plugins;
pub mod queue;
pub mod scheduler;
pub(crate) mod sync;

/// The metrics are the framework's instrumentation (kube's `framework/runtime/metrics_recorder.go` with
/// the names of `pkg/scheduler/metrics`); this path stays for existing callers.
pub use framework::metrics;

pub use scheduler::{Scheduler, SchedulerConfig};
