//! The run: selecting and planning workloads ([`plan`]), executing their ops against a fresh
//! cluster and scheduler ([`execute`]) on real or virtual time ([`pace`]), with a progress
//! line ([`progress`]), collection windows ([`collect`]), memory readings ([`memory`]) and
//! fault injection (`faults`); what comes back is in [`results`], how to run in
//! [`options`]. [`ops`] holds one type per scheduler_perf op, with its resolve and run steps;
//! [`outcome`] records what the kube differential compares.
//!
//! Every selected workload is planned first, so bad input is reported before anything runs
//! or is written; then each runs against a fresh object store and scheduler.

pub mod collect;
pub mod execute;
pub(crate) mod faults;
pub use crate::interrupt;
pub mod flame;
pub mod memory;
pub mod ops;
pub mod options;
pub mod outcome;
pub mod pace;
pub mod plan;
pub mod progress;
pub mod results;

pub use execute::{is_interruption, run_config, run_config_with};
pub use flame::Profile;
pub use memory::{peak_rss_mb, rss_mb};
pub use ops::check_ops;
pub use options::{LiveScheduler, RunOptions};
pub use plan::{check_workload, select};
pub use results::{Outcome, PodDump, RunResult, Summary, WorkloadReport, placements_digest};
