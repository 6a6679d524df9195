//! The library prints and writes what `tidegate run` does: the same workloads run through
//! the binary and through `run::run_config_to` with an in-memory sink give the same table,
//! the same failures on the error stream, the same exit status and the same files. The
//! virtual clock makes placements, pods and throughput deterministic; what real time or the
//! process measures (extension-point durations, memory) is masked.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tidegate_bench::output::sink::{OutputOptions, Sink};
use tidegate_bench::run::pace::ClockMode;
use tidegate_bench::run::{self, RunOptions};

const CONFIG: &str = "\
- name: T
  labels: [performance]
  workloadTemplate:
  - opcode: createNodes
    countParam: $nodes
  - opcode: createPods
    countParam: $pods
    podTemplatePath: pod.yaml
    collectMetrics: true
  workloads:
  - name: small
    params: {nodes: 3, pods: 30}
  - name: below
    params: {nodes: 2, pods: 4}
    threshold: 1000000000000
";

const POD: &str = "\
apiVersion: v1
kind: Pod
metadata:
  generateName: p-
spec:
  containers:
  - name: c
    image: pause
    resources:
      requests:
        cpu: 100m
";

/// The output files of one run, under `dir`.
fn outputs(dir: &Path) -> OutputOptions {
    OutputOptions {
        print: true,
        data_items_dir: Some(dir.join("items")),
        placements: Some(dir.join("placements.jsonl")),
        dump_pods: Some(dir.join("pods.jsonl")),
        prometheus: Some(dir.join("metrics.prom")),
        flamegraph: None,
    }
}

/// A writer the test reads afterwards.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Shared {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

/// Stdout with what real time and the process measure masked: the PreEnqueue p90 column,
/// the peak RSS line's figures, and the folder the data items went to.
fn mask_stdout(s: &str, dir: &Path) -> String {
    s.lines()
        .map(|l| {
            let l = l.replace(&dir.display().to_string(), "DIR");
            if l.starts_with("memory: peak RSS ") {
                // Which workload peaked, and how high, is the process's to say.
                return "memory: peak RSS N MB (W)".into();
            }
            if l.starts_with("data items: ") {
                // The file's name holds the second the run started.
                return l.rsplit_once('_').unwrap().0.to_string();
            }
            let words: Vec<&str> = l.split_whitespace().collect();
            match words.iter().position(|w| ["ns", "µs", "ms"].contains(w)) {
                Some(i) if i > 0 => {
                    // The value and its unit: a duration.
                    let mut w: Vec<&str> = words.clone();
                    w.splice(i - 1..=i, ["T"]);
                    w.join(" ")
                }
                _ => words.join(" "),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Per-plugin durations: recorded for a random tenth of the cycles, as kube samples them,
/// so which plugins show up differs from run to run.
const SAMPLED: &str = "scheduler_plugin_execution_duration_seconds";

/// The data items file: its name without the time, the run's provenance, the labels of
/// every item, and the deterministic items' data (throughput, counts) and series.
fn data_items(dir: &Path) -> (String, serde_json::Value, BTreeSet<String>, Vec<String>) {
    let files: Vec<PathBuf> = std::fs::read_dir(dir.join("items"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0].file_name().unwrap().to_string_lossy().to_string();
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&files[0]).unwrap()).unwrap();
    let items = doc["dataItems"].as_array().unwrap();
    // Without the sampled items, and without the "not applicable" fill of labels only they
    // may bring (`plugin`).
    let labels = items
        .iter()
        .filter(|i| i["labels"]["Metric"] != SAMPLED)
        .map(|i| {
            let mut l = i["labels"].as_object().unwrap().clone();
            l.retain(|_, v| v != "not applicable");
            serde_json::Value::from(l).to_string()
        })
        .collect();
    let fixed = items
        .iter()
        .filter(|i| {
            let m = i["labels"]["Metric"].as_str().unwrap_or("");
            m == "SchedulingThroughput" || m == "tidegate_summary"
        })
        .map(|i| i["data"].to_string())
        .collect();
    (
        name.rsplit_once('_').unwrap().0.to_string(),
        doc["tidegateRun"].clone(),
        labels,
        fixed,
    )
}

/// The Prometheus file's series without their values (durations are real time), but for
/// the sampled per-plugin durations.
fn series(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("metrics.prom"))
        .unwrap()
        .lines()
        .filter(|l| !l.contains(SAMPLED))
        .map(|l| match l.starts_with('#') {
            true => l.to_string(),
            false => l.rsplit_once(' ').map_or(l, |(s, _)| s).to_string(),
        })
        .collect()
}

#[test]
fn the_library_prints_and_writes_what_the_cli_does() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.yaml");
    std::fs::write(&config, CONFIG).unwrap();
    std::fs::write(dir.path().join("pod.yaml"), POD).unwrap();
    let (cli, lib) = (dir.path().join("cli"), dir.path().join("lib"));

    let o = std::process::Command::new(env!("CARGO_BIN_EXE_tidegate"))
        .arg("run")
        .arg(&config)
        .args([
            "--clock",
            "virtual",
            "--seed",
            "7",
            "--threads",
            "1",
            "--no-pin",
        ])
        .arg("--data-items-dir")
        .arg(cli.join("items"))
        .arg("--placements")
        .arg(cli.join("placements.jsonl"))
        .arg("--dump-pods")
        .arg(cli.join("pods.jsonl"))
        .arg("--prometheus")
        .arg(cli.join("metrics.prom"))
        .output()
        .unwrap();

    let cfg = tidegate_bench::workload::load(&config).unwrap();
    let opts = RunOptions {
        seed: 7,
        threads: Some(1),
        pin_threads: tidegate_engine::PinThreads::Never,
        keep_going: true,
        clock: ClockMode::Virtual {
            attempt_cost: Duration::from_micros(100),
        },
        ..RunOptions::default()
    };
    let (out, err) = (Shared::default(), Shared::default());
    let mut sink = Sink::new(outputs(&lib), Box::new(out.clone()), Box::new(err.clone()));
    let reports = run::run_config_to(&cfg, &opts, &mut sink).unwrap();

    assert_eq!(reports.len(), 2);
    assert_eq!(o.status.code(), Some(i32::from(sink.exit_status())));
    assert_eq!(
        sink.exit_status(),
        1,
        "the second workload is below its threshold"
    );
    let cli_out = mask_stdout(&String::from_utf8_lossy(&o.stdout), &cli);
    let lib_out = mask_stdout(&out.text(), &lib);
    assert_eq!(cli_out, lib_out);
    for expected in [
        "T/small",
        "T/below",
        "BELOW THRESHOLD",
        "placements digest: ",
        "memory: peak RSS N MB (W)",
        "data items: DIR/items/BenchmarkPerfScheduling_benchmark",
    ] {
        assert!(lib_out.contains(expected), "{expected:?} in\n{lib_out}");
    }
    assert_eq!(String::from_utf8_lossy(&o.stderr), err.text());
    assert!(err.text().starts_with("threshold: "), "{}", err.text());

    for file in ["placements.jsonl", "pods.jsonl"] {
        let (a, b) = (
            std::fs::read_to_string(cli.join(file)).unwrap(),
            std::fs::read_to_string(lib.join(file)).unwrap(),
        );
        assert!(a.lines().count() > 30, "{file}: {a}");
        assert_eq!(a, b, "{file}");
    }
    let items = data_items(&lib);
    assert!(items.1["seed"] == 7 && items.3.len() == 4, "{items:?}");
    assert_eq!(data_items(&cli), items);
    assert_eq!(series(&cli), series(&lib));
}
