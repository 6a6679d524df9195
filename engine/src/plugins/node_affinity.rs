//! NodeAffinity: `nodeSelector` and required node affinity in Filter (with a PreFilterResult
//! when every required term pins `metadata.name`), preferred terms in Score. The args'
//! `addedAffinity` applies to every pod on top of its own (required in Filter, preferred in
//! Score).
//! Source of behaviour: `pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go`;
//! args: `pkg/scheduler/apis/config/types_pluginargs.go` (`NodeAffinityArgs`).

use super::helper::default_normalize_score;
use crate::api::{Node, NodeSelector, Operator, Pod, Sym, WeightedTerm};
use crate::framework::Snapshot;
use crate::framework::cycle_state::CycleState;
use crate::framework::events::{
    ActionType, ClusterEvent, EventObject, EventResource, QueueingHint,
};
use crate::framework::interface::{
    EnqueueExtensions, FilterPlugin, Plugin, PreFilterPlugin, PreFilterResult, PreScorePlugin,
    ScorePlugin,
};
use crate::framework::node_info::NodeInfo;
use crate::framework::signature::{self, SignFragments, signer};
use crate::framework::status::{Code, Status};
use std::sync::Arc;

pub(crate) const NAME: &str = "NodeAffinity";
pub(crate) const ERR_REASON_POD: &str = "node(s) didn't match Pod's node affinity/selector";
pub(crate) const ERR_REASON_CONFLICT: &str = "pod affinity terms conflict";
pub(crate) const ERR_REASON_ENFORCED: &str =
    "node(s) didn't match scheduler-enforced node affinity";

/// `NodeAffinityArgs` (v1).
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct NodeAffinityArgs {
    pub(crate) added_affinity: Option<k8s_openapi::api::core::v1::NodeAffinity>,
}

#[derive(Debug, Default)]
pub(crate) struct NodeAffinity {
    /// `addedAffinity.requiredDuringSchedulingIgnoredDuringExecution`.
    added_required: Option<NodeSelector>,
    /// `addedAffinity.preferredDuringSchedulingIgnoredDuringExecution` (kube scores when
    /// the list is non-empty; terms of weight 0 count nothing).
    added_preferred: Vec<WeightedTerm>,
}

impl NodeAffinity {
    /// The registry's factory. An `Err` is the conversion error of `addedAffinity` with its
    /// field path (kube's `ValidateNodeAffinityArgs`).
    pub(crate) fn from_args(args: Option<&serde_json::Value>) -> Result<NodeAffinity, String> {
        let a: NodeAffinityArgs = crate::framework::registry::decode_args(args)?;
        let Some(na) = &a.added_affinity else {
            return Ok(NodeAffinity::default());
        };
        let (added_required, added_preferred) =
            crate::api::convert::node_affinity(na, "addedAffinity").map_err(|e| e.to_string())?;
        Ok(NodeAffinity {
            added_required,
            added_preferred,
        })
    }

    fn added_matches(&self, node: &Node) -> bool {
        self.added_required
            .as_ref()
            .is_none_or(|s| s.matches(node.name, &node.labels))
    }
}

/// Sum of the weights of the terms `node` matches (kube's `PreferredSchedulingTerms.Score`).
fn preferred_score(terms: &[WeightedTerm], node: &Node) -> i64 {
    terms
        .iter()
        .filter(|w| w.weight != 0 && w.term.matches(node.name, &node.labels))
        .map(|w| i64::from(w.weight))
        .sum()
}

impl Plugin for NodeAffinity {
    fn signs_pods(&self) -> bool {
        true
    }
    fn node_local(&self, _pod: &crate::api::Pod) -> bool {
        true
    }
    fn sign_pod(&self, pod: &crate::api::Pod, sig: &mut SignFragments) -> Result<(), &'static str> {
        sig.put(signer::NODE_AFFINITY, || signature::node_affinity(pod));
        sig.put(signer::NODE_SELECTOR, || signature::node_selector(pod));
        Ok(())
    }
    fn name(&self) -> &'static str {
        NAME
    }
    fn into_pre_filter(self: Arc<Self>) -> Option<Arc<dyn PreFilterPlugin>> {
        Some(self)
    }
    fn into_filter(self: Arc<Self>) -> Option<Arc<dyn FilterPlugin>> {
        Some(self)
    }
    fn into_pre_score(self: Arc<Self>) -> Option<Arc<dyn PreScorePlugin>> {
        Some(self)
    }
    fn into_score(self: Arc<Self>) -> Option<Arc<dyn ScorePlugin>> {
        Some(self)
    }
    fn into_enqueue_extensions(self: Arc<Self>) -> Option<Arc<dyn EnqueueExtensions>> {
        Some(self)
    }
}

