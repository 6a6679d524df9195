//! Conversion of Kubernetes API objects (k8s-openapi types) into the compact internal forms.
//!
//! This is the only place the engine touches the API schema. It applies the API server's
//! defaulting that scheduling depends on (container requests default to limits; node
//! allocatable defaults to capacity) and computes effective pod requests as kube's
//! `resourcehelper.PodRequests` does (sum of containers, init containers as a running maximum
//! with restartable sidecars accumulated, plus overhead).

use super::affinity::{
    NodeInclusionPolicy, PodAffinityTerm, TopologySpreadConstraint, UnsatisfiableConstraintAction,
    WeightedPodAffinityTerm,
};
use super::intern::Sym;
use super::labels::{LabelSelector, Labels, NodeSelector, NodeSelectorTerm, Operator, Requirement};
use super::node::{Node, Taint};
use super::pod::{
    ClaimSource, ClaimStatus, HostPort, Pod, PodKey, PodResize, PodResourceClaim, PodSpecInfo,
    ResizePending, TaintEffect, Toleration, WeightedTerm,
};
use super::quantity::Quantity;
use super::resource::{DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST, Resource};
use super::resource_names::is_scalar_resource_name;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as KQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A field that could not be converted, with its API field path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: Invalid value: {value:?}: {detail}")]
pub struct ConvertError {
    pub field: String,
    pub value: String,
    pub detail: String,
}

pub(crate) fn invalid(field: String, value: &str, detail: impl Into<String>) -> ConvertError {
    ConvertError {
        field,
        value: value.to_string(),
        detail: detail.into(),
    }
}

pub(crate) fn parse_quantity(
    field: impl FnOnce() -> String,
    q: &KQuantity,
) -> Result<Quantity, ConvertError> {
    Quantity::parse(&q.0).map_err(|e| invalid(field(), &q.0, e.to_string()))
}

/// Converts a resource list (`requests`, `limits`, `capacity`, ...) into a vector.
/// `pods` is kept only when `with_pods`.
pub(crate) fn resource_list(
    list: &BTreeMap<String, KQuantity>,
    path: &str,
    with_pods: bool,
) -> Result<Resource, ConvertError> {
    let mut r = Resource::default();
    for (name, q) in list {
        let v = parse_quantity(|| format!("{path}[{name}]"), q)?;
        match name.as_str() {
            "cpu" => r.milli_cpu = v.milli_value(),
            "memory" => r.memory = v.value(),
            "ephemeral-storage" => r.ephemeral_storage = v.value(),
            "pods" if with_pods => r.allowed_pod_number = v.value(),
            "pods" => {}
            n if is_scalar_resource_name(n) => r.set_scalar(Sym::new(n), v.value()),
            _ => {}
        }
    }
    Ok(r)
}

