//! Tests, most ported from kube's tables (provenance on each).

use super::filtering::{
    ERR_REASON_AFFINITY_RULES_NOT_MATCH, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH, PRE_FILTER_STATE_KEY, PreFilterState,
};
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

mod args_test;
mod events_test;
mod filtering_test;
mod kept_test;
mod scoring_test;

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
