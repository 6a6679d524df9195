//! Resource-allocation scoring shared by NodeResourcesFit (LeastAllocated, MostAllocated,
//! RequestedToCapacityRatio) and NodeResourcesBalancedAllocation, and the parts of their args
//! they share (`resources [{name, weight}]`, the utilization shape) with kube's validation.
//! Source of behaviour: `pkg/scheduler/framework/plugins/noderesources/resource_allocation.go`,
//! `least_allocated.go`, `most_allocated.go`, `requested_to_capacity_ratio.go`,
//! `balanced_allocation.go`, `pkg/scheduler/framework/plugins/helper/shape_score.go` and
//! `pkg/scheduler/apis/config/validation/validation_pluginargs.go`.

use crate::api::validation::{ErrorType, FieldError};
use crate::api::{Pod, Sym};
use crate::framework::interface::MAX_NODE_SCORE;
// [`balanced_resource_score`] for cpu and memory, without the iterator passes: the same
// fractions and the same float arithmetic, so the same score.
use crate::framework::node_info::cpu_memory_balance as balance_cpu_memory;
use crate::framework::node_info::{NodeInfo, NodeRow};
use serde::Deserialize;

/// kube's `config.MaxCustomPriorityScore`: the top of a RequestedToCapacityRatio shape score.
pub(crate) const MAX_CUSTOM_PRIORITY_SCORE: i64 = 10;
/// The top of the utilization axis of a shape.
const MAX_UTILIZATION: i64 = 100;

/// `ResourceSpec`: a resource and its weight (0 is defaulted to 1).
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ResourceSpec {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub weight: i64,
}

impl ResourceSpec {
    pub(crate) fn new(name: &str, weight: i64) -> ResourceSpec {
        ResourceSpec {
            name: name.to_string(),
            weight,
        }
    }
}

/// kube's `defaultResourceSpec`: cpu and memory with weight 1.
pub(crate) fn default_resources() -> Vec<ResourceSpec> {
    vec![ResourceSpec::new("cpu", 1), ResourceSpec::new("memory", 1)]
}

/// `UtilizationShapePoint`.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct UtilizationShapePoint {
    #[serde(default)]
    pub(crate) utilization: i32,
    #[serde(default)]
    pub score: i32,
}

/// A field error of plugin args, rendered as kube's `field.Error`.
pub(crate) fn field_error(
    kind: ErrorType,
    field: impl Into<String>,
    bad_value: Option<String>,
    detail: impl Into<String>,
) -> FieldError {
    FieldError {
        kind,
        field: field.into(),
        bad_value,
        detail: detail.into(),
    }
}

/// kube's `utilerrors.NewAggregate(...).Error()`: one message as is, several (deduplicated)
/// as `[a, b]`. `Ok` when there are none.
pub(crate) fn aggregate(errs: &[FieldError]) -> Result<(), String> {
    let mut msgs: Vec<String> = Vec::new();
    for e in errs {
        let m = e.to_string();
        if !msgs.contains(&m) {
            msgs.push(m);
        }
    }
    match msgs.len() {
        0 => Ok(()),
        1 => Err(msgs.remove(0)),
        _ => Err(format!("[{}]", msgs.join(", "))),
    }
}

pub(crate) use crate::api::go_quote as quote;

/// kube's `validateResources`: every weight in (0, 100].
pub(crate) fn validate_resources(resources: &[ResourceSpec], path: &str) -> Vec<FieldError> {
    resources
        .iter()
        .enumerate()
        .filter(|(_, r)| r.weight <= 0 || r.weight > 100)
        .map(|(i, r)| {
            field_error(
                ErrorType::Invalid,
                format!("{path}[{i}].weight"),
                Some(r.weight.to_string()),
                format!("resource weight of {} not in valid range (0, 100]", r.name),
            )
        })
        .collect()
}

