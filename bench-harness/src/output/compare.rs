//! `tidegate compare`: baseline runs against current runs of the same workloads, as a CI gate.
//!
//! Each side is one or more perf-dash data-item files (a file, or a folder of them: several
//! runs). Items are matched by their labels (all but `SamplingInterval`, which adapts to each
//! run); for each selected metric and statistic the **median over the side's runs** is
//! compared. The direction comes from the unit: `pods/s` higher is better; `ms`, `s`, `MB` and
//! `MB/min` lower is better. A ratio worse than `--max-regression` is a regression when the
//! runs tell the sides apart (Mann–Whitney U, [`super::stats`]) and the change is more than
//! one step of what produced the values ([`super::resolution`]: the sampling interval, the
//! histogram's bucket at those values).
//!
//! Both sides must hold the same workloads (the `BenchmarkPerfScheduling/<case>/<workload>`
//! prefixes of their `Name` labels): comparing different workloads is refused.

use crate::error::InputError;
use crate::output::report::DataItem;
use crate::output::resolution::Quantum;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Which way a metric is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    HigherIsBetter,
    LowerIsBetter,
}

impl Direction {
    /// From a data item's unit; `None` for units with no better side (counts).
    pub fn of_unit(unit: &str) -> Option<Direction> {
        match unit {
            "pods/s" => Some(Direction::HigherIsBetter),
            "ms" | "s" | "MB" | "MB/min" | "ns" => Some(Direction::LowerIsBetter),
            _ => None,
        }
    }
}

/// A metric to compare: a `Metric` label value, labels the items must carry, and the
/// statistics (data keys) to take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetricSel {
    pub metric: String,
    /// `label=value` pairs an item must carry (empty: any item of the metric).
    pub labels: Vec<(String, String)>,
    /// Empty: every statistic the items carry.
    pub stats: Vec<String>,
}