/// A container's requests after API defaulting (requests default to limits per resource).
fn container_requests(c: &core::Container, path: &str) -> Result<Resource, ConvertError> {
    let Some(res) = &c.resources else {
        return Ok(Resource::default());
    };
    let mut merged: BTreeMap<String, KQuantity> = res.requests.clone().unwrap_or_default();
    if let Some(limits) = &res.limits {
        for (k, v) in limits {
            merged.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    resource_list(&merged, &format!("{path}.resources.requests"), false)
}

fn with_non_zero(mut r: Resource, c: &core::Container) -> Resource {
    let has = |name: &str| {
        c.resources.as_ref().is_some_and(|res| {
            res.requests.as_ref().is_some_and(|m| m.contains_key(name))
                || res.limits.as_ref().is_some_and(|m| m.contains_key(name))
        })
    };
    if !has("cpu") {
        r.milli_cpu = DEFAULT_MILLI_CPU_REQUEST;
    }
    if !has("memory") {
        r.memory = DEFAULT_MEMORY_REQUEST;
    }
    r
}

/// Effective pod requests, as kube's `PodRequests`; returns `(requests, non_zero_requests)`.
pub(crate) fn pod_requests(spec: &core::PodSpec) -> Result<(Resource, Resource), ConvertError> {
    let (mut reqs, mut nz) = aggregate_containers(spec, &|c, path| container_requests(c, path))?;
    apply_pod_level_requests(spec, &mut reqs, &mut nz)?;
    if let Some(overhead) = &spec.overhead {
        let o = resource_list(overhead, "spec.overhead", false)?;
        reqs.add(&o);
        nz.add(&o);
    }
    Ok((reqs, nz))
}

/// A container's resource list as `get` picks it (the spec's requests, or a status field),
/// aggregated over the pod as kube's `aggregateContainerResourcesByFn`: containers and
/// restartable init containers add up, the largest init-container step is a floor. Returns
/// `(requests, non_zero_requests)`.
fn aggregate_containers(
    spec: &core::PodSpec,
    get: &dyn Fn(&core::Container, &str) -> Result<Resource, ConvertError>,
) -> Result<(Resource, Resource), ConvertError> {
    let mut reqs = Resource::default();
    let mut nz = Resource::default();
    for (i, c) in spec.containers.iter().enumerate() {
        let r = get(c, &format!("spec.containers[{i}]"))?;
        nz.add(&with_non_zero(r.clone(), c));
        reqs.add(&r);
    }
    let mut sidecars = Resource::default();
    let mut sidecars_nz = Resource::default();
    let mut max_init = Resource::default();
    let mut max_init_nz = Resource::default();
    for (i, c) in spec.init_containers.iter().flatten().enumerate() {
        let r = get(c, &format!("spec.initContainers[{i}]"))?;
        let r_nz = with_non_zero(r.clone(), c);
        if c.restart_policy.as_deref() == Some("Always") {
            // Restartable (sidecar) init containers run alongside everything after them.
            reqs.add(&r);
            nz.add(&r_nz);
            sidecars.add(&r);
            sidecars_nz.add(&r_nz);
            let mut s = sidecars.clone();
            let mut s_nz = sidecars_nz.clone();
            s.set_max(&Resource::default());
            s_nz.set_max(&Resource::default());
            max_init.set_max(&s);
            max_init_nz.set_max(&s_nz);
        } else {
            let mut at = r;
            at.add(&sidecars);
            max_init.set_max(&at);
            let mut at_nz = r_nz;
            at_nz.add(&sidecars_nz);
            max_init_nz.set_max(&at_nz);
        }
    }
    reqs.set_max(&max_init);
    nz.set_max(&max_init_nz);
    Ok((reqs, nz))
}

/// The pod's in-place resize state from its status (kube's `PodRequests` with
/// `UseStatusResources`, on since `InPlacePodVerticalScaling` went GA): `None` when the
/// status says nothing about resources or resizes (no container status carries
/// `allocatedResources` or `resources`, no `PodResizePending` condition), which is every pod
/// the harness creates; then the spec's requests are the pod's requests and nothing is
/// allocated. Otherwise the requests the scheduler counts for the pod on its node:
///
/// - per container, *allocated* = `status.allocatedResources`, else the spec's requests;
///   *actuated* = `status.resources.requests`, else allocated (kube's
///   `containerAllocatedRequests` / `containerActuatedRequests`);
/// - a pending resize marked `Infeasible`: `max(actuated, allocated)` and a container without
///   status counts nothing (the kubelet will never grant the new spec);
/// - otherwise `max(spec, actuated, allocated)` element-wise: while a resize is in progress
///   or deferred the larger of what the pod asked for and what it holds.
///
/// Overhead is added as for the spec. (kube's pod-level status fields,
/// `InPlacePodLevelResourcesVerticalScaling`, are not modelled: no pod-level resources here.)
pub fn pod_resize_status(pod: &core::Pod) -> Result<Option<PodResize>, ConvertError> {
    let (Some(spec), Some(status)) = (&pod.spec, &pod.status) else {
        return Ok(None);
    };
    let pending = status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == "PodResizePending")
        .map(|c| match c.reason.as_deref() {
            Some("Infeasible") => ResizePending::Infeasible,
            Some("Deferred") => ResizePending::Deferred,
            _ => ResizePending::Other,
        });
    let statuses = || {
        status
            .container_statuses
            .iter()
            .flatten()
            .chain(status.init_container_statuses.iter().flatten())
    };
    let has_resources =
        statuses().any(|cs| cs.allocated_resources.is_some() || cs.resources.is_some());
    if pending.is_none() && !has_resources {
        return Ok(None);
    }
    let infeasible = pending == Some(ResizePending::Infeasible);
    let find = |name: &str| statuses().find(|cs| cs.name == name);
    let allocated = |c: &core::Container, path: &str| -> Result<Resource, ConvertError> {
        match find(&c.name).and_then(|cs| cs.allocated_resources.as_ref()) {
            Some(a) => resource_list(a, &format!("{path}.status.allocatedResources"), false),
            None if infeasible => Ok(Resource::default()),
            None => container_requests(c, path),
        }
    };
    let actuated = |c: &core::Container, path: &str| -> Result<Resource, ConvertError> {
        let cs = find(&c.name);
        match cs.and_then(|cs| cs.resources.as_ref()?.requests.as_ref()) {
            Some(r) => resource_list(r, &format!("{path}.status.resources.requests"), false),
            None => allocated(c, path),
        }
    };
    let (mut reqs, mut nz) = aggregate_containers(spec, &allocated)?;
    let (act, act_nz) = aggregate_containers(spec, &actuated)?;
    reqs.set_max(&act);
    nz.set_max(&act_nz);
    if !infeasible {
        let (sp, sp_nz) = aggregate_containers(spec, &|c, path| container_requests(c, path))?;
        reqs.set_max(&sp);
        nz.set_max(&sp_nz);
    }
    // Pod-level requests replace the containers' (kube's PodRequests applies them after the
    // containers' status-aware sum; pod-level status resources are not modelled).
    apply_pod_level_requests(spec, &mut reqs, &mut nz)?;
    if let Some(overhead) = &spec.overhead {
        let o = resource_list(overhead, "spec.overhead", false)?;
        reqs.add(&o);
        nz.add(&o);
    }
    Ok(Some(PodResize {
        pending,
        requests: reqs,
        non_zero_requests: nz,
    }))
}

/// Pod-level resources (`spec.resources`, the `PodLevelResources` gate, on in kube v1.37):
/// the pod-level request of each supported resource (cpu, memory, hugepages-*) replaces the
/// containers' sum, as kube's `PodRequests` does; a pod-level limit without a request is the
/// request unless the containers request that cpu or memory (API defaulting). For the non-zero requests of scoring, kube
/// defaults cpu and memory (100m, 200Mi per container) only when neither the pod nor any
/// container requests them (`getNonMissingContainerRequests`).
fn apply_pod_level_requests(
    spec: &core::PodSpec,
    reqs: &mut Resource,
    nz: &mut Resource,
) -> Result<(), ConvertError> {
    let supported = |n: &str| n == "cpu" || n == "memory" || n.starts_with("hugepages-");
    let Some(res) = &spec.resources else {
        return Ok(());
    };
    let containers = spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten());
    let declared: Vec<&str> = containers
        .filter_map(|c| c.resources.as_ref())
        .flat_map(|r| r.requests.iter().flatten().chain(r.limits.iter().flatten()))
        .map(|(k, _)| k.as_str())
        .collect();
    let mut merged: BTreeMap<String, KQuantity> = res.requests.clone().unwrap_or_default();
    // API defaulting (`defaultPodRequests`), only with pod-level limits: a missing cpu or
    // memory request is the containers' sum when they request it (the sum stands), else the
    // pod-level limit.
    for (k, v) in res.limits.iter().flatten() {
        let overcommittable = k == "cpu" || k == "memory";
        if !(overcommittable && declared.contains(&k.as_str())) {
            merged.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    merged.retain(|k, _| supported(k));
    if merged.is_empty() {
        return Ok(());
    }
    let pod_level = resource_list(&merged, "spec.resources.requests", false)?;
    for name in merged.keys() {
        match name.as_str() {
            "cpu" => reqs.milli_cpu = pod_level.milli_cpu,
            "memory" => reqs.memory = pod_level.memory,
            n => {
                let n = Sym::new(n);
                reqs.set_scalar(n, pod_level.scalar(n));
                nz.set_scalar(n, pod_level.scalar(n));
            }
        }
    }
    // cpu and memory requested at either level: no default, the effective request counts.
    if merged.contains_key("cpu") || declared.contains(&"cpu") {
        nz.milli_cpu = reqs.milli_cpu;
    }
    if merged.contains_key("memory") || declared.contains(&"memory") {
        nz.memory = reqs.memory;
    }
    Ok(())
}

fn requirement(
    key: &str,
    op: &str,
    values: &[String],
    path: &str,
    allow_numeric: bool,
) -> Result<Requirement, ConvertError> {
    let op = Operator::parse(op)
        .filter(|o| allow_numeric || !matches!(o, Operator::Gt | Operator::Lt))
        .ok_or_else(|| {
            invalid(
                format!("{path}.operator"),
                op,
                "not a valid selector operator",
            )
        })?;
    let mut int_value = 0;
    if matches!(op, Operator::Gt | Operator::Lt) {
        let v = values.first().map(String::as_str).unwrap_or("");
        int_value = v.parse::<i64>().map_err(|_| {
            invalid(
                format!("{path}.values[0]"),
                v,
                "must be an integer for Gt and Lt",
            )
        })?;
    }
    Ok(Requirement {
        key: Sym::new(key),
        op,
        values: values.iter().map(|v| Sym::new(v)).collect(),
        int_value,
    })
}

fn node_selector_term(
    t: &core::NodeSelectorTerm,
    path: &str,
) -> Result<NodeSelectorTerm, ConvertError> {
    let mut out = NodeSelectorTerm::default();
    for (i, e) in t.match_expressions.iter().flatten().enumerate() {
        out.match_expressions.push(requirement(
            &e.key,
            &e.operator,
            e.values.as_deref().unwrap_or(&[]),
            &format!("{path}.matchExpressions[{i}]"),
            true,
        )?);
    }
    for (i, e) in t.match_fields.iter().flatten().enumerate() {
        let p = format!("{path}.matchFields[{i}]");
        if e.key != "metadata.name" {
            return Err(invalid(
                format!("{p}.key"),
                &e.key,
                "not a valid field selector key",
            ));
        }
        out.match_fields.push(requirement(
            &e.key,
            &e.operator,
            e.values.as_deref().unwrap_or(&[]),
            &p,
            false,
        )?);
    }
    Ok(out)
}

/// Converts a `metav1.LabelSelector`.
pub fn label_selector(s: &meta::LabelSelector, path: &str) -> Result<LabelSelector, ConvertError> {
    let mut requirements = Vec::new();
    for (k, v) in s.match_labels.iter().flatten() {
        requirements.push(Requirement {
            key: Sym::new(k),
            op: Operator::In,
            values: vec![Sym::new(v)],
            int_value: 0,
        });
    }
    for (i, e) in s.match_expressions.iter().flatten().enumerate() {
        requirements.push(requirement(
            &e.key,
            &e.operator,
            e.values.as_deref().unwrap_or(&[]),
            &format!("{path}.matchExpressions[{i}]"),
            false,
        )?);
    }
    Ok(LabelSelector { requirements })
}

/// Converts a `v1.NodeSelector` found at `path` (a ResourceSlice's, a claim allocation's).
pub(crate) fn node_selector(
    sel: &core::NodeSelector,
    path: &str,
) -> Result<NodeSelector, ConvertError> {
    let mut out = NodeSelector::default();
    for (i, t) in sel.node_selector_terms.iter().enumerate() {
        out.terms.push(node_selector_term(
            t,
            &format!("{path}.nodeSelectorTerms[{i}]"),
        )?);
    }
    Ok(out)
}

/// Converts a `v1.NodeAffinity` found at `path` (a pod's, or NodeAffinity's `addedAffinity`):
/// the required node selector and the preferred terms.
pub fn node_affinity(
    na: &core::NodeAffinity,
    path: &str,
) -> Result<(Option<NodeSelector>, Vec<WeightedTerm>), ConvertError> {
    let mut required = None;
    if let Some(req) = &na.required_during_scheduling_ignored_during_execution {
        let mut sel = NodeSelector::default();
        for (i, t) in req.node_selector_terms.iter().enumerate() {
            sel.terms.push(node_selector_term(
                t,
                &format!(
                    "{path}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[{i}]"
                ),
            )?);
        }
        required = Some(sel);
    }
    let mut preferred = Vec::new();
    for (i, p) in na
        .preferred_during_scheduling_ignored_during_execution
        .iter()
        .flatten()
        .enumerate()
    {
        preferred.push(WeightedTerm {
            weight: p.weight,
            term: node_selector_term(
                &p.preference,
                &format!("{path}.preferredDuringSchedulingIgnoredDuringExecution[{i}].preference"),
            )?,
        });
    }
    Ok((required, preferred))
}

/// kube's `normalizedImageName` (ImageLocality): an image whose last `:` does not come after
/// its last `/` has no tag (nor digest), and `:latest` is appended.
pub(crate) fn normalized_image_name(name: &str) -> Cow<'_, str> {
    let colon = name.rfind(':').map_or(-1, |i| i as i64);
    let slash = name.rfind('/').map_or(-1, |i| i as i64);
    if colon <= slash {
        Cow::Owned(format!("{name}:latest"))
    } else {
        Cow::Borrowed(name)
    }
}

fn sym_list(v: Option<&[String]>) -> Vec<Sym> {
    v.unwrap_or(&[]).iter().map(|s| Sym::new(s)).collect()
}

fn affinity_term(t: &core::PodAffinityTerm, path: &str) -> Result<PodAffinityTerm, ConvertError> {
    if t.topology_key.is_empty() {
        return Err(invalid(
            format!("{path}.topologyKey"),
            "",
            "can not be empty",
        ));
    }
    let selector = t
        .label_selector
        .as_ref()
        .map(|s| label_selector(s, &format!("{path}.labelSelector")))
        .transpose()?;
    let namespace_selector = t
        .namespace_selector
        .as_ref()
        .map(|s| label_selector(s, &format!("{path}.namespaceSelector")))
        .transpose()?;
    Ok(PodAffinityTerm {
        label_selector: selector,
        namespaces: sym_list(t.namespaces.as_deref()),
        namespace_selector,
        topology_key: Sym::new(&t.topology_key),
        match_label_keys: sym_list(t.match_label_keys.as_deref()),
        mismatch_label_keys: sym_list(t.mismatch_label_keys.as_deref()),
    })
}

fn affinity_terms(
    v: Option<&[core::PodAffinityTerm]>,
    path: &str,
) -> Result<Vec<PodAffinityTerm>, ConvertError> {
    v.unwrap_or(&[])
        .iter()
        .enumerate()
        .map(|(i, t)| affinity_term(t, &format!("{path}[{i}]")))
        .collect()
}

fn weighted_affinity_terms(
    v: Option<&[core::WeightedPodAffinityTerm]>,
    path: &str,
) -> Result<Vec<WeightedPodAffinityTerm>, ConvertError> {
    v.unwrap_or(&[])
        .iter()
        .enumerate()
        .map(|(i, w)| {
            if !(1..=100).contains(&w.weight) {
                return Err(invalid(
                    format!("{path}[{i}].weight"),
                    &w.weight.to_string(),
                    "must be in the range 1-100",
                ));
            }
            Ok(WeightedPodAffinityTerm {
                weight: w.weight,
                term: affinity_term(
                    &w.pod_affinity_term,
                    &format!("{path}[{i}].podAffinityTerm"),
                )?,
            })
        })
        .collect()
}

fn inclusion_policy(
    v: Option<&str>,
    default: NodeInclusionPolicy,
    path: String,
) -> Result<NodeInclusionPolicy, ConvertError> {
    match v {
        None | Some("") => Ok(default),
        Some("Honor") => Ok(NodeInclusionPolicy::Honor),
        Some("Ignore") => Ok(NodeInclusionPolicy::Ignore),
        Some(o) => Err(invalid(path, o, "supported values: \"Honor\", \"Ignore\"")),
    }
}

/// A topology spread constraint, with the API server's validation and defaults.
fn spread_constraint(
    c: &core::TopologySpreadConstraint,
    path: &str,
) -> Result<TopologySpreadConstraint, ConvertError> {
    if c.max_skew <= 0 {
        return Err(invalid(
            format!("{path}.maxSkew"),
            &c.max_skew.to_string(),
            "must be greater than zero",
        ));
    }
    if c.topology_key.is_empty() {
        return Err(invalid(
            format!("{path}.topologyKey"),
            "",
            "can not be empty",
        ));
    }
    let when_unsatisfiable = match c.when_unsatisfiable.as_str() {
        "DoNotSchedule" => UnsatisfiableConstraintAction::DoNotSchedule,
        "ScheduleAnyway" => UnsatisfiableConstraintAction::ScheduleAnyway,
        o => {
            return Err(invalid(
                format!("{path}.whenUnsatisfiable"),
                o,
                "supported values: \"DoNotSchedule\", \"ScheduleAnyway\"",
            ));
        }
    };
    if let Some(m) = c.min_domains {
        if m <= 0 {
            return Err(invalid(
                format!("{path}.minDomains"),
                &m.to_string(),
                "must be greater than zero",
            ));
        }
        if when_unsatisfiable != UnsatisfiableConstraintAction::DoNotSchedule {
            return Err(invalid(
                format!("{path}.minDomains"),
                &m.to_string(),
                "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
            ));
        }
    }
    let selector = c
        .label_selector
        .as_ref()
        .map(|s| label_selector(s, &format!("{path}.labelSelector")))
        .transpose()?;
    Ok(TopologySpreadConstraint {
        max_skew: c.max_skew,
        topology_key: Sym::new(&c.topology_key),
        when_unsatisfiable,
        label_selector: selector,
        min_domains: c.min_domains,
        node_affinity_policy: inclusion_policy(
            c.node_affinity_policy.as_deref(),
            NodeInclusionPolicy::Honor,
            format!("{path}.nodeAffinityPolicy"),
        )?,
        node_taints_policy: inclusion_policy(
            c.node_taints_policy.as_deref(),
            NodeInclusionPolicy::Ignore,
            format!("{path}.nodeTaintsPolicy"),
        )?,
        match_label_keys: sym_list(c.match_label_keys.as_deref()),
    })
}

/// Interned labels of an object's metadata.
pub fn labels_of(m: &Option<BTreeMap<String, String>>) -> Labels {
    Labels::from_pairs(m.iter().flatten().map(|(k, v)| (k.as_str(), v.as_str())))
}

/// Converts the scheduling-relevant part of a pod spec.
pub fn pod_spec_info(spec: &core::PodSpec) -> Result<PodSpecInfo, ConvertError> {
    let (requests, non_zero_requests) = pod_requests(spec)?;
    let mut info = PodSpecInfo {
        priority: spec.priority.unwrap_or(0),
        preempt_never: spec.preemption_policy.as_deref() == Some("Never"),
        scheduler_name: Sym::new(
            spec.scheduler_name
                .as_deref()
                .unwrap_or("default-scheduler"),
        ),
        node_name: Sym::new(spec.node_name.as_deref().unwrap_or("")),
        scheduling_gates: spec
            .scheduling_gates
            .iter()
            .flatten()
            .map(|g| Arc::from(g.name.as_str()))
            .collect(),
        scheduling_group: spec
            .scheduling_group
            .as_ref()
            .and_then(|g| g.pod_group_name.as_deref())
            .map(Arc::from),
        requests,
        non_zero_requests,
        node_selector: labels_of(&spec.node_selector),
        required_node_features: super::node_features::infer_for_scheduling(spec),
        extended_resource_containers: super::extended_requests::extended_resource_containers(spec),
        ..Default::default()
    };
    if let Some(aff) = &spec.affinity {
        set_affinity(&mut info, aff)?;
    }
    info.tolerations = tolerations(spec)?;
    if spec
        .tolerations
        .iter()
        .flatten()
        .any(|t| t.toleration_seconds.is_some())
    {
        info.toleration_seconds = spec
            .tolerations
            .iter()
            .flatten()
            .map(|t| t.toleration_seconds)
            .collect();
    }
    info.volume_sources = volume_sources(spec);
    info.volumes = (spec.volumes.iter().flatten())
        .map(super::volume::pod_volume)
        .collect();
    let all_containers = spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten());
    for c in all_containers {
        for p in c.ports.iter().flatten() {
            if let Some(hp) = p.host_port.filter(|&hp| hp > 0) {
                info.host_ports.push(HostPort {
                    ip: Sym::new(p.host_ip.as_deref().unwrap_or("0.0.0.0")),
                    protocol: Sym::new(p.protocol.as_deref().unwrap_or("TCP")),
                    port: hp,
                });
            }
        }
    }
    for (i, c) in spec
        .topology_spread_constraints
        .iter()
        .flatten()
        .enumerate()
    {
        info.topology_spread_constraints.push(spread_constraint(
            c,
            &format!("spec.topologySpreadConstraints[{i}]"),
        )?);
    }
    // ImageLocality: one entry per init container and container (kube scales by their count).
    info.images = spec
        .init_containers
        .iter()
        .flatten()
        .chain(&spec.containers)
        .map(|c| Sym::new(&normalized_image_name(c.image.as_deref().unwrap_or(""))))
        .collect();
    info.resource_claims = spec
        .resource_claims
        .iter()
        .flatten()
        .map(|c| {
            pod_claim(
                &c.name,
                c.resource_claim_name.as_deref(),
                c.resource_claim_template_name.as_deref(),
            )
        })
        .collect();
    Ok(info)
}

