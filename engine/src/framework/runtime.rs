//! The framework runtime: one profile's plugins, in order, per extension point, instrumented.
//!
//! Extension points that run once per cycle (PreFilter, PreScore, Reserve, Permit, PreBind,
//! Bind, PostBind) record both the extension-point duration and each plugin's duration on every
//! call. Filter and Score run once per node; their extension-point durations are recorded by
//! the scheduler around the whole parallel phase, as kube does.

use super::cycle_state::CycleState;
use super::events::ClusterEvent;
use super::interface::*;
use super::node_info::{NodeInfo, NodeRow, NodeTraits};
use super::parallelize::BlockVerdicts;
use super::pod_group_points::PodGroupPoints;
use super::registry::{PluginContext, Registry};
use super::snapshot::Snapshot;
use super::status::{Code, Status};
use super::waiting_pods::WaitingPods;
use crate::api::{Pod, Sym};
use crate::framework::metrics::{ExtensionPoint, Metrics, Series};
use ahash::AHashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Error building a framework from a profile. `profile` is the index in the config's
/// `profiles` list; the messages follow kube's where kube has one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameworkError {
    #[error(
        "profiles[{profile}].plugins.{point}: plugin {name:?} does not exist (registered: {known})"
    )]
    UnknownPlugin {
        profile: usize,
        point: &'static str,
        name: String,
        known: String,
    },
    #[error("profiles[{profile}].plugins.{point}: plugin {name:?} does not extend {point}")]
    WrongExtensionPoint {
        profile: usize,
        point: &'static str,
        name: String,
    },
    #[error("profiles[{profile}].plugins.{point}: plugin {name:?} already registered as {point}")]
    Duplicate {
        profile: usize,
        point: &'static str,
        name: String,
    },
    #[error("profiles[{0}].plugins.queueSort: exactly one queue sort plugin must be enabled")]
    QueueSort(usize),
    #[error("profiles[{0}].plugins.bind: at least one bind plugin is needed")]
    NoBind(usize),
    #[error(
        "at most one placement generate plugin is allowed for profile with scheduler name {0:?}"
    )]
    PlacementGenerate(String),
    #[error("profiles[{profile}].pluginConfig[{name}].args: {msg}")]
    PluginArgs {
        profile: usize,
        name: String,
        msg: String,
    },
}

/// Whether `p` takes part in an extension point that can leave a pod unschedulable (kube's
/// `shouldHaveEnqueueExtensions`).
fn can_reject(p: &Arc<dyn Plugin>) -> bool {
    p.clone().into_pre_enqueue().is_some()
        || p.clone().into_pre_filter().is_some()
        || p.clone().into_filter().is_some()
        || p.clone().into_reserve().is_some()
        || p.clone().into_permit().is_some()
}

/// Every resource with every action (kube's `UnrollWildCardResource`, plus tidegate's
/// Namespace and Service): the registration of a plugin without EnqueueExtensions.
pub(crate) fn every_event() -> Vec<ClusterEvent> {
    use super::events::{ActionType, EventResource};
    [
        EventResource::Pod,
        EventResource::Node,
        EventResource::Namespace,
        EventResource::Service,
        EventResource::PersistentVolume,
        EventResource::PersistentVolumeClaim,
        EventResource::CSINode,
        EventResource::CSIDriver,
        EventResource::CSIStorageCapacity,
        EventResource::StorageClass,
        EventResource::ResourceClaim,
        EventResource::DeviceClass,
    ]
    .into_iter()
    .map(|r| ClusterEvent::new(r, ActionType::ALL))
    .collect()
}

/// One extension point's plugins (kube's `PluginSet`): enabled in order, with score weights
/// (0 = unset), and disabled names (`*` = every default).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PluginSet {
    pub enabled: Vec<(String, i64)>,
    pub disabled: Vec<String>,
}

/// The extension points a profile configures (kube's `Plugins`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plugins {
    pub pre_enqueue: PluginSet,
    pub queue_sort: PluginSet,
    pub pre_filter: PluginSet,
    pub filter: PluginSet,
    pub post_filter: PluginSet,
    pub pre_score: PluginSet,
    pub score: PluginSet,
    pub reserve: PluginSet,
    pub permit: PluginSet,
    pub pre_bind: PluginSet,
    pub bind: PluginSet,
    pub post_bind: PluginSet,
    /// Pod-group extension points (KEP-4671).
    pub placement_generate: PluginSet,
    pub placement_score: PluginSet,
    pub pod_group_post_filter: PluginSet,
    pub multi_point: PluginSet,
}

