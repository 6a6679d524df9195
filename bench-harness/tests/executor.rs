//! How each op waits, counts and starts and stops its collectors, as upstream's scheduler_perf
//! executor does (kubernetes/kubernetes test/integration/scheduler_perf/executor.go, v1.37.2).
//! Every run is on the virtual clock (one thread, seed 1), so when a wait ends and what a
//! window measures are exact; a timeout costs no wall time.
//!
//! The table these tests hold the harness to: perf-data/results/fidelity/op-semantics.md.

use std::time::Duration;
use tidegate_bench::error::HarnessError;
use tidegate_bench::output::report::DataItem;
use tidegate_bench::output::results::{Outcome, RunResult};
use tidegate_bench::run::pace::ClockMode;
use tidegate_bench::run::{RunOptions, run_config};
use tidegate_bench::workload;

/// A node with room for `pods: "{PODS}"` pods and 4 CPUs.
const NODE: &str = "\
apiVersion: v1
kind: Node
metadata:
  generateName: node-
status:
  capacity: {pods: \"PODS\", cpu: \"4\", memory: 32Gi}
";

const NO_GRACE: &str = "priority: 0\n  terminationGracePeriodSeconds: 0";

fn pod(prefix: &str, extra: &str) -> String {
    format!(
        "\
apiVersion: v1
kind: Pod
metadata:
  generateName: {prefix}-
spec:
  {extra}
  containers:
  - name: c
    image: pause
"
    )
}

/// Runs the one workload of `config` on the virtual clock, with `node.yaml` (room for
/// `pods` pods), `early.yaml`, `late.yaml` (both with `terminationGracePeriodSeconds: 0`,
/// as upstream's templates of pods it deletes have: the API server removes such a pod at
/// once), `lingering.yaml` (the API's default grace period of 30 s), `never.yaml` (a node
/// selector no node matches) and `files` beside it.
fn run(
    config: &str,
    pods: usize,
    files: &[(&str, &str)],
    poll: Option<Duration>,
) -> Result<RunResult, HarnessError> {
    let dir = tempfile::tempdir().unwrap();
    let base = [
        ("node.yaml", NODE.replace("PODS", &pods.to_string())),
        ("early.yaml", pod("early", NO_GRACE)),
        ("late.yaml", pod("late", NO_GRACE)),
        ("lingering.yaml", pod("lingering", "priority: 0")),
        (
            "never.yaml",
            pod("never", "nodeSelector: {nowhere: \"true\"}"),
        ),
    ];
    for (n, t) in &base {
        std::fs::write(dir.path().join(n), t).unwrap();
    }
    for (n, t) in files {
        std::fs::write(dir.path().join(n), t).unwrap();
    }
    std::fs::write(dir.path().join("config.yaml"), config).unwrap();
    let cfg = workload::load(&dir.path().join("config.yaml"))?;
    let opts = RunOptions {
        label_filter: Some(String::new()),
        seed: 1,
        threads: Some(1),
        // Virtual seconds: a wait that cannot finish fails without costing wall time.
        timeout: Duration::from_secs(60),
        wait_poll: poll,
        clock: ClockMode::Virtual {
            attempt_cost: ClockMode::DEFAULT_ATTEMPT_COST,
        },
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

/// Bound pods of namespace `ns` whose name starts with `prefix`.
fn bound(r: &RunResult, ns: &str, prefix: &str) -> usize {
    r.placements
        .iter()
        .filter(|(n, name, _)| n == ns && name.starts_with(prefix))
        .count()
}

fn item<'a>(r: &'a RunResult, metric: &str, name: &str) -> &'a DataItem {
    let want = format!("BenchmarkPerfScheduling/T/w/{name}");
    r.items
        .iter()
        .find(|i| {
            i.labels.get("Metric").map(String::as_str) == Some(metric)
                && i.labels.get("Name") == Some(&want)
        })
        .unwrap_or_else(|| panic!("no {metric} item for {want}: {:?}", r.items))
}

/// The window's SchedulingDuration, in seconds.
fn duration(r: &RunResult, name: &str) -> f64 {
    item(r, "SchedulingDuration", name).data["Duration"]
}

/// The binds the window named `name` recorded (its throughput series, summed).
fn window_binds(r: &RunResult, name: &str) -> usize {
    let want = format!("BenchmarkPerfScheduling/T/w/{name}");
    let s = r
        .series
        .iter()
        .find(|s| s.name == want)
        .unwrap_or_else(|| panic!("no window {want}"));
    let secs = s.throughput.first().map_or(0.0, |p| p.0);
    s.throughput.iter().map(|p| p.1 * secs).sum::<f64>().round() as usize
}

/// The workload: one node from `node.yaml`, then `ops` (whose first line has lost its
/// indentation to the string's line continuation).
fn head(ops: &str) -> String {
    format!(
        "\
- name: T
  workloadTemplate:
  - opcode: createNodes
    count: 1
    nodeTemplatePath: node.yaml
  {ops}
  workloads:
  - name: w
"
    )
}

/// (a) Preemptors that evict victims of their own namespace: createPods of 4 preemptors ends
/// once 4 pods of the namespace are scheduled. Two 2-CPU victims fill the node; the 1-CPU
/// preemptors evict them one by one and all four bind, leaving 4 scheduled pods where the
/// old target (2 bound before + 4) could never be reached.
// provenance: test/integration/scheduler_perf/executor.go runCreatePodsOp, waitUntilPodsScheduledInNamespace
#[test]
fn preemptors_evicting_victims_of_their_own_namespace_complete_at_count_scheduled() {
    let victim = "\
apiVersion: v1
kind: Pod
metadata:
  generateName: victim-
spec:
  priority: 0
  terminationGracePeriodSeconds: 0
  containers:
  - name: c
    image: pause
    resources: {requests: {cpu: \"2\"}}
";
    let preemptor = "\
apiVersion: v1
kind: Pod
metadata:
  generateName: preemptor-
spec:
  priority: 100
  containers:
  - name: c
    image: pause
    resources: {requests: {cpu: \"1\"}}
";
    let config = head(
        "\
  - opcode: createPods
    count: 2
    namespace: ns
    podTemplatePath: victim.yaml
  - opcode: createPods
    count: 4
    namespace: ns
    podTemplatePath: preemptor.yaml
    collectMetrics: true",
    );
    let files = [("victim.yaml", victim), ("preemptor.yaml", preemptor)];
    let r = run(&config, 110, &files, None).expect("the preemptors' createPods completes");
    assert_eq!(bound(&r, "ns", "preemptor-"), 4, "{:?}", r.summary);
    assert_eq!(bound(&r, "ns", "victim-"), 0, "{:?}", r.summary);
    assert_eq!(r.summary.deleted, 2, "{:?}", r.summary);
    // The window saw the four preemptors bind, and nothing else.
    assert_eq!(window_binds(&r, "ns"), 4);
}

/// (b) Pods created in the namespace before the op count toward its wait once scheduled:
/// two pods bound by an earlier createPods plus one of the op's three (the node has room for
/// three) make the 3 the op waits for. Pods created before that are pending count only when
/// scheduled: with room for two, the wait for 3 times out with 2 scheduled.
// provenance: test/integration/scheduler_perf/executor.go runCreatePodsOp, waitUntilPodsScheduledInNamespace; util.go getScheduledPods
#[test]
fn pods_created_before_the_op_count_toward_its_wait() {
    let config = head(
        "\
  - opcode: createPods
    count: 2
    namespace: ns
    podTemplatePath: early.yaml
  - opcode: createPods
    count: 3
    namespace: ns
    podTemplatePath: late.yaml
    collectMetrics: true",
    );
    let r = run(&config, 3, &[], None).expect("2 earlier + 1 of the op's = 3 scheduled");
    assert_eq!(
        (bound(&r, "ns", "early-"), bound(&r, "ns", "late-")),
        (2, 1)
    );
    assert_eq!(r.summary.pending(), 2, "{:?}", r.summary);

    let err = run(&config, 2, &[], None).expect_err("only 2 can ever be scheduled");
    let msg = err.to_string();
    assert!(
        msg.contains("waiting for 3 pods in namespace ns (bound 2,"),
        "{msg}"
    );
}

/// (b) Pods created earlier without waiting, still pending when the op starts, count too:
/// the node has room for two, the two skip-wait pods come first in the queue and bind, and
/// the op's wait for 2 ends with none of its own pods scheduled. The barrier then finds its
/// 2 as well.
// provenance: test/integration/scheduler_perf/executor.go runCreatePodsOp (SkipWaitToCompletion), runBarrierOp
#[test]
fn pending_pods_created_before_the_op_satisfy_its_wait_once_scheduled() {
    let config = head(
        "\
  - opcode: createPods
    count: 2
    namespace: ns
    podTemplatePath: early.yaml
    skipWaitToCompletion: true
  - opcode: createPods
    count: 2
    namespace: ns
    podTemplatePath: late.yaml
    collectMetrics: true
  - opcode: barrier
    namespaces: [ns]",
    );
    let r = run(&config, 2, &[], None).expect("the op's wait and the barrier pass");
    assert_eq!(
        (bound(&r, "ns", "early-"), bound(&r, "ns", "late-")),
        (2, 0)
    );
    assert_eq!(window_binds(&r, "ns"), 2);
}

/// (c) Pods deleted during the wait no longer count: two bound pods are deleted in the
/// background (deletePods with skipWaitToCompletion) while the next createPods waits for 3.
/// With room for three, the op's own three bind and the wait ends (the old target, 2 bound
/// before + 3, could not be reached); with room for two, only the op's two bind and the wait
/// times out at 2 scheduled, though 4 pods of the namespace were scheduled at some point.
// provenance: test/integration/scheduler_perf/executor.go runCreatePodsOp, runDeletePodsOp, waitUntilPodsScheduledInNamespace
#[test]
fn pods_deleted_during_the_wait_no_longer_count() {
    let config = head(
        "\
  - opcode: createPods
    count: 2
    namespace: ns
    podTemplatePath: early.yaml
  - opcode: deletePods
    namespace: ns
    skipWaitToCompletion: true
  - opcode: createPods
    count: 3
    namespace: ns
    podTemplatePath: late.yaml
    collectMetrics: true",
    );
    let r = run(&config, 3, &[], None).expect("the op's three replace the deleted two");
    assert_eq!(
        (bound(&r, "ns", "early-"), bound(&r, "ns", "late-")),
        (0, 3)
    );
    assert_eq!(r.summary.deleted, 2, "{:?}", r.summary);

    let err = run(&config, 2, &[], None).expect_err("2 scheduled at most once the 2 are gone");
    let msg = err.to_string();
    assert!(
        msg.contains("waiting for 3 pods in namespace ns (bound 2,"),
        "{msg}"
    );
}

/// A barrier counts the namespace's scheduled pods whoever created them against the pods
/// created there without waiting: two pods an earlier createPods bound meet the 2 that two
/// unschedulable skip-wait pods ask for; with one bound, the barrier times out at 1. With
/// `Attempted`, attempted pods count as well, and the namespace stays registered for the
/// next barrier.
// provenance: test/integration/scheduler_perf/executor.go runBarrierOp, waitUntilPodsScheduled, waitUntilPodsAttempted
#[test]
fn barrier_counts_every_scheduled_pod_of_the_namespace_against_the_skip_wait_count() {
    let config = |early: usize, barriers: &str| {
        head(&format!(
            "\
  - opcode: createPods
    count: {early}
    namespace: ns
    podTemplatePath: early.yaml
  - opcode: createPods
    count: 2
    namespace: ns
    podTemplatePath: never.yaml
    skipWaitToCompletion: true
{barriers}
  - opcode: startCollectingMetrics
    namespaces: [ns]
  - opcode: stopCollectingMetrics"
        ))
    };
    let scheduled = "  - opcode: barrier\n    namespaces: [ns]";
    let r = run(&config(2, scheduled), 110, &[], None).expect("2 scheduled meet the 2");
    assert_eq!(
        (r.summary.bound, r.summary.pending()),
        (2, 2),
        "{:?}",
        r.summary
    );
    let err = run(&config(1, scheduled), 110, &[], None).expect_err("1 scheduled of 2");
    assert!(
        err.to_string()
            .contains("waiting for 2 pods in namespace ns (bound 1,"),
        "{err}"
    );
    let attempted = "  - opcode: barrier\n    namespaces: [ns]\n    stageRequirement: Attempted";
    let r = run(
        &config(1, &format!("{attempted}\n{attempted}")),
        110,
        &[],
        None,
    )
    .expect("1 scheduled + attempted meet the 2, twice");
    assert_eq!(bound(&r, "ns", "never-"), 0);
    assert_eq!(r.summary.bound, 1, "{:?}", r.summary);
}

/// A barrier with no namespaces waits on every registered one (createPods, createNamespaces),
/// then unregisters them all: a later barrier naming one of them is an unknown namespace, and
/// a createPods into one fails to create it, as upstream's createNamespaceIfNotPresent does.
/// A churn op's namespace is never registered.
// provenance: test/integration/scheduler_perf/executor.go runBarrierOp, runCreateNamespaceOp, createNamespaceIfNotPresent, runChurnOp
#[test]
fn a_barrier_without_namespaces_covers_and_unregisters_every_registered_namespace() {
    let ops = "\
  - opcode: createPods
    count: 2
    namespace: a
    podTemplatePath: early.yaml
    skipWaitToCompletion: true
  - opcode: createPods
    count: 1
    namespace: b
    podTemplatePath: late.yaml
    skipWaitToCompletion: true
  - opcode: createNamespaces
    prefix: c
    count: 1
  - opcode: barrier
  - opcode: startCollectingMetrics
    namespaces: [a]
  - opcode: stopCollectingMetrics";
    let r = run(&head(ops), 110, &[], None).expect("the barrier covers a, b and c-0");
    assert_eq!(r.summary.bound, 3, "{:?}", r.summary);

    for (later, want) in [
        (
            "  - opcode: barrier\n    namespaces: [a]",
            "unknown namespace a",
        ),
        (
            "  - opcode: barrier\n    namespaces: [c-0]",
            "unknown namespace c-0",
        ),
        (
            "  - opcode: createPods\n    count: 1\n    namespace: b\n    podTemplatePath: late.yaml",
            "failed to create namespace for Pod: b",
        ),
    ] {
        let err = run(&head(&format!("{ops}\n{later}")), 110, &[], None)
            .expect_err("unregistered by the barrier");
        assert!(err.to_string().contains(want), "{want}: {err}");
    }

    let churn = "\
  - opcode: churn
    mode: create
    number: 1
    namespace: churned
    templatePaths: [late.yaml]
  - opcode: barrier
    namespaces: [churned]
  - opcode: createPods
    count: 1
    collectMetrics: true
    podTemplatePath: early.yaml";
    let err = run(&head(churn), 110, &[], None).expect_err("churn registers nothing");
    assert!(
        err.to_string().contains("unknown namespace churned"),
        "{err}"
    );
}

/// createPods with collectMetrics: the window opens before the pods are created and closes
/// when the wait ends. Waiting as upstream polls (`--wait-poll 1s`: at the start, then every
/// second), the wait that can end only after the pods bind ends at the 1 s check, so the
/// window lasts exactly 1 virtual second; ending the moment the condition holds, it lasts the
/// three attempts. Either way the window holds the op's three binds.
// provenance: test/integration/scheduler_perf/executor.go runCreatePodsOp, startCollectingMetrics, stopCollectingMetrics; util.go schedulingDurationCollector
#[test]
fn create_pods_window_spans_the_creates_and_the_wait() {
    let config = head(
        "\
  - opcode: createPods
    count: 3
    namespace: ns
    podTemplatePath: early.yaml
    collectMetrics: true",
    );
    let polled = run(&config, 110, &[], Some(Duration::from_secs(1))).unwrap();
    assert_eq!(duration(&polled, "ns"), 1.0);
    assert_eq!(window_binds(&polled, "ns"), 3);
    let prompt = run(&config, 110, &[], None).unwrap();
    let attempts = 3.0 * ClockMode::DEFAULT_ATTEMPT_COST.as_secs_f64();
    assert!(
        (duration(&prompt, "ns") - attempts).abs() < 1e-9,
        "{:?}",
        prompt.summary
    );
    assert_eq!(window_binds(&prompt, "ns"), 3);
    assert_eq!(polled.placements, prompt.placements);
}

/// startCollectingMetrics / stopCollectingMetrics: the window counts the binds between its
/// start and its stop only. Skip-wait pods created inside it bind only once something waits
/// (the barrier after the stop), so the window is empty; with a 2 s sleep inside it they bind
/// there and it lasts exactly the sleep. A pod created already bound (nodeName) counts as a
/// scheduled pod, as the collector's add event does upstream.
// provenance: test/integration/scheduler_perf/executor.go runStartCollectingMetricsOp, runStopCollectingMetrics; util.go throughputCollector.run
#[test]
fn a_window_counts_what_is_scheduled_between_its_start_and_stop() {
    let config = |inside: &str| {
        head(&format!(
            "\
  - opcode: startCollectingMetrics
    name: win
    namespaces: [ns]
  - opcode: createPods
    count: 3
    namespace: ns
    podTemplatePath: early.yaml
    skipWaitToCompletion: true
{inside}
  - opcode: stopCollectingMetrics
  - opcode: barrier"
        ))
    };
    let empty = run(&config(""), 110, &[], None).unwrap();
    assert_eq!(window_binds(&empty, "win"), 0);
    assert_eq!(duration(&empty, "win"), 0.0);
    assert_eq!(empty.summary.bound, 3, "{:?}", empty.summary);

    let slept = run(
        &config("  - opcode: sleep\n    duration: 2s"),
        110,
        &[],
        None,
    )
    .unwrap();
    assert_eq!(window_binds(&slept, "win"), 3);
    assert_eq!(duration(&slept, "win"), 2.0);

    let prebound = "\
apiVersion: v1
kind: Pod
metadata:
  generateName: prebound-
spec:
  nodeName: fixed-node
  containers:
  - name: c
    image: pause
";
    let fixed = "\
apiVersion: v1
kind: Node
metadata:
  name: fixed-node
status:
  capacity: {pods: \"110\", cpu: \"4\", memory: 32Gi}
";
    let r = run(
        &head(
            "\
  - opcode: createNodes
    count: 1
    nodeTemplatePath: fixed.yaml
  - opcode: startCollectingMetrics
    name: win
    namespaces: [ns]
  - opcode: createPods
    count: 2
    namespace: ns
    podTemplatePath: prebound.yaml
  - opcode: stopCollectingMetrics",
        ),
        110,
        &[("prebound.yaml", prebound), ("fixed.yaml", fixed)],
        None,
    )
    .unwrap();
    assert_eq!(window_binds(&r, "win"), 2);
}

/// deletePodsPerSecond acts on a Go ticker: the first delete one period after the op starts.
/// Three deletes at 2 per second take 1.5 s (the window around the op lasts that long).
// provenance: test/integration/scheduler_perf/executor.go runDeletePodsOp
#[test]
fn paced_deletes_start_one_period_after_the_op() {
    let r = run(
        &head(
            "\
  - opcode: createPods
    count: 3
    namespace: ns
    podTemplatePath: early.yaml
  - opcode: startCollectingMetrics
    name: win
    namespaces: [ns]
  - opcode: deletePods
    namespace: ns
    deletePodsPerSecond: 2
  - opcode: stopCollectingMetrics",
        ),
        110,
        &[],
        None,
    )
    .unwrap();
    assert_eq!(duration(&r, "win"), 1.5);
    assert_eq!(r.summary.deleted, 3, "{:?}", r.summary);
}

/// deletePods sends a plain DELETE: a bound pod with a grace period (the API's default 30 s)
/// gets a deletionTimestamp and waits for a kubelet, which a scheduler_perf cluster has none
/// of, so it stays on its node, holding its resources and counting as scheduled. With room
/// for three, two such pods leave one slot: one of three later pods binds, and the op's wait
/// for 3 scheduled passes with the terminating two.
// provenance: pkg/registry/core/pod/strategy.go CheckGracefulDelete; test/integration/scheduler_perf/executor.go runDeletePodsOp, util.go getScheduledPods
#[test]
fn bound_pods_deleted_with_a_grace_period_stay_terminating() {
    let config = head(
        "\
  - opcode: createPods
    count: 2
    namespace: ns
    podTemplatePath: lingering.yaml
  - opcode: deletePods
    namespace: ns
  - opcode: createPods
    count: 3
    namespace: ns
    podTemplatePath: late.yaml
    collectMetrics: true",
    );
    let r = run(&config, 3, &[], None).expect("the terminating pods count as scheduled");
    let s = &r.summary;
    assert_eq!((s.terminating, s.deleted), (2, 0), "{s:?}");
    assert_eq!(bound(&r, "ns", "lingering-"), 2);
    assert_eq!(bound(&r, "ns", "late-"), 1);
    assert_eq!(s.pending(), 2, "{s:?}");
    assert_eq!(s.created, s.bound + s.deleted + s.terminating + s.pending());
}

/// A workload collects metrics when a createPods has collectMetrics or a
/// stopCollectingMetrics closes a window; a startCollectingMetrics alone collects nothing and
/// the workload is refused (upstream's validateTestCases).
// provenance: test/integration/scheduler_perf/scheduler_perf.go validateTestCases; operations.go collectsMetrics
#[test]
fn a_start_without_a_stop_collects_nothing() {
    let err = run(
        &head(
            "\
  - opcode: startCollectingMetrics
    namespaces: [ns]
  - opcode: createPods
    count: 1
    namespace: ns
    podTemplatePath: early.yaml",
        ),
        110,
        &[],
        None,
    )
    .expect_err("nothing collects");
    assert!(err.to_string().contains("collects metrics"), "{err}");
}