/// A claim entry of a pod's or a PodGroup's `spec.resourceClaims`.
fn pod_claim(name: &str, claim: Option<&str>, template: Option<&str>) -> PodResourceClaim {
    PodResourceClaim {
        name: Arc::from(name),
        source: match (claim, template) {
            (Some(n), _) => ClaimSource::Claim(Arc::from(n)),
            (None, Some(t)) => ClaimSource::Template(Arc::from(t)),
            (None, None) => ClaimSource::Unsupported,
        },
    }
}

/// `status.resourceClaimStatuses`, `None` when there are none.
fn resource_claim_statuses(pod: &core::Pod) -> Option<Arc<[ClaimStatus]>> {
    let v = pod.status.as_ref()?.resource_claim_statuses.as_ref()?;
    (!v.is_empty()).then(|| {
        v.iter()
            .map(|s| {
                (
                    Arc::from(s.name.as_str()),
                    s.resource_claim_name.as_deref().map(Arc::from),
                )
            })
            .collect()
    })
}

/// kube's `VolumesSigner`: each volume source other than ConfigMap and Secret as JSON without
/// the volume's name (serde_json's maps are ordered, so the text is canonical), sorted.
fn volume_sources(spec: &core::PodSpec) -> Vec<Arc<str>> {
    let mut out: Vec<Arc<str>> = spec
        .volumes
        .iter()
        .flatten()
        .filter(|v| v.config_map.is_none() && v.secret.is_none())
        .filter_map(|v| {
            let mut json = serde_json::to_value(v).ok()?;
            json.as_object_mut()?.remove("name");
            Some(Arc::from(json.to_string()))
        })
        .collect();
    out.sort();
    out
}