impl Plugins {
    /// The specific extension points with their config names, in kube's order.
    pub fn points(&self) -> [(&'static str, &PluginSet); 15] {
        [
            ("preEnqueue", &self.pre_enqueue),
            ("queueSort", &self.queue_sort),
            ("preFilter", &self.pre_filter),
            ("filter", &self.filter),
            ("postFilter", &self.post_filter),
            ("preScore", &self.pre_score),
            ("score", &self.score),
            ("reserve", &self.reserve),
            ("permit", &self.permit),
            ("preBind", &self.pre_bind),
            ("bind", &self.bind),
            ("postBind", &self.post_bind),
            ("placementGenerate", &self.placement_generate),
            ("placementScore", &self.placement_score),
            ("podGroupPostFilter", &self.pod_group_post_filter),
        ]
    }
}

/// A profile: a scheduler name and its plugins, after defaulting (see `crate::config`).
#[derive(Clone, Debug)]
pub struct Profile {
    pub scheduler_name: String,
    pub plugins: Plugins,
    pub percentage_of_nodes_to_score: Option<u32>,
    /// `pluginConfig`: plugin name → args (JSON form of the YAML).
    pub plugin_args: AHashMap<String, serde_json::Value>,
}

/// Whether a plugin implements an extension point (by its config name).
fn implements(p: &Arc<dyn Plugin>, point: &str) -> bool {
    let p = p.clone();
    match point {
        "preEnqueue" => p.into_pre_enqueue().is_some(),
        "queueSort" => p.into_queue_sort().is_some(),
        "preFilter" => p.into_pre_filter().is_some(),
        "filter" => p.into_filter().is_some(),
        "postFilter" => p.into_post_filter().is_some(),
        "preScore" => p.into_pre_score().is_some(),
        "score" => p.into_score().is_some(),
        "reserve" => p.into_reserve().is_some(),
        "permit" => p.into_permit().is_some(),
        "preBind" => p.into_pre_bind().is_some(),
        "bind" => p.into_bind().is_some(),
        "postBind" => p.into_post_bind().is_some(),
        "placementGenerate" => p.into_placement_generate().is_some(),
        "placementScore" => p.into_placement_score().is_some(),
        "podGroupPostFilter" => p.into_pod_group_post_filter().is_some(),
        _ => false,
    }
}

/// kube's `expandMultiPointPlugins` for one extension point: the plugin names that run there,
/// in order. Order: plugins enabled both at the point and through multiPoint (the specific
/// config overrides), then multiPoint-only plugins, then the point's other plugins.
/// Instantiates every plugin the profile names anywhere, once, in first-mention order
/// (kube's `NewFramework` building from the registry with each plugin's args). Returns the
/// instances by name and the order.
#[allow(clippy::type_complexity)]
fn instantiate(
    index: usize,
    profile: &Profile,
    registry: &Registry,
    ctx: &PluginContext,
) -> Result<(AHashMap<String, Arc<dyn Plugin>>, Vec<String>), FrameworkError> {
    let pl = &profile.plugins;
    let mut instances: AHashMap<String, Arc<dyn Plugin>> = AHashMap::new();
    let mut order: Vec<String> = Vec::new();
    let named = pl
        .points()
        .into_iter()
        .chain([("multiPoint", &pl.multi_point)])
        .flat_map(|(point, set)| set.enabled.iter().map(move |(n, _)| (point, n)));
    for (point, name) in named {
        if instances.contains_key(name) {
            continue;
        }
        let factory = registry
            .get(name)
            .ok_or_else(|| FrameworkError::UnknownPlugin {
                profile: index,
                point,
                name: name.clone(),
                known: registry.names().join(", "),
            })?;
        let p = factory(ctx, profile.plugin_args.get(name)).map_err(|msg| {
            FrameworkError::PluginArgs {
                profile: index,
                name: name.clone(),
                msg,
            }
        })?;
        instances.insert(name.clone(), p);
        order.push(name.clone());
    }
    Ok((instances, order))
}

fn expand_point(
    profile: usize,
    point: &'static str,
    set: &PluginSet,
    multi: &PluginSet,
    instances: &AHashMap<String, Arc<dyn Plugin>>,
) -> Result<Vec<String>, FrameworkError> {
    let mut specific: Vec<String> = Vec::new();
    for (name, _) in &set.enabled {
        let p = &instances[name];
        if !implements(p, point) {
            return Err(FrameworkError::WrongExtensionPoint {
                profile,
                point,
                name: name.clone(),
            });
        }
        if specific.contains(name) {
            return Err(FrameworkError::Duplicate {
                profile,
                point,
                name: name.clone(),
            });
        }
        specific.push(name.clone());
    }
    if set.disabled.iter().any(|d| d == "*") {
        return Ok(specific);
    }
    let mut overrides = Vec::new();
    let mut from_multi: Vec<String> = Vec::new();
    for (name, _) in &multi.enabled {
        if !implements(&instances[name], point) || set.disabled.contains(name) {
            continue;
        }
        if specific.contains(name) {
            overrides.push(name.clone());
            continue;
        }
        if from_multi.contains(name) {
            return Err(FrameworkError::Duplicate {
                profile,
                point,
                name: name.clone(),
            });
        }
        from_multi.push(name.clone());
    }
    let mut out: Vec<String> = specific
        .iter()
        .filter(|n| overrides.contains(n))
        .cloned()
        .collect();
    out.extend(from_multi);
    out.extend(specific.into_iter().filter(|n| !overrides.contains(n)));
    Ok(out)
}

pub struct Framework {
    pub scheduler_name: Sym,
    pub percentage_of_nodes_to_score: Option<u32>,
    pub(crate) queue_sort: Arc<dyn QueueSortPlugin>,
    pub pre_enqueue: Vec<Arc<dyn PreEnqueuePlugin>>,
    pub(super) pre_filter: Vec<Arc<dyn PreFilterPlugin>>,
    pub(super) filter: Vec<Arc<dyn FilterPlugin>>,
    post_filter: Vec<Arc<dyn PostFilterPlugin>>,
    pre_score: Vec<Arc<dyn PreScorePlugin>>,
    score: Vec<(Arc<dyn ScorePlugin>, i64)>,
    pub(super) reserve: Vec<Arc<dyn ReservePlugin>>,
    permit: Vec<Arc<dyn PermitPlugin>>,
    pre_bind: Vec<Arc<dyn PreBindPlugin>>,
    bind: Vec<Arc<dyn BindPlugin>>,
    post_bind: Vec<Arc<dyn PostBindPlugin>>,
    /// Pod-group extension points: at most one PlacementGenerate plugin; PlacementFeasible is
    /// the GangScheduling plugin alone, when GenericWorkload is on (kube's `NewFramework`).
    pub(super) placement_generate: Vec<Arc<dyn PlacementGeneratePlugin>>,
    pub(super) placement_feasible: Vec<Arc<dyn PlacementFeasiblePlugin>>,
    pub(super) placement_score: Vec<(Arc<dyn PlacementScorePlugin>, i64)>,
    pub(super) pod_group_post_filter: Vec<Arc<dyn PodGroupPostFilterPlugin>>,
    /// `GenericWorkload` (kube's RunPodGroupPostFilterPlugins refuses to run without it).
    pub(super) generic_workload: bool,
    /// Events each plugin registered (EnqueueExtensions).
    pub events: AHashMap<&'static str, Vec<ClusterEvent>>,
    /// The plugins' EnqueueExtensions, for QueueingHints.
    pub(crate) enqueue_extensions: AHashMap<&'static str, Arc<dyn EnqueueExtensions>>,
    pub(super) metrics: Arc<Metrics>,
    /// The plugins that sign pods, once each, when every plugin at PreFilter, Filter,
    /// PreScore and Score signs (kube's `computeBatchablePlugins`); `None`: the profile
    /// signs no pod.
    signers: Option<Vec<Arc<dyn Plugin>>>,
}

/// kube's `computeBatchablePlugins`: the plugins run at PreFilter, Filter, PreScore or Score,
/// once each in that order, when all of them sign pods.
fn batchable_plugins(list: &dyn Fn(&str) -> Vec<Arc<dyn Plugin>>) -> Option<Vec<Arc<dyn Plugin>>> {
    let mut out: Vec<Arc<dyn Plugin>> = Vec::new();
    let serves = |point: &str, p: &Arc<dyn Plugin>| match point {
        "preFilter" => p.clone().into_pre_filter().is_some(),
        "filter" => p.clone().into_filter().is_some(),
        "preScore" => p.clone().into_pre_score().is_some(),
        _ => p.clone().into_score().is_some(),
    };
    for point in ["preFilter", "filter", "preScore", "score"] {
        for p in list(point) {
            if !serves(point, &p) || out.iter().any(|o| o.name() == p.name()) {
                continue;
            }
            if !p.signs_pods() {
                return None;
            }
            out.push(p);
        }
    }
    Some(out)
}

/// One scheduling cycle's [`Handle`]: the profile's framework with the snapshot, the
/// nominator and the waiting pods of the cycle, as PostFilter sees them.
pub(crate) struct CycleHandle<'a> {
    pub framework: &'a Framework,
    pub snapshot: &'a Snapshot,
    pub nominator: &'a dyn PodNominator,
    pub waiting_pods: &'a WaitingPods,
}

