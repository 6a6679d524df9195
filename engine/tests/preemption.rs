//! DefaultPreemption through the real scheduler. Cases after kube-scheduler's
//! `pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go`
//! (TestPostFilter, TestDryRunPreemption "a pod that would fit after reprieving",
//! TestSelectBestCandidate, TestPodEligibleToPreemptOthers) in kubernetes/kubernetes.

use parking_lot::Mutex;
use std::sync::{Arc, Weak};
use tidegate_engine::ClusterClient;
use tidegate_engine::Registry;
use tidegate_engine::api::LabelSelector;
use tidegate_engine::api::Resource;
use tidegate_engine::api::{
    Labels, Node, Operator, Pod, PodDisruptionBudget, PodKey, PodSpecInfo, Requirement, Sym,
};
use tidegate_engine::clock::VirtualClock;
use tidegate_engine::{Scheduler, SchedulerConfig};

/// An API server stand-in: binds and deletes, and tells the scheduler as its informers would.
#[derive(Default)]
struct Client {
    sched: Mutex<Weak<Scheduler>>,
    binds: Mutex<Vec<(String, Sym)>>,
    deleted: Mutex<Vec<String>>,
    pods: Mutex<Vec<Arc<Pod>>>,
    messages: Mutex<Vec<String>>,
    pdbs: Mutex<Vec<Arc<PodDisruptionBudget>>>,
}

impl ClusterClient for Client {
    fn bind(&self, pod: &Pod, node: Sym) -> Result<(), String> {
        self.binds.lock().push((pod.name.to_string(), node));
        Ok(())
    }
    fn set_unschedulable(&self, _pod: &Pod, _reason: &str, message: &str) {
        self.messages.lock().push(message.to_string());
    }
    fn pod_exists_unassigned(&self, pod: &Pod) -> bool {
        !self.deleted.lock().contains(&pod.name.to_string())
    }
    fn pod_disruption_budgets(&self) -> Vec<Arc<PodDisruptionBudget>> {
        self.pdbs.lock().clone()
    }
    fn delete_pod(&self, pod: &Pod) -> Result<(), String> {
        self.deleted.lock().push(pod.name.to_string());
        let stored = self.pods.lock().iter().find(|p| p.key == pod.key).cloned();
        if let (Some(s), Some(p)) = (self.sched.lock().upgrade(), stored) {
            s.on_pod_delete(&p);
        }
        Ok(())
    }
}

fn setup(nodes: &[(&str, i64)]) -> (Arc<Scheduler>, Arc<Client>) {
    setup_with(nodes, 1)
}

fn setup_with(nodes: &[(&str, i64)], threads: usize) -> (Arc<Scheduler>, Arc<Client>) {
    let client = Arc::new(Client::default());
    let cfg = SchedulerConfig {
        parallelism: threads,
        ..SchedulerConfig::default()
    };
    let sched = Scheduler::new(
        cfg,
        &Registry::in_tree(),
        client.clone(),
        Some(Arc::new(VirtualClock::new())),
    )
    .unwrap();
    *client.sched.lock() = Arc::downgrade(&sched);
    for (name, cpu) in nodes {
        let mut n = Node::named(name);
        n.allocatable = Resource {
            milli_cpu: *cpu,
            memory: 1 << 30,
            allowed_pod_number: 110,
            ..Resource::default()
        };
        sched.on_node_add(Arc::new(n));
    }
    (sched, client)
}

fn pod(name: &str, priority: i32, cpu: i64, node: Option<&str>) -> Arc<Pod> {
    let req = Resource {
        milli_cpu: cpu,
        ..Resource::default()
    };
    let spec = PodSpecInfo {
        scheduler_name: Sym::new("default-scheduler"),
        priority,
        requests: req.clone(),
        non_zero_requests: req,
        ..PodSpecInfo::default()
    };
    let mut p = Pod::new("ns", name, Arc::new(spec));
    p.node_name = node.map(Sym::new);
    Arc::new(p)
}

fn running(s: &Scheduler, c: &Client, name: &str, priority: i32, cpu: i64, node: &str) {
    let p = pod(name, priority, cpu, Some(node));
    c.pods.lock().push(p.clone());
    s.on_pod_add(p);
}

fn attempt(s: &Scheduler, p: Arc<Pod>) {
    s.on_pod_add(p);
    let q = s.queue.try_pop().expect("the pod is in activeQ");
    s.schedule_popped(q);
}

