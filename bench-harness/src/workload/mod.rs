//! The workload file: a scheduler_perf `performance-config.yaml` read with positions
//! ([`yaml`]), its test cases, workloads, params and ops ([`config`]), the scheduler
//! configuration a test case names ([`scheduler_config`]) and the object templates its ops
//! render ([`manifest`]).

pub mod config;
pub mod manifest;
pub mod scheduler_config;
pub mod yaml;
