//! The ops of a workload template, one type per scheduler_perf op, each in its own file as
//! scheduler_perf gives each op its own struct. Every op has three steps:
//!
//! - `resolve`: from the op as written ([`RawOp`](crate::workload::RawOp)) and the workload's params to the op's type,
//!   with params substituted, paths resolved and fields checked (`Resolve` holds what it
//!   reads; errors name the file, line:column and field);
//! - `plan` (where the op has templates): load and check them before anything runs
//!   (`Prepared`);
//! - `run`: what the op does to the cluster when the workload runs (`RunCx` holds the
//!   cluster, the scheduler, the clock and the collectors).
//!
//! [`Op`] has one variant per op type and dispatches each step to it.

pub mod alloc_resource_claims;
pub mod barrier;
pub mod churn;
pub mod create_any;
pub mod create_namespaces;
pub mod create_nodes;
pub mod create_pod_groups;
pub mod create_pod_sets;
pub mod create_pods;
pub mod delete_pods;
pub(crate) mod pod_volumes;
pub mod sleep;
pub mod start_collecting_metrics;
pub mod stop_collecting_metrics;
mod topic_hooks;
pub mod update_any;
mod view;
mod wait;

pub use alloc_resource_claims::AllocResourceClaims;
pub use barrier::Barrier;
pub use churn::Churn;
pub use create_any::CreateAny;
pub use create_namespaces::CreateNamespaces;
pub use create_nodes::{CreateNodes, NodeStrategy};
pub use create_pod_groups::{CreatePodGroups, WaitForPodGroups};
pub use create_pods::CreatePods;
pub use delete_pods::DeletePods;
pub use sleep::Sleep;
pub use start_collecting_metrics::StartCollectingMetrics;
pub use stop_collecting_metrics::StopCollectingMetrics;
pub use update_any::UpdateAny;

mod context;
mod input;
mod resolve;

pub(crate) use context::{OpOptions, Prepared, RunCx};
pub(crate) use input::Resolve;
pub use resolve::{check_ops, resolve_ops};
pub(crate) use view::ExecutorView;

use crate::cluster::store::Store;
use crate::error::{HarnessError, InputError};
use crate::run::progress::Goal;

/// An op, resolved for one workload.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    CreateNodes(CreateNodes),
    CreateNamespaces(CreateNamespaces),
    CreatePods(CreatePods),
    Barrier(Barrier),
    DeletePods(DeletePods),
    UpdateAny(UpdateAny),
    Sleep(Sleep),
    StartCollectingMetrics(StartCollectingMetrics),
    StopCollectingMetrics(StopCollectingMetrics),
    CreateAny(CreateAny),
    Churn(Churn),
    /// `createPodGroups` and `createCompositePodGroups`.
    CreatePodGroups(CreatePodGroups),
    WaitForPodGroups(WaitForPodGroups),
    AllocResourceClaims(AllocResourceClaims),
    /// A known op that this build does not run; the workload is skipped.
    Unsupported(Unsupported),
}

/// A known op that this build does not run (or runs only in part), and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Unsupported {
    pub opcode: String,
    pub reason: String,
}

