//! The `tidegate` binary: bad input gives one line naming file, line:column and field, exit
//! code 2, and no output file.

use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tidegate"))
}

fn workloads() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../perf-data/workloads")
}

/// Writes `files` into a fresh folder, runs `tidegate run <dir>/config.yaml --data-items-dir
/// <dir>/out`, and returns (exit code, stderr, whether out/ has files).
fn run_bad(files: &[(&str, &str)]) -> (i32, String, bool) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let out = dir.path().join("out");
    let o = bin()
        .arg("run")
        .arg(dir.path().join("config.yaml"))
        .arg("--label-filter")
        .arg("")
        .arg("--data-items-dir")
        .arg(&out)
        .output()
        .unwrap();
    let wrote = out.exists() && std::fs::read_dir(&out).unwrap().next().is_some();
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    let stderr = stderr.replace(&dir.path().display().to_string(), "DIR");
    (o.status.code().unwrap_or(-1), stderr, wrote)
}

const GOOD: &str = "\
- name: T
  workloadTemplate:
  - opcode: createNodes
    count: 2
  - opcode: createPods
    count: 3
    podTemplatePath: pod.yaml
    collectMetrics: true
  workloads:
  - name: w
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

#[test]
fn good_input_writes_data_items() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.yaml"), GOOD).unwrap();
    std::fs::write(dir.path().join("pod.yaml"), POD).unwrap();
    let out = dir.path().join("out");
    let place = dir.path().join("placements.jsonl");
    let o = bin()
        .args(["run"])
        .arg(dir.path().join("config.yaml"))
        .args(["--workload", "T/w", "--data-items-dir"])
        .arg(&out)
        .arg("--placements")
        .arg(&place)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let files: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1);
    let name = files[0].file_name().unwrap().to_str().unwrap().to_string();
    assert!(
        name.starts_with("BenchmarkPerfScheduling_benchmark_"),
        "{name}"
    );
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&files[0]).unwrap()).unwrap();
    assert_eq!(doc["version"], "v1");
    let items = doc["dataItems"].as_array().unwrap();
    let metric = |m: &str| items.iter().filter(|i| i["labels"]["Metric"] == m).count();
    assert_eq!(metric("SchedulingThroughput"), 1);
    assert_eq!(metric("tidegate_summary"), 1);
    let ep = |p: &str, est: &str| {
        items.iter().any(|i| {
            i["labels"]["Metric"] == "scheduler_framework_extension_point_duration_seconds"
                && i["labels"]["extension_point"] == p
                && i["labels"]["estimator"] == est
                && i["unit"] == "ms"
                && i["data"]["Perc90"].is_number()
        })
    };
    for p in [
        "PreEnqueue",
        "PreFilter",
        "Filter",
        "PreScore",
        "Score",
        "Reserve",
        "Permit",
        "PreBindPreFlight",
        "PreBind",
        "Bind",
        "PostBind",
    ] {
        assert!(ep(p, "exact") && ep(p, "buckets"), "extension point {p}");
    }
    // Per-plugin durations are sampled (10 % of cycles and PreEnqueue runs, as kube's
    // pluginMetricsSamplePercent), so a three-pod run may hold none; any it holds name a
    // plugin and a known extension point.
    for i in items
        .iter()
        .filter(|i| i["labels"]["Metric"] == "scheduler_plugin_execution_duration_seconds")
    {
        assert!(
            i["labels"]["plugin"]
                .as_str()
                .is_some_and(|p| !p.is_empty())
        );
        let point = i["labels"]["extension_point"].as_str().unwrap_or("");
        assert!(
            [
                "PreEnqueue",
                "PreFilter",
                "PostFilter",
                "PreScore",
                "Reserve",
                "Permit"
            ]
            .into_iter()
            .chain(["PreBindPreFlight", "PreBind", "Bind", "PostBind"])
            .any(|p| p == point),
            "{point}"
        );
    }
    // Every item has every label key.
    let keys = |i: &serde_json::Value| i["labels"].as_object().unwrap().len();
    assert!(items.iter().all(|i| keys(i) == keys(&items[0])));
    let summary = items
        .iter()
        .find(|i| i["labels"]["Metric"] == "tidegate_summary")
        .unwrap();
    assert_eq!(summary["data"]["created"], 3.0);
    assert_eq!(summary["data"]["bound"], 3.0);
    let gauge = |q: &str| {
        items
            .iter()
            .find(|i| {
                i["labels"]["Metric"] == "scheduler_pending_pods" && i["labels"]["queue"] == q
            })
            .map(|i| i["data"]["Value"].as_f64().unwrap())
    };
    assert_eq!(gauge("active"), Some(0.0));
    let incoming: f64 = items
        .iter()
        .filter(|i| {
            i["labels"]["Metric"] == "scheduler_queue_incoming_pods_total"
                && i["labels"]["queue"] == "active"
                && i["labels"]["event"] == "UnscheduledPodAdd"
        })
        .map(|i| i["data"]["Value"].as_f64().unwrap())
        .sum();
    assert_eq!(incoming, 3.0, "the 3 measured pods entered activeQ");
    assert_eq!(gauge("gated"), Some(0.0));
    // The provenance first, then one line per bound pod.
    let lines = std::fs::read_to_string(&place).unwrap();
    assert_eq!(lines.lines().count(), 4);
    let json: Vec<serde_json::Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let run = &json[0]["tidegateRun"];
    assert_eq!(run["version"], env!("CARGO_PKG_VERSION"));
    assert!(
        run["commit"].is_string() && run["cpus"].is_number(),
        "{run}"
    );
    assert_eq!(run["seed"], 0, "the default seed");
    assert_eq!(json[1]["namespace"], "namespace-1");
}