/// `spec.affinity`: node affinity, pod affinity and pod anti-affinity terms into `info`.
fn set_affinity(info: &mut PodSpecInfo, aff: &core::Affinity) -> Result<(), ConvertError> {
    if let Some(na) = &aff.node_affinity {
        let (required, preferred) = node_affinity(na, "spec.affinity.nodeAffinity")?;
        info.required_node_affinity = required;
        info.preferred_node_affinity = preferred;
    }
    info.pod_affinity_present = aff.pod_affinity.is_some() || aff.pod_anti_affinity.is_some();
    if let Some(pa) = &aff.pod_affinity {
        let path = "spec.affinity.podAffinity";
        info.pod_affinity.required_affinity = affinity_terms(
            pa.required_during_scheduling_ignored_during_execution
                .as_deref(),
            &format!("{path}.requiredDuringSchedulingIgnoredDuringExecution"),
        )?;
        info.pod_affinity.preferred_affinity = weighted_affinity_terms(
            pa.preferred_during_scheduling_ignored_during_execution
                .as_deref(),
            &format!("{path}.preferredDuringSchedulingIgnoredDuringExecution"),
        )?;
    }
    if let Some(pa) = &aff.pod_anti_affinity {
        let path = "spec.affinity.podAntiAffinity";
        info.pod_affinity.required_anti_affinity = affinity_terms(
            pa.required_during_scheduling_ignored_during_execution
                .as_deref(),
            &format!("{path}.requiredDuringSchedulingIgnoredDuringExecution"),
        )?;
        info.pod_affinity.preferred_anti_affinity = weighted_affinity_terms(
            pa.preferred_during_scheduling_ignored_during_execution
                .as_deref(),
            &format!("{path}.preferredDuringSchedulingIgnoredDuringExecution"),
        )?;
    }
    Ok(())
}

