//! Pod signatures (kube's `SignPlugin` and `frameworkImpl.SignPod`,
//! `pkg/scheduler/framework/runtime/framework.go`, and the common signers of
//! `k8s.io/kube-scheduler/framework/signers.go`): two pods with the same signature get the same
//! Filter verdicts and Score results on the same nodes in the same state, so opportunistic
//! batching (`scheduler/batch.rs`) may reuse one pod's results for the next.
//!
//! # Protocol
//!
//! * A profile signs pods only when every plugin it runs at PreFilter, Filter, PreScore or
//!   Score signs ([`Plugin::signs_pods`](super::Plugin::signs_pods)); kube's in-tree plugins
//!   all do, a plugin written outside the engine does not unless it says so.
//! * Each signing plugin writes *fragments* keyed by the signer names kube uses
//!   ([`SignFragments::put`]); plugins that judge the same part of the pod write the same
//!   fragment (NodeResourcesFit and NodeResourcesBalancedAllocation both write the requests),
//!   and the fragments are merged by key, as kube merges them into one map.
//! * A plugin may refuse a pod (PodTopologySpread for a pod with spread constraints or under
//!   default constraints, InterPodAffinity for a pod with pod (anti-)affinity): the pod then has
//!   no signature and is never batched.
//! * The signature is the fragments in key order, each value a canonical text of what kube
//!   signs (sets sorted, maps in key order), so equal parts give equal signatures whatever the
//!   order in the pod's spec. It is compared whole (no hash: no collision can batch two pods
//!   that differ).

use crate::api::labels::{NodeSelector, NodeSelectorTerm, Requirement};
use crate::api::{Pod, Resource};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Arc;

/// kube's signer names (`k8s.io/kube-scheduler/framework/signers.go`).
pub(crate) mod signer {
    pub(crate) const SCHEDULER_NAME: &str = "v1.Pod.Spec.SchedulerName";
    pub(crate) const RESOURCES: &str = "v1.Pod.Spec.ContainerRequestsAndOverheads()";
    pub(crate) const TOLERATIONS: &str = "v1.Pod.Spec.Tolerations";
    pub(crate) const NODE_AFFINITY: &str = "v1.Pod.Spec.Affinity.NodeAffinity";
    pub(crate) const NODE_SELECTOR: &str = "v1.Pod.Spec.Affinity.NodeSelector";
    pub(crate) const HOST_PORTS: &str = "v1.Pod.Spec.HostPorts()";
    pub(crate) const NODE_NAME: &str = "v1.Pod.Spec.NodeName";
    pub(crate) const IMAGE_NAMES: &str = "v1.Pod.Spec.CanonicalImageNames()";
    pub(crate) const LABELS: &str = "v1.Pod.Labels";
    pub(crate) const FEATURES: &str = "v1.Pod.Spec.RequiredFeatures()";
    pub(crate) const VOLUMES: &str = "v1.Pod.Spec.Volumes.NonSyntheticSources()";
}

/// The fragments plugins write for one pod.
#[derive(Default, Debug)]
pub struct SignFragments {
    map: BTreeMap<&'static str, String>,
    /// Only finding out whether some plugin refuses the pod: values are not computed.
    probe: bool,
}

impl SignFragments {
    /// Fragments that compute nothing: a first pass finds a refusing plugin cheaply (kube's
    /// default profile refuses every pod in PodTopologySpread, after the plugins before it
    /// signed).
    pub fn probe() -> SignFragments {
        SignFragments {
            map: BTreeMap::new(),
            probe: true,
        }
    }

    /// Writes fragment `key` (a later write of the same key replaces it, as in kube's map);
    /// `value` runs only when the fragments are for real.
    pub fn put(&mut self, key: &'static str, value: impl FnOnce() -> String) {
        if !self.probe {
            self.map.insert(key, value());
        }
    }

    /// The signature of the fragments written.
    pub fn finish(self) -> PodSignature {
        let mut s = String::new();
        for (k, v) in &self.map {
            let _ = write!(s, "{k}={v};");
        }
        PodSignature(Arc::from(s))
    }
}

/// A pod's signature (kube's `fwk.PodSignature`): equal signatures, equal scheduling.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodSignature(Arc<str>);

