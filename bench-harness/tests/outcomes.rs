//! The differential's outcome check (`tidegate_bench::oracle::outcome`) on a record of the
//! real kube-scheduler: kube v1.37.2 running `PreemptionMultiVictimWaveStress/5Nodes_MultiVictimWaves`
//! (perf-data/workloads/stress.yaml) with kube-reference's `-record`, whose `op` lines carry
//! the marks of kube's op executor with its informer's counts (`v4_*`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use tidegate_bench::oracle::outcome::{KubeOutcome, Verdict, judge, read_kube};
use tidegate_bench::oracle::replay;
use tidegate_bench::run::outcome::{OutcomeLog, PodCounts, WorkloadOutcome};
use tidegate_bench::run::{RunOptions, run_config};
use tidegate_bench::workload;

const WAVES: &str = "PreemptionMultiVictimWaveStress/5Nodes_MultiVictimWaves";

fn record() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/kube-records/v4_MultiVictimWaves_5Nodes.jsonl")
}

/// tidegate's outcome of the waves workload (wall time, as the differential runs it).
fn tidegate_waves() -> WorkloadOutcome {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../perf-data/workloads/stress.yaml");
    let cfg = workload::load(&file).unwrap();
    let log = Arc::new(OutcomeLog::default());
    let opts = RunOptions {
        workload: Some(WAVES.into()),
        label_filter: Some(String::new()),
        keep_going: true,
        timeout: std::time::Duration::from_secs(20),
        outcomes: Some(log.clone()),
        ..RunOptions::default()
    };
    run_config(&cfg, &opts).unwrap();
    log.workloads.lock().pop().unwrap()
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
fn kubes_record_holds_the_executors_marks_and_its_outcome() {
    let k = read_kube(&record()).unwrap();
    assert_eq!((k.attempts, k.deletions), (38, 15));
    assert_eq!(k.failed, None);
    assert_eq!(k.end.map(|(done, _)| done), Some(true));
    let events: Vec<&str> = k.marks.iter().map(|m| m.event.as_str()).collect();
    assert_eq!(
        events,
        [
            "createNamespaces",
            "createPods",
            "scheduled",
            "startMetrics",
            "createPods",
            "scheduled",
            "stopMetrics",
            "createPods",
            "scheduled",
            "startMetrics",
            "createPods",
            "scheduled",
            "stopMetrics"
        ]
    );
    // The second wave's wait (op 4) passed on its first poll: the informer still held the
    // first wave's 20 victims, none deleted yet.
    assert_eq!(k.marks[8].counts, counts(44, 20, 24, 0));
    // The replay judges every attempt the same, the five preemptions included.
    let r = replay(&record(), None).unwrap();
    assert_eq!((r.decisions, r.victims_checked), (38, 5));
    assert!(r.disagreements.is_empty(), "{:?}", r.disagreements);
}

#[test]
fn both_complete_and_every_difference_is_timing() {
    let t = tidegate_waves();
    let j = judge(&t, &read_kube(&record()).unwrap());
    assert_eq!(j.completion, Verdict::Same);
    assert!(j.disagreements().is_empty(), "{:?}", j.disagreements());
    // The first wave's wait ends settled on both sides: 20 bound, nothing pending.
    let op2 = &j.rows[2];
    assert_eq!(op2.kube.map(|(c, _)| c), Some(counts(20, 20, 0, 0)));
    assert_eq!(op2.verdict, Some(Verdict::Same));
    // createNodes: kube's recorder starts after it, nothing to compare.
    assert_eq!(j.rows[0].verdict, None);
}

#[test]
fn a_settled_difference_is_a_disagreement() {
    let t = tidegate_waves();
    let mut k = read_kube(&record()).unwrap();
    // kube's first wave's wait: one victim gone, every pod bound or deleted.
    k.marks[2].counts = counts(20, 19, 0, 1);
    let j = judge(&t, &k);
    let d = j.disagreements();
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(d[0].starts_with("op 2 (createPods)"), "{d:?}");
}

#[test]
fn completion_differences() {
    let t = tidegate_waves();
    let failed_at_4 = |k: &mut KubeOutcome| {
        k.marks.truncate(8);
        k.failed = Some((
            4,
            "Error running workload 5Nodes_MultiVictimWaves: op 4: error in waiting".into(),
        ));
        k.end = Some((false, k.marks[7].counts));
    };
    // kube lost the race at op 4 where tidegate passed on its view: explained. Whether
    // tidegate's own wait at op 4 passed on a stale view depends on this run's timing, so
    // the case sets it rather than hoping for it.
    let mut k = read_kube(&record()).unwrap();
    failed_at_4(&mut k);
    let mut stale = t.clone();
    for e in stale.ends.iter_mut().filter(|e| e.index == 4) {
        e.stale = true;
    }
    assert!(stale.ends.iter().any(|e| e.index == 4 && e.stale));
    let j = judge(&stale, &k);
    assert!(
        matches!(&j.completion, Verdict::Explained(w) if w.contains("kube failed at op 4")),
        "{:?}",
        j.completion
    );
    // The same where tidegate's wait read the current state: a disagreement.
    let mut fresh = t.clone();
    for e in &mut fresh.ends {
        e.stale = false;
    }
    assert!(matches!(judge(&fresh, &k).completion, Verdict::Disagree(_)));
    // kube completed, tidegate failed at op 4: a disagreement.
    let mut failed = t.clone();
    failed.ends.truncate(5);
    failed.error = Some("timed out after 30s waiting for 20 pods".into());
    let j = judge(&failed, &read_kube(&record()).unwrap());
    assert!(
        matches!(&j.completion, Verdict::Disagree(w) if w.contains("tidegate failed at op 4")),
        "{:?}",
        j.completion
    );
    // kube's run cut off (no outcome line): explained.
    let mut k = read_kube(&record()).unwrap();
    k.end = None;
    assert!(matches!(judge(&t, &k).completion, Verdict::Explained(_)));
}

#[test]
fn marks_that_do_not_follow_the_plan_disagree() {
    let t = tidegate_waves();
    let mut k = read_kube(&record()).unwrap();
    k.marks.remove(3); // op 3's startMetrics
    let j = judge(&t, &k);
    assert!(
        matches!(&j.completion, Verdict::Disagree(w) if w.contains("do not follow the plan at op 3")),
        "{:?}",
        j.completion
    );
}

/// kube v1.37.2 failing an op whose message names no op (updateAny's own Fatalf: a v1
/// DeviceTaintRule updated without a resourceVersion), recorded by kube-reference. The
/// failure lies after the last op kube marked (op 5's createPods) and before op 7's start:
/// tidegate failing at op 6, as it does, is the same; at another op, a disagreement.
#[test]
fn a_failure_whose_message_names_no_op_is_placed_by_the_marks() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/kube-records");
    let k = read_kube(&dir.join("v6_DeviceTaintRuleUpdate_2nodes.jsonl")).unwrap();
    let (n, text) = k.failed.clone().expect("kube's run failed");
    assert_eq!(n, usize::MAX, "the message names no op: {text}");
    assert!(text.contains("must be specified for an update"), "{text}");
    let cfg = workload::load(&dir.join("device-taint-rule-update.yaml")).unwrap();
    let log = Arc::new(OutcomeLog::default());
    let opts = RunOptions {
        workload: Some("RuleUpdate/2nodes".into()),
        label_filter: Some(String::new()),
        keep_going: true,
        outcomes: Some(log.clone()),
        ..RunOptions::default()
    };
    let err = run_config(&cfg, &opts).expect_err("the store refuses the update as kube does");
    assert!(
        err.to_string().contains("must be specified for an update"),
        "{err}"
    );
    let t = log.workloads.lock().pop().unwrap();
    assert_eq!(t.ends.last().map(|e| e.index), Some(6));
    let j = judge(&t, &k);
    assert_eq!(j.completion, Verdict::Same, "{:?}", j.completion);
    assert_eq!(j.kube_failed_at, Some(6));
    // tidegate failing at op 5 instead: kube's marks show op 5 ended.
    let mut early = t.clone();
    early.ends.truncate(6);
    let j = judge(&early, &k);
    assert!(
        matches!(j.completion, Verdict::Disagree(_)),
        "{:?}",
        j.completion
    );
}