/// `spec.tolerations`, with the API server's checks of effect and operator.
fn tolerations(spec: &core::PodSpec) -> Result<Vec<Toleration>, ConvertError> {
    let mut out = Vec::new();
    for (i, t) in spec.tolerations.iter().flatten().enumerate() {
        let effect = match t.effect.as_deref() {
            None | Some("") => None,
            Some(e) => Some(TaintEffect::parse(e).ok_or_else(|| {
                invalid(
                    format!("spec.tolerations[{i}].effect"),
                    e,
                    "unsupported taint effect",
                )
            })?),
        };
        let exists = match t.operator.as_deref() {
            Some("Exists") => true,
            None | Some("") | Some("Equal") => false,
            Some(o) => {
                return Err(invalid(
                    format!("spec.tolerations[{i}].operator"),
                    o,
                    "supported values: \"Equal\", \"Exists\"",
                ));
            }
        };
        out.push(Toleration {
            key: Sym::new(t.key.as_deref().unwrap_or("")),
            exists,
            value: Sym::new(t.value.as_deref().unwrap_or("")),
            effect,
        });
    }
    Ok(out)
}

/// The identity of a pod stamped from a shared template object.
#[derive(Clone, Debug)]
pub struct PodParts<'a> {
    pub namespace: &'a str,
    pub name: &'a str,
    pub uid: &'a str,
    pub resource_version: u64,
    pub node_name: Option<Sym>,
    /// `status.nominatedNodeName`.
    pub nominated_node_name: Option<Sym>,
}

/// Builds a pod from its identity and shared parts (labels and spec from its template), so
/// that stamping many pods from one template copies nothing but names.
pub fn pod_from_parts(parts: PodParts<'_>, labels: Arc<Labels>, spec: Arc<PodSpecInfo>) -> Pod {
    Pod {
        key: PodKey::new(parts.namespace, parts.name),
        namespace: Sym::new(parts.namespace),
        name: Arc::from(parts.name),
        uid: Arc::from(parts.uid),
        labels,
        spec,
        node_name: parts.node_name,
        nominated_node_name: parts.nominated_node_name,
        deletion_timestamp: false,
        resource_version: parts.resource_version,
        resize: None,
        resource_claim_statuses: None,
    }
}

/// Converts a pod whose spec was already converted (`spec` may be shared between pods).
pub fn pod_with_spec(pod: &core::Pod, spec: Arc<PodSpecInfo>) -> Pod {
    let m = &pod.metadata;
    let namespace = m.namespace.as_deref().unwrap_or("default");
    let name = m.name.as_deref().unwrap_or("");
    let node = pod
        .spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .filter(|n| !n.is_empty())
        .map(Sym::new);
    Pod {
        key: PodKey::new(namespace, name),
        namespace: Sym::new(namespace),
        name: Arc::from(name),
        uid: Arc::from(m.uid.as_deref().unwrap_or("")),
        labels: Arc::new(labels_of(&m.labels)),
        spec,
        node_name: node,
        nominated_node_name: pod
            .status
            .as_ref()
            .and_then(|s| s.nominated_node_name.as_deref())
            .filter(|n| !n.is_empty())
            .map(Sym::new),
        deletion_timestamp: m.deletion_timestamp.is_some(),
        resource_version: m
            .resource_version
            .as_deref()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0),
        // A status that cannot be read counts as none (the API server validated it).
        resize: pod_resize_status(pod).ok().flatten().map(Arc::new),
        resource_claim_statuses: resource_claim_statuses(pod),
    }
}

/// Converts a pod.
pub fn pod(pod: &core::Pod) -> Result<Pod, ConvertError> {
    let spec = match &pod.spec {
        Some(s) => pod_spec_info(s)?,
        None => PodSpecInfo {
            scheduler_name: Sym::new("default-scheduler"),
            ..Default::default()
        },
    };
    Ok(pod_with_spec(pod, Arc::new(spec)))
}

