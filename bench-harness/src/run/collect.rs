//! The collectors of a collection window: throughput (the store's bind recorder), the
//! scheduler's metrics, memory and pending pods over time, SchedulingDuration, and the CPU
//! profile (`--flamegraph`).

use crate::cluster::store::Store;
use crate::output::flame::{Profile, Samples};
use crate::output::report::{self, DataItem};
use crate::run::flame;
use crate::run::memory::rss_mb;
use crate::run::pace::{Pace, sleep_until};
use crate::workload::MetricsCollectorConfig;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tidegate_engine::Scheduler;
use tidegate_engine::clock::Time;

/// One collection window (`createPods` with `collectMetrics`, or `startCollectingMetrics`
/// to `stopCollectingMetrics`): the store's bind recorder, the memory sampler (every 500 ms,
/// as kube's memory collector; on a virtual clock, one sample at each end) and the start time
/// for SchedulingDuration.
pub(crate) struct Window {
    /// The `Name` label: `BenchmarkPerfScheduling/<testCase>/<workload>/<namespace or name>`.
    name: String,
    collector: usize,
    started: Time,
    stop: Arc<AtomicBool>,
    sampler: Option<JoinHandle<Sampled>>,
    first_sample: Option<f64>,
    first_pending: report::PendingSample,
    /// With `--flamegraph`: the run's profiler's counts when the window opened.
    profile_base: Option<Samples>,
    /// The test case's `metricsCollectorConfig`, if it has one.
    metrics: Option<MetricsCollectorConfig>,
}

/// What the window's sampler thread collected: RSS (MB) and pending pods, over time.
type Sampled = (Vec<(f64, f64)>, Vec<report::PendingSample>);

/// The pending-pods gauges now, `t` seconds into the window.
fn pending_now(sched: &Scheduler, t: f64) -> report::PendingSample {
    let c = sched.queue.counts();
    report::PendingSample {
        t,
        active: (c.active + c.in_flight) as u64,
        backoff: c.backoff as u64,
        unschedulable: c.unschedulable as u64,
        gated: c.gated as u64,
    }
}

impl Window {
    pub(crate) fn open(
        store: &Store,
        sched: &Arc<Scheduler>,
        pace: &Pace,
        name: String,
        namespaces: &[String],
        selector: &BTreeMap<String, String>,
        flamegraph: bool,
    ) -> Window {
        sched.metrics().reset_histograms();
        let collector = store.start_collecting(namespaces, selector);
        let started = pace.now();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let sampler = if pace.is_virtual() {
            None
        } else {
            let t0 = Instant::now();
            let sched = sched.clone();
            std::thread::Builder::new()
                .name("tidegate-memory".into())
                .spawn(move || {
                    let (mut samples, mut pending) = (vec![], vec![]);
                    loop {
                        let t = t0.elapsed().as_secs_f64();
                        if let Some(mb) = rss_mb() {
                            samples.push((t, mb));
                        }
                        pending.push(pending_now(&sched, t));
                        if flag.load(Ordering::Relaxed) {
                            return (samples, pending);
                        }
                        sleep_until(Instant::now() + Duration::from_millis(500), &flag);
                    }
                })
                .ok()
        };
        Window {
            name,
            collector,
            started,
            stop,
            sampler,
            first_sample: if pace.is_virtual() { rss_mb() } else { None },
            first_pending: pending_now(sched, 0.0),
            profile_base: flamegraph.then(flame::read_profiler).flatten(),
            metrics: None,
        }
    }

    /// The window reports only the histograms of the test case's `metricsCollectorConfig`.
    pub(crate) fn with_metrics(mut self, metrics: Option<MetricsCollectorConfig>) -> Window {
        self.metrics = metrics;
        self
    }

    /// A window still open when the workload ends: its collectors stop and what they
    /// collected is dropped, as upstream's cleanup cancels them without collecting.
    pub(crate) fn discard(self, store: &Store) {
        let _ = store.stop_collecting(self.collector);
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.sampler {
            let _ = h.join();
        }
    }

