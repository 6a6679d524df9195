//! scheduler_perf ops beyond the basic ones, run end to end on small configs: createPodSets,
//! startCollectingMetrics/stopCollectingMetrics with namespaces and labelSelector, and barriers
//! with a labelSelector. Semantics after kubernetes/kubernetes
//! test/integration/scheduler_perf/executor.go and scheduler_perf.go (unrollWorkloadTemplate).

use std::collections::BTreeSet;
use tidegate_bench::error::HarnessError;
use tidegate_bench::output::report::DataItem;
use tidegate_bench::output::results::{Outcome, RunResult};
use tidegate_bench::run::{RunOptions, run_config};
use tidegate_bench::workload;

const POD: &str = "\
apiVersion: v1
kind: Pod
metadata:
  generateName: p-
spec:
  containers:
  - name: c
    image: pause
";

const LABELLED_POD: &str = "\
apiVersion: v1
kind: Pod
metadata:
  generateName: l-
  labels:
    type: unsched
spec:
  containers:
  - name: c
    image: pause
";

/// Runs the one workload of `config` (with `pod.yaml` and `labelled.yaml` beside it).
fn run(config: &str) -> Result<RunResult, HarnessError> {
    run_in(config, &[("labelled.yaml", LABELLED_POD)], 2, 30)
}

/// Runs the one workload of `config` with `pod.yaml` and `files` beside it; a skipped
/// workload is an `Unsupported` error.
fn run_in(
    config: &str,
    files: &[(&str, &str)],
    threads: usize,
    timeout_secs: u64,
) -> Result<RunResult, HarnessError> {
    let dir = tempfile::tempdir().unwrap();
    for (n, t) in files {
        std::fs::write(dir.path().join(n), t).unwrap();
    }
    std::fs::write(dir.path().join("pod.yaml"), POD).unwrap();
    std::fs::write(dir.path().join("config.yaml"), config).unwrap();
    let cfg = workload::load(&dir.path().join("config.yaml"))?;
    let opts = RunOptions {
        label_filter: Some(String::new()),
        threads: Some(threads),
        timeout: std::time::Duration::from_secs(timeout_secs),
        ..RunOptions::default()
    };
    let mut reports = run_config(&cfg, &opts)?;
    assert_eq!(reports.len(), 1);
    match reports.remove(0).outcome {
        Outcome::Ran(r) => Ok(*r),
        Outcome::Skipped(why) => Err(HarnessError::Unsupported(why)),
        Outcome::Failed(why) => Err(HarnessError::Run(why)),
    }
}

fn namespaces_of(r: &RunResult) -> BTreeSet<String> {
    r.placements.iter().map(|(ns, _, _)| ns.clone()).collect()
}

fn item<'a>(r: &'a RunResult, metric: &str) -> Vec<&'a DataItem> {
    r.items
        .iter()
        .filter(|i| i.labels.get("Metric").map(String::as_str) == Some(metric))
        .collect()
}

