//! Ports of kube's PodTopologySpread tests. Each test names the Go file and test function it
//! comes from (all in kubernetes/kubernetes
//! `pkg/scheduler/framework/plugins/podtopologyspread/`). Cases are kept by name; the
//! `enableNodeInclusionPolicy: false` variants are left out (the gate is locked on in 1.34).

use super::filtering::{CriticalPaths, PRE_FILTER_STATE_KEY, PreFilterState};
use super::scoring::{PRE_SCORE_STATE_KEY, PreScoreState, topology_normalizing_weight};
use super::*;
use crate::api::{
    LabelSelector, Labels, Node, NodeSelector, NodeSelectorTerm, Operator, PodSpecInfo,
    Requirement, Taint, TaintEffect, Toleration,
};
use crate::cache::Cache;
use crate::framework::status::Code;
use std::collections::BTreeMap;

mod args_test;
mod events_test;
mod filtering_test;
mod kept_test;
mod pre_filter_test;
mod scoring_test;

// ---- builders (kube's st.MakePod / st.MakeNode) ------------------------------------------------

#[derive(Clone)]
struct PodB {
    ns: String,
    name: String,
    labels: Vec<(String, String)>,
    node: Option<String>,
    terminating: bool,
    node_selector: Vec<(String, String)>,
    spec: PodSpecInfo,
}

fn pod(name: &str) -> PodB {
    PodB {
        ns: "default".into(),
        name: name.into(),
        labels: Vec::new(),
        node: None,
        terminating: false,
        node_selector: Vec::new(),
        spec: PodSpecInfo::default(),
    }
}

fn req(key: &str, op: Operator, values: &[&str]) -> Requirement {
    Requirement {
        key: Sym::new(key),
        op,
        values: values.iter().map(|v| Sym::new(v)).collect(),
        int_value: 0,
    }
}

/// `st.MakeLabelSelector().Exists(key)`.
fn exists(key: &str) -> Option<LabelSelector> {
    Some(LabelSelector {
        requirements: vec![req(key, Operator::Exists, &[])],
    })
}

/// `st.MakeLabelSelector().Label(key, value)`.
fn label_sel(key: &str, value: &str) -> Option<LabelSelector> {
    Some(LabelSelector {
        requirements: vec![req(key, Operator::In, &[value])],
    })
}

fn foo() -> Option<LabelSelector> {
    exists("foo")
}
fn bar() -> Option<LabelSelector> {
    exists("bar")
}

use UnsatisfiableConstraintAction::{DoNotSchedule as Hard, ScheduleAnyway as Soft};

#[derive(Clone)]
struct Tsc(TopologySpreadConstraint);

fn tsc(
    max_skew: i32,
    key: &str,
    action: UnsatisfiableConstraintAction,
    sel: Option<LabelSelector>,
) -> Tsc {
    Tsc(TopologySpreadConstraint {
        max_skew,
        topology_key: Sym::new(key),
        when_unsatisfiable: action,
        label_selector: sel,
        min_domains: None,
        node_affinity_policy: NodeInclusionPolicy::Honor,
        node_taints_policy: NodeInclusionPolicy::Ignore,
        match_label_keys: Vec::new(),
    })
}

impl Tsc {
    fn min_domains(mut self, m: i32) -> Tsc {
        self.0.min_domains = Some(m);
        self
    }
    fn affinity(mut self, p: NodeInclusionPolicy) -> Tsc {
        self.0.node_affinity_policy = p;
        self
    }
    fn taints(mut self, p: NodeInclusionPolicy) -> Tsc {
        self.0.node_taints_policy = p;
        self
    }
    fn match_label_keys(mut self, keys: &[&str]) -> Tsc {
        self.0.match_label_keys = keys.iter().map(|k| Sym::new(k)).collect();
        self
    }
}

use NodeInclusionPolicy::{Honor, Ignore};

impl PodB {
    fn ns(mut self, ns: &str) -> Self {
        self.ns = ns.into();
        self
    }
    fn label(mut self, k: &str, v: &str) -> Self {
        self.labels.push((k.into(), v.into()));
        self
    }
    fn node(mut self, n: &str) -> Self {
        self.node = Some(n.into());
        self
    }
    fn terminating(mut self) -> Self {
        self.terminating = true;
        self
    }
    fn spread(mut self, c: Tsc) -> Self {
        self.spec.topology_spread_constraints.push(c.0);
        self
    }
    fn c(
        self,
        max_skew: i32,
        key: &str,
        a: UnsatisfiableConstraintAction,
        s: Option<LabelSelector>,
    ) -> Self {
        self.spread(tsc(max_skew, key, a, s))
    }
    fn node_selector(mut self, k: &str, v: &str) -> Self {
        self.node_selector.push((k.into(), v.into()));
        self
    }
    fn node_affinity(mut self, key: &str, op: Operator, values: &[&str]) -> Self {
        self.spec.required_node_affinity = Some(NodeSelector {
            terms: vec![NodeSelectorTerm {
                match_expressions: vec![req(key, op, values)],
                match_fields: vec![],
            }],
        });
        self
    }
    fn toleration_exists(mut self, key: &str) -> Self {
        self.spec.tolerations.push(Toleration {
            key: Sym::new(key),
            exists: true,
            value: Sym::EMPTY,
            effect: None,
        });
        self
    }
    fn obj(self) -> Pod {
        let mut spec = self.spec;
        spec.node_selector = Labels::from_pairs(
            self.node_selector
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str())),
        );
        let mut p = Pod::new(&self.ns, &self.name, Arc::new(spec));
        p.labels = Arc::new(Labels::from_pairs(
            self.labels.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        ));
        p.node_name = self.node.as_deref().map(Sym::new);
        p.deletion_timestamp = self.terminating;
        p
    }
}

