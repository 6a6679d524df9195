//! NodeResourcesFit: the node must have room for the pod's requests and one more pod
//! (extended resources named in `ignoredResources`/`ignoredResourceGroups` are not checked);
//! Score with the configured strategy (LeastAllocated by default, MostAllocated or
//! RequestedToCapacityRatio) over the configured resources (cpu and memory, weight 1 each);
//! PlacementScore (TopologyAwareWorkloadScheduling): MostAllocated over a placement's nodes
//! taken as one, with the group's proposed members on them.
//! Source of behaviour: `pkg/scheduler/framework/plugins/noderesources/fit.go`,
//! `least_allocated.go`, `most_allocated.go`, `requested_to_capacity_ratio.go`,
//! `resource_allocation.go`; args: `pkg/scheduler/apis/config/types_pluginargs.go`,
//! `v1/defaults.go` (`SetDefaults_NodeResourcesFitArgs`), `validation/validation_pluginargs.go`.

use super::resource_allocation::{
    ResourceAllocationScorer, ResourceSpec, Strategy, UtilizationShapePoint, aggregate,
    default_resources, field_error, quote, validate_function_shape, validate_resources,
};
use crate::api::resource_names::is_extended_resource_name;
use crate::api::validation::{ErrorType, FieldError, is_qualified_name};
use crate::api::{Pod, Resource, Sym};
use crate::framework::Snapshot;
use crate::framework::cycle_state::CycleState;
use crate::framework::dra_manager::DraManager;
use crate::framework::events::{
    ActionType, ClusterEvent, EventObject, EventResource, QueueingHint,
};
use crate::framework::interface::{
    EnqueueExtensions, FilterPlugin, PlacementScorePlugin, Plugin, PreFilterPlugin,
    PreFilterResult, PreScorePlugin, ScorePlugin,
};
use crate::framework::node_info::{NodeInfo, NodeRow};
use crate::framework::pod_group::{
    PlacementCycleState, PodGroupAssignments, PodGroupCycleState, PodGroupInfo,
};
use crate::framework::signature::{self, SignFragments, signer};
use crate::framework::status::Reason;
use crate::framework::status::{Code, Status};
use crate::plugins::dynamic_resources::extended_scoring::{DraScores, ExtendedScoring};
use serde::Deserialize;
use std::sync::Arc;

pub(crate) const NAME: &str = "NodeResourcesFit";

/// The scoring strategies kube supports, sorted as its NotSupported message lists them.
const STRATEGIES: [&str; 3] = [
    "LeastAllocated",
    "MostAllocated",
    "RequestedToCapacityRatio",
];

/// `NodeResourcesFitArgs` (v1).
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct NodeResourcesFitArgs {
    /// Extended resources whose requests Filter ignores.
    #[serde(default)]
    pub(crate) ignored_resources: Vec<String>,
    /// Prefixes (`example.com` of `example.com/gpu`) of extended resources Filter ignores.
    #[serde(default)]
    pub(crate) ignored_resource_groups: Vec<String>,
    pub(crate) scoring_strategy: Option<ScoringStrategy>,
}

/// `ScoringStrategy`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ScoringStrategy {
    #[serde(rename = "type", default)]
    pub type_: String,
    #[serde(default)]
    pub resources: Vec<ResourceSpec>,
    pub(crate) requested_to_capacity_ratio: Option<RequestedToCapacityRatioParam>,
}

/// `RequestedToCapacityRatioParam`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct RequestedToCapacityRatioParam {
    #[serde(default)]
    pub shape: Vec<UtilizationShapePoint>,
}

impl NodeResourcesFitArgs {
    /// kube's `SetDefaults_NodeResourcesFitArgs`: LeastAllocated over cpu and memory when no
    /// strategy is given; the default resources when none are listed; weight 0 becomes 1.
    pub(crate) fn set_defaults(&mut self) {
        let s = self
            .scoring_strategy
            .get_or_insert_with(|| ScoringStrategy {
                type_: "LeastAllocated".to_string(),
                resources: default_resources(),
                requested_to_capacity_ratio: None,
            });
        if s.resources.is_empty() {
            s.resources = default_resources();
        }
        for r in &mut s.resources {
            if r.weight == 0 {
                r.weight = 1;
            }
        }
    }

