//! Prometheus text exposition of the scheduler's metrics, with prometheus-client: kube's metric
//! names, labels and buckets, plus tidegate's `tidegate_*` extras.
//!
//! The engine records durations in hdrhistograms; a [`Snapshot`] turns them into kube-bucket
//! histograms (cumulative counts at kube's bounds, the sum in seconds), and counters and gauges
//! into families. [`encode`] renders one or more snapshots (one per workload, told apart by a
//! `workload` label) through a prometheus-client `Registry`, one `# HELP`/`# TYPE` per family.
//! Used by `tidegate run --prometheus FILE` (final values) and `tidegate serve` (live values).

use prometheus_client::encoding::{EncodeMetric, MetricEncoder};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;
use std::collections::BTreeMap;
use tidegate_engine::Scheduler;
use tidegate_engine::metrics::{AttemptResult, names};

type Labels = Vec<(String, String)>;

/// A histogram already bucketed: per-bucket (not cumulative) counts, `+Inf` last.
#[derive(Clone, Debug, Default)]
struct Bucketed {
    sum: f64,
    count: u64,
    buckets: Vec<(f64, u64)>,
}

/// Labelled values of one metric family.
#[derive(Debug, Default)]
struct Family<T> {
    metric_type: Option<MetricType>,
    members: Vec<(Labels, T)>,
}

impl EncodeMetric for Family<Bucketed> {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        for (labels, h) in &self.members {
            let e = encoder.encode_family(labels)?;
            encode_histogram(e, h)?;
        }
        Ok(())
    }
    fn metric_type(&self) -> MetricType {
        MetricType::Histogram
    }
}

fn encode_histogram(mut e: MetricEncoder, h: &Bucketed) -> Result<(), std::fmt::Error> {
    e.encode_histogram::<prometheus_client::encoding::NoLabelSet>(h.sum, h.count, &h.buckets, None)
}

impl EncodeMetric for Family<f64> {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        for (labels, v) in &self.members {
            let mut e = encoder.encode_family(labels)?;
            match self.metric_type {
                Some(MetricType::Counter) => {
                    e.encode_counter::<prometheus_client::encoding::NoLabelSet, f64, f64>(v, None)?
                }
                _ => e.encode_gauge(v)?,
            }
        }
        Ok(())
    }
    fn metric_type(&self) -> MetricType {
        self.metric_type.unwrap_or(MetricType::Gauge)
    }
}

/// One scheduler's metrics at one moment.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    histograms: BTreeMap<&'static str, Vec<(Labels, Bucketed)>>,
    counters: BTreeMap<&'static str, Vec<(Labels, f64)>>,
    gauges: BTreeMap<&'static str, Vec<(Labels, f64)>>,
}

