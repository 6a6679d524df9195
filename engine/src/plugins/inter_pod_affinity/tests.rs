//! Tests, most ported from kube's tables (provenance on each).

use super::filtering::PRE_FILTER_STATE_KEY;
use super::*;
use crate::api::{
    LabelSelector, Labels, Node, Operator, Pod, PodAffinity, PodAffinityTerm, PodSpecInfo,
    Requirement, Sym, WeightedPodAffinityTerm,
};
use crate::cache::Cache;
use crate::framework::Snapshot;
use crate::framework::cycle_state::CycleState;
use crate::framework::events::{
    ActionType, ClusterEvent, EventObject, EventResource, QueueingHint,
};
use crate::framework::interface::{
    ClusterClient, EnqueueExtensions, FilterPlugin, MAX_NODE_SCORE, PreFilterExtensions,
    PreFilterPlugin, PreScorePlugin, ScorePlugin,
};
use crate::framework::status::{Code, Status};
use ahash::AHashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

// ---- fixtures -----------------------------------------------------------------------------

/// A client that knows kube's test namespaces (`namespaces` in
/// pkg/scheduler/framework/plugins/interpodaffinity/scoring_test.go).
struct FakeClient {
    ns: AHashMap<Sym, Arc<Labels>>,
}

impl ClusterClient for FakeClient {
    fn bind(&self, _: &Pod, _: Sym) -> Result<(), String> {
        Ok(())
    }
    fn pod_exists_unassigned(&self, _: &Pod) -> bool {
        true
    }
    fn namespace_labels(&self, namespace: Sym) -> Option<Arc<Labels>> {
        self.ns.get(&namespace).cloned()
    }
}

fn client() -> Arc<FakeClient> {
    let mut ns = AHashMap::new();
    for (n, team) in [
        ("subteam1.team1", "team1"),
        ("subteam2.team1", "team1"),
        ("subteam1.team2", "team2"),
        ("subteam2.team2", "team2"),
    ] {
        ns.insert(Sym::new(n), Arc::new(Labels::from_pairs([("team", team)])));
    }
    Arc::new(FakeClient { ns })
}

fn plugin_with(args: InterPodAffinityArgs) -> InterPodAffinity {
    InterPodAffinity::new(args, client())
}

fn plugin() -> InterPodAffinity {
    plugin_with(InterPodAffinityArgs::default())
}

type Req<'a> = (&'a str, Operator, &'a [&'a str]);