    /// kube's `ValidateNodeResourcesFitArgs` (paths relative to the args).
    pub(crate) fn validate(&self) -> Result<(), String> {
        let mut errs: Vec<FieldError> = Vec::new();
        for (i, r) in self.ignored_resources.iter().enumerate() {
            for msg in is_qualified_name(r) {
                errs.push(field_error(
                    ErrorType::Invalid,
                    format!("ignoredResources[{i}]"),
                    Some(quote(r)),
                    msg,
                ));
            }
        }
        for (i, g) in self.ignored_resource_groups.iter().enumerate() {
            let path = format!("ignoredResourceGroups[{i}]");
            if g.contains('/') {
                errs.push(field_error(
                    ErrorType::Invalid,
                    path.clone(),
                    Some(quote(g)),
                    "resource group name can't contain '/'",
                ));
            }
            for msg in is_qualified_name(g) {
                errs.push(field_error(
                    ErrorType::Invalid,
                    path.clone(),
                    Some(quote(g)),
                    msg,
                ));
            }
        }
        if let Some(s) = &self.scoring_strategy {
            if !STRATEGIES.contains(&s.type_.as_str()) {
                let supported: Vec<String> = STRATEGIES.iter().map(|t| quote(t)).collect();
                errs.push(field_error(
                    ErrorType::NotSupported,
                    "scoringStrategy.type",
                    Some(quote(&s.type_)),
                    format!("supported values: {}", supported.join(", ")),
                ));
            }
            errs.extend(validate_resources(
                &s.resources,
                "scoringStrategy.resources",
            ));
            if let Some(r) = &s.requested_to_capacity_ratio {
                errs.extend(validate_function_shape(&r.shape, "scoringStrategy.shape"));
            } else if s.type_ == "RequestedToCapacityRatio" {
                // kube dereferences the missing shape (a panic); refuse it as an empty shape.
                errs.extend(validate_function_shape(&[], "scoringStrategy.shape"));
            }
        }
        aggregate(&errs)
    }
}

#[derive(Debug)]
pub(crate) struct NodeResourcesFit {
    /// `ignoredResources` that are extended resources (kube ignores no other).
    ignored_resources: Vec<Sym>,
    ignored_resource_groups: Vec<Arc<str>>,
    scorer: ResourceAllocationScorer,
    /// PlacementScore (TopologyAwareWorkloadScheduling): MostAllocated over the scored
    /// resources, whatever the Score strategy (kube's `placementScorer`).
    placement_scorer: ResourceAllocationScorer,
    /// DRAExtendedResource: the DeviceClasses that back extended resources. A resource a
    /// node does not have that a class backs is left to DynamicResources (kube's
    /// `shouldDelegateResourceToDRA`). `None`: no DRA (tests, trial builds).
    dra: Option<Arc<DraManager>>,
    /// DRAExtendedResource: the devices of the classes backing scored extended resources.
    dra_scoring: Option<Arc<ExtendedScoring>>,
}

impl Default for NodeResourcesFit {
    /// The plugin with kube's default args.
    fn default() -> Self {
        let mut args = NodeResourcesFitArgs::default();
        args.set_defaults();
        NodeResourcesFit::new(&args).expect("the default args are valid")
    }
}

impl NodeResourcesFit {
    /// Builds the plugin from args that `set_defaults` was applied to; an `Err` is kube's
    /// validation message.
    pub(crate) fn new(args: &NodeResourcesFitArgs) -> Result<NodeResourcesFit, String> {
        args.validate()?;
        let s = args
            .scoring_strategy
            .as_ref()
            .ok_or_else(|| "scoring strategy not specified".to_string())?;
        let scorer = match s.type_.as_str() {
            "LeastAllocated" => {
                ResourceAllocationScorer::new(&s.resources, false, Strategy::LeastAllocated)
            }
            "MostAllocated" => {
                ResourceAllocationScorer::new(&s.resources, false, Strategy::MostAllocated)
            }
            "RequestedToCapacityRatio" => ResourceAllocationScorer::requested_to_capacity_ratio(
                &s.resources,
                s.requested_to_capacity_ratio
                    .as_ref()
                    .map_or(&[][..], |r| &r.shape),
            ),
            t => return Err(format!("scoring strategy {t} is not supported")),
        };
        Ok(NodeResourcesFit {
            ignored_resources: args
                .ignored_resources
                .iter()
                .filter(|r| is_extended_resource_name(r))
                .map(|r| Sym::new(r))
                .collect(),
            ignored_resource_groups: args
                .ignored_resource_groups
                .iter()
                .map(|g| Arc::from(g.as_str()))
                .collect(),
            scorer,
            placement_scorer: ResourceAllocationScorer::new(
                &s.resources,
                false,
                Strategy::MostAllocated,
            ),
            dra: None,
            dra_scoring: None,
        })
    }

