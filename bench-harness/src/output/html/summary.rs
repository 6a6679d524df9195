//! The report's first table: per collection window and run, the numbers a reader came for
//! (pods/s average and percentiles, the threshold and its verdict, PreEnqueue and
//! scheduling-attempt latency, peak RSS), in human units. Also the data-item look-ups the
//! charts share.

use super::esc;
use super::runs::{Results, color_hex};
use super::units::{duration, grouped, megabytes};
use crate::output::report::{DataItem, EXTENSION_POINT_METRIC};
use std::fmt::Write as _;
use tidegate_engine::metrics::names;

/// The window names of all runs, in the order they first appear (the config's order).
pub fn windows(runs: &[Results]) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    let names = runs.iter().flat_map(|r| {
        r.items
            .iter()
            .filter(|i| metric_is(i, "SchedulingThroughput"))
            .filter_map(|i| i.labels.get("Name").cloned())
            .chain(r.series.iter().map(|s| s.name.clone()))
    });
    for n in names {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

fn metric_is(i: &DataItem, metric: &str) -> bool {
    i.labels.get("Metric").map(String::as_str) == Some(metric)
}

fn label_is(i: &DataItem, key: &str, value: &str) -> bool {
    i.labels.get(key).map(String::as_str) == Some(value)
}

/// tidegate writes each histogram twice (`estimator=exact` and `buckets`); kube's files have
/// no estimator. The exact one, or the only one.
fn exact_or_only(i: &DataItem) -> bool {
    i.labels
        .get("estimator")
        .is_none_or(|e| e == "exact" || e == "not applicable")
}

/// The item of `metric` for `window` carrying each of `labels`.
pub fn item<'a>(
    r: &'a Results,
    metric: &str,
    window: &str,
    labels: &[(&str, &str)],
) -> Option<&'a DataItem> {
    r.items.iter().find(|i| {
        metric_is(i, metric)
            && label_is(i, "Name", window)
            && exact_or_only(i)
            && labels.iter().all(|(k, v)| label_is(i, k, v))
    })
}

/// A histogram item's `PercN` in seconds (data items hold milliseconds).
pub fn perc_secs(i: &DataItem, key: &str) -> Option<f64> {
    i.data.get(key).map(|ms| ms / 1000.0)
}

/// The PreEnqueue latency of `window`: the extension point's item, else (kube's files) the
/// PreEnqueue plugin with the highest p99.
pub fn pre_enqueue<'a>(r: &'a Results, window: &str) -> Option<&'a DataItem> {
    item(
        r,
        EXTENSION_POINT_METRIC,
        window,
        &[("extension_point", "PreEnqueue")],
    )
    .or_else(|| {
        r.items
            .iter()
            .filter(|i| {
                metric_is(i, names::PLUGIN_EXECUTION_DURATION)
                    && label_is(i, "Name", window)
                    && label_is(i, "extension_point", "PreEnqueue")
                    && exact_or_only(i)
            })
            .max_by(|a, b| {
                let p = |i: &DataItem| i.data.get("Perc99").copied().unwrap_or(0.0);
                p(a).total_cmp(&p(b))
            })
    })
}

/// The workload's peak RSS (MB): `tidegate_peak_rss` is per workload, the window's name
/// less its last part.
fn peak_rss(r: &Results, window: &str) -> Option<f64> {
    r.items
        .iter()
        .filter(|i| metric_is(i, "tidegate_peak_rss"))
        .filter(|i| {
            i.labels
                .get("Name")
                .is_some_and(|n| window == n || window.starts_with(&format!("{n}/")))
        })
        .filter_map(|i| i.data.get("Max").copied())
        .reduce(f64::max)
}

/// A threshold the run applied to `window`: what, the bound, and whether it held.
pub struct Verdict {
    pub bucket: String,
    pub unit: String,
    pub threshold: f64,
    pub expect_lower: bool,
    pub value: f64,
    pub passed: bool,
}

/// The threshold recorded in `window`'s items (`<bucket>Threshold`, and
/// `<bucket>ThresholdExpectLower` when lower is better), judged as the run judged it: a
/// missing bucket reads 0, as kube reads it.
pub fn verdict(r: &Results, window: &str) -> Option<Verdict> {
    r.items
        .iter()
        .filter(|i| label_is(i, "Name", window) && exact_or_only(i))
        .find_map(|i| {
            let (key, t) = i.data.iter().find(|(k, _)| k.ends_with("Threshold"))?;
            let bucket = key.strip_suffix("Threshold")?.to_string();
            let expect_lower = i.data.contains_key(&format!("{key}ExpectLower"));
            let value = i.data.get(&bucket).copied().unwrap_or(0.0);
            let passed = if expect_lower { value < *t } else { value > *t };
            Some(Verdict {
                bucket,
                unit: i.unit.clone(),
                threshold: *t,
                expect_lower,
                value,
                passed,
            })
        })
}

