//! The compact, immutable internal form of a Pod used by the queue and the plugins.
//!
//! Everything a plugin reads per node is precomputed here once, at the API boundary
//! (see [`super::convert`]): interned labels, resource vectors, parsed selectors and
//! tolerations. The part derived only from `spec` lives in [`PodSpecInfo`] behind an `Arc`, so
//! pods stamped from one template share it.

use super::affinity::{PodAffinity, PodAffinityTerm, TopologySpreadConstraint};
use super::intern::Sym;
use super::labels::{Labels, NodeSelector, NodeSelectorTerm};
use super::resource::Resource;
use std::fmt;
use std::sync::Arc;

/// Identity of a pod in the queue and the cache: `namespace/name`, as kube keys its queue.
///
/// The key carries a hash of its text computed once at creation: every map keyed by pods
/// (activeQ's index, backoffQ, the gated set, the unschedulable pool, the cache) hashes a
/// `u64` instead of rehashing the string, and unequal keys usually differ at the first word.
#[derive(Clone)]
pub struct PodKey {
    hash: u64,
    text: Arc<str>,
}

/// Fixed seeds: the hash is a property of the key, the same in every map and every run. Most
/// maps still mix it with their own random state (the unschedulable pool's use fixed keys:
/// `queue/unschedulable.rs`).
const KEY_HASHER: ahash::RandomState = ahash::RandomState::with_seeds(
    0x243f_6a88_85a3_08d3,
    0x1319_8a2e_0370_7344,
    0xa409_3822_299f_31d0,
    0x082e_fa98_ec4e_6c89,
);

impl PodKey {
    pub fn new(namespace: &str, name: &str) -> PodKey {
        // Not `format!`: its machinery cost more than the rest of a key (three keys a pod).
        let mut s = String::with_capacity(namespace.len() + 1 + name.len());
        s.push_str(namespace);
        s.push('/');
        s.push_str(name);
        let text: Arc<str> = Arc::from(s);
        PodKey {
            hash: KEY_HASHER.hash_one(&*text),
            text,
        }
    }
    pub fn as_str(&self) -> &str {
        &self.text
    }
    /// `(namespace, name)`.
    pub fn split(&self) -> (&str, &str) {
        self.text.split_once('/').unwrap_or(("", &self.text))
    }
}

impl PartialEq for PodKey {
    fn eq(&self, other: &PodKey) -> bool {
        self.hash == other.hash && (Arc::ptr_eq(&self.text, &other.text) || self.text == other.text)
    }
}
impl Eq for PodKey {}
impl std::hash::Hash for PodKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}
impl PartialOrd for PodKey {
    fn partial_cmp(&self, other: &PodKey) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for PodKey {
    fn cmp(&self, other: &PodKey) -> std::cmp::Ordering {
        self.text.cmp(&other.text)
    }
}

impl fmt::Debug for PodKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}
impl fmt::Display for PodKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Taint effects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TaintEffect {
    NoSchedule,
    PreferNoSchedule,
    NoExecute,
}

impl TaintEffect {
    pub fn parse(s: &str) -> Option<TaintEffect> {
        Some(match s {
            "NoSchedule" => TaintEffect::NoSchedule,
            "PreferNoSchedule" => TaintEffect::PreferNoSchedule,
            "NoExecute" => TaintEffect::NoExecute,
            _ => return None,
        })
    }
    pub fn as_str(self) -> &'static str {
        match self {
            TaintEffect::NoSchedule => "NoSchedule",
            TaintEffect::PreferNoSchedule => "PreferNoSchedule",
            TaintEffect::NoExecute => "NoExecute",
        }
    }
}

/// A toleration (`operator` Exists when `exists`, else Equal; `effect` None = all effects;
/// `key` EMPTY with Exists = tolerate everything).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toleration {
    pub key: Sym,
    pub exists: bool,
    pub value: Sym,
    pub effect: Option<TaintEffect>,
}

/// A host port a container asks for (`hostIP` "" means 0.0.0.0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HostPort {
    pub ip: Sym,
    pub protocol: Sym,
    pub port: i32,
}

impl HostPort {
    /// Whether `self` and `other` claim the same host port: same port and protocol, and the
    /// same IP or either side on every address (`0.0.0.0`), as kube's `HostPortInfo`.
    pub fn conflicts(&self, other: &HostPort) -> bool {
        // Interned once: this runs in Filter, per node.
        static ANY: std::sync::LazyLock<Sym> = std::sync::LazyLock::new(|| Sym::new("0.0.0.0"));
        let any = *ANY;
        self.port == other.port
            && self.protocol == other.protocol
            && (self.ip == other.ip || self.ip == any || other.ip == any)
    }
}

/// A preferred node-affinity term.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WeightedTerm {
    pub weight: i32,
    pub term: NodeSelectorTerm,
}

