//! NodeResourcesBalancedAllocation: favours nodes whose utilisation fractions of the configured
//! resources (cpu and memory by default) the pod brings closer. A state's balance is
//! (1 − standard deviation of the fractions) × 100 (actual requests, not the non-zero
//! defaults); the score is kube's since v1.36, the change the pod makes:
//! 50 + (50 + balance with the pod − balance without it) / 2. Best-effort pods (no request
//! for any of the resources) are not scored.
//! Source of behaviour: `pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go`,
//! `resource_allocation.go`; args: `v1/defaults.go`
//! (`SetDefaults_NodeResourcesBalancedAllocationArgs`), `validation/validation_pluginargs.go`.

use super::resource_allocation::{
    ResourceAllocationScorer, ResourceSpec, Strategy, aggregate, default_resources, field_error,
    quote,
};
use crate::api::Pod;
use crate::api::validation::ErrorType;
use crate::framework::Snapshot;
use crate::framework::cycle_state::CycleState;
use crate::framework::events::{ActionType, ClusterEvent, EventResource};
use crate::framework::interface::{EnqueueExtensions, Plugin, PreScorePlugin, ScorePlugin};
use crate::framework::node_info::{NodeInfo, NodeRow};
use crate::framework::signature::{self, SignFragments, signer};
use crate::framework::status::Status;
use serde::Deserialize;
use std::sync::Arc;

pub(crate) const NAME: &str = "NodeResourcesBalancedAllocation";
const PRE_SCORE_KEY: &str = "PreScoreNodeResourcesBalancedAllocation";

/// `NodeResourcesBalancedAllocationArgs` (v1).
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct BalancedAllocationArgs {
    #[serde(default)]
    pub resources: Vec<ResourceSpec>,
}

impl BalancedAllocationArgs {
    /// kube's defaults: cpu and memory when no resource is listed; weight 0 becomes 1.
    pub(crate) fn set_defaults(&mut self) {
        if self.resources.is_empty() {
            self.resources = default_resources();
            return;
        }
        for r in &mut self.resources {
            if r.weight == 0 {
                r.weight = 1;
            }
        }
    }

    /// kube's `ValidateNodeResourcesBalancedAllocationArgs`: no duplicate names, weights 1.
    pub(crate) fn validate(&self) -> Result<(), String> {
        let mut errs = Vec::new();
        for (i, r) in self.resources.iter().enumerate() {
            if self.resources[..i].iter().any(|o| o.name == r.name) {
                errs.push(field_error(
                    ErrorType::Duplicate,
                    format!("resources[{i}].name"),
                    Some(quote(&r.name)),
                    "",
                ));
            }
            if r.weight != 1 {
                errs.push(field_error(
                    ErrorType::Invalid,
                    format!("resources[{i}].weight"),
                    Some(r.weight.to_string()),
                    "must be 1",
                ));
            }
        }
        aggregate(&errs)
    }
}

#[derive(Debug)]
pub(crate) struct BalancedAllocation {
    scorer: ResourceAllocationScorer,
}

impl Default for BalancedAllocation {
    /// The plugin with kube's default args (cpu and memory).
    fn default() -> Self {
        BalancedAllocation::new(&default_resources())
    }
}

impl BalancedAllocation {
    pub(crate) fn new(resources: &[ResourceSpec]) -> BalancedAllocation {
        BalancedAllocation {
            scorer: ResourceAllocationScorer::new(resources, true, Strategy::Balanced),
        }
    }

    /// The registry's factory: decode, default, validate.
    pub(crate) fn from_args(
        args: Option<&serde_json::Value>,
    ) -> Result<BalancedAllocation, String> {
        let mut a: BalancedAllocationArgs = crate::framework::registry::decode_args(args)?;
        a.set_defaults();
        a.validate()?;
        Ok(BalancedAllocation::new(&a.resources))
    }
}

impl Plugin for BalancedAllocation {
    fn signs_pods(&self) -> bool {
        true
    }
    fn node_local(&self, _pod: &crate::api::Pod) -> bool {
        true
    }
    fn sign_pod(&self, pod: &crate::api::Pod, sig: &mut SignFragments) -> Result<(), &'static str> {
        sig.put(signer::RESOURCES, || {
            signature::resources(&pod.spec.requests)
        });
        Ok(())
    }
    fn name(&self) -> &'static str {
        NAME
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

/// The pod's requests of the configured resources, computed once in PreScore.
#[derive(Clone)]
struct PreScoreState(Vec<i64>);

