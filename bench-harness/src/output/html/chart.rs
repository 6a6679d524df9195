//! The report's charts, drawn by plotters' SVG backend into strings that the page inlines:
//! ticks chosen and labelled in human units (no scientific notation, whole pods), one colour
//! per run, y ranges padded so a flat series (zeros included) lies inside the frame, sampled
//! gauges drawn as steps with a marker per sample, and a legend naming each run briefly
//! with its full name in an SVG `<title>` (shown on hover).

use super::esc;
use super::runs::{COLORS, Results, color_hex};
use super::units::{count, duration_tick, linear_ticks, log_ticks};
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::*;
use std::fmt::Write as _;
use std::ops::Range;

/// The x axis.
pub enum XAxis {
    /// Seconds into the window.
    Time,
    /// Named places `0..n` (extension points, percentiles).
    Category(Vec<String>),
}

/// The y axis.
#[derive(Clone, Copy, PartialEq)]
pub enum YAxis {
    /// pods/s: 0, 5k, 10k.
    Rate,
    /// Pods: whole numbers only.
    Pods,
    /// Seconds, log scale, labelled in ns/µs/ms/s.
    Duration,
}

/// One run's data in a chart.
pub enum Draw {
    /// A line through the points (with markers while they are few).
    Line(Vec<(f64, f64)>),
    /// A sampled gauge: it holds each value until the next sample; a marker per sample.
    Steps(Vec<(f64, f64)>),
    /// Per category `x`: a bar from p50 to p99 with a dot at p90.
    Ranges(Vec<(f64, [f64; 3])>),
}

/// A chart: its title, axes and one [`Draw`] per run (the run's index picks its colour).
pub struct Chart {
    pub title: String,
    pub x: XAxis,
    pub x_label: &'static str,
    pub y: YAxis,
    pub y_label: &'static str,
    pub series: Vec<(usize, Draw)>,
    /// Two chart widths: a full row.
    pub wide: bool,
}

impl Chart {
    /// A pending-pods gauge over the window's time, in whole pods.
    pub fn gauge(title: &str, series: Vec<(usize, Draw)>) -> Chart {
        Chart {
            title: title.into(),
            x: XAxis::Time,
            x_label: "time into the window",
            y: YAxis::Pods,
            y_label: "pods",
            series,
            wide: false,
        }
    }
}

/// One chart's width; two fit a row of a 1280 px page.
pub const WIDTH: u32 = 600;
/// A chart a row wide.
pub const WIDE: u32 = 1212;
// Two charts and the 12 px gap fill a row of the page's 1232 px.
const _: () = assert!(2 * WIDTH + 12 <= WIDE && WIDE <= 1232);
const HEIGHT: u32 = 300;
/// The legend's strip below the plot.
const LEGEND: u32 = 28;
/// Lines with at most this many points get a marker on each.
const MARKED: usize = 40;

/// A rendered chart: the SVG and its plot area in pixels `(left, top, right, bottom)`.
pub struct Rendered {
    pub svg: String,
    pub plot: (i32, i32, i32, i32),
}

/// An axis scale with the ticks chosen here (plotters' own pick `2.5e-2` and the like):
/// linear or log over `lo..hi`.
pub struct Scale {
    lo: f64,
    hi: f64,
    log: bool,
    ticks: Vec<f64>,
}

impl Scale {
    /// Where `v` lies along the scale, 0 at `lo` and 1 at `hi`.
    fn fraction(&self, v: f64) -> f64 {
        let t = |x: f64| if self.log { x.ln() } else { x };
        (t(v) - t(self.lo)) / (t(self.hi) - t(self.lo))
    }
}

