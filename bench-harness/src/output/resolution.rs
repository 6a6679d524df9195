//! The resolution of a compared value: the smallest change the thing that produced it can
//! show. `compare` never calls a change within one step of it a regression (or an
//! improvement): two runs whose true values differ by less than a step can still print
//! different values, and runs whose values repeat exactly (a bucket, a sampling interval)
//! still differ by a whole step.
//!
//! The step comes from the producer, known from the item's `Metric`, `estimator` and
//! `SamplingInterval` labels, its unit and the statistic, never from the values themselves
//! (the smallest gap between two runs' values is the whole change when every run a side
//! repeats one value):
//!
//! | producer | statistic | step at value v |
//! |---|---|---|
//! | `SchedulingThroughput` (tidegate: label `SamplingInterval`; kube: 1 s, `throughputSampleInterval` in scheduler_perf's `util.go`) | every one | 1 / interval pods/s: a sample is the pods bound in one interval over its length |
//! | histogram, `estimator=exact` (tidegate: hdrhistogram of nanoseconds, 3 significant digits, `engine/src/framework/metrics`) | `PercNN` | the hdrhistogram bucket's range at v (1 ns below 2,048 ns, 2 ns below 4,096 ns, …) |
//! | histogram, `estimator=buckets`, or kube's own files (no `estimator`: `collectHistogramVec` interpolates in the metric's buckets) | `PercNN` | the width of kube's bucket holding v (the metric's buckets as the engine declares them, kube's) |
//! | histogram, any estimator | `Average` | none: sum over count of the observed values |
//! | memory (`MB`, read from `/proc`'s kB) | `PercNN`, `Max` | 1 kB |
//! | anything else | | none: every change counts |

use crate::output::report::DataItem;
use tidegate_engine::metrics::{AttemptResult, ExtensionPoint, Series};
use tidegate_engine::{ClusterEvent, Code};

/// The significant digits of the engine's duration histograms (`new_histogram` in
/// `engine/src/framework/metrics/mod.rs`).
const HDR_SIGNIFICANT_DIGITS: u8 = 3;

/// kube's throughput sampling interval (`throughputSampleInterval`, scheduler_perf's
/// `util.go`): kube's data items carry no `SamplingInterval` label.
const KUBE_SAMPLING_INTERVAL_SECS: f64 = 1.0;

/// How a statistic's values were produced, and so the smallest change they can show.
#[derive(Clone, Debug, PartialEq)]
pub enum Quantum {
    /// Any change shows (a mean over sums, a count).
    Exact,
    /// Throughput samples over intervals of this many seconds.
    Interval(f64),
    /// hdrhistogram quantiles of nanoseconds, in ms.
    Hdr,
    /// Quantiles interpolated in buckets with these upper bounds (ms, ascending).
    Buckets(Vec<f64>),
    /// Megabytes read as kB.
    Kilobytes,
}

impl Quantum {
    /// The producer of `item`'s statistic `stat`.
    pub fn of(item: &DataItem, stat: &str) -> Quantum {
        let label = |k: &str| {
            item.labels
                .get(k)
                .map(String::as_str)
                .filter(|v| *v != "not applicable")
        };
        let metric = label("Metric").unwrap_or("");
        if metric == "SchedulingThroughput" {
            let secs = label("SamplingInterval")
                .and_then(crate::workload::parse_go_duration)
                .map(|d| d.as_secs_f64())
                .filter(|s| *s > 0.0)
                .unwrap_or(KUBE_SAMPLING_INTERVAL_SECS);
            return Quantum::Interval(secs);
        }
        let quantile = stat.starts_with("Perc") && !stat.ends_with("Threshold");
        match item.unit.as_str() {
            "ms" if quantile => match label("estimator") {
                Some("exact") => Quantum::Hdr,
                Some("buckets") | None => {
                    kube_buckets_ms(metric).map_or(Quantum::Exact, Quantum::Buckets)
                }
                Some(_) => Quantum::Exact,
            },
            "MB" if quantile || stat == "Max" => Quantum::Kilobytes,
            _ => Quantum::Exact,
        }
    }

    /// The coarser of two producers of one statistic (the runs of a side may sample at
    /// different intervals: the longest one counts).
    pub fn coarser(self, other: Quantum) -> Quantum {
        match (self, other) {
            (Quantum::Interval(a), Quantum::Interval(b)) => Quantum::Interval(a.max(b)),
            (Quantum::Exact, o) => o,
            (s, _) => s,
        }
    }

    /// The step at value `v`: a change of at most this much is within the resolution.
    pub fn step_at(&self, v: f64) -> f64 {
        match self {
            Quantum::Exact => 0.0,
            Quantum::Interval(secs) => 1.0 / secs,
            Quantum::Hdr => hdr_step_ms(v),
            Quantum::Buckets(bounds) => bucket_width(bounds, v),
            Quantum::Kilobytes => 1.0 / 1024.0,
        }
    }
}

/// The range of the hdrhistogram bucket holding `v` ms (recorded in ns), in ms.
fn hdr_step_ms(v: f64) -> f64 {
    let ns = (v * 1e6).round();
    if !(ns.is_finite() && ns >= 0.0) {
        return 0.0;
    }
    let h = hdrhistogram::Histogram::<u64>::new(HDR_SIGNIFICANT_DIGITS)
        .expect("3 significant digits is a valid precision");
    h.equivalent_range(ns as u64) as f64 / 1e6
}

