//! The framework runtime: one profile's plugins, in order, per extension point, instrumented.
//!
//! Extension points that run once per cycle (PreFilter, PreScore, Reserve, Permit, PreBind,
//! Bind, PostBind) record both the extension-point duration and each plugin's duration on every
//! call. Filter and Score run once per node; their extension-point durations are recorded by
//! the scheduler around the whole parallel phase, as kube does.

use super::cycle_state::CycleState;
use super::events::ClusterEvent;
use super::interface::*;
use super::node_info::NodeInfo;
use super::status::{Code, Status};
use crate::api::{Pod, Sym};
use crate::cache::Snapshot;
use crate::metrics::{ExtensionPoint, Metrics, Series};
use crate::plugins::{PluginContext, Registry};
use ahash::AHashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Error building a framework from a profile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameworkError {
    #[error("profiles[{profile}].plugins: plugin {name:?} is not registered (known: {known})")]
    UnknownPlugin {
        profile: String,
        name: String,
        known: String,
    },
    #[error("profiles[{0}]: exactly one QueueSort plugin must be enabled")]
    QueueSort(String),
    #[error("profiles[{0}]: at least one Bind plugin must be enabled")]
    NoBind(String),
    #[error("profiles[{profile}].pluginConfig[{name}].args: {msg}")]
    PluginArgs {
        profile: String,
        name: String,
        msg: String,
    },
}

/// A profile: a scheduler name and its enabled plugins (with score weights).
#[derive(Clone, Debug)]
pub struct Profile {
    pub scheduler_name: String,
    pub plugins: Vec<(String, i64)>,
    pub percentage_of_nodes_to_score: Option<u32>,
    /// `pluginConfig`: plugin name → args (JSON form of the YAML).
    pub plugin_args: AHashMap<String, serde_json::Value>,
}

impl Profile {
    /// kube's default profile (restricted to the plugins of this build).
    pub fn default_profile() -> Profile {
        Profile {
            scheduler_name: "default-scheduler".into(),
            plugins: crate::plugins::DEFAULT_PLUGINS
                .iter()
                .map(|(n, w)| (n.to_string(), *w))
                .collect(),
            percentage_of_nodes_to_score: None,
            plugin_args: AHashMap::new(),
        }
    }
}

pub struct Framework {
    pub scheduler_name: Sym,
    pub percentage_of_nodes_to_score: Option<u32>,
    pub queue_sort: Arc<dyn QueueSortPlugin>,
    pub pre_enqueue: Vec<Arc<dyn PreEnqueuePlugin>>,
    pre_filter: Vec<Arc<dyn PreFilterPlugin>>,
    filter: Vec<Arc<dyn FilterPlugin>>,
    post_filter: Vec<Arc<dyn PostFilterPlugin>>,
    pre_score: Vec<Arc<dyn PreScorePlugin>>,
    score: Vec<(Arc<dyn ScorePlugin>, i64)>,
    reserve: Vec<Arc<dyn ReservePlugin>>,
    permit: Vec<Arc<dyn PermitPlugin>>,
    pre_bind: Vec<Arc<dyn PreBindPlugin>>,
    bind: Vec<Arc<dyn BindPlugin>>,
    post_bind: Vec<Arc<dyn PostBindPlugin>>,
    /// Events each plugin registered (EnqueueExtensions).
    pub events: AHashMap<&'static str, Vec<ClusterEvent>>,
    /// The plugins' EnqueueExtensions, for QueueingHints.
    pub enqueue_extensions: AHashMap<&'static str, Arc<dyn EnqueueExtensions>>,
    metrics: Arc<Metrics>,
}

fn nanos(t: Instant) -> u64 {
    t.elapsed().as_nanos() as u64
}

