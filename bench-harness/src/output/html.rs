//! `tidegate report`: one self-contained HTML file (inline SVG, no scripts, no network) from
//! one or more results files (`--data-items-dir` output):
//!
//! - per collection window, throughput over time (one line per results file);
//! - the pending-pods gauges over time, active/backoff/unschedulable in one chart and gated
//!   pods in another (their scale is often a thousand times larger);
//! - the percentile curves (p50, p90, p95, p99, exact estimator) of each extension point,
//!   PreEnqueue first;
//! - with several files, a run-against-run table: throughput and PreEnqueue p90, each run's
//!   ratio to the first.

use crate::error::InputError;
use crate::output::report::{DataItem, WindowSeries};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One results file.
pub struct Results {
    pub label: String,
    pub items: Vec<DataItem>,
    pub series: Vec<WindowSeries>,
}

/// Reads a results file (bad JSON is bad input, with its line and column).
pub fn load(path: &Path) -> Result<Results, InputError> {
    let f = crate::output::report::read_results(path, "")?;
    let (items, series) = (f.data_items, f.series);
    Ok(Results {
        label: path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        ),
        items,
        series,
    })
}

const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// An SVG line chart: `lines` of `(label, points)`; `log_y` plots log10 of positive values.
pub fn line_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    lines: &[(String, Vec<(f64, f64)>)],
    log_y: bool,
) -> String {
    let (w, h, ml, mr, mt, mb) = (640.0, 300.0, 70.0, 170.0, 30.0, 40.0);
    let ty = |y: f64| if log_y { y.max(1e-12).log10() } else { y };
    let pts: Vec<(f64, f64)> = lines
        .iter()
        .flat_map(|(_, p)| p.iter().map(|&(x, y)| (x, ty(y))))
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" role="img"><title>{}</title><text x="{ml}" y="18" font-size="14" font-weight="bold">{}</text>"#,
        esc(title),
        esc(title)
    );
    if pts.is_empty() {
        let _ = write!(
            svg,
            r#"<text x="{ml}" y="60" font-size="12">no data</text></svg>"#
        );
        return svg;
    }
    let (x0, x1, y0, y1) = bounds(&pts, log_y);
    let (pw, ph) = (w - ml - mr, h - mt - mb);
    let sx = |x: f64| ml + (x - x0) / (x1 - x0) * pw;
    let sy = |y: f64| mt + ph - (y - y0) / (y1 - y0) * ph;
    let _ = write!(
        svg,
        r##"<rect x="{ml}" y="{mt}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>"##
    );
    for i in 0..=4 {
        let v = y0 + (y1 - y0) * f64::from(i) / 4.0;
        let shown = if log_y { 10f64.powf(v) } else { v };
        let _ = write!(
            svg,
            r##"<line x1="{ml}" x2="{}" y1="{y}" y2="{y}" stroke="#eee"/><text x="{}" y="{}" font-size="10" text-anchor="end">{}</text>"##,
            ml + pw,
            ml - 4.0,
            sy(v) + 3.0,
            fmt_num(shown),
            y = sy(v)
        );
        let xv = x0 + (x1 - x0) * f64::from(i) / 4.0;
        let _ = write!(
            svg,
            r#"<text x="{}" y="{}" font-size="10" text-anchor="middle">{}</text>"#,
            sx(xv),
            mt + ph + 14.0,
            fmt_num(xv)
        );
    }
    let y_title = if log_y {
        format!("{y_label} (log)")
    } else {
        y_label.to_string()
    };
    let _ = write!(
        svg,
        r#"<text x="{}" y="{}" font-size="11" text-anchor="middle">{}</text><text x="12" y="{}" font-size="11" transform="rotate(-90 12 {})" text-anchor="middle">{}</text>"#,
        ml + pw / 2.0,
        h - 6.0,
        esc(x_label),
        mt + ph / 2.0,
        mt + ph / 2.0,
        esc(&y_title)
    );
    for (i, (label, points)) in lines.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let path: Vec<String> = points
            .iter()
            .map(|&(x, y)| (x, ty(y)))
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .map(|(x, y)| format!("{:.1},{:.1}", sx(x), sy(y)))
            .collect();
        let _ = write!(
            svg,
            r#"<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{}"/>"#,
            path.join(" ")
        );
        if path.len() == 1 {
            let (x, y) = path[0].split_once(',').unwrap_or(("0", "0"));
            let _ = write!(svg, r#"<circle cx="{x}" cy="{y}" r="3" fill="{color}"/>"#);
        }
        let ly = mt + 12.0 + 16.0 * i as f64;
        let _ = write!(
            svg,
            r#"<rect x="{}" y="{}" width="10" height="10" fill="{color}"/><text x="{}" y="{}" font-size="11">{}</text>"#,
            ml + pw + 10.0,
            ly - 9.0,
            ml + pw + 24.0,
            ly,
            esc(label)
        );
    }
    svg.push_str("</svg>");
    svg
}

