//! The run: selecting and planning workloads ([`plan`]), executing their ops against a fresh
//! cluster and scheduler ([`execute`]) on real or virtual time ([`pace`]), with a progress
//! line ([`progress`]), collection windows ([`collect`]), memory readings ([`memory`]) and
//! fault injection (`faults`); how to run in [`options`]. What comes back
//! ([`WorkloadReport`](crate::output::results::WorkloadReport)) is `output::results`; [`run_config_to`] also prints
//! and writes it as `tidegate run` does (`output::sink`). [`ops`] holds one type per
//! scheduler_perf op, with its resolve and run steps;
//! [`outcome`] records what the kube differential compares.
//!
//! Every selected workload is planned first, so bad input is reported before anything runs
//! or is written; then each runs against a fresh object store and scheduler.

pub mod collect;
pub(crate) mod device_classes;
pub mod execute;
pub(crate) mod faults;
pub mod flame;
pub mod memory;
pub mod ops;
pub mod options;
pub mod outcome;
pub mod pace;
pub mod plan;
pub(crate) mod pod_groups;
pub mod progress;

pub use execute::{run_config, run_config_to, run_config_with};
pub use memory::{peak_rss_mb, rss_mb};
pub use ops::check_ops;
pub use options::{LiveScheduler, RunOptions};
pub use plan::{check_workload, select};
