//! The scheduler cache: nodes, the pods assigned to them (bound or assumed), and the snapshot
//! each scheduling cycle reads.
//!
//! NodeInfos are held as `Arc`s and changed copy-on-write (`Arc::make_mut`): the snapshot keeps
//! the old version of a node until it is refreshed, so event handlers never wait for a cycle.
//! `update_snapshot` copies only the nodes that changed since the last call (a dirty list); a
//! node added or removed rebuilds the node list.

use crate::api::{Node, Pod, PodKey, Sym};
use crate::framework::node_info::{NodeInfo, NodeRow};
use crate::framework::pod_group_state::PodGroupStates;
use crate::framework::snapshot::{ImageStateSummary, Snapshot};
use ahash::AHashMap;
use parking_lot::Mutex;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PodState {
    Assumed,
    Bound,
}

struct Inner {
    /// Slot-stable node storage; `None` = removed.
    nodes: Vec<Option<Arc<NodeInfo>>>,
    slot_of: AHashMap<Sym, usize>,
    pods: AHashMap<PodKey, (Sym, Arc<Pod>, PodState)>,
    /// Pods whose node is not (yet) known.
    orphans: AHashMap<PodKey, Arc<Pod>>,
    dirty: Vec<usize>,
    structural: bool,
    generation: u64,
    /// A pod with pod (anti-)affinity came or went since the last snapshot.
    affinity_dirty: bool,
    /// Image name → its size and the number of nodes that have it (kube's cache
    /// `imageStates`).
    image_nodes: Arc<AHashMap<Sym, ImageStateSummary>>,
}

pub struct Cache {
    inner: Mutex<Inner>,
    /// The pod groups' member states (kube's cache `podGroupStates`): assumptions and their
    /// undoing of members are recorded here too (`framework/pod_group_state.rs`).
    pod_groups: Arc<PodGroupStates>,
    /// DeviceClasses, ResourceSlices and ResourceClaims (`framework/dra_manager.rs`).
    dra: Arc<crate::framework::dra_manager::DraManager>,
    /// PersistentVolumes, claims, StorageClasses, CSINodes and CSIDrivers
    /// (`framework/volume_listers.rs`).
    volumes: Arc<crate::framework::volume_listers::VolumeListers>,
}

impl Default for Cache {
    fn default() -> Self {
        Cache::new()
    }
}

impl Cache {
    pub fn new() -> Cache {
        Cache {
            inner: Mutex::new(Inner {
                nodes: Vec::new(),
                slot_of: AHashMap::new(),
                pods: AHashMap::new(),
                orphans: AHashMap::new(),
                dirty: Vec::new(),
                structural: true,
                generation: 0,
                affinity_dirty: false,
                image_nodes: Arc::default(),
            }),
            pod_groups: Arc::default(),
            dra: Arc::default(),
            volumes: Arc::default(),
        }
    }

    /// The cache recording its members' assumptions in `pod_groups` (the scheduler's, shared
    /// with the plugins).
    pub fn with_pod_groups(mut self, pod_groups: Arc<PodGroupStates>) -> Cache {
        self.pod_groups = pod_groups;
        self
    }

    /// The cache keeping its DRA objects in `dra` (the scheduler's, shared with the
    /// DynamicResources plugin).
    /// The cache keeping its volume objects in `volumes` (the scheduler's, shared with the
    /// volume plugins).
    pub(crate) fn with_volumes(
        mut self,
        volumes: Arc<crate::framework::volume_listers::VolumeListers>,
    ) -> Cache {
        self.volumes = volumes;
        self
    }

    pub(crate) fn with_dra(mut self, dra: Arc<crate::framework::dra_manager::DraManager>) -> Cache {
        self.dra = dra;
        self
    }

    pub fn pod_groups(&self) -> &Arc<PodGroupStates> {
        &self.pod_groups
    }

    /// What the scheduler knows of volume objects.
    pub(crate) fn volumes(&self) -> &Arc<crate::framework::volume_listers::VolumeListers> {
        &self.volumes
    }

    /// What the scheduler knows of DRA objects.
    pub(crate) fn dra(&self) -> &Arc<crate::framework::dra_manager::DraManager> {
        &self.dra
    }

