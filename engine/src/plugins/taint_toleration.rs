//! TaintToleration: Filter on NoSchedule/NoExecute taints; Score counts intolerable
//! PreferNoSchedule taints (fewer is better, normalized in reverse).
//! Source of behaviour: `pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go`.

use super::helper::default_normalize_score;
use crate::api::{Pod, Taint, TaintEffect, Toleration};
use crate::framework::Snapshot;
use crate::framework::cycle_state::CycleState;
use crate::framework::events::{
    ActionType, ClusterEvent, EventObject, EventResource, QueueingHint,
};
use crate::framework::interface::{
    EnqueueExtensions, FilterPlugin, Plugin, PreScorePlugin, ScorePlugin,
};
use crate::framework::node_info::{NodeInfo, NodeRow, NodeTraits};
use crate::framework::signature::{self, SignFragments, signer};
use crate::framework::status::{Code, Status};
use std::sync::Arc;

pub(crate) const NAME: &str = "TaintToleration";

/// kube's `Toleration.ToleratesTaint`.
pub(crate) fn toleration_matches(t: &Toleration, taint: &Taint) -> bool {
    if t.effect.is_some_and(|e| e != taint.effect) {
        return false;
    }
    if !t.key.is_empty() && t.key != taint.key {
        return false;
    }
    if t.exists {
        return true;
    }
    // Equal (the default): the values must match (an empty key was checked above as "any key",
    // as kube does; API validation only allows it with Exists).
    t.value == taint.value
}

pub(crate) fn tolerates(tolerations: &[Toleration], taint: &Taint) -> bool {
    tolerations.iter().any(|t| toleration_matches(t, taint))
}

/// kube's `FindMatchingUntoleratedTaint` with `DoNotScheduleTaintsFilterFunc`: the first
/// NoSchedule or NoExecute taint that no toleration tolerates.
pub(crate) fn find_untolerated_do_not_schedule_taint<'a>(
    tolerations: &[Toleration],
    taints: &'a [Taint],
) -> Option<&'a Taint> {
    taints.iter().find(|t| {
        matches!(t.effect, TaintEffect::NoSchedule | TaintEffect::NoExecute)
            && !tolerates(tolerations, t)
    })
}

#[derive(Debug, Default)]
pub(crate) struct TaintToleration;

impl Plugin for TaintToleration {
    fn signs_pods(&self) -> bool {
        true
    }
    fn node_local(&self, _pod: &crate::api::Pod) -> bool {
        true
    }
    fn sign_pod(&self, pod: &crate::api::Pod, sig: &mut SignFragments) -> Result<(), &'static str> {
        sig.put(signer::TOLERATIONS, || signature::tolerations(pod));
        Ok(())
    }
    fn name(&self) -> &'static str {
        NAME
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

/// kube's `FindMatchingUntoleratedTaint` over the NoSchedule and NoExecute taints.
fn untolerated<'a>(taints: &'a [Taint], tolerations: &[Toleration]) -> Option<&'a Taint> {
    taints.iter().find(|t| {
        matches!(t.effect, TaintEffect::NoSchedule | TaintEffect::NoExecute)
            && !tolerates(tolerations, t)
    })
}

impl FilterPlugin for TaintToleration {
    fn filter(&self, _: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        if !node.has_taints() {
            return Status::success();
        }
        match untolerated(&node.node.taints, &pod.spec.tolerations) {
            None => Status::success(),
            Some(t) => Status::new(
                Code::UnschedulableAndUnresolvable,
                format!("node(s) had untolerated taint {{{}: {}}}", t.key, t.value),
            ),
        }
    }
    fn needs_nodes_with(&self, _: &Pod) -> NodeTraits {
        NodeTraits::TAINTED
    }
}

impl PreScorePlugin for TaintToleration {
    /// Reads the pod and the snapshot, never the feasible nodes.
    fn pre_score_reads_nodes(&self, _: &Pod, _: &Snapshot) -> bool {
        false
    }
    fn pre_score(&self, _: &mut CycleState, _: &Pod, _: &[&NodeInfo], _: &Snapshot) -> Status {
        Status::success()
    }
}