impl Framework {
    pub fn new(
        profile: &Profile,
        registry: &Registry,
        ctx: &PluginContext,
        metrics: Arc<Metrics>,
    ) -> Result<Framework, FrameworkError> {
        let mut queue_sort = None;
        let mut fwk = Framework {
            scheduler_name: Sym::new(&profile.scheduler_name),
            percentage_of_nodes_to_score: profile.percentage_of_nodes_to_score,
            queue_sort: Arc::new(crate::plugins::priority_sort::PrioritySort),
            pre_enqueue: vec![],
            pre_filter: vec![],
            filter: vec![],
            post_filter: vec![],
            pre_score: vec![],
            score: vec![],
            reserve: vec![],
            permit: vec![],
            pre_bind: vec![],
            bind: vec![],
            post_bind: vec![],
            events: AHashMap::new(),
            enqueue_extensions: AHashMap::new(),
            metrics,
        };
        for (name, weight) in &profile.plugins {
            let factory = registry
                .get(name)
                .ok_or_else(|| FrameworkError::UnknownPlugin {
                    profile: profile.scheduler_name.clone(),
                    name: name.clone(),
                    known: registry.names().join(", "),
                })?;
            let p = factory(ctx, profile.plugin_args.get(name)).map_err(|msg| {
                FrameworkError::PluginArgs {
                    profile: profile.scheduler_name.clone(),
                    name: name.clone(),
                    msg,
                }
            })?;
            let pname = p.name();
            if let Some(x) = p.clone().into_queue_sort() {
                if queue_sort.is_some() {
                    return Err(FrameworkError::QueueSort(profile.scheduler_name.clone()));
                }
                queue_sort = Some(x);
            }
            fwk.pre_enqueue.extend(p.clone().into_pre_enqueue());
            fwk.pre_filter.extend(p.clone().into_pre_filter());
            fwk.filter.extend(p.clone().into_filter());
            fwk.post_filter.extend(p.clone().into_post_filter());
            fwk.pre_score.extend(p.clone().into_pre_score());
            if let Some(s) = p.clone().into_score() {
                fwk.score.push((s, (*weight).max(1)));
            }
            fwk.reserve.extend(p.clone().into_reserve());
            fwk.permit.extend(p.clone().into_permit());
            fwk.pre_bind.extend(p.clone().into_pre_bind());
            fwk.bind.extend(p.clone().into_bind());
            fwk.post_bind.extend(p.clone().into_post_bind());
            if let Some(e) = p.into_enqueue_extensions() {
                fwk.events.insert(pname, e.events_to_register());
                fwk.enqueue_extensions.insert(pname, e);
            }
        }
        fwk.queue_sort =
            queue_sort.ok_or_else(|| FrameworkError::QueueSort(profile.scheduler_name.clone()))?;
        if fwk.bind.is_empty() {
            return Err(FrameworkError::NoBind(profile.scheduler_name.clone()));
        }
        Ok(fwk)
    }

    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    pub fn has_filter_plugins(&self) -> bool {
        !self.filter.is_empty()
    }
    pub fn has_score_plugins(&self) -> bool {
        !self.score.is_empty()
    }
    pub fn has_post_filter_plugins(&self) -> bool {
        !self.post_filter.is_empty()
    }

    /// Runs PreFilter. Merges PreFilterResults by intersection; records Skip.
    pub fn run_pre_filter(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        snapshot: &Snapshot,
    ) -> (Option<PreFilterResult>, Status) {
        let start = Instant::now();
        let mut result: Option<PreFilterResult> = None;
        let mut status = Status::success();
        for p in &self.pre_filter {
            let t = Instant::now();
            let (r, s) = p.pre_filter(state, pod, snapshot);
            self.metrics.observe(
                Series::Plugin(p.name(), ExtensionPoint::PreFilter, s.code()),
                nanos(t),
            );
            if s.is_skip() {
                state.skip_filter_plugins.push(p.name());
                continue;
            }
            if !s.is_success() {
                status = s.with_plugin(p.name());
                break;
            }
            if let Some(r) = r.filter(|r| r.node_names.is_some()) {
                result = Some(match result {
                    None => r,
                    Some(prev) => {
                        let mut a = prev.node_names.unwrap_or_default();
                        let b = r.node_names.unwrap_or_default();
                        a.retain(|n| b.contains(n));
                        PreFilterResult {
                            node_names: Some(a),
                        }
                    }
                });
            }
        }
        self.metrics.observe(
            Series::ExtensionPoint(ExtensionPoint::PreFilter, status.code()),
            nanos(start),
        );
        (result, status)
    }

