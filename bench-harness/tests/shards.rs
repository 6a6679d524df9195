//! A sweep beyond one machine (`tidegate run --shard I/N`, `tidegate merge`): N shards run
//! as N processes at once, and their merged data-items file holds exactly the workloads of
//! one unsharded run, in its order; a gap, an overlap, shards of another sweep and a file
//! that is no shard's are refused with one line, exit 2 and nothing written.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tidegate"))
}

fn config() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../perf-data/workloads/volumes.yaml")
}

/// `tidegate run` of the integration-test workloads of `volumes.yaml` into `dir`, with
/// `extra` flags, started (not waited for).
fn start(dir: &Path, extra: &[&str]) -> std::process::Child {
    bin()
        .arg("run")
        .arg(config())
        .args(["--label-filter", "integration-test", "--no-progress"])
        .args(extra)
        .arg("--data-items-dir")
        .arg(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

fn only_file(dir: &Path) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The workloads of a data-items file, in the order their items come.
fn workloads(doc: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in doc["dataItems"].as_array().unwrap() {
        let name = item["labels"]["Name"].as_str().unwrap();
        let w: Vec<&str> = name.split('/').skip(1).take(2).collect();
        let w = w.join("/");
        if out.last() != Some(&w) {
            out.push(w);
        }
    }
    out
}

fn merge(files: &[PathBuf], out: &Path) -> (i32, String) {
    let o = bin()
        .arg("merge")
        .args(files)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

#[test]
fn shards_run_as_processes_merge_into_the_unsharded_runs_workloads() {
    let tmp = tempfile::tempdir().unwrap();
    let n = 3;
    let dirs: Vec<PathBuf> = (1..=n).map(|i| tmp.path().join(format!("s{i}"))).collect();
    let mut children: Vec<_> = dirs
        .iter()
        .enumerate()
        .map(|(i, d)| start(d, &["--shard", &format!("{}/{n}", i + 1)]))
        .collect();
    let whole = tmp.path().join("whole");
    let mut one = start(&whole, &[]);
    for c in &mut children {
        assert!(c.wait().unwrap().success());
    }
    assert!(one.wait().unwrap().success());

    let shards: Vec<PathBuf> = dirs.iter().map(|d| only_file(d)).collect();
    // Each shard ran its round-robin share, and says so.
    let selected: Vec<String> = read(&shards[0])["tidegateRun"]["shard"]["selected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert!(selected.len() >= n, "{selected:?}");
    for (i, s) in shards.iter().enumerate() {
        let doc = read(s);
        assert_eq!(doc["tidegateRun"]["shard"]["index"], i + 1);
        assert_eq!(doc["tidegateRun"]["shard"]["count"], n);
        let share: Vec<String> = selected.iter().skip(i).step_by(n).cloned().collect();
        assert_eq!(workloads(&doc), share, "shard {}", i + 1);
    }

    let merged = tmp.path().join("merged.json");
    let mut reversed = shards.clone();
    reversed.reverse();
    let (code, err) = merge(&reversed, &merged);
    assert_eq!(code, 0, "{err}");
    let m = read(&merged);
    let w = read(&only_file(&whole));
    assert_eq!(workloads(&m), workloads(&w));
    assert_eq!(workloads(&m), selected);
    assert_eq!(m["tidegateRun"]["mergedShards"], n);
    assert!(m["tidegateRun"].get("shard").is_none());

    // The merged file reads as any results file.
    let html = tmp.path().join("r.html");
    let o = bin()
        .arg("report")
        .arg(&merged)
        .arg("-o")
        .arg(&html)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = bin()
        .arg("compare")
        .arg(&merged)
        .arg(only_file(&whole))
        .arg("--max-regression")
        .arg("1000%")
        .output()
        .unwrap();
    assert_ne!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    // A gap, an overlap, another sweep's shard, a file that is no shard's: refused, one line,
    // exit 2, nothing written.
    let bad = tmp.path().join("bad.json");
    let mut other = read(&shards[1]);
    other["tidegateRun"]["seed"] = Value::from(7);
    let other_path = tmp.path().join("other.json");
    std::fs::write(&other_path, other.to_string()).unwrap();
    for (files, says) in [
        (
            vec![shards[0].clone(), shards[2].clone()],
            "shard 2/3 missing",
        ),
        (
            vec![
                shards[0].clone(),
                shards[1].clone(),
                shards[1].clone(),
                shards[2].clone(),
            ],
            "shard 2/3 given twice",
        ),
        (
            vec![shards[0].clone(), other_path.clone(), shards[2].clone()],
            "seed 7",
        ),
        (
            vec![shards[0].clone(), only_file(&whole)],
            "not a shard's results",
        ),
    ] {
        let (code, err) = merge(&files, &bad);
        assert_eq!(code, 2, "{says}: {err}");
        assert!(err.contains(says), "{says}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(!bad.exists());
    }
}

#[test]
fn a_bad_shard_is_bad_input() {
    for s in ["0/3", "4/3", "2", "x/y"] {
        let o = bin()
            .arg("run")
            .arg(config())
            .args(["--shard", s])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{s}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("--shard"),
            "{s}"
        );
    }
}