/// `status.images` as kube's cache keys them: every name as reported (not normalized: a pod's
/// `nginx` only matches a node's `nginx:latest`), each name once, with its image's size.
fn node_images(status: Option<&core::NodeStatus>) -> Vec<(Sym, i64)> {
    let mut out: Vec<(Sym, i64)> = Vec::new();
    for img in status.and_then(|s| s.images.as_ref()).into_iter().flatten() {
        let size = img.size_bytes.unwrap_or(0);
        for n in img.names.iter().flatten() {
            let name = Sym::new(n);
            if !out.iter().any(|&(o, _)| o == name) {
                out.push((name, size));
            }
        }
    }
    out
}

/// Converts a node. Allocatable defaults to capacity when the node gives none.
pub fn node(n: &core::Node) -> Result<Node, ConvertError> {
    let status = n.status.as_ref();
    let (list, path) = match (
        status.and_then(|s| s.allocatable.as_ref()),
        status.and_then(|s| s.capacity.as_ref()),
    ) {
        (Some(a), _) => (Some(a), "status.allocatable"),
        (None, Some(c)) => (Some(c), "status.capacity"),
        (None, None) => (None, "status.capacity"),
    };
    let allocatable = match list {
        Some(l) => resource_list(l, path, true)?,
        None => Resource::default(),
    };
    let spec = n.spec.as_ref();
    let declared: &[String] = status
        .and_then(|s| s.declared_features.as_deref())
        .unwrap_or(&[]);
    let mut taints = Vec::new();
    for (i, t) in spec
        .and_then(|s| s.taints.as_ref())
        .into_iter()
        .flatten()
        .enumerate()
    {
        let effect = TaintEffect::parse(&t.effect).ok_or_else(|| {
            invalid(
                format!("spec.taints[{i}].effect"),
                &t.effect,
                "unsupported taint effect",
            )
        })?;
        taints.push(Taint {
            key: Sym::new(&t.key),
            value: Sym::new(t.value.as_deref().unwrap_or("")),
            effect,
        });
    }
    Ok(Node {
        name: Sym::new(n.metadata.name.as_deref().unwrap_or("")),
        labels: Arc::new(labels_of(&n.metadata.labels)),
        taints: taints.into(),
        unschedulable: spec.and_then(|s| s.unschedulable).unwrap_or(false),
        allocatable,
        images: node_images(status),
        declared_features: declared.iter().map(|f| Arc::from(f.as_str())).collect(),
        declared_feature_set: super::node_features::try_map(declared),
        resource_version: n
            .metadata
            .resource_version
            .as_deref()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0),
    })
}

/// Converts a `policy/v1` PodDisruptionBudget (what DefaultPreemption reads of it).
pub fn pod_disruption_budget(
    pdb: &k8s_openapi::api::policy::v1::PodDisruptionBudget,
) -> Result<super::pdb::PodDisruptionBudget, ConvertError> {
    let selector = pdb
        .spec
        .as_ref()
        .and_then(|s| s.selector.as_ref())
        .map(|s| label_selector(s, "spec.selector"))
        .transpose()?;
    let status = pdb.status.as_ref();
    Ok(super::pdb::PodDisruptionBudget {
        namespace: Sym::new(pdb.metadata.namespace.as_deref().unwrap_or("default")),
        name: Arc::from(pdb.metadata.name.as_deref().unwrap_or("")),
        selector,
        disruptions_allowed: status.map_or(0, |s| s.disruptions_allowed.unwrap_or(0)),
        disrupted_pods: status
            .and_then(|s| s.disrupted_pods.as_ref())
            .map(|m| m.keys().map(|k| Arc::from(k.as_str())).collect())
            .unwrap_or_default(),
    })
}

/// A [`GroupSpec`] read from a PodGroup or a CompositePodGroup: the two versions' types
/// differ, their field names do not (but for the gang's quorum, read by `$min`).
macro_rules! group_spec {
    ($obj:expr, $composite:expr, $min:expr) => {{
        let spec = &$obj.spec;
        GroupSpec {
            composite: $composite,
            min_count: spec.scheduling_policy.gang.as_ref().map($min),
            topology_keys: spec
                .scheduling_constraints
                .as_ref()
                .and_then(|c| c.topology.as_ref())
                .into_iter()
                .flatten()
                .map(|t| t.key.as_str())
                .collect(),
            priority: spec.priority,
            priority_class_name: spec.priority_class_name.as_deref(),
            preemption_policy: spec.preemption_policy.as_deref(),
            disrupt_all: spec
                .disruption_mode
                .as_ref()
                .is_some_and(|d| d.all.is_some()),
            parent: spec.parent_composite_pod_group_name.as_deref(),
            conditions: $obj.status.as_ref().and_then(|s| s.conditions.as_deref()),
        }
    }};
}

/// A `scheduling.k8s.io/v1beta1` PodGroup in the scheduler's form. The API server's rules
/// (one of `basic` and `gang`, `minCount` at least 1) are the caller's to check first; this
/// reads what the object says.
pub fn pod_group(
    pg: &k8s_openapi::api::scheduling::v1beta1::PodGroup,
) -> Result<super::PodGroup, ConvertError> {
    let mut g = group_of(&pg.metadata, group_spec!(pg, false, |g| g.min_count));
    g.resource_claims = pg
        .spec
        .resource_claims
        .iter()
        .flatten()
        .map(|c| {
            pod_claim(
                &c.name,
                c.resource_claim_name.as_deref(),
                c.resource_claim_template_name.as_deref(),
            )
        })
        .collect();
    g.resource_claim_statuses = pg
        .status
        .as_ref()
        .and_then(|s| s.resource_claim_statuses.as_ref())
        .into_iter()
        .flatten()
        .map(|s| {
            (
                Arc::from(s.name.as_str()),
                s.resource_claim_name.as_deref().map(Arc::from),
            )
        })
        .collect();
    Ok(g)
}

/// A `scheduling.k8s.io/v1alpha3` CompositePodGroup (master's, behind the alpha
/// CompositePodGroup gate) in the scheduler's form: `composite` set, and a gang's
/// `minGroupCount` (child groups) as its quorum; the other fields as a PodGroup's.
pub fn composite_pod_group(
    cpg: &k8s_openapi::api::scheduling::v1alpha3::CompositePodGroup,
) -> Result<super::PodGroup, ConvertError> {
    Ok(group_of(
        &cpg.metadata,
        group_spec!(cpg, true, |g| g.min_group_count),
    ))
}