impl PreScorePlugin for BalancedAllocation {
    /// Reads the pod and the snapshot, never the feasible nodes.
    fn pre_score_reads_nodes(&self, _: &Pod, _: &Snapshot) -> bool {
        false
    }
    fn pre_score(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        _: &[&NodeInfo],
        _: &Snapshot,
    ) -> Status {
        let reqs = self.scorer.pod_requests(pod);
        // kube skips best-effort pods so that they do not all pile onto one node (#129138).
        if ResourceAllocationScorer::is_best_effort(&reqs) {
            return Status::skip();
        }
        state.write(PRE_SCORE_KEY, PreScoreState(reqs));
        Status::success()
    }
}

impl ScorePlugin for BalancedAllocation {
    fn score(&self, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        let mut score = [0];
        self.score_nodes(state, pod, &[node], &[NodeRow::of(node)], &mut score)?;
        Ok(score[0])
    }

    fn score_nodes(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        rows: &[NodeRow],
        scores: &mut [i64],
    ) -> Result<(), Status> {
        let computed;
        let reqs = match state.read::<PreScoreState>(PRE_SCORE_KEY) {
            Some(s) => &s.0,
            None => {
                computed = self.scorer.pod_requests(pod);
                if ResourceAllocationScorer::is_best_effort(&computed) {
                    scores.fill(0);
                    return Ok(());
                }
                &computed
            }
        };
        self.scorer.score_nodes(nodes, rows, reqs, scores);
        Ok(())
    }

    fn scores_from_rows(&self, _: &CycleState) -> bool {
        self.scorer.scores_from_rows()
    }
}

