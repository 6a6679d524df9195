//! What the Go test packages of some scheduler_perf topics add to the workloads they run,
//! through `perf.WithPreRunFn` and `perf.WithNodeUpdateFn` in their `_test.go` (which is
//! code, not YAML, so a harness that runs the YAML unchanged must know it by topic).
//!
//! - `nodedeclaredfeatures` (`node_declared_features_test.go`): when the workload itself sets
//!   `NodeDeclaredFeatures: true`, after every `createNodes` every node's
//!   `status.declaredFeatures` becomes `Feature1`..`Feature<numNodeDeclaredFeatures>` (the
//!   param, 0 when absent), sorted as strings. Its pre-run hook swaps kube's feature registry
//!   for as many mock features, but the scheduler's registry (`ndf.DefaultFramework`) was
//!   built from the real one when the package was initialised, so the mock features change
//!   nothing the scheduler decides: the node updates (events, cache refreshes) are the whole
//!   effect, and that is what is modelled here.

use super::RunCx;
use crate::error::HarnessError;
use crate::workload::{Config, ParamValue, Workload};

/// Whether the `nodedeclaredfeatures` hooks act on this workload: the workload itself (not
/// its test case) sets the gate on, as the hooks read `w.FeatureGates`.
fn declared_features_hooks(cfg: &Config, wl: &Workload) -> bool {
    cfg.topic == "nodedeclaredfeatures"
        && wl.feature_gates.get("NodeDeclaredFeatures") == Some(&true)
}

/// The params the topic's hooks read (`w.GetParam`), which count as used as in kube.
pub(crate) fn params_read(cfg: &Config, wl: &Workload) -> &'static [&'static str] {
    if declared_features_hooks(cfg, wl) {
        &["numNodeDeclaredFeatures"]
    } else {
        &[]
    }
}

/// The topic's node update after a `createNodes` op (kube's `nodeUpdateFn`).
pub(crate) fn after_create_nodes(cx: &mut RunCx) -> Result<(), HarnessError> {
    if !declared_features_hooks(cx.cfg, cx.wl) {
        return Ok(());
    }
    let n = match cx.wl.params.get("numNodeDeclaredFeatures") {
        Some((ParamValue::Int(n), _)) => (*n).max(0) as usize,
        _ => 0,
    };
    let features = declared_features(n);
    for name in cx.store.node_names() {
        cx.store.set_node_declared_features(&name, &features);
    }
    Ok(())
}

/// `Feature1`..`Feature<n>`, sorted as Go's `sort.Strings` sorts them.
fn declared_features(n: usize) -> Vec<String> {
    let mut v: Vec<String> = (1..=n).map(|i| format!("Feature{i}")).collect();
    v.sort();
    v
}

#[cfg(test)]
mod tests {
    // provenance: test/integration/scheduler_perf/nodedeclaredfeatures/node_declared_features_test.go
    // (updateNodesWithDeclaredFeatures), kubernetes v1.37.2.
    #[test]
    fn feature_names_sort_as_strings() {
        assert_eq!(
            super::declared_features(11),
            vec![
                "Feature1",
                "Feature10",
                "Feature11",
                "Feature2",
                "Feature3",
                "Feature4",
                "Feature5",
                "Feature6",
                "Feature7",
                "Feature8",
                "Feature9"
            ]
        );
        assert!(super::declared_features(0).is_empty());
    }
}
