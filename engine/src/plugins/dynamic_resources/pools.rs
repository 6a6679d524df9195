//! The resource pools a node can allocate from (kube v1.37.2
//! `k8s.io/dynamic-resource-allocation/structured/internal/stable/pools_stable.go`,
//! `GatherPools`).
//!
//! A pool is the slices of one driver with one pool name. Only the slices of its newest
//! generation count. A pool is **incomplete** while fewer slices of that generation exist
//! than `resourceSliceCount` says (nothing is allocated from it; a request for `All` devices
//! fails), and **invalid** when two of its device slices name the same device or a device
//! draws from a counter set (or counter) the pool does not have.
//!
//! Without DRADeviceCompatibilityGroups, a slice whose devices declare compatibility groups
//! is ignored, and does not count towards its pool's slices (the pool is incomplete).
//!
//! Order: kube walks its pools in Go's map order, which is random; tidegate sorts them by
//! driver and pool name, one of the orders kube may take.

use super::AllocatorFeatures;
use crate::api::dra::{NodeSelection, ResourceSlice};
use crate::api::{Node, Quantity, Sym};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// A pool's identity: driver and pool name.
pub(crate) type PoolId = (Sym, Arc<str>);

/// Counter set name → counter name → value.
pub(crate) type CounterSets = BTreeMap<Arc<str>, BTreeMap<Arc<str>, Quantity>>;

/// kube's `Pool`.
#[derive(Clone, Debug)]
pub(crate) struct Pool {
    pub(crate) id: PoolId,
    pub(crate) incomplete: bool,
    /// Why the pool is invalid, when it is.
    pub(crate) invalid: Option<String>,
    /// Its device slices that reach the node.
    pub(crate) targeting: Vec<Arc<ResourceSlice>>,
    /// Its device slices that do not (counters they consume count all the same).
    pub(crate) not_targeting: Vec<Arc<ResourceSlice>>,
    pub(crate) counter_sets: CounterSets,
}

impl Pool {
    /// The pool's name, interned (its devices' [`crate::api::dra::DeviceId`] part).
    pub(crate) fn sym(&self) -> Sym {
        (self.targeting.iter().chain(&self.not_targeting))
            .next()
            .map_or_else(|| Sym::new(&self.id.1), |s| s.pool_sym)
    }
}

/// kube's `NodeMatches`: whether `sel` reaches `node`.
pub(crate) fn node_matches(node: &Node, sel: &NodeSelection) -> bool {
    match sel {
        NodeSelection::Node(n) => *n == node.name,
        NodeSelection::AllNodes => true,
        NodeSelection::Selector(s) => s.matches(node.name, &node.labels),
        NodeSelection::PerDevice => false,
    }
}

/// Whether a slice (or, with per-device node selection, one of its devices) reaches the node.
fn slice_reaches(node: &Node, s: &ResourceSlice) -> bool {
    match &s.nodes {
        NodeSelection::PerDevice => s
            .devices
            .iter()
            .any(|d| d.nodes.as_ref().is_some_and(|n| node_matches(node, n))),
        other => node_matches(node, other),
    }
}

