//! Nothing lost on interrupt: each workload's row is printed and the data
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

/// One run, interrupted after the first workload's row is out. Returns whether the signal
/// reached the second workload while it ran (the case under test); a signal that lands in the
/// gap between two workloads (the machine stalled the harness for the whole pause) stops the
/// run before the next one starts, which must be just as clean.
fn interrupt_once(signal: &str, code: i32) -> bool {
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
    // Give the harness time to start the sleeping workload (it starts within microseconds of
    // the row; the pause only matters on a stalled machine).
    std::thread::sleep(std::time::Duration::from_millis(300));
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
    let hit_sleepy = seen.contains("Two/Sleepy");
    if hit_sleepy {
        assert!(
            seen.contains(&format!("FAILED: interrupted by {name}")),
            "{seen}"
        );
    }
    assert!(
        !seen.contains("Two/Never"),
        "a workload started after the signal:\n{seen}"
    );
    assert!(err.contains(&format!("stopped by {name}")), "{err}");
    let says = if hit_sleepy {
        "the interrupted one marked FAILED"
    } else {
        "the signal came between two workloads"
    };
    assert!(err.contains(says), "{err}");
    // The data items still hold the finished workload, and nothing half-written.
    let text = std::fs::read_to_string(&file).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).expect("complete JSON");
    assert!(doc["dataItems"].as_array().is_some_and(|a| !a.is_empty()));
    assert!(
        text.contains("Two/Quick") && !text.contains("Two/Sleepy"),
        "{text}"
    );
    hit_sleepy
}

/// Interrupts until the signal lands inside the second workload (at most three runs).
fn interrupt_with(signal: &str, code: i32) {
    let hit = (0..3).any(|_| interrupt_once(signal, code));
    assert!(
        hit,
        "three runs in a row were interrupted between workloads, never inside one"
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