/// The width of the bucket holding `v` (the first bucket starts at 0; above the highest
/// bound, where the interpolation returns that bound, the highest finite bucket's).
fn bucket_width(bounds: &[f64], v: f64) -> f64 {
    let mut lower = 0.0;
    for &upper in bounds {
        if v <= upper {
            return upper - lower;
        }
        lower = upper;
    }
    match bounds {
        [.., a, b] => b - a,
        [b] => *b,
        [] => 0.0,
    }
}

/// kube's bucket bounds of a duration histogram, by metric name, in ms (the engine
/// declares each family's buckets as kube does; one series of each family asks for them).
pub fn kube_buckets_ms(metric: &str) -> Option<Vec<f64>> {
    let ep = ExtensionPoint::Filter;
    let one_of_each = [
        Series::ExtensionPoint(ep, Code::Success),
        Series::Plugin("", ep, Code::Success),
        Series::AttemptDuration(AttemptResult::Scheduled),
        Series::AlgorithmDuration,
        Series::SliDuration(1),
        Series::PodSchedulingAttempts,
        Series::GateWait,
        Series::QueueingHint("", ClusterEvent::wildcard(""), None),
        Series::GetNodeHintDuration(true),
        Series::StoreScheduleResultsDuration,
        Series::BatchRescoreDuration,
    ];
    one_of_each
        .iter()
        .find(|s| s.metric_name() == metric && s.is_duration())
        .map(|s| s.buckets().into_iter().map(|b| b * 1000.0).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn item(metric: &str, unit: &str, labels: &[(&str, &str)]) -> DataItem {
        let mut l: BTreeMap<String, String> = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        l.insert("Metric".into(), metric.into());
        DataItem {
            data: BTreeMap::new(),
            unit: unit.into(),
            labels: l,
        }
    }

    #[test]
    fn throughput_steps_by_its_sampling_interval() {
        let tp =
            |i: &[(&str, &str)]| Quantum::of(&item("SchedulingThroughput", "pods/s", i), "Perc50");
        assert_eq!(tp(&[("SamplingInterval", "1s")]).step_at(1e5), 1.0);
        assert_eq!(tp(&[("SamplingInterval", "20ms")]).step_at(1e5), 50.0);
        assert_eq!(tp(&[("SamplingInterval", "500µs")]).step_at(1e5), 2000.0);
        // kube's files: 1 s.
        assert_eq!(tp(&[]).step_at(150.0), 1.0);
        // The coarsest interval of a side counts.
        let q = tp(&[("SamplingInterval", "20ms")]).coarser(tp(&[("SamplingInterval", "1s")]));
        assert_eq!(q.step_at(1e5), 1.0);
    }

    #[test]
    fn exact_quantiles_step_by_the_hdrhistogram_bucket() {
        let q = Quantum::of(
            &item(
                "scheduler_framework_extension_point_duration_seconds",
                "ms",
                &[("estimator", "exact")],
            ),
            "Perc90",
        );
        assert_eq!(q, Quantum::Hdr);
        // 1 ns up to 2,047 ns, then doubling with each power of two.
        assert!((q.step_at(30e-6) - 1e-6).abs() < 1e-15);
        assert!((q.step_at(3000e-6) - 2e-6).abs() < 1e-15);
        assert!(
            (q.step_at(1.0) - 512e-6).abs() < 1e-12,
            "{}",
            q.step_at(1.0)
        );
        // A mean is a sum over a count: exact.
        let avg = Quantum::of(
            &item(
                "scheduler_framework_extension_point_duration_seconds",
                "ms",
                &[("estimator", "exact")],
            ),
            "Average",
        );
        assert_eq!(avg.step_at(30e-6), 0.0);
    }

    #[test]
    fn bucketed_quantiles_step_by_the_bucket_width() {
        // kube's own file: no estimator. Extension points: 0.1 ms × 2^k, 12 buckets.
        let q = Quantum::of(
            &item(
                "scheduler_framework_extension_point_duration_seconds",
                "ms",
                &[("extension_point", "PreEnqueue")],
            ),
            "Perc90",
        );
        assert!((q.step_at(0.05) - 0.1).abs() < 1e-12);
        assert!((q.step_at(0.15) - 0.1).abs() < 1e-12);
        assert!((q.step_at(0.3) - 0.2).abs() < 1e-12);
        // Past the highest bound (204.8 ms): the last finite bucket's width.
        assert!((q.step_at(1e4) - 102.4).abs() < 1e-9);
        // Unknown metrics and counts have no known quantum.
        assert_eq!(
            Quantum::of(&item("no_such_metric", "ms", &[]), "Perc90"),
            Quantum::Exact
        );
        assert_eq!(
            Quantum::of(&item("tidegate_summary", "pods", &[]), "bound"),
            Quantum::Exact
        );
    }

    #[test]
    fn every_duration_family_has_kube_buckets() {
        use tidegate_engine::metrics::names;
        for m in [
            names::EXTENSION_POINT_DURATION,
            names::PLUGIN_EXECUTION_DURATION,
            names::SCHEDULING_ATTEMPT_DURATION,
            names::SCHEDULING_ALGORITHM_DURATION,
            names::POD_SCHEDULING_SLI_DURATION,
            names::QUEUEING_HINT_DURATION,
            names::GET_NODE_HINT_DURATION,
            names::STORE_SCHEDULE_RESULTS_DURATION,
            names::BATCH_RESCORE_DURATION,
            names::TIDEGATE_GATE_WAIT,
        ] {
            assert!(kube_buckets_ms(m).is_some_and(|b| !b.is_empty()), "{m}");
        }
        assert_eq!(kube_buckets_ms(names::POD_SCHEDULING_ATTEMPTS), None);
    }
}
