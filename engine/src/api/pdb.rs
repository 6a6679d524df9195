//! PodDisruptionBudget, as DefaultPreemption reads it (kube's `filterPodsWithPDBViolation` in
//! pkg/scheduler/framework/preemption/preemption.go): the namespace, the selector, how many
//! more disruptions the budget allows, and the pods the disruption controller has already
//! counted as disrupted.

use super::{LabelSelector, Pod, Sym};
use std::sync::Arc;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodDisruptionBudget {
    pub namespace: Sym,
    pub name: Arc<str>,
    /// `spec.selector`. A missing or empty selector selects nothing (kube: "a PDB with a nil or
    /// empty selector matches nothing").
    pub selector: Option<LabelSelector>,
    /// `status.disruptionsAllowed`.
    pub disruptions_allowed: i32,
    /// The names in `status.disruptedPods`: already being disrupted, not counted again.
    pub disrupted_pods: Vec<Arc<str>>,
}

impl PodDisruptionBudget {
    /// Whether the budget covers `pod` and would be charged for evicting it: same namespace,
    /// a non-empty selector that matches the pod's labels (a pod without labels matches no
    /// budget), and not already in `disruptedPods`.
    pub fn charges(&self, pod: &Pod) -> bool {
        self.namespace == pod.namespace
            && !pod.labels.is_empty()
            && self
                .selector
                .as_ref()
                .is_some_and(|s| !s.requirements.is_empty() && s.matches(&pod.labels))
            && !self.disrupted_pods.iter().any(|n| **n == *pod.name)
    }
}

/// kube's `filterPodsWithPDBViolation`: splits `pods` (in their order) into those whose
/// eviction would take some matching budget below zero and the others. Each budget's allowance
/// is spent pod by pod, so the first pods a budget covers fit within it and later ones
/// violate it.
pub(crate) fn split_by_pdb_violation(
    pods: Vec<Arc<Pod>>,
    pdbs: &[Arc<PodDisruptionBudget>],
) -> (Vec<Arc<Pod>>, Vec<Arc<Pod>>) {
    let mut allowed: Vec<i32> = pdbs.iter().map(|p| p.disruptions_allowed).collect();
    let (mut violating, mut non_violating) = (Vec::new(), Vec::new());
    for pod in pods {
        let mut violated = false;
        for (i, pdb) in pdbs.iter().enumerate() {
            if pdb.charges(&pod) {
                allowed[i] -= 1;
                if allowed[i] < 0 {
                    violated = true;
                }
            }
        }
        if violated {
            violating.push(pod);
        } else {
            non_violating.push(pod);
        }
    }
    (violating, non_violating)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Labels, Operator, PodSpecInfo, Requirement};

    fn pod(name: &str, app: Option<&str>) -> Arc<Pod> {
        let mut p = Pod::new("ns", name, Arc::new(PodSpecInfo::default()));
        if let Some(a) = app {
            p.labels = Arc::new(Labels::from_pairs([("app", a)]));
        }
        Arc::new(p)
    }

    fn budget(allowed: i32) -> Arc<PodDisruptionBudget> {
        Arc::new(PodDisruptionBudget {
            namespace: Sym::new("ns"),
            name: Arc::from("b"),
            selector: Some(LabelSelector {
                requirements: vec![Requirement {
                    key: Sym::new("app"),
                    op: Operator::In,
                    values: vec![Sym::new("db")],
                    int_value: 0,
                }],
            }),
            disruptions_allowed: allowed,
            disrupted_pods: vec![Arc::from("gone")],
        })
    }

    fn names(v: &[Arc<Pod>]) -> Vec<String> {
        v.iter().map(|p| p.name.to_string()).collect()
    }

    /// kube's filterPodsWithPDBViolation (pkg/scheduler/framework/preemption/preemption.go):
    /// the allowance is spent in order; unlabelled pods, pods the selector misses and pods in
    /// disruptedPods are not charged.
    #[test]
    fn the_allowance_is_spent_in_order() {
        let pods = vec![
            pod("a", Some("db")),
            pod("plain", None),
            pod("b", Some("db")),
            pod("gone", Some("db")),
            pod("web", Some("web")),
            pod("c", Some("db")),
        ];
        let (violating, ok) = split_by_pdb_violation(pods.clone(), &[budget(1)]);
        assert_eq!(names(&violating), ["b", "c"]);
        assert_eq!(names(&ok), ["a", "plain", "gone", "web"]);
        let (violating, _) = split_by_pdb_violation(pods.clone(), &[budget(0)]);
        assert_eq!(names(&violating), ["a", "b", "c"]);
        let (violating, ok) = split_by_pdb_violation(pods, &[]);
        assert!(violating.is_empty());
        assert_eq!(ok.len(), 6);
    }

    /// The PDB cases of TestDryRunPreemption (pkg/scheduler/framework/plugins/defaultpreemption/
    /// default_preemption_test.go, kubernetes/kubernetes): every pod on the node is a victim
    /// there (the preemptor needs the whole node), so the candidate's NumPDBViolations is the
    /// number of pods this split calls violating.
    #[test]
    fn dry_run_pdb_cases_count_violations_as_kube() {
        let foo = |disrupted: &[&str]| {
            let mut b = (*budget(1)).clone();
            b.selector.as_mut().unwrap().requirements[0].values = vec![Sym::new("foo")];
            b.disrupted_pods = disrupted.iter().map(|n| Arc::from(*n)).collect();
            Arc::new(b)
        };
        let cases: &[(&str, &[&str], &[&str], usize)] = &[
            (
                "preemption with violation of same pdb",
                &["p1.1", "p1.2"],
                &[],
                1,
            ),
            (
                "the pod whose eviction was processed is not a victim",
                &["p1.1", "p1.2"],
                &["p2"],
                1,
            ),
            (
                "the victim belongs to DisruptedPods",
                &["p1.1", "p1.2"],
                &["p1.2"],
                0,
            ),
            (
                "the victim in DisruptedPods is treated as non-violating",
                &["p1.1", "p1.2", "p1.3"],
                &["p1.3"],
                1,
            ),
        ];
        for (name, pods, disrupted, want) in cases {
            let pods: Vec<Arc<Pod>> = pods.iter().map(|n| pod(n, Some("foo"))).collect();
            let (violating, _) = split_by_pdb_violation(pods, &[foo(disrupted)]);
            assert_eq!(violating.len(), *want, "{name}");
        }
    }

    #[test]
    fn converts_from_the_api_object() {
        let obj: k8s_openapi::api::policy::v1::PodDisruptionBudget =
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": "db", "namespace": "ns"},
                "spec": {"selector": {"matchLabels": {"app": "db"}}},
                "status": {"disruptionsAllowed": 2, "currentHealthy": 3, "desiredHealthy": 1,
                           "expectedPods": 3, "disruptedPods": {"gone": "2026-01-01T00:00:00Z"}}
            }))
            .unwrap();
        let b = crate::api::convert::pod_disruption_budget(&obj).unwrap();
        assert_eq!(b.disruptions_allowed, 2);
        assert_eq!(b.namespace, Sym::new("ns"));
        assert_eq!(b.disrupted_pods, vec![Arc::<str>::from("gone")]);
        assert!(b.charges(&pod("x", Some("db"))));
        assert!(!b.charges(&pod("gone", Some("db"))));
        assert!(!b.charges(&pod("y", Some("web"))));
    }
}