    /// The Filter plugins that run for this pod (those whose PreFilter did not Skip), computed
    /// once per cycle.
    pub fn active_filter_plugins(&self, state: &CycleState) -> Vec<&dyn FilterPlugin> {
        self.filter
            .iter()
            .filter(|p| !state.skip_filter_plugins.contains(&p.name()))
            .map(|p| &**p)
            .collect()
    }

    /// Runs the given Filter plugins on one node; the first non-success wins.
    #[inline]
    pub fn run_filter_plugins(
        plugins: &[&dyn FilterPlugin],
        state: &CycleState,
        pod: &Pod,
        node: &NodeInfo,
    ) -> Status {
        for p in plugins {
            let s = p.filter(state, pod, node);
            if !s.is_success() {
                return s.with_plugin(p.name());
            }
        }
        Status::success()
    }

    pub fn run_post_filter(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        diagnosis: &Diagnosis,
    ) -> (Option<PostFilterResult>, Status) {
        let start = Instant::now();
        let mut out = (
            None,
            Status::new(Code::Unschedulable, "no PostFilter plugin helped"),
        );
        for p in &self.post_filter {
            let t = Instant::now();
            let (r, s) = p.post_filter(state, pod, diagnosis);
            self.metrics.observe(
                Series::Plugin(p.name(), ExtensionPoint::PostFilter, s.code()),
                nanos(t),
            );
            if s.is_success() || s.code() == Code::Error {
                out = (r, s.with_plugin(p.name()));
                break;
            }
        }
        self.metrics.observe(
            Series::ExtensionPoint(ExtensionPoint::PostFilter, out.1.code()),
            nanos(start),
        );
        out
    }

    pub fn run_pre_score(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        snapshot: &Snapshot,
    ) -> Status {
        let start = Instant::now();
        let mut status = Status::success();
        for p in &self.pre_score {
            let t = Instant::now();
            let s = p.pre_score(state, pod, nodes, snapshot);
            self.metrics.observe(
                Series::Plugin(p.name(), ExtensionPoint::PreScore, s.code()),
                nanos(t),
            );
            if s.is_skip() {
                state.skip_score_plugins.push(p.name());
                continue;
            }
            if !s.is_success() {
                status = Status::error(s.message()).with_plugin(p.name());
                break;
            }
        }
        self.metrics.observe(
            Series::ExtensionPoint(ExtensionPoint::PreScore, status.code()),
            nanos(start),
        );
        status
    }

    /// Score plugins that run for this pod, with weights.
    pub fn active_score_plugins(&self, state: &CycleState) -> Vec<(Arc<dyn ScorePlugin>, i64)> {
        self.score
            .iter()
            .filter(|(p, _)| !state.skip_score_plugins.contains(&p.name()))
            .cloned()
            .collect()
    }

    /// Records the whole Score phase (scoring, normalising, weighting) as one sample.
    pub fn observe_phase(&self, point: ExtensionPoint, code: Code, d: Duration) {
        self.metrics
            .observe(Series::ExtensionPoint(point, code), d.as_nanos() as u64);
    }