#[test]
fn readme_default_workload_parses_and_lists() {
    let o = bin()
        .arg("run")
        .arg(workloads().join("default.yaml"))
        .args(["--workload", "SchedulingBasic/5Nodes"])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("SchedulingBasic/5Nodes"));
}

#[test]
fn an_invalid_update_is_bad_input() {
    let config = "\
- name: T
  workloadTemplate:
  - opcode: createNodes
    count: 2
  - opcode: createPods
    count: 3
    namespace: ns
    podTemplatePath: plain.yaml
  - opcode: updateAny
    count: 3
    namespace: ns
    templatePath: gated.yaml
  - opcode: createPods
    count: 1
    collectMetrics: true
  workloads:
  - name: w
";
    let plain = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p-{{ .Index }}\nspec:\n  containers:\n  - name: c\n    image: pause\n";
    let gated = plain.replace("spec:\n", "spec:\n  schedulingGates:\n  - name: late\n");
    let (code, stderr, wrote) = run_bad(&[
        ("config.yaml", config),
        ("plain.yaml", plain),
        ("gated.yaml", &gated),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(!wrote);
    assert_eq!(
        stderr.trim_end(),
        "error: DIR/gated.yaml:7:11: spec.schedulingGates[0].name: Forbidden: only deletion is allowed, but found new scheduling gate 'late' (updating Pod \"p-0\")"
    );
}

#[test]
fn a_violated_threshold_exits_1_and_still_writes_the_results() {
    let dir = tempfile::tempdir().unwrap();
    let config = format!("{GOOD}    threshold: 1000000000000\n");
    std::fs::write(dir.path().join("config.yaml"), config).unwrap();
    std::fs::write(dir.path().join("pod.yaml"), POD).unwrap();
    let out = dir.path().join("out");
    let o = bin()
        .arg("run")
        .arg(dir.path().join("config.yaml"))
        .args(["--workload", "T/w", "--data-items-dir"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("expected SchedulingThroughput Average to be higher"),
        "{stderr}"
    );
    let file = std::fs::read_dir(&out)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    let tp = doc["dataItems"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["labels"]["Metric"] == "SchedulingThroughput")
        .unwrap()
        .clone();
    assert_eq!(tp["data"]["AverageThreshold"], 1e12);
}

/// A one-node cluster with room for one pod, four pods, and a scheduler config. Returns (exit
/// code, stderr, the `tidegate_summary` data of the run if it wrote one).
fn with_scheduler_config(sched: &str) -> (i32, String, Option<serde_json::Value>) {
    let config = "\
- name: T
  schedulerConfigPath: sched.yaml
  workloadTemplate:
  - opcode: createNodes
    count: 1
    nodeTemplatePath: node.yaml
  - opcode: createPods
    count: 1
    podTemplatePath: pod.yaml
    collectMetrics: true
  - opcode: createPods
    count: 3
    podTemplatePath: pod.yaml
    skipWaitToCompletion: true
  - opcode: barrier
    stageRequirement: Attempted
  workloads:
  - name: w
";
    let node = "\
apiVersion: v1
kind: Node
metadata:
  generateName: n-
status:
  capacity:
    cpu: \"4\"
    memory: 8Gi
    pods: \"1\"
";
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("config.yaml", config),
        ("node.yaml", node),
        ("pod.yaml", POD),
        ("sched.yaml", sched),
    ] {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let out = dir.path().join("out");
    let o = bin()
        .arg("run")
        .arg(dir.path().join("config.yaml"))
        .args(["--workload", "T/w", "--data-items-dir"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr =
        String::from_utf8_lossy(&o.stderr).replace(&dir.path().display().to_string(), "DIR");
    let summary = std::fs::read_dir(&out).ok().and_then(|mut d| {
        let f = d.next()?.ok()?.path();
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(f).ok()?).ok()?;
        v["dataItems"]
            .as_array()?
            .iter()
            .find(|i| i["labels"]["Metric"] == "tidegate_summary")
            .map(|i| i["data"].clone())
    });
    (o.status.code().unwrap_or(-1), stderr, summary)
}

#[test]
fn scheduler_config_errors_name_file_line_and_field() {
    let (code, stderr, summary) = with_scheduler_config(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: default-scheduler\n  percentageOfNodesToScore: 150\n",
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(summary.is_none());
    assert_eq!(
        stderr.trim_end(),
        "error: DIR/sched.yaml:5:29: profiles[0].percentageOfNodesToScore: Invalid value: 150: not in valid range [0-100]"
    );
    let (code, stderr, summary) = with_scheduler_config(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    filter:\n      enabled:\n      - name: NoSuchPlugin\n",
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(summary.is_none());
    assert!(
        stderr.starts_with(
            "error: DIR/sched.yaml:7:15: profiles[0].plugins.filter.enabled[0].name: plugin \"NoSuchPlugin\" does not exist"
        ),
        "{stderr}"
    );
}

#[test]
fn scheduler_config_changes_what_the_scheduler_does() {
    // The node holds one pod. With the default plugins one of the four pods binds; with
    // NodeResourcesFit's Filter disabled nothing checks the pod limit and all four bind.
    let bound = |sched: &str| {
        let (code, stderr, summary) = with_scheduler_config(sched);
        assert_eq!(code, 0, "{stderr}");
        let s = summary.expect("summary item");
        s["bound"].as_f64().unwrap_or_else(|| panic!("{s}"))
    };
    let head = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";
    assert_eq!(bound(head), 1.0);
    assert_eq!(
        bound(&format!(
            "{head}profiles:\n- schedulerName: default-scheduler\n  plugins:\n    filter:\n      disabled:\n      - name: NodeResourcesFit\n"
        )),
        4.0
    );
}

fn digest_of(stdout: &str) -> String {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("placements digest: "))
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .unwrap_or_else(|| panic!("no digest in {stdout}"))
}

/// The run prints a digest of the sorted pod→node list: the same seed gives the same digest
/// on 1 and 2 threads, another seed another digest.
#[test]
fn placements_digest_depends_on_the_seed_not_the_threads() {
    let digest = |seed: &str, threads: &str| {
        let o = bin()
            .arg("run")
            .arg(workloads().join("default.yaml"))
            .args(["--workload", "SchedulingBasic/500Nodes", "--seed", seed])
            .args(["--threads", threads])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        digest_of(&String::from_utf8_lossy(&o.stdout))
    };
    let a = digest("3", "1");
    assert_eq!(a.len(), 16);
    assert_eq!(a, digest("3", "2"));
    assert_ne!(a, digest("4", "1"));
}

/// `--clock virtual`: the deterministic workload (parallel Filter over 1,100 nodes, churn,
/// preemption) prints the same digest for --threads 1 and 4; a bad attempt cost is one line
/// and exit 2.
#[test]
fn virtual_clock_digest_is_the_same_for_any_thread_count() {
    let run = |threads: &str, cost: &str| {
        bin()
            .arg("run")
            .arg(workloads().join("deterministic.yaml"))
            .args(["--label-filter", "integration-test", "--seed", "11"])
            .args(["--clock", "virtual", "--virtual-attempt-cost", cost])
            .args(["--threads", threads])
            .output()
            .unwrap()
    };
    let digest = |threads: &str| {
        let o = run(threads, "250us");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        digest_of(&String::from_utf8_lossy(&o.stdout))
    };
    assert_eq!(digest("1"), digest("4"));
    let bad = run("1", "fast");
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    // clap's own message in full: the flag, the value, why, and where to look.
    assert!(
        err.starts_with("error: invalid value 'fast' for '--virtual-attempt-cost <DURATION>'"),
        "{err}"
    );
    assert!(err.contains("is not a positive duration"), "{err}");
    assert!(err.contains("For more information, try '--help'."), "{err}");
}

/// The progress bar is for terminals only: with stderr piped a good run writes nothing there.
#[test]
fn no_progress_output_when_stderr_is_not_a_terminal() {
    let o = bin()
        .arg("run")
        .arg(workloads().join("default.yaml"))
        .args(["--workload", "SchedulingBasic/5Nodes"])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert_eq!(String::from_utf8_lossy(&o.stderr), "");
}

/// `tidegate compare`, as benchstat: medians per side, a regression only when significant
/// (Mann-Whitney U; several runs per side) and beyond the limit (exit 1), `~` otherwise
/// (exit 0), a warning with one run on a side, 2 for different workloads; a folder is a side.
#[test]
fn compare_gates_on_significant_changes_and_refuses_different_workloads() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, workload: &str, avg: f64| {
        let doc = serde_json::json!({"version": "v1", "dataItems": [
            {"data": {"Average": avg, "Perc50": avg}, "unit": "pods/s",
             "labels": {"Metric": "SchedulingThroughput",
                        "Name": format!("BenchmarkPerfScheduling/Basic/{workload}/namespace-2"),
                        "SamplingInterval": "1s"}}]});
        let p = dir.path().join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, doc.to_string()).unwrap();
        p
    };
    for (i, v) in [1000.0, 1200.0, 900.0, 1050.0, 950.0].iter().enumerate() {
        write(&format!("base/{i}.json"), "500Nodes", *v);
    }
    for (i, v) in [800.0, 790.0, 810.0, 805.0, 795.0].iter().enumerate() {
        write(&format!("slow/{i}.json"), "500Nodes", *v);
    }
    let one_slow = write("one-slow.json", "500Nodes", 800.0);
    let other = write("other.json", "5000Nodes", 1000.0);
    let base = dir.path().join("base");
    let cmp = |cur: &std::path::Path| {
        bin()
            .arg("compare")
            .arg(&base)
            .arg(cur)
            .args(["--max-regression", "5%"])
            .output()
            .unwrap()
    };
    let o = cmp(&dir.path().join("slow"));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("| 1000 pods/s ± 20% | 800 pods/s ± 1% | 0.800 | -20.00% (p=0.008 n=5+5) | **REGRESSION** |"),
        "{out}"
    );
    assert!(
        out.contains("medians of 5 baseline and 5 current runs"),
        "{out}"
    );
    // One run against five: however slow, not significant; said so on stderr.
    let o = cmp(&one_slow);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("| ~ |") && out.contains("~ (p="), "{out}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("cannot show a significant change"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = cmp(&other);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("different workloads"), "{err}");
    // `--format benchstat`: both sides in Go's benchmark format for `benchstat -col side`,
    // throughput marked better-higher; the verdict (exit 1) is the same.
    let o = bin()
        .arg("compare")
        .arg(&base)
        .arg(dir.path().join("slow"))
        .args(["--format", "benchstat"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("Unit pods/s better=higher\n"), "{out}");
    let sides: Vec<&str> = out.lines().filter(|l| l.starts_with("side: ")).collect();
    assert_eq!(sides, ["side: baseline", "side: current"], "{out}");
    let results: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("BenchmarkPerfScheduling/Basic/500Nodes/namespace-2-1 1 "))
        .collect();
    assert_eq!(results.len(), 10, "{out}");
    assert!(
        results[0].ends_with(" 1000 pods/s 1000 p50-pods/s"),
        "{}",
        results[0]
    );
}

/// Five copies of one baseline against five copies with SchedulingThroughput halved: every
/// run of a side repeats one value, and the change is still a regression (exit 1), not
/// "within the data's resolution".
#[test]
fn compare_equal_runs_a_side_report_a_halved_throughput() {
    let dir = tempfile::tempdir().unwrap();
    let doc = |avg: f64| {
        serde_json::json!({"version": "v1", "dataItems": [
            {"data": {"Average": avg, "Perc50": avg, "Perc90": avg}, "unit": "pods/s",
             "labels": {"Metric": "SchedulingThroughput",
                        "Name": "BenchmarkPerfScheduling/Basic/500Nodes/namespace-2",
                        "SamplingInterval": "1s"}},
            {"data": {"Perc90": 0.00004}, "unit": "ms",
             "labels": {"Metric": "scheduler_framework_extension_point_duration_seconds",
                        "Name": "BenchmarkPerfScheduling/Basic/500Nodes/namespace-2",
                        "extension_point": "PreEnqueue", "estimator": "exact"}}]})
        .to_string()
    };
    for (side, avg) in [("base", 1000.0), ("halved", 500.0)] {
        std::fs::create_dir_all(dir.path().join(side)).unwrap();
        for i in 0..5 {
            std::fs::write(dir.path().join(format!("{side}/{i}.json")), doc(avg)).unwrap();
        }
    }
    let o = bin()
        .arg("compare")
        .arg(dir.path().join("base"))
        .arg(dir.path().join("halved"))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert_eq!(
        out.matches("| -50.00% (p=0.008 n=5+5) | **REGRESSION** |")
            .count(),
        2,
        "{out}"
    );
    assert!(out.contains(": 2 regression(s)"), "{out}");
    assert!(!out.contains("no regression"), "{out}");
}

/// A reader that stops early (`tidegate list … | head -1`) is no reason to panic.
#[test]
fn a_closed_stdout_is_not_a_panic() {
    let mut child = bin()
        .arg("list")
        .arg(workloads().join("default.yaml"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(0), "{err}");
}

/// `--prometheus FILE`: the text exposition with kube's names, labels and buckets; each
/// histogram's `+Inf` bucket equals its count; counters end in `_total`; one family per name.
#[test]
fn prometheus_file_has_kube_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.prom");
    // Per-plugin durations are sampled in 10 % of cycles, as kube's: 1,000 measured pods
    // make a window without one impossible in practice (10 pods left it empty in about one
    // run of eight).
    let o = bin()
        .arg("run")
        .arg(workloads().join("default.yaml"))
        .args(["--workload", "SchedulingBasic/500Nodes", "--prometheus"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&file).unwrap();
    // The Prometheus text format 0.0.4 kube's /metrics serves, not OpenMetrics.
    assert!(!text.contains("# EOF"), "{text}");
    for family in [
        "# TYPE scheduler_framework_extension_point_duration_seconds histogram",
        "# TYPE scheduler_plugin_execution_duration_seconds histogram",
        "# TYPE scheduler_queue_incoming_pods_total counter",
        "# TYPE scheduler_schedule_attempts_total counter",
        "# TYPE scheduler_pending_pods gauge",
    ] {
        assert_eq!(text.matches(family).count(), 1, "{family}\n{text}");
    }
    let families = classic_parse(&text);
    // Every sample belongs to a family declared before it with the classic format's rules:
    // counters sample under their own (`_total`) name, histograms under `_bucket`, `_sum`,
    // `_count`, and each histogram's `+Inf` bucket equals its count.
    assert!(families.len() >= 5, "{families:?}");
    let pe = "workload=\"SchedulingBasic/500Nodes\",extension_point=\"PreEnqueue\",status=\"Success\",profile=\"default-scheduler\"";
    let count_line = text
        .lines()
        .find(|l| {
            l.starts_with("scheduler_framework_extension_point_duration_seconds_count")
                && l.contains(pe)
        })
        .expect("PreEnqueue count");
    let count: u64 = count_line.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(count > 0);
    let inf = text
        .lines()
        .find(|l| l.contains(&format!("{{{pe},le=\"+Inf\"}}")))
        .expect("+Inf bucket");
    assert_eq!(
        inf.rsplit(' ').next().unwrap().parse::<u64>().unwrap(),
        count
    );
    assert!(text.contains("scheduler_schedule_attempts_total{workload=\"SchedulingBasic/500Nodes\",result=\"scheduled\",profile=\"default-scheduler\"}"), "{text}");
    // Bucket bounds as Go prints floats: exponent form below 1e-4, kube's floats.
    assert!(text.contains("le=\"1e-05\""), "{text}");
    assert!(text.contains("le=\"1.5000000000000002e-05\""), "{text}");
    assert!(!text.contains("le=\"0.00001"), "{text}");
    // The real promtool (Debian's `prometheus` package), where installed.
    match std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::fs::File::open(&file).unwrap())
        .output()
    {
        Ok(o) => assert!(
            o.status.success() && o.stdout.is_empty() && o.stderr.is_empty(),
            "promtool check metrics: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(_) => eprintln!("promtool not installed: its check skipped"),
    }
}

/// A classic (Prometheus 0.0.4) text parser's view: `# TYPE` families, and every sample
/// line's metric name checked against them. Returns family -> type.
fn classic_parse(text: &str) -> std::collections::BTreeMap<String, String> {
    let mut families = std::collections::BTreeMap::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("# TYPE name kind");
            assert!(
                ["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind),
                "{line}"
            );
            assert!(
                families
                    .insert(name.to_string(), kind.to_string())
                    .is_none(),
                "{line}"
            );
            continue;
        }
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let name_end = line.find(['{', ' ']).expect("a sample");
        let name = &line[..name_end];
        let value = line.rsplit(' ').next().unwrap();
        assert!(
            value.parse::<f64>().is_ok() || ["+Inf", "-Inf", "NaN"].contains(&value),
            "{line}"
        );
        let family = families
            .keys()
            .find(|f| {
                name == f.as_str()
                    || (families[*f] == "histogram"
                        && ["_bucket", "_sum", "_count"]
                            .iter()
                            .any(|s| name == format!("{f}{s}")))
            })
            .unwrap_or_else(|| panic!("sample of an undeclared family: {line}"));
        if families[family] == "counter" {
            assert!(family.ends_with("_total"), "{line}");
        }
    }
    families
}

/// `tidegate serve`: loopback by default; /metrics answers during the run, other paths 404.
/// The address in `serve`'s first stderr line (`serving metrics at http://ADDR/metrics`).
fn served_at(line: &str) -> String {
    line.trim()
        .strip_prefix("serving metrics at http://")
        .and_then(|s| s.strip_suffix("/metrics"))
        .unwrap_or_else(|| panic!("{line}"))
        .to_string()
}

#[test]
fn serve_exposes_metrics_during_the_run() {
    use std::io::{BufRead, Read, Write};
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("slow.yaml"),
        "- name: Slow\n  workloadTemplate:\n  - opcode: createNodes\n    count: 2\n  - opcode: createPods\n    count: 5\n    collectMetrics: true\n  - opcode: sleep\n    duration: 3s\n  workloads:\n  - name: w\n",
    )
    .unwrap();
    let mut child = bin()
        .arg("serve")
        .arg(dir.path().join("slow.yaml"))
        .args(["--listen", "127.0.0.1:0", "--label-filter", ""])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let addr = served_at(&line);
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");
    let get_with = |path: &str, accept: &str| {
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\n{accept}\r\n").unwrap();
        let mut body = String::new();
        s.read_to_string(&mut body).unwrap();
        body
    };
    let get = |path: &str| get_with(path, "");
    // The pods are bound within the first second; the sleep keeps the workload running.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let m = get("/metrics");
    assert!(m.starts_with("HTTP/1.1 200 OK"), "{m}");
    // Prometheus' text format by default, as kube's /metrics ...
    assert!(m.contains("Content-Type: text/plain; version=0.0.4"), "{m}");
    assert!(
        m.contains("# TYPE scheduler_schedule_attempts_total counter"),
        "{m}"
    );
    assert!(!m.contains("# EOF"), "{m}");
    assert!(
        m.contains("scheduler_pending_pods{workload=\"Slow/w\""),
        "{m}"
    );
    // ... OpenMetrics for a scraper that asks for it, as client_golang negotiates.
    let om = get_with(
        "/metrics",
        "Accept: application/openmetrics-text;version=1.0.0,text/plain;q=0.5\r\n",
    );
    assert!(
        om.contains("Content-Type: application/openmetrics-text"),
        "{om}"
    );
    assert!(om.trim_end().ends_with("# EOF"), "{om}");
    assert!(get("/nope").starts_with("HTTP/1.1 404"));
    // --linger: after the run, the last workload's metrics stay served until SIGTERM.
    let status = child.wait().unwrap();
    assert!(status.success());
    let mut child = bin()
        .arg("serve")
        .arg(dir.path().join("slow.yaml"))
        .args(["--listen", "127.0.0.1:0", "--label-filter", "", "--linger"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let addr = served_at(&line);
    loop {
        line.clear();
        assert!(err.read_line(&mut line).unwrap() > 0, "no linger message");
        if line.contains("still serving") {
            break;
        }
    }
    let mut s = std::net::TcpStream::connect(&addr).unwrap();
    write!(s, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut body = String::new();
    s.read_to_string(&mut body).unwrap();
    assert!(
        body.contains("scheduler_schedule_attempts_total{workload=\"Slow/w\""),
        "{body}"
    );
    let ok = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    assert!(child.wait().unwrap().success());
}

/// `--flamegraph FILE`: an SVG of the measured phases whose frames carry their module paths,
/// with rayon's plumbing dropped and one root per kind of thread; the run says where the SVG
/// went, and the peak RSS it reports leaves out the profiler's memory, naming it.
#[test]
fn flamegraph_writes_an_svg() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f.svg");
    let o = bin()
        .arg("run")
        .arg(workloads().join("default.yaml"))
        .args([
            "--workload",
            "SchedulingBasic/5000Nodes_10000Pods",
            "--flamegraph",
        ])
        .arg(&file)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("flamegraph: {} (", file.display())),
        "{stderr}"
    );
    assert!(
        stdout.contains("not counted: the profiler's"),
        "peak RSS does not name the profiler's share: {stdout}"
    );
    let svg = std::fs::read_to_string(&file).unwrap();
    assert!(svg.contains("<svg"), "{svg}");
    // The run's provenance under the title.
    assert!(
        svg.contains(&format!("tidegate {} commit ", env!("CARGO_PKG_VERSION"))),
        "no provenance in the SVG"
    );
    let frames: Vec<&str> = svg
        .split("<title>")
        .skip(1)
        .filter_map(|t| t.split(" (").next())
        .collect();
    assert!(
        frames.iter().any(|f| f.starts_with("tidegate_engine::")),
        "no engine frame with its module path: {frames:?}"
    );
    assert!(
        !frames.iter().any(|f| f.contains("rayon_core::")),
        "rayon's plumbing is left in: {frames:?}"
    );
    assert!(
        frames.contains(&"tidegate-worker")
            && !frames.iter().any(|f| f.starts_with("tidegate-worker-")),
        "threads not merged by kind: {frames:?}"
    );
}

/// `tidegate report`: one self-contained HTML page from results files, with the time series the
/// run stored beside the data items; bad JSON is one line, exit 2, and no page.
#[test]
fn report_renders_runs_into_one_html_page() {
    let dir = tempfile::tempdir().unwrap();
    for (sub, threads) in [("a", "1"), ("b", "2")] {
        let o = bin()
            .arg("run")
            .arg(workloads().join("default.yaml"))
            .args([
                "--workload",
                "SchedulingWhileGated/1Node_10GatedPods",
                "--threads",
                threads,
            ])
            .arg("--data-items-dir")
            .arg(dir.path().join(sub))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let one = |sub: &str| {
        std::fs::read_dir(dir.path().join(sub))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path()
    };
    let (a, b) = (one("a"), one("b"));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&a).unwrap()).unwrap();
    let series = json["tidegateTimeSeries"]
        .as_array()
        .expect("time series stored");
    assert!(!series.is_empty());
    assert!(
        series[0]["pending"]
            .as_array()
            .is_some_and(|p| !p.is_empty())
    );
    let out = dir.path().join("report.html");
    let o = bin()
        .arg("report")
        .arg(&a)
        .arg(&b)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(&out).unwrap();
    for part in [
        "<h2>Summary</h2>",
        "Throughput",
        "Gated pods",
        "PreEnqueue duration",
        "Extension points",
        "<svg",
    ] {
        assert!(html.contains(part), "{part} missing");
    }
    assert!(!html.contains("<script"), "self-contained, no scripts");
    let summary = html.find("<h2>Summary</h2>").unwrap();
    let pre = html.find("PreEnqueue duration").unwrap();
    let eps = html.find("Extension points").unwrap();
    assert!(
        summary < pre && pre < eps,
        "the summary, then PreEnqueue first"
    );
    // The runs' folders tell them apart in the legends, their paths on hover.
    for (sub, f) in [("a", &a), ("b", &b)] {
        let title = format!("<title>{}</title>", f.display());
        let legend = html.split(&title).nth(1).expect("a legend with the path");
        let label = legend
            .split("</text>")
            .next()
            .unwrap()
            .rsplit('>')
            .next()
            .unwrap();
        assert!(
            label == sub || label.starts_with(&format!("{sub} ")),
            "{label}"
        );
    }

    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"dataItems\": [}").unwrap();
    let out2 = dir.path().join("bad.html");
    let o = bin()
        .arg("report")
        .arg(&bad)
        .arg("-o")
        .arg(&out2)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&o.stderr).trim().lines().count(), 1);
    assert!(!out2.exists());
}

