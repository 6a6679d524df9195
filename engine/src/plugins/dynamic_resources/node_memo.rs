//! The allocator's answers kept per node between cycles (issue 34, item 5).
//!
//! kube runs the structured allocator afresh for every pod on every node it filters. Most of
//! that work repeats: pods made from one template ask for the same devices, and between two
//! cycles only the nodes a pod was bound to or left change what they hold. So Filter keeps,
//! per node, the allocator's answer for a claim *shape* and takes it again while nothing the
//! allocator reads on that node has changed.
//!
//! ## What an answer depends on (the key)
//!
//! The allocator on a node reads, and nothing else (`allocator.rs`, `pools.rs`):
//!
//! 1. the node object (its name and labels decide which slices reach it): the entry keeps
//!    the node's `Arc` and is valid only for that same object;
//! 2. the slices (devices, attributes, capacities, taints, pools and their completeness):
//!    the slice index's generation, which moves under the slices' lock
//!    ([`crate::framework::dra_manager::DraManager::slice_index`]);
//! 3. the device classes: the manager's classes generation, bumped after each change;
//! 4. the claims to allocate, in order, by their requests and constraints (their *shape*;
//!    [`NodeMemo::shape_id`] gives equal shapes one id);
//! 5. what the devices of each pool the node reaches hold (claims' allocations, in-flight
//!    ones): each pool's version in the cycle's snapshot
//!    ([`crate::framework::dra_manager::AllocatedDevices::pool_version`]), taken under the
//!    same locks as the snapshot and bumped under the lock of whatever changed;
//! 6. the allocator's features and the CEL environment: the plugin's own, fixed.
//!
//! ## What is kept
//!
//! A found allocation, or "cannot allocate". Errors are never kept: their messages name the
//! claim. The one part of an allocation that depends on the claim itself, a share's ID
//! (DRAConsumableCapacity: derived from the claim's UID and the result's position), is
//! derived again for the claim that takes the answer ([`for_claims`]). A hit returns exactly
//! what the allocator would return on that node for that cycle's snapshot, so decisions do
//! not change. `engine/tests/dra.rs` has a test that fails without each of items 2, 3 and 5
//! (a slice gaining a device, a class coming to select, a device taken); items 1 and 4 are
//! covered by the unit tests below.

use crate::api::dra::{Allocation, DeviceConstraint, DeviceRequest, ResourceClaim};
use crate::api::{Node, Sym};
use ahash::AHashMap;
use parking_lot::Mutex;
use std::sync::Arc;

/// Entries kept per node (the claim shapes a workload alternates between; older ones go).
const PER_NODE: usize = 32;
/// Distinct shapes remembered before the table starts afresh (ids are never reused).
const SHAPES: usize = 256;
const SHARDS: usize = 16;

/// The allocator's answer on a node: the allocations in the order of the claims, or `None`
/// when the claims cannot all be allocated there.
pub(super) type Answer = Option<Arc<[Arc<Allocation>]>>;

/// Items 2-4 of the module doc.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct MemoKey {
    pub(super) slices: u64,
    pub(super) classes: u64,
    pub(super) shape: u64,
}

struct Entry {
    node: Arc<Node>,
    key: MemoKey,
    /// Item 5: the versions of the node's pools, in the order of its pools.
    versions: Box<[u64]>,
    answer: Answer,
}

type Shape = (Vec<DeviceRequest>, Vec<DeviceConstraint>);

/// Some nodes' entries.
type Shard = AHashMap<Sym, Vec<Entry>>;

#[derive(Default)]
struct Shapes {
    next: u64,
    known: Vec<(Vec<Shape>, u64)>,
}

pub(super) struct NodeMemo {
    shapes: Mutex<Shapes>,
    shards: Box<[Mutex<Shard>]>,
    hasher: ahash::RandomState,
}