    /// With the DRA objects whose DeviceClasses may back extended resources.
    pub(crate) fn with_dra(mut self, dra: Arc<DraManager>) -> NodeResourcesFit {
        // Only a scored extended resource can be scored from devices.
        if self.scorer.scalar_resources().next().is_some() {
            self.dra_scoring = Some(Arc::new(ExtendedScoring::new(dra.clone())));
        }
        self.dra = Some(dra);
        self
    }

    /// kube's `shouldDelegateResourceToDRA`: `name` is left to DynamicResources when the node
    /// (if given) has none of it and some DeviceClass backs it.
    fn delegated(&self, name: Sym, allocatable: Option<&Resource>) -> bool {
        if allocatable.is_some_and(|a| a.scalar(name) > 0) {
            return false;
        }
        self.dra
            .as_ref()
            .is_some_and(|d| d.class_for_extended_resource(name).is_some())
    }

    /// The registry's factory: decode, default, validate.
    pub(crate) fn from_args(args: Option<&serde_json::Value>) -> Result<NodeResourcesFit, String> {
        let mut a: NodeResourcesFitArgs = crate::framework::registry::decode_args(args)?;
        a.set_defaults();
        NodeResourcesFit::new(&a)
    }

    /// Whether Filter skips resource `name`: only extended resources are ever skipped, by
    /// name or by the group before the `/`.
    fn ignored(&self, name: Sym) -> bool {
        if self.ignored_resources.is_empty() && self.ignored_resource_groups.is_empty() {
            return false;
        }
        if self.ignored_resources.contains(&name) {
            return true;
        }
        if self.ignored_resource_groups.is_empty() {
            return false;
        }
        let s = name.as_arc();
        is_extended_resource_name(&s)
            && s.split_once('/').is_some_and(|(group, _)| {
                self.ignored_resource_groups.iter().any(|g| **g == *group)
            })
    }
}

impl Plugin for NodeResourcesFit {
    fn signs_pods(&self) -> bool {
        true
    }
    /// Node-local unless DRA may back an extended resource the pod asks for (then Filter
    /// and Score read the DRA objects).
    fn node_local(&self, pod: &crate::api::Pod) -> bool {
        self.dra.is_none() || pod.requests().scalar.iter().all(|&(_, v)| v == 0)
    }
    fn sign_pod(&self, pod: &crate::api::Pod, sig: &mut SignFragments) -> Result<(), &'static str> {
        if pod
            .spec
            .requests
            .scalar
            .iter()
            .any(|&(n, v)| v != 0 && self.delegated(n, None))
        {
            return Err("signature disabled when dra extended resources are used in the cluster");
        }
        sig.put(signer::RESOURCES, || {
            signature::resources(&pod.spec.requests)
        });
        Ok(())
    }
    fn name(&self) -> &'static str {
        NAME
    }
    fn into_pre_filter(self: Arc<Self>) -> Option<Arc<dyn PreFilterPlugin>> {
        Some(self)
    }
    fn into_filter(self: Arc<Self>) -> Option<Arc<dyn FilterPlugin>> {
        Some(self)
    }
    fn into_pre_score(self: Arc<Self>) -> Option<Arc<dyn PreScorePlugin>> {
        Some(self)
    }
    fn into_score(self: Arc<Self>) -> Option<Arc<dyn ScorePlugin>> {
        Some(self)
    }
    fn into_placement_score(self: Arc<Self>) -> Option<Arc<dyn PlacementScorePlugin>> {
        Some(self)
    }
    fn into_enqueue_extensions(self: Arc<Self>) -> Option<Arc<dyn EnqueueExtensions>> {
        Some(self)
    }
}

