//! tidegate-engine: kube-scheduler's scheduling queue and scheduling framework, rebuilt in Rust.
//!
//! # The public surface
//!
//! This file is the engine's one public face, as kube's `k8s.io/kube-scheduler/framework`
//! staging module is kube-scheduler's: the modules behind it are private, and what a user
//! may name is re-exported here, in three groups.
//!
//! **Writing a plugin** (kube's `framework` package):
//!
//! - the extension points: [`Plugin`] and [`PreEnqueuePlugin`], [`QueueSortPlugin`],
//!   [`PreFilterPlugin`] (with [`PreFilterExtensions`], [`PreFilterResult`]),
//!   [`FilterPlugin`], [`PostFilterPlugin`] (with [`Handle`], [`Diagnosis`],
//!   [`PostFilterResult`]), [`PreScorePlugin`], [`ScorePlugin`], [`ReservePlugin`],
//!   [`PermitPlugin`], [`PreBindPlugin`], [`BindPlugin`], [`PostBindPlugin`], and
//!   [`EnqueueExtensions`] with the cluster events ([`ClusterEvent`], [`EventResource`],
//!   [`ActionType`], [`EventObject`], [`QueueingHint`]);
//! - what they take and return: [`Status`] and [`Code`], [`CycleState`] (with
//!   [`StateData`]), [`NodeInfo`] and its [`NodeRow`]/[`NodeTraits`]/[`PodList`], the
//!   cycle's [`Snapshot`] (with [`ImageStateSummary`]), [`QueuedPodInfo`], [`WaitingPods`]/[`WaitingPod`] (Permit),
//!   [`PodNominator`], [`SignFragments`] (pod signatures for batching),
//!   [`MAX_NODE_SCORE`]/[`MIN_NODE_SCORE`];
//! - registering it: [`Registry`] (`Registry::in_tree()` holds the in-tree plugins),
//!   [`PluginContext`], [`PluginFactory`], [`decode_args`];
//! - the object forms plugins read: [`api`] (`Pod`, `Node`, `Labels`, selectors, `Sym`,
//!   `Resource`, ...).
//!
//! **Running the scheduler** (kube's `pkg/scheduler`): [`Scheduler`] with its
//! [`SchedulerConfig`] (profiles: [`Profile`], [`Plugins`], [`PluginSet`]; the queue's [`QueueConfig`]),
//! the informer side (`Scheduler::on_{pod,node}_{add,update,delete}`), the cluster side
//! ([`ClusterClient`], [`NoopClient`]), the scheduler's parts its fields expose
//! ([`SchedulingQueue`] with its [`PendingCounts`], [`QueueDump`], [`QueueError`] and
//! [`Nominator`]; [`Cache`]; [`SchedulerStats`]), time ([`clock`]), the
//! configuration file ([`config`]), feature gates ([`features`]), the instrumentation
//! ([`metrics`]: kube's `pkg/scheduler/metrics` names, the recorders, the histograms), the
//! API server's conversion and validation ([`api::convert`], [`api::validation`]).
//!
//! **Judging it** (the differential oracle): [`Scheduler::evaluate`]'s [`Evaluation`],
//! preemption's dry run ([`PreemptionEvaluation`], [`Candidate`]), a deferred resize's
//! [`DeferredEvaluation`].
//!
//! Anything else is `pub(crate)` or private (`#![warn(unreachable_pub)]`, denied in CI by
//! clippy's `-D warnings`, keeps it so; `ci/engine-narrow.py` narrows what nothing outside
//! uses, `ci/engine-surface.sh` counts). The engine's own integration tests and benches reach
//! a few internals more through [`bench_support`], which is not part of the surface.
//!
//! # Layers
//!
//! Each module uses only those to its left (checked by `tests/layers.rs`):
//!
//! ```text
//! clock, sync, features  →  api  →  framework  →  { cache, queue, plugins }  →  { config, scheduler }
//! ```
//!
//! - `clock`: real and virtual time.
//! - `features`: kube's feature gates, and what each means for tidegate.
//! - `api`: Kubernetes objects in, compact internal forms out; quantities; validation.
//! - `framework`: extension points, Status, CycleState, NodeInfo, the snapshot,
//!   `QueuedPodInfo`, the plugin registry and runtime, the parallel filter, the metrics.
//! - `cache`: nodes, assumed/bound pods; refreshes the per-cycle snapshot.
//! - `queue`: the scheduling queue (activeQ, backoffQ, unschedulable pool, gated set).
//! - `plugins`: the in-tree plugins.
//! - `config`: `KubeSchedulerConfiguration`: defaults, merge, validation.
//! - `scheduler`: event handlers, `schedule_one`, Score, the binding cycle.
//!
//! The engine does no I/O: the cluster reaches it through the event handlers on
//! [`Scheduler`] and it reaches the cluster only through [`ClusterClient`].

#![warn(unreachable_pub)]