impl Handle for CycleHandle<'_> {
    fn snapshot(&self) -> &Snapshot {
        self.snapshot
    }
    fn nominator(&self) -> &dyn PodNominator {
        self.nominator
    }
    fn waiting_pods(&self) -> &WaitingPods {
        self.waiting_pods
    }
    fn active_filter_plugins(&self, state: &CycleState, pod: &Pod) -> ActiveFilters<'_> {
        self.framework.active_filter_plugins(state, pod)
    }
    fn run_filter_plugins_with_nominated_pods(
        &self,
        filters: &[(&dyn FilterPlugin, NodeTraits)],
        state: &CycleState,
        pod: &Pod,
        node: &NodeInfo,
        nominated: &[Arc<Pod>],
    ) -> Status {
        self.framework
            .run_filter_plugins_with_nominated_pods(filters, state, pod, node, nominated)
    }
    fn run_pre_filter_extension_add_pod(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        to_add: &Pod,
        node: &NodeInfo,
    ) -> Status {
        self.framework
            .run_pre_filter_extension_add_pod(state, pod, to_add, node)
    }
    fn run_pre_filter_extension_remove_pod(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        to_remove: &Pod,
        node: &NodeInfo,
    ) -> Status {
        self.framework
            .run_pre_filter_extension_remove_pod(state, pod, to_remove, node)
    }
}

pub(super) fn nanos(t: Instant) -> u64 {
    t.elapsed().as_nanos() as u64
}

/// The start of a plugin call's timing, in the cycles kube samples
/// (`ShouldRecordPluginMetrics`); `None` reads no clock.
pub(super) fn plugin_timer(state: &CycleState) -> Option<Instant> {
    state.record_plugin_metrics.then(Instant::now)
}