/// Whether `node` satisfies the pod's nodeSelector and required node affinity.
pub(crate) fn matches(pod: &Pod, node: &NodeInfo) -> bool {
    matches_node(pod, &node.node)
}

/// [`matches`] on a bare node (queueing hints judge nodes outside the cache).
pub(crate) fn matches_node(pod: &Pod, node: &Node) -> bool {
    let labels = &*node.labels;
    let sel_ok = pod
        .spec
        .node_selector
        .iter()
        .all(|(k, v)| labels.get(k) == Some(v));
    sel_ok
        && pod
            .spec
            .required_node_affinity
            .as_ref()
            .is_none_or(|r| r.matches(node.name, labels))
}

impl PreFilterPlugin for NodeAffinity {
    fn pre_filter(
        &self,
        _: &mut CycleState,
        pod: &Pod,
        _: &Snapshot,
    ) -> (Option<PreFilterResult>, Status) {
        let spec = &pod.spec;
        let Some(req) = &spec.required_node_affinity else {
            if spec.node_selector.is_empty() && self.added_required.is_none() {
                return (None, Status::skip());
            }
            return (None, Status::success());
        };
        if req.terms.is_empty() {
            return (None, Status::success());
        }
        // If every term pins nodes through `metadata.name In [...]`, only those nodes can fit.
        // Within a term the requirements are ANDed (intersection); terms are ORed (union).
        let mut names: Vec<Sym> = Vec::new();
        for t in &req.terms {
            let mut term_names: Option<Vec<Sym>> = None;
            for r in t.match_fields.iter().filter(|r| r.op == Operator::In) {
                term_names = Some(match term_names {
                    None => r.values.clone(),
                    Some(mut cur) => {
                        cur.retain(|n| r.values.contains(n));
                        cur
                    }
                });
            }
            match term_names {
                Some(v) => names.extend(v),
                None => return (None, Status::success()),
            }
        }
        names.sort_unstable();
        names.dedup();
        if names.is_empty() {
            return (
                None,
                Status::new(Code::UnschedulableAndUnresolvable, ERR_REASON_CONFLICT),
            );
        }
        (
            Some(PreFilterResult {
                node_names: Some(names),
            }),
            Status::success(),
        )
    }
}

impl FilterPlugin for NodeAffinity {
    fn filter(&self, _: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        if !self.added_matches(&node.node) {
            return Status::new(Code::UnschedulableAndUnresolvable, ERR_REASON_ENFORCED);
        }
        if matches(pod, node) {
            Status::success()
        } else {
            Status::new(Code::UnschedulableAndUnresolvable, ERR_REASON_POD)
        }
    }
}

impl PreScorePlugin for NodeAffinity {
    /// Reads the pod and the snapshot, never the feasible nodes.
    fn pre_score_reads_nodes(&self, _: &Pod, _: &Snapshot) -> bool {
        false
    }
    fn pre_score(&self, _: &mut CycleState, pod: &Pod, _: &[&NodeInfo], _: &Snapshot) -> Status {
        if pod.spec.preferred_node_affinity.is_empty() && self.added_preferred.is_empty() {
            return Status::skip();
        }
        Status::success()
    }
}

impl ScorePlugin for NodeAffinity {
    fn score(&self, _: &CycleState, pod: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        Ok(preferred_score(&self.added_preferred, &node.node)
            + preferred_score(&pod.spec.preferred_node_affinity, &node.node))
    }
    fn has_normalize(&self) -> bool {
        true
    }
    fn default_normalize(&self) -> Option<bool> {
        Some(false)
    }
    fn normalize_score(&self, _: &CycleState, _: &Pod, scores: &mut [i64]) -> Status {
        default_normalize_score(scores, false);
        Status::success()
    }
}