/// Everything the scheduler needs from `spec`, computed once and shared.
#[derive(Clone, Debug, Default)]
pub struct PodSpecInfo {
    pub priority: i32,
    /// `spec.preemptionPolicy: Never`: the pod never preempts others.
    pub preempt_never: bool,
    pub scheduler_name: Sym,
    /// `spec.nodeName` as requested at creation (pods with it set never reach the queue).
    pub node_name: Sym,
    pub scheduling_gates: Vec<Arc<str>>,
    /// `spec.schedulingGroup.podGroupName`: the PodGroup (in the pod's namespace) this pod
    /// belongs to. kube keeps the field only with the GenericWorkload gate on; the caller
    /// converting a pod clears it when the gate is off.
    pub scheduling_group: Option<Arc<str>>,
    /// Effective requests (kube's `resourcehelper.PodRequests`, API defaulting of requests from
    /// limits applied, init containers and overhead included).
    pub requests: Resource,
    /// The same with kube's non-zero defaults for CPU (100m) and memory (200Mi) per container.
    pub non_zero_requests: Resource,
    pub node_selector: Labels,
    pub required_node_affinity: Option<NodeSelector>,
    pub preferred_node_affinity: Vec<WeightedTerm>,
    pub tolerations: Vec<Toleration>,
    /// `tolerationSeconds` of each toleration, in `tolerations` order; empty when no
    /// toleration sets it (only pod signatures read it: the scheduler does not).
    pub toleration_seconds: Vec<Option<i64>>,
    /// The volume sources other than ConfigMap and Secret, each as canonical JSON without the
    /// volume's name, sorted (kube's `VolumesSigner`; only pod signatures read it).
    pub volume_sources: Vec<Arc<str>>,
    /// `spec.volumes` as the volume plugins read them (`api::volume`).
    pub volumes: Vec<super::volume::PodVolume>,
    pub host_ports: Vec<HostPort>,
    /// `spec.affinity.podAffinity` / `podAntiAffinity`.
    pub pod_affinity: PodAffinity,
    /// Whether `spec.affinity.podAffinity` or `podAntiAffinity` is present at all, even with
    /// no terms (kube's InterPodAffinity refuses to sign such a pod).
    pub pod_affinity_present: bool,
    pub topology_spread_constraints: Vec<TopologySpreadConstraint>,
    /// `spec.initContainers[*].image` then `spec.containers[*].image` (ImageLocality), one
    /// per container, normalized as kube does (`:latest` added when there is no tag).
    pub images: Vec<Sym>,
    /// The node declared features this pod needs (NodeDeclaredFeatures,
    /// `super::node_features::infer_for_scheduling`).
    pub required_node_features: super::node_features::FeatureSet,
    /// `spec.resourceClaims` (Dynamic Resource Allocation), in the spec's order.
    pub resource_claims: Vec<PodResourceClaim>,
    /// The containers that request extended resources DRA may back (DRAExtendedResource).
    pub extended_resource_containers: Vec<super::extended_requests::ExtendedResourceContainer>,
    /// Scheduling features this pod uses that no plugin of this build handles, e.g.
    /// `"InterPodAffinity (spec.affinity.podAffinity)"`. The harness refuses such workloads.
    pub unsupported: Vec<&'static str>,
}

/// One entry of `spec.resourceClaims` (`PodResourceClaim`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodResourceClaim {
    /// The entry's name in the pod (what containers' `resources.claims` name).
    pub name: Arc<str>,
    pub source: ClaimSource,
}

/// Where a pod's claim comes from: exactly one of the two fields, or neither (an API this
/// build does not know, kube's `ErrAPIUnsupported`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClaimSource {
    /// `resourceClaimName`: an existing claim, shared by whoever names it.
    Claim(Arc<str>),
    /// `resourceClaimTemplateName`: the ResourceClaim controller makes one claim for this
    /// pod and records its name in `status.resourceClaimStatuses`.
    Template(Arc<str>),
    Unsupported,
}

/// One entry of `status.resourceClaimStatuses`: a pod claim's name and the generated
/// claim's (`None`: none was needed).
pub type ClaimStatus = (Arc<str>, Option<Arc<str>>);

/// The internal pod.
#[derive(Clone, Debug)]
pub struct Pod {
    pub key: PodKey,
    pub namespace: Sym,
    pub name: Arc<str>,
    pub uid: Arc<str>,
    pub labels: Arc<Labels>,
    pub spec: Arc<PodSpecInfo>,
    /// The node the pod is bound (or assumed) to; `None` while unassigned.
    pub node_name: Option<Sym>,
    pub nominated_node_name: Option<Sym>,
    pub deletion_timestamp: bool,
    pub resource_version: u64,
    /// What the pod's status says about in-place resizes (allocated and actuated resources,
    /// a `PodResizePending` condition); `None` for a pod whose status says nothing, which is
    /// every pod until a resize: then [`Pod::requests`] is the spec's, with no extra pointer
    /// chase or allocation on the hot path.
    pub resize: Option<Arc<PodResize>>,
    /// `status.resourceClaimStatuses` (the claims generated from templates); `None` when
    /// empty.
    pub resource_claim_statuses: Option<Arc<[ClaimStatus]>>,
}

