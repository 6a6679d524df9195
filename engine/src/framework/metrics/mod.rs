//! Metrics with kube-scheduler's names, labels and buckets.
//!
//! Durations are recorded into hdrhistograms at nanosecond resolution: extension-point,
//! attempt and algorithm durations on every call, per-plugin durations
//! (`scheduler_plugin_execution_duration_seconds`) for the 10 % of scheduling cycles and of
//! PreEnqueue runs that kube samples (`PLUGIN_METRICS_SAMPLE_PERCENT`,
//! `sample_plugin_metrics`; the cycle's draw is `CycleState::record_plugin_metrics`, and an
//! unsampled plugin call reads no clock). Recording goes to a recorder owned by the
//! calling thread (`thread_local::ThreadLocal`, one uncontended lock), and readers merge all
//! recorders off the hot path. Two estimators are offered for each histogram: exact
//! hdrhistogram percentiles, and kube's bucket interpolation (what perf-dash sees).

pub mod names;

use crate::api::Sym;
use crate::framework::status::Code;
use ahash::AHashMap;
use hdrhistogram::Histogram;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use thread_local::ThreadLocal;

/// Extension points, with kube's label spelling.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ExtensionPoint {
    PreEnqueue,
    PreFilter,
    Filter,
    PostFilter,
    PreScore,
    Score,
    Reserve,
    Unreserve,
    Permit,
    PreBindPreFlight,
    PreBind,
    Bind,
    PostBind,
    PlacementGenerate,
    PlacementFeasible,
    PlacementScore,
    PlacementScoreExtensionNormalize,
    PodGroupPostFilter,
}

impl ExtensionPoint {
    pub const ALL: [ExtensionPoint; 18] = [
        ExtensionPoint::PreEnqueue,
        ExtensionPoint::PreFilter,
        ExtensionPoint::Filter,
        ExtensionPoint::PostFilter,
        ExtensionPoint::PreScore,
        ExtensionPoint::Score,
        ExtensionPoint::Reserve,
        ExtensionPoint::Unreserve,
        ExtensionPoint::Permit,
        ExtensionPoint::PreBindPreFlight,
        ExtensionPoint::PreBind,
        ExtensionPoint::Bind,
        ExtensionPoint::PostBind,
        ExtensionPoint::PlacementGenerate,
        ExtensionPoint::PlacementFeasible,
        ExtensionPoint::PlacementScore,
        ExtensionPoint::PlacementScoreExtensionNormalize,
        ExtensionPoint::PodGroupPostFilter,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            ExtensionPoint::PreEnqueue => "PreEnqueue",
            ExtensionPoint::PreFilter => "PreFilter",
            ExtensionPoint::Filter => "Filter",
            ExtensionPoint::PostFilter => "PostFilter",
            ExtensionPoint::PreScore => "PreScore",
            ExtensionPoint::Score => "Score",
            ExtensionPoint::Reserve => "Reserve",
            ExtensionPoint::Unreserve => "Unreserve",
            ExtensionPoint::Permit => "Permit",
            ExtensionPoint::PreBindPreFlight => "PreBindPreFlight",
            ExtensionPoint::PreBind => "PreBind",
            ExtensionPoint::Bind => "Bind",
            ExtensionPoint::PostBind => "PostBind",
            ExtensionPoint::PlacementGenerate => "PlacementGenerate",
            ExtensionPoint::PlacementFeasible => "PlacementFeasible",
            ExtensionPoint::PlacementScore => "PlacementScore",
            ExtensionPoint::PlacementScoreExtensionNormalize => "PlacementScoreExtensionNormalize",
            ExtensionPoint::PodGroupPostFilter => "PodGroupPostFilter",
        }
    }
}

/// A gauge reading: metric name, label pairs, value.
pub type Gauge = (&'static str, Vec<(&'static str, String)>, i64);

