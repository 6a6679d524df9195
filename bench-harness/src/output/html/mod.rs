//! `tidegate report`: one self-contained HTML page (inline SVG drawn by plotters; no
//! scripts, no network, no web fonts) from one or more results files (`--data-items-dir`
//! output, or kube's), 1280 px wide:
//!
//! - the runs, each with its colour, short label, path and provenance;
//! - a summary table ([`summary`]): per window and run, pods/s (average, p50/p90/p99), the
//!   threshold and its verdict, PreEnqueue and scheduling-attempt latency, peak RSS, and
//!   with several runs each run's average against the first;
//! - per collection window, charts ([`chart`]): throughput over time, the pending pods
//!   (active, gated, and backoff/unschedulable where not empty) as steps, the PreEnqueue and
//!   scheduling-attempt percentiles, and each extension point's p50–p99.
//!
//! Units are human ([`units`]): ns/µs/ms/s, 1k/10k, grouped pods/s.

pub mod chart;
pub mod runs;
pub mod summary;
pub mod units;

use crate::error::InputError;
use crate::output::report::{DataItem, EXTENSION_POINT_METRIC, PendingSample, WindowSeries};
use chart::{Chart, Draw, XAxis, YAxis, figure};
pub use runs::Results;
use std::fmt::Write as _;
use std::path::PathBuf;
use summary::{item, perc_secs};
use tidegate_engine::metrics::names;

/// `s` safe in HTML text and attributes.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Extension points in the order a pod meets them (PreEnqueue first).
const EXTENSION_POINTS: [&str; 13] = [
    "PreEnqueue",
    "PreFilter",
    "Filter",
    "PostFilter",
    "PreScore",
    "Score",
    "Reserve",
    "Permit",
    "PreBindPreFlight",
    "PreBind",
    "Bind",
    "PostBind",
    "Unreserve",
];

const STYLE: &str = "body{font-family:sans-serif;margin:16px;max-width:1232px;color:#222}\
h1{font-size:24px;margin:0 0 8px}h2{font-size:19px;margin:28px 0 8px;overflow-wrap:anywhere}\
ul.runs{padding-left:0;list-style:none;font-size:14px}ul.runs li{margin:3px 0;overflow-wrap:anywhere}\
.prov{color:#555}\
table.summary{border-collapse:collapse;font-size:13px;width:100%}\
th,td{border:1px solid #ccc;padding:3px 5px;text-align:right;white-space:nowrap}\
thead th{background:#f2f2f2;text-align:center}\
td.name{text-align:left;white-space:normal;overflow-wrap:anywhere;min-width:70px}\
td.run{text-align:left}\
.pass{color:#1a7f37;font-weight:bold}.fail{color:#c62828;font-weight:bold}\
.sw{display:inline-block;width:11px;height:11px;margin-right:5px;border-radius:2px;vertical-align:-1px}\
.charts{display:flex;flex-wrap:wrap;gap:12px}figure{margin:0}\
figure.chart svg{display:block;max-width:100%;height:auto;border:1px solid #e4e4e4}\
figure.empty{width:600px;padding:8px 0;color:#555}p.note{color:#555;font-size:14px;margin:4px 0}";

/// The report page.
pub fn render(runs: &[Results]) -> String {
    let mut body = String::new();
    runs_list(&mut body, runs);
    body.push_str("<h2>Summary</h2>");
    body.push_str(&summary::table(runs));
    body.push_str(
        "<p class=\"note\">Latencies: the exact estimator where the file has two; \
         – where a run has no such value.</p>",
    );
    for w in summary::windows(runs) {
        window(&mut body, runs, &w);
    }
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\"><title>tidegate report</title>\
         <style>{STYLE}</style></head><body><h1>tidegate report</h1>{body}</body></html>\n"
    )
}

/// The runs: colour, short label, path, and what produced each file.
fn runs_list(body: &mut String, runs: &[Results]) {
    body.push_str("<ul class=\"runs\">");
    for (i, r) in runs.iter().enumerate() {
        let prov = r.run.as_ref().map_or_else(String::new, |p| {
            format!(
                " <span class=\"prov\">tidegate {} ({}), {} × {}, threads {}, seed {}, {} \
                 clock</span>",
                esc(&p.version),
                esc(&p.commit),
                esc(&p.cpu_model),
                p.cpus,
                p.threads.map_or_else(|| "auto".into(), |t| t.to_string()),
                p.seed,
                esc(&p.clock)
            )
        });
        let _ = write!(
            body,
            "<li><span class=\"sw\" style=\"background:{}\"></span><b>{}</b> <code>{}</code>\
             {prov}</li>",
            runs::color_hex(i),
            esc(&r.label),
            esc(&r.full)
        );
    }
    body.push_str("</ul>");
}

