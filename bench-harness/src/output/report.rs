//! scheduler_perf-compatible results: data items (`{"version":"v1","dataItems":[...]}`),
//! throughput sampling with scheduler_perf's rules, histogram percentiles with two
//! estimators, thresholds, and the output file.

use crate::workload::{MetricSelector, MetricsCollectorConfig, Threshold};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tidegate_engine::metrics::{HistogramSnapshot, Metrics, Series};

#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct DataItem {
    #[serde(default)]
    pub data: BTreeMap<String, f64>,
    #[serde(default)]
    pub unit: String,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
}

/// A results file as `--data-items-dir` writes it, read back (tidegate's fields are
/// optional: kube's files have only `dataItems`).
#[derive(serde::Deserialize)]
pub struct ResultsFile {
    #[serde(rename = "dataItems")]
    pub data_items: Vec<DataItem>,
    #[serde(rename = "tidegateTimeSeries", default)]
    pub series: Vec<WindowSeries>,
    #[serde(rename = "tidegateRun", default)]
    pub run: Option<RunInfo>,
}

/// Reads a results file: its data items, time series and provenance. Unreadable files and
/// bad JSON are bad input, with the line and column, reported under `field`.
pub fn read_results(path: &Path, field: &str) -> Result<ResultsFile, crate::error::InputError> {
    use crate::error::{InputError, Pos};
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError::new(path, None, "", e.to_string()))?;
    let f: ResultsFile = serde_json::from_str(&text).map_err(|e| {
        let pos = Pos {
            line: e.line() as u64,
            column: e.column() as u64,
        };
        InputError::new(path, Some(pos), field, e.to_string())
    })?;
    Ok(f)
}

#[derive(Debug, Serialize)]
pub struct DataItems {
    pub version: &'static str,
    #[serde(rename = "dataItems")]
    pub data_items: Vec<DataItem>,
    /// tidegate's time series per collection window, for `tidegate report` (perf-dash reads
    /// only `dataItems` and ignores this field).
    #[serde(rename = "tidegateTimeSeries", skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<WindowSeries>,
    /// What produced the file and how (tidegate's own field; perf-dash ignores it).
    #[serde(
        rename = "tidegateRun",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub run: Option<RunInfo>,
}

/// The provenance of a results file: tidegate's version and commit, the machine, and the
/// run's threads, seed and clock.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RunInfo {
    pub version: String,
    pub commit: String,
    /// `model name` of /proc/cpuinfo (`unknown` where there is none).
    pub cpu_model: String,
    /// CPUs this process may use.
    pub cpus: usize,
    /// `--threads`; `None`: the scheduler config's `parallelism`, else one per CPU.
    pub threads: Option<usize>,
    pub seed: u64,
    /// `real` or `virtual`.
    pub clock: String,
    /// `--shard`: the file holds one shard's share of the selection
    /// ([`crate::workload::shard`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::workload::shard::ShardRecord>,
    /// `tidegate merge`: the file joins this many shards' files (their machines in
    /// `cpu_model` when they differ).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_shards: Option<usize>,
}