/// Results of a scheduling attempt (`result` label).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AttemptResult {
    Scheduled,
    Unschedulable,
    Error,
}

impl AttemptResult {
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptResult::Scheduled => "scheduled",
            AttemptResult::Unschedulable => "unschedulable",
            AttemptResult::Error => "error",
        }
    }
}

/// Results of a pod-group scheduling attempt (kube's `PodGroupScheduled`,
/// `PodGroupUnschedulable`, `PodGroupWaitingOnPreemption`, `PodGroupScheduleError`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PodGroupAttempt {
    Scheduled,
    Unschedulable,
    WaitingOnPreemption,
    Error,
}

impl PodGroupAttempt {
    pub fn as_str(self) -> &'static str {
        match self {
            PodGroupAttempt::Scheduled => "scheduled",
            PodGroupAttempt::Unschedulable => "unschedulable",
            PodGroupAttempt::WaitingOnPreemption => "waiting_on_preemption",
            PodGroupAttempt::Error => "error",
        }
    }
}

/// kube's batch attempt results (`scheduler_batch_attempts_total{result}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BatchAttempt {
    NoHint,
    HintUsed,
    HintNotUsed,
}

impl BatchAttempt {
    pub(crate) const ALL: [BatchAttempt; 3] = [
        BatchAttempt::NoHint,
        BatchAttempt::HintUsed,
        BatchAttempt::HintNotUsed,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            BatchAttempt::NoHint => "no_hint",
            BatchAttempt::HintUsed => "hint_used",
            BatchAttempt::HintNotUsed => "hint_not_used",
        }
    }
}

/// kube's batch cache flush reasons (`scheduler_batch_cache_flushed_total{reason}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BatchFlush {
    PodFailed,
    PodSkipped,
    PodNominated,
    NodeMissing,
    EmptyList,
    Expired,
    PodIncompatible,
    PodNotBatchable,
    FilterError,
    PreScoreError,
    RescoreError,
    NormalizeError,
}

impl BatchFlush {
    pub(crate) const ALL: [BatchFlush; 12] = [
        BatchFlush::PodFailed,
        BatchFlush::PodSkipped,
        BatchFlush::PodNominated,
        BatchFlush::NodeMissing,
        BatchFlush::EmptyList,
        BatchFlush::Expired,
        BatchFlush::PodIncompatible,
        BatchFlush::PodNotBatchable,
        BatchFlush::FilterError,
        BatchFlush::PreScoreError,
        BatchFlush::RescoreError,
        BatchFlush::NormalizeError,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            BatchFlush::PodFailed => "pod_failed",
            BatchFlush::PodSkipped => "pod_skipped",
            BatchFlush::PodNominated => "pod_nominated",
            BatchFlush::NodeMissing => "node_missing",
            BatchFlush::EmptyList => "empty_list",
            BatchFlush::Expired => "expired",
            BatchFlush::PodIncompatible => "pod_incompatible",
            BatchFlush::PodNotBatchable => "pod_not_batchable",
            BatchFlush::FilterError => "filter_error",
            BatchFlush::PreScoreError => "prescore_error",
            BatchFlush::RescoreError => "rescore_error",
            BatchFlush::NormalizeError => "normalize_error",
        }
    }
}

/// One opportunistic batching counter: metric, profile, its `result` or `reason` label as
/// (name, value) (none for the rescore count), and the count.
pub(crate) type BatchCounter = (
    &'static str,
    String,
    Option<(&'static str, &'static str)>,
    u64,
);

/// Opportunistic batching's counters per profile: 3 attempt results, 12 flush reasons, 1
/// rescore count.
const BATCH_SLOTS: usize = BatchAttempt::ALL.len() + BatchFlush::ALL.len() + 1;

/// A pod-group counter: metric, profile, `result` label (none for
/// `scheduler_generated_placements_total`).
type PodGroupCounterKey = (&'static str, Sym, Option<&'static str>);