impl Ranged for Scale {
    type ValueType = f64;
    type FormatOption = DefaultFormatting;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let f = self.fraction(*v);
        let len = f64::from(limit.1 - limit.0);
        if !f.is_finite() {
            return if f > 0.0 { limit.1 } else { limit.0 };
        }
        limit.0 + (len * f + 1e-3).floor() as i32
    }

    fn key_points<H: KeyPointHint>(&self, _: H) -> Vec<f64> {
        self.ticks.clone()
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

impl Draw {
    fn ys(&self) -> Vec<f64> {
        match self {
            Draw::Line(p) | Draw::Steps(p) => p.iter().map(|p| p.1).collect(),
            Draw::Ranges(r) => r.iter().flat_map(|(_, v)| *v).collect(),
        }
    }

    fn xs(&self) -> Vec<f64> {
        match self {
            Draw::Line(p) | Draw::Steps(p) => p.iter().map(|p| p.0).collect(),
            Draw::Ranges(r) => r.iter().map(|p| p.0).collect(),
        }
    }
}

/// The values a y axis can show (finite; positive on a log axis).
fn plottable(y: YAxis, v: f64) -> bool {
    v.is_finite() && (y != YAxis::Duration || v > 0.0)
}

/// The y range: from 0 (linear) or the smallest value (log), padded by 6 % of the span (a
/// factor on a log axis) so no series lies on the frame; an empty span becomes 1 pod (or a
/// fifth of the value) first.
pub fn y_range(y: YAxis, ys: &[f64]) -> (f64, f64) {
    let (mut lo, mut hi) = ys
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    if y == YAxis::Duration {
        if hi <= lo {
            return (lo / 2.0, hi * 2.0);
        }
        return (lo / 1.3, hi * 1.3);
    }
    lo = lo.min(0.0);
    if hi <= lo {
        hi = lo + if lo == 0.0 { 1.0 } else { lo.abs() / 5.0 };
    }
    let pad = (hi - lo) * 0.06;
    (lo - pad, hi + pad)
}

/// The x range and its ticks.
fn x_range(c: &Chart) -> (f64, f64, Vec<f64>) {
    match &c.x {
        XAxis::Category(names) => {
            let n = names.len().max(1);
            (-0.5, n as f64 - 0.5, (0..n).map(|i| i as f64).collect())
        }
        XAxis::Time => {
            let xs: Vec<f64> = c
                .series
                .iter()
                .flat_map(|(_, d)| d.xs())
                .filter(|x| x.is_finite())
                .collect();
            let lo = xs.iter().copied().fold(0.0, f64::min);
            let mut hi = xs.iter().copied().fold(lo, f64::max);
            if hi <= lo {
                hi = lo + 1.0;
            }
            let pad = (hi - lo) * 0.02;
            let ticks = linear_ticks(lo, hi, 6, false);
            (lo - pad, hi + pad, ticks)
        }
    }
}

/// The chart as a `<figure>` with an inline SVG, or a line saying there is no data.
pub fn figure(c: &Chart, runs: &[Results]) -> String {
    let class = if c.wide { "chart wide" } else { "chart" };
    match render(c, runs) {
        Ok(r) => format!("<figure class=\"{class}\">{}</figure>", r.svg),
        Err(e) => format!(
            "<figure class=\"{class} empty\"><b>{}</b>: {}</figure>",
            esc(&c.title),
            esc(&e)
        ),
    }
}

/// Draws the chart; `Err` when it has nothing to show (or plotters failed).
pub fn render(c: &Chart, runs: &[Results]) -> Result<Rendered, String> {
    let ys: Vec<f64> = c
        .series
        .iter()
        .flat_map(|(_, d)| d.ys())
        .filter(|v| plottable(c.y, *v))
        .collect();
    if ys.is_empty() {
        return Err("no data".into());
    }
    let width = if c.wide { WIDE } else { WIDTH };
    let (x0, x1, x_ticks) = x_range(c);
    let (y0, y1) = y_range(c.y, &ys);
    let mut svg = String::new();
    let plot = {
        let root = SVGBackend::with_string(&mut svg, (width, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let (top, _) = root.split_vertically(HEIGHT - LEGEND);
        let mut b = ChartBuilder::on(&top);
        b.caption(&c.title, ("sans-serif", 22))
            .margin(8)
            .margin_right(24)
            .x_label_area_size(40)
            .y_label_area_size(70);
        let xs = Scale {
            lo: x0,
            hi: x1,
            log: false,
            ticks: x_ticks,
        };
        let log = c.y == YAxis::Duration;
        let ys = Scale {
            lo: y0,
            hi: y1,
            log,
            ticks: if log {
                log_ticks(y0, y1)
            } else {
                linear_ticks(y0, y1, 5, c.y == YAxis::Pods)
            },
        };
        let chart = b.build_cartesian_2d(xs, ys).map_err(|e| e.to_string())?;
        let plot = fill(c, chart)?;
        root.present().map_err(|e| e.to_string())?;
        plot
    };
    let legend = legend(c, runs, plot.0);
    if let Some(end) = svg.rfind("</svg>") {
        svg.insert_str(end, &legend);
    }
    Ok(Rendered { svg, plot })
}

type Chart2d<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<Scale, Scale>>;

/// The mesh and the series; returns the plot area in pixels.
fn fill(c: &Chart, mut chart: Chart2d<'_, '_>) -> Result<(i32, i32, i32, i32), String> {
    let y_fmt = |v: &f64| {
        if c.y == YAxis::Duration {
            duration_tick(*v)
        } else {
            count(*v)
        }
    };
    let x_fmt = |v: &f64| match &c.x {
        XAxis::Time => duration_tick(*v),
        XAxis::Category(names) => names
            .get(v.round().max(0.0) as usize)
            .cloned()
            .unwrap_or_default(),
    };
    chart
        .configure_mesh()
        .x_desc(c.x_label)
        .y_desc(c.y_label)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style(("sans-serif", 16))
        .axis_desc_style(("sans-serif", 16))
        .light_line_style(TRANSPARENT)
        .bold_line_style(BLACK.mix(0.12))
        .draw()
        .map_err(|e| e.to_string())?;
    let n = c.series.len();
    for (k, (run, d)) in c.series.iter().enumerate() {
        let (r, g, b) = COLORS[run % COLORS.len()];
        let color = RGBColor(r, g, b);
        let ok = |p: &&(f64, f64)| p.0.is_finite() && plottable(c.y, p.1);
        let err = |e: DrawingAreaErrorKind<_>| e.to_string();
        match d {
            Draw::Line(p) | Draw::Steps(p) => {
                let pts: Vec<(f64, f64)> = p.iter().filter(ok).copied().collect();
                let line = if matches!(d, Draw::Steps(_)) {
                    steps(&pts)
                } else {
                    pts.clone()
                };
                chart
                    .draw_series(LineSeries::new(line, color.stroke_width(2)))
                    .map_err(err)?;
                if pts.len() <= MARKED {
                    let dots = pts.iter().map(|p| Circle::new(*p, 4, color.filled()));
                    chart.draw_series(dots).map_err(err)?;
                }
            }
            Draw::Ranges(r) => {
                // Runs side by side within each category.
                let off = (k as f64 - (n as f64 - 1.0) / 2.0) * (0.6 / n as f64).min(0.15);
                for (x, [p50, p90, p99]) in r {
                    if ![p50, p90, p99].iter().all(|v| plottable(c.y, **v)) {
                        continue;
                    }
                    let x = x + off;
                    let bar = PathElement::new(vec![(x, *p50), (x, *p99)], color.stroke_width(3));
                    chart.draw_series(std::iter::once(bar)).map_err(err)?;
                    let ends = [*p50, *p99].map(|v| Circle::new((x, v), 3, color.stroke_width(2)));
                    chart.draw_series(ends).map_err(err)?;
                    let dot = Circle::new((x, *p90), 5, color.filled());
                    chart.draw_series(std::iter::once(dot)).map_err(err)?;
                }
            }
        }
    }
    let (xs, ys) = chart.plotting_area().get_pixel_range();
    Ok((xs.start, ys.start, xs.end, ys.end))
}

/// A gauge's samples as a step line: each value held until the next sample.
pub fn steps(pts: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(pts.len() * 2);
    for (i, p) in pts.iter().enumerate() {
        if i > 0 {
            out.push((p.0, pts[i - 1].1));
        }
        out.push(*p);
    }
    out
}

/// The legend strip: per run in the chart, its colour and short label, the full name in a
/// `<title>` (hover); the ranges' key after them.
fn legend(c: &Chart, runs: &[Results], left: i32) -> String {
    let y = HEIGHT - LEGEND / 2;
    let mut x = f64::from(left.max(8));
    let mut out = String::new();
    let mut seen = vec![];
    for (run, _) in &c.series {
        if seen.contains(run) {
            continue;
        }
        seen.push(*run);
        let (label, full) = runs
            .get(*run)
            .map_or((format!("run {}", run + 1), String::new()), |r| {
                (r.label.clone(), r.full.clone())
            });
        let color = color_hex(*run);
        let _ = write!(
            out,
            r#"<g class="legend"><title>{}</title><line x1="{x}" y1="{y}" x2="{}" y2="{y}" stroke="{color}" stroke-width="3"/><circle cx="{}" cy="{y}" r="4" fill="{color}"/><text x="{}" y="{y}" dy="0.35em" font-family="sans-serif" font-size="14">{}</text></g>"#,
            esc(&full),
            x + 22.0,
            x + 11.0,
            x + 28.0,
            esc(&label)
        );
        x += 28.0 + 8.0 * label.chars().count() as f64 + 18.0;
    }
    if c.series.iter().any(|(_, d)| matches!(d, Draw::Ranges(_))) {
        let _ = write!(
            out,
            r##"<text x="{x}" y="{y}" dy="0.35em" font-family="sans-serif" font-size="13" fill="#555">bar: p50 to p99, dot: p90</text>"##
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `points="…"` of the SVG's polylines in the colour of run `run` (the series, not
    /// the axes), as pixel pairs.
    pub(crate) fn polylines(svg: &str, run: usize) -> Vec<Vec<(f64, f64)>> {
        let stroke = format!("stroke=\"{}\"", color_hex(run)).to_uppercase();
        svg.split("<polyline")
            .skip(1)
            .filter_map(|p| p.split('>').next())
            .filter(|p| p.to_uppercase().contains(&stroke))
            .filter_map(|p| {
                let pts = p.split("points=\"").nth(1)?.split('"').next()?;
                Some(
                    pts.split_whitespace()
                        .filter_map(|xy| xy.split_once(','))
                        .map(|(x, y)| (x.parse().unwrap(), y.parse().unwrap()))
                        .collect(),
                )
            })
            .collect()
    }

    /// The texts of the SVG (tick labels, titles), trimmed.
    pub(crate) fn texts(svg: &str) -> Vec<String> {
        svg.split('<')
            .filter_map(|s| s.split_once('>').map(|(_, t)| t.trim().to_string()))
            .filter(|t| !t.is_empty())
            .collect()
    }

    fn gauge(series: Vec<(usize, Draw)>) -> Chart {
        Chart::gauge("Gated pods", series)
    }

    #[test]
    fn flat_series_lie_inside_the_plot_area() {
        // The old report drew a flat gated series on the frame, where no one saw it.
        for v in [0.0, 7.0] {
            let c = gauge(vec![
                (0, Draw::Steps(vec![(0.0, v), (0.5, v), (1.0, v)])),
                (1, Draw::Line(vec![(0.0, v), (1.0, v)])),
            ]);
            let r = render(&c, &[]).unwrap();
            let (_, top, _, bottom) = r.plot;
            let lines = [polylines(&r.svg, 0), polylines(&r.svg, 1)].concat();
            assert_eq!(lines.len(), 2, "{}", r.svg);
            for (x, y) in lines.iter().flatten() {
                assert!(
                    f64::from(top) + 5.0 < *y && *y < f64::from(bottom) - 5.0,
                    "({x}, {y}) on or off the frame {:?} for a flat {v}",
                    r.plot
                );
            }
        }
        assert_eq!(y_range(YAxis::Pods, &[0.0, 0.0]), (-0.06, 1.06));
        let (lo, hi) = y_range(YAxis::Duration, &[2e-5, 2e-5]);
        assert!(lo < 2e-5 && hi > 2e-5);
    }

    #[test]
    fn few_samples_are_steps_with_markers_not_a_diagonal() {
        assert_eq!(
            steps(&[(0.0, 10.0), (1.0, 0.0)]),
            [(0.0, 10.0), (1.0, 10.0), (1.0, 0.0)]
        );
        let c = gauge(vec![(0, Draw::Steps(vec![(0.0, 10.0), (1.0, 0.0)]))]);
        let r = render(&c, &[]).unwrap();
        let line = &polylines(&r.svg, 0)[0];
        assert_eq!(line.len(), 3, "a step, not a diagonal: {line:?}");
        assert_eq!(line[0].1, line[1].1, "held level until the next sample");
        assert_eq!(line[1].0, line[2].0, "then straight down");
        let markers = r.svg.matches("<circle").count();
        assert_eq!(markers, 2 + 1, "a marker per sample (+ the legend's)");
    }

    #[test]
    fn ticks_are_human_and_pods_whole() {
        let c = Chart {
            title: "Throughput".into(),
            x: XAxis::Time,
            x_label: "time into the window",
            y: YAxis::Pods,
            y_label: "pods",
            series: vec![(0, Draw::Line(vec![(0.0, 0.0), (0.0825, 3.0)]))],
            wide: false,
        };
        let svg = render(&c, &[]).unwrap().svg;
        let t = texts(&svg);
        for l in ["0", "20 ms", "80 ms", "1", "3", "pods"] {
            assert!(t.contains(&l.to_string()), "{l} missing: {t:?}");
        }
        assert!(!t.iter().any(|l| l.contains('.')), "fractional pods: {t:?}");
        assert!(!super::super::tests::scientific(&svg), "{svg}");
        let d = Chart {
            title: "PreEnqueue".into(),
            x: XAxis::Category(vec!["p50".into(), "p90".into(), "p99".into()]),
            x_label: "percentile",
            y: YAxis::Duration,
            y_label: "duration",
            series: vec![(1, Draw::Line(vec![(0.0, 2e-5), (1.0, 3.5e-5), (2.0, 1e-3)]))],
            wide: false,
        };
        let svg = render(&d, &[]).unwrap().svg;
        let t = texts(&svg);
        for l in ["p50", "p99", "100 µs", "1 ms"] {
            assert!(t.contains(&l.to_string()), "{l} missing: {t:?}");
        }
        assert!(!super::super::tests::scientific(&svg), "{svg}");
        assert_eq!(polylines(&svg, 1).len(), 1, "run 2's colour: {svg}");
        assert!(render(&gauge(vec![]), &[]).is_err(), "no data");
    }
}