fn owned(labels: &[(&'static str, String)]) -> Labels {
    labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

impl Snapshot {
    /// Reads `sched`'s histograms, counters and gauges.
    pub fn of(sched: &Scheduler) -> Snapshot {
        let mut s = Snapshot::default();
        let profile = ("profile".to_string(), "default-scheduler".to_string());
        for h in sched.metrics().histograms() {
            if h.hist.is_empty() {
                continue;
            }
            let (cumulative, total) = h.bucket_counts();
            let mut buckets = Vec::with_capacity(cumulative.len() + 1);
            let mut prev = 0;
            for (bound, c) in cumulative {
                buckets.push((bound, c - prev));
                prev = c;
            }
            buckets.push((f64::MAX, total - prev));
            let sum = if h.series.is_duration() {
                h.sum as f64 / 1e9
            } else {
                h.sum as f64
            };
            let mut labels = owned(&h.series.labels());
            if h.series.metric_name() != names::PLUGIN_EXECUTION_DURATION {
                labels.push(profile.clone());
            }
            s.histograms
                .entry(h.series.metric_name())
                .or_default()
                .push((
                    labels,
                    Bucketed {
                        sum,
                        count: total,
                        buckets,
                    },
                ));
        }
        for (metric, profile, label, n) in sched.metrics().batch_counters() {
            let mut labels = vec![("profile".into(), profile)];
            labels.extend(label.map(|(k, v)| (k.into(), v.into())));
            s.counters
                .entry(metric)
                .or_default()
                .push((labels, n as f64));
        }
        for ((queue, event), n) in sched.metrics().incoming_pods() {
            s.counters
                .entry(names::QUEUE_INCOMING_PODS)
                .or_default()
                .push((
                    vec![("queue".into(), queue.to_string()), ("event".into(), event)],
                    n as f64,
                ));
        }
        for r in [
            AttemptResult::Scheduled,
            AttemptResult::Unschedulable,
            AttemptResult::Error,
        ] {
            s.counters
                .entry(names::SCHEDULE_ATTEMPTS)
                .or_default()
                .push((
                    vec![("result".into(), r.as_str().into()), profile.clone()],
                    sched.metrics().attempts_total(r) as f64,
                ));
        }
        for (name, labels, v) in sched.gauges() {
            s.gauges
                .entry(name)
                .or_default()
                .push((owned(&labels), v as f64));
        }
        s
    }
}

/// The Prometheus text exposition format 0.0.4, as kube-scheduler's `/metrics` serves it
/// (client_golang's `expfmt`): `# HELP`/`# TYPE` per family, counters named with their
/// `_total` (kube's names), histograms as cumulative `_bucket{le=…}`, `_sum`, `_count`, values
/// and bounds printed as Go prints floats (`1.5e-05`), no `# EOF`. The `workload` label tells
/// snapshots apart when given.
pub fn encode_prometheus(snapshots: &[(Option<String>, Snapshot)]) -> String {
    use crate::template::go_format_float as num;
    use std::fmt::Write as _;
    let esc_label = |v: &str| {
        v.replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', "\\n")
    };
    let labels_of = |l: &Labels, wl: &Option<String>, extra: Option<(&str, String)>| -> String {
        let mut parts: Vec<String> = Vec::new();
        if let Some(w) = wl {
            parts.push(format!("workload=\"{}\"", esc_label(w)));
        }
        for (k, v) in l {
            parts.push(format!("{k}=\"{}\"", esc_label(v)));
        }
        if let Some((k, v)) = extra {
            parts.push(format!("{k}=\"{v}\""));
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!("{{{}}}", parts.join(","))
        }
    };
    let mut out = String::new();
    let mut names: Vec<&'static str> = snapshots
        .iter()
        .flat_map(|(_, s)| {
            s.histograms
                .keys()
                .chain(s.counters.keys())
                .chain(s.gauges.keys())
        })
        .copied()
        .collect();
    names.sort_unstable();
    names.dedup();
    for name in names {
        let kind = if snapshots
            .iter()
            .any(|(_, s)| s.histograms.contains_key(name))
        {
            "histogram"
        } else if snapshots.iter().any(|(_, s)| s.counters.contains_key(name)) {
            "counter"
        } else {
            "gauge"
        };
        let _ = writeln!(out, "# HELP {name} {}.", help(name).replace('\\', "\\\\"));
        let _ = writeln!(out, "# TYPE {name} {kind}");
        for (wl, s) in snapshots {
            for (l, h) in s.histograms.get(name).into_iter().flatten() {
                let mut cum = 0;
                for &(bound, c) in &h.buckets {
                    cum += c;
                    let le = if bound == f64::MAX {
                        "+Inf".to_string()
                    } else {
                        num(bound)
                    };
                    let _ = writeln!(
                        out,
                        "{name}_bucket{} {cum}",
                        labels_of(l, wl, Some(("le", le)))
                    );
                }
                let _ = writeln!(out, "{name}_sum{} {}", labels_of(l, wl, None), num(h.sum));
                let _ = writeln!(out, "{name}_count{} {}", labels_of(l, wl, None), h.count);
            }
            for (l, v) in s
                .counters
                .get(name)
                .into_iter()
                .chain(s.gauges.get(name))
                .flatten()
            {
                let _ = writeln!(out, "{name}{} {}", labels_of(l, wl, None), num(*v));
            }
        }
    }
    out
}

/// Families whose kube names end in `_total`: the text encoder adds the suffix itself.
fn base_name(name: &str) -> &str {
    name.strip_suffix("_total").unwrap_or(name)
}

fn help(name: &str) -> &'static str {
    match name {
        names::EXTENSION_POINT_DURATION => {
            "Latency for running all plugins of a specific extension point"
        }
        names::PLUGIN_EXECUTION_DURATION => {
            "Duration for running a plugin at a specific extension point"
        }
        names::QUEUE_INCOMING_PODS => {
            "Number of pods added to scheduling queues by event and queue type"
        }
        names::SCHEDULE_ATTEMPTS => "Number of attempts to schedule pods, by the result",
        names::PENDING_PODS => "Number of pending pods, by the queue type",
        names::BATCH_ATTEMPTS => "Counts of results when we attempt to use batching",
        names::BATCH_CACHE_FLUSHED => "Counts of cache flushes by reason",
        names::BATCH_RESCORE_ATTEMPTS => "Counts of rescore attempts during opportunistic batching",
        names::GET_NODE_HINT_DURATION => "Latency for getting a node hint",
        names::STORE_SCHEDULE_RESULTS_DURATION => "Latency for storing scheduling results",
        names::BATCH_RESCORE_DURATION => {
            "Latency for rescoring a node during opportunistic batching"
        }
        _ => "tidegate metric (kube-scheduler's name where one exists)",
    }
}

/// The text exposition of `snapshots` (`workload label`, snapshot); the label is omitted when
/// `None`. OpenMetrics text, ending with `# EOF`.
pub fn encode(snapshots: &[(Option<String>, Snapshot)]) -> String {
    let mut registry = Registry::default();
    let with = |labels: &Labels, wl: &Option<String>| -> Labels {
        let mut l = labels.clone();
        if let Some(w) = wl {
            l.insert(0, ("workload".into(), w.clone()));
        }
        l
    };
    let mut hist: BTreeMap<&'static str, Family<Bucketed>> = BTreeMap::new();
    let mut counters: BTreeMap<&'static str, Family<f64>> = BTreeMap::new();
    let mut gauges: BTreeMap<&'static str, Family<f64>> = BTreeMap::new();
    for (wl, s) in snapshots {
        for (name, members) in &s.histograms {
            let f = hist.entry(name).or_default();
            f.members
                .extend(members.iter().map(|(l, h)| (with(l, wl), h.clone())));
        }
        for (name, members) in &s.counters {
            let f = counters.entry(name).or_default();
            f.metric_type = Some(MetricType::Counter);
            f.members
                .extend(members.iter().map(|(l, v)| (with(l, wl), *v)));
        }
        for (name, members) in &s.gauges {
            let f = gauges.entry(name).or_default();
            f.metric_type = Some(MetricType::Gauge);
            f.members
                .extend(members.iter().map(|(l, v)| (with(l, wl), *v)));
        }
    }
    for (name, f) in hist {
        registry.register(name, help(name), f);
    }
    for (name, f) in counters {
        registry.register(base_name(name), help(name), f);
    }
    for (name, f) in gauges {
        registry.register(name, help(name), f);
    }
    let mut out = String::new();
    // Encoding into a String cannot fail.
    let _ = prometheus_client::encoding::text::encode(&mut out, &registry);
    out
}