/// One histogram series: a metric family plus its label values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Series {
    /// `scheduler_framework_extension_point_duration_seconds{extension_point,status}`
    ExtensionPoint(ExtensionPoint, Code),
    /// `scheduler_plugin_execution_duration_seconds{plugin,extension_point,status}`
    Plugin(&'static str, ExtensionPoint, Code),
    /// `scheduler_scheduling_attempt_duration_seconds{result}`
    AttemptDuration(AttemptResult),
    /// `scheduler_scheduling_algorithm_duration_seconds`
    AlgorithmDuration,
    /// `scheduler_pod_scheduling_sli_duration_seconds{attempts}` (15 = "15+")
    SliDuration(u8),
    /// `scheduler_pod_scheduling_attempts` (a count, not a duration)
    PodSchedulingAttempts,
    /// `tidegate_gate_wait_seconds`: from a pod's creation to the removal of its last gate.
    GateWait,
    /// `scheduler_queueing_hint_execution_duration_seconds{plugin,event,hint}` (hint `Error`
    /// when the function failed).
    QueueingHint(
        &'static str,
        crate::framework::events::ClusterEvent,
        Option<crate::framework::events::QueueingHint>,
    ),
    /// `scheduler_get_node_hint_duration_seconds{hinted}` (opportunistic batching; `true`:
    /// `hint`, `false`: `no_hint`).
    GetNodeHintDuration(bool),
    /// `scheduler_store_schedule_results_duration_seconds`
    StoreScheduleResultsDuration,
    /// `scheduler_batch_rescore_duration_seconds`
    BatchRescoreDuration,
    /// `scheduler_podgroup_scheduling_attempt_duration_seconds{result}`
    PodGroupAttemptDuration(PodGroupAttempt),
    /// `scheduler_podgroup_scheduling_algorithm_duration_seconds`
    PodGroupAlgorithmDuration,
    /// `scheduler_placement_evaluation_duration_seconds{result}` (`true`: feasible).
    PlacementEvaluationDuration(bool),
}

