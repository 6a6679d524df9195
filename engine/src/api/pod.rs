//! The compact, immutable internal form of a Pod used by the queue and the plugins.
//!
//! Everything a plugin reads per node is precomputed here once, at the API boundary
//! (see [`super::convert`]): interned labels, resource vectors, parsed selectors and
//! tolerations. The part derived only from `spec` lives in [`PodSpecInfo`] behind an `Arc`, so
//! pods stamped from one template share it.

use super::intern::Sym;
use super::labels::{Labels, NodeSelector, NodeSelectorTerm};
use super::resource::Resource;
use std::fmt;
use std::sync::Arc;

/// Identity of a pod in the queue and the cache: `namespace/name`, as kube keys its queue.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PodKey(Arc<str>);

impl PodKey {
    pub fn new(namespace: &str, name: &str) -> PodKey {
        PodKey(Arc::from(format!("{namespace}/{name}")))
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
    /// `(namespace, name)`.
    pub fn split(&self) -> (&str, &str) {
        self.0.split_once('/').unwrap_or(("", &self.0))
    }
}

impl fmt::Debug for PodKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl fmt::Display for PodKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
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
    pub scheduler_name: Sym,
    /// `spec.nodeName` as requested at creation (pods with it set never reach the queue).
    pub node_name: Sym,
    pub scheduling_gates: Vec<Arc<str>>,
    /// Effective requests (kube's `resourcehelper.PodRequests`, API defaulting of requests from
    /// limits applied, init containers and overhead included).
    pub requests: Resource,
    /// The same with kube's non-zero defaults for CPU (100m) and memory (200Mi) per container.
    pub non_zero_requests: Resource,
    pub node_selector: Labels,
    pub required_node_affinity: Option<NodeSelector>,
    pub preferred_node_affinity: Vec<WeightedTerm>,
    pub tolerations: Vec<Toleration>,
    pub host_ports: Vec<HostPort>,
    /// Scheduling features this pod uses that no plugin of this build handles, e.g.
    /// `"InterPodAffinity (spec.affinity.podAffinity)"`. The harness refuses such workloads.
    pub unsupported: Vec<&'static str>,
}

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
        }
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
}