/// Calls `found` with each reason the pod does not fit, in kube's order (pods, cpu, memory,
/// ephemeral storage, extended resources); nothing when it fits.
fn each_insufficiency(
    req: &Resource,
    node: &NodeInfo,
    ignored: impl Fn(Sym) -> bool,
    mut text: impl FnMut(Sym) -> Reason,
    mut found: impl FnMut(Reason),
) {
    let alloc = node.allocatable();
    if node.pod_count + 1 > alloc.allowed_pod_number {
        found("Too many pods".into());
    }
    if req.is_zero() {
        return;
    }
    let used = &node.requested;
    if req.milli_cpu > 0 && req.milli_cpu > alloc.milli_cpu - used.milli_cpu {
        found("Insufficient cpu".into());
    }
    if req.memory > 0 && req.memory > alloc.memory - used.memory {
        found("Insufficient memory".into());
    }
    if req.ephemeral_storage > 0
        && req.ephemeral_storage > alloc.ephemeral_storage - used.ephemeral_storage
    {
        found("Insufficient ephemeral-storage".into());
    }
    for &(name, v) in &req.scalar {
        if v == 0 || ignored(name) {
            continue;
        }
        if v > alloc.scalar(name) - used.scalar(name) {
            found(text(name));
        }
    }
}

/// "Insufficient <resource>" for an extended resource. The text is made once per resource
/// name and kept (a few thousand names at most; past that it is built per call), so a node
/// rejected for an extended resource costs no allocation, as one rejected for cpu does not.
fn insufficient_text(name: Sym) -> Reason {
    use parking_lot::RwLock;
    use std::sync::LazyLock;
    const MAX_KEPT: usize = 1 << 16;
    static TEXTS: LazyLock<RwLock<ahash::AHashMap<Sym, &'static str>>> =
        LazyLock::new(Default::default);
    if let Some(t) = TEXTS.read().get(&name) {
        return Reason::Borrowed(t);
    }
    let text = format!("Insufficient {name}");
    let mut map = TEXTS.write();
    if map.len() >= MAX_KEPT {
        return Reason::Owned(text);
    }
    let kept: &'static str = map
        .entry(name)
        .or_insert_with(|| Box::leak(text.into_boxed_str()));
    Reason::Borrowed(kept)
}

/// kube's `Fit.ScorePlacement`: how full the placement's nodes would be with the proposed
/// members on them (MostAllocated over the placement as one; no normalization). It favours
/// the placement the group packs tightest.
impl PlacementScorePlugin for NodeResourcesFit {
    fn score_placement(
        &self,
        _group_state: &PodGroupCycleState,
        _state: &PlacementCycleState,
        _pod_group: &PodGroupInfo,
        assignments: &PodGroupAssignments,
    ) -> (i64, Status) {
        let nodes = assignments
            .placement
            .as_deref()
            .map_or(&[][..], |p| &p.nodes);
        let pods = assignments.proposed_assignments.iter().map(|a| &*a.pod);
        (
            self.placement_scorer.score_placement(pods, nodes),
            Status::success(),
        )
    }
}

impl PreFilterPlugin for NodeResourcesFit {
    fn pre_filter(
        &self,
        _: &mut CycleState,
        _: &Pod,
        _: &Snapshot,
    ) -> (Option<PreFilterResult>, Status) {
        // The pod's requests are precomputed at the API boundary (PodSpecInfo::requests).
        (None, Status::success())
    }
}

/// Whether the pod fits the node on pods, cpu, memory and ephemeral storage: the common case,
/// decided with four compares and no branch per resource. The scalar resources and the
/// reasons of a rejection are left to [`each_insufficiency`].
#[inline(always)]
fn fits_basic(req: &Resource, node: &NodeInfo) -> bool {
    fits_row(req, &NodeRow::of(node))
}

/// [`fits_basic`] from the node's row: what the block filter reads.
#[inline(always)]
fn fits_row(req: &Resource, row: &NodeRow) -> bool {
    // `r <= 0 || r <= free` as one compare: a request of 0 (or below) always fits.
    let fits = |r: i64, free: i64| (r <= 0) | (r <= free);
    (row.free_pods > 0)
        & fits(
            req.milli_cpu,
            row.allocatable_milli_cpu
                .wrapping_sub(row.requested_milli_cpu),
        )
        & fits(
            req.memory,
            row.allocatable_memory.wrapping_sub(row.requested_memory),
        )
        & fits(req.ephemeral_storage, row.free_ephemeral_storage)
}