/// kube's `validateFunctionShape`.
pub(crate) fn validate_function_shape(
    shape: &[UtilizationShapePoint],
    path: &str,
) -> Vec<FieldError> {
    if shape.is_empty() {
        return vec![field_error(
            ErrorType::Required,
            path,
            None,
            "at least one point must be specified",
        )];
    }
    let mut errs = Vec::new();
    if let Some(i) = (1..shape.len()).find(|&i| shape[i - 1].utilization >= shape[i].utilization) {
        errs.push(field_error(
            ErrorType::Invalid,
            format!("{path}[{i}].utilization"),
            Some(shape[i].utilization.to_string()),
            "values must be sorted in increasing order",
        ));
    }
    for (i, p) in shape.iter().enumerate() {
        if !(0..=MAX_UTILIZATION).contains(&i64::from(p.utilization)) {
            errs.push(field_error(
                ErrorType::Invalid,
                format!("{path}[{i}].utilization"),
                Some(p.utilization.to_string()),
                format!("not in valid range [0, {MAX_UTILIZATION}]"),
            ));
        }
        if !(0..=MAX_CUSTOM_PRIORITY_SCORE).contains(&i64::from(p.score)) {
            errs.push(field_error(
                ErrorType::Invalid,
                format!("{path}[{i}].score"),
                Some(p.score.to_string()),
                format!("not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"),
            ));
        }
    }
    errs
}

/// A resource the scorer looks at, resolved once from its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Cpu,
    Memory,
    EphemeralStorage,
    /// Anything else: extended resources, hugepages… (kube's scalar resources). A name kube
    /// does not score at all (`pods`) is never in a node's scalar resources, so it scores
    /// nothing either.
    Scalar(Sym),
}

impl Kind {
    fn of(name: &str) -> Kind {
        match name {
            "cpu" => Kind::Cpu,
            "memory" => Kind::Memory,
            "ephemeral-storage" => Kind::EphemeralStorage,
            n => Kind::Scalar(Sym::new(n)),
        }
    }
}

/// How the per-resource (requested, allocatable) pairs become a node score.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Strategy {
    LeastAllocated,
    MostAllocated,
    /// The broken linear function over utilization, with scores already scaled to
    /// `[0, MAX_NODE_SCORE]` (`(utilization, score)`).
    RequestedToCapacityRatio(Vec<(i64, i64)>),
    Balanced,
}

/// `(allocatable, allocated)` of an extended resource on a node from the devices of the
/// DeviceClass that backs it (`None`: no class backs it).
pub(crate) type DraCounts<'a> = dyn Fn(&NodeInfo, Sym) -> Option<(i64, i64)> + 'a;

/// kube's `resourceAllocationScorer`.
#[derive(Clone, Debug)]
pub(crate) struct ResourceAllocationScorer {
    resources: Vec<(Kind, i64)>,
    /// Score with the actual requests (BalancedAllocation) rather than the non-zero defaults
    /// for cpu and memory (NodeResourcesFit).
    use_requested: bool,
    strategy: Strategy,
}

impl ResourceAllocationScorer {
    pub(crate) fn new(resources: &[ResourceSpec], use_requested: bool, strategy: Strategy) -> Self {
        ResourceAllocationScorer {
            resources: resources
                .iter()
                .map(|r| (Kind::of(&r.name), r.weight))
                .collect(),
            use_requested,
            strategy,
        }
    }

    /// A RequestedToCapacityRatio scorer from the configured shape (scores in
    /// `[0, MAX_CUSTOM_PRIORITY_SCORE]`, scaled to `[0, MAX_NODE_SCORE]`).
    pub(crate) fn requested_to_capacity_ratio(
        resources: &[ResourceSpec],
        shape: &[UtilizationShapePoint],
    ) -> Self {
        let scale = MAX_NODE_SCORE / MAX_CUSTOM_PRIORITY_SCORE;
        let shape = shape
            .iter()
            .map(|p| (i64::from(p.utilization), i64::from(p.score) * scale))
            .collect();
        Self::new(resources, false, Strategy::RequestedToCapacityRatio(shape))
    }

    /// kube's `calculatePodResourceRequestList`: the pod's request of each resource, with the
    /// non-zero defaults for cpu and memory unless `use_requested`.
    pub(crate) fn pod_requests(&self, pod: &Pod) -> Vec<i64> {
        let r = if self.use_requested {
            &pod.spec.requests
        } else {
            &pod.spec.non_zero_requests
        };
        self.resources
            .iter()
            .map(|&(k, _)| match k {
                Kind::Cpu => r.milli_cpu,
                Kind::Memory => r.memory,
                Kind::EphemeralStorage => pod.spec.requests.ephemeral_storage,
                Kind::Scalar(n) => pod.spec.requests.scalar(n),
            })
            .collect()
    }

    /// kube's `isBestEffortPod` over the requests of [`Self::pod_requests`].
    pub(crate) fn is_best_effort(pod_requests: &[i64]) -> bool {
        pod_requests.iter().all(|&r| r == 0)
    }