    pub fn run_reserve(&self, state: &mut CycleState, pod: &Pod, node: Sym) -> Status {
        let start = Instant::now();
        let mut status = Status::success();
        for p in &self.reserve {
            let t = Instant::now();
            let s = p.reserve(state, pod, node);
            self.metrics.observe(
                Series::Plugin(p.name(), ExtensionPoint::Reserve, s.code()),
                nanos(t),
            );
            if !s.is_success() {
                status = s.with_plugin(p.name());
                break;
            }
        }
        self.metrics.observe(
            Series::ExtensionPoint(ExtensionPoint::Reserve, status.code()),
            nanos(start),
        );
        status
    }

    /// Unreserve runs in reverse order.
    pub fn run_unreserve(&self, state: &mut CycleState, pod: &Pod, node: Sym) {
        let start = Instant::now();
        for p in self.reserve.iter().rev() {
            p.unreserve(state, pod, node);
        }
        self.metrics.observe(
            Series::ExtensionPoint(ExtensionPoint::Unreserve, Code::Success),
            nanos(start),
        );
    }

    /// Permit. Returns Success, a rejection, or Wait with the shortest timeout.
    pub fn run_permit(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        node: Sym,
    ) -> (Status, Option<Duration>) {
        let start = Instant::now();
        let mut status = Status::success();
        let mut wait: Option<Duration> = None;
        for p in &self.permit {
            let t = Instant::now();
            let (s, timeout) = p.permit(state, pod, node);
            self.metrics.observe(
                Series::Plugin(p.name(), ExtensionPoint::Permit, s.code()),
                nanos(t),
            );
            if s.is_wait() {
                wait = Some(wait.map_or(timeout, |w| w.min(timeout)));
                continue;
            }
            if !s.is_success() {
                status = s.with_plugin(p.name());
                break;
            }
        }
        if status.is_success() && wait.is_some() {
            status = Status::code_only(Code::Wait);
        }
        self.metrics.observe(
            Series::ExtensionPoint(ExtensionPoint::Permit, status.code()),
            nanos(start),
        );
        (status, wait)
    }

    pub fn run_pre_bind(&self, state: &mut CycleState, pod: &Pod, node: Sym) -> Status {
        let start = Instant::now();
        let mut status = Status::success();
        for p in &self.pre_bind {
            let t = Instant::now();
            let s = p.pre_bind(state, pod, node);
            self.metrics.observe(
                Series::Plugin(p.name(), ExtensionPoint::PreBind, s.code()),
                nanos(t),
            );
            if !s.is_success() && !s.is_skip() {
                status = s.with_plugin(p.name());
                break;
            }
        }
        self.metrics.observe(
            Series::ExtensionPoint(ExtensionPoint::PreBind, status.code()),
            nanos(start),
        );
        status
    }

    /// Bind: the first plugin that does not Skip decides.
    pub fn run_bind(&self, state: &mut CycleState, pod: &Pod, node: Sym) -> Status {
        let start = Instant::now();
        let mut status = Status::skip();
        for p in &self.bind {
            let t = Instant::now();
            let s = p.bind(state, pod, node);
            self.metrics.observe(
                Series::Plugin(p.name(), ExtensionPoint::Bind, s.code()),
                nanos(t),
            );
            if s.is_skip() {
                continue;
            }
            status = if s.is_success() {
                s
            } else {
                s.with_plugin(p.name())
            };
            break;
        }
        self.metrics.observe(
            Series::ExtensionPoint(ExtensionPoint::Bind, status.code()),
            nanos(start),
        );
        status
    }

    pub fn run_post_bind(&self, state: &mut CycleState, pod: &Pod, node: Sym) {
        let start = Instant::now();
        for p in &self.post_bind {
            let t = Instant::now();
            p.post_bind(state, pod, node);
            self.metrics.observe(
                Series::Plugin(p.name(), ExtensionPoint::PostBind, Code::Success),
                nanos(t),
            );
        }
        self.metrics.observe(
            Series::ExtensionPoint(ExtensionPoint::PostBind, Code::Success),
            nanos(start),
        );
    }
}