/// `tidegate list` names every workload with its labels, threshold and whether it runs.
#[test]
fn list_shows_workloads_thresholds_and_support() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("config.yaml"),
        "\
- name: T
  labels: [performance]
  workloadTemplate:
  - opcode: createNodes
    count: 1
  - opcode: createPods
    count: 1
    collectMetrics: true
  - opcode: createPods
    countParam: $more
  workloads:
  - name: ok
    threshold: 42
    params: {more: 1}
  - name: skipped
    labels: [integration-test]
    params: {more: 1}
  - name: unset
- name: U
  workloadTemplate:
  - opcode: createResourceClaims
    count: 1
  - opcode: createPods
    count: 1
    collectMetrics: true
  workloads:
  - name: dra
",
    )
    .unwrap();
    let o = bin()
        .arg("list")
        .arg(dir.path().join("config.yaml"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    let line = |name: &str| {
        out.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{name} missing in {out}"))
            .to_string()
    };
    assert!(line("T/ok").contains("42") && line("T/ok").ends_with("yes"));
    assert!(line("T/skipped").contains("integration-test"));
    assert!(line("U/dra").contains("skipped: unsupported") && line("U/dra").contains("DRA"));
    // A workload without a param its ops read fails when it runs, as in kube's scheduler_perf
    // (kube's own dra/performance-config.yaml has one); the rest of the file is listed.
    let unset = line("T/unset");
    assert!(unset.contains("fails: bad input: "), "{out}");
    assert!(
        unset.contains("countParam: parameter more is undefined in workload unset"),
        "{out}"
    );
    let run = bin()
        .args(["run", "--label-filter", "", "--workload", "T/unset"])
        .arg(dir.path().join("config.yaml"))
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2), "running it is bad input");
}