impl ScorePlugin for TaintToleration {
    fn score(&self, _: &CycleState, pod: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        if !node.has_taints() {
            return Ok(0);
        }
        // Only tolerations with an empty effect or PreferNoSchedule count.
        let n = node
            .node
            .taints
            .iter()
            .filter(|t| t.effect == TaintEffect::PreferNoSchedule)
            .filter(|t| {
                !pod.spec.tolerations.iter().any(|tol| {
                    tol.effect
                        .is_none_or(|e| e == TaintEffect::PreferNoSchedule)
                        && toleration_matches(tol, t)
                })
            })
            .count();
        Ok(n as i64)
    }
    /// Nodes without taints score 0 from their row; only tainted nodes are looked up.
    fn score_nodes(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        rows: &[NodeRow],
        scores: &mut [i64],
    ) -> Result<(), Status> {
        for ((s, n), r) in scores.iter_mut().zip(nodes).zip(rows) {
            *s = if r.has_taints() {
                self.score(state, pod, n)?
            } else {
                0
            };
        }
        Ok(())
    }
    fn scores_from_rows(&self, _: &CycleState) -> bool {
        true
    }
    fn has_normalize(&self) -> bool {
        true
    }
    fn default_normalize(&self) -> Option<bool> {
        Some(true)
    }
    fn normalize_score(&self, _: &CycleState, _: &Pod, scores: &mut [i64]) -> Status {
        default_normalize_score(scores, true);
        Status::success()
    }
}

impl EnqueueExtensions for TaintToleration {
    /// kube's `isSchedulableAfterNodeChange` (a node whose NoSchedule/NoExecute taints went
    /// from untolerated to tolerated, or a new tolerated node) and
    /// `isSchedulableAfterPodTolerationChange` (only the rejected pod's own update helps).
    fn queueing_hint(
        &self,
        _: &ClusterEvent,
        pod: &Pod,
        old: &EventObject,
        new: &EventObject,
    ) -> Result<QueueingHint, String> {
        let hint = QueueingHint::queue_if;
        let tol = &pod.spec.tolerations;
        match new {
            EventObject::Node(modified) => {
                let was_untolerated = match old {
                    EventObject::Node(original) => untolerated(&original.taints, tol).is_some(),
                    _ => true,
                };
                Ok(hint(
                    was_untolerated && untolerated(&modified.taints, tol).is_none(),
                ))
            }
            EventObject::Pod(modified) => {
                Ok(hint(modified.key == pod.key && modified.uid == pod.uid))
            }
            EventObject::None | EventObject::Object(_) => Ok(QueueingHint::Queue),
        }
    }

    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![
            ClusterEvent::new(
                EventResource::Node,
                ActionType::ADD.union(ActionType::UPDATE_NODE_TAINT),
            ),
            ClusterEvent::new(EventResource::Pod, ActionType::UPDATE_POD_TOLERATIONS),
        ]
    }
}

#[cfg(test)]
// Test tables read better with the taints written inline.
#[allow(clippy::cloned_ref_to_slice_refs)]
mod tests {
    use super::*;
    use crate::api::Sym;

    fn taint(k: &str, v: &str, e: TaintEffect) -> Taint {
        Taint {
            key: Sym::new(k),
            value: Sym::new(v),
            effect: e,
        }
    }
    fn tol(k: &str, exists: bool, v: &str, e: Option<TaintEffect>) -> Toleration {
        Toleration {
            key: Sym::new(k),
            exists,
            value: Sym::new(v),
            effect: e,
        }
    }

    #[test]
    fn toleration_matching() {
        let t = taint("foo", "bar", TaintEffect::NoSchedule);
        assert!(toleration_matches(&tol("foo", false, "bar", None), &t));
        assert!(!toleration_matches(&tol("foo", false, "baz", None), &t));
        assert!(toleration_matches(&tol("foo", true, "", None), &t));
        assert!(toleration_matches(&tol("", true, "", None), &t));
        assert!(!toleration_matches(
            &tol("foo", true, "", Some(TaintEffect::NoExecute)),
            &t
        ));
        assert!(!toleration_matches(&tol("", false, "", None), &t));
        // kube: an empty key with Equal is "any key" and compares values.
        assert!(toleration_matches(&tol("", false, "bar", None), &t));
    }

