//! The pod-group extension points of the runtime (kube's `RunPlacementGeneratePlugins`,
//! `RunPlacementFeasiblePlugins`, `RunPlacementScorePlugins`, `RunPodGroupPostFilterPlugins`
//! in `framework/runtime/framework.go`). How a profile's plugins are sorted into them is
//! `pod_group_points.rs`'s.

use super::interface::*;
use super::node_info::NodeInfo;
use super::pod_group::{
    Placement, PlacementCycleState, PlacementPluginScore, PlacementPluginScores, PlacementProgress,
    PlacementScore, PodGroupAssignments, PodGroupCycleState, PodGroupInfo,
    PodGroupPostFilterResult,
};
use super::runtime::{Framework, nanos, plugin_timer};
use super::status::{Code, Status};
use crate::framework::metrics::{ExtensionPoint, Series};
use std::sync::Arc;
use std::time::Instant;

/// The pod-group extension points (kube's `RunPlacementGeneratePlugins`,
/// `RunPlacementFeasiblePlugins`, `RunPlacementScorePlugins`, `RunPodGroupPostFilterPlugins`).
impl Framework {
    pub(crate) fn has_pod_group_post_filter_plugins(&self) -> bool {
        !self.pod_group_post_filter.is_empty()
    }

    /// kube's `RunPlacementGeneratePlugins`: without a plugin, one placement of `nodes`;
    /// otherwise the plugin's placements within it (none: Unschedulable `no feasible
    /// placements found`, naming the plugin).
    pub(crate) fn run_placement_generate(
        &self,
        state: &mut PodGroupCycleState,
        pod_group: &PodGroupInfo,
        nodes: Vec<Arc<NodeInfo>>,
    ) -> (Vec<Arc<Placement>>, Status) {
        let start = Instant::now();
        let parent = Placement {
            name: String::new(),
            nodes,
        };
        let out = match self.placement_generate.first() {
            None => (vec![Arc::new(parent)], Status::success()),
            Some(p) => {
                let t = plugin_timer(state);
                let (r, s) = p.generate_placements(state, pod_group, &parent);
                self.observe_plugin(t, p.name(), ExtensionPoint::PlacementGenerate, s.code());
                if !s.is_success() {
                    (Vec::new(), s.with_plugin(p.name()))
                } else if r.placements.is_empty() {
                    (
                        Vec::new(),
                        Status::new(Code::Unschedulable, "no feasible placements found")
                            .with_plugin(p.name()),
                    )
                } else {
                    (r.placements, s)
                }
            }
        };
        self.metrics.observe(
            Series::ExtensionPoint(ExtensionPoint::PlacementGenerate, out.1.code()),
            nanos(start),
        );
        out
    }

    /// kube's `RunPlacementFeasiblePlugins`: Success when every plugin says so; the first
    /// Unschedulable stops (naming the plugin); a Wait is kept while the others run; any other
    /// code is an error.
    pub(crate) fn run_placement_feasible(
        &self,
        group_state: &PodGroupCycleState,
        state: &mut PlacementCycleState,
        pod_group: &PodGroupInfo,
        progress: PlacementProgress,
    ) -> Status {
        let start = Instant::now();
        let mut status = Status::success();
        for p in &self.placement_feasible {
            let t = plugin_timer(group_state);
            let s = p.placement_feasible(group_state, state, pod_group, progress);
            self.observe_plugin(t, p.name(), ExtensionPoint::PlacementFeasible, s.code());
            match s.code() {
                Code::Success => {}
                Code::Wait => status = s.with_plugin(p.name()),
                Code::Unschedulable => {
                    status = s.with_plugin(p.name());
                    break;
                }
                Code::Error => {
                    status =
                        Status::error(format!("running PlacementFeasible plugin: {}", s.message()))
                            .with_plugin(p.name());
                    break;
                }
                c => {
                    status = Status::error(format!(
                        "unexpected status from PlacementFeasible plugin: {}",
                        c.as_str()
                    ))
                    .with_plugin(p.name());
                    break;
                }
            }
        }
        self.metrics.observe(
            Series::ExtensionPoint(ExtensionPoint::PlacementFeasible, status.code()),
            nanos(start),
        );
        status
    }

    /// kube's `RunPlacementScorePlugins`: each plugin scores every placement (`states[i]` is
    /// the state `assignments[i]` was found with), normalises its scores when it can, and
    /// each score, which must then lie in `[MIN_NODE_SCORE, MAX_NODE_SCORE]`, is weighted.
    pub(crate) fn run_placement_score(
        &self,
        group_state: &mut PodGroupCycleState,
        pod_group: &PodGroupInfo,
        assignments: &[PodGroupAssignments],
        states: &[PlacementCycleState],
    ) -> (Vec<PlacementPluginScores>, Status) {
        let start = Instant::now();
        let out = self.placement_scores(group_state, pod_group, assignments, states);
        let code = out.as_ref().map_or_else(|s| s.code(), |_| Code::Success);
        self.metrics.observe(
            Series::ExtensionPoint(ExtensionPoint::PlacementScore, code),
            nanos(start),
        );
        match out {
            Ok(v) => (v, Status::success()),
            Err(s) => (Vec::new(), s),
        }
    }

