//! Volumes end to end (issue 35): our `perf-data/workloads/volumes.yaml` through the harness
//! and the four volume plugins, and pods that stay pending with kube's messages.

use std::path::{Path, PathBuf};
use std::time::Duration;
use tidegate_bench::output::results::{Outcome, Summary};
use tidegate_bench::run::{RunOptions, run_config};
use tidegate_bench::workload;

fn volumes_yaml() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../perf-data/workloads/volumes.yaml")
}

fn summaries(file: &Path) -> Vec<(String, Summary)> {
    let cfg = workload::load(file).expect("config parses");
    let opts = RunOptions {
        label_filter: Some("integration-test".into()),
        threads: Some(2),
        ..RunOptions::default()
    };
    run_config(&cfg, &opts)
        .expect("runs")
        .into_iter()
        .map(|r| {
            let name = format!("{}/{}", r.test_case, r.workload);
            match r.outcome {
                Outcome::Ran(res) => (name, res.summary),
                other => panic!("{name}: {other:?}"),
            }
        })
        .collect()
}

#[test]
fn volume_workloads_bind_what_fits_and_keep_the_rest_pending() {
    let got = summaries(&volumes_yaml());
    let get = |n: &str| {
        got.iter()
            .find(|(x, _)| x == n)
            .unwrap_or_else(|| panic!("{n} not run: {got:?}"))
            .1
    };
    for (name, s) in &got {
        assert!(s.adds_up(), "{name}: {s:?}");
    }
    // The shapes of upstream's volumes/ cases: every pod binds.
    for w in [
        "SchedulingSecrets/5Nodes",
        "SchedulingInTreePVs/5Nodes",
        "SchedulingMigratedInTreePVs/5Nodes",
        "SchedulingCSIPVs/5Nodes",
    ] {
        let s = get(w);
        assert_eq!((s.bound, s.pending()), (15, 0), "{w}: {s:?}");
    }
    // 3 nodes of 2 EBS CSI volumes each: 6 pods bind, 3 wait (NodeVolumeLimits).
    let s = get("CSIVolumeLimits/3Nodes");
    assert_eq!((s.bound, s.pending_unschedulable), (6, 3), "{s:?}");
    // Claims in use by a pod with ReadWriteOncePod: their second users wait.
    let s = get("ReadWriteOncePodInUse/3Nodes");
    assert_eq!((s.bound, s.pending_unschedulable), (4, 4), "{s:?}");
    // WaitForFirstConsumer claims matched to local volumes, bound through PreBind and the
    // fake PV controller: every pod binds, two per node at most (two volumes per node).
    let s = get("WaitForFirstConsumerLocal/3Nodes");
    assert_eq!((s.bound, s.pending()), (6, 0), "{s:?}");
    // Missing class, missing claim, nothing to provision: 6 wait, the 2 plain pods bind.
    let s = get("VolumesPending/2Nodes");
    assert_eq!((s.bound, s.pending()), (2, 6), "{s:?}");
}

/// A pod that cannot be scheduled: the harness's timeout names the plugin and kube's message.
fn pending_message(claim: &str, extra_ops: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        r#"
- name: Pending
  workloadTemplate:
  - opcode: createNodes
    count: 2
{extra_ops}
  - opcode: createPods
    count: 1
    namespace: ns
    podTemplatePath: pod.yaml
    collectMetrics: true
  workloads:
  - name: One
    labels: [integration-test]
"#
    );
    let pod = format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  generateName: p-\nspec:\n  containers:\n  - name: c\n    image: i\n  volumes:\n  - name: data\n    persistentVolumeClaim:\n      claimName: {claim}\n"
    );
    std::fs::write(dir.path().join("w.yaml"), config).unwrap();
    std::fs::write(dir.path().join("pod.yaml"), pod).unwrap();
    std::fs::write(
        dir.path().join("claim.yaml"),
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: in-absent-class\nspec:\n  accessModes: [ReadWriteOnce]\n  storageClassName: absent\n  resources:\n    requests:\n      storage: 1Gi\n",
    )
    .unwrap();
    let cfg = workload::load(&dir.path().join("w.yaml")).unwrap();
    let opts = RunOptions {
        label_filter: Some("integration-test".into()),
        timeout: Duration::from_secs(2),
        keep_going: true,
        ..RunOptions::default()
    };
    match &run_config(&cfg, &opts).unwrap()[0].outcome {
        Outcome::Failed(why) => why.clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_pod_naming_a_missing_claim_waits_with_kubes_message() {
    let why = pending_message("nowhere", "");
    assert!(why.contains("rejected by: 1 × VolumeRestrictions"), "{why}");
    assert!(
        why.contains(r#"persistentvolumeclaim "nowhere" not found"#),
        "{why}"
    );
}

#[test]
fn a_claim_naming_a_missing_class_waits_as_an_unbound_immediate_claim() {
    let ops = "  - opcode: createAny\n    namespace: ns\n    templatePath: claim.yaml";
    let why = pending_message("in-absent-class", ops);
    assert!(why.contains("rejected by: 1 × VolumeBinding"), "{why}");
    assert!(
        why.contains("pod has unbound immediate PersistentVolumeClaims"),
        "{why}"
    );
}