impl Default for NodeMemo {
    fn default() -> Self {
        NodeMemo {
            shapes: Mutex::default(),
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            hasher: ahash::RandomState::new(),
        }
    }
}

impl NodeMemo {
    /// One id per distinct list of (requests, constraints): claims of equal shape get equal
    /// ids, different shapes different ones.
    pub(super) fn shape_id(&self, claims: &[&ResourceClaim]) -> u64 {
        let same = |known: &[Shape]| {
            known.len() == claims.len()
                && known
                    .iter()
                    .zip(claims)
                    .all(|((r, c), claim)| *r == claim.requests && *c == claim.constraints)
        };
        let mut shapes = self.shapes.lock();
        if let Some((_, id)) = shapes.known.iter().find(|(k, _)| same(k)) {
            return *id;
        }
        if shapes.known.len() >= SHAPES {
            shapes.known.clear();
        }
        let id = shapes.next;
        shapes.next += 1;
        let shape = claims
            .iter()
            .map(|c| (c.requests.clone(), c.constraints.clone()))
            .collect();
        shapes.known.push((shape, id));
        id
    }

    fn shard(&self, node: Sym) -> &Mutex<Shard> {
        &self.shards[self.hasher.hash_one(node) as usize % SHARDS]
    }

    /// The kept answer for `node` under `key` with its pools at `versions`, if any (read
    /// lazily: a hit allocates nothing).
    pub(super) fn get<V>(&self, node: &Arc<Node>, key: MemoKey, versions: V) -> Option<Answer>
    where
        V: IntoIterator<Item = u64>,
        V::IntoIter: Clone,
    {
        let versions = versions.into_iter();
        let shard = self.shard(node.name).lock();
        let e = shard.get(&node.name)?.iter().find(|e| {
            e.key == key
                && Arc::ptr_eq(&e.node, node)
                && e.versions.iter().copied().eq(versions.clone())
        })?;
        Some(e.answer.clone())
    }

    /// Keeps `answer` for `node` under `key` and `versions` (replacing the node's entry for
    /// the same key, and those of older generations, which no cycle will ask for again).
    pub(super) fn put(&self, node: &Arc<Node>, key: MemoKey, versions: Vec<u64>, answer: Answer) {
        let mut shard = self.shard(node.name).lock();
        let entries = shard.entry(node.name).or_default();
        entries.retain(|e| {
            e.key.shape != key.shape
                && e.key.slices >= key.slices
                && e.key.classes >= key.classes
                && Arc::ptr_eq(&e.node, node)
        });
        if entries.len() >= PER_NODE {
            entries.remove(0);
        }
        entries.push(Entry {
            node: node.clone(),
            key,
            versions: versions.into_boxed_slice(),
            answer,
        });
    }
}

