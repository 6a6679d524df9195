//! TopologyPlacementGenerator (PlacementGenerate, behind `TopologyAwareWorkloadScheduling`):
//! splits the nodes of the parent placement into one placement per topology domain of the
//! pod group's topology constraint, so that the pod-group cycle tries to place the whole group
//! inside one domain (kube v1.37.2
//! `pkg/scheduler/framework/plugins/topologyaware/topology_placement.go`).
//!
//! Protocol, as kube's `GeneratePlacements`:
//!
//! 1. **No constraint** (`spec.schedulingConstraints.topology` empty): the parent placement
//!    itself is the only placement.
//! 2. **The key**: the first topology constraint's key (the API allows one).
//! 3. **Already scheduled members** (assigned or assumed pods of the group, kube's
//!    `PodGroupState.ScheduledPods`): their nodes' values of the key must all be one domain;
//!    only that domain is generated. A member whose node is not in the snapshot, a node
//!    without the key, or two domains are an Error status
//!    (`cannot determine domain for already scheduled pods: …`).
//! 4. **Domains**: each node of the parent placement that has the key joins its value's
//!    placement (named by the value); nodes without the key are in no placement. With no
//!    node in the required domain, or no node with the key, there are no placements (Success).
//!
//! Order: kube builds the placements from a Go map, so their order is random; here they come
//! in the order each domain first appears among the parent's nodes, and each placement's
//! nodes keep the parent's order (kube's too).

use crate::api::{Labels, Sym};
use crate::framework::interface::{PlacementGeneratePlugin, Plugin};
use crate::framework::pod_group::{
    GeneratePlacementsResult, Placement, PodGroupCycleState, PodGroupInfo,
};
use crate::framework::pod_group_state::PodGroupStates;
use crate::framework::{NodeInfo, Status};
use ahash::AHashMap;
use std::sync::Arc;

pub(crate) const NAME: &str = "TopologyPlacementGenerator";

/// The plugin: it reads the group's scheduled members from the scheduler's pod-group states
/// (kube: the snapshot's `PodGroupStates`).
pub(crate) struct TopologyPlacement {
    groups: Arc<PodGroupStates>,
    /// The last split of the parent's nodes by domain, reused while the parent holds the same
    /// node objects in the same order (see [`DomainSplit`]).
    split: parking_lot::Mutex<Option<DomainSplit>>,
}

impl TopologyPlacement {
    pub(crate) fn new(groups: Arc<PodGroupStates>) -> TopologyPlacement {
        TopologyPlacement {
            groups,
            split: parking_lot::Mutex::new(None),
        }
    }

    /// [`placements_by_domain`] through the kept split: a cycle's parent is the snapshot's
    /// node list, which changes its node objects only when a node is added, removed or
    /// updated (a pod's arrival replaces the `NodeInfo`, not its `Node`), so most cycles
    /// check one pointer per node instead of reading every node's labels.
    fn placements(&self, key: Sym, required: Option<Sym>, parent: &Placement) -> Vec<Placement> {
        let mut split = self.split.lock();
        if !split.as_ref().is_some_and(|s| s.holds(key, &parent.nodes)) {
            *split = Some(DomainSplit::of(key, &parent.nodes));
        }
        let s = split.as_ref().expect("just set");
        s.domains
            .iter()
            .filter(|(d, _)| required.is_none_or(|r| r == *d))
            .map(|(d, idx)| Placement {
                name: d.to_string_lossy(),
                nodes: idx.iter().map(|&i| parent.nodes[i].clone()).collect(),
            })
            .collect()
    }
}

/// The parent's nodes split by their value of `key`: per domain (in order of first
/// appearance) the indices of its nodes. Valid for a node list that holds these very `Node`
/// objects in this order: labels live in the `Node`, which an update replaces (the `Arc`s
/// kept here stop an address from being reused by another node).
struct DomainSplit {
    key: Sym,
    nodes: Vec<Arc<crate::api::Node>>,
    domains: Vec<(Sym, Vec<usize>)>,
}