#[test]
fn the_node_with_the_least_important_victims_is_chosen_and_the_pod_lands_there() {
    let (s, c) = setup(&[("n1", 1000), ("n2", 1000)]);
    running(&s, &c, "p1", 5, 1000, "n1");
    running(&s, &c, "p2", 1, 1000, "n2");
    let high = pod("high", 100, 1000, None);
    attempt(&s, high.clone());
    // Victims are deleted, the pod is nominated and waits for the deletions.
    assert_eq!(*c.deleted.lock(), vec!["p2"]);
    assert!(c.binds.lock().is_empty());
    assert_eq!(s.queue.nominator.node_of(&high.key), Some(Sym::new("n2")));
    // The victim's deletion (AssignedPodDelete) moved it; after its backoff it binds on n2.
    assert_ne!(s.queue.locate(&high.key), Some("unschedulable"));
    s.queue.activate(std::slice::from_ref(&high.key));
    let q = s.queue.try_pop().expect("requeued");
    s.schedule_popped(q);
    assert_eq!(*c.binds.lock(), vec![("high".to_string(), Sym::new("n2"))]);
}

#[test]
fn reprieved_pods_stay_and_only_the_needed_victims_go() {
    // One node: 3 pods of 300m (priorities 1, 2, 3) on 1000m; the incoming pod needs 400m,
    // so one pod must go. Reprieve goes most important first: 3 and 2 stay, 1 goes.
    let (s, c) = setup(&[("n1", 1000)]);
    running(&s, &c, "prio1", 1, 300, "n1");
    running(&s, &c, "prio2", 2, 300, "n1");
    running(&s, &c, "prio3", 3, 300, "n1");
    attempt(&s, pod("high", 10, 400, None));
    assert_eq!(*c.deleted.lock(), vec!["prio1"]);
}

#[test]
fn pods_of_equal_or_higher_priority_are_never_victims() {
    let (s, c) = setup(&[("n1", 1000)]);
    running(&s, &c, "same", 10, 1000, "n1");
    let p = pod("p", 10, 500, None);
    attempt(&s, p.clone());
    assert!(c.deleted.lock().is_empty());
    let info = s.queue.pending_info(&p.key).unwrap();
    assert_eq!(info.unschedulable_plugins, vec!["NodeResourcesFit"]);
    assert_eq!(s.queue.nominator.node_of(&p.key), None);
    // kube's FitError with the PostFilter message appended as it is (kubernetes/kubernetes
    // pkg/scheduler/framework/types.go, FitError.Error, v1.37.2).
    assert_eq!(
        c.messages.lock().last().map(String::as_str),
        Some(
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are \
             available: 1 No preemption victims found for incoming pod."
        )
    );
}

#[test]
fn preemption_policy_never_preempts_nothing() {
    let (s, c) = setup(&[("n1", 1000)]);
    running(&s, &c, "low", 1, 1000, "n1");
    let mut spec = (*pod("never", 100, 500, None).spec).clone();
    spec.preempt_never = true;
    let never = Arc::new(Pod::new("ns", "never", Arc::new(spec)));
    attempt(&s, never.clone());
    assert!(c.deleted.lock().is_empty());
    assert!(
        c.messages
            .lock()
            .last()
            .is_some_and(|m| m.ends_with(" not eligible due to preemptionPolicy=Never."))
    );
    assert_eq!(s.queue.nominator.node_of(&PodKey::new("ns", "never")), None);
}

#[test]
fn the_fewest_victims_win_when_priorities_tie() {
    // n1: two pods of priority 1 (500m each); n2: one pod of priority 1 (1000m). Same highest
    // priority; sums differ (two pods shift twice), so n2 with one victim wins.
    let (s, c) = setup(&[("n1", 1000), ("n2", 1000)]);
    running(&s, &c, "a1", 1, 500, "n1");
    running(&s, &c, "a2", 1, 500, "n1");
    running(&s, &c, "b1", 1, 1000, "n2");
    attempt(&s, pod("high", 10, 1000, None));
    assert_eq!(*c.deleted.lock(), vec!["b1"]);
}

