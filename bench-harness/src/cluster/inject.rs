//! Fault injection (`tidegate run --inject SPEC`): failures a scheduler meets in production,
//! made on purpose, so that a run shows the requeue paths hold and no pod is lost.
//!
//! It is a command-line option rather than a workload field: the same unchanged workload file
//! (upstream's included) can run clean or under faults, and a CI job can add faults to any
//! workload it already runs.
//!
//! | SPEC | fault |
//! |---|---|
//! | `error@POINT=RATE` | the `FaultInjection` plugin returns an Error status at POINT (`prefilter`, `filter`, `score`, `reserve`, `permit`, `bind`) with probability RATE, per call (per node at Filter and Score) |
//! | `bind-failure=RATE` | the API server refuses a binding (the bind call errors) with probability RATE |
//! | `permit-timeout=RATE[@DURATION]` | Permit makes the pod wait (default 100ms) and never allows it: it times out and is rejected |
//! | `node-updates=PER_SECOND` | an event storm: node label updates at that rate, round-robin over the nodes, for the whole workload |
//!
//! RATE is a fraction (`0.01`) or a percentage (`1%`). Several specs may be given, comma
//! separated or with repeated `--inject`.
//!
//! What kube does with each, and so what tidegate does: an Error at PreFilter, Filter, Score,
//! Reserve or Permit ends the scheduling cycle and sends the pod to backoffQ with the error
//! backoff; an Error at Bind or a refused binding runs Unreserve in reverse order, forgets
//! the assumed pod and sends it to backoffQ; a Permit timeout is a rejection by
//! `FaultInjection`, which (like any plugin without EnqueueExtensions) any cluster event can
//! undo. Under every fault each pod ends bound, pending in a known queue, or deleted, and the
//! run checks `created = bound + pending + deleted` as always.
//!
//! Draws are a hash of the seed, the fault, the pod, its attempt number and the node, so a
//! `--clock virtual` run with faults is as reproducible as one without, for any thread count.

use ahash::AHashMap;
use parking_lot::Mutex;
use std::sync::Arc;
use std::time::Duration;
use tidegate_engine::Snapshot;
use tidegate_engine::api::{Pod, PodKey, Sym};
use tidegate_engine::{
    BindPlugin, Code, CycleState, FilterPlugin, NodeInfo, PermitPlugin, Plugin, PreFilterPlugin,
    PreFilterResult, ReservePlugin, ScorePlugin, Status,
};

/// The plugin's name, as it appears in metrics and as a rejector.
pub const NAME: &str = "FaultInjection";

/// The extension points a plugin Error can be injected at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Point {
    PreFilter,
    Filter,
    Score,
    Reserve,
    Permit,
    Bind,
}

impl Point {
    const ALL: [(Point, &'static str); 6] = [
        (Point::PreFilter, "prefilter"),
        (Point::Filter, "filter"),
        (Point::Score, "score"),
        (Point::Reserve, "reserve"),
        (Point::Permit, "permit"),
        (Point::Bind, "bind"),
    ];

    fn parse(s: &str) -> Option<Point> {
        let s = s.to_ascii_lowercase().replace(['-', '_'], "");
        Point::ALL.iter().find(|(_, n)| *n == s).map(|(p, _)| *p)
    }

    /// kube's name of the extension point.
    pub fn as_str(self) -> &'static str {
        match self {
            Point::PreFilter => "PreFilter",
            Point::Filter => "Filter",
            Point::Score => "Score",
            Point::Reserve => "Reserve",
            Point::Permit => "Permit",
            Point::Bind => "Bind",
        }
    }
}

/// Every fault asked for.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Injection {
    /// Plugin Errors: point and probability per call.
    pub errors: Vec<(Point, f64)>,
    /// Probability that the API server refuses a binding.
    pub bind_failure: f64,
    /// Probability that Permit makes a pod wait until it times out, and the timeout.
    pub permit_timeout: Option<(f64, Duration)>,
    /// Node updates per second (0: no storm).
    pub node_updates_per_second: f64,
}

/// The Permit wait of `permit-timeout` when the spec names none.
pub const DEFAULT_PERMIT_TIMEOUT: Duration = Duration::from_millis(100);

/// The most node updates per second a storm may ask for.
pub const MAX_NODE_UPDATES_PER_SECOND: f64 = 1_000_000.0;

fn parse_rate(s: &str, spec: &str) -> Result<f64, String> {
    let (num, scale) = match s.strip_suffix('%') {
        Some(n) => (n, 0.01),
        None => (s, 1.0),
    };
    let v = num
        .trim()
        .parse::<f64>()
        .ok()
        .map(|v| v * scale)
        .filter(|v| v.is_finite() && (0.0..=1.0).contains(v))
        .ok_or_else(|| {
            format!("{spec:?}: rate {s:?} must be a fraction in [0, 1] or a percentage")
        })?;
    Ok(v)
}

