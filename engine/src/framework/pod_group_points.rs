//! How a profile's plugins are sorted into the pod-group extension points (kube's
//! `NewFramework`): at most one PlacementGenerate plugin; GangScheduling as the only
//! PlacementFeasible plugin, under GenericWorkload; PlacementScore weights from
//! `placementScore`, then `multiPoint`, 0 meaning 1.

use super::interface::*;
use ahash::AHashMap;
use std::sync::Arc;

/// kube's `names.GangScheduling`: the one PlacementFeasible plugin.
const GANG_SCHEDULING: &str = "GangScheduling";

/// A profile's pod-group plugins, per extension point.
pub(super) struct PodGroupPoints {
    pub(super) generate: Vec<Arc<dyn PlacementGeneratePlugin>>,
    pub(super) feasible: Vec<Arc<dyn PlacementFeasiblePlugin>>,
    pub(super) score: Vec<(Arc<dyn PlacementScorePlugin>, i64)>,
    pub(super) post_filter: Vec<Arc<dyn PodGroupPostFilterPlugin>>,
}

impl PodGroupPoints {
    /// `Err(())`: more than one PlacementGenerate plugin.
    pub(super) fn new(
        placement_score: &[(String, i64)],
        multi_point: &[(String, i64)],
        instances: &AHashMap<String, Arc<dyn Plugin>>,
        list: &dyn Fn(&str) -> Vec<Arc<dyn Plugin>>,
        generic_workload: bool,
    ) -> Result<PodGroupPoints, ()> {
        let mut weights: AHashMap<&str, i64> = AHashMap::new();
        for (name, w) in placement_score.iter().chain(multi_point) {
            weights
                .entry(name.as_str())
                .or_insert(if *w == 0 { 1 } else { *w });
        }
        let generate: Vec<_> = list("placementGenerate")
            .into_iter()
            .filter_map(|p| p.into_placement_generate())
            .collect();
        if generate.len() > 1 {
            return Err(());
        }
        let feasible: Vec<_> = if generic_workload {
            instances
                .get(GANG_SCHEDULING)
                .and_then(|p| p.clone().into_placement_feasible())
                .into_iter()
                .collect()
        } else {
            Vec::new()
        };
        Ok(PodGroupPoints {
            generate,
            feasible,
            score: list("placementScore")
                .into_iter()
                .filter_map(|p| {
                    let w = weights.get(p.name()).copied().unwrap_or(1);
                    p.into_placement_score().map(|s| (s, w))
                })
                .collect(),
            post_filter: list("podGroupPostFilter")
                .into_iter()
                .filter_map(|p| p.into_pod_group_post_filter())
                .collect(),
        })
    }
}