#[test]
fn create_pod_sets_unroll_into_namespaces_and_shift_later_op_indices() {
    let r = run("\
- name: T
  defaultPodTemplatePath: pod.yaml
  workloadTemplate:
  - opcode: createNodes
    count: 2
  - opcode: createPodSets
    countParam: $sets
    namespacePrefix: init-ns
    createPodsOp:
      opcode: createPods
      countParam: $perSet
  - opcode: createPods
    count: 4
    collectMetrics: true
  workloads:
  - name: w
    params:
      sets: 3
      perSet: 2
")
    .unwrap();
    assert_eq!(r.summary.created, 3 * 2 + 4);
    assert_eq!(r.summary.bound, 10);
    // The last op is op 4 once the pod set became ops 1..=3, so its default namespace is
    // namespace-4, not namespace-2.
    let want: BTreeSet<String> = ["init-ns-0", "init-ns-1", "init-ns-2", "namespace-4"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(namespaces_of(&r), want);
    for ns in ["init-ns-0", "init-ns-1", "init-ns-2"] {
        let n = r.placements.iter().filter(|(x, _, _)| x == ns).count();
        assert_eq!(n, 2, "{ns}");
    }
    let tp = item(&r, "SchedulingThroughput");
    assert_eq!(tp.len(), 1);
    assert_eq!(
        tp[0].labels["Name"],
        "BenchmarkPerfScheduling/T/w/namespace-4"
    );
}

#[test]
fn pod_sets_reject_an_inner_op_that_is_not_create_pods() {
    let e = run("\
- name: T
  workloadTemplate:
  - opcode: createPodSets
    count: 2
    namespacePrefix: ns
    createPodsOp:
      opcode: createNodes
      count: 1
  - opcode: createPods
    count: 1
    collectMetrics: true
  workloads:
  - name: w
")
    .expect_err("an error");
    let msg = e.to_string();
    assert!(
        msg.contains("createPodsOp.opcode") && msg.contains("must be createPods"),
        "{msg}"
    );
}

#[test]
fn explicit_collection_window_counts_selected_pods_and_reports_every_collector() {
    let r = run("\
- name: T
  workloadTemplate:
  - opcode: createNodes
    count: 2
  - opcode: startCollectingMetrics
    name: unsched
    namespaces: [a, b]
    labelSelector:
      type: unsched
  - opcode: createPods
    count: 5
    namespace: a
    podTemplatePath: labelled.yaml
  - opcode: createPods
    count: 5
    namespace: b
    podTemplatePath: pod.yaml
  - opcode: stopCollectingMetrics
  workloads:
  - name: w
")
    .unwrap();
    assert_eq!(r.summary.bound, 10);
    let name = "BenchmarkPerfScheduling/T/w/unsched";
    for metric in [
        "SchedulingThroughput",
        "SchedulingDuration",
        "heap_memory_usage",
        "memory_growth_rate",
    ] {
        let items = item(&r, metric);
        assert_eq!(items.len(), 1, "{metric}");
        assert_eq!(items[0].labels["Name"], name, "{metric}");
    }
    let d = item(&r, "SchedulingDuration")[0].data["Duration"];
    assert!(d > 0.0 && d < r.wall.as_secs_f64(), "{d}");
    let mem = item(&r, "heap_memory_usage")[0];
    assert!(mem.data["Max"] >= mem.data["Perc50"] && mem.data["Perc50"] > 0.0);
    assert_eq!(mem.unit, "MB");
}

#[test]
fn overlapping_and_unopened_windows_are_errors() {
    let overlap = run("\
- name: T
  defaultPodTemplatePath: pod.yaml
  workloadTemplate:
  - opcode: createNodes
    count: 1
  - opcode: startCollectingMetrics
    name: x
    namespaces: [a]
  - opcode: createPods
    count: 1
    namespace: a
    collectMetrics: true
  workloads:
  - name: w
")
    .expect_err("overlap is an error");
    assert!(overlap.to_string().contains("overlapping"), "{overlap}");

    let unopened = run("\
- name: T
  defaultPodTemplatePath: pod.yaml
  workloadTemplate:
  - opcode: createNodes
    count: 1
  - opcode: createPods
    count: 1
    collectMetrics: true
  - opcode: stopCollectingMetrics
  workloads:
  - name: w
")
    .expect_err("stop without start is an error");
    assert!(
        unopened
            .to_string()
            .contains("missing startCollectingMetrics"),
        "{unopened}"
    );
}

#[test]
fn start_collecting_requires_namespaces() {
    let e = run("\
- name: T
  workloadTemplate:
  - opcode: startCollectingMetrics
    name: x
  - opcode: stopCollectingMetrics
  workloads:
  - name: w
")
    .expect_err("an error");
    let msg = e.to_string();
    assert!(
        msg.contains("workloadTemplate[0].namespaces") && msg.contains("required"),
        "{msg}"
    );
}

/// A barrier with a labelSelector counts only the scheduled pods it selects (upstream's
/// waitUntilPodsScheduledInNamespace with the selector): it passes when the namespace's pods
/// carry the label, and times out when the selector matches none of them.
#[test]
fn barrier_label_selector_counts_only_matching_pods() {
    let config = |selector: &str| {
        format!(
            "\
- name: T
  workloadTemplate:
  - opcode: createNodes
    count: 1
  - opcode: createPods
    count: 3
    namespace: a
    podTemplatePath: labelled.yaml
    skipWaitToCompletion: true
  - opcode: barrier
    namespaces: [a]
    labelSelector:
      type: {selector}
  - opcode: createPods
    count: 1
    podTemplatePath: pod.yaml
    collectMetrics: true
  workloads:
  - name: w
"
        )
    };
    let run_with = |selector: &str| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("labelled.yaml"), LABELLED_POD).unwrap();
        std::fs::write(dir.path().join("pod.yaml"), POD).unwrap();
        std::fs::write(dir.path().join("config.yaml"), config(selector)).unwrap();
        let cfg = workload::load(&dir.path().join("config.yaml")).unwrap();
        let opts = RunOptions {
            label_filter: Some(String::new()),
            threads: Some(1),
            timeout: std::time::Duration::from_secs(2),
            ..RunOptions::default()
        };
        run_config(&cfg, &opts)
    };
    let reports = run_with("unsched").expect("the barrier passes");
    let Outcome::Ran(r) = &reports[0].outcome else {
        panic!("skipped")
    };
    assert_eq!((r.summary.created, r.summary.bound), (4, 4));
    let err = run_with("other").expect_err("nothing matches: timeout");
    assert!(err.to_string().contains("timed out"), "{err}");
}

/// The collector behind a window records the binds of selected pods only.
#[test]
fn a_window_with_a_label_selector_records_only_matching_binds() {
    use k8s_openapi::api::core::v1 as core;
    use std::collections::BTreeMap;
    use std::sync::Arc;
    use tidegate_bench::cluster::store::Store;
    use tidegate_engine::ClusterClient;
    use tidegate_engine::api::{Sym, convert};

    let store = Store::new(1);
    let node: core::Node = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "n1"},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "10"}}
    }))
    .unwrap();
    let converted = convert::node(&node).unwrap();
    store.create_node(node, converted).unwrap();
    let selector = BTreeMap::from([("type".to_string(), "unsched".to_string())]);
    let id = store.start_collecting(&["a".to_string()], &selector);
    for (name, labelled) in [("x", true), ("y", false), ("z", true)] {
        let mut p: core::Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "pause"}]}
        }))
        .unwrap();
        if labelled {
            p.metadata.labels = Some(selector.clone());
        }
        let spec = Arc::new(convert::pod_spec_info(p.spec.as_ref().unwrap()).unwrap());
        let key = store.create_pod(&Arc::new(p), "a", spec).unwrap();
        let internal = tidegate_engine::api::Pod::new("a", key.split().1, Default::default());
        ClusterClient::bind(&*store, &internal, Sym::new("n1")).unwrap();
    }
    let (binds, _) = store.stop_collecting(id);
    assert_eq!(binds.len(), 2);
    assert_eq!(store.ns_stats("a").bound, 3);
}

