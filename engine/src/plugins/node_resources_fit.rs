//! NodeResourcesFit: the node must have room for the pod's requests and one more pod
//! (extended resources named in `ignoredResources`/`ignoredResourceGroups` are not checked);
//! Score with the configured strategy (LeastAllocated by default, MostAllocated or
//! RequestedToCapacityRatio) over the configured resources (cpu and memory, weight 1 each).
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
    EnqueueExtensions, FilterPlugin, Plugin, PreFilterPlugin, PreFilterResult, PreScorePlugin,
    ScorePlugin,
};
use crate::framework::node_info::{NodeInfo, NodeRow};
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
mod tests {
    use super::*;

    #[test]
    fn hints_requeue_only_when_the_event_can_help() {
        use crate::api::{Node, PodSpecInfo, Sym};
        use std::sync::Arc;
        let with = |cpu: i64, mem: i64| PodSpecInfo {
            requests: Resource {
                milli_cpu: cpu,
                memory: mem,
                ..Default::default()
            },
            ..Default::default()
        };
        let pending = Pod::new("ns", "p", Arc::new(with(2000, 0)));
        let bound = |name: &str, spec: PodSpecInfo| {
            let mut p = Pod::new("ns", name, Arc::new(spec));
            p.node_name = Some(Sym::new("n"));
            Arc::new(p)
        };
        let f = NodeResourcesFit::default();
        let h = |ev, old: &EventObject, new: &EventObject| {
            f.queueing_hint(&ev, &pending, old, new).unwrap()
        };
        // Any bound pod's delete frees at least a pod slot; a never-bound one frees nothing.
        let del = ClusterEvent::new(EventResource::AssignedPod, ActionType::DELETE);
        let gone_mem = EventObject::Pod(bound("m", with(0, 1 << 30)));
        assert_eq!(h(del, &gone_mem, &EventObject::None), QueueingHint::Queue);
        let never_ran = EventObject::Pod(Arc::new(Pod::new("ns", "u", Arc::new(with(500, 0)))));
        assert_eq!(
            h(del, &never_ran, &EventObject::None),
            QueueingHint::QueueSkip
        );
        // A scale-down helps only if it frees something the pod asks for.
        let down = ClusterEvent::new(
            EventResource::AssignedPod,
            ActionType::UPDATE_POD_SCALE_DOWN,
        );
        let before = EventObject::Pod(bound("s", with(1000, 1 << 30)));
        let less_mem = EventObject::Pod(bound("s", with(1000, 1 << 20)));
        let less_cpu = EventObject::Pod(bound("s", with(200, 1 << 30)));
        assert_eq!(h(down, &before, &less_mem), QueueingHint::QueueSkip);
        assert_eq!(h(down, &before, &less_cpu), QueueingHint::Queue);
        // provenance: pkg/scheduler/framework/plugins/noderesources/fit_test.go
        // (TestIsSchedulableAfterPodChange, the InPlacePodVerticalScaling cases): what the
        // node counted is compared, status resources included. A spec scale-down the kubelet
        // has not actuated (allocated still 1000m) frees nothing.
        let unactuated = {
            let mut p = (*bound("s", with(200, 1 << 30))).clone();
            let held = Resource {
                milli_cpu: 1000,
                memory: 1 << 30,
                ..Default::default()
            };
            p.resize = Some(Arc::new(crate::api::PodResize {
                pending: None,
                requests: held.clone(),
                non_zero_requests: held,
            }));
            EventObject::Pod(Arc::new(p))
        };
        assert_eq!(h(down, &before, &unactuated), QueueingHint::QueueSkip);
        assert_eq!(h(down, &unactuated, &less_cpu), QueueingHint::Queue);
        // provenance: pkg/scheduler/framework/plugins/noderesources/fit_test.go (the
        // deferred-resize cases of TestIsSchedulableAfterPodChange / ...NodeChange /
        // ...ScaleUp): a deferred pod waits on its own node only; scale-ups concern only
        // deferred pods.
        let mut parked = Pod::new("ns", "d", Arc::new(with(2000, 0)));
        parked.node_name = Some(Sym::new("n"));
        parked.resize = Some(Arc::new(crate::api::PodResize {
            pending: Some(crate::api::ResizePending::Deferred),
            requests: with(2000, 0).requests,
            non_zero_requests: with(2000, 0).requests,
        }));
        let hd = |ev, old: &EventObject, new: &EventObject| {
            f.queueing_hint(&ev, &parked, old, new).unwrap()
        };
        let other_node = |name: &str| {
            let mut p = (*bound(name, with(1000, 0))).clone();
            p.node_name = Some(Sym::new("m"));
            EventObject::Pod(Arc::new(p))
        };
        assert_eq!(hd(del, &gone_mem, &EventObject::None), QueueingHint::Queue);
        assert_eq!(
            hd(del, &other_node("x"), &EventObject::None),
            QueueingHint::QueueSkip
        );
        let up = ClusterEvent::new(EventResource::AssignedPod, ActionType::UPDATE_POD_SCALE_UP);
        assert_eq!(hd(up, &before, &before), QueueingHint::Queue);
        assert_eq!(hd(up, &before, &other_node("y")), QueueingHint::QueueSkip);
        assert_eq!(h(up, &before, &before), QueueingHint::QueueSkip);
        let node = |cpu: i64| {
            EventObject::Node(Arc::new(Node {
                name: Sym::new("n"),
                labels: Arc::default(),
                taints: Arc::new([]),
                unschedulable: false,
                allocatable: Resource {
                    milli_cpu: cpu,
                    memory: 8 << 30,
                    allowed_pod_number: 110,
                    ..Default::default()
                },
                ..Default::default()
            }))
        };
        let add = ClusterEvent::new(EventResource::Node, ActionType::ADD);
        assert_eq!(h(add, &EventObject::None, &node(4000)), QueueingHint::Queue);
        assert_eq!(
            h(add, &EventObject::None, &node(1000)),
            QueueingHint::QueueSkip
        );
    }