impl RunInfo {
    /// This binary on this machine, with the run's settings.
    pub fn here(threads: Option<usize>, seed: u64, clock: &str) -> RunInfo {
        let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|t| {
                t.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".into());
        RunInfo {
            version: env!("CARGO_PKG_VERSION").into(),
            commit: env!("TIDEGATE_COMMIT").into(),
            cpu_model,
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            threads,
            seed,
            clock: clock.into(),
            shard: None,
            merged_shards: None,
        }
    }

    /// The first line of a JSON-lines file (`--placements`, `--dump-pods`):
    /// `{"tidegateRun": {…}}`; every later line is one record.
    pub fn json_line(&self) -> String {
        serde_json::json!({ "tidegateRun": self }).to_string()
    }

    /// One comment line for text formats (`# tidegate 0.1.0 commit … cpu … threads …`).
    pub fn comment(&self) -> String {
        format!(
            "# tidegate {} commit {} cpu {:?} x{} threads {} seed {} clock {}",
            self.version,
            self.commit,
            self.cpu_model,
            self.cpus,
            self.threads
                .map_or_else(|| "auto".to_string(), |t| t.to_string()),
            self.seed,
            self.clock
        )
    }
}

/// kube's extension-point duration metric, as data items name it.
pub const EXTENSION_POINT_METRIC: &str = tidegate_engine::metrics::names::EXTENSION_POINT_DURATION;

/// One collection window over time: throughput per interval and the pending-pods gauges.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct WindowSeries {
    /// The window's `Name` label.
    pub name: String,
    /// `(seconds from the window start, pods/s over the interval ending there)`.
    pub throughput: Vec<(f64, f64)>,
    /// Pending pods sampled every 500 ms (real time; at the window's ends on a virtual clock).
    pub pending: Vec<PendingSample>,
}

/// The `scheduler_pending_pods` gauges at one moment (in-flight pods count as active).
#[derive(Clone, Copy, Debug, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct PendingSample {
    pub t: f64,
    pub active: u64,
    pub backoff: u64,
    pub unschedulable: u64,
    pub gated: u64,
}

/// Pods bound per `interval`, as `(end of the interval, rate)`, over the window.
pub fn throughput_series(
    binds: &[Duration],
    duration: Duration,
    interval: Duration,
) -> Vec<(f64, f64)> {
    let n = duration.as_nanos().div_ceil(interval.as_nanos().max(1)) as usize;
    let mut counts = vec![0u64; n.max(1)];
    for b in binds {
        let i = (b.as_nanos() / interval.as_nanos().max(1)) as usize;
        if let Some(c) = counts.get_mut(i.min(n.saturating_sub(1))) {
            *c += 1;
        }
    }
    let secs = interval.as_secs_f64();
    counts
        .into_iter()
        .enumerate()
        .map(|(i, c)| ((i + 1) as f64 * secs, c as f64 / secs))
        .collect()
}

/// The throughput sampling interval for a run whose pods were bound over `span`: the largest
/// of these that gives at least 22 intervals (1 s, as upstream, for runs of 22 s and more).
pub fn sampling_interval(span: Duration) -> Duration {
    const CANDIDATES_US: &[u64] = &[
        1_000_000, 500_000, 200_000, 100_000, 50_000, 20_000, 10_000, 5_000, 2_000, 1_000, 500,
        200, 100, 50, 20, 10, 5, 2, 1,
    ];
    for &us in CANDIDATES_US {
        let w = Duration::from_micros(us);
        if span.as_secs_f64() / w.as_secs_f64() >= 22.0 {
            return w;
        }
    }
    Duration::from_micros(1)
}

/// scheduler_perf's throughput samples over ticks of `interval` from the collection start:
/// ticks before the first bind are skipped, the first non-zero tick only sets the baseline,
/// intervals with no new pods are counted and the next rate is repeated for each of them.
/// `binds` must be sorted; they are offsets from the collection start.
pub fn throughput_samples(binds: &[Duration], duration: Duration, interval: Duration) -> Vec<f64> {
    let ticks = (duration.as_nanos() / interval.as_nanos().max(1)) as u64;
    let mut samples = Vec::new();
    let mut idx = 0usize;
    let mut last: Option<(usize, f64)> = None;
    let mut skipped = 0usize;
    for k in 1..=ticks {
        let t = interval * k as u32;
        while idx < binds.len() && binds[idx] <= t {
            idx += 1;
        }
        if idx == 0 {
            continue;
        }
        let now = t.as_secs_f64();
        match last {
            None => last = Some((idx, now)),
            Some((count, at)) if idx == count => {
                let _ = at;
                skipped += 1;
            }
            Some((count, at)) => {
                let rate = (idx - count) as f64 / (now - at);
                samples.extend(std::iter::repeat_n(rate, skipped + 1));
                skipped = 0;
                last = Some((idx, now));
            }
        }
    }
    samples
}

