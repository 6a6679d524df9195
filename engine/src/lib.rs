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

pub mod api;
pub mod cache;
pub mod config;
pub mod framework;
pub mod metrics;
pub mod plugins;
pub mod queue;
pub mod scheduler;
pub mod sync;

pub use scheduler::{Scheduler, SchedulerConfig};
