//! The waits' view (`run::ops::wait`): a wait's first check passes on the counts the
//! executor last caught up with when those satisfy it, as kube's first poll does while its
//! informer lags; a wait that had to wait, a sleep or a steady state catches up. Checked on
//! the virtual clock (the scheduler acts only while time passes, so each check's state is
//! known) through the outcome record ([`tidegate_bench::run::outcome`]), and on wall time on
//! the stress workload whose second wave only kube's lagging view lets pass.

use std::path::Path;
use std::sync::Arc;
use tidegate_bench::output::results::Outcome;
use tidegate_bench::run::outcome::{OutcomeLog, PodCounts, WorkloadOutcome};
use tidegate_bench::run::pace::ClockMode;
use tidegate_bench::run::{RunOptions, run_config};
use tidegate_bench::workload;

/// A pod deleted at once when deleted (grace period 0), so deletePods removes it.
const POD: &str = "\
apiVersion: v1
kind: Pod
metadata:
  generateName: p-
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: c
    image: pause
";

const CONFIG: &str = "\
- name: View
  workloadTemplate:
  - opcode: createNodes
    count: 1
  - opcode: createPods
    count: 4
    namespace: a
    podTemplatePath: pod.yaml
  - opcode: deletePods
    namespace: a
  - opcode: createPods
    count: 4
    namespace: a
    podTemplatePath: pod.yaml
  - opcode: sleep
    duration: 1s
  - opcode: deletePods
    namespace: a
  - opcode: sleep
    duration: 1s
  - opcode: createPods
    count: 4
    namespace: a
    podTemplatePath: pod.yaml
    collectMetrics: true
  workloads:
  - name: OneNode
";

/// Runs the workloads of `config` (or the one named) with the outcome record.
fn outcomes(
    config: &Path,
    workload: Option<&str>,
    clock: ClockMode,
) -> (Vec<WorkloadOutcome>, Vec<Outcome>) {
    let cfg = workload::load(config).unwrap();
    let log = Arc::new(OutcomeLog::default());
    let opts = RunOptions {
        workload: workload.map(str::to_string),
        label_filter: Some(String::new()),
        clock,
        threads: Some(1),
        keep_going: true,
        timeout: std::time::Duration::from_secs(20),
        outcomes: Some(log.clone()),
        ..RunOptions::default()
    };
    let reports = run_config(&cfg, &opts).unwrap();
    let ran = log.workloads.lock().clone();
    (ran, reports.into_iter().map(|r| r.outcome).collect())
}

fn counts(created: u64, scheduled: u64, pending: u64, deleted: u64) -> PodCounts {
    PodCounts {
        created,
        scheduled,
        pending,
        deleted,
    }
}

#[test]
fn first_check_reads_the_view_until_the_executor_catches_up() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pod.yaml"), POD).unwrap();
    std::fs::write(dir.path().join("config.yaml"), CONFIG).unwrap();
    let clock = ClockMode::Virtual {
        attempt_cost: std::time::Duration::from_micros(10),
    };
    let (ran, _) = outcomes(&dir.path().join("config.yaml"), None, clock);
    let w = &ran[0];
    assert_eq!(w.error, None, "{w:?}");
    let end = |i: usize| w.ends.iter().find(|e| e.index == i).unwrap();
    // Op 1 had to wait: the view is its 4 scheduled pods.
    assert_eq!((end(1).counts, end(1).stale), (counts(4, 4, 0, 0), false));
    // Op 3: its 4 new pods are not scheduled yet and the 4 before are gone, but the view
    // still counts 4: passed on it, stale.
    assert_eq!((end(3).waits, end(3).stale), (1, true));
    assert_eq!(end(3).counts, counts(8, 0, 4, 4));
    // The sleeps caught up (4 scheduled, then none after the second deletePods): op 7's
    // first check reads 0 and the op waits for its own pods.
    assert_eq!((end(7).waits, end(7).stale), (1, false));
    assert_eq!(end(7).counts, counts(12, 4, 0, 8));
}

/// kube v1.37.2 completes this workload (its second wave's wait passes on a first poll that
/// still counts the first wave's victims); tidegate's preemptions used to delete them first.
#[test]
fn multi_victim_waves_complete_as_in_kube() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../perf-data/workloads/stress.yaml");
    for _ in 0..3 {
        let (ran, reports) = outcomes(
            &file,
            Some("PreemptionMultiVictimWaveStress/5Nodes_MultiVictimWaves"),
            ClockMode::Real,
        );
        assert!(matches!(reports[0], Outcome::Ran(_)), "{:?}", ran[0].error);
        // Every op ran; the waves' preemptions evicted three victims per node.
        let last = ran[0].ends.last().unwrap();
        assert_eq!((last.index, last.counts.created), (5, 50));
        assert!(last.counts.deleted <= 15, "{last:?}");
    }
}