impl DomainSplit {
    fn of(key: Sym, parent: &[Arc<NodeInfo>]) -> DomainSplit {
        let mut domains: Vec<(Sym, Vec<usize>)> = Vec::new();
        // Domain → its index in `domains` (one hash lookup per node).
        let mut index: AHashMap<Sym, usize> = AHashMap::new();
        for (i, ni) in parent.iter().enumerate() {
            let labels: &Labels = &ni.node.labels;
            let Some(d) = labels.get(key) else { continue };
            match index.get(&d) {
                Some(&j) => domains[j].1.push(i),
                None => {
                    index.insert(d, domains.len());
                    domains.push((d, vec![i]));
                }
            }
        }
        DomainSplit {
            key,
            nodes: parent.iter().map(|ni| ni.node.clone()).collect(),
            domains,
        }
    }

    fn holds(&self, key: Sym, parent: &[Arc<NodeInfo>]) -> bool {
        self.key == key
            && self.nodes.len() == parent.len()
            && self
                .nodes
                .iter()
                .zip(parent)
                .all(|(a, b)| Arc::ptr_eq(a, &b.node))
    }
}

impl Plugin for TopologyPlacement {
    fn name(&self) -> &'static str {
        NAME
    }
    fn into_placement_generate(self: Arc<Self>) -> Option<Arc<dyn PlacementGeneratePlugin>> {
        Some(self)
    }
}

impl PlacementGeneratePlugin for TopologyPlacement {
    /// kube's `GeneratePlacements`. The scheduled members' nodes are looked up among the
    /// parent's nodes: for a root group the parent placement is every node of the cycle's
    /// snapshot; for a child of a composite group, the placement its parent is tried in.
    fn generate_placements(
        &self,
        _state: &mut PodGroupCycleState,
        pod_group: &PodGroupInfo,
        parent: &Placement,
    ) -> (GeneratePlacementsResult, Status) {
        let keys: &[Sym] = pod_group
            .pod_group
            .as_ref()
            .map_or(&[], |g| &g.topology_keys[..]);
        // A composite group's scheduled members are its leaves' (kube's `GetPodGroupStates`).
        let scheduled: Vec<(String, Sym)> = if keys.is_empty() {
            Vec::new()
        } else {
            pod_group
                .leaves()
                .into_iter()
                .filter_map(|l| self.groups.get(&l.key))
                .flat_map(|s| {
                    s.scheduled_pods()
                        .map(|p| (p.key.to_string(), p.node_name.unwrap_or(Sym::EMPTY)))
                        .collect::<Vec<_>>()
                })
                .collect()
        };
        let by_name: AHashMap<Sym, &NodeInfo> = if scheduled.is_empty() {
            AHashMap::new()
        } else {
            parent.nodes.iter().map(|n| (n.name(), &**n)).collect()
        };
        let split = |key, required| self.placements(key, required, parent);
        match generate_placements_with(
            keys,
            &scheduled,
            &|n| by_name.get(&n).copied(),
            parent,
            &split,
        ) {
            Ok(placements) => (
                GeneratePlacementsResult {
                    placements: placements.into_iter().map(Arc::new).collect(),
                },
                Status::success(),
            ),
            Err(st) => (GeneratePlacementsResult::default(), st),
        }
    }
}

/// A node of the cycle's snapshot by name.
pub(crate) type NodeLookup<'a> = &'a dyn Fn(Sym) -> Option<&'a NodeInfo>;

/// kube's `getScheduledPodsTopologyDomain`: the one domain of `key` that the nodes of the
/// group's scheduled pods share. `scheduled`: (pod as `namespace/name`, its node) of every
/// scheduled member. `Ok(None)` when there is none.
pub(crate) fn scheduled_pods_domain(
    key: Sym,
    scheduled: &[(String, Sym)],
    node_info: NodeLookup<'_>,
) -> Result<Option<Sym>, String> {
    let mut domain: Option<Sym> = None;
    for (pod, node) in scheduled {
        let Some(ni) = node_info(*node) else {
            return Err(format!(
                "getting node for pod {pod}: nodeinfo not found for node name {:?}",
                node.to_string_lossy()
            ));
        };
        let Some(d) = ni.node.labels.get(key) else {
            return Err(format!("no topology domain found for pod {pod}"));
        };
        if let Some(prev) = domain
            && prev != d
        {
            return Err(format!(
                "more than 1 domain found for pod group: {}, {}",
                prev.to_string_lossy(),
                d.to_string_lossy()
            ));
        }
        domain = Some(d);
    }
    Ok(domain)
}

