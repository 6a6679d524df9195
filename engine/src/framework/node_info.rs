//! `NodeInfo`: a node plus the aggregate of the pods assigned (or assumed) to it.
//!
//! It holds aggregates (requested resources, pod count, used host ports) and the pods themselves
//! as `Arc`s (kube's `NodeInfo.Pods`, `PodsWithAffinity`, `PodsWithRequiredAntiAffinity`).
//!
//! The cache changes NodeInfos copy-on-write while the snapshot shares them, so a change to a
//! node the snapshot holds clones its NodeInfo. kube copies the whole pod slice there, which
//! is O(pods on the node) per change: fine at 110 pods, quadratic for the one-node workloads of
//! scheduler_perf (20,000 pods on a node). A [`PodList`] is a list of shared leaves of
//! [`PodList::LEAF`] pods: a clone copies one pointer per leaf, and a change copies at most two
//! leaves.

use crate::api::{HostPort, Node, Pod, Resource, Sym};
use std::sync::Arc;

/// Field order is fixed (`repr(C)`) so that what every Filter/Score pass reads comes first and
/// shares the fewest cache lines: name and flags, pod count, then allocatable, requested and
/// non-zero requested (`HOT_BYTES`); the node object, ports and pod lists follow. Aligned to a
/// cache line, the hot part is exactly three lines.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct NodeInfo {
    pub pod_count: i64,
    /// Copies of the node fields every Filter/Score pass reads, kept inline so that a node
    /// without taints is evaluated without touching its `Node` (one cache miss less per node).
    name: Sym,
    /// `spec.unschedulable` and "has taints", as [`NodeTraits`].
    traits: NodeTraits,
    allocatable: Resource,
    /// Sum of the effective requests of the node's pods.
    pub requested: Resource,
    /// The same with kube's non-zero defaults (used by scoring).
    pub non_zero_requested: Resource,
    /// The node object. Change it with `NodeInfo::set_node`, which refreshes the copies
    /// above.
    pub node: Arc<Node>,
    /// Host ports in use with a reference count.
    pub used_ports: Vec<(HostPort, u32)>,
    /// Bumped on every change; the snapshot copies only nodes whose generation moved.
    pub generation: u64,
    /// The pods assigned or assumed to the node.
    pub pods: PodList,
    /// Those with any pod affinity or anti-affinity.
    pub pods_with_affinity: PodList,
    /// Those with required anti-affinity.
    pub pods_with_required_anti_affinity: PodList,
    /// NodeVolumeLimits' bound on the volumes the pods hold: their named
    /// `persistentVolumeClaim` volumes, and how many pods have a volume whose reading may
    /// fail (`api::csi_translation::attach_bound`).
    pub volume_claims: u32,
    pub pods_with_unbounded_volumes: u32,
}

/// A set of node properties. A Filter plugin that can only reject nodes having one of them
/// says so ([`FilterPlugin::needs_nodes_with`]), and the per-node loop calls it only on such
/// nodes: on the others it would return Success, so leaving it out changes nothing.
///
/// Every node has [`NodeTraits::ANY`], so a plugin that needs every node declares that.
///
/// [`FilterPlugin::needs_nodes_with`]: crate::framework::interface::FilterPlugin::needs_nodes_with
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NodeTraits(u8);

impl Default for NodeTraits {
    /// A node with no property but [`NodeTraits::ANY`].
    fn default() -> NodeTraits {
        NodeTraits::ANY
    }
}

impl NodeTraits {
    /// Held by every node.
    pub const ANY: NodeTraits = NodeTraits(1);
    /// `spec.unschedulable` is set.
    pub const UNSCHEDULABLE: NodeTraits = NodeTraits(2);
    /// The node has at least one taint.
    pub const TAINTED: NodeTraits = NodeTraits(4);

    /// The traits of a node object.
    pub fn of(node: &Node) -> NodeTraits {
        let mut t = NodeTraits::ANY;
        if node.unschedulable {
            t = t.union(NodeTraits::UNSCHEDULABLE);
        }
        if !node.taints.is_empty() {
            t = t.union(NodeTraits::TAINTED);
        }
        t
    }

    #[inline(always)]
    pub const fn union(self, other: NodeTraits) -> NodeTraits {
        NodeTraits(self.0 | other.0)
    }

