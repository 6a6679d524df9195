//! tidegate-bench: runs kube-scheduler's `scheduler_perf` workload files against the tidegate
//! engine and reports perf-dash JSON.
#![forbid(unsafe_code)]

pub mod config;
pub mod error;
pub mod manifest;
pub mod objects;
pub mod report;
pub mod runner;
pub mod sched_config;
pub mod store;
pub mod template;
pub mod yaml;