/// Runs `config` with extra files beside it, on one thread.
fn run_with_files(config: &str, files: &[(&str, &str)]) -> Result<RunResult, HarnessError> {
    run_in(config, files, 1, 20)
}

const CHURN_POD: &str = "\
apiVersion: v1
kind: Pod
metadata:
  generateName: churn-
spec:
  containers:
  - name: c
    image: pause
";

/// churn in create mode makes one object per template per tick, `number` ticks in all; in
/// recreate mode a ring of `number` slots per template alternates create and delete, so at
/// most `number` of its objects live at once.
#[test]
fn churn_creates_and_recreates_in_the_background() {
    let config = |mode: &str, number: u32| {
        format!(
            "\
- name: T
  workloadTemplate:
  - opcode: createNodes
    count: 1
  - opcode: churn
    mode: {mode}
    number: {number}
    intervalMilliseconds: 40
    namespace: churn
    templatePaths: [churn.yaml]
  - opcode: sleep
    duration: 700ms
  - opcode: createPods
    count: 2
    podTemplatePath: pod.yaml
    collectMetrics: true
  workloads:
  - name: w
"
        )
    };
    let files = [("churn.yaml", CHURN_POD)];
    let create = run_with_files(&config("create", 3), &files).unwrap();
    assert_eq!(create.summary.created, 3 + 2, "{:?}", create.summary);
    assert!(create.summary.adds_up(), "{:?}", create.summary);
    let churned = create.placements.iter().filter(|(ns, _, _)| ns == "churn");
    assert_eq!(churned.count(), 3);

    let re = run_with_files(&config("recreate", 1), &files).unwrap();
    let s = re.summary;
    assert!(s.adds_up(), "{s:?}");
    let churn_created = s.created - 2;
    assert!(churn_created >= 3, "{s:?}");
    // churn deletes with no options: its bound pods (the API's default grace period) stay
    // terminating, with no kubelet to end them, as in kube's scheduler_perf.
    assert!(s.terminating >= 2, "{s:?}");
    let live = churn_created - s.deleted - s.terminating;
    assert!(live <= 1, "at most one live object per slot: {s:?}");
}