impl Series {
    pub fn metric_name(&self) -> &'static str {
        match self {
            Series::ExtensionPoint(..) => names::EXTENSION_POINT_DURATION,
            Series::Plugin(..) => names::PLUGIN_EXECUTION_DURATION,
            Series::AttemptDuration(_) => names::SCHEDULING_ATTEMPT_DURATION,
            Series::AlgorithmDuration => names::SCHEDULING_ALGORITHM_DURATION,
            Series::SliDuration(_) => names::POD_SCHEDULING_SLI_DURATION,
            Series::PodSchedulingAttempts => names::POD_SCHEDULING_ATTEMPTS,
            Series::GateWait => names::TIDEGATE_GATE_WAIT,
            Series::QueueingHint(..) => names::QUEUEING_HINT_DURATION,
            Series::GetNodeHintDuration(_) => names::GET_NODE_HINT_DURATION,
            Series::StoreScheduleResultsDuration => names::STORE_SCHEDULE_RESULTS_DURATION,
            Series::BatchRescoreDuration => names::BATCH_RESCORE_DURATION,
            Series::PodGroupAttemptDuration(_) => names::PODGROUP_SCHEDULING_ATTEMPT_DURATION,
            Series::PodGroupAlgorithmDuration => names::PODGROUP_SCHEDULING_ALGORITHM_DURATION,
            Series::PlacementEvaluationDuration(_) => names::PLACEMENT_EVALUATION_DURATION,
        }
    }

    /// Label pairs as kube spells them.
    pub fn labels(&self) -> Vec<(&'static str, String)> {
        match *self {
            Series::ExtensionPoint(p, c) => vec![
                ("extension_point", p.as_str().into()),
                ("status", c.as_str().into()),
            ],
            Series::Plugin(pl, p, c) => vec![
                ("plugin", pl.into()),
                ("extension_point", p.as_str().into()),
                ("status", c.as_str().into()),
            ],
            Series::AttemptDuration(r) => vec![("result", r.as_str().into())],
            Series::SliDuration(a) => vec![(
                "attempts",
                if a >= 15 { "15+".into() } else { a.to_string() },
            )],
            Series::PodGroupAttemptDuration(r) => vec![("result", r.as_str().into())],
            Series::PlacementEvaluationDuration(f) => {
                vec![("result", if f { "feasible" } else { "infeasible" }.into())]
            }
            Series::AlgorithmDuration
            | Series::PodGroupAlgorithmDuration
            | Series::PodSchedulingAttempts
            | Series::GateWait
            | Series::StoreScheduleResultsDuration
            | Series::BatchRescoreDuration => vec![],
            Series::GetNodeHintDuration(h) => {
                vec![("hinted", if h { "hint" } else { "no_hint" }.into())]
            }
            Series::QueueingHint(p, ev, h) => vec![
                ("plugin", p.into()),
                ("event", ev.label().into_owned()),
                ("hint", h.map_or("Error", |h| h.as_str()).into()),
            ],
        }
    }

    /// kube's bucket upper bounds for this family, in the family's unit (seconds or count).
    pub fn buckets(&self) -> Vec<f64> {
        match self {
            Series::ExtensionPoint(..) => exponential(0.0001, 2.0, 12),
            Series::Plugin(..) => exponential(0.00001, 1.5, 20),
            Series::AttemptDuration(_)
            | Series::AlgorithmDuration
            | Series::PodGroupAttemptDuration(_)
            | Series::PodGroupAlgorithmDuration
            | Series::PlacementEvaluationDuration(_) => exponential(0.001, 2.0, 15),
            Series::SliDuration(_) => exponential(0.01, 2.0, 20),
            Series::PodSchedulingAttempts => exponential(1.0, 2.0, 5),
            Series::GateWait => exponential(0.001, 2.0, 22),
            Series::QueueingHint(..) => exponential(0.00001, 1.5, 20),
            Series::GetNodeHintDuration(_)
            | Series::StoreScheduleResultsDuration
            | Series::BatchRescoreDuration => exponential(0.00001, 2.0, 12),
        }
    }

    /// Whether values are durations in nanoseconds (else plain counts).
    pub fn is_duration(&self) -> bool {
        !matches!(self, Series::PodSchedulingAttempts)
    }
}

/// kube's `prometheus.ExponentialBuckets(start, factor, count)`: each bound the previous
/// times `factor`, multiplied in the same order as Go's client, so that the bounds are the
/// same floats (and print as the same `le` labels: `1.5e-05`, not `1.5000000000000002e-05`).
pub(crate) fn exponential(mut start: f64, factor: f64, count: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        out.push(start);
        start *= factor;
    }
    out
}

fn new_histogram() -> Histogram<u64> {
    // 3 significant digits, auto-resizing: nanoseconds from 1 ns up to hours.
    Histogram::new(3).expect("3 significant digits is a valid precision")
}

#[derive(Default)]
struct LocalRecorder {
    /// Per series: every sample, and their exact sum (one lookup per observation).
    hists: AHashMap<Series, (Histogram<u64>, u128)>,
}

/// Counter of pods entering a queue: `scheduler_queue_incoming_pods_total{queue,event}`,
/// keyed queue → event so that counting an event already seen allocates nothing.
#[derive(Default)]
struct LocalCounters {
    incoming: AHashMap<&'static str, AHashMap<String, u64>>,
}

/// kube's `pluginMetricsSamplePercent` (pkg/scheduler/schedule_one.go): the share of
/// scheduling cycles, and of PreEnqueue runs, whose per-plugin durations
/// (`scheduler_plugin_execution_duration_seconds`) are recorded. Extension-point durations
/// are recorded on every run.
pub(crate) const PLUGIN_METRICS_SAMPLE_PERCENT: u64 = 10;