/// kube's `GeneratePlacements` after the key is known: the parent's nodes split by their value
/// of `key` (only `required`'s when set), each domain once, in order of first appearance.
/// The plain form of what the plugin does through its kept [`DomainSplit`]; the tests hold
/// the two to the same answers.
#[cfg(test)]
pub(crate) fn placements_by_domain(
    key: Sym,
    required: Option<Sym>,
    parent: &[Arc<NodeInfo>],
) -> Vec<Placement> {
    let mut out: Vec<(Sym, Vec<Arc<NodeInfo>>)> = Vec::new();
    // Domain → its index in `out` (one hash lookup per node, not a walk over the domains).
    let mut index: AHashMap<Sym, usize> = AHashMap::new();
    for ni in parent {
        let labels: &Labels = &ni.node.labels;
        let Some(d) = labels.get(key) else { continue };
        if required.is_some_and(|r| r != d) {
            continue;
        }
        match index.get(&d) {
            Some(&i) => out[i].1.push(ni.clone()),
            None => {
                index.insert(d, out.len());
                out.push((d, vec![ni.clone()]));
            }
        }
    }
    out.into_iter()
        .map(|(d, nodes)| Placement {
            name: d.to_string_lossy(),
            nodes,
        })
        .collect()
}

/// The whole of kube's `GeneratePlacements`: `topology_keys` are the group's constraint keys
/// (the first counts), `scheduled` its scheduled members, `parent` the parent placement.
#[cfg(test)]
pub(crate) fn generate_placements(
    topology_keys: &[Sym],
    scheduled: &[(String, Sym)],
    node_info: NodeLookup<'_>,
    parent: &Placement,
) -> Result<Vec<Placement>, Status> {
    generate_placements_with(
        topology_keys,
        scheduled,
        node_info,
        parent,
        &|key, required| placements_by_domain(key, required, &parent.nodes),
    )
}

