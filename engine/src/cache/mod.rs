//! The scheduler cache: nodes, the pods assigned to them (bound or assumed), and the snapshot
//! each scheduling cycle reads.
//!
//! NodeInfos are held as `Arc`s and changed copy-on-write (`Arc::make_mut`): the snapshot keeps
//! the old version of a node until it is refreshed, so event handlers never wait for a cycle.
//! `update_snapshot` copies only the nodes that changed since the last call (a dirty list); a
//! node added or removed rebuilds the node list.

use crate::api::{Node, Pod, PodKey, Sym};
use crate::framework::node_info::NodeInfo;
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
}

/// The cluster as one scheduling cycle sees it.
#[derive(Default)]
pub struct Snapshot {
    pub nodes: Vec<Arc<NodeInfo>>,
    /// Node name → index into `nodes`.
    pub index: AHashMap<Sym, usize>,
    slot_to_index: AHashMap<usize, usize>,
}

impl Snapshot {
    pub fn get(&self, name: Sym) -> Option<&Arc<NodeInfo>> {
        self.index.get(&name).map(|&i| &self.nodes[i])
    }
}

pub struct Cache {
    inner: Mutex<Inner>,
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
            }),
        }
    }

    fn touch(inner: &mut Inner, slot: usize) -> Option<&mut NodeInfo> {
        inner.generation += 1;
        let g = inner.generation;
        inner.dirty.push(slot);
        let ni = Arc::make_mut(inner.nodes[slot].as_mut()?);
        ni.generation = g;
        Some(ni)
    }

    pub fn add_node(&self, node: Arc<Node>) {
        let mut inner = self.inner.lock();
        let name = node.name;
        if let Some(&slot) = inner.slot_of.get(&name) {
            if let Some(ni) = Self::touch(&mut inner, slot) {
                ni.node = node;
            }
            return;
        }
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

    pub fn remove_node(&self, name: Sym) {
        let mut inner = self.inner.lock();
        if let Some(slot) = inner.slot_of.remove(&name) {
            inner.nodes[slot] = None;
            inner.structural = true;
        }
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
        inner
            .pods
            .insert(pod.key.clone(), (node, pod.clone(), PodState::Assumed));
        true
    }

    /// Binding failed: undo the assumption.
    pub fn forget_pod(&self, key: &PodKey) {
        let mut inner = self.inner.lock();
        if let Some((node, pod, PodState::Assumed)) = inner.pods.get(key).cloned() {
            inner.pods.remove(key);
            if let Some(&slot) = inner.slot_of.get(&node)
                && let Some(ni) = Self::touch(&mut inner, slot)
            {
                ni.remove_pod(&pod);
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
            if state == PodState::Assumed && n == node {
                // Confirmation of an assumed pod: resources are already counted.
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
        if let Some((node, pod, _)) = inner.pods.remove(key)
            && let Some(&slot) = inner.slot_of.get(&node)
            && let Some(ni) = Self::touch(&mut inner, slot)
        {
            ni.remove_pod(&pod);
        }
    }

    pub fn node_count(&self) -> usize {
        self.inner.lock().slot_of.len()
    }

    pub fn assigned_pod_count(&self) -> usize {
        self.inner.lock().pods.len()
    }

    /// Brings `snap` up to date, copying only what changed.
    pub fn update_snapshot(&self, snap: &mut Snapshot) {
        let mut inner = self.inner.lock();
        if inner.structural {
            inner.structural = false;
            inner.dirty.clear();
            snap.nodes.clear();
            snap.index.clear();
            snap.slot_to_index.clear();
            for (slot, ni) in inner.nodes.iter().enumerate() {
                if let Some(ni) = ni {
                    snap.index.insert(ni.name(), snap.nodes.len());
                    snap.slot_to_index.insert(slot, snap.nodes.len());
                    snap.nodes.push(ni.clone());
                }
            }
            return;
        }
        let dirty = std::mem::take(&mut inner.dirty);
        for slot in dirty {
            if let (Some(&i), Some(Some(ni))) =
                (snap.slot_to_index.get(&slot), inner.nodes.get(slot))
            {
                snap.nodes[i] = ni.clone();
            }
        }
    }
}
