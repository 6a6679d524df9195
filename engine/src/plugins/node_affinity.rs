//! NodeAffinity: `nodeSelector` and required node affinity in Filter (with a PreFilterResult
//! when every required term pins `metadata.name`), preferred terms in Score.
//! Source of behaviour: `pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go`.

use super::helper::default_normalize_score;
use crate::api::{Operator, Pod, Sym};
use crate::cache::Snapshot;
use crate::framework::cycle_state::CycleState;
use crate::framework::events::{ActionType, ClusterEvent, EventResource};
use crate::framework::interface::{
    EnqueueExtensions, FilterPlugin, Plugin, PreFilterPlugin, PreFilterResult, PreScorePlugin,
    ScorePlugin,
};
use crate::framework::node_info::NodeInfo;
use crate::framework::status::{Code, Status};
use std::sync::Arc;

pub const NAME: &str = "NodeAffinity";
pub const ERR_REASON_POD: &str = "node(s) didn't match Pod's node affinity/selector";
pub const ERR_REASON_CONFLICT: &str = "pod affinity terms conflict";

#[derive(Debug, Default)]
pub struct NodeAffinity;

impl Plugin for NodeAffinity {
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
pub fn matches(pod: &Pod, node: &NodeInfo) -> bool {
    let labels = &*node.node.labels;
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
            .is_none_or(|r| r.matches(node.name(), labels))
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
            if spec.node_selector.is_empty() {
                return (None, Status::skip());
            }
            return (None, Status::success());
        };
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
        if matches(pod, node) {
            Status::success()
        } else {
            Status::new(Code::UnschedulableAndUnresolvable, ERR_REASON_POD)
        }
    }
}

impl PreScorePlugin for NodeAffinity {
    fn pre_score(&self, _: &mut CycleState, pod: &Pod, _: &[&NodeInfo], _: &Snapshot) -> Status {
        if pod.spec.preferred_node_affinity.is_empty() {
            return Status::skip();
        }
        Status::success()
    }
}

impl ScorePlugin for NodeAffinity {
    fn score(&self, _: &CycleState, pod: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        let labels = &*node.node.labels;
        Ok(pod
            .spec
            .preferred_node_affinity
            .iter()
            .filter(|w| w.weight != 0 && w.term.matches(node.name(), labels))
            .map(|w| i64::from(w.weight))
            .sum())
    }
    fn has_normalize(&self) -> bool {
        true
    }
    fn normalize_score(&self, _: &CycleState, _: &Pod, scores: &mut [i64]) -> Status {
        default_normalize_score(scores, false);
        Status::success()
    }
}

impl EnqueueExtensions for NodeAffinity {
    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![ClusterEvent::new(
            EventResource::Node,
            ActionType::ADD.union(ActionType::UPDATE_NODE_LABEL),
        )]
    }
}