/// The plotted ranges `(x0, x1, y0, y1)` of `pts` (never empty): a linear y axis starts at
/// 0 or below; an empty range is widened to 1.
fn bounds(pts: &[(f64, f64)], log_y: bool) -> (f64, f64, f64, f64) {
    let (mut x0, mut x1) = (f64::MAX, f64::MIN);
    let (mut y0, mut y1) = (f64::MAX, f64::MIN);
    for &(x, y) in pts {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if !log_y {
        y0 = y0.min(0.0);
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    if y1 <= y0 {
        y1 = y0 + 1.0;
    }
    (x0, x1, y0, y1)
}

fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3e}")
    }
}

fn metric<'a>(items: &'a [DataItem], m: &str) -> impl Iterator<Item = &'a DataItem> + 'a {
    let m = m.to_string();
    items
        .iter()
        .filter(move |i| i.labels.get("Metric") == Some(&m))
}

/// The report page.
pub fn render(runs: &[Results]) -> String {
    let mut body = String::new();
    // Run-against-run table.
    if runs.len() > 1 {
        runs_compared(&mut body, runs);
    }
    windows(&mut body, runs);
    extension_points(&mut body, runs);
    let files: Vec<String> = runs.iter().map(|r| esc(&r.label)).collect();
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>tidegate report</title><style>body{{font-family:sans-serif;margin:20px}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:3px 8px;text-align:right}}svg{{display:block;margin:8px 0}}</style></head><body><h1>tidegate report</h1><p>{}</p>{body}</body></html>\n",
        files.join(", ")
    )
}

/// The run-against-run table (with several runs): each window's throughput per run and
/// against the first run.
fn runs_compared(body: &mut String, runs: &[Results]) {
    body.push_str("<h2>Runs compared</h2><table><tr><th>window</th><th>run</th><th>throughput Average (pods/s)</th><th>Perc50</th><th>PreEnqueue p90 (ns)</th><th>Average vs first run</th></tr>");
    let mut names: Vec<String> = runs
        .iter()
        .flat_map(|r| metric(&r.items, "SchedulingThroughput"))
        .filter_map(|i| i.labels.get("Name").cloned())
        .collect();
    names.sort();
    names.dedup();
    for name in names {
        let mut first = None;
        for r in runs {
            let tp = metric(&r.items, "SchedulingThroughput")
                .find(|i| i.labels.get("Name") == Some(&name));
            let avg = tp.and_then(|i| i.data.get("Average").copied());
            let p50 = tp.and_then(|i| i.data.get("Perc50").copied());
            let pe = metric(&r.items, crate::output::report::EXTENSION_POINT_METRIC)
                .find(|i| {
                    i.labels.get("Name") == Some(&name)
                        && i.labels.get("extension_point").map(String::as_str) == Some("PreEnqueue")
                        && i.labels.get("estimator").map(String::as_str) == Some("exact")
                })
                .and_then(|i| i.data.get("Perc90").copied());
            if first.is_none() {
                first = avg;
            }
            let ratio = match (first, avg) {
                (Some(f), Some(a)) if f > 0.0 => format!("{:.3}", a / f),
                _ => "-".into(),
            };
            let _ = write!(
                body,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&name),
                esc(&r.label),
                avg.map_or("-".into(), |v| format!("{v:.0}")),
                p50.map_or("-".into(), |v| format!("{v:.0}")),
                pe.map_or("-".into(), |v| format!("{:.0}", v * 1e6)),
                ratio
            );
        }
    }
    body.push_str("</table>");
}