/// TestPodEligibleToPreemptOthers ("Pod with nominatedNodeName and terminating pods on that
/// node"): the pod waits for its earlier victims instead of preempting again.
#[test]
fn a_pod_nominated_where_victims_still_terminate_does_not_preempt_again() {
    let (s, c) = setup(&[("n1", 1000)]);
    let mut dying = (*pod("dying", 1, 1000, Some("n1"))).clone();
    dying.deletion_timestamp = true;
    let dying = Arc::new(dying);
    c.pods.lock().push(dying.clone());
    s.on_pod_add(dying);
    let mut high = (*pod("high", 100, 1000, None)).clone();
    high.nominated_node_name = Some(Sym::new("n1"));
    attempt(&s, Arc::new(high));
    assert!(c.deleted.lock().is_empty());
    assert!(
        c.messages.lock().last().is_some_and(
            |m| m.ends_with(" not eligible due to a terminating pod on the nominated node.")
        ),
        "{:?}",
        c.messages.lock()
    );
}

/// The dry run on the scheduler's pool picks what the sequential one picks: 40 nodes, each with
/// one victim of a different priority; the least important victim's node wins.
#[test]
fn the_parallel_dry_run_chooses_as_the_sequential_one() {
    let names: Vec<String> = (0..40).map(|i| format!("n{i}")).collect();
    let mut chosen = Vec::new();
    for threads in [1, 2] {
        let nodes: Vec<(&str, i64)> = names.iter().map(|n| (n.as_str(), 1000)).collect();
        let (s, c) = setup_with(&nodes, threads);
        for (i, n) in names.iter().enumerate() {
            // Priorities 50, 49, …, 11: n39 holds the least important pod.
            running(&s, &c, &format!("v{i}"), 50 - i as i32, 1000, n);
        }
        attempt(&s, pod("high", 100, 1000, None));
        chosen.push(c.deleted.lock().clone());
    }
    assert_eq!(chosen[0], vec!["v39"]);
    assert_eq!(chosen[0], chosen[1]);
}

/// A running pod labelled `app=<app>`.
fn running_app(s: &Scheduler, c: &Client, name: &str, prio: i32, cpu: i64, node: &str, app: &str) {
    let mut p = (*pod(name, prio, cpu, Some(node))).clone();
    p.labels = Arc::new(Labels::from_pairs([("app", app)]));
    let p = Arc::new(p);
    c.pods.lock().push(p.clone());
    s.on_pod_add(p);
}

/// A budget over `app=<app>` in namespace `ns` allowing `allowed` more disruptions.
fn pdb(app: &str, allowed: i32, disrupted: &[&str]) -> Arc<PodDisruptionBudget> {
    Arc::new(PodDisruptionBudget {
        namespace: Sym::new("ns"),
        name: Arc::from(format!("pdb-{app}")),
        selector: Some(LabelSelector {
            requirements: vec![Requirement {
                key: Sym::new("app"),
                op: Operator::In,
                values: vec![Sym::new(app)],
                int_value: 0,
            }],
        }),
        disruptions_allowed: allowed,
        disrupted_pods: disrupted.iter().map(|n| Arc::from(*n)).collect(),
    })
}

/// kube's pickOneNodeForPreemption puts the fewest PodDisruptionBudget violations first: the
/// node whose victim a budget protects loses to a node with a more important victim (after
/// TestSelectBestCandidate's "pod with PDB violation" cases, default_preemption_test.go).
#[test]
fn the_node_without_pdb_violations_wins_over_less_important_victims() {
    let (s, c) = setup(&[("n1", 1000), ("n2", 1000)]);
    running_app(&s, &c, "guarded", 1, 1000, "n1", "db");
    running_app(&s, &c, "free", 5, 1000, "n2", "web");
    c.pdbs.lock().push(pdb("db", 0, &[]));
    attempt(&s, pod("high", 100, 1000, None));
    assert_eq!(*c.deleted.lock(), vec!["free"]);
    assert_eq!(
        s.queue.nominator.node_of(&PodKey::new("ns", "high")),
        Some(Sym::new("n2"))
    );
}

/// With budget to spare, or with the pod already counted in `disruptedPods`, there is no
/// violation and the lower-priority victim is chosen as usual.
#[test]
fn a_budget_with_room_or_an_already_disrupted_pod_is_no_violation() {
    for budget in [pdb("db", 1, &[]), pdb("db", 0, &["guarded"])] {
        let (s, c) = setup(&[("n1", 1000), ("n2", 1000)]);
        running_app(&s, &c, "guarded", 1, 1000, "n1", "db");
        running_app(&s, &c, "free", 5, 1000, "n2", "web");
        c.pdbs.lock().push(budget);
        attempt(&s, pod("high", 100, 1000, None));
        assert_eq!(*c.deleted.lock(), vec!["guarded"]);
    }
}