impl EnqueueExtensions for BalancedAllocation {
    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![
            ClusterEvent::new(EventResource::Pod, ActionType::DELETE),
            ClusterEvent::new(
                EventResource::Node,
                ActionType::ADD.union(ActionType::UPDATE_NODE_ALLOCATABLE),
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// kube's `balancedResourceScore` (one state's balance) over `(requested, allocatable)`
    /// pairs.
    fn balanced_score(pairs: &[(i64, i64)]) -> i64 {
        let (r, a): (Vec<i64>, Vec<i64>) = pairs.iter().copied().unzip();
        super::super::resource_allocation::balanced_resource_score(&r, &a)
    }
    use crate::plugins::resource_allocation::test_util::{node, node_infos, pod};

    #[test]
    fn balanced_formula() {
        // One state's balance: (1 − std) × 100.
        assert_eq!(balanced_score(&[(2000, 4000), (16, 32)]), 100);
        assert_eq!(balanced_score(&[(2000, 4000), (8, 32)]), 87);
        assert_eq!(balanced_score(&[(8000, 4000), (0, 32)]), 50);
        // The score is the change the pod makes: from 87 to 100 is 50 + (50 + 13) / 2.
        use crate::plugins::resource_allocation::balanced_resource_scorer;
        assert_eq!(
            balanced_resource_scorer(&[2000, 16], &[2000, 8], &[4000, 32]),
            81
        );
        assert_eq!(
            balanced_resource_scorer(&[2000, 16], &[2000, 16], &[4000, 32]),
            75
        );
    }

    fn run(
        b: &BalancedAllocation,
        p: &Pod,
        nodes: &[Arc<crate::api::Node>],
        existing: &[Arc<Pod>],
    ) -> (Status, Vec<i64>) {
        let infos = node_infos(nodes, existing);
        let refs: Vec<&NodeInfo> = infos.iter().collect();
        let mut state = CycleState::new();
        let st = b.pre_score(&mut state, p, &refs, &Snapshot::default());
        if st.is_skip() {
            return (st, vec![]);
        }
        let one_by_one: Vec<i64> = infos
            .iter()
            .map(|ni| b.score(&state, p, ni).unwrap())
            .collect();
        // The batch the scheduler calls gives the same scores.
        let mut batch = vec![-1; refs.len()];
        let rows: Vec<NodeRow> = infos.iter().map(NodeRow::of).collect();
        b.score_nodes(&state, p, &refs, &rows, &mut batch).unwrap();
        assert_eq!(batch, one_by_one, "score_nodes vs score");
        (st, batch)
    }

    // Provenance: kubernetes/kubernetes v1.37.2
    // pkg/scheduler/framework/plugins/noderesources/balanced_allocation_test.go
    // (TestNodeResourcesBalancedAllocation; the DRA cases are out of scope).
    #[test]
    fn balanced_allocation_table() {
        let b = BalancedAllocation::default();
        let n = |name, cpu, mem| node(name, &[("cpu", cpu), ("memory", mem)]);
        let cpu_mem = |name: &str, node_name: Option<&str>, c: &str, m: &str| {
            pod(name, node_name, &[&[("cpu", c), ("memory", m)]])
        };
        // A best-effort pod is skipped.
        let (st, _) = run(
            &b,
            &pod("p", None, &[&[]]),
            &[n("node1", "4000", "10000")],
            &[],
        );
        assert!(st.is_skip());
        let req = pod(
            "p",
            None,
            &[
                &[("cpu", "1000"), ("memory", "2000")],
                &[("cpu", "2000"), ("memory", "3000")],
            ],
        );
        // Nothing scheduled, differently sized nodes.
        let nodes = [n("node1", "4000", "10000"), n("node2", "6000", "10000")];
        assert_eq!(run(&b, &req, &nodes, &[]).1, [68, 75]);
        // Pods scheduled with resources.
        let existing = [
            pod(
                "e1",
                Some("node1"),
                &[&[("cpu", "1000")], &[("cpu", "2000")]],
            ),
            pod(
                "e2",
                Some("node2"),
                &[
                    &[("cpu", "1000"), ("memory", "2000")],
                    &[("cpu", "2000"), ("memory", "3000")],
                ],
            ),
        ];
        let big = [n("node1", "10000", "20000"), n("node2", "10000", "20000")];
        assert_eq!(run(&b, &req, &big, &existing).1, [73, 74]);
        // ... on differently sized nodes.
        let sized = [n("node1", "10000", "20000"), n("node2", "10000", "50000")];
        assert_eq!(run(&b, &req, &sized, &existing).1, [73, 70]);
        // The minimum and maximum score.
        let mem_only = pod("p", None, &[&[("memory", "2000")], &[("memory", "3000")]]);
        let tight = [n("node1", "3000", "5000"), n("node2", "3000", "5000")];
        assert_eq!(run(&b, &mem_only, &tight, &existing[..1]).1, [100, 50]);
        // Requests at node capacity.
        let cpu_only = pod("p", None, &[&[("cpu", "1000")], &[("cpu", "2000")]]);
        let six = [n("node1", "6000", "10000"), n("node2", "6000", "10000")];
        assert_eq!(run(&b, &cpu_only, &six, &existing).1, [62, 62]);
        // A scalar resource counts when the pod requests it.
        let three = BalancedAllocation::from_args(Some(&serde_json::json!({"resources": [
            {"name": "cpu"}, {"name": "memory"}, {"name": "nvidia.com/gpu"}
        ]})))
        .unwrap();
        let gpu_node = |name| {
            node(
                name,
                &[
                    ("cpu", "3500"),
                    ("memory", "40000"),
                    ("nvidia.com/gpu", "8"),
                ],
            )
        };
        let gpu_nodes = [gpu_node("node1"), gpu_node("node2")];
        let gpu_pod = pod(
            "p",
            None,
            &[&[("cpu", "0"), ("memory", "0"), ("nvidia.com/gpu", "1")]],
        );
        let on_gpu = [
            pod(
                "e1",
                Some("node1"),
                &[
                    &[("cpu", "1000"), ("memory", "2000")],
                    &[("cpu", "2000"), ("memory", "3000"), ("nvidia.com/gpu", "3")],
                ],
            ),
            cpu_mem("e2", Some("node2"), "3000", "5000"),
        ];
        assert_eq!(run(&three, &gpu_pod, &gpu_nodes, &on_gpu).1, [75, 76]);
        // ... and does not when it does not.
        let mixed = [gpu_node("node1"), n("node2", "3500", "40000")];
        assert_eq!(run(&three, &req, &mixed, &[]).1, [56, 56]);
    }

    // Provenance: kubernetes/kubernetes
    // pkg/scheduler/apis/config/validation/validation_pluginargs_test.go
    // (TestValidateNodeResourcesBalancedAllocationArgs).
    #[test]
    fn args_validation() {
        let e = |j: serde_json::Value| BalancedAllocation::from_args(Some(&j)).unwrap_err();
        assert_eq!(
            e(serde_json::json!({"resources": [{"name": "cpu", "weight": 2}]})),
            "resources[0].weight: Invalid value: 2: must be 1"
        );
        assert_eq!(
            e(serde_json::json!({"resources": [{"name": "cpu"}, {"name": "cpu"}]})),
            "resources[1].name: Duplicate value: \"cpu\""
        );
        assert!(BalancedAllocation::from_args(None).is_ok());
    }
}