impl MetricSel {
    /// `NAME`, `NAME:STAT[,STAT...]`, with an optional `{label=value,...}` after the name:
    /// `scheduler_framework_extension_point_duration_seconds{extension_point=PreEnqueue}:Perc90`.
    pub fn parse(s: &str) -> Result<MetricSel, String> {
        let (head, stats_part) = match s.rfind('}') {
            Some(close) => match s[close..].split_once(':') {
                Some((_, st)) => (&s[..=close], Some(st)),
                None => (s, None),
            },
            None => match s.split_once(':') {
                Some((h, st)) => (h, Some(st)),
                None => (s, None),
            },
        };
        let (metric, labels) = match head.split_once('{') {
            Some((m, rest)) => {
                let body = rest
                    .strip_suffix('}')
                    .ok_or_else(|| format!("{s:?}: a label list needs its closing brace"))?;
                let mut labels = vec![];
                for kv in body.split(',').map(str::trim).filter(|x| !x.is_empty()) {
                    let (k, v) = kv
                        .split_once('=')
                        .ok_or_else(|| format!("{s:?}: {kv:?} is not label=value"))?;
                    labels.push((k.trim().to_string(), v.trim().to_string()));
                }
                (m, labels)
            }
            None => (head, vec![]),
        };
        let stats: Vec<String> = stats_part
            .map(|st| {
                st.split(',')
                    .map(str::trim)
                    .filter(|x| !x.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        if metric.trim().is_empty() {
            return Err(format!(
                "{s:?}: a metric name is required (NAME or NAME:STAT)"
            ));
        }
        Ok(MetricSel {
            metric: metric.trim().to_string(),
            labels,
            stats,
        })
    }

    pub(crate) fn selects(&self, item: &DataItem) -> bool {
        item.labels.get("Metric") == Some(&self.metric)
            && self
                .labels
                .iter()
                .all(|(k, v)| item.labels.get(k) == Some(v))
    }

    /// The default gate: throughput (Average, Perc50) and the exact p90 of PreEnqueue.
    pub fn defaults() -> Vec<MetricSel> {
        vec![
            MetricSel {
                metric: "SchedulingThroughput".into(),
                labels: vec![],
                stats: vec!["Average".into(), "Perc50".into()],
            },
            MetricSel {
                metric: "scheduler_framework_extension_point_duration_seconds".into(),
                labels: vec![("extension_point".into(), "PreEnqueue".into())],
                stats: vec!["Perc90".into()],
            },
        ]
    }
}

/// One compared value.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The item's identity: `Name` then the other labels that tell items apart.
    pub item: String,
    pub metric: String,
    pub stat: String,
    pub unit: String,
    pub baseline: f64,
    pub current: f64,
    /// current / baseline.
    pub ratio: f64,
    pub verdict: Verdict,
    pub runs: (usize, usize),
    /// The spread of each side, as benchstat's `±`: the largest distance of a run from the
    /// median, relative to the median.
    pub spread: (f64, f64),
    /// The Mann–Whitney U test's two-sided p-value ([`super::stats`]).
    pub p: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Ok,
    Improved,
    Regression,
    /// Not significant (benchstat's `~`): the runs cannot tell the sides apart.
    NotSignificant,
}

/// Reads the data items of one side: each path is a data-items file or a folder of them
/// (`*.json`, sorted). Returns one item list per run.
pub fn load_side(paths: &[PathBuf]) -> Result<Vec<(PathBuf, Vec<DataItem>)>, InputError> {
    let mut files = vec![];
    for p in paths {
        if p.is_dir() {
            let mut inside: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| InputError::new(p, None, "", e.to_string()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "json"))
                .collect();
            inside.sort();
            if inside.is_empty() {
                return Err(InputError::new(
                    p,
                    None,
                    "",
                    "no *.json data-items file in this folder",
                ));
            }
            files.extend(inside);
        } else {
            files.push(p.clone());
        }
    }
    files
        .into_iter()
        .map(|f| {
            let items = read_items(&f)?;
            Ok((f, items))
        })
        .collect()
}

fn read_items(f: &Path) -> Result<Vec<DataItem>, InputError> {
    crate::output::report::read_results(f, "dataItems").map(|f| f.data_items)
}

/// The workloads a run holds: `BenchmarkPerfScheduling/<case>/<workload>` of its items' names.
pub fn workloads(items: &[DataItem]) -> BTreeSet<String> {
    items
        .iter()
        .filter_map(|i| i.labels.get("Name"))
        .map(|n| n.splitn(4, '/').take(3).collect::<Vec<_>>().join("/"))
        .collect()
}

/// The values `metrics` select in `run`: each selected item with its selector, statistic and
/// value. Histograms come twice (two estimators): only the exact estimator's are taken.
pub(crate) fn selected<'a>(
    run: &'a [DataItem],
    metrics: &'a [MetricSel],
) -> impl Iterator<Item = (&'a DataItem, &'a MetricSel, &'a String, f64)> + 'a {
    run.iter()
        .filter(|it| it.labels.get("estimator").is_none_or(|e| e != "buckets"))
        .filter_map(|it| metrics.iter().find(|m| m.selects(it)).map(|sel| (it, sel)))
        .flat_map(|(it, sel)| {
            it.data
                .iter()
                .filter(|(stat, _)| sel.stats.is_empty() || sel.stats.contains(*stat))
                .map(move |(stat, v)| (it, sel, stat, *v))
        })
}

/// Labels that vary between runs of the same workload and so do not identify an item.
const VOLATILE_LABELS: &[&str] = &["SamplingInterval"];

fn identity(i: &DataItem) -> String {
    let mut parts = vec![i.labels.get("Name").cloned().unwrap_or_default()];
    for (k, v) in &i.labels {
        if k == "Name"
            || k == "Metric"
            || VOLATILE_LABELS.contains(&k.as_str())
            || v == "not applicable"
        {
            continue;
        }
        parts.push(format!("{k}={v}"));
    }
    parts.join(" ")
}

/// benchstat's `±`: the largest distance of a value from the median, relative to it.
fn spread(v: &[f64], median: f64) -> f64 {
    if median == 0.0 {
        return 0.0;
    }
    v.iter()
        .map(|x| ((x - median) / median).abs())
        .fold(0.0, f64::max)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Every metric the user named is found, or the error names what is missing: the statistic
/// when the metric is there, else the metric.
fn check_selected<V>(
    metrics: &[MetricSel],
    values: &BTreeMap<(String, String, String), V>,
    available: &BTreeMap<String, BTreeSet<String>>,
) -> Result<(), String> {
    for m in metrics {
        if values.keys().any(|(metric, _, _)| metric == &m.metric) {
            continue;
        }
        return Err(match available.get(&m.metric) {
            Some(stats) => {
                let missing: Vec<String> = m
                    .stats
                    .iter()
                    .filter(|st| !stats.contains(*st))
                    .map(|st| format!("{st:?}"))
                    .collect();
                format!(
                    "statistic {} of metric {:?} is in neither side's data items (it has: {})",
                    missing.join(", "),
                    m.metric,
                    stats.iter().cloned().collect::<Vec<_>>().join(", ")
                )
            }
            None => format!("metric {:?} is in neither side's data items", m.metric),
        });
    }
    Ok(())
}

/// Compares the medians of the selected metrics. `max_regression` is a fraction (0.05 = 5 %).
/// An error when the sides hold different workloads, when a side is empty, when nothing
/// selected is found, when a selected metric has no direction, or (`strict`, for metrics the
/// user named) when a selected metric is found on neither side.
pub fn compare(
    baseline: &[Vec<DataItem>],
    current: &[Vec<DataItem>],
    metrics: &[MetricSel],
    max_regression: f64,
    strict: bool,
) -> Result<Vec<Row>, String> {
    if baseline.is_empty() || current.is_empty() {
        return Err("each side needs at least one data-items file".into());
    }
    let wl = |side: &[Vec<DataItem>]| -> BTreeSet<String> {
        side.iter().flat_map(|r| workloads(r)).collect()
    };
    for run in baseline.iter().chain(current) {
        if workloads(run) != wl(baseline) {
            return Err(format!(
                "refusing to compare different workloads: {:?} against {:?}",
                wl(baseline),
                workloads(run)
            ));
        }
    }
    // (metric, identity, stat) -> (unit, producer, values per side)
    type Key = (String, String, String);
    let mut values: BTreeMap<Key, (String, Quantum, Vec<f64>, Vec<f64>)> = BTreeMap::new();
    // Every statistic each metric has in the data items, to name what is missing.
    let mut available: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for it in baseline.iter().chain(current).flatten() {
        if let Some(m) = it.labels.get("Metric") {
            available
                .entry(m.clone())
                .or_default()
                .extend(it.data.keys().cloned());
        }
    }
    for (side, runs) in [(0, baseline), (1, current)] {
        for run in runs {
            for (it, sel, stat, v) in selected(run, metrics) {
                let e = values
                    .entry((sel.metric.clone(), identity(it), stat.clone()))
                    .or_insert_with(|| (it.unit.clone(), Quantum::Exact, vec![], vec![]));
                e.1 = std::mem::replace(&mut e.1, Quantum::Exact).coarser(Quantum::of(it, stat));
                if side == 0 {
                    e.2.push(v);
                } else {
                    e.3.push(v);
                }
            }
        }
    }
    if strict {
        check_selected(metrics, &values, &available)?;
    }
    if values.is_empty() {
        return Err("none of the selected metrics is in the data items".into());
    }
    let mut rows = vec![];
    for ((metric, item, stat), (unit, quantum, b, c)) in values {
        if b.is_empty() || c.is_empty() {
            continue;
        }
        let dir = Direction::of_unit(&unit)
            .ok_or_else(|| format!("metric {metric:?} (unit {unit:?}) has no better direction"))?;
        let (bm, cm) = (median(b.clone()), median(c.clone()));
        let p = super::stats::mann_whitney_p(&b, &c);
        // A change of at most one step of what produced the values (a sampling interval, a
        // histogram's bucket at those values) is never a regression.
        let step = quantum.step_at(bm).max(quantum.step_at(cm));
        let within_step = (cm - bm).abs() <= step;
        let ratio = if bm == 0.0 {
            if cm == 0.0 { 1.0 } else { f64::INFINITY }
        } else {
            cm / bm
        };
        let worse = match dir {
            Direction::HigherIsBetter => ratio < 1.0 - max_regression,
            Direction::LowerIsBetter => ratio > 1.0 + max_regression,
        };
        let better = match dir {
            Direction::HigherIsBetter => ratio > 1.0 + max_regression,
            Direction::LowerIsBetter => ratio < 1.0 - max_regression,
        };
        rows.push(Row {
            item,
            metric,
            stat,
            unit,
            baseline: bm,
            current: cm,
            ratio,
            verdict: if p >= super::stats::ALPHA {
                Verdict::NotSignificant
            } else if worse && !within_step {
                Verdict::Regression
            } else if better && !within_step {
                Verdict::Improved
            } else {
                Verdict::Ok
            },
            runs: (b.len(), c.len()),
            spread: (spread(&b, bm), spread(&c, cm)),
            p,
        });
    }
    Ok(rows)
}

/// The rows as a Markdown table.
pub fn markdown(rows: &[Row], max_regression: f64) -> String {
    let mut out = String::from(
        "| item | metric | stat | baseline | current | ratio | delta | verdict |\n|---|---|---|---:|---:|---:|---|---|\n",
    );
    for r in rows {
        let verdict = match r.verdict {
            Verdict::Ok => "ok",
            Verdict::Improved => "improved",
            Verdict::Regression => "**REGRESSION**",
            Verdict::NotSignificant => "~",
        };
        // benchstat's delta column: the change with its p-value and run counts, or `~`.
        let delta = if r.verdict == Verdict::NotSignificant {
            format!("~ (p={:.3} n={}+{})", r.p, r.runs.0, r.runs.1)
        } else {
            format!(
                "{:+.2}% (p={:.3} n={}+{})",
                (r.ratio - 1.0) * 100.0,
                r.p,
                r.runs.0,
                r.runs.1
            )
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} ± {:.0}% | {} ± {:.0}% | {:.3} | {delta} | {} |\n",
            r.item,
            r.metric,
            r.stat,
            fmt(r.baseline, &r.unit),
            r.spread.0 * 100.0,
            fmt(r.current, &r.unit),
            r.spread.1 * 100.0,
            r.ratio,
            verdict
        ));
    }
    let n = rows
        .iter()
        .filter(|r| r.verdict == Verdict::Regression)
        .count();
    let runs = rows.first().map_or((0, 0), |r| r.runs);
    out.push_str(&format!(
        "\n{} values compared (medians of {} baseline and {} current runs; Mann-Whitney U, α = 0.05, as benchstat), limit {:.1} %: {}\n",
        rows.len(),
        runs.0,
        runs.1,
        max_regression * 100.0,
        if n == 0 {
            "no regression".to_string()
        } else {
            format!("{n} regression(s)")
        }
    ));
    out
}