/// Per window: throughput and pending pods over time.
fn windows(body: &mut String, runs: &[Results]) {
    let mut windows: Vec<String> = runs
        .iter()
        .flat_map(|r| r.series.iter().map(|s| s.name.clone()))
        .collect();
    windows.sort();
    windows.dedup();
    for w in &windows {
        let _ = write!(body, "<h2>{}</h2>", esc(w));
        let of = |r: &Results| r.series.iter().find(|s| &s.name == w).cloned();
        let tp: Vec<(String, Vec<(f64, f64)>)> = runs
            .iter()
            .filter_map(|r| of(r).map(|s| (r.label.clone(), s.throughput)))
            .collect();
        body.push_str(&line_chart(
            "Throughput over time",
            "seconds into the window",
            "pods/s",
            &tp,
            false,
        ));
        for r in runs {
            let Some(s) = of(r) else { continue };
            let pick = |f: fn(&crate::output::report::PendingSample) -> u64| -> Vec<(f64, f64)> {
                s.pending.iter().map(|p| (p.t, f(p) as f64)).collect()
            };
            let queues = vec![
                ("active".to_string(), pick(|p| p.active)),
                ("backoff".to_string(), pick(|p| p.backoff)),
                ("unschedulable".to_string(), pick(|p| p.unschedulable)),
            ];
            let suffix = if runs.len() > 1 {
                format!(" ({})", r.label)
            } else {
                String::new()
            };
            body.push_str(&line_chart(
                &format!("Pending pods{suffix}"),
                "seconds",
                "pods",
                &queues,
                false,
            ));
            body.push_str(&line_chart(
                &format!("Gated pods{suffix}"),
                "seconds",
                "pods",
                &[("gated".to_string(), pick(|p| p.gated))],
                false,
            ));
        }
    }
}

/// Extension-point percentile curves, PreEnqueue first.
fn extension_points(body: &mut String, runs: &[Results]) {
    body.push_str("<h2>Extension points: percentile curves (exact estimator)</h2>");
    let order = [
        "PreEnqueue",
        "PreFilter",
        "Filter",
        "PostFilter",
        "PreScore",
        "Score",
        "Reserve",
        "Permit",
        "PreBind",
        "Bind",
        "PostBind",
        "Unreserve",
    ];
    for ep in order {
        let mut lines = vec![];
        for r in runs {
            for i in metric(&r.items, crate::output::report::EXTENSION_POINT_METRIC).filter(|i| {
                i.labels.get("extension_point").map(String::as_str) == Some(ep)
                    && i.labels.get("estimator").map(String::as_str) == Some("exact")
            }) {
                let pts: Vec<(f64, f64)> = [
                    ("Perc50", 50.0),
                    ("Perc90", 90.0),
                    ("Perc95", 95.0),
                    ("Perc99", 99.0),
                ]
                .iter()
                .filter_map(|(k, x)| i.data.get(*k).map(|v| (*x, v * 1e6)))
                .collect();
                let window = i
                    .labels
                    .get("Name")
                    .map_or("", |n| n.rsplit('/').next().unwrap_or(""));
                let label = if runs.len() > 1 {
                    format!("{} {window}", r.label)
                } else {
                    window.to_string()
                };
                lines.push((label, pts));
            }
        }
        if !lines.is_empty() {
            body.push_str(&line_chart(
                &format!("{ep} duration"),
                "percentile",
                "ns",
                &lines,
                true,
            ));
        }
    }
}

/// `tidegate report FILES… -o OUT`: reads, renders, writes `OUT` whole or not at all.
pub fn report(files: &[PathBuf]) -> Result<String, InputError> {
    let runs = files
        .iter()
        .map(|f| load(f))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(render(&runs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chart_scales_its_points_and_names_its_lines() {
        let svg = line_chart(
            "T",
            "x",
            "y",
            &[
                ("a".into(), vec![(0.0, 0.0), (10.0, 100.0)]),
                ("b<".into(), vec![(5.0, 50.0)]),
            ],
            false,
        );
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        // x 0..10 over 400 px from 70; y 0..100 over 230 px from 30.
        assert!(svg.contains(r#"points="70.0,260.0 470.0,30.0""#), "{svg}");
        assert!(svg.contains("b&lt;"), "labels are escaped");
        assert!(
            svg.contains("<circle"),
            "a one-point line is drawn as a dot"
        );
        assert!(line_chart("E", "x", "y", &[], false).contains("no data"));
    }
}