    /// kube's `calculateResourceAllocatableRequest`: `(allocatable, requested)` of one
    /// resource on the node with the pod added; `(0, 0)` skips the resource.
    /// `dra` gives `(allocatable, allocated)` of an extended resource that a DeviceClass
    /// backs, for a node without allocatable of it (DRAExtendedResource).
    fn allocatable_requested(
        &self,
        node: &NodeInfo,
        kind: Kind,
        pod_request: i64,
        dra: Option<&DraCounts<'_>>,
    ) -> (i64, i64) {
        let alloc = node.allocatable();
        let used = if self.use_requested {
            &node.requested
        } else {
            &node.non_zero_requested
        };
        match kind {
            Kind::Cpu => (alloc.milli_cpu, used.milli_cpu + pod_request),
            Kind::Memory => (alloc.memory, used.memory + pod_request),
            Kind::EphemeralStorage => (
                alloc.ephemeral_storage,
                node.requested.ephemeral_storage + pod_request,
            ),
            // An extended resource the pod does not ask for is not scored.
            Kind::Scalar(_) if pod_request == 0 => (0, 0),
            Kind::Scalar(n) => {
                let found = alloc.scalar.binary_search_by_key(&n, |&(s, _)| s);
                let have = found.map_or(0, |i| alloc.scalar[i].1);
                if have == 0
                    && let Some((a, allocated)) = dra.and_then(|f| f(node, n))
                    && a > 0
                {
                    return (a, allocated + pod_request);
                }
                match found {
                    Ok(_) => (have, node.requested.scalar(n) + pod_request),
                    Err(_) => (0, 0),
                }
            }
        }
    }

    /// kube's `resourceAllocationScorer.score` with the pod's requests from
    /// [`Self::pod_requests`].
    pub(crate) fn score(&self, node: &NodeInfo, pod_requests: &[i64]) -> i64 {
        self.score_with(node, pod_requests, None)
    }

