//! kube's queue dumper: SIGUSR2 to a running `tidegate run` writes the queue's state to stderr
//! and the run goes on to its usual results.
#![cfg(unix)]

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CONFIG: &str = r#"
- name: Dump
  workloadTemplate:
  - opcode: createNodes
    count: 2
  - opcode: createPods
    count: 40
    namespace: held
    podTemplatePath: pod-gated.yaml
    skipWaitToCompletion: true
  - opcode: sleep
    duration: 6s
  - opcode: createPods
    count: 5
    collectMetrics: true
  workloads:
  - name: Sleepy
    labels: [integration-test]
"#;

const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  generateName: held-\nspec:\n  schedulingGates:\n  - name: example.com/hold\n  containers:\n  - name: pause\n    image: pause\n";

#[test]
fn sigusr2_dumps_the_queue_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("gated.yaml"), CONFIG).unwrap();
    std::fs::write(dir.path().join("pod-gated.yaml"), POD).unwrap();
    let err_path = dir.path().join("stderr.txt");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tidegate"))
        .args([
            "run",
            "gated.yaml",
            "--label-filter",
            "integration-test",
            "--no-progress",
        ])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .expect("tidegate starts");
    // The dumper is installed before the config is read; signal until a dump shows all 40
    // held pods gated (the first ones may come while they are being created).
    std::thread::sleep(Duration::from_millis(700));
    let start = Instant::now();
    loop {
        let ok = Command::new("kill")
            .args(["-USR2", &child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "the run ended before it was signalled");
        std::thread::sleep(Duration::from_millis(300));
        let err = std::fs::read_to_string(&err_path).unwrap();
        if err.contains("gated:40") {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "no dump with the gated pods: {err}"
        );
    }
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let status = child.wait().unwrap();
    let err = std::fs::read_to_string(&err_path).unwrap();
    assert!(status.success(), "{status:?}\n{out}\n{err}");
    assert!(
        err.contains("Dump of scheduling queue (workload Dump/Sleepy):"),
        "{err}"
    );
    assert!(
        err.contains("activeQ:0; backoffQ:0; unschedulablePods:0; gated:40"),
        "{err}"
    );
    assert!(
        err.contains("gated pods per gate: example.com/hold=40"),
        "{err}"
    );
    assert!(err.contains("longest waiting: gated held/held-"), "{err}");
    // The run finished as without the signal: 5 bound, the 40 held pods still pending.
    let row = out
        .lines()
        .find(|l| l.starts_with("Dump/Sleepy "))
        .unwrap_or_else(|| panic!("no result row:\n{out}"));
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cols[cols.len() - 4..], &["5", "40", "0", "ok"], "{row}");
}