    #[inline(always)]
    pub const fn intersects(self, other: NodeTraits) -> bool {
        self.0 & other.0 != 0
    }
}

/// One row of the snapshot's node table ([`crate::framework::Snapshot::rows`]): the fields of a
/// node that Filter and Score read for nearly every pod, packed in one cache line.
///
/// Filter and Score walk thousands of nodes per cycle, different ones each cycle (kube's
/// `nextStartNodeIndex` rotates the start). Read through `Arc<NodeInfo>`, each node costs a
/// pointer chase and three lines scattered over the heap: at 100,000 nodes that working set
/// is far bigger than the cache, and every node is a wait on memory. The rows are one
/// contiguous array, 64 bytes a node (6.4 MB for 100,000 nodes), read in order, so the
/// hardware prefetcher streams them.
///
/// A row is derived from its NodeInfo ([`NodeRow::of`]) and replaced whenever the snapshot
/// takes a new NodeInfo for that node, so `rows[i] == NodeRow::of(&nodes[i])` always holds.
/// Plugins that can decide from a row ([`FilterPlugin::filter_nodes`],
/// [`ScorePlugin::score_nodes`]) read it instead of the NodeInfo; the rest of the node
/// (scalar resources, the node object, pods) stays in the NodeInfo.
///
/// [`FilterPlugin::filter_nodes`]: crate::framework::interface::FilterPlugin::filter_nodes
/// [`ScorePlugin::score_nodes`]: crate::framework::interface::ScorePlugin::score_nodes
/// kube's `balancedResourceScore` for cpu and memory, `(requested, allocatable)` each:
/// `(1 − |fraction_cpu − fraction_memory| / 2) × 100`, fractions capped at 1; 100 when the node
/// lacks either resource (one fraction or none: a standard deviation of 0). In `[50, 100]`.
#[inline(always)]
pub(crate) fn cpu_memory_balance([(rc, ac), (rm, am)]: [(i64, i64); 2]) -> i64 {
    let std = if ac != 0 && am != 0 {
        let fc = (rc as f64 / ac as f64).min(1.0);
        let fm = (rm as f64 / am as f64).min(1.0);
        ((fc - fm) / 2.0).abs()
    } else {
        0.0
    };
    ((1.0 - std) * BALANCE_SCALE as f64) as i64
}

/// The scale of [`cpu_memory_balance`]: kube's `MaxNodeScore` (`interface::MAX_NODE_SCORE`,
/// which this file does not import, so that the node data does not depend on the plugin
/// interface; a test holds the two equal).
const BALANCE_SCALE: i64 = 100;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct NodeRow {
    /// Allocatable cpu and memory.
    pub allocatable_milli_cpu: i64,
    pub allocatable_memory: i64,
    /// The node's pods' effective requests (`NodeInfo::requested`) of cpu and memory.
    pub requested_milli_cpu: i64,
    pub requested_memory: i64,
    /// The same with kube's non-zero defaults (`NodeInfo::non_zero_requested`).
    pub non_zero_milli_cpu: i64,
    pub non_zero_memory: i64,
    /// Allocatable less requested ephemeral storage (wrapping, as `a - u` in release builds).
    pub free_ephemeral_storage: i64,
    /// `allowed_pod_number - pod_count`, saturated into an i32 (the sign is what Filter reads:
    /// a pod fits only where this is positive).
    pub free_pods: i32,
    pub traits: NodeTraits,
    /// The node's own cpu/memory balance with its pods' effective requests,
    /// `cpu_memory_balance` of (requested, allocatable): NodeResourcesBalancedAllocation
    /// scores the change a pod makes to it, and this half does not depend on the pod.
    pub balance: u8,
}

const _: () = assert!(std::mem::size_of::<NodeRow>() == 64);