#[test]
fn churn_mode_must_be_create_or_recreate() {
    let e = run_with_files(
        "\
- name: T
  workloadTemplate:
  - opcode: churn
    mode: sometimes
    templatePaths: [pod.yaml]
  - opcode: createPods
    count: 1
    podTemplatePath: pod.yaml
    collectMetrics: true
  workloads:
  - name: w
",
        &[],
    )
    .expect_err("an error");
    let msg = e.to_string();
    assert!(
        msg.contains("workloadTemplate[0].mode") && msg.contains("create or recreate"),
        "{msg}"
    );
}

/// createAny makes Services (read by PodTopologySpread's default constraints), PDBs (read by
/// DefaultPreemption) and kinds nothing reads; a workload controller skips the workload with
/// the reason.
#[test]
fn create_any_stores_services_pdbs_and_inert_objects() {
    let service = "\
apiVersion: v1
kind: Service
metadata:
  generateName: svc-
spec:
  selector:
    app: web
  ports:
  - port: 80
";
    let pdb = "\
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: budget
spec:
  minAvailable: 1
  selector:
    matchLabels:
      app: web
";
    let cm = "\
apiVersion: v1
kind: ConfigMap
metadata:
  generateName: cm-
data:
  a: b
";
    let r = run_with_files(
        "\
- name: T
  workloadTemplate:
  - opcode: createNodes
    count: 1
  - opcode: createAny
    namespace: web
    templatePath: service.yaml
  - opcode: createAny
    namespace: web
    templatePath: pdb.yaml
  - opcode: createAny
    namespace: web
    templatePath: cm.yaml
    count: 3
  - opcode: createPods
    count: 1
    podTemplatePath: pod.yaml
    collectMetrics: true
  workloads:
  - name: w
",
        &[
            ("service.yaml", service),
            ("pdb.yaml", pdb),
            ("cm.yaml", cm),
        ],
    )
    .unwrap();
    assert_eq!(r.summary.bound, 1);

    let rs = "\
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: rs
";
    let skipped = run_with_files(
        "\
- name: T
  workloadTemplate:
  - opcode: createAny
    templatePath: rs.yaml
  - opcode: createPods
    count: 1
    podTemplatePath: pod.yaml
    collectMetrics: true
  workloads:
  - name: w
",
        &[("rs.yaml", rs)],
    )
    .expect_err("skipped");
    assert_eq!(
        skipped.to_string(),
        "unsupported: createAny: objects of kind ReplicaSet (workload controllers are not simulated)"
    );
}