    fn node(taints: &[Taint]) -> NodeInfo {
        let mut n = crate::api::Node::named("n");
        n.taints = taints.to_vec().into();
        NodeInfo::new(Arc::new(n))
    }
    fn pod(tolerations: Vec<Toleration>) -> Pod {
        Pod::new(
            "ns",
            "p",
            Arc::new(crate::api::PodSpecInfo {
                tolerations,
                ..Default::default()
            }),
        )
    }
    use TaintEffect::{NoSchedule, PreferNoSchedule};

    // Provenance: kubernetes/kubernetes
    // pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go
    // (TestTaintTolerationScore).
    #[test]
    fn score_table() {
        let run = |tolerations: Vec<Toleration>, nodes: &[&[Taint]]| {
            let p = pod(tolerations);
            let pl = TaintToleration;
            let mut state = CycleState::new();
            let infos: Vec<NodeInfo> = nodes.iter().map(|t| node(t)).collect();
            let refs: Vec<&NodeInfo> = infos.iter().collect();
            assert!(
                pl.pre_score(&mut state, &p, &refs, &Snapshot::default())
                    .is_success()
            );
            let mut s: Vec<i64> = infos
                .iter()
                .map(|ni| pl.score(&state, &p, ni).unwrap())
                .collect();
            pl.normalize_score(&state, &p, &mut s);
            s
        };
        let pns = |k: &str, v: &str| taint(k, v, PreferNoSchedule);
        let tol_pns = |k: &str, v: &str| tol(k, false, v, Some(PreferNoSchedule));
        // Tolerated taints score higher than intolerable ones.
        assert_eq!(
            run(
                vec![tol_pns("foo", "bar")],
                &[&[pns("foo", "bar")], &[pns("foo", "blah")]]
            ),
            [100, 0]
        );
        // How many tolerated taints a node has does not matter.
        let arm = pns("cpu-type", "arm64");
        let ssd = pns("disk-type", "ssd");
        assert_eq!(
            run(
                vec![tol_pns("cpu-type", "arm64"), tol_pns("disk-type", "ssd")],
                &[&[], &[arm.clone()], &[arm.clone(), ssd.clone()]]
            ),
            [100, 100, 100]
        );
        // The more intolerable taints, the lower the score.
        assert_eq!(
            run(
                vec![tol_pns("foo", "bar")],
                &[&[], &[arm.clone()], &[arm.clone(), ssd.clone()]]
            ),
            [100, 50, 0]
        );
        // Only PreferNoSchedule taints and tolerations count.
        assert_eq!(
            run(
                vec![
                    tol("cpu-type", false, "arm64", Some(NoSchedule)),
                    tol("disk-type", false, "ssd", Some(NoSchedule)),
                ],
                &[
                    &[],
                    &[taint("cpu-type", "arm64", NoSchedule)],
                    &[arm.clone(), ssd.clone()]
                ]
            ),
            [100, 100, 0]
        );
        // No tolerations: the untainted node wins.
        assert_eq!(run(vec![], &[&[], &[arm]]), [100, 0]);
    }

    /// The framework calls Filter only on nodes with a trait from `needs_nodes_with`: every
    /// other node must pass, or leaving the call out would change the outcome.
    #[test]
    fn filter_passes_every_node_without_the_traits_it_needs() {
        let effects = [
            TaintEffect::NoSchedule,
            TaintEffect::NoExecute,
            TaintEffect::PreferNoSchedule,
        ];
        let mut nodes = vec![node(&[])];
        for e in effects {
            nodes.push(node(&[taint("k", "v", e)]));
        }
        let pods = [
            pod(vec![]),
            pod(vec![tol("k", true, "", None)]),
            pod(vec![tol(
                "other",
                false,
                "v",
                Some(TaintEffect::NoSchedule),
            )]),
        ];
        let mut rejected = 0;
        for p in &pods {
            for n in &nodes {
                let st = TaintToleration.filter(&CycleState::new(), p, n);
                if !n.traits().intersects(TaintToleration.needs_nodes_with(p)) {
                    assert!(st.is_success(), "a node without taints was rejected");
                }
                rejected += usize::from(!st.is_success());
            }
        }
        // The test sees rejections at all (so the traits are not trivially satisfied).
        assert_eq!(rejected, 4);
        assert!(!node(&[]).has_taints());
        assert!(node(&[taint("k", "v", TaintEffect::PreferNoSchedule)]).has_taints());
    }

