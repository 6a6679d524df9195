//! The files a run writes, each whole or not at all: the perf-dash data items
//! (`--data-items-dir`), the placements (`--placements`), every pod's final state
//! (`--dump-pods`), the Prometheus exposition (`--prometheus`) and the flamegraph
//! (`--flamegraph`). Each carries the run's provenance ([`RunInfo`]): the JSON-lines files
//! as their first line, the text formats as a comment, the data items in their `run` field.

use crate::error::HarnessError;
use crate::output::flame::Profile;
use crate::output::prom;
use crate::output::report::{self, DataItem, DataItems, RunInfo};
use crate::output::results::{Outcome, WorkloadReport};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `contents` to `file` whole or not at all.
pub fn write_file(file: &Path, contents: &[u8]) -> Result<(), HarnessError> {
    let dir = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = file
        .file_name()
        .and_then(|s| s.to_str())
        .ok_or_else(|| HarnessError::Run(format!("{}: not a file name", file.display())))?;
    report::write_atomic(dir, name, contents)
        .map(|_| ())
        .map_err(|e| HarnessError::Run(format!("{}: {e}", file.display())))
}

/// Every bound pod `(namespace, name, node)` of the workloads that ran, in order.
pub fn placements(reports: &[WorkloadReport]) -> Vec<(String, String, String)> {
    ran(reports)
        .flat_map(|(_, res)| res.placements.iter().cloned())
        .collect()
}

/// The workloads that ran, with their results.
fn ran(
    reports: &[WorkloadReport],
) -> impl Iterator<Item = (&WorkloadReport, &crate::output::results::RunResult)> {
    reports.iter().filter_map(|r| match &r.outcome {
        Outcome::Ran(res) => Some((r, &**res)),
        _ => None,
    })
}

/// `--data-items-dir`: the perf-dash data-items file of the workloads so far
/// (`BenchmarkPerfScheduling_benchmark_<topic>_<UTC time of started>.json`), rewritten as
/// each workload ends. Returns its path.
pub fn write_data_items(
    dir: &Path,
    topic: &str,
    reports: &[WorkloadReport],
    started: u64,
    info: &RunInfo,
) -> Result<PathBuf, HarnessError> {
    let mut all_items: Vec<DataItem> = ran(reports)
        .flat_map(|(_, res)| res.items.iter().cloned())
        .collect();
    report::fill_not_applicable(&mut all_items);
    let doc = DataItems {
        version: "v1",
        data_items: all_items,
        series: ran(reports)
            .flat_map(|(_, res)| res.series.iter().cloned())
            .collect(),
        run: Some(info.clone()),
    };
    let json = serde_json::to_vec_pretty(&doc).map_err(|e| HarnessError::Run(e.to_string()))?;
    report::write_atomic(dir, &report::file_name(topic, started), &json)
        .map_err(|e| HarnessError::Run(format!("{}: {e}", dir.display())))
}

/// `--placements`: the run's provenance, then one JSON line per bound pod.
pub fn write_placements(
    file: &Path,
    placements: &[(String, String, String)],
    info: &RunInfo,
) -> Result<(), HarnessError> {
    let mut out = Vec::new();
    let _ = writeln!(out, "{}", info.json_line());
    for (ns, name, node) in placements {
        let line = serde_json::json!({"namespace": ns, "name": name, "node": node});
        let _ = writeln!(out, "{line}");
    }
    write_file(file, &out)
}

/// `--dump-pods`: the run's provenance, then one JSON line per pod at the end of each
/// workload, with its `workload`.
pub fn write_dump_pods(
    file: &Path,
    reports: &[WorkloadReport],
    info: &RunInfo,
) -> Result<(), HarnessError> {
    let mut dump = format!("{}\n", info.json_line()).into_bytes();
    for (r, res) in ran(reports) {
        for p in &res.pods {
            let mut line = serde_json::to_value(p).map_err(|e| HarnessError::Run(e.to_string()))?;
            line["workload"] = format!("{}/{}", r.test_case, r.workload).into();
            let _ = writeln!(dump, "{line}");
        }
    }
    write_file(file, &dump)
}

/// `--prometheus`: every workload's final metrics in the text exposition format, each series
/// labelled with its `workload`, after the provenance as a comment line (which exposition
/// parsers skip).
pub fn write_prometheus(
    file: &Path,
    reports: &[WorkloadReport],
    info: &RunInfo,
) -> Result<(), HarnessError> {
    let snaps: Vec<(Option<String>, prom::Snapshot)> = ran(reports)
        .filter_map(|(r, res)| {
            res.prometheus
                .clone()
                .map(|s| (Some(format!("{}/{}", r.test_case, r.workload)), s))
        })
        .collect();
    let text = format!("{}\n{}", info.comment(), prom::encode_prometheus(&snaps));
    write_file(file, text.as_bytes())
}

/// `--flamegraph`: merges the workloads' CPU samples (taking them out of `reports`), writes
/// the SVG, and says on `err` where it went.
pub fn write_flamegraph(
    file: &Path,
    reports: &mut [WorkloadReport],
    info: &RunInfo,
    err: &mut dyn Write,
) -> Result<(), HarnessError> {
    let mut merged: Option<Profile> = None;
    let mut names = Vec::new();
    for r in reports.iter_mut() {
        if let Outcome::Ran(res) = &mut r.outcome
            && let Some(p) = res.profile.take()
        {
            names.push(format!("{}/{}", r.test_case, r.workload));
            match &mut merged {
                Some(m) => m.merge(p),
                None => merged = Some(p),
            }
        }
    }
    let Some(profile) = merged else {
        return Err(HarnessError::Run(format!(
            "{}: no CPU samples (no collection window ran)",
            file.display()
        )));
    };
    let samples = profile.samples();
    let mut svg = Vec::new();
    if samples == 0 {
        // Too short to catch a sample: still a valid SVG, saying so.
        svg.extend_from_slice(
            br#"<?xml version="1.0" standalone="no"?><svg xmlns="http://www.w3.org/2000/svg" width="600" height="40"><text x="10" y="25">tidegate: no CPU samples in the measured phases (run longer)</text></svg>"#,
        );
    } else {
        let title = match names.as_slice() {
            [one] => format!("tidegate {one}: measured phases"),
            many => format!("tidegate, {} workloads: measured phases", many.len()),
        };
        profile
            .write_svg(&title, info.comment().trim_start_matches("# "), &mut svg)
            .map_err(|e| HarnessError::Run(format!("{}: {e}", file.display())))?;
    }
    write_file(file, &svg)?;
    let _ = writeln!(
        err,
        "flamegraph: {} ({samples} CPU samples of the measured phases of {} workload{})",
        file.display(),
        names.len(),
        if names.len() == 1 { "" } else { "s" }
    );
    Ok(())
}
