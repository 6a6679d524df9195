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