impl NodeResourcesFit {
    /// The full check, with the reasons of a rejection: what a node that fails
    /// [`fits_basic`] (or any node, for a pod with extended resources) goes through. Kept out
    /// of line so that the fast path stays small.
    #[inline(never)]
    fn filter_slow(&self, pod: &Pod, node: &NodeInfo, text: impl FnMut(Sym) -> Reason) -> Status {
        let mut first: Option<Reason> = None;
        let mut more: Vec<Reason> = Vec::new();
        let alloc = node.allocatable();
        each_insufficiency(
            &pod.spec.requests,
            node,
            |n| self.ignored(n) || self.delegated(n, Some(alloc)),
            text,
            |r| {
                if first.is_none() {
                    first = Some(r);
                } else {
                    more.push(r);
                }
            },
        );
        match first {
            None => Status::success(),
            Some(r) if more.is_empty() => Status::new(Code::Unschedulable, r),
            Some(r) => {
                more.insert(0, r);
                Status::with_reasons(Code::Unschedulable, more)
            }
        }
    }
}

impl FilterPlugin for NodeResourcesFit {
    #[inline]
    fn filter(&self, _: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        let req = &pod.spec.requests;
        if req.scalar.is_empty() && fits_basic(req, node) {
            return Status::success();
        }
        self.filter_slow(pod, node, insufficient_text)
    }

    /// The common fit decided for the whole block in one loop; only nodes that fail it (or
    /// every node, for a pod with extended resources) go through the full check.
    fn filter_nodes(
        &self,
        _: &CycleState,
        pod: &Pod,
        nodes: &[Arc<NodeInfo>],
        rows: &[NodeRow],
        pass: &mut [bool],
        reject: &mut dyn FnMut(usize, Status),
    ) {
        let req = &pod.spec.requests;
        let basic_only = req.scalar.is_empty();
        // The text of the last extended resource found short, kept for the block: looked up
        // once per block rather than once per rejected node (SchedulingWithExtendedResource
        // rejects 4,999 nodes of 5,000 for the same resource).
        let mut last: Option<(Sym, Reason)> = None;
        let mut text = |name: Sym| match &last {
            Some((n, t)) if *n == name => t.clone(),
            _ => {
                let t = insufficient_text(name);
                last = Some((name, t.clone()));
                t
            }
        };
        for (o, (r, p)) in rows.iter().zip(pass.iter_mut()).enumerate() {
            if !*p || (basic_only && fits_row(req, r)) {
                continue;
            }
            let s = self.filter_slow(pod, &nodes[o], &mut text);
            if !s.is_success() {
                *p = false;
                reject(o, s);
            }
        }
    }

    /// A pod without extended resources is judged from the rows; only a node it does not fit
    /// is looked up, for the reasons.
    fn filters_from_rows(&self, pod: &Pod) -> bool {
        pod.spec.requests.scalar.is_empty()
    }
}

/// The pod's requests of the scored resources, computed once per cycle in PreScore, and the
/// DRA view when a scored extended resource is backed by a DeviceClass.
#[derive(Clone)]
struct PreScoreState(Vec<i64>, Option<Arc<DraScores>>);

const PRE_SCORE_KEY: &str = "PreScoreNodeResourcesFit";

impl PreScorePlugin for NodeResourcesFit {
    /// Reads the pod and the snapshot, never the feasible nodes.
    fn pre_score_reads_nodes(&self, _: &Pod, _: &Snapshot) -> bool {
        false
    }
    fn pre_score(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        _: &[&NodeInfo],
        _: &Snapshot,
    ) -> Status {
        let dra = self
            .dra_scoring
            .as_ref()
            .and_then(|d| d.prepare(self.scorer.scalar_resources()))
            .map(Arc::new);
        state.write(
            PRE_SCORE_KEY,
            PreScoreState(self.scorer.pod_requests(pod), dra),
        );
        Status::success()
    }
}