/// `PercN = sorted[ceil(len × N / 100) − 1]`, and the mean.
pub fn summarize(samples: &[f64]) -> BTreeMap<String, f64> {
    let mut s = samples.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let mut data = BTreeMap::new();
    if s.is_empty() {
        return data;
    }
    data.insert("Average".into(), s.iter().sum::<f64>() / s.len() as f64);
    for n in [50usize, 90, 95, 99] {
        let i = (s.len() * n).div_ceil(100).max(1) - 1;
        data.insert(format!("Perc{n}"), s[i]);
    }
    data
}

fn base_labels(metric: &str, name: &str) -> BTreeMap<String, String> {
    let mut l = BTreeMap::new();
    l.insert("Metric".into(), metric.into());
    l.insert("Name".into(), name.into());
    l
}

/// The SchedulingThroughput item, with the sampling interval in a label.
pub fn throughput_item(binds: &[Duration], duration: Duration, name: &str) -> DataItem {
    let mut binds = binds.to_vec();
    binds.sort_unstable();
    let span = match (binds.first(), binds.last()) {
        (Some(a), Some(b)) => *b - *a,
        _ => duration,
    };
    let interval = sampling_interval(span);
    let samples = throughput_samples(&binds, duration, interval);
    let mut labels = base_labels("SchedulingThroughput", name);
    labels.insert("SamplingInterval".into(), format!("{:?}", interval));
    DataItem {
        data: summarize(&samples),
        unit: "pods/s".into(),
        labels,
    }
}

/// A metric family and its label pairs.
type GroupKey = (&'static str, Vec<(&'static str, String)>);

