//! `NodeInfo`: a node plus the aggregate of the pods assigned (or assumed) to it.
//!
//! It holds aggregates (requested resources, pod count, used host ports) and the pods themselves
//! as `Arc`s (kube's `NodeInfo.Pods`, `PodsWithAffinity`, `PodsWithRequiredAntiAffinity`): a
//! copy-on-write clone for the snapshot copies one pointer per pod on the node.

use crate::api::{HostPort, Node, Pod, Resource, Sym};
use std::sync::Arc;

#[derive(Clone, Debug)]
pub struct NodeInfo {
    pub node: Arc<Node>,
    /// Sum of the effective requests of the node's pods.
    pub requested: Resource,
    /// The same with kube's non-zero defaults (used by scoring).
    pub non_zero_requested: Resource,
    pub pod_count: i64,
    /// Host ports in use with a reference count.
    pub used_ports: Vec<(HostPort, u32)>,
    /// Bumped on every change; the snapshot copies only nodes whose generation moved.
    pub generation: u64,
    /// The pods assigned or assumed to the node.
    pub pods: Vec<Arc<Pod>>,
    /// Those with any pod affinity or anti-affinity.
    pub pods_with_affinity: Vec<Arc<Pod>>,
    /// Those with required anti-affinity.
    pub pods_with_required_anti_affinity: Vec<Arc<Pod>>,
}

fn remove_by_key(v: &mut Vec<Arc<Pod>>, pod: &Pod) {
    if let Some(i) = v.iter().position(|p| p.key == pod.key) {
        v.swap_remove(i);
    }
}

impl NodeInfo {
    pub fn new(node: Arc<Node>) -> NodeInfo {
        NodeInfo {
            node,
            requested: Resource::default(),
            non_zero_requested: Resource::default(),
            pod_count: 0,
            used_ports: Vec::new(),
            generation: 0,
            pods: Vec::new(),
            pods_with_affinity: Vec::new(),
            pods_with_required_anti_affinity: Vec::new(),
        }
    }

    pub fn name(&self) -> Sym {
        self.node.name
    }

    pub fn allocatable(&self) -> &Resource {
        &self.node.allocatable
    }

    pub fn add_pod(&mut self, pod: &Arc<Pod>) {
        self.pods.push(pod.clone());
        if pod.has_pod_affinity() {
            self.pods_with_affinity.push(pod.clone());
        }
        if pod.has_required_anti_affinity() {
            self.pods_with_required_anti_affinity.push(pod.clone());
        }
        self.requested.add(&pod.spec.requests);
        self.non_zero_requested.add(&pod.spec.non_zero_requests);
        self.pod_count += 1;
        for hp in &pod.spec.host_ports {
            match self.used_ports.iter_mut().find(|(p, _)| p == hp) {
                Some((_, n)) => *n += 1,
                None => self.used_ports.push((*hp, 1)),
            }
        }
    }

    pub fn remove_pod(&mut self, pod: &Pod) {
        remove_by_key(&mut self.pods, pod);
        if pod.has_pod_affinity() {
            remove_by_key(&mut self.pods_with_affinity, pod);
        }
        if pod.has_required_anti_affinity() {
            remove_by_key(&mut self.pods_with_required_anti_affinity, pod);
        }
        self.requested.sub(&pod.spec.requests);
        self.non_zero_requested.sub(&pod.spec.non_zero_requests);
        self.pod_count -= 1;
        for hp in &pod.spec.host_ports {
            if let Some(i) = self.used_ports.iter().position(|(p, _)| p == hp) {
                self.used_ports[i].1 -= 1;
                if self.used_ports[i].1 == 0 {
                    self.used_ports.swap_remove(i);
                }
            }
        }
    }

    /// kube's `HostPortInfo.CheckConflict`: same protocol and port, and either IP is 0.0.0.0
    /// or the IPs are equal.
    pub fn port_conflicts(&self, want: &HostPort) -> bool {
        // Interned once: this runs in Filter, per node.
        static ANY: std::sync::LazyLock<Sym> = std::sync::LazyLock::new(|| Sym::new("0.0.0.0"));
        let any = *ANY;
        self.used_ports.iter().any(|(p, _)| {
            p.port == want.port
                && p.protocol == want.protocol
                && (p.ip == want.ip || p.ip == any || want.ip == any)
        })
    }
}
