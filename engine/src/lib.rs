//! tidegate-engine: kube-scheduler's scheduling queue and scheduling framework, rebuilt in Rust.
//!
//! Layers, each using only those to its left (checked by `tests/layers.rs`):
//!
//! ```text
//! clock, sync, features  →  api  →  framework  →  { cache, queue, plugins }  →  { config, scheduler }
//! ```
//!
//! - [`clock`]: real and virtual time.
//! - [`features`]: kube's feature gates, and what each means for tidegate.
//! - [`api`]: Kubernetes objects in, compact internal forms out; quantities; validation.
//! - [`framework`]: extension points, Status, CycleState, NodeInfo, the snapshot,
//!   `QueuedPodInfo`, the plugin registry and runtime, the parallel filter, the metrics.
//! - [`cache`]: nodes, assumed/bound pods; refreshes the per-cycle snapshot.
//! - [`queue`]: the scheduling queue (activeQ, backoffQ, unschedulable pool, gated set).
//! - [`plugins`]: the in-tree plugins.
//! - [`config`]: `KubeSchedulerConfiguration`: defaults, merge, validation.
//! - [`scheduler`]: event handlers, `schedule_one`, Score, the binding cycle.
//!
//! The engine does no I/O: the cluster reaches it through the event handlers on
//! [`scheduler::Scheduler`] and it reaches the cluster only through
//! [`framework::ClusterClient`].

#![warn(unreachable_pub)]

pub mod api;
pub mod cache;
pub mod clock;
pub mod config;
pub mod features;
pub mod framework;
pub mod plugins;
pub mod queue;
pub mod scheduler;
pub(crate) mod sync;

pub use scheduler::{Scheduler, SchedulerConfig};