/// One draw of kube's `rand.Intn(100) < pluginMetricsSamplePercent`: true for about 10 %
/// of calls. A per-thread splitmix64 sequence (no shared state, so the PreEnqueue path stays
/// free of atomics); each thread's sequence starts from its own address-derived seed.
pub(crate) fn sample_plugin_metrics() -> bool {
    thread_local! {
        static STATE: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }
    STATE.with(|c| {
        let mut x = c.get();
        if x == 0 {
            // First draw on this thread: seed from the cell's address.
            x = (c as *const _ as u64) | 1;
        }
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        c.set(x);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        z % 100 < PLUGIN_METRICS_SAMPLE_PERCENT
    })
}

/// The engine's metrics registry (one per scheduler instance).
#[derive(Default)]
pub struct Metrics {
    recorders: ThreadLocal<Mutex<LocalRecorder>>,
    counters: ThreadLocal<Mutex<LocalCounters>>,
    unschedulable_pods: Mutex<AHashMap<&'static str, i64>>,
    attempts_total: [AtomicU64; 3],
    gated_pods_total: AtomicI64,
    /// Opportunistic batching's counters per profile: [`BATCH_SLOTS`] counts (the attempt
    /// results, then the flush reasons, then rescore attempts). A profile or two: a list.
    batch: Mutex<Vec<(Sym, [u64; BATCH_SLOTS])>>,
    /// Pod-group counters (`scheduler_podgroup_schedule_attempts_total`,
    /// `scheduler_generated_placements_total`, `scheduler_placement_evaluations_total`):
    /// (metric, profile, result label) → count. Off the pod hot path.
    pod_group: Mutex<AHashMap<PodGroupCounterKey, u64>>,
}

/// A merged histogram with its exact sum (in the recorded unit).
#[derive(Clone, Debug)]
pub struct HistogramSnapshot {
    pub series: Series,
    pub hist: Histogram<u64>,
    pub sum: u128,
}

impl HistogramSnapshot {
    /// Exact percentile (hdrhistogram), in seconds for durations, else in the value unit.
    pub fn exact_quantile(&self, q: f64) -> f64 {
        self.scale(self.hist.value_at_quantile(q) as f64)
    }

    pub fn mean(&self) -> f64 {
        if self.hist.is_empty() {
            return 0.0;
        }
        self.scale(self.sum as f64 / self.hist.len() as f64)
    }

    fn scale(&self, v: f64) -> f64 {
        if self.series.is_duration() {
            v / 1e9
        } else {
            v
        }
    }

    /// Cumulative counts at each of kube's bucket bounds, then the total (the `+Inf` bucket).
    ///
    /// One pass over the recorded values (a value counts under a bound when its hdrhistogram
    /// bucket starts at or below it, as `count_between(0, bound)` counts), not one pass over
    /// the whole count array per bound: reporting a workload's histograms was most of a small
    /// run's instructions before.
    pub fn bucket_counts(&self) -> (Vec<(f64, u64)>, u64) {
        let mult = if self.series.is_duration() { 1e9 } else { 1.0 };
        let mut bounds: Vec<f64> = self.series.buckets();
        bounds.sort_by(|a, b| a.total_cmp(b));
        let mut recorded = self
            .hist
            .iter_recorded()
            .map(|v| {
                (
                    self.hist.lowest_equivalent(v.value_iterated_to()),
                    v.count_at_value(),
                )
            })
            .peekable();
        let mut cumulative = 0u64;
        let buckets = bounds
            .into_iter()
            .map(|b| {
                let bound = (b * mult).round() as u64;
                while let Some(&(lo, c)) = recorded.peek() {
                    if lo > bound {
                        break;
                    }
                    cumulative += c;
                    recorded.next();
                }
                (b, cumulative)
            })
            .collect();
        (buckets, self.hist.len())
    }

