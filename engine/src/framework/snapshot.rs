//! The snapshot: the cluster as one scheduling cycle sees it (kube's `Snapshot` in
//! `pkg/scheduler/backend/cache/snapshot.go`, read by plugins through the framework's
//! `SharedLister`). It lives in the framework because every extension point reads it; the
//! cache (`crate::cache`) builds and refreshes it. Plugins take it as a concrete type, not a
//! trait object, so Filter and Score read its node table without dynamic dispatch.

use super::node_info::{NodeInfo, NodeRow};
use crate::api::Sym;
use ahash::AHashMap;
use std::sync::Arc;

/// The cluster as one scheduling cycle sees it.
#[derive(Clone, Default)]
pub struct Snapshot {
    pub nodes: Vec<Arc<NodeInfo>>,
    /// `rows[i]` is `NodeRow::of(&nodes[i])`: the hot fields of every node in one contiguous
    /// table, which Filter and Score read in order instead of chasing each NodeInfo.
    pub rows: Vec<NodeRow>,
    /// Node name → index into `nodes`.
    pub index: AHashMap<Sym, usize>,
    /// Cache slot → index into `nodes` (kept by the cache's `update_snapshot`).
    pub(crate) slot_to_index: AHashMap<usize, usize>,
    /// Indices into `nodes` of the nodes running a pod with pod affinity or anti-affinity.
    pub have_pods_with_affinity: Vec<usize>,
    /// Indices into `nodes` of the nodes running a pod with required anti-affinity.
    pub have_pods_with_required_anti_affinity: Vec<usize>,
    /// Image name → its size and the number of nodes that have it.
    pub image_states: Arc<AHashMap<Sym, ImageStateSummary>>,
    /// Bumped whenever `nodes` is rebuilt (a node added or removed): an index into `nodes`
    /// taken at one value holds the same node while the value is unchanged.
    pub layout: u64,
    /// Node-local plugins' Filter passes and raw scores per node, kept between cycles
    /// (`framework/node_memo.rs`); kept up to date only by `Cache::update_snapshot`.
    pub(crate) memo: super::node_memo::NodeMemo,
}

/// kube's `ImageStateSummary`: the size of an image (as the first node that reported the name
/// gave it, as kube's cache keeps it) and how many nodes have it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageStateSummary {
    pub size: i64,
    pub num_nodes: u32,
}

impl Snapshot {
    pub fn get(&self, name: Sym) -> Option<&Arc<NodeInfo>> {
        self.index.get(&name).map(|&i| &self.nodes[i])
    }
}