/// What the two group kinds share, read from either version's spec and status.
struct GroupSpec<'a> {
    composite: bool,
    /// A gang's quorum (`minCount`, or a composite's `minGroupCount`); None: `basic`.
    min_count: Option<i32>,
    topology_keys: Vec<&'a str>,
    priority: Option<i32>,
    priority_class_name: Option<&'a str>,
    preemption_policy: Option<&'a str>,
    disrupt_all: bool,
    parent: Option<&'a str>,
    conditions: Option<&'a [meta::Condition]>,
}

fn group_of(m: &meta::ObjectMeta, g: GroupSpec) -> super::PodGroup {
    use super::pod_group::{DisruptionMode, PodGroup, PodGroupKey, PodGroupPolicy};
    PodGroup {
        key: PodGroupKey::new(
            m.namespace.as_deref().unwrap_or("default"),
            m.name.as_deref().unwrap_or(""),
        ),
        uid: Arc::from(m.uid.as_deref().unwrap_or("")),
        composite: g.composite,
        policy: match g.min_count {
            Some(min_count) => PodGroupPolicy::Gang { min_count },
            None => PodGroupPolicy::Basic,
        },
        topology_keys: g.topology_keys.into_iter().map(Sym::new).collect(),
        priority: g.priority.unwrap_or(0),
        priority_class_name: g.priority_class_name.map(Arc::from),
        preempt_never: g.preemption_policy == Some("Never"),
        preemption_policy_set: g.preemption_policy.is_some(),
        disruption_mode: if g.disrupt_all {
            DisruptionMode::All
        } else {
            DisruptionMode::Single
        },
        parent: g.parent.map(Arc::from),
        generation: m.generation.unwrap_or(0),
        created: m.creation_timestamp.as_ref().map_or(0, |t| t.0.as_second()),
        resource_version: m
            .resource_version
            .as_deref()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0),
        scheduled: g.conditions.into_iter().flatten().any(|c| {
            let want = if g.composite {
                "CompositePodGroupInitiallyScheduled"
            } else {
                "PodGroupInitiallyScheduled"
            };
            c.type_ == want && c.status == "True"
        }),
        resource_claims: Vec::new(),
        resource_claim_statuses: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> KQuantity {
        KQuantity(s.to_string())
    }

    fn container(req: &[(&str, &str)], lim: &[(&str, &str)]) -> core::Container {
        let map = |v: &[(&str, &str)]| {
            (!v.is_empty()).then(|| v.iter().map(|(k, x)| (k.to_string(), q(x))).collect())
        };
        core::Container {
            name: "c".into(),
            resources: Some(core::ResourceRequirements {
                requests: map(req),
                limits: map(lim),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn requests_default_to_limits_and_non_zero_defaults_apply() {
        let spec = core::PodSpec {
            containers: vec![
                container(&[("cpu", "100m")], &[("cpu", "200m"), ("memory", "500Mi")]),
                container(&[], &[]),
            ],
            ..Default::default()
        };
        let (r, nz) = pod_requests(&spec).unwrap();
        assert_eq!(r.milli_cpu, 100);
        assert_eq!(r.memory, 500 * 1024 * 1024);
        assert_eq!(nz.milli_cpu, 100 + DEFAULT_MILLI_CPU_REQUEST);
        assert_eq!(nz.memory, 500 * 1024 * 1024 + DEFAULT_MEMORY_REQUEST);
    }

    #[test]
    fn init_containers_take_the_max_and_sidecars_add_up() {
        let mut sidecar = container(&[("cpu", "300m")], &[]);
        sidecar.restart_policy = Some("Always".into());
        let spec = core::PodSpec {
            containers: vec![container(&[("cpu", "500m")], &[])],
            init_containers: Some(vec![
                container(&[("cpu", "2")], &[]),
                sidecar,
                container(&[("cpu", "1")], &[]),
            ]),
            overhead: Some([("cpu".to_string(), q("10m"))].into()),
            ..Default::default()
        };
        let (r, _) = pod_requests(&spec).unwrap();
        // containers 500m + sidecar 300m = 800m; init max(2000, 1000+300) = 2000; + 10m overhead.
        assert_eq!(r.milli_cpu, 2010);
    }

    fn pod_level(req: &[(&str, &str)], lim: &[(&str, &str)]) -> Option<core::ResourceRequirements> {
        let map = |v: &[(&str, &str)]| {
            (!v.is_empty()).then(|| v.iter().map(|(k, x)| (k.to_string(), q(x))).collect())
        };
        Some(core::ResourceRequirements {
            requests: map(req),
            limits: map(lim),
            ..Default::default()
        })
    }

    #[test]
    fn pod_level_requests_replace_the_containers_sum() {
        // provenance: staging/src/k8s.io/component-helpers/resource/helpers_test.go
        // (TestPodLevelResourceRequests) and pkg/scheduler/framework/types_test.go
        // (TestCalculatePodResourcesWithResize, pod-level cases), kubernetes v1.37.2.
        let spec = core::PodSpec {
            resources: pod_level(&[("cpu", "100m"), ("memory", "200Mi")], &[]),
            containers: vec![container(&[], &[])],
            ..Default::default()
        };
        let (r, nz) = pod_requests(&spec).unwrap();
        assert_eq!((r.milli_cpu, r.memory), (100, 200 * 1024 * 1024));
        // Both requested at pod level: no container default for scoring.
        assert_eq!((nz.milli_cpu, nz.memory), (100, 200 * 1024 * 1024));

        // Only memory at pod level, cpu from a container: the pod's cpu is the containers'
        // sum and needs no default; overhead still adds on top.
        let spec = core::PodSpec {
            resources: pod_level(&[("memory", "1Gi")], &[]),
            containers: vec![
                container(&[("cpu", "300m"), ("memory", "100Mi")], &[]),
                container(&[], &[]),
            ],
            overhead: Some([("cpu".to_string(), q("10m"))].into()),
            ..Default::default()
        };
        let (r, nz) = pod_requests(&spec).unwrap();
        assert_eq!((r.milli_cpu, r.memory), (310, 1024 * 1024 * 1024));
        assert_eq!((nz.milli_cpu, nz.memory), (310, 1024 * 1024 * 1024));

        // Pod-level memory only, no cpu anywhere: cpu keeps kube's per-container default.
        let spec = core::PodSpec {
            resources: pod_level(&[("memory", "1Gi")], &[]),
            containers: vec![container(&[], &[])],
            ..Default::default()
        };
        let (r, nz) = pod_requests(&spec).unwrap();
        assert_eq!((r.milli_cpu, nz.milli_cpu), (0, DEFAULT_MILLI_CPU_REQUEST));

        // provenance: pkg/apis/core/v1/defaults.go (defaultPodRequests), kubernetes v1.37.2.
        // With pod-level limits, a missing request defaults to the containers' sum when they
        // request it, else to the limit; resources kube does not support at pod level
        // (ephemeral-storage) leave the containers' sum.
        let spec = core::PodSpec {
            resources: pod_level(
                &[("ephemeral-storage", "1Gi")],
                &[("cpu", "2"), ("memory", "1Gi")],
            ),
            containers: vec![container(
                &[("cpu", "500m"), ("ephemeral-storage", "10Mi")],
                &[],
            )],
            ..Default::default()
        };
        let (r, _) = pod_requests(&spec).unwrap();
        assert_eq!(r.milli_cpu, 500);
        assert_eq!(r.memory, 1024 * 1024 * 1024);
        assert_eq!(r.ephemeral_storage, 10 * 1024 * 1024);
    }

    #[test]
    fn node_allocatable_defaults_to_capacity() {
        let n = core::Node {
            metadata: meta::ObjectMeta {
                name: Some("n1".into()),
                ..Default::default()
            },
            status: Some(core::NodeStatus {
                capacity: Some(
                    [
                        ("cpu".to_string(), q("4")),
                        ("memory".to_string(), q("32Gi")),
                        ("pods".to_string(), q("110")),
                    ]
                    .into(),
                ),
                ..Default::default()
            }),
            ..Default::default()
        };
        let n = node(&n).unwrap();
        assert_eq!(n.allocatable.milli_cpu, 4000);
        assert_eq!(n.allocatable.memory, 32 << 30);
        assert_eq!(n.allocatable.allowed_pod_number, 110);
    }

    #[test]
    fn bad_quantity_names_the_field() {
        let spec = core::PodSpec {
            containers: vec![container(&[("cpu", "lots")], &[])],
            ..Default::default()
        };
        let e = pod_requests(&spec).unwrap_err();
        assert_eq!(e.field, "spec.containers[0].resources.requests[cpu]");
        assert_eq!(e.value, "lots");
    }

    /// A pod whose container `c1` asks for `spec` and, when `status` is given, whose status
    /// reports those as the container's actuated requests (`status.resources.requests`);
    /// `allocated` sets `status.allocatedResources`; `pending` a `PodResizePending` reason.
    fn resized(
        spec: &[(&str, &str)],
        status: Option<&[(&str, &str)]>,
        allocated: Option<&[(&str, &str)]>,
        condition: Option<(&str, &str)>,
    ) -> core::Pod {
        let list = |kv: &[(&str, &str)]| -> BTreeMap<String, KQuantity> {
            kv.iter().map(|(k, v)| (k.to_string(), q(v))).collect()
        };
        let mut c = container(spec, &[]);
        c.name = "c1".into();
        let cs = core::ContainerStatus {
            name: "c1".into(),
            resources: status.map(|r| core::ResourceRequirements {
                requests: Some(list(r)),
                ..Default::default()
            }),
            allocated_resources: allocated.map(list),
            ..Default::default()
        };
        core::Pod {
            spec: Some(core::PodSpec {
                containers: vec![c],
                ..Default::default()
            }),
            status: Some(core::PodStatus {
                phase: Some("Running".into()),
                container_statuses: Some(vec![cs]),
                conditions: condition.map(|(t, r)| {
                    vec![core::PodCondition {
                        type_: t.into(),
                        status: "True".into(),
                        reason: (!r.is_empty()).then(|| r.to_string()),
                        ..Default::default()
                    }]
                }),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn cpu_mem(r: &Resource) -> (i64, i64) {
        (r.milli_cpu, r.memory)
    }

    // provenance: pkg/scheduler/framework/types_test.go (TestCalculatePodResourcesWithResize,
    // the container-level cases; pod-level resources are not modelled).
    #[test]
    fn resize_accounting_follows_kube() {
        const MI: i64 = 1 << 20;
        let (c5, m5) = (&[("cpu", "500m"), ("memory", "500Mi")][..], (500, 500 * MI));
        let c7 = &[("cpu", "700m"), ("memory", "800Mi")][..];
        let at = |pod: &core::Pod| {
            let r = pod_resize_status(pod)
                .unwrap()
                .expect("status says something");
            (cpu_mem(&r.requests), cpu_mem(&r.non_zero_requests))
        };
        // No pending resize: spec and status agree.
        assert_eq!(at(&resized(c5, Some(c5), None, None)), (m5, m5));
        // A resize in progress: max(spec, actuated, allocated).
        let p = resized(c5, Some(c5), None, Some(("PodResizeInProgress", "")));
        assert_eq!(at(&p), (m5, m5));
        // Deferred: the desired (larger) spec counts.
        let p = resized(c7, Some(c5), None, Some(("PodResizePending", "Deferred")));
        assert_eq!(at(&p), ((700, 800 * MI), (700, 800 * MI)));
        assert!(pod(&p).unwrap().is_resize_deferred());
        // Infeasible: only what the pod holds counts.
        let p = resized(c7, Some(c5), None, Some(("PodResizePending", "Infeasible")));
        assert_eq!(at(&p), (m5, m5));
        assert!(pod(&p).unwrap().is_resize_infeasible());
    }

    // provenance: staging/src/k8s.io/component-helpers/resource/helpers_test.go
    // (TestPodResourceRequests, the UseStatusResources cases: allocated larger than spec
    // counts; a scale-down in spec counts the allocated resources until actuated).
    #[test]
    fn allocated_resources_floor_a_scale_down() {
        let p = resized(&[("cpu", "1")], None, Some(&[("cpu", "2")]), None);
        assert_eq!(
            pod_resize_status(&p).unwrap().unwrap().requests.milli_cpu,
            2000
        );
        // Allocated and actuated smaller than the spec: the spec counts.
        let p = resized(
            &[("cpu", "2")],
            Some(&[("cpu", "1")]),
            Some(&[("cpu", "1")]),
            None,
        );
        assert_eq!(
            pod_resize_status(&p).unwrap().unwrap().requests.milli_cpu,
            2000
        );
        // Infeasible without a container status: nothing counts for that container.
        let mut p = resized(
            &[("cpu", "2")],
            None,
            None,
            Some(("PodResizePending", "Infeasible")),
        );
        p.status.as_mut().unwrap().container_statuses = None;
        assert_eq!(
            pod_resize_status(&p).unwrap().unwrap().requests.milli_cpu,
            0
        );
    }

    /// A status without resources or resize conditions (every pod the harness creates)
    /// converts to no resize state: the spec's requests, nothing allocated.
    #[test]
    fn a_status_without_resources_is_no_resize_state() {
        let mut p = resized(&[("cpu", "1")], None, None, None);
        assert!(pod_resize_status(&p).unwrap().is_none());
        p.status = None;
        assert!(pod_resize_status(&p).unwrap().is_none());
        assert!(pod(&p).unwrap().resize.is_none());
    }
}