/// The store's Services give kube's DefaultSelector: the merged selectors of the Services in
/// the pod's namespace that select it; a Service without a selector selects nothing. PDBs are
/// listed with their namespace.
#[test]
fn services_give_the_default_spread_selector_and_pdbs_are_listed() {
    use k8s_openapi::api::core::v1 as core;
    use k8s_openapi::api::policy::v1 as policy;
    use std::sync::Arc;
    use tidegate_bench::cluster::objects::AnyObject;
    use tidegate_bench::cluster::store::Store;
    use tidegate_engine::ClusterClient;
    use tidegate_engine::api::Labels;

    let store = Store::new(1);
    let svc = |name: &str, sel: Option<serde_json::Value>| {
        let mut spec = serde_json::json!({"ports": [{"port": 80}]});
        if let Some(s) = sel {
            spec["selector"] = s;
        }
        let s: core::Service =
            serde_json::from_value(serde_json::json!({"metadata": {"name": name}, "spec": spec}))
                .unwrap();
        AnyObject::typed(s).unwrap()
    };
    store
        .create_any(&svc("a", Some(serde_json::json!({"app": "web"}))), "ns")
        .unwrap();
    store
        .create_any(&svc("b", Some(serde_json::json!({"tier": "front"}))), "ns")
        .unwrap();
    store.create_any(&svc("c", None), "ns").unwrap();
    store
        .create_any(&svc("d", Some(serde_json::json!({"app": "web"}))), "other")
        .unwrap();
    assert!(
        store
            .create_any(&svc("a", Some(serde_json::json!({"x": "y"}))), "ns")
            .is_err(),
        "names are unique per namespace"
    );
    let mut pod = tidegate_engine::api::Pod::new("ns", "p", Default::default());
    pod.labels = Arc::new(Labels::from_pairs([("app", "web"), ("tier", "front")]));
    let sel = store.default_spread_selector(&pod).expect("selected");
    assert_eq!(sel.requirements.len(), 2, "{sel:?}");
    assert!(sel.matches(&pod.labels));
    let only_app = Labels::from_pairs([("app", "web")]);
    assert!(
        !sel.matches(&only_app),
        "both services' labels are required"
    );

    let mut lonely = tidegate_engine::api::Pod::new("ns", "q", Default::default());
    lonely.labels = Arc::new(Labels::from_pairs([("app", "db")]));
    assert!(store.default_spread_selector(&lonely).is_none());
    store.delete_any("Service", "ns", "a");
    store.delete_any("Service", "ns", "b");
    assert!(store.default_spread_selector(&pod).is_none());

    let pdb: policy::PodDisruptionBudget = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "budget"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}}
    }))
    .unwrap();
    store
        .create_any(&AnyObject::typed(pdb).unwrap(), "ns")
        .unwrap();
    let pdbs = store.pod_disruption_budgets();
    assert_eq!(pdbs.len(), 1);
    let cm: core::ConfigMap =
        serde_json::from_value(serde_json::json!({"metadata": {"generateName": "cm-"}})).unwrap();
    let cm = AnyObject::typed(cm).unwrap();
    store.create_any(&cm, "ns").unwrap();
    store.create_any(&cm, "ns").unwrap();
    // Services c and d remain; one PDB; two ConfigMaps with generated names.
    assert_eq!(
        store.object_counts(),
        vec![("Service", 2), ("ConfigMap", 2), ("PodDisruptionBudget", 1)]
    );
    assert_eq!(pdbs[0].namespace.to_string_lossy(), "ns");
    assert_eq!(&*pdbs[0].name, "budget");
}