/// A value of `unit` in human units.
pub fn in_unit(v: f64, unit: &str) -> String {
    match unit {
        "ms" => duration(v / 1000.0),
        "s" => duration(v),
        "MB" => megabytes(v),
        "pods/s" => grouped(v),
        _ => format!("{} {unit}", grouped(v)),
    }
}

/// The window's name less the `BenchmarkPerfScheduling/` every name starts with, breakable
/// after each `/`, with the full name on hover.
pub fn window_cell(window: &str) -> String {
    let short = window
        .strip_prefix("BenchmarkPerfScheduling/")
        .unwrap_or(window);
    format!(
        "<span title=\"{}\">{}</span>",
        esc(window),
        esc(short).replace('/', "/<wbr>")
    )
}

/// A run's name in a table: its colour, its short label, its path on hover.
pub fn run_cell(runs: &[Results], i: usize) -> String {
    format!(
        "<span class=\"sw\" style=\"background:{}\"></span><span title=\"{}\">{}</span>",
        color_hex(i),
        esc(&runs[i].full),
        esc(&runs[i].label)
    )
}

const HEAD: &str = "<table class=\"summary\"><thead><tr><th rowspan=\"2\">workload / window</th>\
<th rowspan=\"2\">run</th><th colspan=\"4\">pods/s</th><th colspan=\"2\">threshold</th>\
<th colspan=\"3\">PreEnqueue</th><th colspan=\"3\">scheduling attempt</th>\
<th rowspan=\"2\">peak RSS</th>";

const HEAD2: &str = "<tr><th>avg</th><th>p50</th><th>p90</th><th>p99</th><th>bound</th>\
<th>verdict</th><th>p50</th><th>p90</th><th>p99</th><th>p50</th><th>p90</th><th>p99</th>";

/// The summary table: a row per window and run, the window's cell spanning its runs.
pub fn table(runs: &[Results]) -> String {
    let mut out = String::from(HEAD);
    let several = runs.len() > 1;
    if several {
        let _ = write!(out, "<th rowspan=\"2\">avg vs {}</th>", esc(&runs[0].label));
    }
    out.push_str("</tr>");
    out.push_str(HEAD2);
    out.push_str("</tr></thead><tbody>");
    for w in windows(runs) {
        let present: Vec<usize> = (0..runs.len())
            .filter(|&i| runs[i].items.iter().any(|it| label_is(it, "Name", &w)))
            .collect();
        let first_avg = item(&runs[0], "SchedulingThroughput", &w, &[])
            .and_then(|i| i.data.get("Average").copied());
        for (n, &ri) in present.iter().enumerate() {
            out.push_str("<tr>");
            if n == 0 {
                let _ = write!(
                    out,
                    "<td class=\"name\" rowspan=\"{}\">{}</td>",
                    present.len(),
                    window_cell(&w)
                );
            }
            let _ = write!(out, "<td class=\"run\">{}</td>", run_cell(runs, ri));
            row(&mut out, &runs[ri], &w);
            if several {
                let avg = item(&runs[ri], "SchedulingThroughput", &w, &[])
                    .and_then(|i| i.data.get("Average").copied());
                let cell = match (first_avg, avg) {
                    (Some(f), Some(a)) if f > 0.0 => format!("{:.2}×", a / f),
                    _ => "–".into(),
                };
                let _ = write!(out, "<td>{cell}</td>");
            }
            out.push_str("</tr>");
        }
    }
    out.push_str("</tbody></table>");
    out
}

/// One run's cells for `window`, after the names.
fn row(out: &mut String, r: &Results, window: &str) {
    let cell = |out: &mut String, v: Option<String>| {
        let _ = write!(out, "<td>{}</td>", v.unwrap_or_else(|| "–".into()));
    };
    let tp = item(r, "SchedulingThroughput", window, &[]);
    for key in ["Average", "Perc50", "Perc90", "Perc99"] {
        cell(out, tp.and_then(|i| i.data.get(key)).map(|v| grouped(*v)));
    }
    match verdict(r, window) {
        Some(v) => {
            let what = if v.bucket == "Average" && v.unit == "pods/s" {
                String::new()
            } else {
                format!("{} ", esc(&v.bucket))
            };
            let _ = write!(
                out,
                "<td>{what}{} {}</td><td class=\"{}\" title=\"got {}\">{}</td>",
                if v.expect_lower { "&lt;" } else { "&gt;" },
                in_unit(v.threshold, &v.unit),
                if v.passed { "pass" } else { "fail" },
                in_unit(v.value, &v.unit),
                if v.passed { "pass" } else { "FAIL" }
            );
        }
        None => out.push_str("<td>–</td><td>–</td>"),
    }
    let pe = pre_enqueue(r, window);
    let attempt = item(r, names::SCHEDULING_ATTEMPT_DURATION, window, &[]);
    for it in [pe, attempt] {
        for key in ["Perc50", "Perc90", "Perc99"] {
            cell(out, it.and_then(|i| perc_secs(i, key)).map(duration));
        }
    }
    cell(out, peak_rss(r, window).map(megabytes));
}