impl Op {
    /// The scheduler_perf opcode this op came from.
    pub fn opcode(&self) -> &'static str {
        match self {
            Op::CreateNodes(_) => CreateNodes::OPCODE,
            Op::CreateNamespaces(_) => CreateNamespaces::OPCODE,
            Op::CreatePods(_) => CreatePods::OPCODE,
            Op::Barrier(_) => Barrier::OPCODE,
            Op::DeletePods(_) => DeletePods::OPCODE,
            Op::UpdateAny(_) => UpdateAny::OPCODE,
            Op::Sleep(_) => Sleep::OPCODE,
            Op::StartCollectingMetrics(_) => StartCollectingMetrics::OPCODE,
            Op::StopCollectingMetrics(_) => StopCollectingMetrics::OPCODE,
            Op::CreateAny(_) => CreateAny::OPCODE,
            Op::Churn(_) => Churn::OPCODE,
            Op::CreatePodGroups(o) => o.opcode(),
            Op::WaitForPodGroups(_) => WaitForPodGroups::OPCODE,
            Op::AllocResourceClaims(_) => AllocResourceClaims::OPCODE,
            Op::Unsupported(_) => "unsupported",
        }
    }

    /// What the progress line counts the op towards: the pods a waiting `createPods` sees
    /// scheduled (or creates, when it does not wait), the pods a `barrier` finds pending
    /// (all unbound pods of the store, an upper bound where it names namespaces), a
    /// `sleep`'s or a steady state's time.
    pub(crate) fn progress_goal(&self, store: &Store) -> Goal {
        match self {
            Op::CreatePods(CreatePods {
                steady: Some(d), ..
            }) => Goal::Time(*d),
            Op::CreatePods(o) if o.skip_wait => Goal::Created {
                total: o.count as u64,
            },
            Op::CreatePods(o) => Goal::Bound {
                total: o.count as u64,
            },
            Op::Barrier(_) => Goal::Bound {
                total: store.counts().unbound,
            },
            Op::Sleep(o) => Goal::Time(o.duration),
            _ => Goal::Open,
        }
    }

    /// The objects the op creates (against the workload's limit).
    fn creates(&self) -> u64 {
        match self {
            Op::CreateNodes(o) => o.count as u64,
            Op::CreateNamespaces(o) => o.count as u64,
            Op::CreatePods(o) => o.count as u64,
            Op::CreateAny(o) => o.count as u64,
            Op::CreatePodGroups(o) => o.count as u64,
            _ => 0,
        }
    }

    /// Whether the op collects metrics, as upstream's `collectsMetrics()` says: a createPods
    /// with `collectMetrics`, or a `stopCollectingMetrics` (which collects what a
    /// `startCollectingMetrics` began; a start alone collects nothing).
    pub fn collects_metrics(&self) -> bool {
        matches!(
            self,
            Op::CreatePods(CreatePods {
                collect_metrics: true,
                ..
            }) | Op::StopCollectingMetrics(_)
        )
    }

    /// Loads and checks the op's templates (op `i` of the workload) into `prepared`; the
    /// first reason the workload cannot run goes to `unsupported`.
    pub(crate) fn plan(
        &self,
        i: usize,
        prepared: &mut Prepared,
        unsupported: &mut Option<String>,
    ) -> Result<(), InputError> {
        match self {
            Op::Unsupported(Unsupported { opcode, reason }) => {
                unsupported.get_or_insert_with(|| format!("{opcode}: {reason}"));
                Ok(())
            }
            Op::CreatePods(o) => o.plan(i, prepared, unsupported),
            Op::CreateNodes(o) => o.plan(i, prepared),
            Op::CreateNamespaces(o) => o.plan(i, prepared),
            Op::CreateAny(o) => o.plan(i, prepared, unsupported),
            Op::Churn(o) => o.plan(i, prepared, unsupported),
            Op::UpdateAny(o) => o.plan(i, prepared, unsupported),
            Op::CreatePodGroups(o) => o.plan(i, prepared),
            _ => Ok(()),
        }
    }

    /// Runs the op (op `cx.index` of the workload).
    pub(crate) fn run(&self, cx: &mut RunCx) -> Result<(), HarnessError> {
        match self {
            Op::CreateNodes(o) => o.run(cx),
            Op::CreateNamespaces(o) => o.run(cx),
            Op::CreatePods(o) => o.run(cx),
            Op::Barrier(o) => o.run(cx),
            Op::DeletePods(o) => o.run(cx),
            Op::UpdateAny(o) => o.run(cx),
            Op::Sleep(o) => o.run(cx),
            Op::StartCollectingMetrics(o) => o.run(cx),
            Op::StopCollectingMetrics(o) => o.run(cx),
            Op::CreateAny(o) => o.run(cx),
            Op::Churn(o) => o.run(cx),
            Op::CreatePodGroups(o) => o.run(cx),
            Op::WaitForPodGroups(o) => o.run(cx),
            Op::AllocResourceClaims(o) => o.run(cx),
            // Planning skips such workloads; reaching here is a harness bug, reported as such.
            Op::Unsupported(Unsupported { opcode, reason }) => {
                Err(HarnessError::Unsupported(format!("{opcode}: {reason}")))
            }
        }
    }
}
