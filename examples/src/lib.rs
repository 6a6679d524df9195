//! Plugins written outside the engine, the way a user's crate writes them (KEP-624's
//! out-of-tree plugins): each registers itself in a [`Registry`] by name and is enabled
//! through KubeSchedulerConfiguration, with no edit to the engine.
//!
//! - [`quota_gate`]: KEP-3521's dynamic-quota story. A controller removes a pod's scheduling
//!   gate while its namespace has quota left, and admits more pods as pods are deleted; a
//!   PreEnqueue plugin keeps any pod the controller has not admitted out of activeQ, even if
//!   someone strips the gate by hand (several PreEnqueue plugins composed).
//!   [`quota_gate::harness_controller`] runs the controller beside the scheduler in the
//!   benchmark harness (`perf-data/workloads/plugins/quota.yaml`).
//! - [`gang`]: a Permit-based gang plugin (coscheduling): pods of a group wait at Permit until
//!   `min-available` of them are reserved, then all are approved; when one is rejected or
//!   times out, the whole group is rejected (`perf-data/workloads/plugins/gang.yaml`).
//!
//! [`Registry`]: tidegate_engine::Registry

pub mod gang;
pub mod quota_gate;

use tidegate_engine::Registry;

/// Registers both example plugins. `quota` is shared with the quota controller.
pub fn register(registry: &mut Registry, quota: std::sync::Arc<quota_gate::Quota>) {
    quota_gate::register(registry, quota);
    gang::register(registry);
}