impl Injection {
    /// Adds the faults of one `--inject` value (comma-separated specs).
    pub fn add(&mut self, value: &str) -> Result<(), String> {
        for spec in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            self.add_one(spec)?;
        }
        Ok(())
    }

    fn add_one(&mut self, spec: &str) -> Result<(), String> {
        const FORMS: &str = "error@POINT=RATE, bind-failure=RATE, permit-timeout=RATE[@DURATION], node-updates=PER_SECOND";
        let (what, value) = spec
            .split_once('=')
            .ok_or_else(|| format!("{spec:?}: expected one of {FORMS}"))?;
        let what = what.trim();
        if let Some(point) = what.strip_prefix("error@") {
            let p = Point::parse(point).ok_or_else(|| {
                format!(
                    "{spec:?}: unknown extension point {point:?} (known: prefilter, filter, score, reserve, permit, bind)"
                )
            })?;
            let rate = parse_rate(value, spec)?;
            self.errors.retain(|(q, _)| *q != p);
            self.errors.push((p, rate));
            return Ok(());
        }
        match what {
            "bind-failure" => self.bind_failure = parse_rate(value, spec)?,
            "permit-timeout" => {
                let (rate, wait) = match value.split_once('@') {
                    Some((r, d)) => (
                        parse_rate(r, spec)?,
                        crate::workload::parse_go_duration(d)
                            .filter(|d| !d.is_zero())
                            .ok_or_else(|| {
                                format!("{spec:?}: {d:?} is not a positive duration such as 200ms")
                            })?,
                    ),
                    None => (parse_rate(value, spec)?, DEFAULT_PERMIT_TIMEOUT),
                };
                self.permit_timeout = Some((rate, wait));
            }
            "node-updates" => {
                let v = value.trim().trim_end_matches("/s");
                self.node_updates_per_second = v
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v >= 0.0 && *v <= MAX_NODE_UPDATES_PER_SECOND)
                    .ok_or_else(|| {
                        format!(
                            "{spec:?}: node updates per second must be a number from 0 to {MAX_NODE_UPDATES_PER_SECOND}"
                        )
                    })?;
            }
            _ => return Err(format!("{spec:?}: expected one of {FORMS}")),
        }
        Ok(())
    }

    /// The extension points the `FaultInjection` plugin must take part in (PreFilter always:
    /// it numbers the attempts the draws depend on).
    pub fn plugin_points(&self) -> Vec<Point> {
        let mut v = vec![Point::PreFilter];
        for (p, _) in &self.errors {
            if !v.contains(p) {
                v.push(*p);
            }
        }
        if self.permit_timeout.is_some() && !v.contains(&Point::Permit) {
            v.push(Point::Permit);
        }
        v
    }

    /// Whether the plugin is needed at all.
    pub fn needs_plugin(&self) -> bool {
        !self.errors.is_empty() || self.permit_timeout.is_some()
    }

    fn rate(&self, p: Point) -> f64 {
        self.errors
            .iter()
            .find(|(q, _)| *q == p)
            .map_or(0.0, |(_, r)| *r)
    }
}

/// A uniform draw in [0, 1) from the mixed inputs (splitmix64 finaliser).
pub fn draw(parts: &[u64]) -> f64 {
    let mut h: u64 = 0x9e37_79b9_7f4a_7c15;
    for p in parts {
        h ^= p.wrapping_add(0x9e37_79b9_7f4a_7c15);
        h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        h ^= h >> 31;
    }
    (h >> 11) as f64 / (1u64 << 53) as f64
}

/// A stable hash of a string (the same in every run of this build).
pub fn stable_hash(s: &str) -> u64 {
    ahash::RandomState::with_seeds(1, 2, 3, 4).hash_one(s)
}

/// What a cycle's draws depend on, written at PreFilter.
#[derive(Clone, Copy, Debug)]
struct Draw {
    pod: u64,
    attempt: u64,
}

/// The `FaultInjection` plugin.
pub struct FaultInjection {
    inj: Arc<Injection>,
    seed: u64,
    attempts: Mutex<AHashMap<PodKey, u64>>,
}

impl FaultInjection {
    pub fn new(inj: Arc<Injection>, seed: u64) -> FaultInjection {
        FaultInjection {
            inj,
            seed,
            attempts: Mutex::new(AHashMap::new()),
        }
    }

    fn hit(&self, state: &CycleState, p: Point, rate: f64, node: u64) -> bool {
        if rate <= 0.0 {
            return false;
        }
        let d = state
            .read::<Draw>(NAME)
            .copied()
            .unwrap_or(Draw { pod: 0, attempt: 0 });
        draw(&[self.seed, p as u64, d.pod, d.attempt, node]) < rate
    }

    fn error(p: Point) -> Status {
        Status::error(format!("injected fault at {} (--inject)", p.as_str()))
    }
}

impl Plugin for FaultInjection {
    fn name(&self) -> &'static str {
        NAME
    }
    fn into_pre_filter(self: Arc<Self>) -> Option<Arc<dyn PreFilterPlugin>> {
        Some(self)
    }
    fn into_filter(self: Arc<Self>) -> Option<Arc<dyn FilterPlugin>> {
        Some(self)
    }
    fn into_score(self: Arc<Self>) -> Option<Arc<dyn ScorePlugin>> {
        Some(self)
    }
    fn into_reserve(self: Arc<Self>) -> Option<Arc<dyn ReservePlugin>> {
        Some(self)
    }
    fn into_permit(self: Arc<Self>) -> Option<Arc<dyn PermitPlugin>> {
        Some(self)
    }
    fn into_bind(self: Arc<Self>) -> Option<Arc<dyn BindPlugin>> {
        Some(self)
    }
}