impl EnqueueExtensions for NodeAffinity {
    /// kube's `isSchedulableAfterNodeChange`: a node helps only if it matches the added
    /// affinity and the pod's required affinity, and (for an update) did not match before.
    fn queueing_hint(
        &self,
        _: &ClusterEvent,
        pod: &Pod,
        old: &EventObject,
        new: &EventObject,
    ) -> Result<QueueingHint, String> {
        let EventObject::Node(modified) = new else {
            return Ok(QueueingHint::Queue);
        };
        if !self.added_matches(modified) || !matches_node(pod, modified) {
            return Ok(QueueingHint::QueueSkip);
        }
        match old {
            EventObject::Node(original) if matches_node(pod, original) => {
                Ok(QueueingHint::QueueSkip)
            }
            _ => Ok(QueueingHint::Queue),
        }
    }

    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![ClusterEvent::new(
            EventResource::Node,
            ActionType::ADD.union(ActionType::UPDATE_NODE_LABEL),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::convert;
    use serde_json::json;

    fn node(name: &str, labels: serde_json::Value) -> Arc<Node> {
        let n: k8s_openapi::api::core::v1::Node =
            serde_json::from_value(json!({"metadata": {"name": name, "labels": labels}})).unwrap();
        Arc::new(convert::node(&n).unwrap())
    }

    fn pod(affinity: serde_json::Value) -> Pod {
        let p: k8s_openapi::api::core::v1::Pod = serde_json::from_value(json!({
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "i"}], "affinity": affinity},
        }))
        .unwrap();
        convert::pod(&p).unwrap()
    }

    fn required(key: &str, values: &[&str]) -> serde_json::Value {
        json!({"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": key, "operator": "In", "values": values}]}
        ]}})
    }

    fn preferred(weight: i32, key: &str, value: &str) -> serde_json::Value {
        json!({"weight": weight, "preference": {"matchExpressions": [
            {"key": key, "operator": "In", "values": [value]}
        ]}})
    }

    fn with_added(added: serde_json::Value) -> NodeAffinity {
        NodeAffinity::from_args(Some(&json!({"addedAffinity": added}))).unwrap()
    }

    /// PreFilter then Filter, as the framework runs them.
    fn filter(pl: &NodeAffinity, p: &Pod, n: &Arc<Node>) -> Status {
        let mut state = CycleState::new();
        let (_, st) = pl.pre_filter(&mut state, p, &Snapshot::default());
        if st.is_skip() {
            return Status::success();
        }
        if !st.is_success() {
            return st;
        }
        pl.filter(&state, p, &NodeInfo::new(n.clone()))
    }

    // Provenance: kubernetes/kubernetes
    // pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go (TestNodeAffinity,
    // the addedAffinity cases).
    #[test]
    fn added_affinity_in_filter() {
        let zone_foo = node("node1", json!({"zone": "foo"}));
        // Matches the added affinity and the pod's.
        let pl = with_added(required("zone", &["foo"]));
        let p = pod(json!({"nodeAffinity": required("zone", &["foo"])}));
        assert!(filter(&pl, &p, &zone_foo).is_success());
        // Matches the added affinity but not the pod's.
        let p = pod(json!({"nodeAffinity": required("zone", &["bar"])}));
        let st = filter(&pl, &p, &zone_foo);
        assert_eq!(st.code(), Code::UnschedulableAndUnresolvable);
        assert_eq!(st.reasons(), [ERR_REASON_POD]);
        // Does not match the added affinity: a pod without affinity is still filtered.
        let pl = with_added(required("zone", &["bar"]));
        let st = filter(&pl, &pod(json!({})), &zone_foo);
        assert_eq!(st.code(), Code::UnschedulableAndUnresolvable);
        assert_eq!(st.reasons(), [ERR_REASON_ENFORCED]);
        // Without added affinity such a pod skips the plugin.
        let mut state = CycleState::new();
        let (_, st) =
            NodeAffinity::default().pre_filter(&mut state, &pod(json!({})), &Snapshot::default());
        assert!(st.is_skip());
    }

    fn scores(pl: &NodeAffinity, p: &Pod, nodes: &[Arc<Node>]) -> Vec<i64> {
        let infos: Vec<NodeInfo> = nodes.iter().map(|n| NodeInfo::new(n.clone())).collect();
        let refs: Vec<&NodeInfo> = infos.iter().collect();
        let mut state = CycleState::new();
        if pl
            .pre_score(&mut state, p, &refs, &Snapshot::default())
            .is_skip()
        {
            return vec![];
        }
        let mut s: Vec<i64> = infos
            .iter()
            .map(|ni| pl.score(&state, p, ni).unwrap())
            .collect();
        pl.normalize_score(&state, p, &mut s);
        s
    }

    // Provenance: kubernetes/kubernetes
    // pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go
    // (TestNodeAffinityPriority, "added affinity" cases).
    #[test]
    fn added_affinity_in_score() {
        let nodes = [
            node("node1", json!({"foo": "bar"})),
            node("node2", json!({"key": "value"})),
            node("node3", json!({"foo": "bar", "key": "value", "az": "az1"})),
        ];
        let pl = with_added(json!({
            "preferredDuringSchedulingIgnoredDuringExecution": [preferred(2, "foo", "bar")]
        }));
        assert_eq!(scores(&pl, &pod(json!({})), &nodes[..2]), [100, 0]);
        // Added (key=value, 3) plus the pod's own (foo=bar, 2): 2, 3, 5 normalized.
        let pl = with_added(json!({
            "preferredDuringSchedulingIgnoredDuringExecution": [preferred(3, "key", "value")]
        }));
        let p = pod(json!({"nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [preferred(2, "foo", "bar")]
        }}));
        assert_eq!(scores(&pl, &p, &nodes), [40, 60, 100]);
        // Neither the pod nor the args prefer anything: Score is skipped.
        assert!(scores(&NodeAffinity::default(), &pod(json!({})), &nodes).is_empty());
    }

    #[test]
    fn bad_added_affinity_is_refused_with_its_path() {
        let err = NodeAffinity::from_args(Some(&json!({"addedAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "Bogus", "values": ["a"]}]}
            ]}
        }})))
        .unwrap_err();
        assert!(
            err.starts_with(
                "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator"
            ),
            "{err}"
        );
        assert!(NodeAffinity::from_args(Some(&json!({"other": 1}))).is_err());
    }

    // Provenance: kubernetes/kubernetes
    // pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go
    // (Test_isSchedulableAfterNodeChange).
    #[test]
    fn node_change_hints() {
        let pl = NodeAffinity::default();
        let ev = ClusterEvent::new(EventResource::Node, ActionType::ADD);
        let h = |pl: &NodeAffinity, p: &Pod, old: EventObject, new: EventObject| {
            pl.queueing_hint(&ev, p, &old, &new).unwrap()
        };
        let p = pod(json!({"nodeAffinity": required("foo", &["bar"])}));
        let matching = EventObject::Node(node("n", json!({"foo": "bar"})));
        let other = EventObject::Node(node("n", json!({"foo": "baz"})));
        // Added node that matches / does not match.
        assert_eq!(
            h(&pl, &p, EventObject::None, matching.clone()),
            QueueingHint::Queue
        );
        assert_eq!(
            h(&pl, &p, EventObject::None, other.clone()),
            QueueingHint::QueueSkip
        );
        // Updated node: only an unmatched -> matched change helps.
        assert_eq!(
            h(&pl, &p, other.clone(), matching.clone()),
            QueueingHint::Queue
        );
        assert_eq!(
            h(&pl, &p, matching.clone(), matching.clone()),
            QueueingHint::QueueSkip
        );
        assert_eq!(
            h(&pl, &p, matching.clone(), other.clone()),
            QueueingHint::QueueSkip
        );
        // A node outside the added affinity never helps.
        let enforced = with_added(required("foo", &["baz"]));
        assert_eq!(
            h(&enforced, &pod(json!({})), EventObject::None, matching),
            QueueingHint::QueueSkip
        );
        assert_eq!(
            h(&enforced, &pod(json!({})), EventObject::None, other),
            QueueingHint::Queue
        );
    }
}