    /// kube/Prometheus `histogram_quantile` over kube's buckets: linear interpolation inside the
    /// bucket holding the rank; the highest finite bound when it falls in `+Inf`.
    pub fn bucket_quantile(&self, q: f64) -> f64 {
        let (buckets, total) = self.bucket_counts();
        Self::quantile_of_buckets(&buckets, total, q)
    }

    /// [`Self::bucket_quantile`] for several quantiles over one pass of the recorded values
    /// (the report asks for four per series; each pass walks the histogram's count array up
    /// to its largest value, whose length follows the run's real durations).
    pub fn bucket_quantiles<const N: usize>(&self, qs: [f64; N]) -> [f64; N] {
        let (buckets, total) = self.bucket_counts();
        qs.map(|q| Self::quantile_of_buckets(&buckets, total, q))
    }

    fn quantile_of_buckets(buckets: &[(f64, u64)], total: u64, q: f64) -> f64 {
        if total == 0 {
            return f64::NAN;
        }
        let rank = q * total as f64;
        let mut prev_bound = 0.0;
        let mut prev_count = 0u64;
        for (bound, count) in buckets {
            if *count as f64 >= rank {
                let in_bucket = (count - prev_count) as f64;
                if in_bucket == 0.0 {
                    return *bound;
                }
                return prev_bound
                    + (bound - prev_bound) * ((rank - prev_count as f64) / in_bucket);
            }
            prev_bound = *bound;
            prev_count = *count;
        }
        buckets.last().map_or(f64::NAN, |b| b.0)
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        Metrics::default()
    }

    /// Records a duration in nanoseconds (or a count for count-valued series).
    #[inline]
    pub fn observe(&self, series: Series, value: u64) {
        let rec = self.recorders.get_or_default();
        let mut rec = rec.lock();
        let (h, sum) = rec
            .hists
            .entry(series)
            .or_insert_with(|| (new_histogram(), 0));
        // Auto-resizing histograms only fail on values beyond u64 range; clamp anyway.
        let _ = h.record(value.max(1));
        *sum += u128::from(value);
    }

    pub(crate) fn inc_incoming(&self, queue: &'static str, event: &str) {
        let c = self.counters.get_or_default();
        let mut c = c.lock();
        let per_event = c.incoming.entry(queue).or_default();
        match per_event.get_mut(event) {
            Some(n) => *n += 1,
            None => {
                per_event.insert(event.to_string(), 1);
            }
        }
    }

    pub(crate) fn add_unschedulable(&self, plugin: &'static str, delta: i64) {
        *self.unschedulable_pods.lock().entry(plugin).or_default() += delta;
    }

    pub(crate) fn inc_attempt(&self, result: AttemptResult) {
        self.attempts_total[result as usize].fetch_add(1, Ordering::Relaxed);
    }

    fn inc_batch_slot(&self, profile: Sym, slot: usize) {
        let mut b = self.batch.lock();
        match b.iter_mut().find(|(p, _)| *p == profile) {
            Some((_, c)) => c[slot] += 1,
            None => {
                let mut c = [0; BATCH_SLOTS];
                c[slot] = 1;
                b.push((profile, c));
            }
        }
    }

    /// `scheduler_batch_attempts_total{profile,result}`.
    pub(crate) fn inc_batch_attempt(&self, profile: Sym, result: BatchAttempt) {
        self.inc_batch_slot(profile, result as usize);
    }

    /// `scheduler_batch_cache_flushed_total{profile,reason}`.
    pub(crate) fn inc_batch_flush(&self, profile: Sym, reason: BatchFlush) {
        self.inc_batch_slot(profile, BatchAttempt::ALL.len() + reason as usize);
    }

    /// `scheduler_batch_rescore_attempts_total{profile}`.
    pub(crate) fn inc_batch_rescore(&self, profile: Sym) {
        self.inc_batch_slot(profile, BATCH_SLOTS - 1);
    }

