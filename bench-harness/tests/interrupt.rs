//! Nothing lost on interrupt (issue 24, item 2): each workload's row is printed and the data
//! items rewritten as soon as it ends; SIGINT/SIGTERM stop the run at the next safe point,
//! keep what finished, mark the interrupted workload and exit 130/143.
#![cfg(unix)]

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

const CONFIG: &str = r#"
- name: Two
  workloadTemplate:
  - opcode: createNodes
    count: 2
  - opcode: createPods
    count: 10
    collectMetrics: true
  - opcode: sleep
    durationParam: $nap
  workloads:
  - name: Quick
    labels: [integration-test]
    params:
      nap: 10ms
  - name: Sleepy
    labels: [integration-test]
    params:
      nap: 60s
  - name: Never
    labels: [integration-test]
    params:
      nap: 10ms
"#;

fn interrupt_with(signal: &str, code: i32) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("two.yaml"), CONFIG).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_tidegate"))
        .args([
            "run",
            "two.yaml",
            "--label-filter",
            "integration-test",
            "--no-progress",
            "--data-items-dir",
            "items",
        ])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tidegate starts");
    // The first workload's row comes out while the second one is still sleeping.
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "stdout ended: {seen}"
        );
        seen.push_str(&line);
        if line.starts_with("Two/Quick ") {
            break;
        }
    }
    // Its data items are on disk already.
    let items = dir.path().join("items");
    let file = std::fs::read_dir(&items)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("Two/Quick"), "{text}");
    assert!(!text.contains("Two/Sleepy"), "{text}");
    let ok = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    out.read_to_string(&mut seen).unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(code),
        "{status:?} {:?}\n{seen}\n{err}",
        status.signal()
    );
    let name = if code == 130 { "SIGINT" } else { "SIGTERM" };
    assert!(
        seen.contains("Two/Sleepy") && seen.contains(&format!("FAILED: interrupted by {name}")),
        "{seen}"
    );
    assert!(
        !seen.contains("Two/Never"),
        "a workload started after the signal:\n{seen}"
    );
    assert!(err.contains(&format!("stopped by {name}")), "{err}");
    // The data items still hold the finished workload, and nothing half-written.
    let text = std::fs::read_to_string(&file).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).expect("complete JSON");
    assert!(doc["dataItems"].as_array().is_some_and(|a| !a.is_empty()));
    assert!(
        text.contains("Two/Quick") && !text.contains("Two/Sleepy"),
        "{text}"
    );
}

#[test]
fn sigint_keeps_the_finished_workloads_and_exits_130() {
    interrupt_with("-INT", 130);
}

#[test]
fn sigterm_keeps_the_finished_workloads_and_exits_143() {
    interrupt_with("-TERM", 143);
}