    /// kube's `resourceAllocationScorer.scorePlacement`: the strategy over a whole
    /// placement, as if its nodes were one: the proposed members' requests plus every node's
    /// allocation, against the nodes' summed allocatable. A resource a node lacks adds
    /// nothing there; an extended resource no member asks for (and no node before allocates)
    /// is not scored. No DRA-backed counts (kube passes no PreScore state).
    pub(crate) fn score_placement<'a>(
        &self,
        pods: impl Iterator<Item = &'a Pod>,
        nodes: &[std::sync::Arc<NodeInfo>],
    ) -> i64 {
        let n = self.resources.len();
        let mut requested = vec![0i64; n];
        for pod in pods {
            for (r, q) in requested.iter_mut().zip(self.pod_requests(pod)) {
                *r += q;
            }
        }
        let members = requested.clone();
        let mut allocatable = vec![0i64; n];
        for node in nodes {
            for (i, &(kind, _)) in self.resources.iter().enumerate() {
                // kube hands the running total as the "pod's" requests: only its zeroness
                // matters (an extended resource nobody asked for is skipped).
                let (a, with) = self.allocatable_requested(node, kind, requested[i], None);
                if a == 0 {
                    continue;
                }
                allocatable[i] += a;
                requested[i] = with;
            }
        }
        let weights = self.resources.iter().map(|&(_, w)| w);
        self.combine(&requested, &allocatable, &members, weights)
    }

    /// The extended resources among the scored ones (kube's scalar resources).
    pub(crate) fn scalar_resources(&self) -> impl Iterator<Item = Sym> + '_ {
        self.resources.iter().filter_map(|&(k, _)| match k {
            Kind::Scalar(n) => Some(n),
            _ => None,
        })
    }

    /// [`Self::score`], with the DRA counts of extended resources backed by DeviceClasses.
    pub(crate) fn score_with(
        &self,
        node: &NodeInfo,
        pod_requests: &[i64],
        dra: Option<&DraCounts<'_>>,
    ) -> i64 {
        if let [(Kind::Cpu, wc), (Kind::Memory, wm)] = self.resources[..] {
            return self.score_cpu_memory(node, pod_requests, wc, wm);
        }
        // Per node, so on the stack: a handful of resources is the norm.
        const INLINE: usize = 8;
        let n = self.resources.len();
        let (mut rb, mut ab) = ([0i64; INLINE], [0i64; INLINE]);
        let (mut rv, mut av) = (Vec::new(), Vec::new());
        let (requested, allocatable): (&mut [i64], &mut [i64]) = if n <= INLINE {
            (&mut rb[..n], &mut ab[..n])
        } else {
            rv.resize(n, 0);
            av.resize(n, 0);
            (&mut rv[..], &mut av[..])
        };
        for (i, &(kind, _)) in self.resources.iter().enumerate() {
            let (a, r) = self.allocatable_requested(node, kind, pod_requests[i], dra);
            if a == 0 {
                continue;
            }
            allocatable[i] = a;
            requested[i] = r;
        }
        let weights = self.resources.iter().map(|&(_, w)| w);
        self.combine(requested, allocatable, pod_requests, weights)
    }

    /// kube's default resource list for both scorers: the same arithmetic as the general
    /// path, with the two resources unrolled (no per-resource dispatch, nothing to zero).
    #[inline(always)]
    fn score_cpu_memory(&self, node: &NodeInfo, pod_requests: &[i64], wc: i64, wm: i64) -> i64 {
        self.combine_cpu_memory(
            self.cpu_memory_pairs(&NodeRow::of(node), pod_requests),
            pod_requests,
            wc,
            wm,
        )
    }

    /// The strategy over the cpu and memory pairs of [`Self::cpu_memory_pairs`].
    #[inline(always)]
    fn combine_cpu_memory(
        &self,
        pairs: [(i64, i64); 2],
        pod_requests: &[i64],
        wc: i64,
        wm: i64,
    ) -> i64 {
        match self.strategy {
            Strategy::Balanced => balanced_cpu_memory(pairs, pod_requests[0], pod_requests[1]),
            Strategy::LeastAllocated => weighted_cpu_memory(pairs, wc, wm, least_requested_score),
            Strategy::MostAllocated => weighted_cpu_memory(pairs, wc, wm, most_requested_score),
            Strategy::RequestedToCapacityRatio(_) => {
                let [(rc, ac), (rm, am)] = pairs;
                self.combine(&[rc, rm], &[ac, am], pod_requests, [wc, wm].into_iter())
            }
        }
    }

    /// [`Self::score_cpu_memory`] over a block, with the strategy chosen once per block
    /// instead of once per node: each arm is its own loop with the scorer inlined.
    fn score_cpu_memory_nodes(
        &self,
        nodes: &[NodeRow],
        pod_requests: &[i64],
        scores: &mut [i64],
        wc: i64,
        wm: i64,
    ) {
        match self.strategy {
            // The node's own balance is in its row (requested, as BalancedAllocation reads).
            Strategy::Balanced if self.use_requested => {
                for (s, n) in scores.iter_mut().zip(nodes) {
                    let with = balance_cpu_memory(self.cpu_memory_pairs(n, pod_requests));
                    *s = balance_change(with, i64::from(n.balance));
                }
            }
            Strategy::Balanced => {
                let (rc, rm) = (pod_requests[0], pod_requests[1]);
                self.fill(nodes, pod_requests, scores, |p| {
                    balanced_cpu_memory(p, rc, rm)
                })
            }
            Strategy::LeastAllocated => self.fill(nodes, pod_requests, scores, |p| {
                weighted_cpu_memory(p, wc, wm, least_requested_score)
            }),
            Strategy::MostAllocated => self.fill(nodes, pod_requests, scores, |p| {
                weighted_cpu_memory(p, wc, wm, most_requested_score)
            }),
            Strategy::RequestedToCapacityRatio(_) => self.fill(nodes, pod_requests, scores, |p| {
                self.combine_cpu_memory(p, pod_requests, wc, wm)
            }),
        }
    }

    /// `scores[i] = score(pairs of nodes[i])`, monomorphised per scorer.
    #[inline(always)]
    fn fill(
        &self,
        nodes: &[NodeRow],
        pod_requests: &[i64],
        scores: &mut [i64],
        score: impl Fn([(i64, i64); 2]) -> i64,
    ) {
        for (s, n) in scores.iter_mut().zip(nodes) {
            *s = score(self.cpu_memory_pairs(n, pod_requests));
        }
    }

    /// `[(requested, allocatable)]` of cpu and memory with the pod added; `(0, 0)` where the
    /// node lacks the resource (it does not count).
    #[inline(always)]
    fn cpu_memory_pairs(&self, node: &NodeRow, pod_requests: &[i64]) -> [(i64, i64); 2] {
        let (used_cpu, used_memory) = if self.use_requested {
            (node.requested_milli_cpu, node.requested_memory)
        } else {
            (node.non_zero_milli_cpu, node.non_zero_memory)
        };
        let pair = |a: i64, used: i64, req: i64| if a == 0 { (0, 0) } else { (used + req, a) };
        [
            pair(node.allocatable_milli_cpu, used_cpu, pod_requests[0]),
            pair(node.allocatable_memory, used_memory, pod_requests[1]),
        ]
    }

    /// Whether [`Self::score_nodes`] reads only the rows: the resource list is kube's
    /// default one (cpu, memory), which a [`NodeRow`] holds.
    pub(crate) fn scores_from_rows(&self) -> bool {
        matches!(self.resources[..], [(Kind::Cpu, _), (Kind::Memory, _)])
    }

    /// [`Self::score`] for each node of a block (`rows[o]` is `nodes[o]`'s row). The
    /// resource list is looked at once per block, and kube's default one (cpu, memory) runs
    /// an inlined loop over the rows.
    pub(crate) fn score_nodes(
        &self,
        nodes: &[&NodeInfo],
        rows: &[NodeRow],
        pod_requests: &[i64],
        scores: &mut [i64],
    ) {
        if let [(Kind::Cpu, wc), (Kind::Memory, wm)] = self.resources[..] {
            self.score_cpu_memory_nodes(rows, pod_requests, scores, wc, wm);
            return;
        }
        for (s, n) in scores.iter_mut().zip(nodes) {
            *s = self.score(n, pod_requests);
        }
    }

    /// The strategy over the per-resource `(requested, allocatable)` pairs (allocatable 0:
    /// the node lacks the resource and it does not count).
    #[inline(always)]
    fn combine(
        &self,
        requested: &[i64],
        allocatable: &[i64],
        pod_requests: &[i64],
        weights: impl Iterator<Item = i64>,
    ) -> i64 {
        match &self.strategy {
            Strategy::LeastAllocated => {
                weighted_mean(requested, allocatable, weights, least_requested_score)
            }
            Strategy::MostAllocated => {
                weighted_mean(requested, allocatable, weights, most_requested_score)
            }
            Strategy::RequestedToCapacityRatio(shape) => {
                requested_to_capacity_ratio_score(shape, requested, allocatable, weights)
            }
            Strategy::Balanced => {
                // The node's allocation without the pod, per resource it has.
                let allocated: Vec<i64> = requested
                    .iter()
                    .zip(allocatable)
                    .zip(pod_requests)
                    .map(|((&r, &a), &p)| if a == 0 { 0 } else { r - p })
                    .collect();
                balanced_resource_scorer(requested, &allocated, allocatable)
            }
        }
    }
}