fn node(name: &str, labels: &[(&str, &str)]) -> Node {
    Node {
        name: Sym::new(name),
        labels: Arc::new(Labels::from_pairs(labels.iter().copied())),
        ..Default::default()
    }
}

/// kube's `taints`: `node.kubernetes.io/unschedulable:NoSchedule`.
fn tainted(mut n: Node) -> Node {
    n.taints = Arc::new([Taint {
        key: Sym::new("node.kubernetes.io/unschedulable"),
        value: Sym::EMPTY,
        effect: TaintEffect::NoSchedule,
    }]);
    n
}

/// node-a, node-b in zone1 and node-x, node-y in zone2, each with label `node=<name>`.
fn four_nodes() -> Vec<Node> {
    vec![
        node("node-a", &[("zone", "zone1"), ("node", "node-a")]),
        node("node-b", &[("zone", "zone1"), ("node", "node-b")]),
        node("node-x", &[("zone", "zone2"), ("node", "node-x")]),
        node("node-y", &[("zone", "zone2"), ("node", "node-y")]),
    ]
}

/// Existing pods labelled `foo` on the given nodes (`p-<node suffix><i>`).
fn foo_pods(spec: &[(&str, usize)]) -> Vec<Pod> {
    let mut out = Vec::new();
    for (n, count) in spec {
        let suffix = n.trim_start_matches("node-");
        for i in 1..=*count {
            out.push(
                pod(&format!("p-{suffix}{i}"))
                    .node(n)
                    .label("foo", "")
                    .obj(),
            );
        }
    }
    out
}

fn snapshot(nodes: Vec<Node>, pods: Vec<Pod>) -> Snapshot {
    let cache = Cache::new();
    for n in nodes {
        cache.add_node(Arc::new(n));
    }
    for p in pods {
        cache.add_pod(Arc::new(p));
    }
    let mut s = Snapshot::default();
    cache.update_snapshot(&mut s);
    s
}

/// A client whose default selector is fixed (kube's Services/ReplicaSets informers).
struct FakeClient(Option<LabelSelector>);

impl ClusterClient for FakeClient {
    fn bind(&self, _: &Pod, _: Sym) -> Result<(), String> {
        Ok(())
    }
    fn pod_exists_unassigned(&self, _: &Pod) -> bool {
        true
    }
    fn default_spread_selector(&self, _: &Pod) -> Option<LabelSelector> {
        self.0.clone()
    }
}

fn list_args(defaults: Vec<DefaultConstraintArgs>) -> PodTopologySpreadArgs {
    PodTopologySpreadArgs {
        default_constraints: defaults,
        defaulting_type: "List".into(),
    }
}

fn default_c(max_skew: i32, key: &str, when: &str) -> DefaultConstraintArgs {
    DefaultConstraintArgs {
        max_skew,
        topology_key: key.into(),
        when_unsatisfiable: when.into(),
        ..Default::default()
    }
}

/// The plugin as kube's tests build it: `defaultingType: List`, no defaults.
fn plugin() -> PodTopologySpread {
    PodTopologySpread::new(&list_args(vec![]), None).unwrap()
}

fn plugin_with(args: PodTopologySpreadArgs, selector: Option<LabelSelector>) -> PodTopologySpread {
    let client: Arc<dyn ClusterClient> = Arc::new(FakeClient(selector));
    PodTopologySpread::new(&args, Some(client)).unwrap()
}

// ---- state comparison helpers ------------------------------------------------------------------

type Counts = BTreeMap<String, i32>;

fn counts(pairs: &[(&str, i32)]) -> Counts {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

fn got_counts(s: &PreFilterState) -> Vec<Counts> {
    (0..s.constraints.len())
        .map(|i| {
            s.tp_value_to_match_num
                .iter(i)
                .map(|(k, v)| (k.to_string_lossy(), v as i32))
                .collect()
        })
        .collect()
}

/// Critical paths as `[(value, num); 2]`, ties sorted by value (kube's `criticalPaths.sort`).
fn paths(p: &CriticalPaths) -> [(String, i32); 2] {
    let mut a = [
        (p.0[0].topology_value.to_string_lossy(), p.0[0].match_num),
        (p.0[1].topology_value.to_string_lossy(), p.0[1].match_num),
    ];
    if a[0].1 == a[1].1 && a[0].0 > a[1].0 {
        let (x, y) = (a[0].0.clone(), a[1].0.clone());
        a[0].0 = y;
        a[1].0 = x;
    }
    a
}

fn cp(a: (&str, i32), b: (&str, i32)) -> [(String, i32); 2] {
    let mut p = [(a.0.to_string(), a.1), (b.0.to_string(), b.1)];
    if p[0].1 == p[1].1 && p[0].0 > p[1].0 {
        p.swap(0, 1);
    }
    p
}

const MAX: i32 = i32::MAX;

fn run_pre_filter(pl: &PodTopologySpread, p: &Pod, snap: &Snapshot) -> (CycleState, Status) {
    let mut cs = CycleState::new();
    let (r, st) = pl.pre_filter(&mut cs, p, snap);
    assert!(r.is_none());
    (cs, st)
}

fn pre_filter_state(pl: &PodTopologySpread, p: &Pod, snap: &Snapshot) -> PreFilterState {
    let (cs, st) = run_pre_filter(pl, p, snap);
    assert!(st.is_success(), "PreFilter: {st}");
    cs.read::<PreFilterState>(PRE_FILTER_STATE_KEY)
        .unwrap()
        .clone()
}