    /// A pod-group attempt ended: `scheduler_podgroup_schedule_attempts_total{result,profile}`
    /// and `scheduler_podgroup_scheduling_attempt_duration_seconds{result}`.
    pub(crate) fn observe_pod_group_attempt(
        &self,
        result: PodGroupAttempt,
        profile: Sym,
        nanos: u64,
    ) {
        self.add_pod_group_counter(
            names::PODGROUP_SCHEDULE_ATTEMPTS,
            profile,
            Some(result.as_str()),
            1,
        );
        self.observe(Series::PodGroupAttemptDuration(result), nanos);
    }

    /// `scheduler_generated_placements_total{profile}` (`result` None) and
    /// `scheduler_placement_evaluations_total{result,profile}`.
    pub(crate) fn add_pod_group_counter(
        &self,
        metric: &'static str,
        profile: Sym,
        result: Option<&'static str>,
        n: u64,
    ) {
        *self
            .pod_group
            .lock()
            .entry((metric, profile, result))
            .or_default() += n;
    }

    /// The pod-group counters, as [`Metrics::batch_counters`] gives the batch's (label
    /// `result` when the metric has one).
    pub fn pod_group_counters(&self) -> Vec<BatchCounter> {
        let mut out: Vec<BatchCounter> = self
            .pod_group
            .lock()
            .iter()
            .map(|(&(m, p, r), &n)| (m, p.to_string_lossy(), r.map(|r| ("result", r)), n))
            .collect();
        out.sort();
        out
    }

    /// Opportunistic batching's counters that are not 0: (metric, profile, its `result` or
    /// `reason` label as (name, value), or none) and the count, by metric, profile and label.
    pub fn batch_counters(&self) -> Vec<BatchCounter> {
        let mut out = Vec::new();
        for (profile, c) in self.batch.lock().iter() {
            let p = profile.to_string_lossy();
            for (i, &n) in c.iter().enumerate().filter(|&(_, &n)| n > 0) {
                let a = BatchAttempt::ALL.len();
                let (metric, label) = if i < a {
                    (
                        names::BATCH_ATTEMPTS,
                        Some(("result", BatchAttempt::ALL[i].as_str())),
                    )
                } else if i < BATCH_SLOTS - 1 {
                    (
                        names::BATCH_CACHE_FLUSHED,
                        Some(("reason", BatchFlush::ALL[i - a].as_str())),
                    )
                } else {
                    (names::BATCH_RESCORE_ATTEMPTS, None)
                };
                out.push((metric, p.clone(), label, n));
            }
        }
        out.sort();
        out
    }

    pub fn attempts_total(&self, result: AttemptResult) -> u64 {
        self.attempts_total[result as usize].load(Ordering::Relaxed)
    }

    /// Merged histograms of every series with at least one sample.
    pub fn histograms(&self) -> Vec<HistogramSnapshot> {
        let mut merged: AHashMap<Series, HistogramSnapshot> = AHashMap::new();
        for rec in self.recorders.iter() {
            let rec = rec.lock();
            for (series, (h, sum)) in &rec.hists {
                let e = merged.entry(*series).or_insert_with(|| HistogramSnapshot {
                    series: *series,
                    hist: new_histogram(),
                    sum: 0,
                });
                let _ = e.hist.add(h);
                e.sum += sum;
            }
        }
        let mut v: Vec<_> = merged.into_values().collect();
        v.sort_by_key(|s| s.series);
        v
    }