impl NodeRow {
    /// The row of `ni`.
    #[inline]
    pub fn of(ni: &NodeInfo) -> NodeRow {
        let (a, r, z) = (&ni.allocatable, &ni.requested, &ni.non_zero_requested);
        let free_pods = a.allowed_pod_number.saturating_sub(ni.pod_count);
        NodeRow {
            allocatable_milli_cpu: a.milli_cpu,
            allocatable_memory: a.memory,
            requested_milli_cpu: r.milli_cpu,
            requested_memory: r.memory,
            non_zero_milli_cpu: z.milli_cpu,
            non_zero_memory: z.memory,
            free_ephemeral_storage: a.ephemeral_storage.wrapping_sub(r.ephemeral_storage),
            free_pods: free_pods.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32,
            traits: ni.traits,
            balance: cpu_memory_balance([(r.milli_cpu, a.milli_cpu), (r.memory, a.memory)]) as u8,
        }
    }

    /// Whether the node has any taint.
    #[inline]
    pub fn has_taints(&self) -> bool {
        self.traits.intersects(NodeTraits::TAINTED)
    }
}

/// Bytes at the start of a [`NodeInfo`] that Filter and Score read (through
/// `non_zero_requested`).
const HOT_BYTES: usize = std::mem::offset_of!(NodeInfo, node);
// `prefetch` asks for the three lines at 0, 64 and 128 of a line-aligned NodeInfo.
const _: () = assert!(HOT_BYTES <= 192, "NodeInfo's hot fields outgrew prefetch()");
const _: () = assert!(std::mem::align_of::<NodeInfo>() == 64);

/// The pods of a node: leaves of up to [`PodList::LEAF`] pods, shared between clones and
/// copied on write. Every leaf but the last is full. Order is not kept across removals (the
/// last pod fills the hole, like `swap_remove`).
#[derive(Clone, Debug, Default)]
pub struct PodList {
    leaves: Vec<Arc<Vec<Arc<Pod>>>>,
    len: usize,
}

impl PodList {
    pub const LEAF: usize = 128;

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<Pod>> + Clone + '_ {
        self.leaves.iter().flat_map(|l| l.iter())
    }

    pub fn push(&mut self, pod: Arc<Pod>) {
        match self.leaves.last_mut() {
            Some(last) if last.len() < Self::LEAF => Arc::make_mut(last).push(pod),
            _ => {
                let mut leaf = Vec::with_capacity(Self::LEAF);
                leaf.push(pod);
                self.leaves.push(Arc::new(leaf));
            }
        }
        self.len += 1;
    }

    /// Removes the pod with `pod`'s key; false if absent.
    pub fn remove(&mut self, pod: &Pod) -> bool {
        let Some((li, i)) = self
            .leaves
            .iter()
            .enumerate()
            .find_map(|(li, l)| l.iter().position(|p| p.key == pod.key).map(|i| (li, i)))
        else {
            return false;
        };
        let last_leaf = self.leaves.len() - 1;
        let filler = Arc::make_mut(&mut self.leaves[last_leaf])
            .pop()
            .expect("leaves are never empty");
        if li == last_leaf && i == self.leaves[last_leaf].len() {
            // It was the very last pod.
        } else {
            Arc::make_mut(&mut self.leaves[li])[i] = filler;
        }
        if self.leaves[last_leaf].is_empty() {
            self.leaves.pop();
        }
        self.len -= 1;
        true
    }
}

impl FromIterator<Arc<Pod>> for PodList {
    fn from_iter<I: IntoIterator<Item = Arc<Pod>>>(iter: I) -> PodList {
        let mut l = PodList::default();
        for p in iter {
            l.push(p);
        }
        l
    }
}

impl<'a> IntoIterator for &'a PodList {
    type Item = &'a Arc<Pod>;
    type IntoIter = std::iter::FlatMap<
        std::slice::Iter<'a, Arc<Vec<Arc<Pod>>>>,
        std::slice::Iter<'a, Arc<Pod>>,
        fn(&'a Arc<Vec<Arc<Pod>>>) -> std::slice::Iter<'a, Arc<Pod>>,
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.leaves.iter().flat_map(|l| l.iter())
    }
}

impl NodeInfo {
    pub fn new(node: Arc<Node>) -> NodeInfo {
        NodeInfo {
            allocatable: node.allocatable.clone(),
            name: node.name,
            traits: NodeTraits::of(&node),
            node,
            requested: Resource::default(),
            non_zero_requested: Resource::default(),
            pod_count: 0,
            used_ports: Vec::new(),
            generation: 0,
            pods: PodList::default(),
            pods_with_affinity: PodList::default(),
            pods_with_required_anti_affinity: PodList::default(),
            volume_claims: 0,
            pods_with_unbounded_volumes: 0,
        }
    }

