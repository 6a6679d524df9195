//! Upstream's two file layouts: the split one (`<topic>/performance-config.yaml`, paths
//! relative to the topic folder) and the old single-file one (`config/performance-config.yaml`
//! run from the scheduler_perf folder, paths written as `config/...`).

use tidegate_bench::output::results::Outcome;
use tidegate_bench::run::{RunOptions, run_config};
use tidegate_bench::workload;

const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  generateName: pod-\nspec:\n  containers:\n  - name: c\n    image: pause\n";

fn cfg(template: &str) -> String {
    format!(
        "- name: Basic\n  defaultPodTemplatePath: {template}\n  workloadTemplate:\n  - opcode: createNodes\n    count: 2\n  - opcode: createPods\n    count: 3\n    collectMetrics: true\n  workloads:\n  - name: small\n    labels: [integration-test]\n"
    )
}

fn run(path: &std::path::Path) -> u64 {
    let cfg = workload::load(path).unwrap_or_else(|e| panic!("{e}"));
    let opts = RunOptions {
        label_filter: Some("integration-test".into()),
        threads: Some(1),
        ..RunOptions::default()
    };
    let r = run_config(&cfg, &opts).unwrap();
    match &r[0].outcome {
        Outcome::Ran(res) => res.summary.bound,
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_old_config_layout_resolves_paths_from_the_folder_above() {
    // provenance: test/integration/scheduler_perf/config/performance-config.yaml (kube <= 1.31),
    // whose paths read `config/pod-default.yaml`.
    let root = std::env::temp_dir().join(format!("tidegate-layout-{}", std::process::id()));
    let dir = root.join("config");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("pod-default.yaml"), POD).unwrap();
    std::fs::write(
        dir.join("performance-config.yaml"),
        cfg("config/pod-default.yaml"),
    )
    .unwrap();
    assert_eq!(run(&dir.join("performance-config.yaml")), 3);
    // The split layout: relative to the config's own folder, which wins when both exist.
    std::fs::write(dir.join("split.yaml"), cfg("pod-default.yaml")).unwrap();
    assert_eq!(run(&dir.join("split.yaml")), 3);
    // Neither folder has it: one error line naming both rules.
    std::fs::write(dir.join("missing.yaml"), cfg("config/nope.yaml")).unwrap();
    let e = workload::load(&dir.join("missing.yaml"))
        .and_then(|c| {
            tidegate_bench::run::ops::resolve_ops(
                &c,
                &c.test_cases[0],
                &c.test_cases[0].workloads[0],
            )
            .map(|_| c)
        })
        .expect_err("a missing template is an error");
    assert!(e.to_string().contains("no such file"), "{e}");
    std::fs::remove_dir_all(&root).ok();
}