/// `Σ score(requested, allocatable) × weight / Σ weight` over the resources the node has.
#[inline(always)]
fn weighted_mean(
    requested: &[i64],
    allocatable: &[i64],
    weights: impl Iterator<Item = i64>,
    score: fn(i64, i64) -> i64,
) -> i64 {
    let (mut sum, mut weight_sum) = (0i64, 0i64);
    for ((&r, &a), w) in requested.iter().zip(allocatable).zip(weights) {
        if a == 0 {
            continue;
        }
        sum += score(r, a) * w;
        weight_sum += w;
    }
    if weight_sum == 0 { 0 } else { sum / weight_sum }
}

/// kube's `leastRequestedScore`: `(capacity − requested) × 100 / capacity`, 0 when over.
#[inline(always)]
pub(crate) fn least_requested_score(requested: i64, capacity: i64) -> i64 {
    if capacity == 0 || requested > capacity {
        return 0;
    }
    (capacity - requested) * MAX_NODE_SCORE / capacity
}

/// kube's `mostRequestedScore`: `requested × 100 / capacity`, requested capped at capacity
/// (pods without requests count the non-zero defaults).
#[inline(always)]
pub(crate) fn most_requested_score(requested: i64, capacity: i64) -> i64 {
    if capacity == 0 {
        return 0;
    }
    requested.min(capacity) * MAX_NODE_SCORE / capacity
}

/// kube's `helper.BuildBrokenLinearFunction`: the score at utilization `p` on the shape.
pub(crate) fn broken_linear(shape: &[(i64, i64)], p: i64) -> i64 {
    for (i, &(u, s)) in shape.iter().enumerate() {
        if p <= u {
            if i == 0 {
                return s;
            }
            let (pu, ps) = shape[i - 1];
            return ps + (s - ps) * (p - pu) / (u - pu);
        }
    }
    shape.last().map_or(0, |&(_, s)| s)
}