    /// `scheduler_queue_incoming_pods_total`, merged.
    pub fn incoming_pods(&self) -> Vec<((&'static str, String), u64)> {
        let mut m: AHashMap<(&'static str, String), u64> = AHashMap::new();
        for c in self.counters.iter() {
            for (queue, events) in &c.lock().incoming {
                for (event, v) in events {
                    *m.entry((*queue, event.clone())).or_default() += v;
                }
            }
        }
        let mut v: Vec<_> = m.into_iter().collect();
        v.sort();
        v
    }

    /// `scheduler_unschedulable_pods{plugin}`.
    pub(crate) fn unschedulable_pods(&self) -> Vec<(&'static str, i64)> {
        let mut v: Vec<_> = self
            .unschedulable_pods
            .lock()
            .iter()
            .map(|(k, v)| (*k, *v))
            .collect();
        v.sort();
        v
    }

    /// Clears every histogram and counter (a metrics-collection window starts). Gauges are
    /// derived from the queue and are not affected.
    pub fn reset_histograms(&self) {
        for rec in self.recorders.iter() {
            let mut rec = rec.lock();
            rec.hists.clear();
        }
        for c in self.counters.iter() {
            c.lock().incoming.clear();
        }
        self.batch.lock().clear();
        let _ = &self.gated_pods_total;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_from_many_threads_and_merges() {
        let m = Metrics::new();
        let s = Series::ExtensionPoint(ExtensionPoint::PreEnqueue, Code::Success);
        std::thread::scope(|sc| {
            for t in 0..4u64 {
                let m = &m;
                sc.spawn(move || {
                    for i in 0..1000u64 {
                        m.observe(s, 100 + t * 1000 + i);
                    }
                });
            }
        });
        let h = m.histograms();
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].hist.len(), 4000);
        let p50 = h[0].exact_quantile(0.5) * 1e9;
        assert!((1500.0..2700.0).contains(&p50), "p50 {p50}");
        m.reset_histograms();
        assert!(m.histograms().is_empty());
    }

    #[test]
    fn bucket_quantile_interpolates_like_prometheus() {
        let m = Metrics::new();
        let s = Series::ExtensionPoint(ExtensionPoint::Filter, Code::Success);
        // 10 samples of 150us (bucket 0.1ms..0.2ms) and 10 of 300us (0.2ms..0.4ms).
        for _ in 0..10 {
            m.observe(s, 150_000);
            m.observe(s, 300_000);
        }
        let h = &m.histograms()[0];
        // rank 10 of 20 sits at the top of the 0.2 ms bucket.
        assert!((h.bucket_quantile(0.5) - 0.0002).abs() < 1e-12);
        // rank 18: 8 of 10 into (0.2ms, 0.4ms] -> 0.2 + 0.2*0.8 = 0.36 ms.
        assert!((h.bucket_quantile(0.9) - 0.00036).abs() < 1e-12);
        // The one-pass form gives each quantile as the single one does.
        let [p50, p90, p99] = h.bucket_quantiles([0.5, 0.9, 0.99]);
        assert_eq!(p50, h.bucket_quantile(0.5));
        assert_eq!(p90, h.bucket_quantile(0.9));
        assert_eq!(p99, h.bucket_quantile(0.99));
        assert!((h.mean() - 0.000225).abs() < 1e-9);
    }

    /// The one-pass bucket counts equal hdrhistogram's `count_between(0, bound)` per bound,
    /// values on and around bucket bounds included.
    #[test]
    fn bucket_counts_match_count_between() {
        let m = Metrics::new();
        let s = Series::ExtensionPoint(ExtensionPoint::Score, Code::Success);
        let mut x: u64 = 12345;
        for i in 0..5000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Spread over ns to seconds, with exact bucket bounds mixed in.
            let v = match i % 5 {
                0 => 100_000,
                1 => 1_000_000,
                _ => (x >> 20) % 2_000_000_000,
            };
            m.observe(s, v.max(1));
        }
        let h = &m.histograms()[0];
        let (buckets, total) = h.bucket_counts();
        assert_eq!(total, 5000);
        assert!(!buckets.is_empty());
        for (b, got) in buckets {
            let bound = (b * 1e9).round() as u64;
            assert_eq!(got, h.hist.count_between(0, bound), "bound {b}");
        }
    }
}