/// Every slice, which a pool missing some of its slices among the node's is checked
/// against: a list, or indexed by pool.
#[derive(Clone, Copy)]
pub(crate) enum AllSlices<'a> {
    List(&'a [Arc<ResourceSlice>]),
    ByPool(&'a ahash::AHashMap<PoolId, Vec<Arc<ResourceSlice>>>),
}

impl<'a> AllSlices<'a> {
    fn of_pool(self, id: &'a PoolId) -> impl Iterator<Item = &'a Arc<ResourceSlice>> {
        let (list, pool) = match self {
            AllSlices::List(l) => (l, &[][..]),
            AllSlices::ByPool(m) => (&[][..], m.get(id).map_or(&[][..], Vec::as_slice)),
        };
        (list.iter())
            .filter(move |s| s.driver == id.0 && s.pool == id.1)
            .chain(pool)
    }
}

/// The pools that reach a node only through their counter slices (kube reads every pool's
/// counter slices on every node), as [`gather_pools`] finds them: the same on every node,
/// so derived once per slice index. Only the incomplete and invalid ones are kept: a
/// complete, valid pool without a device for the node gives the allocator nothing.
pub(crate) fn remote_pools(
    index: &crate::framework::dra_manager::SliceIndex,
    features: AllocatorFeatures,
) -> Arc<Vec<Pool>> {
    type Memo = (AllocatorFeatures, Arc<Vec<Pool>>);
    let build = || {
        let nowhere = Node::named("");
        let mut out = Vec::new();
        let mut ids: Vec<&PoolId> = index.counters.keys().collect();
        ids.sort();
        for id in ids {
            let pools = gather_pools(
                &index.counters[id],
                AllSlices::ByPool(&index.by_pool),
                &nowhere,
                features,
                &[],
            );
            out.extend(
                pools
                    .into_iter()
                    .filter(|p| p.incomplete || p.invalid.is_some()),
            );
        }
        Arc::new(out)
    };
    let memo = index
        .memo
        .get_or_init(|| Box::new((features, build())) as Box<dyn std::any::Any + Send + Sync>);
    match memo.downcast_ref::<Memo>() {
        Some((f, pools)) if *f == features => pools.clone(),
        _ => build(),
    }
}

/// [`gather_pools`] for `node` over every slice of `index`, kept in the index per node: a
/// new index (any slice changed) starts afresh, and so does a node whose object changed (its
/// labels decide which slices' node selectors reach it; the memo holds the object it was
/// computed for and compares by pointer, so that object cannot be freed and its address
/// reused meanwhile). Filter asks once per node and cycle; what it saves is gathering the
/// same pools again for every pod.
pub(crate) fn node_pools(
    index: &crate::framework::dra_manager::SliceIndex,
    node: &Arc<Node>,
    features: AllocatorFeatures,
) -> Arc<Vec<Pool>> {
    type Memo = (Arc<Node>, AllocatorFeatures, Arc<Vec<Pool>>);
    if let Some(m) = index.node_memo.read().get(&node.name)
        && let Some((n, f, pools)) = m.downcast_ref::<Memo>()
        && Arc::ptr_eq(n, node)
        && *f == features
    {
        return pools.clone();
    }
    let remote = remote_pools(index, features);
    let pools = Arc::new(gather_pools(
        &index.for_node(node.name),
        AllSlices::ByPool(&index.by_pool),
        node,
        features,
        &remote,
    ));
    let memo: Memo = (node.clone(), features, pools.clone());
    index.node_memo.write().insert(node.name, Arc::new(memo));
    pools
}

/// kube's `GatherPools` for `node`. `slices` may leave out slices of other nodes (a
/// [`crate::framework::dra_manager::SliceIndex`]'s candidates, with [`remote_pools`] for
/// the pools they leave out that still count); `all` is every slice, which only a pool
/// missing some of its slices here is checked against.
pub(crate) fn gather_pools(
    slices: &[Arc<ResourceSlice>],
    all: AllSlices<'_>,
    node: &Node,
    features: AllocatorFeatures,
    remote: &[Pool],
) -> Vec<Pool> {
    let mut pools: BTreeMap<PoolId, Vec<Arc<ResourceSlice>>> = BTreeMap::new();
    for s in slices {
        let partitioned =
            matches!(s.nodes, NodeSelection::PerDevice) || !s.shared_counters.is_empty();
        if !features.partitionable_devices && partitioned {
            continue;
        }
        // Without DRADeviceCompatibilityGroups the groups cannot be honoured: the slice is
        // ignored, which leaves its pool incomplete.
        if !features.compatibility_groups && s.uses_compatibility_groups {
            continue;
        }
        if s.shared_counters.is_empty() && !slice_reaches(node, s) {
            continue;
        }
        add_slice(&mut pools, s);
    }
    let mut out = Vec::with_capacity(pools.len());
    for (id, for_pool) in pools {
        let (generation, count) = (for_pool[0].pool_generation, for_pool[0].pool_slice_count);
        if for_pool.len() as i64 == count {
            out.push(build_pool(id, for_pool, features, None));
            continue;
        }
        // Some slices of the pool do not reach the node: are the others there (complete),
        // or is a newer generation being published (obsolete)?
        let mut same = Vec::new();
        let mut obsolete = false;
        for s in all.of_pool(&id) {
            if s.pool_generation > generation {
                obsolete = true;
                break;
            }
            if s.pool_generation == generation
                && (features.compatibility_groups || !s.uses_compatibility_groups)
            {
                same.push(s.clone());
            }
        }
        if obsolete {
            continue;
        }
        if same.len() as i64 != count {
            out.push(Pool {
                id,
                incomplete: true,
                invalid: None,
                targeting: Vec::new(),
                not_targeting: Vec::new(),
                counter_sets: BTreeMap::new(),
            });
            continue;
        }
        out.push(build_pool(id, for_pool, features, Some(same)));
    }
    if !remote.is_empty() {
        let here: BTreeSet<PoolId> = out.iter().map(|p| p.id.clone()).collect();
        out.extend(remote.iter().filter(|p| !here.contains(&p.id)).cloned());
        out.sort_by(|a, b| a.id.cmp(&b.id));
    }
    out
}

/// kube's `addSlice`: a pool keeps the slices of its newest generation.
fn add_slice(pools: &mut BTreeMap<PoolId, Vec<Arc<ResourceSlice>>>, s: &Arc<ResourceSlice>) {
    let id = (s.driver, s.pool.clone());
    let for_pool = pools.entry(id).or_default();
    match for_pool.first().map(|f| f.pool_generation) {
        Some(g) if s.pool_generation < g => {}
        Some(g) if s.pool_generation > g => *for_pool = vec![s.clone()],
        _ => for_pool.push(s.clone()),
    }
}

fn invalid(id: PoolId, why: String) -> Pool {
    Pool {
        id,
        incomplete: false,
        invalid: Some(why),
        targeting: Vec::new(),
        not_targeting: Vec::new(),
        counter_sets: BTreeMap::new(),
    }
}

/// kube's `buildPool`.
fn build_pool(
    id: PoolId,
    slices: Vec<Arc<ResourceSlice>>,
    features: AllocatorFeatures,
    all: Option<Vec<Arc<ResourceSlice>>>,
) -> Pool {
    let (counter_slices, device_slices): (Vec<_>, Vec<_>) = if features.partitionable_devices {
        slices
            .iter()
            .cloned()
            .partition(|s| !s.shared_counters.is_empty())
    } else {
        (Vec::new(), slices.clone())
    };
    // One slice never names a device twice (its conversion refuses that), so only a pool of
    // several device slices needs the check.
    if device_slices.len() > 1 {
        let mut names = BTreeSet::new();
        for d in device_slices.iter().flat_map(|s| &s.devices) {
            if !names.insert(d.name.clone()) {
                return invalid(id, format!("duplicate device name {}", d.name));
            }
        }
    }
    if !features.partitionable_devices {
        return Pool {
            id,
            incomplete: false,
            invalid: None,
            targeting: device_slices,
            not_targeting: Vec::new(),
            counter_sets: CounterSets::new(),
        };
    }
    let mut counter_sets = CounterSets::new();
    for s in &counter_slices {
        for (name, counters) in &s.shared_counters {
            if counter_sets
                .insert(name.clone(), counters.clone())
                .is_some()
            {
                return invalid(id, format!("duplicate counter set name {name}"));
            }
        }
    }
    if let Err(e) = validate_consumption(&counter_sets, &slices) {
        return invalid(id, e);
    }
    let not_targeting: Vec<Arc<ResourceSlice>> = match all {
        None => Vec::new(),
        Some(all) => {
            let targeting: BTreeSet<&str> = slices.iter().map(|s| &*s.name).collect();
            all.into_iter()
                .filter(|s| !targeting.contains(&*s.name))
                .collect()
        }
    };
    if let Err(e) = validate_consumption(&counter_sets, &not_targeting) {
        return invalid(id, e);
    }
    Pool {
        id,
        incomplete: false,
        invalid: None,
        targeting: device_slices,
        not_targeting,
        counter_sets,
    }
}

/// kube's `validateDeviceCounterConsumption`.
fn validate_consumption(sets: &CounterSets, slices: &[Arc<ResourceSlice>]) -> Result<(), String> {
    for d in slices
        .iter()
        .filter(|s| s.draws_counters)
        .flat_map(|s| &s.devices)
    {
        for c in &d.consumes_counters {
            let Some(set) = sets.get(&c.counter_set) else {
                return Err(format!("counter set {} not found", c.counter_set));
            };
            if let Some(name) = c.counters.keys().find(|n| !set.contains_key(*n)) {
                return Err(format!(
                    "counter {name} not found in counter set {}",
                    c.counter_set
                ));
            }
        }
    }
    Ok(())
}

/// `metadata.name`, interned once (a node selector is built for every node's result).
static METADATA_NAME: std::sync::LazyLock<Sym> =
    std::sync::LazyLock::new(|| Sym::new("metadata.name"));

/// kube's `createNodeSelector`: where an allocation of these devices can be used.
pub(super) fn allocation_node_selector<'c>(
    devices: impl Iterator<Item = (&'c ResourceSlice, &'c crate::api::dra::Device)>,
) -> Option<crate::api::labels::NodeSelector> {
    use crate::api::labels::{NodeSelector, NodeSelectorTerm, Operator, Requirement};
    let mut term = NodeSelectorTerm::default();
    for (slice, device) in devices {
        let sel = match &slice.nodes {
            NodeSelection::PerDevice => device.nodes.as_ref(),
            other => Some(other),
        };
        match sel {
            Some(NodeSelection::Node(n)) => {
                return Some(NodeSelector {
                    terms: vec![NodeSelectorTerm {
                        match_expressions: Vec::new(),
                        match_fields: vec![Requirement {
                            key: *METADATA_NAME,
                            op: Operator::In,
                            values: vec![*n],
                            int_value: 0,
                        }],
                    }],
                });
            }
            Some(NodeSelection::Selector(s)) => {
                if let Some(t) = s.terms.first() {
                    for r in &t.match_fields {
                        if !term.match_fields.contains(r) {
                            term.match_fields.push(r.clone());
                        }
                    }
                    for r in &t.match_expressions {
                        if !term.match_expressions.contains(r) {
                            term.match_expressions.push(r.clone());
                        }
                    }
                }
            }
            _ => {}
        }
    }
    (!term.match_fields.is_empty() || !term.match_expressions.is_empty())
        .then(|| NodeSelector { terms: vec![term] })
}