/// The reason of a pod's `PodResizePending` condition (set by the kubelet).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResizePending {
    /// `Deferred`: the node cannot grant the resize now, it may later (kube's
    /// `IsPodResizeDeferred`).
    Deferred,
    /// `Infeasible`: the node can never grant it (kube's `IsPodResizeInfeasible`).
    Infeasible,
    /// Any other reason: neither deferred nor infeasible for the scheduler.
    Other,
}

/// A pod's resize state from its status (`api::convert::pod_resize_status` states the rule).
#[derive(Clone, Debug, PartialEq)]
pub struct PodResize {
    pub pending: Option<ResizePending>,
    /// What kube's `PodInfo.CalculateResource` counts for the pod on its node:
    /// `max(spec, actuated, allocated)`, or `max(actuated, allocated)` when infeasible.
    pub requests: Resource,
    /// The same with kube's non-zero defaults.
    pub non_zero_requests: Resource,
}

impl Pod {
    /// An unassigned pod with no labels whose uid is its name (tests, benches, tools).
    pub fn new(namespace: &str, name: &str, spec: Arc<PodSpecInfo>) -> Pod {
        Pod {
            key: PodKey::new(namespace, name),
            namespace: Sym::new(namespace),
            name: Arc::from(name),
            uid: Arc::from(name),
            labels: Arc::default(),
            spec,
            node_name: None,
            nominated_node_name: None,
            deletion_timestamp: false,
            resource_version: 0,
            resize: None,
            resource_claim_statuses: None,
        }
    }

    /// The requests the scheduler counts for this pod on a node (kube's
    /// `PodInfo.CalculateResource` with `UseStatusResources`): the spec's, unless the status
    /// reports allocated or actuated resources (see [`PodResize`]).
    #[inline]
    pub fn requests(&self) -> &Resource {
        self.resize
            .as_ref()
            .map_or(&self.spec.requests, |r| &r.requests)
    }

    /// [`Pod::requests`] with kube's non-zero defaults.
    #[inline]
    pub fn non_zero_requests(&self) -> &Resource {
        self.resize
            .as_ref()
            .map_or(&self.spec.non_zero_requests, |r| &r.non_zero_requests)
    }

    /// kube's `IsPodResizeDeferred`: a `PodResizePending` condition with reason `Deferred`.
    pub fn is_resize_deferred(&self) -> bool {
        self.resize
            .as_ref()
            .is_some_and(|r| r.pending == Some(ResizePending::Deferred))
    }

    /// kube's `IsPodResizeInfeasible`.
    pub fn is_resize_infeasible(&self) -> bool {
        self.resize
            .as_ref()
            .is_some_and(|r| r.pending == Some(ResizePending::Infeasible))
    }

    pub fn is_gated(&self) -> bool {
        !self.spec.scheduling_gates.is_empty()
    }
    pub fn priority(&self) -> i32 {
        self.spec.priority
    }
    pub fn is_assigned(&self) -> bool {
        self.node_name.is_some()
    }
    /// kube's `podInfo.RequiredAffinityTerms`/`PreferredAffinityTerms`… non-empty: the pod has
    /// any pod affinity or anti-affinity (kube's `NodeInfo.PodsWithAffinity`).
    pub fn has_pod_affinity(&self) -> bool {
        !self.spec.pod_affinity.is_empty()
    }
    /// The pod has required anti-affinity terms (`NodeInfo.PodsWithRequiredAntiAffinity`).
    pub fn has_required_anti_affinity(&self) -> bool {
        !self.spec.pod_affinity.required_anti_affinity.is_empty()
    }
}

/// A term matched against pods: here rather than in `affinity.rs`, which knows no `Pod` (the
/// pod's spec holds the terms, so the pod depends on them and not the other way).
impl PodAffinityTerm {
    /// kube's `AffinityTerm.Matches`: whether `target` is selected by this term of `owner`'s
    /// (its namespace is named, or matched by the namespace selector through
    /// `target_ns_labels`, the labels of `target`'s namespace, and its labels by the selector).
    pub fn matches_pod(
        &self,
        owner: &Pod,
        target: &Pod,
        target_ns_labels: Option<&Labels>,
    ) -> bool {
        let ns_ok = self
            .namespaces_for(owner.namespace)
            .contains(&target.namespace)
            || self.namespace_selector.as_ref().is_some_and(|sel| {
                // A namespace we know no labels of has none (kube's snapshot is empty then).
                sel.matches(target_ns_labels.unwrap_or(&Labels::default()))
            });
        ns_ok
            && self
                .selector_for(&owner.labels)
                .is_some_and(|sel| sel.matches(&target.labels))
    }
}