impl Framework {
    /// Builds profile number `index` (kube's `NewFramework`): one instance per plugin, the
    /// extension points expanded from `multiPoint`, score weights from `score` first, then
    /// `multiPoint` (0 means 1).
    pub fn new(
        index: usize,
        profile: &Profile,
        registry: &Registry,
        ctx: &PluginContext,
        metrics: Arc<Metrics>,
    ) -> Result<Framework, FrameworkError> {
        let pl = &profile.plugins;
        let (instances, order) = instantiate(index, profile, registry, ctx)?;
        let mut at: AHashMap<&'static str, Vec<Arc<dyn Plugin>>> = AHashMap::new();
        for (point, set) in pl.points() {
            let names = expand_point(index, point, set, &pl.multi_point, &instances)?;
            at.insert(point, names.iter().map(|n| instances[n].clone()).collect());
        }
        let list = |point: &str| at.get(point).cloned().unwrap_or_default();
        let mut weights: AHashMap<&str, i64> = AHashMap::new();
        for (name, w) in pl.score.enabled.iter().chain(&pl.multi_point.enabled) {
            weights
                .entry(name.as_str())
                .or_insert(if *w == 0 { 1 } else { *w });
        }
        let pg = PodGroupPoints::new(
            &pl.placement_score.enabled,
            &pl.multi_point.enabled,
            &instances,
            &list,
            ctx.features.generic_workload,
        )
        .map_err(|()| FrameworkError::PlacementGenerate(profile.scheduler_name.clone()))?;
        let mut queue_sort: Vec<_> = list("queueSort")
            .into_iter()
            .filter_map(|p| p.into_queue_sort())
            .collect();
        if queue_sort.len() != 1 {
            return Err(FrameworkError::QueueSort(index));
        }
        let signers = batchable_plugins(&list);
        let mut fwk = Framework {
            signers,
            scheduler_name: Sym::new(&profile.scheduler_name),
            percentage_of_nodes_to_score: profile.percentage_of_nodes_to_score,
            queue_sort: queue_sort.remove(0),
            pre_enqueue: list("preEnqueue")
                .into_iter()
                .filter_map(|p| p.into_pre_enqueue())
                .collect(),
            pre_filter: list("preFilter")
                .into_iter()
                .filter_map(|p| p.into_pre_filter())
                .collect(),
            filter: list("filter")
                .into_iter()
                .filter_map(|p| p.into_filter())
                .collect(),
            post_filter: list("postFilter")
                .into_iter()
                .filter_map(|p| p.into_post_filter())
                .collect(),
            pre_score: list("preScore")
                .into_iter()
                .filter_map(|p| p.into_pre_score())
                .collect(),
            score: list("score")
                .into_iter()
                .filter_map(|p| {
                    let w = weights.get(p.name()).copied().unwrap_or(1);
                    p.into_score().map(|s| (s, w))
                })
                .collect(),
            reserve: list("reserve")
                .into_iter()
                .filter_map(|p| p.into_reserve())
                .collect(),
            permit: list("permit")
                .into_iter()
                .filter_map(|p| p.into_permit())
                .collect(),
            pre_bind: list("preBind")
                .into_iter()
                .filter_map(|p| p.into_pre_bind())
                .collect(),
            bind: list("bind")
                .into_iter()
                .filter_map(|p| p.into_bind())
                .collect(),
            post_bind: list("postBind")
                .into_iter()
                .filter_map(|p| p.into_post_bind())
                .collect(),
            placement_generate: pg.generate,
            placement_feasible: pg.feasible,
            placement_score: pg.score,
            pod_group_post_filter: pg.post_filter,
            generic_workload: ctx.features.generic_workload,
            events: AHashMap::new(),
            enqueue_extensions: AHashMap::new(),
            metrics,
        };
        if fwk.bind.is_empty() {
            return Err(FrameworkError::NoBind(index));
        }
        fwk.register_enqueue_extensions(&instances, &order);
        Ok(fwk)
    }

    /// EnqueueExtensions of every enabled plugin. One that can reject a pod (PreEnqueue,
    /// PreFilter, Filter, Reserve, Permit) but does not implement them is registered for
    /// every event, each resource with every action, as kube's `defaultEnqueueExtension`
    /// does: nobody knows which events could help its pods, so all of them may.
    fn register_enqueue_extensions(
        &mut self,
        instances: &AHashMap<String, Arc<dyn Plugin>>,
        order: &[String],
    ) {
        for name in order {
            let p = instances[name].clone();
            let pname = p.name();
            if let Some(e) = p.clone().into_enqueue_extensions() {
                self.events.insert(pname, e.events_to_register());
                self.enqueue_extensions.insert(pname, e);
            } else if can_reject(&p) {
                self.events.insert(pname, every_event());
            }
        }
    }

    /// kube's `frameworkImpl.SignPod`: the pod's signature, or `None` when the profile does
    /// not sign pods or a plugin refuses this one (`framework/signature.rs`).
    pub fn sign_pod(&self, pod: &Pod) -> Option<crate::framework::signature::PodSignature> {
        use crate::framework::signature::{SignFragments, signer};
        let signers = self.signers.as_ref()?;
        let mut probe = SignFragments::probe();
        for p in signers {
            p.sign_pod(pod, &mut probe).ok()?;
        }
        let mut f = SignFragments::default();
        f.put(signer::SCHEDULER_NAME, || {
            pod.spec.scheduler_name.to_string_lossy()
        });
        for p in signers {
            p.sign_pod(pod, &mut f).ok()?;
        }
        Some(f.finish())
    }