/// A kept answer for `claims` (the claims to allocate, in order): the same allocations, with
/// each share's ID derived from its own claim as the allocator derives it.
pub(super) fn for_claims(
    answer: &[Arc<Allocation>],
    claims: &[&ResourceClaim],
) -> Vec<Arc<Allocation>> {
    answer
        .iter()
        .zip(claims)
        .map(|(a, claim)| {
            if a.devices.iter().all(|d| d.share_id.is_none()) {
                return a.clone();
            }
            let mut own = (**a).clone();
            for (i, d) in own.devices.iter_mut().enumerate() {
                if d.share_id.is_some() {
                    d.share_id = Some(super::allocator::share_id(&claim.uid, i));
                }
            }
            Arc::new(own)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::dra::{AllocatedDevice, DeviceId};

    fn claim(name: &str, class: &str) -> ResourceClaim {
        let v = serde_json::json!({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "ns", "uid": name},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": class}}]}}
        });
        let k: k8s_openapi::api::resource::v1::ResourceClaim = serde_json::from_value(v).unwrap();
        crate::api::dra::resource_claim(&k).unwrap()
    }

    fn node(name: &str) -> Arc<Node> {
        Arc::new(Node {
            name: Sym::new(name),
            ..Node::default()
        })
    }

    fn answer(device: &str) -> Answer {
        let a = Allocation {
            devices: vec![AllocatedDevice {
                request: "r".into(),
                device: DeviceId {
                    driver: Sym::new("d"),
                    pool: Sym::new("p"),
                    device: Sym::new(device),
                },
                admin_access: false,
                share_id: None,
                consumed_capacity: Default::default(),
            }],
            node_selector: None,
        };
        Some(Arc::from(vec![Arc::new(a)]))
    }

    #[test]
    fn a_kept_share_gets_the_id_of_the_claim_that_takes_it() {
        let (a, b) = (claim("a", "gpu"), claim("b", "gpu"));
        let mut kept = (**answer("dev-0").unwrap().first().unwrap()).clone();
        kept.devices[0].share_id = Some(super::super::allocator::share_id(&a.uid, 0));
        let kept = [Arc::new(kept)];
        let for_b = for_claims(&kept, &[&b]);
        assert_eq!(
            for_b[0].devices[0].share_id,
            Some(super::super::allocator::share_id(&b.uid, 0))
        );
        assert_ne!(for_b[0].devices[0].share_id, kept[0].devices[0].share_id);
        assert_eq!(for_b[0].devices[0].device, kept[0].devices[0].device);
        // Without shares the kept allocation itself is handed out.
        let plain = answer("dev-1").unwrap();
        assert!(Arc::ptr_eq(&for_claims(&plain, &[&b])[0], &plain[0]));
    }

    #[test]
    fn equal_shapes_share_an_id_and_different_ones_do_not() {
        let m = NodeMemo::default();
        let (a, b, c) = (claim("a", "gpu"), claim("b", "gpu"), claim("c", "fpga"));
        assert_eq!(m.shape_id(&[&a]), m.shape_id(&[&b]));
        assert_ne!(m.shape_id(&[&a]), m.shape_id(&[&c]));
        assert_ne!(m.shape_id(&[&a]), m.shape_id(&[&a, &b]));
    }

    #[test]
    fn an_answer_is_found_only_under_its_node_key_and_versions() {
        let m = NodeMemo::default();
        let n = node("n1");
        let key = MemoKey {
            slices: 3,
            classes: 1,
            shape: 0,
        };
        m.put(&n, key, vec![5], answer("dev-0"));
        assert_eq!(m.get(&n, key, [5]), Some(answer("dev-0")));
        // Item 5: a pool's holdings changed.
        assert_eq!(m.get(&n, key, [6]), None);
        // Items 2-4.
        for other in [
            MemoKey { slices: 4, ..key },
            MemoKey { classes: 2, ..key },
            MemoKey { shape: 1, ..key },
        ] {
            assert_eq!(m.get(&n, other, [5]), None);
        }
        // Item 1: another object of the same node (its labels may differ).
        assert_eq!(m.get(&node("n1"), key, [5]), None);
        // A newer answer for the same key replaces the old one.
        m.put(&n, key, vec![6], None);
        assert_eq!(m.get(&n, key, [5]), None);
        assert_eq!(m.get(&n, key, [6]), Some(None));
    }

    #[test]
    fn a_node_keeps_at_most_its_share_of_shapes() {
        let m = NodeMemo::default();
        let n = node("n2");
        let key = |shape| MemoKey {
            slices: 0,
            classes: 0,
            shape,
        };
        for s in 0..(PER_NODE as u64 + 1) {
            m.put(&n, key(s), vec![], None);
        }
        assert_eq!(
            m.get(&n, key(0), std::iter::empty()),
            None,
            "the oldest went"
        );
        assert_eq!(
            m.get(&n, key(PER_NODE as u64), std::iter::empty()),
            Some(None)
        );
        assert_eq!(m.get(&n, key(1), std::iter::empty()), Some(None));
    }
}
