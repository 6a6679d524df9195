//! `tidegate compare --format benchstat`: the runs of both sides in the Go benchmark format
//! (golang.org/design/14313-benchmark-format), so that Go's own benchstat reads tidegate
//! results: `benchstat -col side FILE`.
//!
//! - one configuration line `side: baseline` / `side: current` before each side's results
//!   (benchstat's `-col side` puts the sides in columns);
//! - one result line per run and item `Name`: `BenchmarkPerfScheduling/<case>/<workload>[/…]-P
//!   1 <value> <unit> …`, with `-P` the run's threads as `go test` appends GOMAXPROCS (so a
//!   name ending in `-2` is never read as procs), the values of the selected metrics;
//! - units name the statistic and, beside throughput, the metric's selecting labels
//!   (`pods/s`, `p50-pods/s`, `PreEnqueue-p90-ms`), and `Unit … better=higher` lines tell
//!   benchstat which way each unit improves (lower is its default);
//! - histograms on their exact estimator, as [`super::compare`] compares them; durations in
//!   seconds with a `sec` unit (`PreEnqueue-p90-sec`), which benchstat scales itself (`78.00n`);
//!   it knows no `ms`.

use super::compare::{Direction, MetricSel, selected};
use crate::output::report::DataItem;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One side: its name (`baseline`, `current`) and runs, each its data items and its
/// threads (None: unknown, written as 1).
pub struct Side<'a> {
    pub name: &'a str,
    pub runs: Vec<(Vec<DataItem>, Option<usize>)>,
}

/// A statistic's short name: `Average` → `avg`, `Perc50` → `p50`, others lower-cased.
fn stat_name(stat: &str) -> String {
    match stat.strip_prefix("Perc") {
        Some(p) => format!("p{p}"),
        None if stat == "Average" => "avg".into(),
        None => stat.to_lowercase(),
    }
}

/// The benchmark-format unit of `stat` of an item selected by `sel`: no spaces, the
/// throughput's average plain `pods/s`.
pub fn unit(sel: &MetricSel, stat: &str, item_unit: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    if sel.metric != "SchedulingThroughput" {
        if sel.labels.is_empty() {
            parts.push(sel.metric.clone());
        } else {
            parts.extend(sel.labels.iter().map(|(_, v)| v.clone()));
        }
    }
    if !(sel.metric == "SchedulingThroughput" && stat == "Average") {
        parts.push(stat_name(stat));
    }
    parts.push(match item_unit {
        "ms" | "s" => "sec".to_string(),
        u => u.to_string(),
    });
    parts
        .join("-")
        .chars()
        .map(|c| if c.is_whitespace() { '_' } else { c })
        .collect()
}

/// `v` to 10 significant digits: the float noise of a computed value
/// (`12350.000000000002`, a division's last bit) is not a measurement.
fn significant(v: f64) -> f64 {
    format!("{v:.9e}").parse().unwrap_or(v)
}