/// updateAny with `subresources: [resize]` scales a bound pod's requests down in place (the
/// UpdatePodScaleDown event requeues pods NodeResourcesFit rejected), and updateAny of a Node
/// replaces the node (here: no longer unschedulable), as EventHandlingPodUpdate and
/// EventHandlingNodeUpdate do upstream.
#[test]
fn update_any_resizes_pods_and_updates_nodes() {
    let node = "\
apiVersion: v1
kind: Node
metadata:
  name: n-{{ .Index }}
spec:
  unschedulable: {{ .Unschedulable }}
status:
  capacity:
    pods: \"10\"
    cpu: \"1\"
    memory: 4Gi
";
    let big = |cpu: &str| {
        format!(
            "\
apiVersion: v1
kind: Pod
metadata:
  name: big-{{{{ .Index }}}}
spec:
  nodeName: n-0
  containers:
  - name: c
    image: pause
    resources:
      requests:
        cpu: {cpu}
"
        )
    };
    let half = "\
apiVersion: v1
kind: Pod
metadata:
  generateName: half-
spec:
  containers:
  - name: c
    image: pause
    resources:
      requests:
        cpu: 500m
";
    let r = run_with_files(
        "\
- name: T
  workloadTemplate:
  - opcode: createNodes
    count: 1
    nodeTemplatePath: node.yaml
    templateParams:
      Unschedulable: false
  - opcode: createPods
    count: 1
    podTemplatePath: big.yaml
    namespace: blockers
    skipWaitToCompletion: true
  - opcode: createPods
    count: 1
    podTemplatePath: half.yaml
    namespace: waiting
    skipWaitToCompletion: true
  - opcode: barrier
    stageRequirement: Attempted
  - opcode: updateAny
    templatePath: small.yaml
    namespace: blockers
    subresources: [resize]
  - opcode: barrier
  - opcode: updateAny
    templatePath: node.yaml
    templateParams:
      Unschedulable: true
  - opcode: createPods
    count: 1
    podTemplatePath: pod.yaml
    namespace: blocked
    skipWaitToCompletion: true
  - opcode: barrier
    stageRequirement: Attempted
  - opcode: updateAny
    templatePath: node.yaml
    templateParams:
      Unschedulable: false
  - opcode: barrier
  - opcode: createPods
    count: 1
    podTemplatePath: pod.yaml
    collectMetrics: true
  workloads:
  - name: w
",
        &[
            ("node.yaml", node),
            ("big.yaml", &big("900m")),
            ("small.yaml", &big("100m")),
            ("half.yaml", half),
        ],
    )
    .unwrap();
    // blocker, the 500m pod (after the resize), the pod held off by the cordon, the measured.
    assert_eq!(
        (r.summary.created, r.summary.bound),
        (4, 4),
        "{:?}",
        r.summary
    );
    let ns: BTreeSet<String> = namespaces_of(&r);
    assert!(ns.contains("waiting") && ns.contains("blocked"), "{ns:?}");
}