/// `--dump-pods` writes one JSON line per pod with kubectl's status, the queue and rejectors.
#[test]
fn dump_pods_reports_every_pod_with_its_state() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("config.yaml"),
        "\
- name: T
  workloadTemplate:
  - opcode: createNodes
    count: 1
  - opcode: createPods
    count: 2
    podTemplatePath: gated.yaml
    skipWaitToCompletion: true
  - opcode: createPods
    count: 1
    podTemplatePath: huge.yaml
    skipWaitToCompletion: true
  - opcode: barrier
    stageRequirement: Attempted
  - opcode: createPods
    count: 3
    collectMetrics: true
  workloads:
  - name: w
",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("gated.yaml"),
        "\
apiVersion: v1
kind: Pod
metadata:
  generateName: g-
spec:
  schedulingGates:
  - name: example.com/hold
  containers:
  - name: c
    image: pause
",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("huge.yaml"),
        "\
apiVersion: v1
kind: Pod
metadata:
  generateName: huge-
spec:
  containers:
  - name: c
    image: pause
    resources:
      requests:
        cpu: \"1000\"
",
    )
    .unwrap();
    let dump = dir.path().join("pods.jsonl");
    let o = bin()
        .arg("run")
        .arg(dir.path().join("config.yaml"))
        .args(["--workload", "T/w", "--dump-pods"])
        .arg(&dump)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut lines: Vec<serde_json::Value> = std::fs::read_to_string(&dump)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The provenance first, then one line per pod.
    let run = lines.remove(0);
    assert!(run["tidegateRun"]["cpuModel"].is_string(), "{run}");
    assert_eq!(lines.len(), 6);
    let with = |status: &str| lines.iter().filter(|l| l["status"] == status).count();
    assert_eq!(with("Bound"), 3);
    assert_eq!(with("SchedulingGated"), 2);
    assert_eq!(with("Pending"), 1);
    let gated = lines
        .iter()
        .find(|l| l["status"] == "SchedulingGated")
        .unwrap();
    assert_eq!(gated["gates"][0], "example.com/hold");
    assert_eq!(gated["queue"], "gated");
    let pending = lines.iter().find(|l| l["status"] == "Pending").unwrap();
    assert_eq!(pending["rejectors"][0], "NodeResourcesFit");
    assert!(
        pending["message"]
            .as_str()
            .unwrap()
            .contains("Insufficient cpu"),
        "{pending}"
    );
    assert!(lines.iter().all(|l| l["workload"] == "T/w"));
}