    fn touch(inner: &mut Inner, slot: usize) -> Option<&mut NodeInfo> {
        inner.generation += 1;
        let g = inner.generation;
        inner.dirty.push(slot);
        let ni = Arc::make_mut(inner.nodes[slot].as_mut()?);
        ni.generation = g;
        Some(ni)
    }

    fn count_images(inner: &mut Inner, node: &Node, delta: i64) {
        if node.images.is_empty() {
            return;
        }
        let m = Arc::make_mut(&mut inner.image_nodes);
        for (i, &(name, size)) in node.images.iter().enumerate() {
            // A name listed twice on one node counts the node once (kube keeps a node set).
            if node.images[..i].iter().any(|&(n, _)| n == name) {
                continue;
            }
            let st = m
                .entry(name)
                .or_insert(ImageStateSummary { size, num_nodes: 0 });
            st.num_nodes = (i64::from(st.num_nodes) + delta).max(0) as u32;
            if st.num_nodes == 0 {
                m.remove(&name);
            }
        }
    }

    fn note_pod(inner: &mut Inner, pod: &Pod) {
        if pod.has_pod_affinity() {
            inner.affinity_dirty = true;
        }
    }

    pub fn add_node(&self, node: Arc<Node>) {
        let mut inner = self.inner.lock();
        let name = node.name;
        if let Some(&slot) = inner.slot_of.get(&name) {
            if let Some(old) = inner.nodes[slot].as_ref().map(|ni| ni.node.clone()) {
                Self::count_images(&mut inner, &old, -1);
            }
            Self::count_images(&mut inner, &node, 1);
            if let Some(ni) = Self::touch(&mut inner, slot) {
                ni.set_node(node);
            }
            return;
        }
        Self::count_images(&mut inner, &node, 1);
        let slot = inner.nodes.len();
        let mut ni = NodeInfo::new(node);
        // Pods that arrived before their node.
        let waiting: Vec<PodKey> = inner
            .orphans
            .iter()
            .filter(|(_, p)| p.node_name == Some(name))
            .map(|(k, _)| k.clone())
            .collect();
        for k in waiting {
            if let Some(p) = inner.orphans.remove(&k) {
                ni.add_pod(&p);
            }
        }
        inner.nodes.push(Some(Arc::new(ni)));
        inner.slot_of.insert(name, slot);
        inner.structural = true;
    }

    pub fn update_node(&self, node: Arc<Node>) {
        self.add_node(node);
    }

    /// Removes a node; returns the node object it held.
    pub fn remove_node(&self, name: Sym) -> Option<Arc<Node>> {
        let mut inner = self.inner.lock();
        let slot = inner.slot_of.remove(&name)?;
        inner.structural = true;
        let ni = inner.nodes[slot].take()?;
        Self::count_images(&mut inner, &ni.node, -1);
        Some(ni.node.clone())
    }

    /// The scheduler picked `node` for `pod`: account for it before binding finishes.
    pub fn assume_pod(&self, pod: &Arc<Pod>, node: Sym) -> bool {
        let mut inner = self.inner.lock();
        if inner.pods.contains_key(&pod.key) {
            return false;
        }
        let Some(&slot) = inner.slot_of.get(&node) else {
            return false;
        };
        if let Some(ni) = Self::touch(&mut inner, slot) {
            ni.add_pod(pod);
        }
        Self::note_pod(&mut inner, pod);
        inner
            .pods
            .insert(pod.key.clone(), (node, pod.clone(), PodState::Assumed));
        drop(inner);
        if pod.spec.scheduling_group.is_some() {
            self.pod_groups.assume_pod(pod);
        }
        true
    }

    /// Binding failed: undo the assumption.
    pub fn forget_pod(&self, key: &PodKey) {
        let mut inner = self.inner.lock();
        if let Some((node, pod, PodState::Assumed)) = inner.pods.get(key).cloned() {
            inner.pods.remove(key);
            Self::note_pod(&mut inner, &pod);
            if let Some(&slot) = inner.slot_of.get(&node)
                && let Some(ni) = Self::touch(&mut inner, slot)
            {
                ni.remove_pod(&pod);
            }
            drop(inner);
            if pod.spec.scheduling_group.is_some() {
                self.pod_groups.forget_pod(&pod);
            }
        }
    }