/// createPods in steady state: for `duration`, each pod seen scheduled is deleted and
/// replaced, so the namespace always holds `count` pods (created − deleted = count), and the
/// window measures the whole interval.
#[test]
fn steady_state_replaces_every_scheduled_pod_for_the_duration() {
    let r = run("\
- name: T
  workloadTemplate:
  - opcode: createNodes
    count: 2
  - opcode: createPods
    countParam: $pods
    podTemplatePath: pod.yaml
    steadyState: true
    durationParam: $duration
    collectMetrics: true
  workloads:
  - name: w
    params:
      pods: 3
      duration: 600ms
")
    .unwrap();
    let s = r.summary;
    assert!(s.adds_up(), "{s:?}");
    assert!(s.deleted >= 3, "{s:?}");
    assert_eq!(s.created - s.deleted, 3, "{s:?}");
    let d = item(&r, "SchedulingDuration")[0].data["Duration"];
    assert!(d >= 0.6, "the window spans the steady state: {d}");
    assert_eq!(item(&r, "SchedulingThroughput").len(), 1);
}

#[test]
fn steady_state_needs_a_duration_and_excludes_skip_wait() {
    let e = run("\
- name: T
  workloadTemplate:
  - opcode: createPods
    count: 1
    podTemplatePath: pod.yaml
    steadyState: true
    collectMetrics: true
  workloads:
  - name: w
")
    .expect_err("an error");
    assert!(e.to_string().contains("positive duration"), "{e}");
    let e = run("\
- name: T
  workloadTemplate:
  - opcode: createPods
    count: 1
    podTemplatePath: pod.yaml
    steadyState: true
    duration: 1s
    skipWaitToCompletion: true
  - opcode: createPods
    count: 1
    podTemplatePath: pod.yaml
    collectMetrics: true
  workloads:
  - name: w
")
    .expect_err("an error");
    assert!(e.to_string().contains("cannot be used together"), "{e}");
}

/// A barrier naming a namespace no op created fails, as upstream's runBarrierOp.
#[test]
fn a_barrier_on_an_unknown_namespace_is_an_error() {
    let e = run("\
- name: T
  defaultPodTemplatePath: pod.yaml
  workloadTemplate:
  - opcode: createNodes
    count: 1
  - opcode: barrier
    namespaces: [nowhere]
  - opcode: createPods
    count: 1
    collectMetrics: true
  workloads:
  - name: w
")
    .expect_err("an error");
    assert!(e.to_string().contains("unknown namespace nowhere"), "{e}");
}

/// A createPods of 0 pods still creates its namespace (upstream's
/// `createNamespaceIfNotPresent` runs first), so a barrier may name it: the baseline run of a
/// workload whose count parameter is 0 works (scale.yaml's `GatesRemovedUnderLoad/5000Nodes_0Held`).
#[test]
fn a_create_pods_of_zero_makes_its_namespace_known_to_barriers() {
    let r = run("\
- name: T
  defaultPodTemplatePath: pod.yaml
  workloadTemplate:
  - opcode: createNodes
    count: 1
  - opcode: createPods
    countParam: $held
    namespace: held
    skipWaitToCompletion: true
  - opcode: barrier
    namespaces: [held]
    stageRequirement: Attempted
  - opcode: createPods
    count: 2
    collectMetrics: true
  workloads:
  - name: w
    params:
      held: 0
")
    .expect("the barrier passes");
    assert_eq!(
        (r.summary.created, r.summary.bound),
        (2, 2),
        "{:?}",
        r.summary
    );
}

/// createPods' `nominatedNodeName`: the pods are created with that `status.nominatedNodeName`,
/// and the scheduler's nominator holds their resources on the node for pods of no higher
/// priority (kube's two-pass filter). A 3-CPU pod nominated to the only 4-CPU node, and
/// unschedulable there (its node selector matches no node; preemption is disabled so nothing
/// clears the nomination), leaves room for one of two 1-CPU pods; without the nomination both
/// fit.
#[test]
fn nominated_node_name_reserves_the_node_for_the_nominee() {
    let node = "\
apiVersion: v1
kind: Node
metadata:
  name: only-node
status:
  capacity: {pods: \"110\", cpu: \"4\", memory: 32Gi}
";
    let nominee = "\
apiVersion: v1
kind: Pod
metadata:
  generateName: nominee-
spec:
  priority: 100
  nodeSelector: {disk: ssd}
  containers:
  - name: c
    image: pause
    resources: {requests: {cpu: \"3\"}}
";
    let small = "\
apiVersion: v1
kind: Pod
metadata:
  generateName: small-
spec:
  containers:
  - name: c
    image: pause
    resources: {requests: {cpu: \"1\"}}
";
    let sched = "\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    postFilter:
      disabled: [{name: DefaultPreemption}]
";
    let config = |nominated: &str| {
        format!(
            "\
- name: Nominated
  schedulerConfigPath: sched.yaml
  workloadTemplate:
  - opcode: createNodes
    count: 1
    nodeTemplatePath: node.yaml
  - opcode: createPods
    count: 1
    namespace: held
    podTemplatePath: nominee.yaml
    skipWaitToCompletion: true
    {nominated}
  - opcode: barrier
    namespaces: [held]
    stageRequirement: Attempted
  - opcode: createPods
    count: 2
    namespace: small
    podTemplatePath: small.yaml
    skipWaitToCompletion: true
  - opcode: barrier
    namespaces: [small]
    stageRequirement: Attempted
  - opcode: startCollectingMetrics
    namespaces: [small]
  - opcode: stopCollectingMetrics
  workloads:
  - name: w
"
        )
    };
    let files = [
        ("node.yaml", node),
        ("nominee.yaml", nominee),
        ("small.yaml", small),
        ("sched.yaml", sched),
    ];
    let bound_small = |r: &RunResult| r.placements.iter().filter(|p| p.0 == "small").count();
    let with = run_in(&config("nominatedNodeName: only-node"), &files, 2, 30).unwrap();
    assert_eq!(bound_small(&with), 1, "{:?}", with.summary);
    let without = run_in(&config(""), &files, 2, 30).unwrap();
    assert_eq!(bound_small(&without), 2, "{:?}", without.summary);
    assert_eq!(with.summary.pending(), 2, "{:?}", with.summary);
}

/// createNodes' `nodeAllocatableStrategy`: `nodeAllocatable` sets those allocatable entries
/// on every node (the rest stays at capacity); `csiNodeAllocatable` makes each node's CSINode
/// (its shape: `create_nodes.rs`'s tests), which the store accepts. And the
/// strategies' precedence is upstream's (getNodePreparer): allocatable, then label, then
/// unique.
#[test]
fn node_allocatable_strategy_sets_allocatable_and_takes_precedence() {
    let pod = "\
apiVersion: v1
kind: Pod
metadata:
  generateName: p-
spec:
  containers:
  - name: c
    image: pause
    resources: {requests: {cpu: 600m}}
";
    let config = "\
- name: Alloc
  workloadTemplate:
  - opcode: createNodes
    count: 3
    nodeAllocatableStrategy:
      nodeAllocatable: {cpu: \"1\"}
      csiNodeAllocatable:
        ebs.csi.aws.com: {count: 20}
    uniqueNodeLabelStrategy:
      labelKey: ignored
  - opcode: createPods
    count: 6
    namespace: ns
    podTemplatePath: p600.yaml
    skipWaitToCompletion: true
  - opcode: barrier
    stageRequirement: Attempted
  - opcode: startCollectingMetrics
    namespaces: [ns]
  - opcode: stopCollectingMetrics
  workloads:
  - name: w
";
    let r = run_in(config, &[("p600.yaml", pod)], 2, 30).unwrap();
    // One 600m pod per 1-CPU node (the default node has 4 CPUs: all six would fit).
    assert_eq!(r.summary.bound, 3, "{:?}", r.summary);
    assert_eq!(r.summary.pending(), 3, "{:?}", r.summary);

    // A bad quantity is bad input, with its field.
    let bad = config.replace("{cpu: \"1\"}", "{cpu: \"lots\"}");
    let err = run_in(&bad, &[("p600.yaml", pod)], 2, 30).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("nodeAllocatableStrategy.nodeAllocatable.cpu"),
        "{msg}"
    );
}

/// createPods' `signatureBatchSize`: pod `i` gets `signature=signature-label-<i / batch>`
/// (checked through a labelSelector delete of batch 0 and a labelled barrier on batch 2).
#[test]
fn signature_batch_size_labels_pods_by_batch() {
    let config = "\
- name: Signatures
  workloadTemplate:
  - opcode: createNodes
    count: 2
  - opcode: createPods
    count: 5
    namespace: ns
    signatureBatchSizeParam: $batch
  - opcode: deletePods
    namespace: ns
    labelSelector: {signature: signature-label-0}
  - opcode: startCollectingMetrics
    namespaces: [ns]
    labelSelector: {signature: signature-label-2}
  - opcode: stopCollectingMetrics
  workloads:
  - name: w
    params: {batch: 2}
";
    let r = run(config).unwrap();
    // The default pod has the API's default grace period: deleted once bound, batch 0 stays
    // terminating (no kubelet confirms it), as in kube's scheduler_perf.
    let s = &r.summary;
    assert_eq!((s.terminating, s.deleted), (2, 0), "{s:?}");
    assert_eq!(s.bound, 3, "{s:?}");
    let bad = config.replace("params: {batch: 2}", "params: {batch: 0}");
    let msg = run(&bad).unwrap_err().to_string();
    assert!(
        msg.contains("signatureBatchSizeParam") && msg.contains("positive"),
        "{msg}"
    );
}