    /// Stops the collectors and returns their data items (and the window's CPU samples).
    pub(crate) fn close(
        self,
        store: &Store,
        sched: &Scheduler,
        pace: &Pace,
        profile: &mut Option<Profile>,
        series: &mut Vec<report::WindowSeries>,
    ) -> Vec<DataItem> {
        // Unsymbolized: symbolizing (the binary's debug information) waits for the SVG.
        if let Some(base) = &self.profile_base
            && let Some(now) = flame::read_profiler()
        {
            let window = flame::window(now, base);
            match profile {
                Some(p) => p.merge(window),
                None => *profile = Some(window),
            }
        }
        let (binds, dur) = store.stop_collecting(self.collector);
        let elapsed = pace.now().saturating_sub(self.started);
        self.stop.store(true, Ordering::Relaxed);
        let (mut samples, mut pending) =
            self.sampler.and_then(|h| h.join().ok()).unwrap_or_default();
        if let Some(first) = self.first_sample {
            samples.push((0.0, first));
            if let Some(last) = rss_mb() {
                samples.push((elapsed.as_secs_f64(), last));
            }
        }
        if pending.is_empty() {
            pending = vec![
                self.first_pending,
                pending_now(sched, elapsed.as_secs_f64()),
            ];
        }
        let mut sorted = binds.clone();
        sorted.sort_unstable();
        let span = match (sorted.first(), sorted.last()) {
            (Some(a), Some(b)) => *b - *a,
            _ => dur,
        };
        series.push(report::WindowSeries {
            name: self.name.clone(),
            throughput: report::throughput_series(&sorted, dur, report::sampling_interval(span)),
            pending,
        });
        let mut items = vec![report::throughput_item(&binds, dur, &self.name)];
        items.extend(report::histogram_items(
            sched.metrics(),
            &self.name,
            self.metrics.as_ref(),
        ));
        items.extend(report::counter_items(sched.metrics(), &self.name));
        items.extend(report::memory_items(&samples, &self.name));
        items.push(report::scheduling_duration_item(elapsed, &self.name));
        items
    }
}

pub(crate) const OVERLAPPING: &str = "metrics collection is overlapping: a collector was started before the previous one was stopped";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::parse_config;
    use std::path::Path;

    use tidegate_engine::Code;
    use tidegate_engine::metrics::{AttemptResult, ExtensionPoint, Metrics, Series};

    /// The items of `m` for metric `metric`: their labels other than Metric, Name and
    /// estimator, and the sample count behind each (from the `exact` items' Average).
    fn items_of(items: &[DataItem], metric: &str) -> Vec<Vec<(String, String)>> {
        items
            .iter()
            .filter(|i| i.labels["Metric"] == metric && i.labels["estimator"] == "exact")
            .map(|i| {
                i.labels
                    .iter()
                    .filter(|(k, _)| !["Metric", "Name", "estimator"].contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .collect()
    }

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// A test case's `metricsCollectorConfig` (starvation's shape), as kube's
    /// metricsCollector.collect (test/integration/scheduler_perf/util.go): only the named
    /// families; an item per listed label value, merged over the labels not named; a family
    /// named without labels merged whole; values without samples give no item.
    #[test]
    fn metrics_collector_config_selects_and_merges_the_histograms() {
        let text = "\
- name: T
  metricsCollectorConfig:
    metrics:
      scheduler_scheduling_attempt_duration_seconds:
      - label: result
        values: [scheduled, unschedulable, error]
      scheduler_framework_extension_point_duration_seconds:
  workloadTemplate:
  - opcode: createPods
    count: 1
    collectMetrics: true
  workloads:
  - name: w
";
        let cfg = parse_config(Path::new("c.yaml"), text).unwrap();
        let config = cfg.test_cases[0].metrics_collector.clone().unwrap();
        let m = Metrics::new();
        m.observe(Series::AttemptDuration(AttemptResult::Scheduled), 1_000_000);
        m.observe(
            Series::AttemptDuration(AttemptResult::Unschedulable),
            2_000_000,
        );
        // Two statuses of one extension point and a second extension point: one item.
        m.observe(
            Series::ExtensionPoint(ExtensionPoint::Filter, Code::Success),
            1_000_000,
        );
        m.observe(
            Series::ExtensionPoint(ExtensionPoint::Filter, Code::Unschedulable),
            3_000_000,
        );
        m.observe(
            Series::ExtensionPoint(ExtensionPoint::Score, Code::Success),
            2_000_000,
        );
        m.observe(Series::AlgorithmDuration, 1_000_000);
        let items = report::histogram_items(&m, "w", Some(&config));
        let attempt = "scheduler_scheduling_attempt_duration_seconds";
        assert_eq!(
            items_of(&items, attempt),
            vec![
                pairs(&[("result", "scheduled")]),
                pairs(&[("result", "unschedulable")])
            ]
        );
        let ep = "scheduler_framework_extension_point_duration_seconds";
        assert_eq!(items_of(&items, ep), vec![pairs(&[])]);
        let merged = items
            .iter()
            .find(|i| i.labels["Metric"] == ep && i.labels["estimator"] == "exact")
            .unwrap();
        // (1 + 3 + 2) ms over 3 samples.
        assert!((merged.data["Average"] - 2.0).abs() < 1e-9, "{merged:?}");
        assert!(items_of(&items, "scheduler_scheduling_algorithm_duration_seconds").is_empty());
        // Without a config, tidegate's default: every family, by extension point.
        let all = report::histogram_items(&m, "w", None);
        assert_eq!(
            items_of(&all, ep),
            vec![
                pairs(&[("extension_point", "Filter")]),
                pairs(&[("extension_point", "Score")])
            ]
        );
        assert_eq!(
            items_of(&all, "scheduler_scheduling_algorithm_duration_seconds"),
            vec![pairs(&[])]
        );
        let bad = text.replace("- label: result", "- lable: result");
        let e = parse_config(Path::new("c.yaml"), &bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains("lable"), "{e}");
    }
}