    fn placement_scores(
        &self,
        group_state: &mut PodGroupCycleState,
        pod_group: &PodGroupInfo,
        assignments: &[PodGroupAssignments],
        states: &[PlacementCycleState],
    ) -> Result<Vec<PlacementPluginScores>, Status> {
        if assignments.len() != states.len() {
            return Err(Status::error(format!(
                "expected one PlacementCycleState per PodGroupAssignments, got {} placement states for {} assignments",
                states.len(),
                assignments.len()
            )));
        }
        let mut per_plugin: Vec<Vec<PlacementScore>> =
            Vec::with_capacity(self.placement_score.len());
        for (p, _) in &self.placement_score {
            let mut scores = Vec::with_capacity(assignments.len());
            for (a, st) in assignments.iter().zip(states) {
                let t = plugin_timer(group_state);
                let (score, s) = p.score_placement(group_state, st, pod_group, a);
                self.observe_plugin(t, p.name(), ExtensionPoint::PlacementScore, s.code());
                if !s.is_success() {
                    return Err(Status::error(format!(
                        "running PlacementScore plugins: plugin {:?} failed with: {}",
                        p.name(),
                        s.message()
                    )));
                }
                let placement = a.placement.clone().unwrap_or_else(|| {
                    Arc::new(Placement {
                        name: String::new(),
                        nodes: Vec::new(),
                    })
                });
                scores.push(PlacementScore { placement, score });
            }
            per_plugin.push(scores);
        }
        for ((p, _), scores) in self.placement_score.iter().zip(per_plugin.iter_mut()) {
            if !p.has_normalize() {
                continue;
            }
            let t = plugin_timer(group_state);
            let s = p.normalize_placement_score(group_state, pod_group, scores);
            self.observe_plugin(
                t,
                p.name(),
                ExtensionPoint::PlacementScoreExtensionNormalize,
                s.code(),
            );
            if !s.is_success() {
                return Err(Status::error(format!(
                    "running NormalizePlacementScore on PlacementScore plugins: plugin {:?} failed with: {}",
                    p.name(),
                    s.message()
                )));
            }
        }
        let mut out = Vec::with_capacity(assignments.len());
        for (i, a) in assignments.iter().enumerate() {
            let mut ps = PlacementPluginScores {
                placement: a.placement.clone(),
                scores: Vec::with_capacity(self.placement_score.len()),
                total_score: 0,
            };
            for ((p, w), scores) in self.placement_score.iter().zip(&per_plugin) {
                let score = scores[i].score;
                if !(MIN_NODE_SCORE..=MAX_NODE_SCORE).contains(&score) {
                    return Err(Status::error(format!(
                        "applying score defaultWeights on PlacementScore plugins: plugin {:?} returns an invalid score {score}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
                        p.name()
                    )));
                }
                ps.scores.push(PlacementPluginScore {
                    name: p.name(),
                    score: score * w,
                });
                ps.total_score += score * w;
            }
            out.push(ps);
        }
        Ok(out)
    }

    /// kube's `RunPodGroupPostFilterPlugins`: the first Success or UnschedulableAndUnresolvable
    /// wins; Unschedulable collects reasons and the first rejector; anything else is an error
    /// (`error in "<name>" PodGroupPostFilter plugins: <message>`). Without GenericWorkload,
    /// Unschedulable.
    pub(crate) fn run_pod_group_post_filter(
        &self,
        handle: &mut dyn PodGroupHandle,
        state: &mut PodGroupCycleState,
        pod_group: &PodGroupInfo,
    ) -> (Option<PodGroupPostFilterResult>, Status) {
        if !self.generic_workload {
            return (
                None,
                Status::new(
                    Code::Unschedulable,
                    "generic workload feature is disabled, cannot perform PodGroupPostFilter",
                ),
            );
        }
        let start = Instant::now();
        let mut reasons: Vec<crate::framework::status::Reason> = Vec::new();
        let mut rejector: Option<&'static str> = None;
        let mut out = None;
        for p in &self.pod_group_post_filter {
            let t = plugin_timer(state);
            let (r, s) = p.pod_group_post_filter(handle, state, pod_group);
            self.observe_plugin(t, p.name(), ExtensionPoint::PodGroupPostFilter, s.code());
            if s.is_success() {
                out = Some((r, s));
                break;
            }
            match s.code() {
                Code::UnschedulableAndUnresolvable => {
                    out = Some((r, s.with_plugin(p.name())));
                    break;
                }
                Code::Unschedulable => {
                    reasons.extend(s.reasons().iter().cloned());
                    rejector.get_or_insert(p.name());
                }
                _ => {
                    out = Some((
                        None,
                        Status::error(format!(
                            "error in {:?} PodGroupPostFilter plugins: {}",
                            p.name(),
                            s.message()
                        ))
                        .with_plugin(p.name()),
                    ));
                    break;
                }
            }
        }
        let out = out.unwrap_or_else(|| {
            let st = Status::new(Code::Unschedulable, reasons.join(", "));
            (None, rejector.map_or(st.clone(), |r| st.with_plugin(r)))
        });
        self.metrics.observe(
            Series::ExtensionPoint(ExtensionPoint::PodGroupPostFilter, out.1.code()),
            nanos(start),
        );
        out
    }
}