/// SelectVictimsOnNode reprieves the pods whose eviction would violate a budget first: of two
/// pods where one must go, the unprotected one goes even though it is more important.
#[test]
fn protected_pods_are_reprieved_first() {
    let (s, c) = setup(&[("n1", 1000)]);
    running_app(&s, &c, "protected", 1, 500, "n1", "db");
    running_app(&s, &c, "plain", 3, 500, "n1", "web");
    c.pdbs.lock().push(pdb("db", 0, &[]));
    attempt(&s, pod("high", 10, 500, None));
    assert_eq!(*c.deleted.lock(), vec!["plain"]);
}

/// Budgets in another namespace, with an empty selector, or over other labels charge nothing.
#[test]
fn budgets_that_do_not_cover_the_pod_are_ignored() {
    let mut other_ns = (*pdb("db", 0, &[])).clone();
    other_ns.namespace = Sym::new("elsewhere");
    let mut empty = (*pdb("db", 0, &[])).clone();
    empty.selector = Some(LabelSelector::default());
    for budget in [Arc::new(other_ns), Arc::new(empty), pdb("cache", 0, &[])] {
        let (s, c) = setup(&[("n1", 1000)]);
        running_app(&s, &c, "protected", 1, 500, "n1", "db");
        running_app(&s, &c, "plain", 3, 500, "n1", "web");
        c.pdbs.lock().push(budget);
        attempt(&s, pod("high", 10, 500, None));
        assert_eq!(*c.deleted.lock(), vec!["protected"]);
    }
}

/// kube's DryRunPreemption looks past `numCandidates` until it has a candidate that violates no
/// budget (TestDryRunPreemption, "preemption looks past numCandidates until a non-PDB violating
/// node is found", default_preemption_test.go): five nodes, budget-protected victims on three,
/// minCandidateNodesPercentage 40 / minCandidateNodesAbsolute 2 (two candidates wanted).
/// Whatever the random offset of each attempt, an unprotected victim is chosen.
#[test]
fn the_dry_run_looks_past_the_candidate_count_for_a_node_without_violations() {
    use tidegate_engine::Profile;
    let client = Arc::new(Client::default());
    let mut profile = Profile::default_profile();
    profile.plugin_args.insert(
        "DefaultPreemption".into(),
        serde_json::json!({"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 2}),
    );
    let cfg = SchedulerConfig {
        profiles: vec![profile],
        parallelism: 1,
        ..SchedulerConfig::default()
    };
    let s = Scheduler::new(
        cfg,
        &Registry::in_tree(),
        client.clone(),
        Some(Arc::new(VirtualClock::new())),
    )
    .unwrap();
    *client.sched.lock() = Arc::downgrade(&s);
    let victims = [
        ("p1", "node1", "foo"),
        ("p2", "node2", "foo"),
        ("p3", "node3", "bar"),
        ("p4", "node4", "bar"),
        ("p5", "node5", "foo"),
    ];
    for (_, node, _) in victims {
        let mut n = Node::named(node);
        n.allocatable = Resource {
            milli_cpu: 1000,
            memory: 1 << 30,
            allowed_pod_number: 110,
            ..Resource::default()
        };
        s.on_node_add(Arc::new(n));
    }
    for (name, node, app) in victims {
        running_app(&s, &client, name, 5, 1000, node, app);
    }
    client.pdbs.lock().push(pdb("foo", 0, &[]));
    // Ten attempts, each from its own random offset; the cluster is restored after each.
    for i in 0..10 {
        let p = pod(&format!("high{i}"), 100, 1000, None);
        attempt(&s, p.clone());
        let gone = client.deleted.lock().pop().expect("a victim");
        assert!(gone == "p3" || gone == "p4", "attempt {i} evicted {gone}");
        let &(name, node, app) = victims.iter().find(|v| v.0 == gone).unwrap();
        client.pods.lock().retain(|q| *q.name != *name);
        running_app(&s, &client, name, 5, 1000, node, app);
        s.on_pod_delete(&p);
    }
}