    use crate::plugins::resource_allocation::test_util::{node, node_infos, pod};

    fn fit(json: serde_json::Value) -> Result<NodeResourcesFit, String> {
        NodeResourcesFit::from_args(Some(&json))
    }

    fn scores(
        f: &NodeResourcesFit,
        p: &Pod,
        nodes: &[Arc<crate::api::Node>],
        existing: &[Arc<Pod>],
    ) -> Vec<i64> {
        let state = CycleState::new();
        let infos = node_infos(nodes, existing);
        let one_by_one: Vec<i64> = infos
            .iter()
            .map(|ni| f.score(&state, p, ni).unwrap())
            .collect();
        // The batch the scheduler calls gives the same scores.
        let refs: Vec<&NodeInfo> = infos.iter().collect();
        let mut batch = vec![-1; refs.len()];
        let rows: Vec<NodeRow> = infos.iter().map(NodeRow::of).collect();
        f.score_nodes(&state, p, &refs, &rows, &mut batch).unwrap();
        assert_eq!(batch, one_by_one, "score_nodes vs score");
        batch
    }

    const EXT: &str = "abc.com/xyz";

    // Provenance: kubernetes/kubernetes
    // pkg/scheduler/framework/plugins/noderesources/most_allocated_test.go
    // (TestMostAllocatedScoringStrategy).
    #[test]
    fn most_allocated_table() {
        let most = |resources: serde_json::Value| {
            fit(
                serde_json::json!({"scoringStrategy": {"type": "MostAllocated", "resources": resources}}),
            )
        };
        let default = most(serde_json::json!([])).unwrap();
        let n = |name, cpu, mem| node(name, &[("cpu", cpu), ("memory", mem)]);
        let small_big = [n("node1", "4000", "10000"), n("node2", "6000", "10000")];
        let req2 = pod(
            "p",
            None,
            &[
                &[("cpu", "1000"), ("memory", "2000")],
                &[("cpu", "2000"), ("memory", "3000")],
            ],
        );
        // Nothing scheduled, nothing requested.
        let empty = pod("p", None, &[]);
        let same = [n("node1", "4000", "10000"), n("node2", "4000", "10000")];
        assert_eq!(scores(&default, &empty, &same, &[]), [0, 0]);
        // Differently sized nodes: (75 + 50) / 2 and (50 + 50) / 2.
        assert_eq!(scores(&default, &req2, &small_big, &[]), [62, 50]);
        // No resources requested, pods scheduled with resources.
        let big = [n("node1", "10000", "20000"), n("node2", "10000", "20000")];
        let on = |name: &str, node: &str, cpu: &str, mem: &str| {
            pod(name, Some(node), &[&[("cpu", cpu), ("memory", mem)]])
        };
        let existing = [
            on("e1", "node1", "3000", "0"),
            on("e2", "node1", "3000", "0"),
            on("e3", "node2", "3000", "0"),
            on("e4", "node2", "3000", "5000"),
        ];
        assert_eq!(scores(&default, &empty, &big, &existing), [30, 42]);
        // Resources requested, pods scheduled with resources.
        let existing = [
            on("e1", "node1", "3000", "0"),
            on("e2", "node2", "3000", "5000"),
        ];
        assert_eq!(scores(&default, &req2, &big, &existing), [42, 55]);
        // Requests equal to the node's capacity.
        let eq = pod(
            "p",
            None,
            &[
                &[("cpu", "2000"), ("memory", "4000")],
                &[("cpu", "3000"), ("memory", "5000")],
            ],
        );
        let nodes = [n("node1", "5000", "10000"), n("node2", "10000", "9000")];
        assert_eq!(scores(&default, &eq, &nodes, &[]), [95, 75]);
        // Weighted: memory 2, cpu 1.
        let weighted = most(serde_json::json!([
            {"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}
        ]))
        .unwrap();
        assert_eq!(scores(&weighted, &req2, &small_big, &[]), [58, 50]);
        // Containers without requests count the non-zero defaults (100m, 200Mi), capped.
        let nz = [n("node1", "250m", "1000Mi"), n("node2", "250m", "1000Mi")];
        let bare = pod("p", None, &[&[]]);
        let existing = [
            pod("e1", Some("node1"), &[&[]]),
            pod("e2", Some("node1"), &[&[]]),
        ];
        assert_eq!(scores(&default, &bare, &nz, &existing), [80, 30]);
        // Invalid weights.
        assert_eq!(
            most(
                serde_json::json!([{"name": "memory", "weight": -1}, {"name": "cpu", "weight": 1}])
            )
            .unwrap_err(),
            "scoringStrategy.resources[0].weight: Invalid value: -1: resource weight of memory not in valid range (0, 100]"
        );
        assert_eq!(
            most(serde_json::json!([{"name": "memory", "weight": 101}])).unwrap_err(),
            "scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of memory not in valid range (0, 100]"
        );
        // Extended resources: bypassed when the pod does not request them.
        let ext_set = most(serde_json::json!([
            {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": EXT, "weight": 1}
        ]))
        .unwrap();
        let nodes = [
            node("node1", &[("cpu", "6000"), ("memory", "10000")]),
            node("node2", &[("cpu", "6000"), ("memory", "10000"), (EXT, "4")]),
        ];
        assert_eq!(scores(&ext_set, &req2, &nodes, &[]), [50, 50]);
        // ...and honoured when it does: (50 + 50 + 2/4) / 3 and (50 + 50 + 2/10) / 3.
        let ext_pod = pod(
            "p",
            None,
            &[&[("cpu", "3000"), ("memory", "5000"), (EXT, "2")]],
        );
        let nodes = [
            node("node1", &[("cpu", "6000"), ("memory", "10000"), (EXT, "4")]),
            node(
                "node2",
                &[("cpu", "6000"), ("memory", "10000"), (EXT, "10")],
            ),
        ];
        assert_eq!(scores(&ext_set, &ext_pod, &nodes, &[]), [50, 40]);
        // A node without the resource: only cpu and memory count.
        let ext_weighted = most(serde_json::json!([
            {"name": EXT, "weight": 2}, {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}
        ]))
        .unwrap();
        let p34 = pod("p", None, &[&[("cpu", "3000"), ("memory", "4000")]]);
        let nodes = [
            node("node1", &[("cpu", "6000"), ("memory", "10000")]),
            node("node2", &[("cpu", "6000"), ("memory", "10000"), (EXT, "4")]),
        ];
        assert_eq!(scores(&ext_weighted, &p34, &nodes, &[]), [45, 45]);
    }

    // After kubernetes/kubernetes
    // pkg/scheduler/framework/plugins/noderesources/least_allocated_test.go
    // (TestLeastAllocatedScoringStrategy): the same fixtures scored the other way round.
    #[test]
    fn least_allocated_table() {
        let default = NodeResourcesFit::default();
        let n = |name, cpu, mem| node(name, &[("cpu", cpu), ("memory", mem)]);
        let empty = pod("p", None, &[]);
        let same = [n("node1", "4000", "10000"), n("node2", "4000", "10000")];
        assert_eq!(scores(&default, &empty, &same, &[]), [100, 100]);
        let req2 = pod(
            "p",
            None,
            &[
                &[("cpu", "1000"), ("memory", "2000")],
                &[("cpu", "2000"), ("memory", "3000")],
            ],
        );
        // (25 + 50) / 2 and (50 + 50) / 2.
        let small_big = [n("node1", "4000", "10000"), n("node2", "6000", "10000")];
        assert_eq!(scores(&default, &req2, &small_big, &[]), [37, 50]);
        // Requests over capacity score 0 for that resource.
        let nodes = [n("node1", "2000", "10000"), n("node2", "4000", "10000")];
        assert_eq!(scores(&default, &req2, &nodes, &[]), [25, 37]);
        // Weighted: memory 2, cpu 1: (25 + 50 × 2) / 3 = 41.
        let w = fit(
            serde_json::json!({"scoringStrategy": {"type": "LeastAllocated", "resources": [
                {"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}
            ]}}),
        )
        .unwrap();
        assert_eq!(scores(&w, &req2, &small_big, &[]), [41, 50]);
        // Non-zero defaults: 3 × 100m of 250m, 3 × 200Mi of 1000Mi -> (0 + 40) / 2.
        let nz = [n("node1", "250m", "1000Mi"), n("node2", "250m", "1000Mi")];
        let bare = pod("p", None, &[&[]]);
        let existing = [
            pod("e1", Some("node1"), &[&[]]),
            pod("e2", Some("node1"), &[&[]]),
        ];
        assert_eq!(scores(&default, &bare, &nz, &existing), [20, 70]);
    }

    // Provenance: kubernetes/kubernetes
    // pkg/scheduler/framework/plugins/noderesources/requested_to_capacity_ratio_test.go
    // (TestRequestedToCapacityRatioScoringStrategy, TestResourceBinPackingSingleExtended).
    #[test]
    fn requested_to_capacity_ratio_table() {
        let rtcr = fit(serde_json::json!({"scoringStrategy": {
            "type": "RequestedToCapacityRatio",
            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
            "requestedToCapacityRatio": {"shape": [
                {"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}
            ]}
        }}))
        .unwrap();
        let n = |name, cpu, mem| node(name, &[("cpu", cpu), ("memory", mem)]);
        let same = [n("node1", "4000", "10000"), n("node2", "4000", "10000")];
        let bare_on = |name: &str| pod(name, Some("node1"), &[]);
        let empty = pod("p", None, &[]);
        assert_eq!(
            scores(&rtcr, &empty, &same, &[bare_on("e1"), bare_on("e2")]),
            [100, 100]
        );
        let req2 = pod(
            "p",
            None,
            &[
                &[("cpu", "1000"), ("memory", "2000")],
                &[("cpu", "2000"), ("memory", "3000")],
            ],
        );
        let small_big = [n("node1", "4000", "10000"), n("node2", "6000", "10000")];
        // round((25 + 50) / 2) = 38.
        assert_eq!(
            scores(&rtcr, &req2, &small_big, &[bare_on("e1"), bare_on("e2")]),
            [38, 50]
        );
        let existing = [
            pod(
                "e1",
                Some("node1"),
                &[&[("cpu", "3000"), ("memory", "5000")]],
            ),
            pod(
                "e2",
                Some("node2"),
                &[&[("cpu", "3000"), ("memory", "5000")]],
            ),
        ];
        assert_eq!(scores(&rtcr, &empty, &small_big, &existing), [38, 50]);

        // Bin packing on one extended resource, shape (0, 0) -> (100, 1).
        let foo = "intel.com/foo";
        let bin = fit(serde_json::json!({"scoringStrategy": {
            "type": "RequestedToCapacityRatio",
            "resources": [{"name": foo, "weight": 1}],
            "requestedToCapacityRatio": {"shape": [
                {"utilization": 0, "score": 0}, {"utilization": 100, "score": 1}
            ]}
        }}))
        .unwrap();
        let nodes = [
            node("node1", &[("cpu", "4"), ("memory", "10000Mi"), (foo, "8")]),
            node("node2", &[("cpu", "4"), ("memory", "10000Mi"), (foo, "4")]),
        ];
        assert_eq!(scores(&bin, &empty, &nodes, &[]), [0, 0]);
        let two = pod("p", None, &[&[(foo, "2")]]);
        assert_eq!(scores(&bin, &two, &nodes, &[]), [2, 5]);
        let on2 = [pod("e", Some("node2"), &[&[(foo, "2")]])];
        assert_eq!(scores(&bin, &two, &nodes, &on2), [2, 10]);
        let four = pod("p", None, &[&[(foo, "4")]]);
        assert_eq!(scores(&bin, &four, &nodes, &[]), [5, 10]);
    }

    // Provenance: kubernetes/kubernetes
    // pkg/scheduler/apis/config/validation/validation_pluginargs_test.go
    // (TestValidateFitArgs) and v1/defaults_test.go (NodeResourcesFitArgs).
    #[test]
    fn args_defaults_and_validation() {
        let mut a: NodeResourcesFitArgs = crate::framework::registry::decode_args(None).unwrap();
        a.set_defaults();
        let s = a.scoring_strategy.as_ref().unwrap();
        assert_eq!(s.type_, "LeastAllocated");
        assert_eq!(s.resources, default_resources());
        let mut a: NodeResourcesFitArgs =
            crate::framework::registry::decode_args(Some(&serde_json::json!({
                "scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu"}]}
            })))
            .unwrap();
        a.set_defaults();
        assert_eq!(
            a.scoring_strategy.unwrap().resources,
            [ResourceSpec::new("cpu", 1)]
        );
        let e = |j| fit(j).unwrap_err();
        assert_eq!(
            e(serde_json::json!({"ignoredResources": ["example.com/foo", "!@#"]})),
            "ignoredResources[1]: Invalid value: \"!@#\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        );
        assert_eq!(
            e(serde_json::json!({"ignoredResourceGroups": ["example.com/foo"]})),
            "ignoredResourceGroups[0]: Invalid value: \"example.com/foo\": resource group name can't contain '/'"
        );
        assert_eq!(
            e(serde_json::json!({"scoringStrategy": {"type": "Invalid"}})),
            "scoringStrategy.type: Unsupported value: \"Invalid\": supported values: \"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\""
        );
        assert_eq!(
            e(serde_json::json!({"scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {"shape": [
                    {"utilization": 50, "score": 5}, {"utilization": 10, "score": 11}
                ]}
            }})),
            "[scoringStrategy.shape[1].utilization: Invalid value: 10: values must be sorted in increasing order, \
             scoringStrategy.shape[1].score: Invalid value: 11: not in valid range [0, 10]]"
        );
        assert!(e(serde_json::json!({"unknown": 1})).contains("unknown field"));
    }

    // After kubernetes/kubernetes pkg/scheduler/framework/plugins/noderesources/fit_test.go
    // (TestEnoughRequests: "skip checking ignored extended resource" and the resource-group
    // cases).
    #[test]
    fn ignored_extended_resources_in_filter() {
        let nodes = [node(
            "n",
            &[
                ("cpu", "10"),
                ("memory", "20"),
                ("pods", "32"),
                ("example.com/aaa", "5"),
            ],
        )];
        let ni = &node_infos(&nodes, &[])[0];
        let state = CycleState::new();
        let wants = |f: &NodeResourcesFit, reqs: &[(&str, &str)]| {
            let p = pod("p", None, &[reqs]);
            f.filter(&state, &p, ni).reasons().to_vec()
        };
        let plain = NodeResourcesFit::default();
        assert_eq!(
            wants(&plain, &[("cpu", "1"), ("example.com/aaa", "10")]),
            ["Insufficient example.com/aaa"]
        );
        assert_eq!(
            wants(&plain, &[("cpu", "1"), ("example.com/bbb", "1")]),
            ["Insufficient example.com/bbb"]
        );
        let by_name = fit(serde_json::json!({"ignoredResources": ["example.com/bbb"]})).unwrap();
        assert!(wants(&by_name, &[("cpu", "1"), ("example.com/bbb", "1")]).is_empty());
        assert_eq!(
            wants(&by_name, &[("cpu", "1"), ("example.com/aaa", "10")]),
            ["Insufficient example.com/aaa"]
        );
        let by_group = fit(serde_json::json!({"ignoredResourceGroups": ["example.com"]})).unwrap();
        assert!(wants(&by_group, &[("cpu", "1"), ("example.com/aaa", "10")]).is_empty());
        // Native resources are never ignored.
        let native = fit(serde_json::json!({"ignoredResources": ["hugepages-2Mi"]})).unwrap();
        assert_eq!(
            wants(&native, &[("hugepages-2Mi", "1")]),
            ["Insufficient hugepages-2Mi"]
        );
        // cpu and memory are still checked.
        assert_eq!(
            wants(&by_group, &[("cpu", "11"), ("memory", "30")]),
            ["Insufficient cpu", "Insufficient memory"]
        );
    }
}