/// A workload that fails (here: a timeout on a pod no node fits) is reported FAILED with its
/// reason, the next workload still runs, and the exit code is 1.
#[test]
fn a_failed_workload_does_not_stop_the_next_one() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("config.yaml"),
        "\
- name: T
  workloadTemplate:
  - opcode: createNodes
    count: 1
  - opcode: createPods
    count: 1
    podTemplatePath: huge.yaml
    collectMetrics: true
  workloads:
  - name: stuck
- name: U
  workloadTemplate:
  - opcode: createNodes
    count: 1
  - opcode: createPods
    count: 2
    podTemplatePath: small.yaml
    collectMetrics: true
  workloads:
  - name: fine
",
    )
    .unwrap();
    let pod = |name: &str, cpu: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  generateName: {name}-\nspec:\n  containers:\n  - name: c\n    image: pause\n    resources:\n      requests:\n        cpu: \"{cpu}\"\n"
        )
    };
    std::fs::write(dir.path().join("huge.yaml"), pod("huge", "1000")).unwrap();
    std::fs::write(dir.path().join("small.yaml"), pod("small", "100m")).unwrap();
    let o = bin()
        .arg("run")
        .arg(dir.path().join("config.yaml"))
        .args(["--label-filter", "", "--timeout", "1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    let stuck = out.lines().find(|l| l.starts_with("T/stuck")).unwrap();
    assert!(
        stuck.contains("FAILED") && stuck.contains("Insufficient cpu"),
        "{stuck}"
    );
    let fine = out.lines().find(|l| l.starts_with("U/fine")).unwrap();
    assert!(fine.ends_with("ok"), "{fine}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("failed: T/stuck"));
}

/// `tidegate run --help` documents every flag with an example.
#[test]
fn run_help_gives_every_flag_an_example() {
    let o = bin().args(["run", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&o.stdout);
    let flags: Vec<&str> = help
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with("--") && !l.starts_with("--help"))
        .collect();
    assert!(flags.len() >= 9, "{help}");
    for flag in flags {
        let name = flag.split_whitespace().next().unwrap();
        let section = help.split(flag).nth(1).unwrap();
        let until_next = section.split("\n      --").next().unwrap();
        assert!(until_next.contains("Example:"), "{name} has no example");
    }
}

/// Usage errors are clap's own messages in full, exit 2: the missing
/// argument named, "did you mean" for a misspelled flag, the possible values of a bad one;
/// `--version` carries the commit.
#[test]
fn usage_errors_are_claps_own_and_the_version_names_the_commit() {
    let tg = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_tidegate"))
            .args(args)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, _, err) = tg(&["run"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("the following required arguments were not provided"),
        "{err}"
    );
    assert!(err.contains("<CONFIG>"), "{err}");
    let (code, _, err) = tg(&["run", "x.yaml", "--tread", "2"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("a similar argument exists: '--threads'"),
        "{err}"
    );
    let (code, _, err) = tg(&["run", "x.yaml", "--clock", "fast"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("[possible values: real, virtual]"), "{err}");
    let (code, out, _) = tg(&["--version"]);
    assert_eq!(code, Some(0));
    assert!(out.starts_with("tidegate 0.1.0 (commit "), "{out}");
}

/// Tables line up for any name length, in `list` and in `run`.
#[test]
fn tables_align_for_long_names() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("long.yaml");
    std::fs::write(
        &file,
        "- name: AVeryLongTestCaseNameThatGoesOnAndOnForeverAndEver\n  labels: [integration-test, short, one-more-label, and-another-label-too]\n  workloadTemplate:\n  - opcode: createNodes\n    count: 1\n  - opcode: createPods\n    count: 2\n    collectMetrics: true\n  workloads:\n  - name: WithAnEvenLongerWorkloadNameBehindIt\n  - name: Short\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let out = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_tidegate"))
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    // list: the last column starts at the same character in the header and every row.
    let list = out(&["list", f, "--label-filter", "integration-test"]);
    let cols: Vec<usize> = list
        .lines()
        .map(|l| l.chars().count() - l.rsplit("  ").next().unwrap().chars().count())
        .collect();
    assert_eq!(cols.len(), 3, "{list}");
    assert!(cols.windows(2).all(|w| w[0] == w[1]), "{list}");
    // run: the verdict column likewise.
    let run = out(&[
        "run",
        f,
        "--label-filter",
        "integration-test",
        "--no-progress",
        "--threads",
        "1",
    ]);
    let rows: Vec<&str> = run.lines().take(3).collect();
    let at: Vec<usize> = rows
        .iter()
        .map(|l| l.chars().count() - l.rsplit("  ").next().unwrap().chars().count())
        .collect();
    assert!(at.windows(2).all(|w| w[0] == w[1]), "{run}");
}

/// Results files record what produced them: tidegate's version and commit,
/// the machine, and the run's threads, seed and clock.
#[test]
fn results_files_record_version_commit_machine_and_settings() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_tidegate"))
        .args([
            "run",
            "../perf-data/workloads/default.yaml",
            "--workload",
            "SchedulingBasic/500Nodes",
            "--threads",
            "1",
            "--seed",
            "7",
            "--clock",
            "virtual",
            "--no-progress",
            "--data-items-dir",
        ])
        .arg(dir.path().join("items"))
        .arg("--prometheus")
        .arg(dir.path().join("m.prom"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let file = std::fs::read_dir(dir.path().join("items"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let run = &doc["tidegateRun"];
    assert_eq!(run["version"], env!("CARGO_PKG_VERSION"), "{run}");
    assert!(
        run["commit"].as_str().is_some_and(|c| !c.is_empty()),
        "{run}"
    );
    assert!(run["cpus"].as_u64().is_some_and(|n| n >= 1), "{run}");
    assert!(run["cpuModel"].is_string(), "{run}");
    assert_eq!(
        (&run["threads"], &run["seed"], &run["clock"]),
        (&1.into(), &7.into(), &"virtual".into()),
        "{run}"
    );
    let prom = std::fs::read_to_string(dir.path().join("m.prom")).unwrap();
    assert!(
        prom.starts_with("# tidegate "),
        "{}",
        &prom[..80.min(prom.len())]
    );
    assert!(
        prom.lines()
            .next()
            .unwrap()
            .contains("seed 7 clock virtual"),
        "{prom}"
    );
}