/// The time series of window `w` in `r`.
fn series_of<'a>(r: &'a Results, w: &str) -> Option<&'a WindowSeries> {
    r.series.iter().find(|s| s.name == w)
}

/// One window's charts.
fn window(body: &mut String, runs: &[Results], w: &str) {
    let _ = write!(
        body,
        "<h2>{}</h2><div class=\"charts\">",
        summary::window_cell(w)
    );
    let series = |r| series_of(r, w);
    let tp: Vec<(usize, Draw)> = runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| series(r).map(|s| (i, Draw::Line(s.throughput.clone()))))
        .collect();
    body.push_str(&figure(
        &Chart {
            title: "Throughput".into(),
            x: XAxis::Time,
            x_label: "time into the window",
            y: YAxis::Rate,
            y_label: "pods/s",
            series: tp,
            wide: false,
        },
        runs,
    ));
    let gauge = |f: fn(&PendingSample) -> u64| -> Vec<(usize, Draw)> {
        runs.iter()
            .enumerate()
            .filter_map(|(i, r)| {
                let s = series(r)?;
                Some((
                    i,
                    Draw::Steps(s.pending.iter().map(|p| (p.t, f(p) as f64)).collect()),
                ))
            })
            .collect()
    };
    body.push_str(&figure(
        &Chart::gauge("Pending pods: active", gauge(|p| p.active)),
        runs,
    ));
    body.push_str(&figure(
        &Chart::gauge("Gated pods", gauge(|p| p.gated)),
        runs,
    ));
    let mut idle = vec![];
    for (name, f) in [
        ("backoff", (|p| p.backoff) as fn(&PendingSample) -> u64),
        ("unschedulable", |p| p.unschedulable),
    ] {
        let any = runs
            .iter()
            .filter_map(series)
            .any(|s| s.pending.iter().any(|p| f(p) > 0));
        if any {
            let title = format!("Pending pods: {name}");
            body.push_str(&figure(&Chart::gauge(&title, gauge(f)), runs));
        } else {
            idle.push(name);
        }
    }
    latencies(body, runs, w);
    body.push_str("</div>");
    if !idle.is_empty() && runs.iter().any(|r| series(r).is_some()) {
        let _ = write!(
            body,
            "<p class=\"note\">The {} queue stayed empty in every run.</p>",
            idle.join(" and ")
        );
    }
}

/// The percentile curves of PreEnqueue and of the scheduling attempt, and each extension
/// point's p50–p99 (one row wide).
fn latencies(body: &mut String, runs: &[Results], w: &str) {
    let percs = ["Perc50", "Perc90", "Perc95", "Perc99"];
    let names: Vec<String> = ["p50", "p90", "p95", "p99"].map(String::from).to_vec();
    let curve = |it: Option<&DataItem>| {
        let pts: Vec<(f64, f64)> = percs
            .iter()
            .enumerate()
            .filter_map(|(x, k)| Some((x as f64, perc_secs(it?, k)?)))
            .collect();
        (!pts.is_empty()).then_some(Draw::Line(pts))
    };
    type Pick = for<'a> fn(&'a Results, &str) -> Option<&'a DataItem>;
    let attempt: Pick = |r, w| item(r, names::SCHEDULING_ATTEMPT_DURATION, w, &[]);
    for (title, pick) in [
        ("PreEnqueue duration", summary::pre_enqueue as Pick),
        ("Scheduling attempt duration", attempt),
    ] {
        let series = runs
            .iter()
            .enumerate()
            .filter_map(|(i, r)| curve(pick(r, w)).map(|d| (i, d)))
            .collect();
        body.push_str(&figure(
            &Chart {
                title: title.into(),
                x: XAxis::Category(names.clone()),
                x_label: "percentile",
                y: YAxis::Duration,
                y_label: "duration (log)",
                series,
                wide: false,
            },
            runs,
        ));
    }
    let eps: Vec<&str> = EXTENSION_POINTS
        .into_iter()
        .filter(|ep| {
            runs.iter()
                .any(|r| item(r, EXTENSION_POINT_METRIC, w, &[("extension_point", ep)]).is_some())
        })
        .collect();
    if eps.is_empty() {
        return;
    }
    let series = runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let ranges = eps
                .iter()
                .enumerate()
                .filter_map(|(x, ep)| {
                    let it = item(r, EXTENSION_POINT_METRIC, w, &[("extension_point", ep)])?;
                    let p = |k| perc_secs(it, k);
                    Some((x as f64, [p("Perc50")?, p("Perc90")?, p("Perc99")?]))
                })
                .collect();
            (i, Draw::Ranges(ranges))
        })
        .collect();
    body.push_str(&figure(
        &Chart {
            title: "Extension points".into(),
            x: XAxis::Category(eps.iter().map(|s| s.to_string()).collect()),
            x_label: "extension point",
            y: YAxis::Duration,
            y_label: "duration (log)",
            series,
            wide: true,
        },
        runs,
    ));
}