impl ScorePlugin for NodeResourcesFit {
    fn score(&self, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        let mut score = [0];
        self.score_nodes(state, pod, &[node], &[NodeRow::of(node)], &mut score)?;
        Ok(score[0])
    }

    fn score_nodes(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        rows: &[NodeRow],
        scores: &mut [i64],
    ) -> Result<(), Status> {
        let computed;
        let (reqs, dra) = match state.read::<PreScoreState>(PRE_SCORE_KEY) {
            Some(s) => (&s.0, s.1.as_deref()),
            // Score without PreScore (tests, tools): the requests are a few lookups.
            None => {
                computed = self.scorer.pod_requests(pod);
                (&computed, None)
            }
        };
        match dra {
            Some(d) => {
                let counts = |n: &NodeInfo, r: Sym| d.counts(&n.node, r);
                for (s, n) in scores.iter_mut().zip(nodes) {
                    *s = self.scorer.score_with(n, reqs, Some(&counts));
                }
            }
            None => self.scorer.score_nodes(nodes, rows, reqs, scores),
        }
        Ok(())
    }

    fn scores_from_rows(&self, _: &CycleState) -> bool {
        self.scorer.scores_from_rows()
    }
}

/// Whether `freed` gives back any resource `want` asks for.
fn frees_something_needed(want: &Resource, freed: &Resource) -> bool {
    (want.milli_cpu > 0 && freed.milli_cpu > 0)
        || (want.memory > 0 && freed.memory > 0)
        || (want.ephemeral_storage > 0 && freed.ephemeral_storage > 0)
        || want
            .scalar
            .iter()
            .any(|&(n, v)| v > 0 && freed.scalar(n) > 0)
        // Every pod takes a pod slot: freeing one can help a pod rejected for "Too many pods".
        || want.is_zero()
}

/// Whether an empty node with `alloc` could hold `want` at all; `delegated` names the
/// resources left to DynamicResources on it.
fn could_ever_fit(want: &Resource, alloc: &Resource, delegated: impl Fn(Sym) -> bool) -> bool {
    alloc.allowed_pod_number > 0
        && want.milli_cpu <= alloc.milli_cpu
        && want.memory <= alloc.memory
        && want.ephemeral_storage <= alloc.ephemeral_storage
        && want
            .scalar
            .iter()
            .all(|&(n, v)| v <= alloc.scalar(n) || delegated(n))
}

/// A DeviceClass's name and `spec.extendedResourceName` (the v1 or the v1beta2 object).
fn class_names(o: &crate::framework::events::ApiObject) -> Option<(&str, Option<&str>)> {
    use k8s_openapi::api::resource::{v1, v1beta2};
    if let Some(c) = o.downcast_ref::<v1::DeviceClass>() {
        let ext = c
            .spec
            .as_ref()
            .and_then(|s| s.extended_resource_name.as_deref());
        return Some((c.metadata.name.as_deref()?, ext));
    }
    let c = o.downcast_ref::<v1beta2::DeviceClass>()?;
    let ext = c
        .spec
        .as_ref()
        .and_then(|s| s.extended_resource_name.as_deref());
    Some((c.metadata.name.as_deref()?, ext))
}

/// kube's `isSchedulableAfterDeviceClassEvent`: a class added that backs the pod's implicit
/// resource, or one whose extended resource name changed to one the pod requests.
fn device_class_hint(
    want: &Resource,
    old: &EventObject,
    new: &crate::framework::events::ApiObject,
) -> QueueingHint {
    let requests = |name: &str| want.scalar.iter().any(|(n, _)| n.as_arc().as_ref() == name);
    let Some((name, ext)) = class_names(new) else {
        return QueueingHint::Queue;
    };
    match old {
        EventObject::Object(o) => {
            if class_names(o).is_some_and(|(_, before)| before == ext) {
                return QueueingHint::QueueSkip;
            }
        }
        _ => {
            let implicit = format!(
                "{}{name}",
                crate::api::resource_names::DEVICE_CLASS_RESOURCE_PREFIX
            );
            if requests(&implicit) {
                return QueueingHint::Queue;
            }
        }
    }
    QueueingHint::queue_if(ext.is_some_and(requests))
}