    // Provenance: kubernetes/kubernetes
    // pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go
    // (TestTaintTolerationFilter).
    #[test]
    fn filter_table() {
        let run = |tolerations: Vec<Toleration>, taints: &[Taint]| {
            let st = TaintToleration.filter(&CycleState::new(), &pod(tolerations), &node(taints));
            if st.is_success() {
                None
            } else {
                assert_eq!(st.code(), Code::UnschedulableAndUnresolvable);
                Some(st.reasons().join(", "))
            }
        };
        let user1 = taint("dedicated", "user1", NoSchedule);
        let untolerated = |s: &str| Some(format!("node(s) had untolerated taint {{{s}}}"));
        assert_eq!(
            run(vec![], &[user1.clone()]),
            untolerated("dedicated: user1")
        );
        assert_eq!(
            run(
                vec![tol("dedicated", false, "user1", Some(NoSchedule))],
                &[user1.clone()]
            ),
            None
        );
        assert_eq!(
            run(
                vec![tol("dedicated", false, "user2", Some(NoSchedule))],
                &[user1.clone()]
            ),
            untolerated("dedicated: user1")
        );
        let foo_bar = taint("foo", "bar", NoSchedule);
        assert_eq!(
            run(
                vec![tol("foo", true, "", Some(NoSchedule))],
                &[foo_bar.clone()]
            ),
            None
        );
        assert_eq!(
            run(
                vec![
                    tol("dedicated", false, "user2", Some(NoSchedule)),
                    tol("foo", true, "", Some(NoSchedule)),
                ],
                &[taint("dedicated", "user2", NoSchedule), foo_bar.clone()]
            ),
            None
        );
        assert_eq!(
            run(
                vec![tol("foo", false, "bar", Some(PreferNoSchedule))],
                &[foo_bar.clone()]
            ),
            untolerated("foo: bar")
        );
        assert_eq!(run(vec![tol("foo", false, "bar", None)], &[foo_bar]), None);
        let pns_user1 = taint("dedicated", "user1", PreferNoSchedule);
        assert_eq!(
            run(
                vec![tol("dedicated", false, "user2", Some(NoSchedule))],
                &[pns_user1.clone()]
            ),
            None
        );
        assert_eq!(run(vec![], &[pns_user1]), None);
    }

    // Provenance: kubernetes/kubernetes
    // pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go
    // (TestIsSchedulableAfterNodeChange, Test_isSchedulableAfterPodChange).
    #[test]
    fn hints() {
        let ev = ClusterEvent::new(EventResource::Node, ActionType::ADD);
        let p = pod(vec![tol("dedicated", false, "user2", Some(NoSchedule))]);
        let n = |taints: &[Taint]| {
            let mut n = crate::api::Node::named("nodeA");
            n.taints = taints.to_vec().into();
            EventObject::Node(Arc::new(n))
        };
        let h = |old: EventObject, new: EventObject| {
            TaintToleration.queueing_hint(&ev, &p, &old, &new).unwrap()
        };
        let user = |u: &str| taint("dedicated", u, NoSchedule);
        assert_eq!(
            h(EventObject::None, n(&[user("user1")])),
            QueueingHint::QueueSkip
        );
        assert_eq!(
            h(EventObject::None, n(&[user("user2")])),
            QueueingHint::Queue
        );
        assert_eq!(
            h(n(&[user("user1")]), n(&[user("user1"), user("user3")])),
            QueueingHint::QueueSkip
        );
        assert_eq!(
            h(n(&[user("user1")]), n(&[user("user2")])),
            QueueingHint::Queue
        );
        // Toleration updates: only the rejected pod's own.
        let ev = ClusterEvent::new(EventResource::Pod, ActionType::UPDATE_POD_TOLERATIONS);
        let other = Arc::new(Pod::new("ns", "other", Arc::default()));
        let itself = Arc::new(pod(vec![]));
        let hp = |o: &Arc<Pod>| {
            TaintToleration
                .queueing_hint(
                    &ev,
                    &p,
                    &EventObject::Pod(o.clone()),
                    &EventObject::Pod(o.clone()),
                )
                .unwrap()
        };
        assert_eq!(hp(&other), QueueingHint::QueueSkip);
        assert_eq!(hp(&itself), QueueingHint::Queue);
    }
}