/// The benchmark-format text of both sides.
pub fn benchstat(sides: &[Side], metrics: &[MetricSel], cpu: Option<&str>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "pkg: tidegate/scheduler_perf");
    if let Some(cpu) = cpu {
        let _ = writeln!(out, "cpu: {cpu}");
    }
    let mut better_higher: Vec<String> = Vec::new();
    let mut body = String::new();
    for side in sides {
        let _ = writeln!(body, "side: {}", side.name);
        for (items, threads) in &side.runs {
            // Name -> (unit, value), in the order metrics are selected.
            let mut lines: BTreeMap<&str, Vec<(String, f64)>> = BTreeMap::new();
            for (it, sel, stat, v) in selected(items, metrics) {
                let Some(name) = it.labels.get("Name") else {
                    continue;
                };
                let u = unit(sel, stat, &it.unit);
                if Direction::of_unit(&it.unit) == Some(Direction::HigherIsBetter)
                    && !better_higher.contains(&u)
                {
                    better_higher.push(u.clone());
                }
                let v = if it.unit == "ms" { v / 1000.0 } else { v };
                lines.entry(name).or_default().push((u, significant(v)));
            }
            for (name, values) in lines {
                let name: String = name
                    .chars()
                    .map(|c| if c.is_whitespace() { '_' } else { c })
                    .collect();
                let _ = write!(body, "{name}-{} 1", threads.unwrap_or(1));
                for (u, v) in values {
                    let _ = write!(body, " {v} {u}");
                }
                body.push('\n');
            }
        }
    }
    for u in better_higher {
        let _ = writeln!(out, "Unit {u} better=higher");
    }
    out.push_str(&body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(
        metric: &str,
        name: &str,
        unit: &str,
        data: &[(&str, f64)],
        extra: &[(&str, &str)],
    ) -> DataItem {
        let mut labels: BTreeMap<String, String> = [
            ("Metric".to_string(), metric.to_string()),
            ("Name".to_string(), name.to_string()),
        ]
        .into();
        for (k, v) in extra {
            labels.insert(k.to_string(), v.to_string());
        }
        DataItem {
            data: data.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            unit: unit.into(),
            labels,
        }
    }

    #[test]
    fn both_sides_in_go_benchmark_format() {
        let name = "BenchmarkPerfScheduling/SchedulingBasic/5000Nodes/namespace-2";
        let run = |avg: f64, p90: f64| {
            vec![
                item(
                    "SchedulingThroughput",
                    name,
                    "pods/s",
                    &[("Average", avg), ("Perc50", avg - 100.0), ("Perc99", 1.0)],
                    &[],
                ),
                item(
                    "scheduler_framework_extension_point_duration_seconds",
                    name,
                    "ms",
                    &[("Perc90", p90)],
                    &[("extension_point", "PreEnqueue"), ("estimator", "exact")],
                ),
                item(
                    "scheduler_framework_extension_point_duration_seconds",
                    name,
                    "ms",
                    &[("Perc90", 99.0)],
                    &[("extension_point", "PreEnqueue"), ("estimator", "buckets")],
                ),
            ]
        };
        let sides = [
            Side {
                name: "baseline",
                runs: vec![
                    (run(35600.0, 0.00012), Some(2)),
                    (run(35000.0, 0.00013), Some(2)),
                ],
            },
            Side {
                name: "current",
                runs: vec![(run(36000.0, 0.0001), None)],
            },
        ];
        let text = benchstat(
            &sides,
            &MetricSel::defaults(),
            Some("Intel(R) Xeon(R) Processor"),
        );
        assert_eq!(
            text,
            "pkg: tidegate/scheduler_perf\n\
             cpu: Intel(R) Xeon(R) Processor\n\
             Unit pods/s better=higher\n\
             Unit p50-pods/s better=higher\n\
             side: baseline\n\
             BenchmarkPerfScheduling/SchedulingBasic/5000Nodes/namespace-2-2 1 35600 pods/s 35500 p50-pods/s 0.00000012 PreEnqueue-p90-sec\n\
             BenchmarkPerfScheduling/SchedulingBasic/5000Nodes/namespace-2-2 1 35000 pods/s 34900 p50-pods/s 0.00000013 PreEnqueue-p90-sec\n\
             side: current\n\
             BenchmarkPerfScheduling/SchedulingBasic/5000Nodes/namespace-2-1 1 36000 pods/s 35900 p50-pods/s 0.0000001 PreEnqueue-p90-sec\n"
        );
    }

    #[test]
    fn units_name_metric_and_statistic() {
        let sel = MetricSel::parse("SchedulingDuration").unwrap();
        assert_eq!(
            unit(&sel, "Duration", "s"),
            "SchedulingDuration-duration-sec"
        );
        let sel = MetricSel::parse("SchedulingThroughput:Perc99").unwrap();
        assert_eq!(unit(&sel, "Perc99", "pods/s"), "p99-pods/s");
    }
}