    /// Replaces the node object (an update), keeping the pods and aggregates.
    pub(crate) fn set_node(&mut self, node: Arc<Node>) {
        self.allocatable = node.allocatable.clone();
        self.name = node.name;
        self.traits = NodeTraits::of(&node);
        self.node = node;
    }

    #[inline]
    pub fn name(&self) -> Sym {
        self.name
    }

    #[inline]
    pub fn allocatable(&self) -> &Resource {
        &self.allocatable
    }

    /// `spec.unschedulable`.
    #[inline]
    pub fn unschedulable(&self) -> bool {
        self.traits.intersects(NodeTraits::UNSCHEDULABLE)
    }

    /// Whether the node has any taint (when not, taint checks need not look at the node).
    #[inline]
    pub fn has_taints(&self) -> bool {
        self.traits.intersects(NodeTraits::TAINTED)
    }

    /// What Filter plugins may declare they depend on ([`FilterPlugin::needs_nodes_with`]).
    ///
    /// [`FilterPlugin::needs_nodes_with`]: crate::framework::interface::FilterPlugin::needs_nodes_with
    #[inline]
    pub fn traits(&self) -> NodeTraits {
        self.traits
    }

    pub fn add_pod(&mut self, pod: &Arc<Pod>) {
        self.pods.push(pod.clone());
        if pod.has_pod_affinity() {
            self.pods_with_affinity.push(pod.clone());
        }
        if pod.has_required_anti_affinity() {
            self.pods_with_required_anti_affinity.push(pod.clone());
        }
        self.requested.add(pod.requests());
        self.non_zero_requested.add(pod.non_zero_requests());
        self.pod_count += 1;
        match crate::api::csi_translation::attach_bound(&pod.spec.volumes) {
            Some(n) => self.volume_claims += n,
            None => self.pods_with_unbounded_volumes += 1,
        }
        for hp in &pod.spec.host_ports {
            match self.used_ports.iter_mut().find(|(p, _)| p == hp) {
                Some((_, n)) => *n += 1,
                None => self.used_ports.push((*hp, 1)),
            }
        }
    }

    pub fn remove_pod(&mut self, pod: &Pod) {
        self.pods.remove(pod);
        if pod.has_pod_affinity() {
            self.pods_with_affinity.remove(pod);
        }
        if pod.has_required_anti_affinity() {
            self.pods_with_required_anti_affinity.remove(pod);
        }
        self.requested.sub(pod.requests());
        self.non_zero_requested.sub(pod.non_zero_requests());
        self.pod_count -= 1;
        match crate::api::csi_translation::attach_bound(&pod.spec.volumes) {
            Some(n) => self.volume_claims -= n,
            None => self.pods_with_unbounded_volumes -= 1,
        }
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
        self.used_ports.iter().any(|(p, _)| p.conflicts(want))
    }
}