/// `tidegate report FILES… -o OUT`: reads and renders (the caller writes `OUT` whole or
/// not at all).
pub fn report(files: &[PathBuf]) -> Result<String, InputError> {
    Ok(render(&runs::load_all(files)?))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::{Value, json};

    const W: &str = "BenchmarkPerfScheduling/Gated/1Node_10GatedPods/sched";

    fn hist(metric: &str, labels: Value, p: [f64; 3]) -> Value {
        let mut l = json!({"Metric": metric, "Name": W, "estimator": "exact"});
        for (k, v) in labels.as_object().unwrap() {
            l[k] = v.clone();
        }
        json!({"unit": "ms", "labels": l,
               "data": {"Perc50": p[0], "Perc90": p[1], "Perc95": p[1], "Perc99": p[2]}})
    }

    /// A results file as `run --data-items-dir` writes it, by hand: throughput `avg` against
    /// a threshold of 540 pods/s, PreEnqueue 20/22/35 µs, attempts 388 µs/603 µs/1.5 ms.
    fn results(avg: f64) -> Value {
        let pe = json!({"extension_point": "PreEnqueue"});
        json!({
            "version": "v1",
            "dataItems": [
                {"unit": "pods/s", "labels": {"Metric": "SchedulingThroughput", "Name": W},
                 "data": {"Average": avg, "AverageThreshold": 540.0, "Perc50": 19000.0,
                          "Perc90": 20300.0, "Perc95": 20400.0, "Perc99": 20500.0}},
                hist(EXTENSION_POINT_METRIC, pe.clone(), [0.02, 0.022, 0.035]),
                hist(EXTENSION_POINT_METRIC, json!({"extension_point": "PreEnqueue",
                     "estimator": "buckets"}), [0.1, 0.1, 0.1]),
                hist(EXTENSION_POINT_METRIC, json!({"extension_point": "Filter"}),
                     [0.01, 0.02, 0.03]),
                hist(names::SCHEDULING_ATTEMPT_DURATION, json!({}), [0.387583, 0.602623, 1.5]),
                {"unit": "MB", "data": {"Max": 110.4, "KBPerPod": 18.8},
                 "labels": {"Metric": "tidegate_peak_rss",
                            "Name": "BenchmarkPerfScheduling/Gated/1Node_10GatedPods"}}
            ],
            "tidegateTimeSeries": [{"name": W,
                "throughput": [[0.5, 100.0], [1.0, 200.0]],
                "pending": [{"t": 0.0, "active": 5, "backoff": 0, "unschedulable": 0, "gated": 10},
                            {"t": 1.0, "active": 0, "backoff": 0, "unschedulable": 0, "gated": 10}]}],
            "tidegateRun": {"version": "0.1.0", "commit": "abc1234", "cpuModel": "Test CPU",
                            "cpus": 2, "threads": null, "seed": 1, "clock": "real"}
        })
    }

    /// Two runs in one folder, their names alike up to the time (as `--data-items-dir`
    /// names them); the first passes its threshold, the second fails it.
    fn two_runs(dir: &std::path::Path) -> (Vec<PathBuf>, String) {
        let files: Vec<PathBuf> = [("22:00:00", 18365.38), ("22:05:00", 300.0)]
            .iter()
            .map(|(t, avg)| {
                let f = dir.join(format!(
                    "BenchmarkPerfScheduling_benchmark_misc_2026-11-23T{t}Z.json"
                ));
                std::fs::write(&f, results(*avg).to_string()).unwrap();
                f
            })
            .collect();
        let html = report(&files).unwrap();
        (files, html)
    }

    /// The cells' texts of the table row that names `run`.
    fn row_of(html: &str, run: &str) -> Vec<String> {
        let summary = html
            .split("<tbody>")
            .nth(1)
            .unwrap()
            .split("</tbody>")
            .next()
            .unwrap();
        let row = summary
            .split("<tr>")
            .find(|r| r.contains(&format!(">{run}<")))
            .unwrap_or_else(|| panic!("no row for {run}: {summary}"));
        row.split("<td")
            .skip(1)
            .map(|c| {
                let inner = c.split_once('>').unwrap().1.split("</td>").next().unwrap();
                // Tags out (the names carry spans and <wbr>).
                let mut text = String::new();
                let mut in_tag = false;
                for ch in inner.chars() {
                    match ch {
                        '<' => in_tag = true,
                        '>' => in_tag = false,
                        c if !in_tag => text.push(c),
                        _ => {}
                    }
                }
                text.replace("&gt;", ">")
                    .replace("&lt;", "<")
                    .replace("&amp;", "&")
            })
            .collect()
    }

    #[test]
    fn the_summary_table_holds_the_numbers_first() {
        let dir = tempfile::tempdir().unwrap();
        let (files, html) = two_runs(dir.path());
        let first = row_of(&html, "2026-11-23T22:00:00Z");
        // The window's cell spans both runs' rows: it leads the first row only.
        assert_eq!(
            first,
            [
                "Gated/1Node_10GatedPods/sched",
                "2026-11-23T22:00:00Z",
                "18,365",
                "19,000",
                "20,300",
                "20,500",
                "> 540",
                "pass",
                "20.0 µs",
                "22.0 µs",
                "35.0 µs",
                "388 µs",
                "603 µs",
                "1.50 ms",
                "110 MB",
                "1.00×",
            ]
        );
        let second = row_of(&html, "2026-11-23T22:05:00Z");
        assert_eq!(
            &second[..7],
            [
                "2026-11-23T22:05:00Z",
                "300",
                "19,000",
                "20,300",
                "20,500",
                "> 540",
                "FAIL"
            ]
        );
        assert_eq!(second.last().unwrap(), "0.02×");
        let table = html.find("<table class=\"summary\"").unwrap();
        assert!(
            table < html.find("<svg").unwrap(),
            "the table comes before the charts"
        );
        assert!(html.contains("<code>") && html.contains(&esc(&files[0].display().to_string())));
        assert!(html.contains("Test CPU × 2, threads auto"), "provenance");
        assert!(!scientific(&html));
    }

    #[test]
    fn legends_tell_runs_apart_and_hover_shows_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let (files, html) = two_runs(dir.path());
        for (f, label) in files
            .iter()
            .zip(["2026-11-23T22:00:00Z", "2026-11-23T22:05:00Z"])
        {
            let full = esc(&f.display().to_string());
            let legend = format!("<title>{full}</title>");
            let n = html.matches(&legend).count();
            // Throughput, active, gated, PreEnqueue, attempt, extension points.
            assert_eq!(n, 6, "{legend} in every chart's legend");
            let entry = html
                .split(&legend)
                .nth(1)
                .unwrap()
                .split("</g>")
                .next()
                .unwrap();
            assert!(entry.contains(&format!(">{label}</text>")), "{entry}");
        }
        // Each run its colour, in every chart.
        assert!(html.matches("stroke=\"#1f77b4\"").count() >= 6);
        assert!(html.matches("stroke=\"#ff7f0e\"").count() >= 6);
    }

    #[test]
    fn the_page_is_self_contained_and_fits_1280_px() {
        let dir = tempfile::tempdir().unwrap();
        let (_, html) = two_runs(dir.path());
        assert!(!html.contains("<script"), "no scripts");
        assert!(!html.contains("url(") && !html.contains("@import") && !html.contains("@font"));
        let urls = html.matches("http").count();
        let ns = html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count();
        assert_eq!(urls, ns, "no URL but the SVG namespace");
        for w in html.split("<svg width=\"").skip(1) {
            let w: u32 = w.split('"').next().unwrap().parse().unwrap();
            assert!(w <= chart::WIDE, "a chart {w} px wide");
        }
        assert!(html.contains("max-width:1232px"));
        assert!(html.contains("The backoff and unschedulable queue stayed empty"));
    }

    /// A number in scientific notation (`8.250e-2`, `1E5`) in `t`: digits and points, an
    /// `e`, an optional sign, digits (so `#e4e4e4` or `T22:00` are not).
    pub(crate) fn scientific_text(t: &str) -> bool {
        t.split(|c: char| !(c.is_ascii_alphanumeric() || "+-.".contains(c)))
            .any(|tok| {
                let Some((m, e)) = tok.split_once(['e', 'E']) else {
                    return false;
                };
                let e = e.strip_prefix(['+', '-']).unwrap_or(e);
                m.starts_with(|c: char| c.is_ascii_digit())
                    && m.chars().all(|c| c.is_ascii_digit() || c == '.')
                    && !e.is_empty()
                    && e.chars().all(|c| c.is_ascii_digit())
            })
    }

    /// A number in scientific notation in the text of `html` (between tags; attributes are
    /// left out).
    pub(crate) fn scientific(html: &str) -> bool {
        html.split('<')
            .filter_map(|s| s.split_once('>').map(|(_, text)| text))
            .any(scientific_text)
    }

    #[test]
    fn scientific_notation_is_recognised() {
        assert!(scientific_text("8.250e-2") && scientific_text("1E5"));
        assert!(!scientific_text("10 µs") && !scientific_text("Score"));
        assert!(!scientific_text("#e4e4e4 1e4e") && scientific_text("(3e+5)"));
        assert!(scientific("<text x=\"1\">8.250e-2</text>"));
        assert!(!scientific("<svg width=\"1e5\"><text>1 ms</text></svg>"));
    }
}