impl PodSignature {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// NodeResourcesFit's and NodeResourcesBalancedAllocation's fragment: the pod's requests with
/// init containers and overhead (kube's `computePodResourceRequest`).
pub(crate) fn resources(r: &Resource) -> String {
    let mut s = format!(
        "cpu={} memory={} ephemeral-storage={}",
        r.milli_cpu, r.memory, r.ephemeral_storage
    );
    for (name, v) in &r.scalar {
        let _ = write!(s, " {name}={v}");
    }
    s
}

/// TaintToleration's and NodeUnschedulable's fragment: every toleration, in a canonical
/// order (kube sorts by key and value; equal keys and values are ordered by the rest here).
pub(crate) fn tolerations(pod: &Pod) -> String {
    let spec = &pod.spec;
    let mut v: Vec<String> = spec
        .tolerations
        .iter()
        .enumerate()
        .map(|(i, t)| {
            format!(
                "{:?}/{}/{:?}/{:?}/{:?}",
                t.key.to_string_lossy(),
                if t.exists { "Exists" } else { "Equal" },
                t.value.to_string_lossy(),
                t.effect.map(|e| e.as_str()),
                spec.toleration_seconds.get(i).copied().flatten()
            )
        })
        .collect();
    v.sort();
    v.join(",")
}

fn requirement(r: &Requirement) -> String {
    let mut values: Vec<String> = r.values.iter().map(|v| v.to_string_lossy()).collect();
    values.sort();
    format!(
        "{:?} {:?} {:?} {}",
        r.key.to_string_lossy(),
        r.op,
        values,
        r.int_value
    )
}

fn term(t: &NodeSelectorTerm) -> String {
    let mut exp: Vec<String> = t.match_expressions.iter().map(requirement).collect();
    exp.sort();
    let mut fld: Vec<String> = t.match_fields.iter().map(requirement).collect();
    fld.sort();
    format!("{{{exp:?} {fld:?}}}")
}

/// NodeAffinity's first fragment: the required terms (each term's requirements sorted, the
/// terms sorted) and the preferred terms with their weights.
pub(crate) fn node_affinity(pod: &Pod) -> String {
    let spec = &pod.spec;
    if spec.required_node_affinity.is_none() && spec.preferred_node_affinity.is_empty() {
        return String::new();
    }
    let mut req: Vec<String> = spec
        .required_node_affinity
        .as_ref()
        .map_or(&[][..], |NodeSelector { terms }| &terms[..])
        .iter()
        .map(term)
        .collect();
    req.sort();
    let mut pref: Vec<String> = spec
        .preferred_node_affinity
        .iter()
        .map(|w| format!("{}:{}", w.weight, term(&w.term)))
        .collect();
    pref.sort();
    format!("required={req:?} preferred={pref:?}")
}

/// NodeAffinity's second fragment: `nodeSelector`, in key order.
pub(crate) fn node_selector(pod: &Pod) -> String {
    let selector: std::collections::BTreeSet<String> = pod
        .spec
        .node_selector
        .iter()
        .map(|(k, v)| format!("{:?}={:?}", k.to_string_lossy(), v.to_string_lossy()))
        .collect();
    format!("{selector:?}")
}

/// NodePorts' fragment: the set of host ports (numbers only, as kube signs them).
pub(crate) fn host_ports(pod: &Pod) -> String {
    let mut ports: Vec<i32> = pod.spec.host_ports.iter().map(|p| p.port).collect();
    ports.sort_unstable();
    ports.dedup();
    format!("{ports:?}")
}

/// ImageLocality's fragment: the set of normalized image names.
pub(crate) fn image_names(pod: &Pod) -> String {
    let names: std::collections::BTreeSet<String> = pod
        .spec
        .images
        .iter()
        .map(|s| s.to_string_lossy())
        .collect();
    format!("{names:?}")
}

/// InterPodAffinity's fragment: the pod's labels, in key order.
pub(crate) fn labels(pod: &Pod) -> String {
    let set: std::collections::BTreeSet<(String, String)> = pod
        .labels
        .iter()
        .map(|(k, v)| (k.to_string_lossy(), v.to_string_lossy()))
        .collect();
    format!("{set:?}")
}

/// The volume plugins' fragment (VolumeBinding, VolumeZone, VolumeRestrictions,
/// NodeVolumeLimits in kube's default profile): the volume sources other than ConfigMap and
/// Secret, which differ from pod to pod and do not affect scheduling.
pub(crate) fn volumes(pod: &Pod) -> String {
    format!("{:?}", pod.spec.volume_sources)
}