impl PreFilterPlugin for FaultInjection {
    fn pre_filter(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        _: &Snapshot,
    ) -> (Option<PreFilterResult>, Status) {
        let attempt = {
            let mut m = self.attempts.lock();
            let a = m.entry(pod.key.clone()).or_default();
            *a += 1;
            *a
        };
        let d = Draw {
            pod: stable_hash(&pod.key.to_string()),
            attempt,
        };
        state.write(NAME, d);
        let st = if self.hit(state, Point::PreFilter, self.inj.rate(Point::PreFilter), 0) {
            Self::error(Point::PreFilter)
        } else {
            Status::success()
        };
        (None, st)
    }
}

/// The node's part of a draw (its name, hashed without a copy).
fn node_key(node: &NodeInfo) -> u64 {
    stable_hash(&node.node.name.as_arc())
}

impl FilterPlugin for FaultInjection {
    fn filter(&self, state: &CycleState, _: &Pod, node: &NodeInfo) -> Status {
        let rate = self.inj.rate(Point::Filter);
        if rate > 0.0 && self.hit(state, Point::Filter, rate, node_key(node)) {
            Self::error(Point::Filter)
        } else {
            Status::success()
        }
    }
}

impl ScorePlugin for FaultInjection {
    fn score(&self, state: &CycleState, _: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        let rate = self.inj.rate(Point::Score);
        if rate > 0.0 && self.hit(state, Point::Score, rate, node_key(node)) {
            Err(Self::error(Point::Score))
        } else {
            Ok(0)
        }
    }
}

impl ReservePlugin for FaultInjection {
    fn reserve(&self, state: &mut CycleState, _: &Pod, _: Sym) -> Status {
        if self.hit(state, Point::Reserve, self.inj.rate(Point::Reserve), 0) {
            Self::error(Point::Reserve)
        } else {
            Status::success()
        }
    }
    fn unreserve(&self, _: &mut CycleState, _: &Pod, _: Sym) {}
}

impl PermitPlugin for FaultInjection {
    fn permit(&self, state: &mut CycleState, _: &Pod, _: Sym) -> (Status, Duration) {
        if self.hit(state, Point::Permit, self.inj.rate(Point::Permit), 0) {
            return (Self::error(Point::Permit), Duration::ZERO);
        }
        if let Some((rate, wait)) = self.inj.permit_timeout
            && self.hit(state, Point::Permit, rate, 1)
        {
            return (Status::code_only(Code::Wait), wait);
        }
        (Status::success(), Duration::ZERO)
    }
}

impl BindPlugin for FaultInjection {
    fn bind(&self, state: &mut CycleState, _: &Pod, _: Sym) -> Status {
        if self.hit(state, Point::Bind, self.inj.rate(Point::Bind), 0) {
            Self::error(Point::Bind)
        } else {
            // Not this plugin's pod to bind: the next bind plugin (DefaultBinder) binds it.
            Status::skip()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_bad_ones_say_why() {
        let mut i = Injection::default();
        i.add("error@filter=0.01, error@Bind=5%,bind-failure=0.5")
            .unwrap();
        i.add("permit-timeout=0.1@250ms").unwrap();
        i.add("node-updates=5000/s").unwrap();
        assert_eq!(i.errors, vec![(Point::Filter, 0.01), (Point::Bind, 0.05)]);
        assert_eq!(i.bind_failure, 0.5);
        assert_eq!(i.permit_timeout, Some((0.1, Duration::from_millis(250))));
        assert_eq!(i.node_updates_per_second, 5000.0);
        assert_eq!(
            i.plugin_points(),
            vec![Point::PreFilter, Point::Filter, Point::Bind, Point::Permit]
        );
        let err = |s: &str| Injection::default().add(s).unwrap_err();
        assert!(err("error@sort=0.1").contains("unknown extension point \"sort\""));
        assert!(err("error@filter=2").contains("must be a fraction in [0, 1]"));
        assert!(err("bind-failure=-1%").contains("must be a fraction"));
        assert!(err("permit-timeout=0.1@soon").contains("not a positive duration"));
        assert!(err("node-updates=1e9").contains("from 0 to"));
        assert!(err("chaos").contains("expected one of"));
    }

    #[test]
    fn draws_are_uniform_enough_and_repeatable() {
        let n = 100_000u64;
        let hits = (0..n).filter(|i| draw(&[7, 1, *i]) < 0.1).count() as f64;
        assert!((hits / n as f64 - 0.1).abs() < 0.01, "{hits}");
        assert_eq!(draw(&[1, 2, 3]), draw(&[1, 2, 3]));
        assert_ne!(draw(&[1, 2, 3]), draw(&[1, 2, 4]));
    }
}
