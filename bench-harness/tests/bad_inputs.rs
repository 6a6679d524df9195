//! The bad-input catalogue (`tests/bad_inputs/`, see its README): every case must fail with
//! exactly its one-line message, exit code 2, no panic, and no output file.

use std::path::{Path, PathBuf};
use std::process::Command;

fn catalogue() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/bad_inputs")
}

/// Every file in `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(files_under(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn every_bad_input_gives_its_one_line_message_exit_2_and_no_output() {
    let dir = catalogue();
    let mut cases: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            name.strip_suffix(".yaml").map(str::to_string)
        })
        .collect();
    cases.sort();
    assert!(cases.len() >= 13, "the catalogue lost cases: {cases:?}");
    let mut failures = Vec::new();
    for case in &cases {
        let want = std::fs::read_to_string(dir.join(format!("{case}.expected")))
            .unwrap_or_else(|_| panic!("{case}.yaml has no {case}.expected"));
        let out = tempfile::tempdir().unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_tidegate"))
            .current_dir(&dir)
            .arg("run")
            .arg(format!("{case}.yaml"))
            .args(["--label-filter", "", "--no-progress", "--timeout", "60"])
            .arg("--data-items-dir")
            .arg(out.path().join("items"))
            .arg("--prometheus")
            .arg(out.path().join("metrics.prom"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        let written = files_under(out.path());
        let want_line = format!("error: {}\n", want.trim_end_matches('\n'));
        if o.status.code() != Some(2) || stderr != want_line || !written.is_empty() {
            failures.push(format!(
                "{case}: exit {:?}, wrote {written:?}\n   got: {stderr}  want: {want_line}",
                o.status.code()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A test case that `--label-filter` leaves out is still decoded as upstream decodes the
/// whole file (`op.UnmarshalJSON` in test/integration/scheduler_perf/scheduler_perf.go: an
/// unknown opcode, an unknown field of a known op): the run fails on it with its one line,
/// exit 2, and no table. What depends on a workload's params is checked only for workloads
/// that run, as upstream checks it then: an undefined param outside the filter is no error.
#[test]
fn errors_outside_the_label_filter_are_still_reported() {
    let good = "- name: Good\n  labels: [fast]\n  workloadTemplate:\n  - opcode: createNodes\n    count: 1\n  - opcode: createPods\n    count: 1\n    collectMetrics: true\n  workloads:\n  - name: one\n";
    let bad = |op: &str| {
        format!(
            "- name: Bad\n  labels: [slow]\n  workloadTemplate:\n{op}  - opcode: createPods\n    count: 1\n    collectMetrics: true\n  workloads:\n  - name: two\n"
        )
    };
    let cases = [
        (
            bad("  - opcode: createNodez\n    count: 1\n"),
            Some("c.yaml:14:13: Bad.workloadTemplate[0].opcode: unknown op \"createNodez\""),
        ),
        (
            bad("  - opcode: createNodes\n    count: 1\n    nodeCount: 3\n"),
            Some("c.yaml:16:5: Bad.workloadTemplate[0].nodeCount: unknown field \"nodeCount\""),
        ),
        (
            bad("  - opcode: createNodes\n    countParam: $undefined\n"),
            None,
        ),
    ];
    for (bad, want) in cases {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("c.yaml"), format!("{good}{bad}")).unwrap();
        for cmd in [
            vec!["run", "c.yaml", "--label-filter", "fast", "--no-progress"],
            vec!["list", "c.yaml", "--label-filter", "fast"],
        ] {
            let o = Command::new(env!("CARGO_BIN_EXE_tidegate"))
                .current_dir(dir.path())
                .args(&cmd)
                .output()
                .unwrap();
            let (stdout, stderr) = (
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr),
            );
            match want {
                Some(want) => {
                    assert_eq!(o.status.code(), Some(2), "{cmd:?}: {stderr}");
                    assert!(
                        stderr.starts_with(&format!("error: {want}")),
                        "{cmd:?}: {stderr}"
                    );
                    assert_eq!(stderr.lines().count(), 1, "{cmd:?}: {stderr}");
                    assert!(
                        stdout.is_empty(),
                        "{cmd:?}: output before the error: {stdout}"
                    );
                }
                None => {
                    assert!(o.status.success(), "{cmd:?}: {stderr}");
                    assert!(stdout.contains("Good/one"), "{cmd:?}: {stdout}");
                }
            }
        }
    }
}