/// A value with its unit; durations in ms are shown in the unit that suits them.
fn fmt(v: f64, unit: &str) -> String {
    let num = |x: f64| {
        if x.abs() >= 100.0 {
            format!("{x:.0}")
        } else if x.abs() >= 1.0 {
            format!("{x:.2}")
        } else {
            format!("{x:.3}")
        }
    };
    if unit == "ms" && v != 0.0 && v.abs() < 1.0 {
        if v.abs() < 1e-3 {
            return format!("{} ns", num(v * 1e6));
        }
        return format!("{} µs", num(v * 1e3));
    }
    format!("{} {unit}", num(v))
}

/// `5%`, `5` or `0.05` (a fraction when below 1 and without `%`).
pub fn parse_limit(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, pct) = match t.strip_suffix('%') {
        Some(n) => (n, true),
        None => (t, false),
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a limit such as 5% or 0.05"))?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("{s:?}: the limit must be a non-negative number"));
    }
    Ok(if pct || v >= 1.0 { v / 100.0 } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(
        name: &str,
        metric: &str,
        unit: &str,
        data: &[(&str, f64)],
        extra: &[(&str, &str)],
    ) -> DataItem {
        let mut labels: BTreeMap<String, String> = extra
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        labels.insert("Name".into(), name.into());
        labels.insert("Metric".into(), metric.into());
        DataItem {
            data: data.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            unit: unit.into(),
            labels,
        }
    }

    fn run(avg: f64, p90_ns: f64, interval: &str) -> Vec<DataItem> {
        vec![
            item(
                "BenchmarkPerfScheduling/Basic/500Nodes/namespace-2",
                "SchedulingThroughput",
                "pods/s",
                &[("Average", avg), ("Perc50", avg)],
                &[("SamplingInterval", interval)],
            ),
            item(
                "BenchmarkPerfScheduling/Basic/500Nodes/namespace-2",
                "scheduler_framework_extension_point_duration_seconds",
                "ms",
                &[("Perc90", p90_ns / 1e6)],
                &[("extension_point", "PreEnqueue"), ("estimator", "exact")],
            ),
            item(
                "BenchmarkPerfScheduling/Basic/500Nodes/namespace-2",
                "scheduler_framework_extension_point_duration_seconds",
                "ms",
                &[("Perc90", 999.0)],
                &[("extension_point", "PreEnqueue"), ("estimator", "buckets")],
            ),
        ]
    }

    #[test]
    fn medians_and_directions_decide_the_verdict() {
        // Five runs a side, as benchstat needs to call a change significant.
        let base: Vec<_> = [1000.0, 1100.0, 900.0, 1050.0, 950.0]
            .iter()
            .zip([40.0, 50.0, 45.0, 45.0, 50.0])
            .map(|(&a, p)| run(a, p, "1s"))
            .collect();
        // Throughput median 1000 -> 880 (-12 %): a regression at 5 %; PreEnqueue p90 45 -> 20
        // ns: lower, improved. The sampling interval differs and is ignored.
        let cur: Vec<_> = [880.0, 870.0, 890.0, 860.0, 885.0]
            .iter()
            .zip([20.0, 20.0, 21.0, 19.0, 20.0])
            .map(|(&a, p)| run(a, p, "500ms"))
            .collect();
        let rows = compare(&base, &cur, &MetricSel::defaults(), 0.05, false).unwrap();
        let avg = rows.iter().find(|r| r.stat == "Average").unwrap();
        assert_eq!((avg.baseline, avg.current), (1000.0, 880.0));
        assert!(avg.p < 0.05, "{avg:?}");
        assert_eq!(avg.verdict, Verdict::Regression);
        assert!((avg.spread.0 - 0.1).abs() < 1e-9, "{avg:?}");
        let p90 = rows.iter().find(|r| r.stat == "Perc90").unwrap();
        assert!((p90.baseline - 45e-6).abs() < 1e-12, "{p90:?}");
        assert_eq!(p90.verdict, Verdict::Improved);
        // Only the exact estimator is compared.
        assert_eq!(rows.iter().filter(|r| r.stat == "Perc90").count(), 1);
        // At 15 % the throughput drop is within the limit.
        let rows = compare(&base, &cur, &MetricSel::defaults(), 0.15, false).unwrap();
        assert!(rows.iter().all(|r| r.verdict != Verdict::Regression));
        let md = markdown(
            &compare(&base, &cur, &MetricSel::defaults(), 0.05, false).unwrap(),
            0.05,
        );
        assert!(
            md.contains("**REGRESSION**")
                && md.contains("2 regression(s)")
                && md.contains("-12.00% (p=0.008 n=5+5)"),
            "{md}"
        );
    }

    #[test]
    fn one_run_a_side_or_noise_is_never_a_regression() {
        // One run per side: no test can be significant (benchstat prints ~).
        let base = vec![run(1000.0, 30.0, "1s")];
        let cur = vec![run(800.0, 40.0, "1s")];
        let rows = compare(&base, &cur, &MetricSel::defaults(), 0.05, false).unwrap();
        assert!(
            rows.iter().all(|r| r.verdict == Verdict::NotSignificant),
            "{rows:?}"
        );
        assert!(markdown(&rows, 0.05).contains("~ (p=1.000 n=1+1)"));
        // Overlapping runs: not significant either.
        let base: Vec<_> = [1000.0, 800.0, 1200.0, 900.0, 1100.0]
            .iter()
            .map(|&a| run(a, 30.0, "1s"))
            .collect();
        let cur: Vec<_> = [950.0, 850.0, 1150.0, 700.0, 1000.0]
            .iter()
            .map(|&a| run(a, 30.0, "1s"))
            .collect();
        let rows = compare(&base, &cur, &MetricSel::defaults(), 0.05, false).unwrap();
        let avg = rows.iter().find(|r| r.stat == "Average").unwrap();
        assert_eq!(avg.verdict, Verdict::NotSignificant, "{avg:?}");
        // PreEnqueue p90 10 ns -> 11 ns, every run: significant and +10 %, but one step of
        // the exact histogram (1 ns there): not a regression.
        let base: Vec<_> = (0..5).map(|_| run(1000.0, 10.0, "1s")).collect();
        let cur: Vec<_> = (0..5).map(|_| run(1000.0, 11.0, "1s")).collect();
        let rows = compare(&base, &cur, &MetricSel::defaults(), 0.05, false).unwrap();
        let p90 = rows.iter().find(|r| r.stat == "Perc90").unwrap();
        assert!(p90.p < 0.05, "{p90:?}");
        assert_eq!(p90.verdict, Verdict::Ok, "{p90:?}");
        // 30 ns -> 40 ns is ten steps: a regression.
        let cur: Vec<_> = (0..5).map(|_| run(1000.0, 40.0, "1s")).collect();
        let base: Vec<_> = (0..5).map(|_| run(1000.0, 30.0, "1s")).collect();
        let rows = compare(&base, &cur, &MetricSel::defaults(), 0.05, false).unwrap();
        let p90 = rows.iter().find(|r| r.stat == "Perc90").unwrap();
        assert_eq!(p90.verdict, Verdict::Regression, "{p90:?}");
    }

    #[test]
    fn equal_runs_a_side_still_show_a_regression() {
        // A baseline copied five times against the same with SchedulingThroughput halved:
        // every run of a side repeats one value, and the change is far beyond one step of
        // the 1 s sampling interval.
        let base: Vec<_> = (0..5).map(|_| run(1000.0, 40.0, "1s")).collect();
        let cur: Vec<_> = (0..5).map(|_| run(500.0, 40.0, "1s")).collect();
        let rows = compare(&base, &cur, &MetricSel::defaults(), 0.05, false).unwrap();
        for stat in ["Average", "Perc50"] {
            let r = rows.iter().find(|r| r.stat == stat).unwrap();
            assert_eq!(r.verdict, Verdict::Regression, "{r:?}");
        }
        let md = markdown(&rows, 0.05);
        assert!(
            md.contains("-50.00% (p=0.008 n=5+5) | **REGRESSION**")
                && md.contains("2 regression(s)"),
            "{md}"
        );
        // Halved, then doubled back: an improvement, the same way.
        let rows = compare(&cur, &base, &MetricSel::defaults(), 0.05, false).unwrap();
        let avg = rows.iter().find(|r| r.stat == "Average").unwrap();
        assert_eq!(avg.verdict, Verdict::Improved, "{avg:?}");
        // At a sampling interval of 1 ms a sample is a multiple of 1,000 pods/s: 1,000 ->
        // 1,900 pods/s is within one step, 1,000 -> 2,100 is not.
        let fast = |v: f64| -> Vec<Vec<DataItem>> { (0..5).map(|_| run(v, 40.0, "1ms")).collect() };
        let rows = compare(
            &fast(1000.0),
            &fast(1900.0),
            &MetricSel::defaults(),
            0.05,
            false,
        )
        .unwrap();
        let tp: Vec<_> = rows
            .iter()
            .filter(|r| r.metric == "SchedulingThroughput")
            .collect();
        assert!(
            tp.len() == 2 && tp.iter().all(|r| r.verdict == Verdict::Ok),
            "{rows:?}"
        );
        let rows = compare(
            &fast(2100.0),
            &fast(1000.0),
            &MetricSel::defaults(),
            0.05,
            false,
        )
        .unwrap();
        let avg = rows.iter().find(|r| r.stat == "Average").unwrap();
        assert_eq!(avg.verdict, Verdict::Regression, "{avg:?}");
    }

    /// kube's own data items: no `estimator` (quantiles interpolated in kube's buckets), no
    /// `SamplingInterval` (1 s).
    fn kube_run(tp: f64, pre_enqueue_p90_ms: f64) -> Vec<DataItem> {
        let name = "BenchmarkPerfScheduling/Basic/500Nodes/namespace-2";
        vec![
            item(
                name,
                "SchedulingThroughput",
                "pods/s",
                &[("Average", tp), ("Perc50", tp)],
                &[],
            ),
            item(
                name,
                "scheduler_framework_extension_point_duration_seconds",
                "ms",
                &[("Perc90", pre_enqueue_p90_ms)],
                &[("extension_point", "PreEnqueue")],
            ),
        ]
    }

    #[test]
    fn a_change_within_one_bucket_stays_ok() {
        // PreEnqueue p90 0.12 ms -> 0.18 ms in every run: +50 % and significant, but inside
        // kube's bucket (0.1 ms, 0.2 ms], which is all the interpolation knows.
        let base: Vec<_> = (0..5).map(|_| kube_run(150.0, 0.12)).collect();
        let cur: Vec<_> = (0..5).map(|_| kube_run(150.0, 0.18)).collect();
        let rows = compare(&base, &cur, &MetricSel::defaults(), 0.05, false).unwrap();
        let p90 = rows.iter().find(|r| r.stat == "Perc90").unwrap();
        assert!(p90.p < 0.05 && p90.ratio > 1.4, "{p90:?}");
        assert_eq!(p90.verdict, Verdict::Ok, "{p90:?}");
        // 0.12 ms -> 0.35 ms: more than the (0.2 ms, 0.4 ms] bucket's width: a regression.
        let cur: Vec<_> = (0..5).map(|_| kube_run(150.0, 0.35)).collect();
        let rows = compare(&base, &cur, &MetricSel::defaults(), 0.05, false).unwrap();
        let p90 = rows.iter().find(|r| r.stat == "Perc90").unwrap();
        assert_eq!(p90.verdict, Verdict::Regression, "{p90:?}");
        // kube's throughput at its 1 s interval: 150 -> 140 pods/s is ten steps.
        let cur: Vec<_> = (0..5).map(|_| kube_run(140.0, 0.12)).collect();
        let rows = compare(&base, &cur, &MetricSel::defaults(), 0.05, false).unwrap();
        let avg = rows.iter().find(|r| r.stat == "Average").unwrap();
        assert_eq!(avg.verdict, Verdict::Regression, "{avg:?}");
    }

    #[test]
    fn different_workloads_are_refused() {
        let base = vec![run(1000.0, 40.0, "1s")];
        let mut other = run(1000.0, 40.0, "1s");
        for i in &mut other {
            i.labels.insert(
                "Name".into(),
                "BenchmarkPerfScheduling/Basic/5000Nodes/namespace-2".into(),
            );
        }
        let e = compare(&base, &[other], &MetricSel::defaults(), 0.05, false).unwrap_err();
        assert!(e.contains("different workloads"), "{e}");
    }

    #[test]
    fn an_unknown_metric_is_an_error_and_selectors_parse() {
        let base = vec![run(1000.0, 40.0, "1s")];
        let sel = vec![MetricSel::parse("NoSuchMetric").unwrap()];
        assert!(
            compare(&base, &base, &sel, 0.05, true)
                .unwrap_err()
                .contains("NoSuchMetric")
        );
        // A statistic the metric does not have: the statistic is named, with what there is.
        let sel = vec![MetricSel::parse("SchedulingThroughput:Perc42").unwrap()];
        let e = compare(&base, &base, &sel, 0.05, true).unwrap_err();
        assert!(
            e.starts_with("statistic \"Perc42\" of metric \"SchedulingThroughput\"")
                && e.contains("it has: Average, Perc50"),
            "{e}"
        );
        assert_eq!(
            MetricSel::parse("SchedulingThroughput:Perc50,Perc90")
                .unwrap()
                .stats,
            vec!["Perc50", "Perc90"]
        );
        let pe = MetricSel::parse("scheduler_framework_extension_point_duration_seconds{extension_point=PreEnqueue}:Perc90").unwrap();
        assert_eq!(pe, MetricSel::defaults()[1]);
        assert!(MetricSel::parse("m{extension_point}").is_err());
        assert!(MetricSel::parse(":Perc50").is_err());
        assert_eq!(parse_limit("5%").unwrap(), 0.05);
        assert_eq!(parse_limit("0.05").unwrap(), 0.05);
        assert_eq!(parse_limit("5").unwrap(), 0.05);
        assert!(parse_limit("-1").is_err() && parse_limit("lots").is_err());
    }
}