pub mod api;
mod cache;
pub mod clock;
pub mod config;
pub mod features;
mod framework;
mod plugins;
mod queue;
mod scheduler;
mod sync;

// Writing a plugin.
pub use framework::cycle_state::{CycleState, PodGroupCycleData, StateData};
pub use framework::events::{
    ActionType, ApiObject, ClusterEvent, EventObject, EventResource, QueueingHint,
};
pub use framework::interface::{
    ActiveFilters, BindPlugin, ClusterClient, Diagnosis, EnqueueExtensions, FilterPlugin, Handle,
    MAX_NODE_SCORE, MIN_NODE_SCORE, NoopClient, PermitPlugin, PlacementFeasiblePlugin,
    PlacementGeneratePlugin, PlacementScorePlugin, Plugin, PodGroupHandle,
    PodGroupPostFilterPlugin, PodNominator, PostBindPlugin, PostFilterPlugin, PostFilterResult,
    PreBindPlugin, PreEnqueuePlugin, PreFilterExtensions, PreFilterPlugin, PreFilterResult,
    PreScorePlugin, QueueSortPlugin, ReservePlugin, ScorePlugin,
};
pub use framework::metrics;
pub use framework::node_info::{NodeInfo, NodeRow, NodeTraits, PodList};
pub use framework::node_memo::MemoCounts;
pub use framework::pod_group::{
    GeneratePlacementsResult, Placement, PlacementCycleState, PlacementPluginScore,
    PlacementPluginScores, PlacementProgress, PlacementScore, PodGroupAssignments,
    PodGroupCycleState, PodGroupInfo, PodGroupPostFilterResult, PodGroupSchedulingFunc,
    ProposedAssignment, QueuedPodGroupInfo, member_order,
};
pub use framework::pod_group_state::{PodGroupState, PodGroupStates, group_of};
pub use framework::registry::{PluginContext, PluginFactory, Registry, decode_args};
pub use framework::signature::SignFragments;
pub use framework::snapshot::{ImageStateSummary, Snapshot};
pub use framework::status::{Code, Status};
pub use framework::types::{Nominating, QueuedPodInfo};
pub use framework::waiting_pods::{WaitingPod, WaitingPods};

// Running the scheduler.
pub use cache::Cache;
pub use framework::runtime::{Framework, FrameworkError, PluginSet, Plugins, Profile};
/// The structured allocator outside a scheduling cycle (harnesses' `allocResourceClaims`).
pub use plugins::dynamic_resources::standalone::ClaimAllocator;
/// kube's API-server validation of a DRA CEL selector.
pub use plugins::dynamic_resources::standalone::{SelectorError, validate_cel_selector};
pub use queue::nominator::Nominator;
pub use queue::{PendingCounts, QueueConfig, QueueDump, QueueError, QueuedEntity, SchedulingQueue};
pub use scheduler::{PinThreads, Scheduler, SchedulerConfig, SchedulerStats};

// Judging it.
pub use plugins::default_preemption::Candidate;
pub use scheduler::{DeferredEvaluation, Evaluation, PreemptionEvaluation};

/// Internals the engine's own integration tests and benches drive directly (activeQ, the
/// keyed heap, a queue-sort plugin without a registry, the block verdicts of the parallel
/// Filter, the pod signatures batching compares). Not part of the public surface: no stability, no documentation beyond the items'.
#[doc(hidden)]
pub mod bench_support {
    pub use crate::framework::parallelize::BlockVerdicts;
    pub use crate::framework::signature::PodSignature;
    pub use crate::plugins::priority_sort::PrioritySort;
    pub use crate::queue::active::{ActiveQ, LessFn, SortKeyFn};
    pub use crate::queue::heap::KeyedHeap;

    /// DRA device selectors evaluated over every device of a slice, by the CEL interpreter
    /// or over the slice's attribute columns (`plugins::dynamic_resources::cel_columns`).
    pub struct SelectorBench(crate::plugins::dynamic_resources::cel::CelSelectors);

    impl Default for SelectorBench {
        fn default() -> SelectorBench {
            SelectorBench(crate::plugins::dynamic_resources::cel::CelSelectors::new())
        }
    }

    impl SelectorBench {
        /// How many of the slice's devices `expression` selects, by the interpreter.
        pub fn interpret(&self, expression: &str, slice: &crate::api::dra::ResourceSlice) -> usize {
            (slice.devices.iter())
                .filter(|d| self.0.interpret(expression, slice.driver, d) == Ok(true))
                .count()
        }

        /// The same over the slice's columns; `None` when the expression has no column form
        /// or a device needs the interpreter.
        pub fn columns(
            &self,
            expression: &str,
            slice: &crate::api::dra::ResourceSlice,
        ) -> Option<usize> {
            let program = self.0.selector(expression).columns?;
            let rows = program.eval_slice(slice);
            rows.iter().try_fold(0, |n, r| r.map(|b| n + b as usize))
        }
    }
}