    /// Plugin names per extension point, in run order (for reports and tests).
    pub fn plugin_names(&self) -> Vec<(&'static str, Vec<&'static str>)> {
        fn names<T: Plugin + ?Sized>(v: &[Arc<T>]) -> Vec<&'static str> {
            v.iter().map(|p| p.name()).collect()
        }
        vec![
            ("preEnqueue", names(&self.pre_enqueue)),
            ("queueSort", vec![self.queue_sort.name()]),
            ("preFilter", names(&self.pre_filter)),
            ("filter", names(&self.filter)),
            ("postFilter", names(&self.post_filter)),
            ("preScore", names(&self.pre_score)),
            ("score", self.score.iter().map(|(p, _)| p.name()).collect()),
            ("reserve", names(&self.reserve)),
            ("permit", names(&self.permit)),
            ("preBind", names(&self.pre_bind)),
            ("bind", names(&self.bind)),
            ("postBind", names(&self.post_bind)),
            ("placementGenerate", names(&self.placement_generate)),
            ("placementFeasible", names(&self.placement_feasible)),
            (
                "placementScore",
                self.placement_score.iter().map(|(p, _)| p.name()).collect(),
            ),
            ("podGroupPostFilter", names(&self.pod_group_post_filter)),
        ]
    }

    /// Score plugins with their weights, in order.
    #[cfg(test)]
    pub(crate) fn score_weights(&self) -> Vec<(&'static str, i64)> {
        self.score.iter().map(|(p, w)| (p.name(), *w)).collect()
    }

    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    pub(crate) fn has_score_plugins(&self) -> bool {
        !self.score.is_empty()
    }
    pub(crate) fn has_post_filter_plugins(&self) -> bool {
        !self.post_filter.is_empty()
    }

    /// kube's `RunPreFilterPlugins`: every PreFilter plugin in order. A plugin's Skip takes its
    /// Filter out of the cycle; UnschedulableAndUnresolvable stops at once; Unschedulable is
    /// kept and the other plugins still run (preemption may help later in the cycle); an error
    /// stops with `running PreFilter plugin "<name>": <message>`. The node subsets plugins
    /// return are intersected; an empty intersection is UnschedulableAndUnresolvable
    /// (`node(s) didn't satisfy plugin <name>`, or `plugin(s) [<names>] simultaneously`).
    /// Returns the merged subset, the status, and the plugins that returned a subset (kube's
    /// `pluginsWithNodes`: they join the diagnosis' unschedulable plugins).
    pub fn run_pre_filter(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        snapshot: &Snapshot,
    ) -> (Option<PreFilterResult>, Status, Vec<&'static str>) {
        let start = Instant::now();
        let mut result: Option<PreFilterResult> = None;
        let mut status = Status::success();
        let mut with_nodes: Vec<&'static str> = Vec::new();
        // Most PreFilter plugins skip a plain pod: one allocation, not one per doubling.
        state.skip_filter_plugins.reserve(self.pre_filter.len());
        for p in &self.pre_filter {
            let t = plugin_timer(state);
            let (r, s) = p.pre_filter(state, pod, snapshot);
            self.observe_plugin(t, p.name(), ExtensionPoint::PreFilter, s.code());
            if s.is_skip() {
                state.skip_filter_plugins.push(p.name());
                continue;
            }
            if !s.is_success() {
                if s.code() == Code::Unschedulable {
                    status = s.with_plugin(p.name());
                    continue;
                }
                status = if s.code() == Code::UnschedulableAndUnresolvable {
                    s.with_plugin(p.name())
                } else {
                    Status::error(format!(
                        "running PreFilter plugin {:?}: {}",
                        p.name(),
                        s.message()
                    ))
                    .with_plugin(p.name())
                };
                result = None;
                with_nodes.clear();
                break;
            }
            if let Some(r) = r.filter(|r| r.node_names.is_some()) {
                with_nodes.push(p.name());
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
                if result
                    .as_ref()
                    .is_some_and(|r| r.node_names.as_ref().is_some_and(|n| n.is_empty()))
                {
                    let mut names = with_nodes.clone();
                    names.sort_unstable();
                    let msg = if names.len() == 1 {
                        format!("node(s) didn't satisfy plugin {}", names[0])
                    } else {
                        format!(
                            "node(s) didn't satisfy plugin(s) [{}] simultaneously",
                            names.join(" ")
                        )
                    };
                    status = Status::new(Code::UnschedulableAndUnresolvable, msg);
                    break;
                }
            }
        }
        self.metrics.observe(
            Series::ExtensionPoint(ExtensionPoint::PreFilter, status.code()),
            nanos(start),
        );
        (result, status, with_nodes)
    }

    /// kube's `RunPreFilterExtensionAddPod`: every PreFilter plugin that did not Skip and has
    /// extensions learns that `to_add` is on `node` (nominated pods, preemption's reprieves).
    pub(crate) fn run_pre_filter_extension_add_pod(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        to_add: &Pod,
        node: &NodeInfo,
    ) -> Status {
        self.run_pre_filter_extensions(state, "AddPod", |ext, st| {
            ext.add_pod(st, pod, to_add, node)
        })
    }

    /// kube's `RunPreFilterExtensionRemovePod` (preemption's dry run takes victims away).
    pub(crate) fn run_pre_filter_extension_remove_pod(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        to_remove: &Pod,
        node: &NodeInfo,
    ) -> Status {
        self.run_pre_filter_extensions(state, "RemovePod", |ext, st| {
            ext.remove_pod(st, pod, to_remove, node)
        })
    }

    /// Runs `call` on the extensions of every PreFilter plugin that did not Skip; the first
    /// failure becomes an error naming the plugin.
    fn run_pre_filter_extensions(
        &self,
        state: &mut CycleState,
        what: &str,
        call: impl Fn(&dyn PreFilterExtensions, &mut CycleState) -> Status,
    ) -> Status {
        for p in &self.pre_filter {
            if state.skip_filter_plugins.contains(&p.name()) {
                continue;
            }
            if let Some(ext) = p.pre_filter_extensions() {
                let s = call(ext, state);
                if !s.is_success() {
                    return Status::error(format!(
                        "running {what} on PreFilter plugin {:?}: {}",
                        p.name(),
                        s.message()
                    ));
                }
            }
        }
        Status::success()
    }

    /// kube's `RunFilterPluginsWithNominatedPods`: when pods of at least this priority are
    /// nominated to the node, Filter runs twice, once as if they were there (they must still
    /// fit after this pod) and once without them (this pod must not rely on what they would
    /// add, e.g. affinity); both must pass. `nominated` is empty for most nodes.
    pub(crate) fn run_filter_plugins_with_nominated_pods(
        &self,
        plugins: &[(&dyn FilterPlugin, NodeTraits)],
        state: &CycleState,
        pod: &Pod,
        node: &NodeInfo,
        nominated: &[Arc<Pod>],
    ) -> Status {
        if !nominated.is_empty() {
            let mut with = node.clone();
            let mut st = state.clone();
            for p in nominated {
                with.add_pod(p);
                let s = self.run_pre_filter_extension_add_pod(&mut st, pod, p, &with);
                if !s.is_success() {
                    return s;
                }
            }
            let s = Self::run_filter_plugins(plugins, &st, pod, &with);
            if !s.is_success() {
                return s;
            }
        }
        Self::run_filter_plugins(plugins, state, pod, node)
    }

    /// The Filter plugins that run for this pod (those whose PreFilter did not Skip), computed
    /// once per cycle.
    pub fn active_filter_plugins(&self, state: &CycleState, pod: &Pod) -> ActiveFilters<'_> {
        self.filter
            .iter()
            .filter(|p| !state.skip_filter_plugins.contains(&p.name()) && !p.passes_every_node(pod))
            .map(|p| (&**p, p.needs_nodes_with(pod)))
            .collect()
    }

    /// The node memo's plugin set for a Filter pass (`framework/node_memo.rs`): bit `k` for
    /// the profile's `k`-th Filter plugin among `filters`; None when one of them is not
    /// node-local for `pod` (or the profile has more than 64).
    pub(crate) fn filter_memo_plugins(
        &self,
        filters: &[(&dyn FilterPlugin, NodeTraits)],
        pod: &Pod,
    ) -> Option<u64> {
        filters.iter().try_fold(0u64, |mask, &(p, _)| {
            let k = self
                .filter
                .iter()
                .position(|q| std::ptr::addr_eq(Arc::as_ptr(q), p as *const dyn FilterPlugin))?;
            (p.node_local(pod) && k < 64).then_some(mask | 1 << k)
        })
    }

    /// [`Framework::filter_memo_plugins`] for the Score plugins that run.
    pub(crate) fn score_memo_plugins(
        &self,
        plugins: &[(Arc<dyn ScorePlugin>, i64)],
        pod: &Pod,
    ) -> Option<u64> {
        plugins.iter().try_fold(0u64, |mask, (p, _)| {
            let k = self.score.iter().position(|(q, _)| Arc::ptr_eq(q, p))?;
            (p.node_local(pod) && k < 64).then_some(mask | 1 << k)
        })
    }

    /// Runs the given Filter plugins on one node, each only if the node has a trait it needs;
    /// the first non-success wins.
    #[inline]
    pub fn run_filter_plugins(
        plugins: &[(&dyn FilterPlugin, NodeTraits)],
        state: &CycleState,
        pod: &Pod,
        node: &NodeInfo,
    ) -> Status {
        let traits = node.traits();
        for &(p, needs) in plugins {
            if !traits.intersects(needs) {
                continue;
            }
            let s = p.filter(state, pod, node);
            if !s.is_success() {
                return s.with_plugin(p.name());
            }
        }
        Status::success()
    }

    /// [`Framework::run_filter_plugins`] over a block of consecutive nodes: each plugin
    /// judges the nodes still passing (a plugin with a trait mask only those with one of its
    /// traits), so a node's status is the first non-success in plugin order, as per node.
    pub fn run_filter_plugins_block(
        plugins: &[(&dyn FilterPlugin, NodeTraits)],
        state: &CycleState,
        pod: &Pod,
        nodes: &[Arc<NodeInfo>],
        rows: &[NodeRow],
        verdicts: &mut BlockVerdicts,
    ) {
        debug_assert_eq!(nodes.len(), rows.len());
        // Unless every plugin that sees every node reads only the rows, ask for the block's
        // NodeInfos at once: the misses overlap instead of queueing up behind the first
        // plugin's walk.
        if plugins
            .iter()
            .any(|&(p, needs)| needs == NodeTraits::ANY && !p.filters_from_rows(pod))
        {
            for n in nodes {
                n.prefetch();
            }
        }
        let BlockVerdicts { pass, rejected } = verdicts;
        // The nodes that any plugin with a trait mask needs to see, found in one pass (most
        // blocks have none: no taints, nothing cordoned).
        let masked = plugins
            .iter()
            .filter(|(_, needs)| *needs != NodeTraits::ANY)
            .fold(None, |acc: Option<NodeTraits>, &(_, needs)| {
                Some(acc.map_or(needs, |a| a.union(needs)))
            });
        // Bit `o` set: node `o` has a trait some masked plugin needs. `u64::MAX`: every node
        // (a block longer than a word, which `find_feasible_blocks` does not make; or a full
        // block of 64 marked nodes, which means the same).
        let mut candidates = u64::MAX;
        if let Some(mask) = masked.filter(|_| nodes.len() <= 64) {
            candidates = 0;
            for (o, r) in rows.iter().enumerate() {
                candidates |= u64::from(r.traits.intersects(mask)) << o;
            }
        }
        for &(p, needs) in plugins {
            let name = p.name();
            if needs == NodeTraits::ANY {
                p.filter_nodes(state, pod, nodes, rows, pass, &mut |o, s| {
                    rejected.push((o, s.with_plugin(name)))
                });
                continue;
            }
            let mut judge = |o: usize| {
                if pass[o] && rows[o].traits.intersects(needs) {
                    let s = p.filter(state, pod, &nodes[o]);
                    if !s.is_success() {
                        pass[o] = false;
                        rejected.push((o, s.with_plugin(name)));
                    }
                }
            };
            if candidates == u64::MAX {
                (0..nodes.len()).for_each(judge);
            } else {
                // Only the marked nodes, in order, lowest bit first.
                let mut bits = candidates;
                while bits != 0 {
                    judge(bits.trailing_zeros() as usize);
                    bits &= bits - 1;
                }
            }
        }
    }

    /// kube's `RunPostFilterPlugins`: the first success (or unresolvable, or error) wins;
    /// otherwise Unschedulable with every plugin's reasons, the first rejector named, and the
    /// last non-empty result (a nomination to clear, say).
    pub(crate) fn run_post_filter(
        &self,
        handle: &dyn Handle,
        state: &mut CycleState,
        pod: &Pod,
        diagnosis: &Diagnosis,
    ) -> (Option<PostFilterResult>, Status) {
        let start = Instant::now();
        let mut result = None;
        let mut reasons: Vec<crate::framework::status::Reason> = Vec::new();
        let mut rejector: Option<&'static str> = None;
        let mut out = None;
        for p in &self.post_filter {
            let t = plugin_timer(state);
            let (r, s) = p.post_filter(handle, state, pod, diagnosis);
            self.observe_plugin(t, p.name(), ExtensionPoint::PostFilter, s.code());
            if s.is_success() {
                out = Some((r, s));
                break;
            }
            if s.code() == Code::UnschedulableAndUnresolvable {
                out = Some((r, s.with_plugin(p.name())));
                break;
            }
            if !s.is_rejected() {
                out = Some((None, s.with_plugin(p.name())));
                break;
            }
            if r.is_some() {
                result = r;
            }
            reasons.extend(s.reasons().iter().cloned());
            rejector.get_or_insert(p.name());
        }
        let out = out.unwrap_or_else(|| {
            let st = Status::new(Code::Unschedulable, reasons.join(", "));
            (result, rejector.map_or(st.clone(), |r| st.with_plugin(r)))
        });
        self.metrics.observe(
            Series::ExtensionPoint(ExtensionPoint::PostFilter, out.1.code()),
            nanos(start),
        );
        out
    }

    /// Whether some PreScore plugin may read which nodes are feasible for this pod
    /// ([`PreScorePlugin::pre_score_reads_nodes`]).
    pub(crate) fn pre_score_reads_nodes(&self, pod: &Pod, snapshot: &Snapshot) -> bool {
        self.pre_score
            .iter()
            .any(|p| p.pre_score_reads_nodes(pod, snapshot))
    }

    pub(crate) fn run_pre_score(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        snapshot: &Snapshot,
    ) -> Status {
        let start = Instant::now();
        let mut status = Status::success();
        state.skip_score_plugins.reserve(self.pre_score.len());
        for p in &self.pre_score {
            let t = plugin_timer(state);
            let s = p.pre_score(state, pod, nodes, snapshot);
            self.observe_plugin(t, p.name(), ExtensionPoint::PreScore, s.code());
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

    /// Score plugins that run for this pod, with weights: less those PreScore skipped and those
    /// that score every node 0 in this cycle ([`ScorePlugin::scores_nothing`]).
    pub(crate) fn active_score_plugins(
        &self,
        state: &CycleState,
    ) -> Vec<(Arc<dyn ScorePlugin>, i64)> {
        self.score
            .iter()
            .filter(|(p, _)| {
                !state.skip_score_plugins.contains(&p.name()) && !p.scores_nothing(state)
            })
            .cloned()
            .collect()
    }

    /// Records a plugin call's duration when its cycle is sampled (`t` from `plugin_timer`).
    pub(super) fn observe_plugin(
        &self,
        t: Option<Instant>,
        plugin: &'static str,
        point: ExtensionPoint,
        code: Code,
    ) {
        if let Some(t) = t {
            self.metrics
                .observe(Series::Plugin(plugin, point, code), nanos(t));
        }
    }

    /// Records the whole Score phase (scoring, normalising, weighting) as one sample.
    pub(crate) fn observe_phase(&self, point: ExtensionPoint, code: Code, d: Duration) {
        self.metrics
            .observe(Series::ExtensionPoint(point, code), d.as_nanos() as u64);
    }

    pub(crate) fn run_reserve(&self, state: &mut CycleState, pod: &Pod, node: Sym) -> Status {
        let start = Instant::now();
        let mut status = Status::success();
        for p in &self.reserve {
            let t = plugin_timer(state);
            let s = p.reserve(state, pod, node);
            self.observe_plugin(t, p.name(), ExtensionPoint::Reserve, s.code());
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
    pub(crate) fn run_unreserve(&self, state: &mut CycleState, pod: &Pod, node: Sym) {
        let start = Instant::now();
        for p in self.reserve.iter().rev() {
            p.unreserve(state, pod, node);
        }
        self.metrics.observe(
            Series::ExtensionPoint(ExtensionPoint::Unreserve, Code::Success),
            nanos(start),
        );
    }

    /// Permit. Returns Success, a rejection, or Wait with the plugins that said Wait and
    /// their timeouts (kube caps each at 15 minutes).
    pub(crate) fn run_permit(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        node: Sym,
    ) -> (Status, Vec<(&'static str, Duration)>) {
        const MAX_TIMEOUT: Duration = Duration::from_secs(15 * 60);
        let start = Instant::now();
        let mut status = Status::success();
        let mut waits = Vec::new();
        for p in &self.permit {
            let t = plugin_timer(state);
            let (s, timeout) = p.permit(state, pod, node);
            self.observe_plugin(t, p.name(), ExtensionPoint::Permit, s.code());
            if s.is_wait() {
                waits.push((p.name(), timeout.min(MAX_TIMEOUT)));
                continue;
            }
            if !s.is_success() {
                status = s.with_plugin(p.name());
                break;
            }
        }
        if status.is_success() && !waits.is_empty() {
            status = Status::code_only(Code::Wait);
        }
        self.metrics.observe(
            Series::ExtensionPoint(ExtensionPoint::Permit, status.code()),
            nanos(start),
        );
        (status, waits)
    }

    /// kube's `RunPreBindPreFlights`: Success when any PreBind plugin has work for the pod,
    /// Skip when none has (each skipping plugin is then left out of PreBind), an error when a
    /// plugin fails or answers anything but Success or Skip.
    pub(crate) fn run_pre_bind_pre_flights(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        node: Sym,
    ) -> Status {
        let start = Instant::now();
        let mut status = Status::skip();
        let mut skipped = Vec::new();
        for p in &self.pre_bind {
            let t = plugin_timer(state);
            let s = p.pre_bind_pre_flight(state, pod, node);
            self.observe_plugin(t, p.name(), ExtensionPoint::PreBindPreFlight, s.code());
            match s.code() {
                Code::Success => status = Status::success(),
                Code::Skip => skipped.push(p.name()),
                Code::Error => {
                    status = Status::error(format!(
                        "running PreBindPreFlight {:?}: {}",
                        p.name(),
                        s.message()
                    ));
                    break;
                }
                c => {
                    status = Status::error(format!(
                        "PreBindPreFlight {} returned {:?}, which is unsupported. It is supposed to return Success, Skip, or Error status",
                        p.name(),
                        c.as_str()
                    ));
                    break;
                }
            }
        }
        if status.is_success() || status.is_skip() {
            state.skip_pre_bind_plugins = skipped;
        }
        self.metrics.observe(
            Series::ExtensionPoint(ExtensionPoint::PreBindPreFlight, status.code()),
            nanos(start),
        );
        status
    }

    pub(crate) fn run_pre_bind(&self, state: &mut CycleState, pod: &Pod, node: Sym) -> Status {
        let start = Instant::now();
        let mut status = Status::success();
        for p in &self.pre_bind {
            if state.skip_pre_bind_plugins.contains(&p.name()) {
                continue;
            }
            let t = plugin_timer(state);
            let s = p.pre_bind(state, pod, node);
            self.observe_plugin(t, p.name(), ExtensionPoint::PreBind, s.code());
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
    pub(crate) fn run_bind(&self, state: &mut CycleState, pod: &Pod, node: Sym) -> Status {
        let start = Instant::now();
        let mut status = Status::skip();
        for p in &self.bind {
            let t = plugin_timer(state);
            let s = p.bind(state, pod, node);
            self.observe_plugin(t, p.name(), ExtensionPoint::Bind, s.code());
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

    pub(crate) fn run_post_bind(&self, state: &mut CycleState, pod: &Pod, node: Sym) {
        let start = Instant::now();
        for p in &self.post_bind {
            let t = plugin_timer(state);
            p.post_bind(state, pod, node);
            self.observe_plugin(t, p.name(), ExtensionPoint::PostBind, Code::Success);
        }
        self.metrics.observe(
            Series::ExtensionPoint(ExtensionPoint::PostBind, Code::Success),
            nanos(start),
        );
    }
}