impl NodeInfo {
    /// Hints the CPU to fetch this NodeInfo's hot fields (its first `HOT_BYTES`) ahead of use.
    /// Filter and Score walk thousands of NodeInfos that live apart on the heap; asking for
    /// the next few while working on the current one hides most of the cache misses.
    #[inline(always)]
    pub(crate) fn prefetch(&self) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            let p = (self as *const NodeInfo).cast::<i8>();
            // SAFETY: a prefetch is only a hint: it never faults, reads nothing the program
            // can observe and writes nothing; `p` points at a live NodeInfo and the other two
            // addresses come from `wrapping_add`, which makes no claim about the allocation
            // (a line past its end is fine). Run under Miri by `node_info::tests` (ci/miri.sh).
            // The hot fields are the first three lines (the type is line-aligned).
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(p);
                _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(64));
                _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(128));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_balance_scale_is_the_max_node_score() {
        assert_eq!(BALANCE_SCALE, crate::framework::interface::MAX_NODE_SCORE);
        assert_eq!(cpu_memory_balance([(0, 4), (0, 8)]), BALANCE_SCALE);
    }
    use crate::api::PodSpecInfo;
    use proptest::prelude::*;

    fn pod(i: usize) -> Arc<Pod> {
        Arc::new(Pod::new(
            "ns",
            &format!("p{i}"),
            Arc::new(PodSpecInfo::default()),
        ))
    }

    /// `prefetch` on NodeInfos in a Vec and on their own (heap ends nearby): a hint that
    /// changes nothing. Runs under Miri (ci/miri.sh), which checks the unsafe block.
    #[test]
    fn prefetch_changes_nothing() {
        let mut node = Node::named("n");
        node.allocatable.milli_cpu = 1000;
        let boxed = Box::new(NodeInfo::new(Arc::new(node)));
        let many: Vec<NodeInfo> = (0..3).map(|_| (*boxed).clone()).collect();
        boxed.prefetch();
        for n in &many {
            n.prefetch();
        }
        assert_eq!(boxed.allocatable().milli_cpu, 1000);
        assert!(many.iter().all(|n| n.name() == Sym::new("n")));
    }

    // provenance: pkg/scheduler/framework/types_test.go (TestNodeInfoAddPod /
    // TestNodeInfoRemovePod with InPlacePodVerticalScaling: a resized pod counts
    // max(spec, actuated, allocated) on its node, and its removal takes back exactly that).
    #[test]
    fn resized_pods_count_their_status_resources() {
        use crate::api::{PodResize, Resource};
        let mut node = Node::named("n");
        node.allocatable.milli_cpu = 4000;
        let mut ni = NodeInfo::new(Arc::new(node));
        let spec = PodSpecInfo {
            requests: Resource {
                milli_cpu: 200,
                ..Default::default()
            },
            non_zero_requests: Resource {
                milli_cpu: 200,
                memory: 200 << 20,
                ..Default::default()
            },
            ..Default::default()
        };
        let plain = Arc::new(Pod::new("ns", "plain", Arc::new(spec.clone())));
        let mut resized = Pod::new("ns", "resized", Arc::new(spec));
        let counted = Resource {
            milli_cpu: 3000,
            ..Default::default()
        };
        resized.resize = Some(Arc::new(PodResize {
            pending: Some(crate::api::ResizePending::Deferred),
            requests: counted.clone(),
            non_zero_requests: counted,
        }));
        let resized = Arc::new(resized);
        ni.add_pod(&plain);
        ni.add_pod(&resized);
        assert_eq!(ni.requested.milli_cpu, 3200);
        assert_eq!(ni.non_zero_requested.milli_cpu, 3200);
        ni.remove_pod(&resized);
        assert_eq!(ni.requested.milli_cpu, 200);
        assert_eq!(ni.non_zero_requested.milli_cpu, 200);
        assert_eq!(ni.non_zero_requested.memory, 200 << 20);
    }

    proptest! {
        /// A PodList holds the same pods as a plain list under pushes and removals, and a
        /// clone taken before the changes keeps what it saw (copy-on-write leaves).
        #[test]
        fn pod_list_matches_a_vec(ops in proptest::collection::vec((proptest::bool::ANY, 0usize..400), 0..1500)) {
            let mut list = PodList::default();
            let mut model: Vec<String> = Vec::new();
            let mut frozen: Option<(PodList, Vec<String>)> = None;
            for (n, (add, i)) in ops.into_iter().enumerate() {
                let name = format!("p{i}");
                if add && !model.contains(&name) {
                    list.push(pod(i));
                    model.push(name);
                } else if !add {
                    let had = model.iter().position(|m| *m == name);
                    prop_assert_eq!(list.remove(&pod(i)), had.is_some());
                    if let Some(at) = had {
                        model.swap_remove(at);
                    }
                }
                if n == 700 {
                    frozen = Some((list.clone(), model.clone()));
                }
                prop_assert_eq!(list.len(), model.len());
                prop_assert!(list.leaves.iter().rev().skip(1).all(|l| l.len() == PodList::LEAF));
                prop_assert!(list.leaves.iter().all(|l| !l.is_empty()));
            }
            let mut got: Vec<String> = list.iter().map(|p| p.name.to_string()).collect();
            got.sort();
            model.sort();
            prop_assert_eq!(got, model);
            if let Some((f, mut fm)) = frozen {
                let mut got: Vec<String> = (&f).into_iter().map(|p| p.name.to_string()).collect();
                got.sort();
                fm.sort();
                prop_assert_eq!(got, fm);
            }
        }
    }
}
