//! What NodeResourcesFit scores of an extended resource that a DeviceClass backs, on a node
//! that does not offer it itself (DRAExtendedResource; kube v1.37.2's
//! `noderesources/resource_allocation.go`: `getDRAPreScoredParams`,
//! `calculateDRAResourceTotals`): the node's allocatable is the number of devices of the
//! class that reach the node, its allocated the number of those held (allocated whole, in
//! flight, or shared).
//!
//! # Protocol
//!
//! PreScore takes a [`DraScores`] when some scored resource is backed by a class: the slices
//! and the devices held, once per cycle. Score asks it per node and resource. Which devices
//! of a node a class selects is kept per class and node until the slices change (a device's
//! attributes change only with its slice), so a cycle evaluates no CEL once the cluster is
//! seen. A selector that fails to evaluate makes the resource unscored on the node (kube
//! logs the error and counts nothing).

use super::allocator::SelectorEval;
use super::cel::CelSelectors;
use super::pools::node_matches;
use crate::api::dra::{DeviceClass, DeviceId, NodeSelection, ResourceSlice};
use crate::api::{Node, Sym};
use crate::framework::dra_manager::{AllocatedDevices, DraManager, SliceIndex};
use ahash::AHashMap;
use parking_lot::RwLock;
use std::sync::Arc;

/// NodeResourcesFit's DRA side: the class selectors' compiled programs and the devices each
/// class selects per node.
pub(crate) struct ExtendedScoring {
    dra: Arc<DraManager>,
    cel: CelSelectors,
    selected: RwLock<SelectedMemo>,
}

/// The class an entry was made for, and the devices it selects (`None`: a selector failed).
type SelectedDevices = (Arc<DeviceClass>, Option<Arc<[DeviceId]>>);

/// For the slices' generation: (class, node) → the class the entry was made for and the
/// devices it selects (`None`: a selector failed). Cleared when the slices change.
#[derive(Default)]
struct SelectedMemo {
    generation: u64,
    entries: AHashMap<(Arc<str>, Sym), SelectedDevices>,
}

impl std::fmt::Debug for ExtendedScoring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtendedScoring").finish_non_exhaustive()
    }
}

/// One cycle's view (kube's `draPreScoreState`).
pub(crate) struct DraScores {
    scoring: Arc<ExtendedScoring>,
    slices: Arc<SliceIndex>,
    allocated: AllocatedDevices,
}

impl ExtendedScoring {
    pub(crate) fn new(dra: Arc<DraManager>) -> ExtendedScoring {
        ExtendedScoring {
            dra,
            cel: CelSelectors::new(),
            selected: RwLock::default(),
        }
    }

    /// kube's `shouldDelegateResourceToDRA` without a node: some class backs `resource`.
    pub(crate) fn backed(&self, resource: Sym) -> bool {
        self.dra.class_for_extended_resource(resource).is_some()
    }

    /// kube's `getDRAPreScoredParams`: `None` when no resource of `resources` is backed.
    pub(crate) fn prepare(
        self: &Arc<Self>,
        resources: impl IntoIterator<Item = Sym>,
    ) -> Option<DraScores> {
        let any = resources.into_iter().any(|r| {
            crate::api::resource_names::is_dra_extended_resource_name(&r.as_arc()) && self.backed(r)
        });
        any.then(|| DraScores {
            scoring: self.clone(),
            slices: self.dra.slice_index(),
            allocated: self.dra.allocated_devices(true),
        })
    }
}

impl DraScores {
    /// kube's `calculateDRAExtendedResourceAllocatableRequest`: `(allocatable, allocated)`
    /// of `resource` on `node` from the class that backs it; `None` when none does, or its
    /// selectors fail.
    pub(crate) fn counts(&self, node: &Node, resource: Sym) -> Option<(i64, i64)> {
        let class = self.scoring.dra.class_for_extended_resource(resource)?;
        let devices = self.selected(&class, node)?;
        let held = devices
            .iter()
            .filter(|d| self.allocated.contains(d) || self.allocated.shared(d))
            .count();
        Some((devices.len() as i64, held as i64))
    }

    /// The devices of `class` that reach `node`, kept until the slices or the class change.
    fn selected(&self, class: &Arc<DeviceClass>, node: &Node) -> Option<Arc<[DeviceId]>> {
        let key = (class.name.clone(), node.name);
        let generation = self.slices.generation;
        {
            let memo = self.scoring.selected.read();
            if memo.generation == generation
                && let Some((c, devices)) = memo.entries.get(&key)
                && Arc::ptr_eq(c, class)
            {
                return devices.clone();
            }
        }
        let devices = self.select(class, node);
        let mut memo = self.scoring.selected.write();
        if memo.generation != generation {
            memo.entries.clear();
            memo.generation = generation;
        }
        memo.entries.insert(key, (class.clone(), devices.clone()));
        devices
    }

    /// kube's `calculateDRAResourceTotals`, over the slices that may reach the node.
    fn select(&self, class: &DeviceClass, node: &Node) -> Option<Arc<[DeviceId]>> {
        let mut out = Vec::new();
        for slice in self.slices.for_node(node.name).iter() {
            let whole = node_matches(node, &slice.nodes);
            for (index, d) in slice.devices.iter().enumerate() {
                let here = match (&slice.nodes, &d.nodes) {
                    (NodeSelection::PerDevice, Some(n)) => node_matches(node, n),
                    (NodeSelection::PerDevice, None) => false,
                    _ => whole,
                };
                if here && self.class_selects(class, slice, index)? {
                    out.push(DeviceId {
                        driver: slice.driver,
                        pool: Sym::new(&slice.pool),
                        device: d.name_sym,
                    });
                }
            }
        }
        Some(out.into())
    }