/// kube's `buildRequestedToCapacityRatioScorerFunction`: the weighted mean of the shape
/// scores, over the resources whose score is positive, rounded.
fn requested_to_capacity_ratio_score(
    shape: &[(i64, i64)],
    requested: &[i64],
    allocatable: &[i64],
    weights: impl Iterator<Item = i64>,
) -> i64 {
    let resource_score = |r: i64, c: i64| {
        if c == 0 || r > c {
            broken_linear(shape, MAX_UTILIZATION)
        } else {
            broken_linear(shape, r * MAX_UTILIZATION / c)
        }
    };
    let (mut sum, mut weight_sum) = (0i64, 0i64);
    for ((&r, &a), w) in requested.iter().zip(allocatable).zip(weights) {
        if a == 0 {
            continue;
        }
        let s = resource_score(r, a);
        if s > 0 {
            sum += s * w;
            weight_sum += w;
        }
    }
    if weight_sum == 0 {
        0
    } else {
        (sum as f64 / weight_sum as f64).round() as i64
    }
}

/// kube's `balancedResourceScorer` (since v1.36): the change in the node's balance the pod
/// makes, `50 + (50 + balance with the pod − balance without it) / 2`, in `[50, 100]`: about 75
/// when the pod changes little, towards 100 when it improves the balance, towards 50 when it
/// worsens it. `requested` includes the pod, `allocated` does not.
pub(crate) fn balanced_resource_scorer(
    requested: &[i64],
    allocated: &[i64],
    allocatable: &[i64],
) -> i64 {
    let with = balanced_resource_score(requested, allocatable);
    let without = balanced_resource_score(allocated, allocatable);
    balance_change(with, without)
}

/// `MaxNodeScore/2 + (MaxNodeScore/2 + with − without) / 2` with Go's integer division.
#[inline(always)]
fn balance_change(with: i64, without: i64) -> i64 {
    MAX_NODE_SCORE / 2 + (MAX_NODE_SCORE / 2 + with - without) / 2
}

/// kube's `balancedResourceScore`: `(1 − std of the utilization fractions) × 100`, fractions
/// capped at 1, over the resources the node has: one state's balance.
pub(crate) fn balanced_resource_score(requested: &[i64], allocatable: &[i64]) -> i64 {
    // No allocation: this runs per node.
    let fractions = || {
        requested
            .iter()
            .zip(allocatable)
            .filter(|&(_, &a)| a != 0)
            .map(|(&r, &a)| (r as f64 / a as f64).min(1.0))
    };
    let n = fractions().count();
    let std = match n {
        0 | 1 => 0.0,
        2 => {
            let mut it = fractions();
            let (f0, f1) = (it.next().unwrap_or(0.0), it.next().unwrap_or(0.0));
            ((f0 - f1) / 2.0).abs()
        }
        n => {
            let mean = fractions().sum::<f64>() / n as f64;
            let var = fractions().map(|f| (f - mean) * (f - mean)).sum::<f64>() / n as f64;
            var.sqrt()
        }
    };
    ((1.0 - std) * MAX_NODE_SCORE as f64) as i64
}

/// [`balanced_resource_scorer`] for cpu and memory: `pairs` are `(requested with the pod,
/// allocatable)`, `pc` and `pm` the pod's requests.
#[inline(always)]
fn balanced_cpu_memory(pairs: [(i64, i64); 2], pc: i64, pm: i64) -> i64 {
    let [(rc, ac), (rm, am)] = pairs;
    let without = [
        (if ac == 0 { 0 } else { rc - pc }, ac),
        (if am == 0 { 0 } else { rm - pm }, am),
    ];
    balance_change(balance_cpu_memory(pairs), balance_cpu_memory(without))
}

/// [`weighted_mean`] over cpu and memory, spelled out (no arrays, no iterator).
#[inline(always)]
fn weighted_cpu_memory(
    [(rc, ac), (rm, am)]: [(i64, i64); 2],
    wc: i64,
    wm: i64,
    score: impl Fn(i64, i64) -> i64,
) -> i64 {
    let (mut sum, mut weight_sum) = (0i64, 0i64);
    if ac != 0 {
        sum += score(rc, ac) * wc;
        weight_sum += wc;
    }
    if am != 0 {
        sum += score(rm, am) * wm;
        weight_sum += wm;
    }
    if weight_sum == 0 { 0 } else { sum / weight_sum }
}

/// Test fixtures shared by the resource plugins' tests: nodes and pods built through the API
/// conversion, as kube's `st.MakeNode()`/`st.MakePod()` build them.
#[cfg(test)]
pub(crate) mod test_util {
    use crate::api::{Node, Pod, convert};
    use crate::framework::node_info::NodeInfo;
    use std::sync::Arc;