/// Without a `metricsCollectorConfig`: one item per family and label set, merged over the
/// labels kube's `defaultMetricsCollectorConfig` (test/integration/scheduler_perf/
/// scheduler_perf.go) does not name for that family (`status` everywhere, a queueing hint's
/// `hint`). Families outside kube's default list are tidegate's additions and keep their
/// labels; the SLI duration and the attempts count are not reported by default, as in kube.
fn group_key(s: &Series) -> Option<GroupKey> {
    let merged: &[&str] = match s {
        Series::PodSchedulingAttempts | Series::SliDuration(_) => return None,
        Series::QueueingHint(..) => &["status", "hint"],
        _ => &["status"],
    };
    let labels: Vec<(&'static str, String)> = s
        .labels()
        .into_iter()
        .filter(|(k, _)| !merged.contains(k))
        .collect();
    Some((s.metric_name(), labels))
}

/// Histogram items of a collection window: for each reported family and label set, the
/// series that match merged into one, with two estimators: `estimator=exact` (hdrhistogram)
/// and `estimator=buckets` (kube's buckets, as perf-dash computes), in ms.
///
/// With a test case's `metricsCollectorConfig`, as kube's `metricsCollector.collect`
/// (test/integration/scheduler_perf/util.go): only the families it names; a family without
/// label values gives one item over all its series; one with label values gives an item per
/// combination of them (`uniqueLVCombos`), over the series carrying those values, whatever
/// their other labels; combinations without samples give none.
pub fn histogram_items(
    metrics: &Metrics,
    name: &str,
    config: Option<&MetricsCollectorConfig>,
) -> Vec<DataItem> {
    let mut groups: BTreeMap<GroupKey, HistogramSnapshot> = BTreeMap::new();
    let mut merge = |key: GroupKey, h: &HistogramSnapshot| match groups.get_mut(&key) {
        Some(g) => {
            let _ = g.hist.add(&h.hist);
            g.sum += h.sum;
        }
        None => {
            groups.insert(key, h.clone());
        }
    };
    let histograms = metrics.histograms();
    match config {
        None => {
            for h in &histograms {
                if let Some(key) = group_key(&h.series) {
                    merge(key, h);
                }
            }
        }
        Some(config) => {
            for (metric, filter) in config {
                let Some(family) = histograms
                    .iter()
                    .find(|h| h.series.metric_name() == metric)
                    .map(|h| h.series.metric_name())
                else {
                    continue;
                };
                for combo in label_combos(filter.as_deref().unwrap_or(&[])) {
                    for h in &histograms {
                        let labels = h.series.labels();
                        let matches = h.series.metric_name() == family
                            && combo.iter().all(|(k, v)| {
                                labels.iter().any(|(lk, lv)| *lk == k.as_str() && lv == v)
                            });
                        if matches {
                            let key = combo
                                .iter()
                                .map(|(k, v)| {
                                    let k = labels
                                        .iter()
                                        .find(|(lk, _)| *lk == k.as_str())
                                        .map_or("", |(lk, _)| *lk);
                                    (k, v.clone())
                                })
                                .collect();
                            merge((family, key), h);
                        }
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    for ((metric, labels), h) in groups {
        if h.hist.is_empty() {
            continue;
        }
        const QUANTILES: [(&str, f64); 4] = [
            ("Perc50", 0.5),
            ("Perc90", 0.9),
            ("Perc95", 0.95),
            ("Perc99", 0.99),
        ];
        let exact = QUANTILES.map(|(_, q)| h.exact_quantile(q));
        // kube's buckets are counted once for the four quantiles.
        let buckets = h.bucket_quantiles(QUANTILES.map(|(_, q)| q));
        for (estimator, values) in [("exact", exact), ("buckets", buckets)] {
            let mut l = base_labels(metric, name);
            for (k, v) in &labels {
                l.insert((*k).to_string(), v.clone());
            }
            l.insert("estimator".into(), estimator.into());
            let mut data = BTreeMap::new();
            for ((key, _), v) in QUANTILES.iter().zip(values) {
                data.insert(key.to_string(), v * 1000.0);
            }
            data.insert("Average".into(), h.mean() * 1000.0);
            out.push(DataItem {
                data,
                unit: "ms".into(),
                labels: l,
            });
        }
    }
    out
}

/// kube's `uniqueLVCombos`: every combination of one value per named label (the first
/// label's values outermost); no labels: the one empty combination.
fn label_combos(filter: &[(String, Vec<String>)]) -> Vec<Vec<(String, String)>> {
    let Some(((label, values), rest)) = filter.split_first() else {
        return vec![vec![]];
    };
    let tails = label_combos(rest);
    let mut out = Vec::with_capacity(values.len() * tails.len());
    for v in values {
        for tail in &tails {
            let mut combo = vec![(label.clone(), v.clone())];
            combo.extend(tail.iter().cloned());
            out.push(combo);
        }
    }
    out
}

/// kube's PercN: `sorted[ceil(len × N / 100) − 1]`.
fn perc(sorted: &[f64], n: usize) -> f64 {
    sorted[(sorted.len() * n).div_ceil(100).max(1) - 1]
}

/// The memory collector's two items: `heap_memory_usage` (MB, Perc50/90/95/99, Average, Max
/// over the samples) and `memory_growth_rate` (MB/min from the first sample to the last).
/// kube samples the Go heap in use; tidegate samples the process's resident set, which holds
/// the same objects (and the allocator's slack). `samples` are `(seconds since start, MB)`.
pub fn memory_items(samples: &[(f64, f64)], name: &str) -> Vec<DataItem> {
    let (Some(first), Some(last)) = (samples.first(), samples.last()) else {
        return vec![];
    };
    let mut v: Vec<f64> = samples.iter().map(|s| s.1).collect();
    v.sort_by(f64::total_cmp);
    let avg = v.iter().sum::<f64>() / v.len() as f64;
    let data: BTreeMap<String, f64> = [
        ("Perc50", perc(&v, 50)),
        ("Perc90", perc(&v, 90)),
        ("Perc95", perc(&v, 95)),
        ("Perc99", perc(&v, 99)),
        ("Average", avg),
        ("Max", v[v.len() - 1]),
    ]
    .into_iter()
    .map(|(k, x)| (k.to_string(), x))
    .collect();
    let minutes = (last.0 - first.0) / 60.0;
    let growth = if minutes > 0.0 {
        (last.1 - first.1) / minutes
    } else {
        0.0
    };
    vec![
        DataItem {
            data,
            unit: "MB".into(),
            labels: base_labels("heap_memory_usage", name),
        },
        DataItem {
            data: [("GrowthRate".to_string(), growth)].into(),
            unit: "MB/min".into(),
            labels: base_labels("memory_growth_rate", name),
        },
    ]
}

/// `tidegate_peak_rss`: the workload's peak resident set (MB), and per pod created; with
/// `--flamegraph`, the profiler's sample table is not in `Max` and is given as `ProfilerMB`.
pub fn peak_rss_item(mb: f64, profiler_mb: Option<f64>, pods: u64, name: &str) -> DataItem {
    let mut data: BTreeMap<String, f64> = [("Max".to_string(), mb)].into();
    if let Some(p) = profiler_mb {
        data.insert("ProfilerMB".into(), p);
    }
    if pods > 0 {
        data.insert("KBPerPod".into(), mb * 1024.0 / pods as f64);
    }
    DataItem {
        data,
        unit: "MB".into(),
        labels: base_labels("tidegate_peak_rss", name),
    }
}

/// The SchedulingDuration item: seconds from the window's start to its stop.
pub fn scheduling_duration_item(d: Duration, name: &str) -> DataItem {
    DataItem {
        data: [("Duration".to_string(), d.as_secs_f64())].into(),
        unit: "s".into(),
        labels: base_labels("SchedulingDuration", name),
    }
}

/// The per-workload summary of counts.
pub fn summary_item(name: &str, counts: &[(&str, u64)]) -> DataItem {
    DataItem {
        data: counts
            .iter()
            .map(|(k, v)| (k.to_string(), *v as f64))
            .collect(),
        unit: "pods".into(),
        labels: base_labels("tidegate_summary", name),
    }
}

/// `scheduler_queue_incoming_pods_total{queue,event}` over the collection window.
pub fn counter_items(metrics: &Metrics, name: &str) -> Vec<DataItem> {
    metrics
        .incoming_pods()
        .into_iter()
        .map(|((queue, event), n)| {
            let mut l = base_labels(tidegate_engine::metrics::names::QUEUE_INCOMING_PODS, name);
            l.insert("queue".into(), queue.to_string());
            l.insert("event".into(), event);
            DataItem {
                data: [("Value".to_string(), n as f64)].into(),
                unit: "pods".into(),
                labels: l,
            }
        })
        .collect()
}

/// The scheduler's gauges at the end of a workload, one item each (`Value`).
pub fn gauge_items(gauges: &[tidegate_engine::metrics::Gauge], name: &str) -> Vec<DataItem> {
    gauges
        .iter()
        .map(|(metric, labels, v)| {
            let mut l = base_labels(metric, name);
            for (k, val) in labels {
                l.insert((*k).to_string(), val.clone());
            }
            DataItem {
                data: [("Value".to_string(), *v as f64)].into(),
                unit: "pods".into(),
                labels: l,
            }
        })
        .collect()
}

/// Gives every item every label key used by any item (`"not applicable"`), as perf-dash needs.
pub fn fill_not_applicable(items: &mut [DataItem]) {
    let keys: BTreeSet<String> = items
        .iter()
        .flat_map(|i| i.labels.keys().cloned())
        .collect();
    for i in items.iter_mut() {
        for k in &keys {
            i.labels
                .entry(k.clone())
                .or_insert_with(|| "not applicable".into());
        }
    }
}

/// A threshold violation.
#[derive(Clone, Debug, PartialEq)]
pub struct ThresholdFailure {
    pub message: String,
}

/// Applies a workload's threshold to its items (scheduler_perf's rule: the selected bucket must
/// be strictly greater than the threshold, or strictly lower with `expectLower`).
pub fn apply_threshold(
    items: &mut [DataItem],
    threshold: Option<&Threshold>,
    topic: &str,
    selector: &MetricSelector,
) -> Vec<ThresholdFailure> {
    let t = match threshold {
        Some(Threshold::Value(v)) => *v,
        Some(Threshold::PerTopic(m)) => m.get(topic).copied().unwrap_or(0.0),
        None => 0.0,
    };
    if t == 0.0 {
        return vec![];
    }
    let mut failures = vec![];
    for item in items.iter_mut() {
        if item.labels.get("Metric").map(String::as_str) != Some(selector.name.as_str()) {
            continue;
        }
        if !selector
            .labels
            .iter()
            .all(|(k, v)| item.labels.get(k) == Some(v))
        {
            continue;
        }
        // Our histogram items come in two estimators; thresholds apply to the exact one.
        if item.labels.get("estimator").is_some_and(|e| e != "exact") {
            continue;
        }
        let bucket = &selector.data_bucket;
        item.data.insert(format!("{bucket}Threshold"), t);
        // The direction, for readers of the file (`tidegate report`'s verdict): written only
        // for `expectLower`, so files of "higher" thresholds are as before.
        if selector.expect_lower {
            item.data
                .insert(format!("{bucket}ThresholdExpectLower"), 1.0);
        }
        let name = item.labels.get("Name").cloned().unwrap_or_default();
        // kube reads a missing bucket as 0 (a Go map's zero value): a run too short for any
        // throughput sample fails a "higher" threshold with "got 0.00".
        let v = item.data.get(bucket).copied().unwrap_or(0.0);
        let ok = if selector.expect_lower { v < t } else { v > t };
        if !ok {
            failures.push(ThresholdFailure {
                message: format!(
                    "{name}: expected {} {bucket} to be {}: got {v:.2}, want {t}",
                    selector.name,
                    if selector.expect_lower {
                        "lower"
                    } else {
                        "higher"
                    }
                ),
            });
        }
    }
    failures
}

/// `BenchmarkPerfScheduling_benchmark_<topic>_<YYYY-MM-DDTHH:MM:SSZ>.json`.
pub fn file_name(topic: &str, unix_secs: u64) -> String {
    let days = (unix_secs / 86_400) as i64;
    let secs = unix_secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "BenchmarkPerfScheduling_benchmark_{topic}_{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z.json",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    )
}

/// Writes `contents` to `dir/name` atomically (a temporary file renamed into place).
pub fn write_atomic(dir: &Path, name: &str, contents: &[u8]) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(name);
    let tmp = dir.join(format!(".{name}.tmp"));
    std::fs::write(&tmp, contents)?;
    std::fs::rename(&tmp, &path)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn throughput_rules_against_hand_computed_samples() {
        // Interval 1 s. Binds: 5 by t=1 (baseline), 15 by t=2, none by t=3, 25 by t=4.
        let mut binds = vec![ms(500); 5];
        binds.extend(vec![ms(1500); 10]);
        binds.extend(vec![ms(3500); 10]);
        let s = throughput_samples(&binds, ms(4000), ms(1000));
        // t=2: 10 pods / 1 s; t=3 skipped; t=4: 10 pods / 2 s, appended twice.
        assert_eq!(s, vec![10.0, 5.0, 5.0]);
        let d = summarize(&s);
        assert!((d["Average"] - 20.0 / 3.0).abs() < 1e-9);
        assert_eq!(d["Perc50"], 5.0);
        assert_eq!(d["Perc99"], 10.0);
    }

    #[test]
    fn leading_empty_ticks_are_ignored_and_interval_adapts() {
        let binds: Vec<Duration> = (0..100).map(|i| ms(2000 + i * 10)).collect();
        let s = throughput_samples(&binds, ms(3100), ms(1000));
        // t=1 s: nothing yet (skipped); t=2 s: the bind at exactly 2.0 s sets the baseline;
        // t=3 s: the other 99 in one second.
        assert_eq!(s, vec![99.0]);
        let item = throughput_item(&binds, ms(3100), "N");
        assert_eq!(item.labels["SamplingInterval"], "20ms");
        assert!(item.data.len() == 5 && (item.data["Perc50"] - 100.0).abs() < 1e-6);
        assert_eq!(
            sampling_interval(Duration::from_secs(60)),
            Duration::from_secs(1)
        );
    }

    #[test]
    fn even_a_ten_pod_run_gets_twenty_samples() {
        // 10 binds 3 µs apart in a 40 µs window.
        let binds: Vec<Duration> = (0..10).map(|i| Duration::from_micros(5 + 3 * i)).collect();
        let item = throughput_item(&binds, Duration::from_micros(40), "N");
        assert_eq!(item.labels["SamplingInterval"], "1µs");
        let samples =
            throughput_samples(&binds, Duration::from_micros(40), Duration::from_micros(1));
        assert!(samples.len() >= 20, "{} samples", samples.len());
        assert!(item.data.contains_key("Perc99"));
    }

    #[test]
    fn thresholds_pass_fail_and_expect_lower() {
        let mk = |v: f64| DataItem {
            data: [("Average".to_string(), v)].into(),
            unit: "pods/s".into(),
            labels: base_labels("SchedulingThroughput", "X"),
        };
        let sel = MetricSelector::default();
        let mut ok = vec![mk(100.0)];
        assert!(apply_threshold(&mut ok, Some(&Threshold::Value(50.0)), "misc", &sel).is_empty());
        assert_eq!(ok[0].data["AverageThreshold"], 50.0);
        let mut bad = vec![mk(10.0)];
        let f = apply_threshold(&mut bad, Some(&Threshold::Value(50.0)), "misc", &sel);
        assert_eq!(
            f[0].message,
            "X: expected SchedulingThroughput Average to be higher: got 10.00, want 50"
        );
        let lower = MetricSelector {
            expect_lower: true,
            ..MetricSelector::default()
        };
        let mut l = vec![mk(10.0)];
        assert!(apply_threshold(&mut l, Some(&Threshold::Value(50.0)), "misc", &lower).is_empty());
        assert_eq!(l[0].data["AverageThresholdExpectLower"], 1.0);
        assert!(!ok[0].data.contains_key("AverageThresholdExpectLower"));
        let topics = Threshold::PerTopic([("other".to_string(), 1e9)].into());
        assert!(apply_threshold(&mut [mk(1.0)], Some(&topics), "misc", &sel).is_empty());
        // No sample at all (a run shorter than one interval): kube reads 0.
        let mut empty = vec![DataItem {
            data: Default::default(),
            unit: "pods/s".into(),
            labels: base_labels("SchedulingThroughput", "X"),
        }];
        let f = apply_threshold(&mut empty, Some(&Threshold::Value(50.0)), "misc", &sel);
        assert_eq!(
            f[0].message,
            "X: expected SchedulingThroughput Average to be higher: got 0.00, want 50"
        );
        assert!(
            apply_threshold(&mut empty, Some(&Threshold::Value(50.0)), "misc", &lower).is_empty()
        );
    }

    #[test]
    fn file_name_and_not_applicable() {
        assert_eq!(
            file_name("misc", 1_795_000_000),
            "BenchmarkPerfScheduling_benchmark_misc_2026-11-18T11:06:40Z.json"
        );
        let mut items = vec![
            DataItem {
                data: BTreeMap::new(),
                unit: "ms".into(),
                labels: [("a".to_string(), "1".to_string())].into(),
            },
            DataItem {
                data: BTreeMap::new(),
                unit: "ms".into(),
                labels: [("b".to_string(), "2".to_string())].into(),
            },
        ];
        fill_not_applicable(&mut items);
        assert_eq!(items[0].labels["b"], "not applicable");
        assert_eq!(items[1].labels["a"], "not applicable");
    }
}