impl EnqueueExtensions for NodeResourcesFit {
    /// After kube's `isSchedulableAfterPodEvent` / `isSchedulableAfterNodeChange`: a deleted
    /// pod helps if it was bound; a scaled-down pod only if it frees a resource the pod asks
    /// for; a node only if it could hold the pod at all.
    fn queueing_hint(
        &self,
        event: &ClusterEvent,
        pod: &Pod,
        old: &EventObject,
        new: &EventObject,
    ) -> Result<QueueingHint, String> {
        let want = &pod.spec.requests;
        let hint = QueueingHint::queue_if;
        // A deferred-resize pod (queued only with resize preemption on) is bound: only its
        // own node's changes can help it (kube's checks on `IsPodResizeDeferred`).
        let deferred_on = pod.is_resize_deferred().then_some(pod.node_name).flatten();
        let elsewhere =
            |node: Option<crate::api::Sym>| deferred_on.is_some_and(|n| node != Some(n));
        match (event.resource, old, new) {
            (EventResource::Node, _, EventObject::Node(n)) if elsewhere(Some(n.name)) => {
                Ok(QueueingHint::QueueSkip)
            }
            (EventResource::Node, _, EventObject::Node(n)) => {
                Ok(hint(could_ever_fit(want, &n.allocatable, |r| {
                    self.delegated(r, Some(&n.allocatable))
                })))
            }
            // kube's isSchedulableAfter{Target,Assigned}PodScaleUp: only a deferred pod cares,
            // about itself or a pod of its node growing (the headroom it waited for is gone).
            (_, _, EventObject::Pod(after)) if event.action == ActionType::UPDATE_POD_SCALE_UP => {
                Ok(hint(deferred_on.is_some() && !elsewhere(after.node_name)))
            }
            (_, EventObject::Pod(p), _) if elsewhere(p.node_name) => Ok(QueueingHint::QueueSkip),
            // A deleted pod that was bound frees at least a pod slot (kube queues on any
            // assigned pod's delete), and so does one nominated somewhere (counted there by
            // pods of lower or equal priority); one that never ran nor was nominated frees
            // nothing (kube's isSchedulableAfterAssignedPodDelete).
            (EventResource::AssignedPod | EventResource::Pod, EventObject::Pod(gone), _)
                if event.action == ActionType::DELETE =>
            {
                Ok(hint(
                    gone.is_assigned() || gone.nominated_node_name.is_some(),
                ))
            }
            (_, EventObject::Pod(before), EventObject::Pod(after))
                if event.action == ActionType::UPDATE_POD_SCALE_DOWN =>
            {
                // What the node counted for the pod before and after (status resources
                // included: kube's `haveEnoughRelevantResourcesDecreased` with
                // `UseStatusResources`).
                let mut freed = before.requests().clone();
                freed.sub(after.requests());
                Ok(hint(frees_something_needed(want, &freed)))
            }
            (EventResource::DeviceClass, old, EventObject::Object(new)) => {
                Ok(device_class_hint(want, old, new))
            }
            // Anything else (no objects to judge by): assume it may help.
            _ => Ok(QueueingHint::Queue),
        }
    }

    fn events_to_register(&self) -> Vec<ClusterEvent> {
        let mut events = vec![
            // Scale-ups matter only to deferred-resize pods (kube registers them with
            // InPlacePodVerticalScalingSchedulerPreemption; the hint skips every other pod).
            ClusterEvent::new(
                EventResource::Pod,
                ActionType::DELETE
                    .union(ActionType::UPDATE_POD_SCALE_DOWN)
                    .union(ActionType::UPDATE_POD_SCALE_UP),
            ),
            ClusterEvent::new(
                EventResource::Node,
                ActionType::ADD
                    .union(ActionType::UPDATE_NODE_ALLOCATABLE)
                    .union(ActionType::UPDATE_NODE_TAINT)
                    .union(ActionType::UPDATE_NODE_LABEL),
            ),
        ];
        if self.dra.is_some() {
            // DRAExtendedResource: a class may come to back a resource the pod waits for.
            events.push(ClusterEvent::new(
                EventResource::DeviceClass,
                ActionType::ADD.union(ActionType::UPDATE),
            ));
        }
        events
    }
}

#[cfg(test)]
#[path = "node_resources_fit_tests.rs"]
mod tests;