/// [`generate_placements`] with the split by domain done by `split(key, required domain)`.
fn generate_placements_with(
    topology_keys: &[Sym],
    scheduled: &[(String, Sym)],
    node_info: NodeLookup<'_>,
    parent: &Placement,
    split: &dyn Fn(Sym, Option<Sym>) -> Vec<Placement>,
) -> Result<Vec<Placement>, Status> {
    let Some(&key) = topology_keys.first() else {
        return Ok(vec![parent.clone()]);
    };
    let required = if scheduled.is_empty() {
        None
    } else {
        scheduled_pods_domain(key, scheduled, node_info).map_err(|e| {
            Status::error(format!(
                "cannot determine domain for already scheduled pods: {e}"
            ))
        })?
    };
    Ok(split(key, required))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Node;
    use crate::framework::{Code, Snapshot};

    fn node(name: &str, labels: &[(&str, &str)]) -> Arc<NodeInfo> {
        let mut n = Node::named(name);
        n.labels = Arc::new(Labels::from_pairs(labels.iter().copied()));
        Arc::new(NodeInfo::new(Arc::new(n)))
    }

    fn snapshot(nodes: &[Arc<NodeInfo>]) -> Snapshot {
        let mut s = Snapshot::default();
        for (i, n) in nodes.iter().enumerate() {
            s.index.insert(n.name(), i);
            s.nodes.push(n.clone());
        }
        s
    }

    struct Case {
        name: &'static str,
        key: Option<&'static str>,
        scheduled_on: &'static [&'static str],
        placement: Vec<Arc<NodeInfo>>,
        other: Vec<Arc<NodeInfo>>,
        /// (placement name, its nodes), sorted by name; `None`: an Error status.
        want: Option<Vec<(&'static str, Vec<&'static str>)>>,
    }

    // Ported from kubernetes/kubernetes pkg/scheduler/framework/plugins/topologyaware/topology_placement_test.go (v1.37.2)
    // (TestGeneratePlacements, the PodGroup cases; the CompositePodGroup ones need the
    // alpha CompositePodGroup gate, which tidegate does not model).
    fn cases() -> Vec<Case> {
        let six = || {
            vec![
                node("node0", &[("topology2", "d1")]),
                node("node1", &[("topology2", "d4")]),
                node("node2", &[("topology1", "d1")]),
                node("node3", &[("topology1", "d2")]),
                node("node4", &[("topology1", "d1")]),
                node("node5", &[("topology1", "d3")]),
            ]
        };
        vec![
            Case {
                name: "without constraint returns placement matching all nodes",
                key: None,
                scheduled_on: &[],
                placement: vec![node("node1", &[]), node("node2", &[("foo", "bar")])],
                other: vec![node("node3", &[])],
                want: Some(vec![("test-placement", vec!["node1", "node2"])]),
            },
            Case {
                name: "with topology key constraint, returns placement for each topology domain",
                key: Some("topology1"),
                scheduled_on: &[],
                placement: six(),
                other: vec![],
                want: Some(vec![
                    ("d1", vec!["node2", "node4"]),
                    ("d2", vec!["node3"]),
                    ("d3", vec!["node5"]),
                ]),
            },
            Case {
                name: "without matching topology label, returns empty",
                key: Some("topology3"),
                scheduled_on: &[],
                placement: six(),
                other: vec![],
                want: Some(vec![]),
            },
            Case {
                name: "with pods already scheduled in a single domain, returns that domain",
                key: Some("topology"),
                scheduled_on: &["node2", "node3"],
                placement: vec![
                    node("node0", &[("topology", "d2")]),
                    node("node1", &[("topology", "d1")]),
                ],
                other: vec![
                    node("node2", &[("topology", "d1")]),
                    node("node3", &[("topology", "d1")]),
                ],
                want: Some(vec![("d1", vec!["node1"])]),
            },
            Case {
                name: "with pods already scheduled in a single domain not present in current placement, returns empty",
                key: Some("topology"),
                scheduled_on: &["node2", "node3"],
                placement: vec![node("node0", &[("topology", "d2")])],
                other: vec![
                    node("node2", &[("topology", "d1")]),
                    node("node3", &[("topology", "d1")]),
                ],
                want: Some(vec![]),
            },
            Case {
                name: "with pods already scheduled in conflicting domains, returns error",
                key: Some("topology"),
                scheduled_on: &["node2", "node3"],
                placement: vec![
                    node("node0", &[("topology", "d2")]),
                    node("node1", &[("topology", "d1")]),
                ],
                other: vec![
                    node("node2", &[("topology", "d0")]),
                    node("node3", &[("topology", "d1")]),
                ],
                want: None,
            },
            Case {
                name: "with already scheduled pod on node outside of snapshot, returns error",
                key: Some("topology"),
                scheduled_on: &["node2", "node4"],
                placement: vec![
                    node("node0", &[("topology", "d2")]),
                    node("node1", &[("topology", "d1")]),
                ],
                other: vec![
                    node("node2", &[("topology", "d1")]),
                    node("node3", &[("topology", "d1")]),
                ],
                want: None,
            },
            Case {
                name: "with already scheduled pod on node without topology label, returns error",
                key: Some("topology"),
                scheduled_on: &["node2"],
                placement: vec![node("node1", &[("topology", "d2")])],
                other: vec![node("node2", &[("foo", "bar")])],
                want: None,
            },
        ]
    }

    /// The kept split answers as a fresh one does: for the same nodes, after a node's labels
    /// change (a new `Node`), after a node goes, and with a required domain.
    #[test]
    fn the_kept_split_follows_node_changes() {
        let names = |ps: &[Placement]| -> Vec<(String, Vec<String>)> {
            ps.iter()
                .map(|p| {
                    let nodes = p.nodes.iter().map(|n| n.name().to_string_lossy()).collect();
                    (p.name.clone(), nodes)
                })
                .collect()
        };
        let key = Sym::new("rack");
        let plugin = TopologyPlacement::new(Arc::new(PodGroupStates::default()));
        let mut nodes = vec![
            node("a", &[("rack", "r1")]),
            node("b", &[("rack", "r2")]),
            node("c", &[("rack", "r1")]),
            node("d", &[]),
        ];
        let check = |nodes: &[Arc<NodeInfo>], required: Option<Sym>| {
            let parent = Placement {
                name: String::new(),
                nodes: nodes.to_vec(),
            };
            let kept = plugin.placements(key, required, &parent);
            assert_eq!(
                names(&kept),
                names(&placements_by_domain(key, required, nodes))
            );
            names(&kept)
        };
        let first = check(&nodes, None);
        assert_eq!(first.len(), 2);
        assert_eq!(check(&nodes, None), first);
        nodes[1] = node("b", &[("rack", "r1")]);
        assert_eq!(check(&nodes, None).len(), 1);
        nodes[3] = node("d", &[("rack", "r3")]);
        assert_eq!(check(&nodes, None).len(), 2);
        nodes.remove(0);
        check(&nodes, None);
        assert_eq!(check(&nodes, Some(Sym::new("r3"))).len(), 1);
    }

    #[test]
    fn generate_placements_follows_kube_table() {
        for c in cases() {
            let all: Vec<Arc<NodeInfo>> = c.placement.iter().chain(&c.other).cloned().collect();
            let snap = snapshot(&all);
            let keys: Vec<Sym> = c.key.map(Sym::new).into_iter().collect();
            let scheduled: Vec<(String, Sym)> = c
                .scheduled_on
                .iter()
                .enumerate()
                .map(|(i, n)| (format!("default/pod{i}"), Sym::new(n)))
                .collect();
            let parent = Placement {
                name: "test-placement".into(),
                nodes: c.placement.clone(),
            };
            let lookup = |n: Sym| snap.get(n).map(|a| &**a);
            let got = generate_placements(&keys, &scheduled, &lookup, &parent);
            match (&c.want, got) {
                (None, Err(st)) => assert_eq!(st.code(), Code::Error, "{}", c.name),
                (None, Ok(p)) => panic!("{}: want an error, got {} placements", c.name, p.len()),
                (Some(_), Err(st)) => panic!("{}: unexpected {st:?}", c.name),
                (Some(want), Ok(got)) => {
                    let mut got: Vec<(String, Vec<String>)> = got
                        .iter()
                        .map(|p| {
                            (
                                p.name.to_string(),
                                p.nodes.iter().map(|n| n.name().to_string_lossy()).collect(),
                            )
                        })
                        .collect();
                    got.sort();
                    let want: Vec<(String, Vec<String>)> = want
                        .iter()
                        .map(|(n, ns)| (n.to_string(), ns.iter().map(|s| s.to_string()).collect()))
                        .collect();
                    assert_eq!(got, want, "{}", c.name);
                }
            }
        }
    }

    #[test]
    fn errors_carry_kube_messages() {
        let nodes = vec![
            node("a", &[("zone", "z1")]),
            node("b", &[("zone", "z2")]),
            node("c", &[]),
        ];
        let snap = snapshot(&nodes);
        let lookup = |n: Sym| snap.get(n).map(|a| &**a);
        let snap = &lookup;
        let zone = Sym::new("zone");
        let two = [
            ("ns/p0".to_string(), Sym::new("a")),
            ("ns/p1".to_string(), Sym::new("b")),
        ];
        assert_eq!(
            scheduled_pods_domain(zone, &two, snap).unwrap_err(),
            "more than 1 domain found for pod group: z1, z2"
        );
        let bare = [("ns/p0".to_string(), Sym::new("c"))];
        assert_eq!(
            scheduled_pods_domain(zone, &bare, snap).unwrap_err(),
            "no topology domain found for pod ns/p0"
        );
        let gone = [("ns/p0".to_string(), Sym::new("x"))];
        assert!(
            scheduled_pods_domain(zone, &gone, snap)
                .unwrap_err()
                .starts_with("getting node for pod ns/p0: ")
        );
        // Domains come in order of first appearance.
        let mixed = vec![
            node("n1", &[("zone", "z2")]),
            node("n2", &[("zone", "z1")]),
            node("n3", &[("zone", "z2")]),
        ];
        let got: Vec<String> = placements_by_domain(zone, None, &mixed)
            .iter()
            .map(|p| p.name.to_string())
            .collect();
        assert_eq!(got, ["z2", "z1"]);
    }
}