fn sel(reqs: &[Req<'_>]) -> LabelSelector {
    LabelSelector {
        requirements: reqs
            .iter()
            .map(|&(k, op, vs)| Requirement {
                key: Sym::new(k),
                op,
                values: vs.iter().map(|v| Sym::new(v)).collect(),
                int_value: 0,
            })
            .collect(),
    }
}

fn term(reqs: &[Req<'_>], topo: &str) -> PodAffinityTerm {
    PodAffinityTerm {
        label_selector: Some(sel(reqs)),
        namespaces: vec![],
        namespace_selector: None,
        topology_key: Sym::new(topo),
        match_label_keys: vec![],
        mismatch_label_keys: vec![],
    }
}

fn term_ns(
    reqs: &[Req<'_>],
    topo: &str,
    namespaces: &[&str],
    ns_sel: Option<LabelSelector>,
) -> PodAffinityTerm {
    PodAffinityTerm {
        namespaces: namespaces.iter().map(|n| Sym::new(n)).collect(),
        namespace_selector: ns_sel,
        ..term(reqs, topo)
    }
}

fn w(weight: i32, term: PodAffinityTerm) -> WeightedPodAffinityTerm {
    WeightedPodAffinityTerm { weight, term }
}

const IN: Operator = Operator::In;
const NOT_IN: Operator = Operator::NotIn;
const EXISTS: Operator = Operator::Exists;
const NOT_EXISTS: Operator = Operator::DoesNotExist;

static SEQ: AtomicUsize = AtomicUsize::new(0);

/// kube's `st.MakePod()`, the parts this plugin reads.
#[derive(Clone, Default)]
struct PodBuilder {
    ns: String,
    name: Option<String>,
    labels: Vec<(String, String)>,
    node: Option<String>,
    aff: PodAffinity,
}

fn pod() -> PodBuilder {
    PodBuilder::default()
}

impl PodBuilder {
    fn ns(mut self, ns: &str) -> Self {
        self.ns = ns.into();
        self
    }
    fn name(mut self, n: &str) -> Self {
        self.name = Some(n.into());
        self
    }
    fn label(mut self, k: &str, v: &str) -> Self {
        self.labels.push((k.into(), v.into()));
        self
    }
    fn labels(mut self, l: &[(&str, &str)]) -> Self {
        for (k, v) in l {
            self = self.label(k, v);
        }
        self
    }
    fn node(mut self, n: &str) -> Self {
        self.node = Some(n.into());
        self
    }
    fn req_aff(mut self, t: PodAffinityTerm) -> Self {
        self.aff.required_affinity.push(t);
        self
    }
    fn req_anti(mut self, t: PodAffinityTerm) -> Self {
        self.aff.required_anti_affinity.push(t);
        self
    }
    fn affinity(mut self, a: &PodAffinity) -> Self {
        self.aff = a.clone();
        self
    }
    /// `PodAffinityIn(key, topo, values, required)`.
    fn aff_in(self, key: &str, topo: &str, values: &[&str]) -> Self {
        self.req_aff(term(&[(key, IN, values)], topo))
    }
    fn aff_not_in(self, key: &str, topo: &str, values: &[&str]) -> Self {
        self.req_aff(term(&[(key, NOT_IN, values)], topo))
    }
    fn aff_exists(self, key: &str, topo: &str) -> Self {
        self.req_aff(term(&[(key, EXISTS, &[])], topo))
    }
    fn anti_in(self, key: &str, topo: &str, values: &[&str]) -> Self {
        self.req_anti(term(&[(key, IN, values)], topo))
    }
    fn anti_not_in(self, key: &str, topo: &str, values: &[&str]) -> Self {
        self.req_anti(term(&[(key, NOT_IN, values)], topo))
    }
    fn anti_exists(self, key: &str, topo: &str) -> Self {
        self.req_anti(term(&[(key, EXISTS, &[])], topo))
    }
    fn obj(self) -> Pod {
        let name = self
            .name
            .unwrap_or_else(|| format!("pod-{}", SEQ.fetch_add(1, Ordering::Relaxed)));
        let spec = PodSpecInfo {
            pod_affinity: self.aff,
            ..Default::default()
        };
        let mut p = Pod::new(&self.ns, &name, Arc::new(spec));
        p.labels = Arc::new(Labels::from_pairs(
            self.labels.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        ));
        p.node_name = self.node.as_deref().map(Sym::new);
        p
    }
}

fn node(name: &str, labels: &[(&str, &str)]) -> Node {
    Node {
        labels: Arc::new(Labels::from_pairs(labels.iter().copied())),
        ..Node::named(name)
    }
}

fn snapshot(nodes: &[Node], pods: &[Pod]) -> Snapshot {
    let c = Cache::new();
    for n in nodes {
        c.add_node(Arc::new(n.clone()));
    }
    for p in pods {
        c.add_pod(Arc::new(p.clone()));
    }
    let mut s = Snapshot::default();
    c.update_snapshot(&mut s);
    s
}

fn unsched(reason: &str) -> Status {
    Status::new(Code::Unschedulable, reason.to_string())
}
fn unresolvable(reason: &str) -> Status {
    Status::new(Code::UnschedulableAndUnresolvable, reason.to_string())
}

fn same(a: &Status, b: &Status) -> bool {
    a.code() == b.code() && a.reasons() == b.reasons()
}

/// PreFilter, then Filter on each of `nodes` (by name) unless PreFilter did not succeed.
fn run_filter(
    pl: &InterPodAffinity,
    pod: &Pod,
    snap: &Snapshot,
    nodes: &[&str],
) -> (Status, Vec<Status>) {
    let mut state = CycleState::new();
    let (res, st) = pl.pre_filter(&mut state, pod, snap);
    assert!(res.is_none());
    if !st.is_success() {
        return (st, vec![]);
    }
    let out = nodes
        .iter()
        .map(|n| pl.filter(&state, pod, snap.get(Sym::new(n)).unwrap()))
        .collect();
    (st, out)
}

const AFF: &str = ERR_REASON_AFFINITY_RULES_NOT_MATCH;
const ANTI: &str = ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH;
const EXISTING: &str = ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH;

// ---- filtering ----------------------------------------------------------------------------

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/interpodaffinity/filtering_test.go (TestRequiredAffinitySingleNode).
#[test]
fn required_affinity_single_node() {
    let pod_label = [("service", "securityscan")];
    let pod_label2 = [("security", "S1")];
    let existing = || pod().labels(&pod_label).node("node1").obj();
    let node1 = node("node1", &[("region", "r1"), ("zone", "z11")]);
    let sv = &["securityscan", "value2"];
    let ns_team1 = || Some(sel(&[("team", IN, &["team1"])]));
    // (name, pod, pods, want prefilter skip, want filter status)
    type Case = (&'static str, Pod, Vec<Pod>, bool, Option<Status>);
    let cases: Vec<Case> = vec![
        (
            "no required pod affinity, no existing pods: Skip",
            pod().obj(),
            vec![],
            true,
            None,
        ),
        (
            "PodAffinity In matches the existing pod",
            pod()
                .labels(&pod_label2)
                .aff_in("service", "region", sv)
                .obj(),
            vec![existing()],
            false,
            None,
        ),
        (
            "PodAffinity NotIn matches the existing pod",
            pod()
                .labels(&pod_label2)
                .aff_not_in("service", "region", &["securityscan3", "value3"])
                .obj(),
            vec![existing()],
            false,
            None,
        ),
        (
            "PodAffinity does not match because of a different namespace",
            pod()
                .labels(&pod_label2)
                .req_aff(term_ns(
                    &[("service", IN, sv)],
                    "",
                    &["DiffNameSpace"],
                    None,
                ))
                .obj(),
            vec![
                pod()
                    .ns("ns")
                    .label("service", "securityscan")
                    .node("node1")
                    .obj(),
            ],
            false,
            Some(unresolvable(AFF)),
        ),
        (
            "PodAffinity selector does not match the existing pod",
            pod()
                .labels(&pod_label)
                .aff_in("service", "", &["antivirusscan", "value2"])
                .obj(),
            vec![existing()],
            false,
            Some(unresolvable(AFF)),
        ),
        (
            "different operators in several required terms, all match",
            pod()
                .labels(&pod_label2)
                .req_aff(term(
                    &[("service", EXISTS, &[]), ("wrongkey", NOT_EXISTS, &[])],
                    "region",
                ))
                .req_aff(term(
                    &[
                        ("service", IN, &["securityscan"]),
                        ("service", NOT_IN, &["WrongValue"]),
                    ],
                    "region",
                ))
                .obj(),
            vec![existing()],
            false,
            None,
        ),
        (
            "matchExpressions are ANDed: one item does not match",
            pod()
                .labels(&pod_label2)
                .req_aff(term(
                    &[("service", EXISTS, &[]), ("wrongkey", NOT_EXISTS, &[])],
                    "region",
                ))
                .req_aff(term(
                    &[
                        ("service", IN, &["securityscan2"]),
                        ("service", NOT_IN, &["WrongValue"]),
                    ],
                    "region",
                ))
                .obj(),
            vec![existing()],
            false,
            Some(unresolvable(AFF)),
        ),
        (
            "PodAffinity and PodAntiAffinity satisfied",
            pod()
                .labels(&pod_label2)
                .aff_in("service", "region", sv)
                .anti_in("service", "node", &["antivirusscan", "value2"])
                .obj(),
            vec![existing()],
            false,
            None,
        ),
        (
            "PodAffinity, PodAntiAffinity and its symmetry satisfied",
            pod()
                .labels(&pod_label2)
                .aff_in("service", "region", sv)
                .anti_in("service", "node", &["antivirusscan", "value2"])
                .obj(),
            vec![
                pod()
                    .node("node1")
                    .labels(&pod_label)
                    .anti_in("service", "node", &["antivirusscan", "value2"])
                    .obj(),
            ],
            false,
            None,
        ),
        (
            "PodAffinity satisfied, PodAntiAffinity not",
            pod()
                .labels(&pod_label2)
                .aff_in("service", "region", sv)
                .anti_in("service", "zone", sv)
                .obj(),
            vec![existing()],
            false,
            Some(unsched(ANTI)),
        ),
        (
            "PodAffinity and PodAntiAffinity satisfied, the existing pod's anti-affinity not",
            pod()
                .labels(&pod_label)
                .aff_in("service", "region", sv)
                .anti_in("service", "node", &["antivirusscan", "value2"])
                .obj(),
            vec![
                pod()
                    .labels(&pod_label)
                    .node("node1")
                    .anti_in("service", "zone", sv)
                    .obj(),
            ],
            false,
            Some(unsched(EXISTING)),
        ),
        (
            "the pod's NotIn affinity does not match itself nor the existing pods",
            pod()
                .labels(&pod_label)
                .aff_not_in("service", "region", sv)
                .obj(),
            vec![pod().label("service", "securityscan").node("node2").obj()],
            false,
            Some(unresolvable(AFF)),
        ),
        (
            "existing pod's anti-affinity is respected for a pod without terms",
            pod().labels(&pod_label).obj(),
            vec![
                pod()
                    .node("node1")
                    .labels(&pod_label)
                    .anti_in("service", "zone", sv)
                    .obj(),
            ],
            false,
            Some(unsched(EXISTING)),
        ),
        (
            "existing pod's anti-affinity does not match: Skip",
            pod().labels(&pod_label).obj(),
            vec![
                pod()
                    .node("node1")
                    .labels(&pod_label)
                    .anti_not_in("service", "zone", sv)
                    .obj(),
            ],
            true,
            None,
        ),
        (
            "the pod's anti-affinity matches the existing pod, not the other way around",
            pod()
                .labels(&pod_label)
                .anti_exists("service", "region")
                .anti_exists("security", "region")
                .obj(),
            vec![
                pod()
                    .node("node1")
                    .labels(&pod_label2)
                    .anti_exists("security", "zone")
                    .obj(),
            ],
            false,
            Some(unsched(ANTI)),
        ),
        (
            "symmetry a1: partial match on terms",
            pod()
                .labels(&pod_label)
                .anti_exists("service", "zone")
                .anti_exists("security", "zone")
                .obj(),
            vec![
                pod()
                    .node("node1")
                    .labels(&pod_label2)
                    .anti_exists("security", "zone")
                    .obj(),
            ],
            false,
            Some(unsched(ANTI)),
        ),
        (
            "symmetry a2: partial match on terms",
            pod()
                .labels(&pod_label2)
                .anti_exists("security", "zone")
                .obj(),
            vec![
                pod()
                    .node("node1")
                    .labels(&pod_label)
                    .anti_exists("service", "zone")
                    .anti_exists("security", "zone")
                    .obj(),
            ],
            false,
            Some(unsched(EXISTING)),
        ),
        (
            "symmetry b1: partial match on terms",
            pod()
                .labels(&[("abc", ""), ("xyz", "")])
                .anti_exists("abc", "zone")
                .anti_exists("def", "zone")
                .obj(),
            vec![
                pod()
                    .node("node1")
                    .labels(&[("def", ""), ("xyz", "")])
                    .anti_exists("abc", "zone")
                    .anti_exists("def", "zone")
                    .obj(),
            ],
            false,
            Some(unsched(ANTI)),
        ),
        (
            "symmetry b2: partial match on terms",
            pod()
                .labels(&[("def", ""), ("xyz", "")])
                .anti_exists("abc", "zone")
                .anti_exists("def", "zone")
                .obj(),
            vec![
                pod()
                    .node("node1")
                    .labels(&[("abc", ""), ("xyz", "")])
                    .anti_exists("abc", "zone")
                    .anti_exists("def", "zone")
                    .obj(),
            ],
            false,
            Some(unsched(ANTI)),
        ),
        (
            "affinity with NamespaceSelector",
            pod()
                .labels(&pod_label2)
                .req_aff(term_ns(&[("service", IN, sv)], "region", &[], ns_team1()))
                .obj(),
            vec![
                pod()
                    .ns("subteam1.team1")
                    .labels(&pod_label)
                    .node("node1")
                    .obj(),
            ],
            false,
            None,
        ),
        (
            "affinity with non-matching NamespaceSelector",
            pod()
                .labels(&pod_label2)
                .req_aff(term_ns(&[("service", IN, sv)], "region", &[], ns_team1()))
                .obj(),
            vec![
                pod()
                    .ns("subteam1.team2")
                    .labels(&pod_label)
                    .node("node1")
                    .obj(),
            ],
            false,
            Some(unresolvable(AFF)),
        ),
        (
            "anti-affinity with matching NamespaceSelector",
            pod()
                .ns("subteam1.team1")
                .labels(&pod_label2)
                .req_anti(term_ns(&[("service", IN, sv)], "zone", &[], ns_team1()))
                .obj(),
            vec![
                pod()
                    .ns("subteam2.team1")
                    .labels(&pod_label)
                    .node("node1")
                    .obj(),
            ],
            false,
            Some(unsched(ANTI)),
        ),
        (
            "anti-affinity with matching all NamespaceSelector",
            pod()
                .ns("subteam1.team1")
                .labels(&pod_label2)
                .req_anti(term_ns(
                    &[("service", IN, sv)],
                    "zone",
                    &[],
                    Some(LabelSelector::default()),
                ))
                .obj(),
            vec![
                pod()
                    .ns("subteam2.team1")
                    .labels(&pod_label)
                    .node("node1")
                    .obj(),
            ],
            false,
            Some(unsched(ANTI)),
        ),
        (
            "anti-affinity with non-matching NamespaceSelector",
            pod()
                .ns("subteam1.team1")
                .labels(&pod_label2)
                .req_anti(term_ns(&[("service", IN, sv)], "zone", &[], ns_team1()))
                .obj(),
            vec![
                pod()
                    .ns("subteam1.team2")
                    .labels(&pod_label)
                    .node("node1")
                    .obj(),
            ],
            false,
            None,
        ),
    ];
    let pl = plugin();
    for (name, p, pods, want_skip, want) in cases {
        let snap = snapshot(std::slice::from_ref(&node1), &pods);
        let (pre, got) = run_filter(&pl, &p, &snap, &["node1"]);
        if want_skip {
            assert!(pre.is_skip(), "{name}: PreFilter {pre:?}");
            continue;
        }
        assert!(pre.is_success(), "{name}: PreFilter {pre:?}");
        let want = want.unwrap_or_else(Status::success);
        assert!(
            same(&got[0], &want),
            "{name}: got {:?}, want {want:?}",
            got[0]
        );
    }
}

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/interpodaffinity/filtering_test.go (TestRequiredAffinityMultipleNodes).
#[test]
fn required_affinity_multiple_nodes() {
    let china = [("region", "China")];
    let china_az1 = [("region", "China"), ("az", "az1")];
    let india = [("region", "India")];
    let ok = Status::success;
    // (name, pod, pods, nodes, want skip, want per node)
    type Case = (&'static str, Pod, Vec<Pod>, Vec<Node>, bool, Vec<Status>);
    let cases: Vec<Case> = vec![
        (
            "all nodes of the matching pod's region",
            pod().aff_in("foo", "region", &["bar"]).obj(),
            vec![pod().name("p1").node("node1").label("foo", "bar").obj()],
            vec![
                node("node1", &china),
                node("node2", &china_az1),
                node("node3", &india),
            ],
            false,
            vec![ok(), ok(), unresolvable(AFF)],
        ),
        (
            "the first pod of a collection with affinity to itself goes anywhere",
            pod()
                .labels(&[("foo", "bar"), ("service", "securityscan")])
                .aff_in("foo", "zone", &["bar"])
                .aff_in("service", "zone", &["securityscan"])
                .obj(),
            vec![pod().name("p1").node("nodeA").label("foo", "bar").obj()],
            vec![
                node("nodeA", &[("zone", "az1"), ("hostname", "h1")]),
                node("nodeB", &[("zone", "az2"), ("hostname", "h2")]),
            ],
            false,
            vec![ok(), ok()],
        ),
        (
            "the first pod of a collection needs the topology keys",
            pod()
                .labels(&[("foo", "bar"), ("service", "securityscan")])
                .aff_in("foo", "zone", &["bar"])
                .aff_in("service", "zone", &["securityscan"])
                .obj(),
            vec![pod().name("p1").node("nodeA").label("foo", "bar").obj()],
            vec![
                node("nodeA", &[("zoneLabel", "az1"), ("hostname", "h1")]),
                node("nodeB", &[("zoneLabel", "az2"), ("hostname", "h2")]),
            ],
            false,
            vec![unresolvable(AFF), unresolvable(AFF)],
        ),
        (
            "anti-affinity refuses the whole region of the matching pod",
            pod().anti_in("foo", "region", &["abc"]).obj(),
            vec![pod().node("nodeA").label("foo", "abc").obj()],
            vec![
                node("nodeA", &[("region", "r1"), ("hostname", "nodeA")]),
                node("nodeB", &[("region", "r1"), ("hostname", "nodeB")]),
            ],
            false,
            vec![unsched(ANTI), unsched(ANTI)],
        ),
        (
            "anti-affinity matches when any term matches",
            pod()
                .anti_in("foo", "region", &["abc"])
                .anti_in("service", "zone", &["securityscan"])
                .obj(),
            vec![
                pod()
                    .node("nodeA")
                    .labels(&[("foo", "abc"), ("service", "securityscan")])
                    .obj(),
            ],
            vec![
                node(
                    "nodeA",
                    &[("region", "r1"), ("zone", "z1"), ("hostname", "nodeA")],
                ),
                node(
                    "nodeB",
                    &[("region", "r1"), ("zone", "z2"), ("hostname", "nodeB")],
                ),
            ],
            false,
            vec![unsched(ANTI), unsched(ANTI)],
        ),
        (
            "anti-affinity: another region is fine",
            pod().anti_in("foo", "region", &["abc"]).obj(),
            vec![pod().node("nodeA").label("foo", "abc").obj()],
            vec![
                node("nodeA", &china),
                node("nodeB", &china_az1),
                node("nodeC", &india),
            ],
            false,
            vec![unsched(ANTI), unsched(ANTI), ok()],
        ),
        (
            "anti-affinity of a pod in another namespace does not count",
            pod()
                .ns("NS1")
                .label("foo", "123")
                .anti_in("foo", "region", &["bar"])
                .obj(),
            vec![
                pod().node("nodeA").ns("NS1").label("foo", "bar").obj(),
                pod()
                    .node("nodeC")
                    .ns("NS2")
                    .anti_in("foo", "region", &["123"])
                    .obj(),
            ],
            vec![
                node("nodeA", &china),
                node("nodeB", &china_az1),
                node("nodeC", &india),
            ],
            false,
            vec![unsched(ANTI), unsched(ANTI), ok()],
        ),
        (
            "existing pod's term with a topology key no node has: Skip",
            pod().label("foo", "").obj(),
            vec![
                pod()
                    .node("nodeA")
                    .anti_exists("foo", "invalid-node-label")
                    .obj(),
            ],
            vec![
                node(
                    "nodeA",
                    &[("region", "r1"), ("zone", "z1"), ("hostname", "nodeA")],
                ),
                node(
                    "nodeB",
                    &[("region", "r1"), ("zone", "z1"), ("hostname", "nodeB")],
                ),
            ],
            true,
            vec![],
        ),
        (
            "incoming pod's anti-affinity: the topology key is checked too",
            pod()
                .node("nodeA")
                .anti_exists("foo", "invalid-node-label")
                .obj(),
            vec![pod().node("nodeA").label("foo", "").obj()],
            vec![
                node(
                    "nodeA",
                    &[("region", "r1"), ("zone", "z1"), ("hostname", "nodeA")],
                ),
                node(
                    "nodeB",
                    &[("region", "r1"), ("zone", "z1"), ("hostname", "nodeB")],
                ),
            ],
            false,
            vec![ok(), ok()],
        ),
        (
            "existing pods' anti-affinity in two topologies",
            pod().label("foo", "").label("bar", "").obj(),
            vec![
                pod().node("nodeA").anti_exists("foo", "zone").obj(),
                pod().node("nodeA").anti_exists("bar", "region").obj(),
            ],
            vec![
                node(
                    "nodeA",
                    &[("region", "r1"), ("zone", "z1"), ("hostname", "nodeA")],
                ),
                node(
                    "nodeB",
                    &[("region", "r1"), ("zone", "z2"), ("hostname", "nodeB")],
                ),
            ],
            false,
            vec![unsched(EXISTING), unsched(EXISTING)],
        ),
    ];
    let pl = plugin();
    for (name, p, pods, nodes, want_skip, want) in cases {
        let snap = snapshot(&nodes, &pods);
        let names: Vec<String> = nodes.iter().map(|n| n.name.as_arc().to_string()).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let (pre, got) = run_filter(&pl, &p, &snap, &names);
        if want_skip {
            assert!(pre.is_skip(), "{name}: PreFilter {pre:?}");
            continue;
        }
        assert!(pre.is_success(), "{name}: PreFilter {pre:?}");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(same(g, w), "{name}: node {i}: got {g:?}, want {w:?}");
        }
    }
}

#[test]
fn filter_without_pre_filter_state_is_an_error() {
    let pl = plugin();
    let snap = snapshot(&[node("n", &[])], &[]);
    let st = pl.filter(
        &CycleState::new(),
        &pod().obj(),
        snap.get(Sym::new("n")).unwrap(),
    );
    assert_eq!(st.code(), Code::Error);
}

// After kubernetes/kubernetes
// pkg/scheduler/framework/plugins/interpodaffinity/filtering_test.go (TestPreFilterStateAddRemovePod):
// AddPod on the state of a cluster without the pod equals the state of the cluster with it,
// and RemovePod undoes it.
#[test]
fn add_and_remove_pod_update_the_counts() {
    let nodes = [
        node(
            "nodeA",
            &[("region", "r1"), ("zone", "z11"), ("hostname", "nodeA")],
        ),
        node(
            "nodeB",
            &[("region", "r1"), ("zone", "z12"), ("hostname", "nodeB")],
        ),
        node(
            "nodeC",
            &[("region", "r2"), ("zone", "z21"), ("hostname", "nodeC")],
        ),
    ];
    let incoming = pod()
        .name("incoming")
        .label("security", "S1")
        .aff_in("security", "region", &["S1"])
        .anti_in("service", "zone", &["securityscan"])
        .obj();
    let base = vec![pod().node("nodeA").label("security", "S1").obj()];
    let added = [
        // Matches the pod's affinity.
        pod().node("nodeC").label("security", "S1").obj(),
        // Matches the pod's anti-affinity.
        pod().node("nodeB").label("service", "securityscan").obj(),
        // Its anti-affinity matches the pod.
        pod()
            .node("nodeC")
            .anti_in("security", "zone", &["S1"])
            .obj(),
    ];
    let pl = plugin();
    let snap = snapshot(&nodes, &base);
    let mut state = CycleState::new();
    assert!(pl.pre_filter(&mut state, &incoming, &snap).1.is_success());
    let before = state
        .read::<PreFilterState>(PRE_FILTER_STATE_KEY)
        .unwrap()
        .clone();

    let mut all = base.clone();
    all.extend(added.iter().cloned());
    let full = snapshot(&nodes, &all);
    let mut want_state = CycleState::new();
    pl.pre_filter(&mut want_state, &incoming, &full);
    let want = want_state
        .read::<PreFilterState>(PRE_FILTER_STATE_KEY)
        .unwrap();

    for p in &added {
        let n = snap.get(p.node_name.unwrap()).unwrap();
        assert!(pl.add_pod(&mut state, &incoming, p, n).is_success());
    }
    let got = state.read::<PreFilterState>(PRE_FILTER_STATE_KEY).unwrap();
    assert_eq!(got.affinity_counts, want.affinity_counts);
    assert_eq!(got.anti_affinity_counts, want.anti_affinity_counts);
    assert_eq!(
        got.existing_anti_affinity_counts,
        want.existing_anti_affinity_counts
    );
    assert_eq!(
        got.affinity_counts.get(Sym::new("region"), Sym::new("r2")),
        1
    );
    assert_eq!(
        got.anti_affinity_counts
            .get(Sym::new("zone"), Sym::new("z12")),
        1
    );
    assert_eq!(
        got.existing_anti_affinity_counts
            .get(Sym::new("zone"), Sym::new("z21")),
        1
    );
    // nodeC is now refused by the existing pod's anti-affinity, nodeB by the pod's own.
    let f = |s: &CycleState, n: &str| pl.filter(s, &incoming, snap.get(Sym::new(n)).unwrap());
    assert!(same(&f(&state, "nodeC"), &unsched(EXISTING)));
    assert!(same(&f(&state, "nodeB"), &unsched(ANTI)));
    assert!(f(&state, "nodeA").is_success());

    for p in &added {
        let n = snap.get(p.node_name.unwrap()).unwrap();
        assert!(pl.remove_pod(&mut state, &incoming, p, n).is_success());
    }
    let got = state.read::<PreFilterState>(PRE_FILTER_STATE_KEY).unwrap();
    assert_eq!(got.affinity_counts, before.affinity_counts);
    assert_eq!(got.anti_affinity_counts, before.anti_affinity_counts);
    assert!(got.existing_anti_affinity_counts.is_empty());
    assert!(got.anti_affinity_counts.is_empty());
    // Without state, the extensions report an error.
    let mut empty = CycleState::new();
    let n = snap.get(Sym::new("nodeA")).unwrap();
    assert_eq!(
        pl.add_pod(&mut empty, &incoming, &added[0], n).code(),
        Code::Error
    );
}

#[test]
fn topology_counts_drop_zero_entries_and_track_keys() {
    let (zone, a, b) = (Sym::new("zone"), Sym::new("a"), Sym::new("b"));
    let mut c = TopologyCounts::default();
    c.add(zone, a, 2);
    c.add(zone, b, 1);
    assert!(c.any_positive_on(&Labels::from_pairs([("zone", "a")])));
    assert!(!c.any_positive_on(&Labels::from_pairs([("zone", "c")])));
    c.add(zone, a, -2);
    assert_eq!(c.len(), 1);
    c.add(zone, b, -1);
    assert!(c.is_empty());
    assert!(!c.any_positive_on(&Labels::from_pairs([("zone", "b")])));
    assert_eq!(c, TopologyCounts::default());
}

#[test]
fn match_label_keys_resolve_against_the_terms_owner() {
    // The incoming pod wants the zone of pods with its own `app` value.
    let mut t = term(&[("tier", EXISTS, &[])], "zone");
    t.match_label_keys = vec![Sym::new("app")];
    let nodes = [node("n1", &[("zone", "z1")]), node("n2", &[("zone", "z2")])];
    let pods = [
        pod()
            .node("n1")
            .labels(&[("tier", "x"), ("app", "web")])
            .obj(),
        pod()
            .node("n2")
            .labels(&[("tier", "x"), ("app", "db")])
            .obj(),
    ];
    let snap = snapshot(&nodes, &pods);
    let p = pod().label("app", "db").req_aff(t).obj();
    let (_, got) = run_filter(&plugin(), &p, &snap, &["n1", "n2"]);
    assert!(same(&got[0], &unresolvable(AFF)));
    assert!(got[1].is_success());
}

/// Enough nodes for the parallel pass: the counts are the same as counted one by one.
#[test]
fn parallel_pre_filter_counts_every_node() {
    let nodes: Vec<Node> = (0..600)
        .map(|i| {
            node(
                &format!("n{i}"),
                &[("zone", ["z0", "z1", "z2"][i % 3]), ("hostname", "h")],
            )
        })
        .collect();
    let pods: Vec<Pod> = (0..600)
        .map(|i| {
            let b = pod().node(&format!("n{i}")).label("app", "web");
            if i % 2 == 0 {
                b.anti_exists("other", "zone").obj()
            } else {
                b.obj()
            }
        })
        .collect();
    let snap = snapshot(&nodes, &pods);
    let incoming = pod()
        .label("other", "1")
        .aff_in("app", "zone", &["web"])
        .anti_in("app", "hostname", &["web"])
        .obj();
    let s = plugin().compute_pre_filter_state(&incoming, &snap);
    for z in ["z0", "z1", "z2"] {
        assert_eq!(s.affinity_counts.get(Sym::new("zone"), Sym::new(z)), 200);
        assert_eq!(
            s.existing_anti_affinity_counts
                .get(Sym::new("zone"), Sym::new(z)),
            100
        );
    }
    assert_eq!(
        s.anti_affinity_counts
            .get(Sym::new("hostname"), Sym::new("h")),
        600
    );
}

// ---- scoring ------------------------------------------------------------------------------

/// PreScore over `nodes` (all feasible), then Score and NormalizeScore; `None` for Skip.
fn run_score(pl: &InterPodAffinity, p: &Pod, nodes: &[Node], pods: &[Pod]) -> Option<Vec<i64>> {
    let snap = snapshot(nodes, pods);
    let infos: Vec<&crate::framework::NodeInfo> =
        nodes.iter().map(|n| &**snap.get(n.name).unwrap()).collect();
    let mut state = CycleState::new();
    let st = pl.pre_score(&mut state, p, &infos, &snap);
    if st.is_skip() {
        return None;
    }
    assert!(st.is_success(), "{st:?}");
    let mut scores: Vec<i64> = infos
        .iter()
        .map(|n| pl.score(&state, p, n).unwrap())
        .collect();
    assert!(pl.normalize_score(&state, p, &mut scores).is_success());
    Some(scores)
}

struct Affinities {
    stay_s1_region: PodAffinity,
    stay_s2_region: PodAffinity,
    affinity3: PodAffinity,
    hard: PodAffinity,
    away_s1_az: PodAffinity,
    away_s2_az: PodAffinity,
    stay_s1_region_away_s2_az: PodAffinity,
    ns_selector: PodAffinity,
    anti_ns_selector: PodAffinity,
}

/// The affinities of kube's scoring tables.
fn affinities() -> Affinities {
    let s1 = || term(&[("security", IN, &["S1"])], "region");
    let s2 = || term(&[("security", IN, &["S2"])], "region");
    let in_az = |v: &str| term(&[("security", IN, &[v])], "az");
    let ns_term = || {
        term_ns(
            &[("security", IN, &["S1"])],
            "region",
            &["subteam2.team2"],
            Some(sel(&[("team", IN, &["team1"])])),
        )
    };
    Affinities {
        stay_s1_region: PodAffinity {
            preferred_affinity: vec![w(5, s1())],
            ..Default::default()
        },
        stay_s2_region: PodAffinity {
            preferred_affinity: vec![w(6, s2())],
            ..Default::default()
        },
        affinity3: PodAffinity {
            preferred_affinity: vec![
                w(
                    8,
                    term(
                        &[("security", NOT_IN, &["S1"]), ("security", IN, &["S2"])],
                        "region",
                    ),
                ),
                w(
                    2,
                    term(
                        &[("security", EXISTS, &[]), ("wrongkey", NOT_EXISTS, &[])],
                        "region",
                    ),
                ),
            ],
            ..Default::default()
        },
        hard: PodAffinity {
            required_affinity: vec![
                term(&[("security", IN, &["S1", "value2"])], "region"),
                term(
                    &[("security", EXISTS, &[]), ("wrongkey", NOT_EXISTS, &[])],
                    "region",
                ),
            ],
            ..Default::default()
        },
        away_s1_az: PodAffinity {
            preferred_anti_affinity: vec![w(5, in_az("S1"))],
            ..Default::default()
        },
        away_s2_az: PodAffinity {
            preferred_anti_affinity: vec![w(5, in_az("S2"))],
            ..Default::default()
        },
        stay_s1_region_away_s2_az: PodAffinity {
            preferred_affinity: vec![w(8, s1())],
            preferred_anti_affinity: vec![w(5, in_az("S2"))],
            ..Default::default()
        },
        ns_selector: PodAffinity {
            preferred_affinity: vec![w(5, ns_term())],
            ..Default::default()
        },
        anti_ns_selector: PodAffinity {
            preferred_anti_affinity: vec![w(5, ns_term())],
            ..Default::default()
        },
    }
}

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/interpodaffinity/scoring_test.go (TestPreferredAffinity).
#[test]
fn preferred_affinity() {
    let a = affinities();
    let china = [("region", "China")];
    let india = [("region", "India")];
    let az1 = [("az", "az1")];
    let az2 = [("az", "az2")];
    let china_az1 = [("region", "China"), ("az", "az1")];
    let s1 = [("security", "S1")];
    let s2 = [("security", "S2")];
    let on = |n: &str, l: &[(&str, &str)]| pod().node(n).labels(l).obj();
    let with = |n: &str, l: &[(&str, &str)], aff: &PodAffinity| {
        pod().node(n).labels(l).affinity(aff).obj()
    };
    let m = MAX_NODE_SCORE;
    // (name, pod, pods, nodes, want; None = Skip)
    type Case = (&'static str, Pod, Vec<Pod>, Vec<Node>, Option<Vec<i64>>);
    let cases: Vec<Case> = vec![
        (
            "no affinity anywhere: Skip",
            pod().labels(&s1).obj(),
            vec![],
            vec![
                node("node1", &china),
                node("node2", &india),
                node("node3", &az1),
            ],
            None,
        ),
        (
            "affinity: matching pods in the topology score high",
            pod().labels(&s1).affinity(&a.stay_s1_region).obj(),
            vec![on("node1", &s1), on("node2", &s2), on("node3", &s1)],
            vec![
                node("node1", &china),
                node("node2", &india),
                node("node3", &az1),
            ],
            Some(vec![m, 0, 0]),
        ),
        (
            "affinity: every node of the matching domain scores the same",
            pod().affinity(&a.stay_s1_region).obj(),
            vec![on("node1", &s1)],
            vec![
                node("node1", &china),
                node("node2", &china_az1),
                node("node3", &india),
            ],
            Some(vec![m, m, 0]),
        ),
        (
            "affinity: the region with more matches scores high",
            pod().labels(&s1).affinity(&a.stay_s2_region).obj(),
            vec![
                on("node1", &s2),
                on("node1", &s2),
                on("node2", &s2),
                on("node3", &s2),
                on("node4", &s2),
                on("node5", &s2),
            ],
            vec![
                node("node1", &china),
                node("node2", &india),
                node("node3", &china),
                node("node4", &china),
                node("node5", &india),
            ],
            Some(vec![m, 0, m, m, 0]),
        ),
        (
            "affinity: different operators, some match failures",
            pod().labels(&s1).affinity(&a.affinity3).obj(),
            vec![on("node1", &s1), on("node2", &s2), on("node3", &s1)],
            vec![
                node("node1", &china),
                node("node2", &india),
                node("node3", &az1),
            ],
            Some(vec![20, m, 0]),
        ),
        (
            "affinity symmetry: existing pods' preferred terms",
            pod().labels(&s2).obj(),
            vec![
                with("node1", &s1, &a.stay_s1_region),
                with("node2", &s2, &a.stay_s2_region),
            ],
            vec![
                node("node1", &china),
                node("node2", &india),
                node("node3", &az1),
            ],
            Some(vec![0, m, 0]),
        ),
        (
            "affinity symmetry with namespace selector",
            pod().ns("subteam1.team1").labels(&s1).obj(),
            vec![
                with("node1", &s1, &a.ns_selector),
                with("node2", &s2, &a.stay_s2_region),
            ],
            vec![
                node("node1", &china),
                node("node2", &india),
                node("node3", &az1),
            ],
            Some(vec![m, 0, 0]),
        ),
        (
            "anti-affinity symmetry with namespace selector",
            pod().ns("subteam1.team1").labels(&s1).obj(),
            vec![
                with("node1", &s1, &a.anti_ns_selector),
                with("node2", &s2, &a.stay_s2_region),
            ],
            vec![
                node("node1", &china),
                node("node2", &india),
                node("node3", &az1),
            ],
            Some(vec![0, m, m]),
        ),
        (
            "affinity symmetry: existing pods' required terms at hardPodAffinityWeight",
            pod().labels(&s1).obj(),
            vec![with("node1", &s1, &a.hard), with("node2", &s2, &a.hard)],
            vec![
                node("node1", &china),
                node("node2", &india),
                node("node3", &az1),
            ],
            Some(vec![m, m, 0]),
        ),
        (
            "anti-affinity: a node without matching pods scores high",
            pod().labels(&s1).affinity(&a.away_s1_az).obj(),
            vec![on("node1", &s1), on("node2", &s2)],
            vec![node("node1", &az1), node("node2", &china)],
            Some(vec![0, m]),
        ),
        (
            "anti-affinity: a node without the topology key scores high",
            pod().labels(&s1).affinity(&a.away_s1_az).obj(),
            vec![on("node1", &s1), on("node2", &s1)],
            vec![node("node1", &az1), node("node2", &china)],
            Some(vec![0, m]),
        ),
        (
            "anti-affinity: more matching pods score lower",
            pod().labels(&s1).affinity(&a.away_s1_az).obj(),
            vec![on("node1", &s1), on("node1", &s1), on("node2", &s2)],
            vec![node("node1", &az1), node("node2", &india)],
            Some(vec![0, m]),
        ),
        (
            "anti-affinity symmetry",
            pod().labels(&s2).obj(),
            vec![
                with("node1", &s1, &a.away_s2_az),
                with("node2", &s2, &a.away_s1_az),
            ],
            vec![node("node1", &az1), node("node2", &az2)],
            Some(vec![0, m]),
        ),
        (
            "affinity and anti-affinity",
            pod()
                .labels(&s1)
                .affinity(&a.stay_s1_region_away_s2_az)
                .obj(),
            vec![on("node1", &s1), on("node2", &s1)],
            vec![node("node1", &china), node("node2", &az1)],
            Some(vec![m, 0]),
        ),
        (
            "affinity and anti-affinity, pods with the same labels",
            pod()
                .labels(&s1)
                .affinity(&a.stay_s1_region_away_s2_az)
                .obj(),
            vec![
                on("node1", &s1),
                on("node1", &s1),
                on("node2", &s1),
                on("node3", &s1),
                on("node3", &s1),
                on("node4", &s1),
                on("node5", &s1),
            ],
            vec![
                node("node1", &china_az1),
                node("node2", &india),
                node("node3", &china),
                node("node4", &china),
                node("node5", &india),
            ],
            Some(vec![m, 0, m, m, 0]),
        ),
        (
            "affinity, anti-affinity and symmetry",
            pod()
                .labels(&s1)
                .affinity(&a.stay_s1_region_away_s2_az)
                .obj(),
            vec![
                on("node1", &s1),
                on("node2", &s2),
                with("node3", &[], &a.stay_s1_region_away_s2_az),
                with("node4", &[], &a.away_s1_az),
            ],
            vec![
                node("node1", &china),
                node("node2", &az1),
                node("node3", &india),
                node("node4", &az2),
            ],
            Some(vec![m, 0, m, 0]),
        ),
        (
            "some nodes of a topology without pods with affinity",
            pod().labels(&s1).obj(),
            vec![
                on("node1", &s1),
                with("node2", &[], &a.stay_s1_region_away_s2_az),
            ],
            vec![node("node1", &china), node("node2", &china)],
            Some(vec![0, 0]),
        ),
    ];
    let pl = plugin();
    for (name, p, pods, nodes, want) in cases {
        let got = run_score(&pl, &p, &nodes, &pods);
        assert_eq!(got, want, "{name}");
    }
}

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/interpodaffinity/scoring_test.go
// (TestPreferredAffinityWithHardPodAffinitySymmetricWeight).
#[test]
fn hard_pod_affinity_symmetric_weight() {
    let a = affinities();
    let china = [("region", "China")];
    let india = [("region", "India")];
    let az1 = [("az", "az1")];
    let s1 = [("service", "S1")];
    let hard = PodAffinity {
        required_affinity: vec![term(&[("service", IN, &["S1"])], "region")],
        ..Default::default()
    };
    let pods = || {
        vec![
            pod().node("node1").affinity(&hard).obj(),
            pod().node("node2").affinity(&hard).obj(),
        ]
    };
    let nodes = [
        node("node1", &china),
        node("node2", &india),
        node("node3", &az1),
    ];
    let incoming = pod().labels(&s1).obj();
    let m = MAX_NODE_SCORE;
    let got = run_score(&plugin(), &incoming, &nodes, &pods());
    assert_eq!(got, Some(vec![m, m, 0]));
    // hardPodAffinityWeight 0: the existing pods' required terms do not count; nothing else
    // applies.
    let zero = plugin_with(InterPodAffinityArgs {
        hard_pod_affinity_weight: 0,
        ..Default::default()
    });
    assert_eq!(run_score(&zero, &incoming, &nodes, &pods()), None);
    // With preferred terms of its own the pod is scored, the hard terms still ignored.
    let with_pref = pod().labels(&s1).affinity(&a.stay_s1_region).obj();
    assert_eq!(
        run_score(&zero, &with_pref, &nodes, &pods()),
        None,
        "no pod matches security=S1"
    );
}

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/interpodaffinity/scoring_test.go
// (TestPreferredAffinity, ignorePreferredTermsOfExistingPods cases).
#[test]
fn ignore_preferred_terms_of_existing_pods() {
    let a = affinities();
    let china = [("region", "China")];
    let india = [("region", "India")];
    let az1 = [("az", "az1")];
    let s1 = [("security", "S1")];
    let s2 = [("security", "S2")];
    let nodes = [
        node("node1", &china),
        node("node2", &india),
        node("node3", &az1),
    ];
    let pods = [
        pod()
            .node("node1")
            .labels(&s1)
            .affinity(&a.stay_s1_region)
            .obj(),
        pod()
            .node("node2")
            .labels(&s2)
            .affinity(&a.stay_s2_region)
            .obj(),
    ];
    let ignore = plugin_with(InterPodAffinityArgs {
        ignore_preferred_terms_of_existing_pods: true,
        ..Default::default()
    });
    let m = MAX_NODE_SCORE;
    // Without terms of its own, the pod is not scored at all.
    assert_eq!(
        run_score(&ignore, &pod().labels(&s2).obj(), &nodes, &pods),
        None
    );
    // The default considers the existing pods' preferences.
    assert_eq!(
        run_score(&plugin(), &pod().labels(&s2).obj(), &nodes, &pods),
        Some(vec![0, m, 0])
    );
    // With terms of its own, every term counts again: its own 5 on China, node2's pod's 6
    // on India.
    let p = pod().labels(&s2).affinity(&a.stay_s1_region).obj();
    assert_eq!(run_score(&ignore, &p, &nodes, &pods), Some(vec![83, m, 0]));
}

#[test]
fn pre_score_skips_without_feasible_nodes_and_normalize_is_min_max() {
    let pl = plugin();
    let a = affinities();
    let snap = snapshot(&[node("n", &[])], &[]);
    let p = pod().affinity(&a.stay_s1_region).obj();
    assert!(
        pl.pre_score(&mut CycleState::new(), &p, &[], &snap)
            .is_skip()
    );
    let mut s = vec![-5, 0, 5, 10];
    scoring::normalize(&mut s);
    assert_eq!(s, vec![0, 33, 66, 100]);
    let mut s = vec![7, 7];
    scoring::normalize(&mut s);
    assert_eq!(s, vec![0, 0]);
}

// ---- args ---------------------------------------------------------------------------------

// After kubernetes/kubernetes pkg/scheduler/apis/config/validation/validation_pluginargs_test.go
// (TestValidateInterPodAffinityArgs).
#[test]
fn args_defaults_and_validation() {
    let ctx = crate::plugins::PluginContext {
        client: client(),
        waiting_pods: Default::default(),
        pool: None,
    };
    let build = |v: serde_json::Value| factory(&ctx, Some(&v)).map(|_| ());
    assert!(factory(&ctx, None).is_ok());
    assert_eq!(
        decode_args::<InterPodAffinityArgs>(Some(&serde_json::json!({}))).unwrap(),
        InterPodAffinityArgs::default()
    );
    assert_eq!(InterPodAffinityArgs::default().hard_pod_affinity_weight, 1);
    assert!(build(serde_json::json!({"hardPodAffinityWeight": 0})).is_ok());
    assert!(build(serde_json::json!({"hardPodAffinityWeight": 100})).is_ok());
    assert_eq!(
        build(serde_json::json!({"hardPodAffinityWeight": -1})).unwrap_err(),
        "hardPodAffinityWeight: Invalid value: -1: not in valid range [0-100]"
    );
    assert_eq!(
        build(serde_json::json!({"hardPodAffinityWeight": 101})).unwrap_err(),
        "hardPodAffinityWeight: Invalid value: 101: not in valid range [0-100]"
    );
    assert!(build(serde_json::json!({"bogus": 1})).is_err());
    let args: InterPodAffinityArgs = decode_args(Some(
        &serde_json::json!({"ignorePreferredTermsOfExistingPods": true}),
    ))
    .unwrap();
    assert!(args.ignore_preferred_terms_of_existing_pods);
    assert_eq!(args.hard_pod_affinity_weight, 1);
}

#[test]
fn registered_by_default_with_weight_2_after_node_resources_fit() {
    let d = crate::plugins::DEFAULT_PLUGINS;
    let i = d.iter().position(|(n, _)| *n == NAME).unwrap();
    assert_eq!(d[i].1, 2);
    let fit = d
        .iter()
        .position(|(n, _)| *n == crate::plugins::node_resources_fit::NAME)
        .unwrap();
    assert!(fit < i);
    assert!(crate::plugins::Registry::in_tree().get(NAME).is_some());
}

// ---- events -------------------------------------------------------------------------------

#[test]
fn events_to_register() {
    let ev = plugin().events_to_register();
    assert_eq!(
        ev,
        vec![
            ClusterEvent::new(
                EventResource::Pod,
                ActionType::ADD
                    .union(ActionType::UPDATE_POD_LABEL)
                    .union(ActionType::DELETE)
            ),
            ClusterEvent::new(
                EventResource::Node,
                ActionType::ADD.union(ActionType::UPDATE_NODE_LABEL)
            ),
        ]
    );
    // An assigned pod's label update and delete match; a taint update does not.
    let m = |e: ClusterEvent| ev.iter().any(|r| r.matches(&e));
    assert!(m(ClusterEvent::new(
        EventResource::AssignedPod,
        ActionType::UPDATE_POD_LABEL
    )));
    assert!(m(ClusterEvent::new(
        EventResource::AssignedPod,
        ActionType::DELETE
    )));
    assert!(!m(ClusterEvent::new(
        EventResource::Node,
        ActionType::UPDATE_NODE_TAINT
    )));
}

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/interpodaffinity/plugin_test.go (Test_isSchedulableAfterPodChange).
#[test]
fn is_schedulable_after_pod_change() {
    use QueueingHint::{Queue, QueueSkip};
    let sv = &["securityscan", "value2"];
    let aff = || pod().name("p").aff_in("service", "region", sv).obj();
    let anti = || pod().name("p").anti_in("service", "region", sv).obj();
    let two = || {
        pod()
            .name("p")
            .aff_exists("aaa", "hostname")
            .aff_exists("bbb", "hostname")
            .obj()
    };
    let on = |l: &[(&str, &str)]| pod().node("fake-node").labels(l).obj();
    let off = |l: &[(&str, &str)]| pod().labels(l).obj();
    let scan = [("service", "securityscan")];
    // (name, pod, old, new, want)
    type Case = (&'static str, Pod, Option<Pod>, Option<Pod>, QueueingHint);
    let cases: Vec<Case> = vec![
        (
            "add a pod matching the affinity",
            aff(),
            None,
            Some(on(&scan)),
            Queue,
        ),
        (
            "add an unscheduled pod",
            aff(),
            None,
            Some(off(&scan)),
            QueueSkip,
        ),
        (
            "add a pod not matching the affinity",
            aff(),
            None,
            Some(on(&[("aaa", "a")])),
            QueueSkip,
        ),
        (
            "update a pod from non-match to match",
            aff(),
            Some(on(&[("aaa", "a")])),
            Some(on(&scan)),
            Queue,
        ),
        (
            "the updated pod matches before and after",
            aff(),
            Some(on(&[("service", "value2")])),
            Some(on(&scan)),
            QueueSkip,
        ),
        (
            "update an unscheduled pod",
            aff(),
            Some(off(&scan)),
            Some(off(&scan)),
            QueueSkip,
        ),
        (
            "update a pod from match to non-match",
            aff(),
            Some(on(&scan)),
            Some(on(&[("aaa", "a")])),
            QueueSkip,
        ),
        (
            "match to non-match, several terms",
            two(),
            Some(on(&[("aaa", "a")])),
            Some(on(&scan)),
            QueueSkip,
        ),
        (
            "non-match to match, several terms",
            two(),
            Some(on(&[("aaa", "a")])),
            Some(on(&[("aaa", ""), ("bbb", "")])),
            Queue,
        ),
        (
            "a pod stops matching the anti-affinity",
            anti(),
            Some(on(&scan)),
            Some(on(&[("service", "aaaa")])),
            Queue,
        ),
        (
            "a pod starts matching the anti-affinity",
            anti(),
            Some(on(&[("service", "bbb")])),
            Some(on(&scan)),
            QueueSkip,
        ),
        (
            "delete a pod not matching the anti-affinity",
            anti(),
            Some(on(&[("aaa", "a")])),
            None,
            QueueSkip,
        ),
        (
            "delete a pod matching the anti-affinity",
            anti(),
            Some(on(&scan)),
            None,
            Queue,
        ),
    ];
    let pl = plugin();
    for (name, p, old, new, want) in cases {
        let obj = |x: &Option<Pod>| match x {
            Some(p) => EventObject::Pod(Arc::new(p.clone())),
            None => EventObject::None,
        };
        let ev = ClusterEvent::new(EventResource::AssignedPod, ActionType::ADD);
        let got = pl.queueing_hint(&ev, &p, &obj(&old), &obj(&new)).unwrap();
        assert_eq!(got, want, "{name}");
    }
    // No objects (an event raised without them): Queue.
    let ev = ClusterEvent::new(EventResource::AssignedPod, ActionType::UPDATE_POD_LABEL);
    assert_eq!(
        pl.queueing_hint(&ev, &aff(), &EventObject::None, &EventObject::None),
        Ok(Queue)
    );
}

// Ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/interpodaffinity/plugin_test.go (Test_isSchedulableAfterNodeChange).
#[test]
fn is_schedulable_after_node_change() {
    use QueueingHint::{Queue, QueueSkip};
    let sv = &["securityscan", "value2"];
    let aff = |topo: &str| pod().name("p").aff_in("service", topo, sv).obj();
    let anti = || {
        pod()
            .name("p")
            .req_anti(term(&[("another", IN, &["label"])], "zone"))
            .obj()
    };
    let n = |l: &[(&str, &str)]| node("node-a", l);
    let z1 = [("zone", "zone1")];
    // (name, pod, old, new, want)
    type Case = (&'static str, Pod, Option<Node>, Node, QueueingHint);
    let cases: Vec<Case> = vec![
        (
            "add a node with the affinity key",
            aff("zone"),
            None,
            n(&z1),
            Queue,
        ),
        (
            "add a node without the key",
            aff("region"),
            None,
            n(&z1),
            QueueSkip,
        ),
        (
            "update a label that is not the key",
            aff("zone"),
            Some(n(&[("aaa", "a")])),
            n(&[("aaa", "b")]),
            QueueSkip,
        ),
        (
            "add an unrelated label",
            aff("zone"),
            Some(n(&z1)),
            n(&[("zone", "zone1"), ("unrelated-label", "unrelated")]),
            QueueSkip,
        ),
        (
            "change the affinity key's value",
            aff("zone"),
            Some(n(&z1)),
            n(&[("zone", "zone2")]),
            Queue,
        ),
        (
            "gain the affinity key",
            aff("zone"),
            Some(n(&[("aaa", "a")])),
            n(&z1),
            Queue,
        ),
        (
            "add a node with the anti-affinity key",
            anti(),
            None,
            n(&z1),
            Queue,
        ),
        (
            "add a node without the anti-affinity key",
            anti(),
            None,
            n(&[]),
            Queue,
        ),
        (
            "add an unrelated label (anti-affinity)",
            anti(),
            Some(n(&z1)),
            n(&[("zone", "zone1"), ("unrelated-label", "unrelated")]),
            QueueSkip,
        ),
        (
            "change the anti-affinity key's value",
            anti(),
            Some(n(&z1)),
            n(&[("zone", "zone2")]),
            Queue,
        ),
        (
            "gain the anti-affinity key",
            anti(),
            Some(n(&[("aaa", "a")])),
            n(&z1),
            QueueSkip,
        ),
        (
            "lose the anti-affinity key",
            anti(),
            Some(n(&z1)),
            n(&[("aaa", "a")]),
            Queue,
        ),
    ];
    let pl = plugin();
    for (name, p, old, new, want) in cases {
        let old = match old {
            Some(o) => EventObject::Node(Arc::new(o)),
            None => EventObject::None,
        };
        let ev = ClusterEvent::new(EventResource::Node, ActionType::ADD);
        let got = pl
            .queueing_hint(&ev, &p, &old, &EventObject::Node(Arc::new(new)))
            .unwrap();
        assert_eq!(got, want, "{name}");
    }
}

/// PreFilter and PreScore match a running pod's terms once per run of pods sharing their
/// spec and labels (`Arc`s, as pods stamped from one template do) and namespace. Pods that
/// share the `Arc`s but not the namespace must still be judged apart: here 3 of 6 pods per
/// node, identical but for the namespace, are in the namespace the terms name.
#[test]
fn pods_sharing_spec_and_labels_are_told_apart_by_namespace() {
    let nodes: Vec<Node> = (0..4)
        .map(|i| {
            node(
                &format!("n{i}"),
                &[("zone", ["z0", "z1"][i % 2]), ("hostname", "h")],
            )
        })
        .collect();
    // The running pods: required and preferred affinity of their own (matched against the
    // incoming pod in PreScore), all sharing one spec and one label set.
    // Their term names no namespace: it means the running pod's own.
    let template = pod()
        .label("app", "web")
        .req_aff(term(&[("app", Operator::In, &["web"])], "zone"))
        .obj();
    let mut pods = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        for j in 0..6 {
            let mut p = template.clone();
            let ns = ["a", "b"][j % 2];
            p.namespace = Sym::new(ns);
            p.key = crate::api::PodKey::new(ns, &format!("p-{i}-{j}"));
            p.name = Arc::from(format!("p-{i}-{j}").as_str());
            p.uid = p.name.clone();
            p.node_name = Some(n.name);
            pods.push(p);
        }
    }
    assert!(
        Arc::ptr_eq(&pods[0].spec, &pods[1].spec) && Arc::ptr_eq(&pods[0].labels, &pods[1].labels)
    );
    let snap = snapshot(&nodes, &pods);
    let incoming = pod()
        .ns("a")
        .label("app", "web")
        .req_aff(term_ns(
            &[("app", Operator::In, &["web"])],
            "zone",
            &["a"],
            None,
        ))
        .req_anti(term_ns(
            &[("app", Operator::In, &["web"])],
            "hostname",
            &["a"],
            None,
        ))
        .obj();
    let s = plugin().compute_pre_filter_state(&incoming, &snap);
    // Two nodes per zone, three pods of namespace `a` on each.
    for z in ["z0", "z1"] {
        assert_eq!(
            s.affinity_counts.get(Sym::new("zone"), Sym::new(z)),
            6,
            "{z}"
        );
    }
    assert_eq!(
        s.anti_affinity_counts
            .get(Sym::new("hostname"), Sym::new("h")),
        12
    );
    // PreScore: a running pod's required affinity term (its own namespace) matches the
    // incoming pod only when they share the namespace: hardPodAffinityWeight 1 for each of
    // the 3 pods of that namespace per node, 6 per zone, whichever namespace it is.
    for ns in ["a", "b"] {
        let mut p = incoming.clone();
        p.namespace = Sym::new(ns);
        let ps = plugin().compute_pre_score_state(&p, &snap);
        for z in ["z0", "z1"] {
            assert_eq!(
                ps.topology_score.get(Sym::new("zone"), Sym::new(z)),
                Some(6),
                "{ns} {z}"
            );
        }
    }
}

// ---- sums kept between cycles (kept.rs) ----------------------------------------------------

/// A client whose namespaces can be relabelled between cycles.
#[derive(Default)]
struct MutableNsClient {
    ns: parking_lot::Mutex<AHashMap<Sym, Arc<Labels>>>,
}

impl MutableNsClient {
    fn set(&self, ns: &str, team: Option<&str>) {
        let mut m = self.ns.lock();
        match team {
            Some(t) => {
                m.insert(Sym::new(ns), Arc::new(Labels::from_pairs([("team", t)])));
            }
            None => {
                m.remove(&Sym::new(ns));
            }
        }
    }
}

impl ClusterClient for MutableNsClient {
    fn bind(&self, _: &Pod, _: Sym) -> Result<(), String> {
        Ok(())
    }
    fn pod_exists_unassigned(&self, _: &Pod) -> bool {
        true
    }
    fn namespace_labels(&self, namespace: Sym) -> Option<Arc<Labels>> {
        self.ns.lock().get(&namespace).cloned()
    }
}

/// One change to the cluster between two cycles.
#[derive(Clone, Debug)]
enum Change {
    /// A running pod of kind `kind` (see `running_pod`) on node `n`, in namespace `ns`.
    AddPod { n: usize, kind: usize, ns: usize },
    /// Remove the `k`-th pod added so far (if any).
    RemovePod(usize),
    /// Node `n` leaves or comes back.
    ToggleNode(usize),
    /// Node `n` moves to the other zone (or loses its zone label, every third time).
    Relabel(usize),
    /// Namespace `ns` changes team, or disappears.
    RelabelNamespace(usize, Option<usize>),
}

const KEPT_NAMESPACES: [&str; 3] = ["ns0", "ns1", "ns2"];

fn change() -> impl proptest::strategy::Strategy<Value = Change> {
    use proptest::prelude::*;
    prop_oneof![
        5 => (0usize..6, 0usize..6, 0usize..3).prop_map(|(n, kind, ns)| Change::AddPod { n, kind, ns }),
        2 => (0usize..64).prop_map(Change::RemovePod),
        1 => (0usize..6).prop_map(Change::ToggleNode),
        1 => (0usize..6).prop_map(Change::Relabel),
        1 => (0usize..3, proptest::option::of(0usize..2)).prop_map(|(n, t)| Change::RelabelNamespace(n, t)),
    ]
}

/// The running pods: plain ones with `app` a or b, and ones carrying each kind of term.
fn running_pod(kind: usize, name: &str, ns: &str, node: &str) -> Pod {
    let ns_team1 = || Some(sel(&[("team", IN, &["team1"])]));
    let b = pod().name(name).ns(ns).node(node);
    match kind {
        0 => b.label("app", "a").obj(),
        1 => b.label("app", "b").label("tier", "x").obj(),
        2 => b.label("app", "a").anti_in("app", "hostname", &["a"]).obj(),
        3 => b
            .label("app", "b")
            .req_anti(term_ns(&[("app", IN, &["a"])], "zone", &[], ns_team1()))
            .obj(),
        4 => b.label("app", "a").aff_in("app", "zone", &["b"]).obj(),
        _ => {
            let mut p = b.label("app", "b").obj();
            let mut spec = (*p.spec).clone();
            spec.pod_affinity.preferred_affinity = vec![w(5, term(&[("app", IN, &["a"])], "zone"))];
            spec.pod_affinity.preferred_anti_affinity =
                vec![w(3, term(&[("tier", EXISTS, &[])], "hostname"))];
            p.spec = Arc::new(spec);
            p
        }
    }
}

/// The incoming pods: each map of the plugin, with namespace selectors and matchLabelKeys.
fn incoming_pods() -> Vec<Pod> {
    let ns_team1 = || Some(sel(&[("team", IN, &["team1"])]));
    let mut match_keys = term(&[("app", EXISTS, &[])], "zone");
    match_keys.match_label_keys = vec![Sym::new("tier")];
    let mut preferred = pod()
        .name("in-c")
        .ns("ns0")
        .label("app", "a")
        .label("tier", "x")
        .obj();
    let mut spec = (*preferred.spec).clone();
    spec.pod_affinity.preferred_affinity = vec![w(7, term(&[("app", IN, &["b"])], "zone"))];
    spec.pod_affinity.preferred_anti_affinity = vec![w(
        2,
        term_ns(&[("app", EXISTS, &[])], "hostname", &[], ns_team1()),
    )];
    preferred.spec = Arc::new(spec);
    vec![
        pod()
            .name("in-a")
            .ns("ns0")
            .label("app", "a")
            .req_aff(term_ns(
                &[("app", IN, &["a", "b"])],
                "zone",
                &[],
                ns_team1(),
            ))
            .anti_in("app", "hostname", &["b"])
            .obj(),
        pod()
            .name("in-b")
            .ns("ns1")
            .label("app", "b")
            .label("tier", "x")
            .req_anti(match_keys)
            .obj(),
        preferred,
        // No terms: only the running pods' terms count.
        pod().name("in-d").ns("ns2").label("app", "a").obj(),
        // The same, in the namespace of in-a and in-c with other labels: running pods' terms
        // see it differently.
        pod()
            .name("in-e")
            .ns("ns0")
            .label("app", "b")
            .label("tier", "x")
            .obj(),
    ]
}

fn kept_node(i: usize, zone: usize) -> Arc<Node> {
    let name = format!("node-{i}");
    let zone_label = format!("z{zone}");
    let mut labels = vec![("hostname", name.as_str())];
    if zone < 2 {
        labels.push(("zone", zone_label.as_str()));
    }
    Arc::new(node(&name, &labels))
}

/// Every map of both states, for comparison.
fn all_maps(
    pl: &InterPodAffinity,
    p: &Pod,
    snap: &Snapshot,
) -> (
    TopologyCounts,
    TopologyCounts,
    TopologyCounts,
    scoring::TopologyScores,
) {
    let f = pl.compute_pre_filter_state(p, snap);
    let s = pl.compute_pre_score_state(p, snap);
    (
        (*f.existing_anti_affinity_counts).clone(),
        (*f.affinity_counts).clone(),
        (*f.anti_affinity_counts).clone(),
        (*s.topology_score).clone(),
    )
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]
    /// A plugin that keeps its sums from cycle to cycle computes the same four maps as a fresh
    /// one, whatever changed in between: running pods with and without terms added and
    /// removed, nodes removed, re-added and moved between zones (or out of every zone), and
    /// namespaces relabelled or deleted. The snapshot is refreshed incrementally, as the
    /// scheduler does.
    #[test]
    fn kept_sums_equal_fresh_sums(changes in proptest::collection::vec(change(), 1..40)) {
        let client = Arc::new(MutableNsClient::default());
        client.set("ns0", Some("team1"));
        client.set("ns1", Some("team2"));
        let warm = InterPodAffinity::new(InterPodAffinityArgs::default(), client.clone());
        let incoming = incoming_pods();
        let cache = Cache::new();
        let mut zone = [0usize, 0, 1, 1, 0, 1];
        let mut present = [true; 6];
        for (i, &z) in zone.iter().enumerate() {
            cache.add_node(kept_node(i, z));
        }
        let mut snap = Snapshot::default();
        let mut added: Vec<Pod> = Vec::new();
        for (step, c) in changes.into_iter().enumerate() {
            match c {
                Change::AddPod { n, kind, ns } => {
                    let p = running_pod(kind, &format!("e{step}"), KEPT_NAMESPACES[ns], &format!("node-{n}"));
                    cache.add_pod(Arc::new(p.clone()));
                    added.push(p);
                }
                Change::RemovePod(k) => {
                    if !added.is_empty() {
                        let p = added.remove(k % added.len());
                        cache.remove_pod(&p.key);
                    }
                }
                Change::ToggleNode(n) => {
                    if present[n] {
                        cache.remove_node(Sym::new(&format!("node-{n}")));
                    } else {
                        cache.add_node(kept_node(n, zone[n]));
                    }
                    present[n] = !present[n];
                }
                Change::Relabel(n) => {
                    zone[n] = (zone[n] + 1) % 3;
                    if present[n] {
                        cache.update_node(kept_node(n, zone[n]));
                    }
                }
                Change::RelabelNamespace(ns, team) => {
                    client.set(KEPT_NAMESPACES[ns], team.map(|t| ["team1", "team2"][t]));
                }
            }
            cache.update_snapshot(&mut snap);
            for p in &incoming {
                // Twice: the first sighting of a key is computed afresh, the second keeps it.
                // The reference is a new plugin each time (it keeps nothing).
                for _ in 0..2 {
                    let a = all_maps(&warm, p, &snap);
                    let fresh = InterPodAffinity::new(InterPodAffinityArgs::default(), client.clone());
                    let b = all_maps(&fresh, p, &snap);
                    proptest::prop_assert_eq!(&a, &b, "step {} pod {}", step, p.name);
                }
            }
        }
    }
}

/// The parallel paths: a first (fresh) pass and a refresh of hundreds of changed nodes run
/// on a pool, and give what a sequential fresh plugin computes.
#[test]
fn kept_sums_refresh_many_nodes_on_a_pool() {
    let client = Arc::new(MutableNsClient::default());
    client.set("ns0", Some("team1"));
    client.set("ns1", Some("team2"));
    let pool = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap(),
    );
    let warm = InterPodAffinity::new(InterPodAffinityArgs::default(), client.clone())
        .with_pool(Some(pool));
    let cache = Cache::new();
    for i in 0..600 {
        cache.add_node(kept_node(i, i % 3));
    }
    let mut snap = Snapshot::default();
    let incoming = incoming_pods();
    let mut seq = 0;
    for round in 0..4 {
        // Round 0 fills every node; later rounds touch 300 of them, relabel the namespaces
        // once, and remove a block of nodes.
        let touched: Vec<usize> = if round == 0 {
            (0..600).collect()
        } else {
            (0..300).map(|k| (k * 2 + round) % 600).collect()
        };
        for &n in &touched {
            let p = running_pod(
                seq % 6,
                &format!("r{seq}"),
                KEPT_NAMESPACES[seq % 3],
                &format!("node-{n}"),
            );
            seq += 1;
            cache.add_pod(Arc::new(p));
        }
        if round == 2 {
            client.set("ns1", Some("team1"));
        }
        if round == 3 {
            for n in 500..600 {
                cache.remove_node(Sym::new(&format!("node-{n}")));
            }
        }
        cache.update_snapshot(&mut snap);
        for p in &incoming {
            for _ in 0..2 {
                let fresh = InterPodAffinity::new(InterPodAffinityArgs::default(), client.clone());
                assert!(
                    all_maps(&warm, p, &snap) == all_maps(&fresh, p, &snap),
                    "round {round} pod {}",
                    p.name
                );
            }
        }
    }
}