    /// kube's `deviceMatchesClass`: every selector of the class accepts the device; `None`
    /// when one fails to evaluate.
    fn class_selects(
        &self,
        class: &DeviceClass,
        slice: &ResourceSlice,
        index: usize,
    ) -> Option<bool> {
        for expr in &class.selectors {
            if !self.scoring.cel.matches(expr, slice, index).ok()? {
                return Some(false);
            }
        }
        Some(true)
    }
}

#[cfg(test)]
mod tests {
    //! Provenance: pkg/scheduler/framework/plugins/noderesources/resource_allocation_test.go
    //! (the DRA extended resource cases: allocatable from the class's devices on the node,
    //! allocated from the devices held).
    use super::*;
    use crate::framework::events::{ApiObject, EventResource};
    use crate::framework::node_info::NodeInfo;
    use crate::plugins::resource_allocation::test_util;
    use crate::plugins::resource_allocation::{ResourceAllocationScorer, ResourceSpec, Strategy};
    use k8s_openapi::api::resource::v1 as k;
    use serde_json::{Value, json};

    fn apply<T: serde::de::DeserializeOwned + Send + Sync + 'static>(
        m: &DraManager,
        r: EventResource,
        v: Value,
    ) {
        let o = ApiObject(Arc::new(serde_json::from_value::<T>(v).unwrap()));
        m.apply(r, None, Some(&o));
    }

    fn slice(m: &DraManager, node: &str, driver: &str, devices: usize) {
        let devs: Vec<Value> = (0..devices)
            .map(|i| json!({"name": format!("d{i}")}))
            .collect();
        apply::<k::ResourceSlice>(
            m,
            EventResource::ResourceSlice,
            json!({"metadata": {"name": format!("{node}-{driver}")},
                   "spec": {"driver": driver, "nodeName": node, "devices": devs,
                            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}}}),
        );
    }

    /// Class `gpu` (driver `d` only) backs example.com/gpu; n1 has 4 of its devices, one
    /// held by a claim; n2 has 2, and 1 of another driver; n3 has none.
    fn cluster() -> Arc<DraManager> {
        let m = Arc::new(DraManager::default());
        apply::<k::DeviceClass>(
            &m,
            EventResource::DeviceClass,
            json!({"metadata": {"name": "gpu"},
                   "spec": {"extendedResourceName": "example.com/gpu",
                            "selectors": [{"cel": {"expression": "device.driver == \"d\""}}]}}),
        );
        slice(&m, "n1", "d", 4);
        slice(&m, "n2", "d", 2);
        slice(&m, "n2", "other", 1);
        apply::<k::ResourceClaim>(
            &m,
            EventResource::ResourceClaim,
            json!({"metadata": {"name": "c", "namespace": "ns", "uid": "c"},
                   "spec": {},
                   "status": {"allocation": {"devices": {"results": [
                       {"request": "r", "driver": "d", "pool": "n1", "device": "d0"}]}}}}),
        );
        m
    }

    #[test]
    fn counts_the_class_devices_on_the_node_and_those_held() {
        let m = cluster();
        let scoring = Arc::new(ExtendedScoring::new(m));
        let gpu = Sym::new("example.com/gpu");
        assert!(scoring.prepare([Sym::new("example.com/other")]).is_none());
        let s = scoring
            .prepare([gpu])
            .expect("a class backs example.com/gpu");
        let node = |n: &str| test_util::node(n, &[("cpu", "4")]);
        assert_eq!(s.counts(&node("n1"), gpu), Some((4, 1)));
        assert_eq!(s.counts(&node("n2"), gpu), Some((2, 0)));
        assert_eq!(s.counts(&node("n3"), gpu), Some((0, 0)));
        // The implicit name is backed too; a resource no class backs is not.
        let implicit = Sym::new("deviceclass.resource.kubernetes.io/gpu");
        assert_eq!(s.counts(&node("n1"), implicit), Some((4, 1)));
        assert_eq!(s.counts(&node("n1"), Sym::new("example.com/other")), None);
    }

    #[test]
    fn least_allocated_scores_the_devices_left() {
        let m = cluster();
        let scoring = Arc::new(ExtendedScoring::new(m));
        let gpu = Sym::new("example.com/gpu");
        let s = scoring.prepare([gpu]).unwrap();
        let scorer = ResourceAllocationScorer::new(
            &[ResourceSpec::new("example.com/gpu", 1)],
            false,
            Strategy::LeastAllocated,
        );
        let pod = test_util::pod("p", None, &[&[("example.com/gpu", "1")]]);
        let reqs = scorer.pod_requests(&pod);
        let counts = |n: &NodeInfo, r: Sym| s.counts(&n.node, r);
        let score = |name: &str, offered: &[(&str, &str)]| {
            let ni = &test_util::node_infos(&[test_util::node(name, offered)], &[])[0];
            (
                scorer.score_with(ni, &reqs, Some(&counts)),
                scorer.score(ni, &reqs),
            )
        };
        // n1: (4 - (1 + 1)) / 4; n2: (2 - 1) / 2; n3: no devices, unscored.
        assert_eq!(score("n1", &[]), (50, 0));
        assert_eq!(score("n2", &[]), (50, 0));
        assert_eq!(score("n3", &[]), (0, 0));
        // A node that offers the resource itself is scored from its allocatable.
        assert_eq!(score("n1", &[("example.com/gpu", "10")]), (90, 90));
    }
}
