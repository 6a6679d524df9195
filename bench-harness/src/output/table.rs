//! The results table `tidegate run` prints: the header once the input is checked, one row per
//! workload as it ends, then the placements digest (and opportunistic batching's count) and
//! the peak RSS. Each function writes to the writer it is given and ignores a failed write:
//! a closed stdout (`tidegate run … | head`) must not stop the run from writing its files.

use crate::output::results::{Outcome, Summary, WorkloadReport, placements_digest};
use std::io::Write;

/// A duration in ms as the table shows it: `40 ns`, `1.50 µs`, `2.00 ms`, or `-`.
pub fn fmt_ms(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(ms) if ms < 0.001 => format!("{:.0} ns", ms * 1e6),
        Some(ms) if ms < 1.0 => format!("{:.2} µs", ms * 1e3),
        Some(ms) => format!("{ms:.2} ms"),
    }
}

/// The width of the workload column: the longest `TestCase/Workload` (in characters), at
/// least 58, so that every column lines up whatever the names.
pub fn name_width(names: impl Iterator<Item = usize>) -> usize {
    names.max().unwrap_or(0).max(58)
}

/// The header of the results table (rows follow as workloads end).
pub fn write_header(out: &mut dyn Write, w: usize) {
    let _ = writeln!(
        out,
        "{:<w$} {:>10} {:>10} {:>10} {:>10} {:>12} {:>8} {:>8} {:>8}  verdict",
        "workload", "avg pods/s", "p50", "p90", "p99", "PreEnq p90", "bound", "pending", "deleted",
    );
}

/// One workload's row of the results table (and the gates that change nothing, if any).
pub fn write_row(out: &mut dyn Write, r: &WorkloadReport, w: usize) {
    let name = format!("{}/{}", r.test_case, r.workload);
    let _ = match &r.outcome {
        Outcome::Skipped(why) => writeln!(out, "{name:<w$} skipped: unsupported: {why}"),
        Outcome::Failed(why) => writeln!(out, "{name:<w$} FAILED: {why}"),
        Outcome::Ran(res) => {
            let tp = res.items.iter().find(|i| {
                i.labels
                    .get("Metric")
                    .is_some_and(|m| m == "SchedulingThroughput")
            });
            let g = |k: &str| {
                tp.and_then(|i| i.data.get(k))
                    .map_or("-".to_string(), |v| format!("{v:.0}"))
            };
            let pe = res.items.iter().find(|i| {
                i.labels
                    .get("extension_point")
                    .is_some_and(|e| e == "PreEnqueue")
                    && i.labels.get("estimator").is_some_and(|e| e == "exact")
                    && i.labels.get("Metric").is_some_and(|m| {
                        m == tidegate_engine::metrics::names::EXTENSION_POINT_DURATION
                    })
            });
            let verdict = if res.threshold_failures.is_empty() {
                "ok"
            } else {
                "BELOW THRESHOLD"
            };
            writeln!(
                out,
                "{name:<w$} {:>10} {:>10} {:>10} {:>10} {:>12} {:>8} {:>8} {:>8}  {verdict}",
                g("Average"),
                g("Perc50"),
                g("Perc90"),
                g("Perc99"),
                fmt_ms(pe.and_then(|i| i.data.get("Perc90").copied())),
                res.summary.bound,
                res.summary.pending(),
                res.summary.deleted,
            )
        }
    };
    if !r.identical_gates.is_empty() {
        let _ = writeln!(
            out,
            "    feature gates that change nothing kube-scheduler decides here (docs/feature-gates.md): {}",
            r.identical_gates.join(", ")
        );
    }
}

/// `placements digest: …` (and how many pods opportunistic batching placed), when some pod
/// was bound; `placements` are every workload's, in order.
pub fn write_digest(
    out: &mut dyn Write,
    reports: &[WorkloadReport],
    placements: &[(String, String, String)],
) {
    if placements.is_empty() {
        return;
    }
    let total = |of: fn(&Summary) -> u64| -> u64 {
        reports
            .iter()
            .filter_map(|r| match &r.outcome {
                Outcome::Ran(res) => Some(of(&res.summary)),
                _ => None,
            })
            .sum()
    };
    let attempts = total(|s| s.attempts);
    let _ = writeln!(
        out,
        "placements digest: {:016x} ({} pods bound, {attempts} attempts)",
        placements_digest(placements),
        placements.len()
    );
    let batched = total(|s| s.batched);
    if batched > 0 {
        let _ = writeln!(
            out,
            "opportunistic batching: {batched} pods placed on a hint (no Filter pass, no Score)"
        );
    }
}

/// `memory: peak RSS …` of the workload with the highest peak.
pub fn write_peak_rss(out: &mut dyn Write, reports: &[WorkloadReport]) {
    let peak = reports
        .iter()
        .filter_map(|r| match &r.outcome {
            Outcome::Ran(res) => res.peak_rss_mb.map(|mb| (mb, r)),
            _ => None,
        })
        .max_by(|a, b| a.0.total_cmp(&b.0));
    if let Some((mb, r)) = peak {
        let profiler = match &r.outcome {
            Outcome::Ran(res) => res
                .profiler_mb
                .map(|p| {
                    format!(
                        "; not counted: the profiler's {p:.0} MB, its symbolizer and sample table"
                    )
                })
                .unwrap_or_default(),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "memory: peak RSS {mb:.0} MB ({}/{}{profiler})",
            r.test_case, r.workload
        );
    }
}