    pub fn is_assumed(&self, key: &PodKey) -> bool {
        matches!(
            self.inner.lock().pods.get(key),
            Some((_, _, PodState::Assumed))
        )
    }

    /// An assigned pod appeared (informer add, or our own bind confirmed).
    pub fn add_pod(&self, pod: Arc<Pod>) {
        let Some(node) = pod.node_name else { return };
        let mut inner = self.inner.lock();
        if let Some((n, old, state)) = inner.pods.get(&pod.key).cloned() {
            Self::note_pod(&mut inner, &old);
            Self::note_pod(&mut inner, &pod);
            if state == PodState::Assumed && n == node && Arc::ptr_eq(&old.labels, &pod.labels) {
                // Confirmation of an assumed pod: resources are already counted (the pod the
                // node holds is the assumed object, which differs only by its binding).
                inner
                    .pods
                    .insert(pod.key.clone(), (node, pod, PodState::Bound));
                return;
            }
            // Replace whatever we had.
            if let Some(&slot) = inner.slot_of.get(&n)
                && let Some(ni) = Self::touch(&mut inner, slot)
            {
                ni.remove_pod(&old);
            }
        }
        Self::note_pod(&mut inner, &pod);
        match inner.slot_of.get(&node).copied() {
            Some(slot) => {
                if let Some(ni) = Self::touch(&mut inner, slot) {
                    ni.add_pod(&pod);
                }
                inner
                    .pods
                    .insert(pod.key.clone(), (node, pod, PodState::Bound));
            }
            None => {
                inner.orphans.insert(pod.key.clone(), pod);
            }
        }
    }

    pub fn remove_pod(&self, key: &PodKey) {
        let mut inner = self.inner.lock();
        inner.orphans.remove(key);
        let Some((node, pod, _)) = inner.pods.remove(key) else {
            return;
        };
        Self::note_pod(&mut inner, &pod);
        if let Some(&slot) = inner.slot_of.get(&node)
            && let Some(ni) = Self::touch(&mut inner, slot)
        {
            ni.remove_pod(&pod);
        }
    }

    pub fn node_count(&self) -> usize {
        self.inner.lock().slot_of.len()
    }

    /// Brings `snap` up to date, copying only what changed.
    pub fn update_snapshot(&self, snap: &mut Snapshot) {
        let mut inner = self.inner.lock();
        if !Arc::ptr_eq(&snap.image_states, &inner.image_nodes) {
            snap.image_states = inner.image_nodes.clone();
            // ImageLocality's scores read every node's images.
            snap.memo.reset(snap.nodes.len());
        }
        let affinity = std::mem::take(&mut inner.affinity_dirty) || inner.structural;
        self.refresh_nodes(&mut inner, snap);
        if affinity {
            snap.have_pods_with_affinity.clear();
            snap.have_pods_with_required_anti_affinity.clear();
            for (i, ni) in snap.nodes.iter().enumerate() {
                if !ni.pods_with_affinity.is_empty() {
                    snap.have_pods_with_affinity.push(i);
                }
                if !ni.pods_with_required_anti_affinity.is_empty() {
                    snap.have_pods_with_required_anti_affinity.push(i);
                }
            }
        }
    }

    fn refresh_nodes(&self, inner: &mut Inner, snap: &mut Snapshot) {
        if inner.structural {
            inner.structural = false;
            inner.dirty.clear();
            snap.layout += 1;
            snap.nodes.clear();
            snap.rows.clear();
            snap.index.clear();
            snap.slot_to_index.clear();
            for (slot, ni) in inner.nodes.iter().enumerate() {
                if let Some(ni) = ni {
                    snap.index.insert(ni.name(), snap.nodes.len());
                    snap.slot_to_index.insert(slot, snap.nodes.len());
                    snap.nodes.push(ni.clone());
                    snap.rows.push(NodeRow::of(ni));
                }
            }
            snap.memo.reset(snap.nodes.len());
            return;
        }
        let dirty = std::mem::take(&mut inner.dirty);
        for slot in dirty {
            if let (Some(&i), Some(Some(ni))) =
                (snap.slot_to_index.get(&slot), inner.nodes.get(slot))
            {
                snap.nodes[i] = ni.clone();
                snap.rows[i] = NodeRow::of(ni);
                snap.memo.forget(i);
            }
        }
    }
}