    /// A node with `capacity` (name → quantity).
    pub(crate) fn node(name: &str, capacity: &[(&str, &str)]) -> Arc<Node> {
        let cap: serde_json::Map<String, serde_json::Value> = capacity
            .iter()
            .map(|(k, v)| (k.to_string(), serde_json::Value::from(*v)))
            .collect();
        let n: k8s_openapi::api::core::v1::Node = serde_json::from_value(serde_json::json!({
            "metadata": {"name": name},
            "status": {"capacity": cap},
        }))
        .unwrap();
        Arc::new(convert::node(&n).unwrap())
    }

    /// A pod with one container per entry of `containers` (each a request list; empty: a
    /// container without requests), bound to `node` when given.
    pub(crate) fn pod(name: &str, node: Option<&str>, containers: &[&[(&str, &str)]]) -> Arc<Pod> {
        let cs: Vec<serde_json::Value> = containers
            .iter()
            .enumerate()
            .map(|(i, reqs)| {
                let r: serde_json::Map<String, serde_json::Value> = reqs
                    .iter()
                    .map(|(k, v)| (k.to_string(), serde_json::Value::from(*v)))
                    .collect();
                serde_json::json!({"name": format!("c{i}"), "image": "img", "resources": {"requests": r}})
            })
            .collect();
        let p: k8s_openapi::api::core::v1::Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": "default", "uid": name},
            "spec": {"containers": cs, "nodeName": node},
        }))
        .unwrap();
        Arc::new(convert::pod(&p).unwrap())
    }

    /// NodeInfos of `nodes` with `pods` added to the node each names.
    pub(crate) fn node_infos(nodes: &[Arc<Node>], pods: &[Arc<Pod>]) -> Vec<NodeInfo> {
        nodes
            .iter()
            .map(|n| {
                let mut ni = NodeInfo::new(n.clone());
                for p in pods.iter().filter(|p| p.node_name == Some(n.name)) {
                    ni.add_pod(p);
                }
                ni
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    // Provenance: kubernetes/kubernetes pkg/scheduler/framework/plugins/helper/shape_score_test.go
    // (TestBrokenLinearFunction).
    #[test]
    fn broken_linear_function_table() {
        let shape = [(10, 1), (90, 9)];
        for (p, want) in [
            (-10, 1),
            (0, 1),
            (9, 1),
            (10, 1),
            (15, 1),
            (20, 2),
            (89, 8),
            (90, 9),
            (99, 9),
            (100, 9),
            (110, 9),
        ] {
            assert_eq!(broken_linear(&shape, p), want, "p={p}");
        }
        let shape = [(0, 2), (40, 10), (100, 0)];
        for (p, want) in [
            (-10, 2),
            (0, 2),
            (20, 6),
            (30, 8),
            (40, 10),
            (70, 5),
            (100, 0),
            (110, 0),
        ] {
            assert_eq!(broken_linear(&shape, p), want, "p={p}");
        }
        let shape = [(0, 2), (40, 2), (100, 2)];
        for p in [-10, 0, 20, 40, 70, 100, 110] {
            assert_eq!(broken_linear(&shape, p), 2, "p={p}");
        }
    }

    proptest::proptest! {
        /// The unrolled cpu+memory path gives what the general per-resource path gives: the
        /// same resources in the other order take the general path, and every strategy is
        /// order-independent.
        #[test]
        fn cpu_memory_fast_path_equals_the_general_path(
            alloc in (0i64..64_000, 0i64..(256i64 << 30)),
            used in (0i64..80_000, 0i64..(300i64 << 30)),
            nonzero in (0i64..80_000, 0i64..(300i64 << 30)),
            req in (0i64..8_000, 0i64..(16i64 << 30)),
            weights in (1i64..100, 1i64..100),
        ) {
            let mut node = crate::api::Node::named("n");
            node.allocatable.milli_cpu = alloc.0;
            node.allocatable.memory = alloc.1;
            let mut ni = NodeInfo::new(Arc::new(node));
            ni.requested.milli_cpu = used.0;
            ni.requested.memory = used.1;
            ni.non_zero_requested.milli_cpu = nonzero.0;
            ni.non_zero_requested.memory = nonzero.1;
            let cm = [ResourceSpec::new("cpu", weights.0), ResourceSpec::new("memory", weights.1)];
            let mc = [ResourceSpec::new("memory", weights.1), ResourceSpec::new("cpu", weights.0)];
            let shape = [UtilizationShapePoint { utilization: 0, score: 10 }, UtilizationShapePoint { utilization: 100, score: 0 }];
            for use_requested in [false, true] {
                for strategy in [Strategy::LeastAllocated, Strategy::MostAllocated, Strategy::Balanced] {
                    let fast = ResourceAllocationScorer::new(&cm, use_requested, strategy.clone());
                    let general = ResourceAllocationScorer::new(&mc, use_requested, strategy);
                    proptest::prop_assert_eq!(
                        fast.score(&ni, &[req.0, req.1]),
                        general.score(&ni, &[req.1, req.0])
                    );
                }
            }
            let fast = ResourceAllocationScorer::requested_to_capacity_ratio(&cm, &shape);
            let general = ResourceAllocationScorer::requested_to_capacity_ratio(&mc, &shape);
            proptest::prop_assert_eq!(fast.score(&ni, &[req.0, req.1]), general.score(&ni, &[req.1, req.0]));
        }
    }

    /// The fast path on nodes lacking cpu, memory or both (allocatable 0: not scored).
    #[test]
    fn cpu_memory_fast_path_on_missing_resources() {
        let cm = [ResourceSpec::new("cpu", 1), ResourceSpec::new("memory", 1)];
        let mc = [ResourceSpec::new("memory", 1), ResourceSpec::new("cpu", 1)];
        for (cpu, mem) in [(0, 0), (0, 8 << 30), (4000, 0), (4000, 8 << 30)] {
            let mut node = crate::api::Node::named("n");
            node.allocatable.milli_cpu = cpu;
            node.allocatable.memory = mem;
            let mut ni = NodeInfo::new(Arc::new(node));
            ni.requested.milli_cpu = 1000;
            ni.requested.memory = 1 << 30;
            ni.non_zero_requested = ni.requested.clone();
            for use_requested in [false, true] {
                for strategy in [
                    Strategy::LeastAllocated,
                    Strategy::MostAllocated,
                    Strategy::Balanced,
                ] {
                    let fast = ResourceAllocationScorer::new(&cm, use_requested, strategy.clone());
                    let general =
                        ResourceAllocationScorer::new(&mc, use_requested, strategy.clone());
                    assert_eq!(
                        fast.score(&ni, &[500, 1 << 29]),
                        general.score(&ni, &[1 << 29, 500]),
                        "{cpu} {mem} {strategy:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn per_resource_formulas() {
        assert_eq!(least_requested_score(0, 4000), 100);
        assert_eq!(least_requested_score(1000, 4000), 75);
        assert_eq!(least_requested_score(5000, 4000), 0);
        assert_eq!(least_requested_score(1, 0), 0);
        assert_eq!(most_requested_score(3000, 4000), 75);
        assert_eq!(most_requested_score(5000, 4000), 100);
        assert_eq!(most_requested_score(1, 0), 0);
        // Equal fractions: perfectly balanced; 0.5 vs 0.25 -> std 0.125 -> 87; capped at 1.
        assert_eq!(balanced_resource_score(&[2000, 16], &[4000, 32]), 100);
        assert_eq!(balanced_resource_score(&[2000, 8], &[4000, 32]), 87);
        assert_eq!(balanced_resource_score(&[8000, 0], &[4000, 32]), 50);
    }

    #[test]
    fn validation_messages() {
        let e = validate_resources(
            &[ResourceSpec::new("memory", -1), ResourceSpec::new("cpu", 1)],
            "scoringStrategy.resources",
        );
        assert_eq!(
            aggregate(&e).unwrap_err(),
            "scoringStrategy.resources[0].weight: Invalid value: -1: resource weight of memory not in valid range (0, 100]"
        );
        let p = |utilization, score| UtilizationShapePoint { utilization, score };
        let e = validate_function_shape(&[p(30, 5), p(20, 11)], "scoringStrategy.shape");
        assert_eq!(
            aggregate(&e).unwrap_err(),
            "[scoringStrategy.shape[1].utilization: Invalid value: 20: values must be sorted in increasing order, \
             scoringStrategy.shape[1].score: Invalid value: 11: not in valid range [0, 10]]"
        );
        let e = validate_function_shape(&[], "scoringStrategy.shape");
        assert_eq!(
            aggregate(&e).unwrap_err(),
            "scoringStrategy.shape: Required value: at least one point must be specified"
        );
    }
}
