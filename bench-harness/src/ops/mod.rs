//! The ops of a workload template, one type per scheduler_perf op, each in its own file as
//! scheduler_perf gives each op its own struct. Every op has three steps:
//!
//! - `resolve`: from the op as written ([`RawOp`]) and the workload's params to the op's type,
//!   with params substituted, paths resolved and fields checked (`Resolve` holds what it
//!   reads; errors name the file, line:column and field);
//! - `plan` (where the op has templates): load and check them before anything runs
//!   (`Prepared`);
//! - `run`: what the op does to the cluster when the workload runs (`RunCx` holds the
//!   cluster, the scheduler, the clock and the collectors).
//!
//! [`Op`] has one variant per op type and dispatches each step to it.

pub mod barrier;
pub mod churn;
pub mod create_any;
pub mod create_namespaces;
pub mod create_nodes;
pub mod create_pod_sets;
pub mod create_pods;
pub mod delete_pods;
pub mod sleep;
pub mod start_collecting_metrics;
pub mod stop_collecting_metrics;
pub mod update_any;

pub use barrier::Barrier;
pub use churn::Churn;
pub use create_any::CreateAny;
pub use create_namespaces::CreateNamespaces;
pub use create_nodes::{CreateNodes, NodeStrategy};
pub use create_pods::CreatePods;
pub use delete_pods::DeletePods;
pub use sleep::Sleep;
pub use start_collecting_metrics::StartCollectingMetrics;
pub use stop_collecting_metrics::StopCollectingMetrics;
pub use update_any::UpdateAny;

use crate::cluster::objects::AnyObject;
use crate::cluster::store::Store;
use crate::error::{HarnessError, InputError, Pos};
use crate::output::report::{DataItem, WindowSeries};
use crate::run::collect::{OVERLAPPING, Profile, Window};
use crate::run::options::RunOptions;
use crate::run::pace::Pace;
use crate::workload::fields::Ctx;
use crate::workload::params::{
    MAX_COUNT, lookup_param, mark_params, resolve_count, template_params,
};
use crate::workload::parse::{existing_file, parse_go_duration};
use crate::workload::yaml::{SNode, pos_of};
use crate::workload::{Config, ParamValue, RawOp, TestCase, Workload};
use serde_saphyr::Spanned;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tidegate_engine::Scheduler;

/// An op, resolved for one workload.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    CreateNodes(CreateNodes),
    CreateNamespaces(CreateNamespaces),
    CreatePods(CreatePods),
    Barrier(Barrier),
    DeletePods(DeletePods),
    UpdateAny(UpdateAny),
    Sleep(Sleep),
    StartCollectingMetrics(StartCollectingMetrics),
    StopCollectingMetrics(StopCollectingMetrics),
    CreateAny(CreateAny),
    Churn(Churn),
    /// A known op that this build does not run; the workload is skipped.
    Unsupported(Unsupported),
}

/// A known op that this build does not run (or runs only in part), and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Unsupported {
    pub opcode: String,
    pub reason: String,
}

impl Op {
    /// The scheduler_perf opcode this op came from.
    pub fn opcode(&self) -> &'static str {
        match self {
            Op::CreateNodes(_) => CreateNodes::OPCODE,
            Op::CreateNamespaces(_) => CreateNamespaces::OPCODE,
            Op::CreatePods(_) => CreatePods::OPCODE,
            Op::Barrier(_) => Barrier::OPCODE,
            Op::DeletePods(_) => DeletePods::OPCODE,
            Op::UpdateAny(_) => UpdateAny::OPCODE,
            Op::Sleep(_) => Sleep::OPCODE,
            Op::StartCollectingMetrics(_) => StartCollectingMetrics::OPCODE,
            Op::StopCollectingMetrics(_) => StopCollectingMetrics::OPCODE,
            Op::CreateAny(_) => CreateAny::OPCODE,
            Op::Churn(_) => Churn::OPCODE,
            Op::Unsupported(_) => "unsupported",
        }
    }

    /// The objects the op creates (against the workload's limit).
    fn creates(&self) -> u64 {
        match self {
            Op::CreateNodes(o) => o.count as u64,
            Op::CreateNamespaces(o) => o.count as u64,
            Op::CreatePods(o) => o.count as u64,
            Op::CreateAny(o) => o.count as u64,
            _ => 0,
        }
    }

    /// Whether the op opens a metrics collection window.
    pub fn collects_metrics(&self) -> bool {
        matches!(
            self,
            Op::CreatePods(CreatePods {
                collect_metrics: true,
                ..
            }) | Op::StartCollectingMetrics(_)
        )
    }

    /// Loads and checks the op's templates (op `i` of the workload) into `prepared`; the
    /// first reason the workload cannot run goes to `unsupported`.
    pub(crate) fn plan(
        &self,
        i: usize,
        prepared: &mut Prepared,
        unsupported: &mut Option<String>,
    ) -> Result<(), InputError> {
        match self {
            Op::Unsupported(Unsupported { opcode, reason }) => {
                unsupported.get_or_insert_with(|| format!("{opcode}: {reason}"));
                Ok(())
            }
            Op::CreatePods(o) => o.plan(i, prepared, unsupported),
            Op::CreateNodes(o) => o.plan(i, prepared),
            Op::CreateNamespaces(o) => o.plan(i, prepared),
            Op::CreateAny(o) => o.plan(i, prepared, unsupported),
            Op::Churn(o) => o.plan(i, prepared, unsupported),
            Op::UpdateAny(o) => o.plan(i, prepared, unsupported),
            _ => Ok(()),
        }
    }

    /// Runs the op (op `cx.index` of the workload).
    pub(crate) fn run(&self, cx: &mut RunCx) -> Result<(), HarnessError> {
        match self {
            Op::CreateNodes(o) => o.run(cx),
            Op::CreateNamespaces(o) => o.run(cx),
            Op::CreatePods(o) => o.run(cx),
            Op::Barrier(o) => o.run(cx),
            Op::DeletePods(o) => o.run(cx),
            Op::UpdateAny(o) => o.run(cx),
            Op::Sleep(o) => o.run(cx),
            Op::StartCollectingMetrics(o) => o.run(cx),
            Op::StopCollectingMetrics(o) => o.run(cx),
            Op::CreateAny(o) => o.run(cx),
            Op::Churn(o) => o.run(cx),
            Op::Unsupported(_) => unreachable!("unsupported workloads are not executed"),
        }
    }
}

/// Every op of scheduler_perf, in the order the unknown-op message lists them.
const KNOWN_OPS: &[&str] = &[
    "createNodes",
    "createNamespaces",
    "createPods",
    "barrier",
    "deletePods",
    "updateAny",
    "sleep",
    "churn",
    "createPodSets",
    "createAny",
    "startCollectingMetrics",
    "stopCollectingMetrics",
    "createResourceDriver",
    "createResourceClaims",
    "allocResourceClaims",
    "updateDeviceConditions",
    "checkPodScheduled",
    "createPodGroups",
    "createCompositePodGroups",
    "waitForPodGroups",
    "startCollectingProfile",
    "stopCollectingProfile",
];

/// Ops of scheduler_perf that this build recognises but does not run yet, with the reason.
const UNSUPPORTED_OPS: &[(&str, &str)] = &[
    ("createResourceDriver", "DRA is out of scope"),
    ("createResourceClaims", "DRA is out of scope"),
    ("allocResourceClaims", "DRA is out of scope"),
    ("updateDeviceConditions", "DRA is out of scope"),
    ("checkPodScheduled", "DRA is out of scope"),
    ("createPodGroups", "pod groups are out of scope"),
    ("createCompositePodGroups", "pod groups are out of scope"),
    ("waitForPodGroups", "pod groups are out of scope"),
    (
        "startCollectingProfile",
        "op startCollectingProfile is not supported",
    ),
    (
        "stopCollectingProfile",
        "op stopCollectingProfile is not supported",
    ),
];

/// An op type's resolve step.
type ResolveFn = for<'a, 'w> fn(&Resolve<'a, 'w>) -> Result<Op, InputError>;

/// The ops this build runs: opcode, the fields it accepts, its resolve step.
const OPS: &[(&str, &[&str], ResolveFn)] = &[
    (
        CreateNodes::OPCODE,
        CreateNodes::FIELDS,
        CreateNodes::resolve,
    ),
    (
        CreateNamespaces::OPCODE,
        CreateNamespaces::FIELDS,
        CreateNamespaces::resolve,
    ),
    (CreatePods::OPCODE, CreatePods::FIELDS, CreatePods::resolve),
    (Barrier::OPCODE, Barrier::FIELDS, Barrier::resolve),
    (DeletePods::OPCODE, DeletePods::FIELDS, DeletePods::resolve),
    (UpdateAny::OPCODE, UpdateAny::FIELDS, UpdateAny::resolve),
    (Sleep::OPCODE, Sleep::FIELDS, Sleep::resolve),
    (
        StartCollectingMetrics::OPCODE,
        StartCollectingMetrics::FIELDS,
        StartCollectingMetrics::resolve,
    ),
    (
        StopCollectingMetrics::OPCODE,
        StopCollectingMetrics::FIELDS,
        StopCollectingMetrics::resolve,
    ),
    (CreateAny::OPCODE, CreateAny::FIELDS, CreateAny::resolve),
    (Churn::OPCODE, Churn::FIELDS, Churn::resolve),
];

/// Resolves the ops of `tc` for workload `wl`: params substituted, paths resolved, fields
/// checked. Every param of the workload must be used.
pub fn resolve_ops(cfg: &Config, tc: &TestCase, wl: &Workload) -> Result<Vec<Op>, InputError> {
    let cx = Ctx { file: &cfg.path };
    for (name, rel) in [
        ("schedulerConfigPath", &tc.scheduler_config_path),
        ("defaultPodTemplatePath", &tc.default_pod_template_path),
    ] {
        if let Some(rel) = rel {
            let pos = tc.path_pos.get(name).copied().unwrap_or(tc.pos);
            existing_file(&cx, cfg, rel, pos, &format!("{}.{name}", tc.name))?;
        }
    }
    let used: RefCell<BTreeMap<&str, bool>> =
        RefCell::new(wl.params.keys().map(|k| (k.as_str(), false)).collect());
    let mut ops = Vec::new();
    for raw in &tc.ops {
        // Ops are numbered after createPodSets is unrolled, as upstream's
        // `unrollWorkloadTemplate` does: the default namespace `namespace-<i>` of a later op
        // counts every createPods op a pod set became.
        let r = Resolve {
            cfg,
            cx: &cx,
            tc,
            wl,
            raw,
            of: format!("{}.workloadTemplate[{}]", tc.name, raw.index),
            index: ops.len(),
            used: &used,
        };
        if raw.opcode == create_pod_sets::OPCODE {
            ops.extend(create_pod_sets::resolve(&r)?);
        } else {
            ops.push(r.resolve()?);
        }
    }
    check_total(cfg, tc, wl, &ops)?;
    check_all_params_used(cfg, tc, wl, used.into_inner())?;
    Ok(ops)
}

/// The objects the workload creates in all, against the same limit as one op: a config
/// that multiplies its way past it is refused here, before anything is allocated.
fn check_total(cfg: &Config, tc: &TestCase, wl: &Workload, ops: &[Op]) -> Result<(), InputError> {
    let total: u64 = ops.iter().map(Op::creates).sum();
    if total > MAX_COUNT as u64 {
        return Err(InputError::new(
            &cfg.path,
            Some(wl.pos),
            format!("{}.workloads[{}]", tc.name, wl.name),
            format!(
                "the workload creates {total} objects in all, more than the limit of {MAX_COUNT}"
            ),
        ));
    }
    Ok(())
}

/// Every param of the workload must be referenced by some op.
fn check_all_params_used(
    cfg: &Config,
    tc: &TestCase,
    wl: &Workload,
    used: BTreeMap<&str, bool>,
) -> Result<(), InputError> {
    let unused: Vec<&str> = used.iter().filter(|(_, u)| !**u).map(|(k, _)| *k).collect();
    if let Some(first) = unused.first() {
        let pos = wl.params.get(*first).map(|(_, p)| *p);
        return Err(InputError::new(
            &cfg.path,
            pos,
            format!("{}.workloads[{}].params", tc.name, wl.name),
            format!("parameter(s) {} unused", unused.join(", ")),
        ));
    }
    Ok(())
}

/// What an op's resolve step reads: the op as written, its workload (params) and test case,
/// the config (for paths), the op's number and the params used so far.
pub(crate) struct Resolve<'a, 'w> {
    pub(crate) cfg: &'a Config,
    pub(crate) cx: &'a Ctx<'a>,
    pub(crate) tc: &'a TestCase,
    pub(crate) wl: &'w Workload,
    pub(crate) raw: &'a RawOp,
    /// The op's field path in errors (`<testCase>.workloadTemplate[<i>]`).
    pub(crate) of: String,
    /// The op's number once createPodSets is unrolled.
    pub(crate) index: usize,
    pub(crate) used: &'a RefCell<BTreeMap<&'w str, bool>>,
}

impl<'a, 'w> Resolve<'a, 'w> {
    /// Resolves the op: unsupported ops first, then unknown opcodes and fields, then the
    /// op type's own resolve step.
    fn resolve(&self) -> Result<Op, InputError> {
        let raw = self.raw;
        if let Some((_, reason)) = UNSUPPORTED_OPS.iter().find(|(o, _)| *o == raw.opcode) {
            // Mark the params it references as used, so the workload is reported as
            // unsupported rather than as a config error.
            self.mark_all_params();
            return Ok(self.unsupported(reason.to_string()));
        }
        let Some((_, known, resolve)) = OPS.iter().find(|(o, _, _)| *o == raw.opcode) else {
            let (_, v) = self.get("opcode").expect("opcode present");
            return Err(self.cx.err(
                pos_of(v),
                &self.f("opcode"),
                format!(
                    "unknown op {:?} (known: {})",
                    raw.opcode,
                    KNOWN_OPS.join(", ")
                ),
            ));
        };
        for (k, _) in &raw.fields {
            if !known.contains(&k.value.as_str()) {
                return Err(self.cx.unknown(k, &self.of, known));
            }
        }
        resolve(self)
    }

    /// The field `name` of the op, as written.
    pub(crate) fn get(&self, name: &str) -> Option<&'a (Spanned<String>, SNode)> {
        self.raw.fields.iter().find(|(k, _)| k.value == name)
    }

    /// The path of the op's field `name` in errors.
    pub(crate) fn f(&self, name: &str) -> String {
        format!("{}.{name}", self.of)
    }

    pub(crate) fn err(&self, pos: Pos, field: &str, msg: impl Into<String>) -> InputError {
        self.cx.err(pos, field, msg)
    }

    /// The value of the `$name` param that `n` references, marked as used.
    pub(crate) fn param(&self, n: &SNode, field: &str) -> Result<ParamValue, InputError> {
        lookup_param(self.cx, self.wl, n, field, self.used)
    }

    /// `count` / `countParam` (required unless `default` is given).
    pub(crate) fn count(&self, default: Option<usize>) -> Result<usize, InputError> {
        match default {
            Some(d) if self.get("count").is_none() && self.get("countParam").is_none() => Ok(d),
            _ => resolve_count(self.cx, self.wl, self.raw, &self.of, self.used),
        }
    }

    /// The file the field `name` names, which must exist.
    pub(crate) fn path(&self, name: &str) -> Result<Option<PathBuf>, InputError> {
        self.get(name)
            .map(|(_, v)| {
                let s = self.cx.string(v, &self.f(name))?;
                existing_file(self.cx, self.cfg, &s, pos_of(v), &self.f(name))
            })
            .transpose()
    }

    /// A boolean field, false when absent.
    pub(crate) fn boolean(&self, name: &str) -> Result<bool, InputError> {
        self.get(name)
            .map(|(_, v)| self.cx.boolean(v, &self.f(name)))
            .transpose()
            .map(|b| b.unwrap_or(false))
    }

    pub(crate) fn string(&self, name: &str) -> Result<Option<String>, InputError> {
        self.get(name)
            .map(|(_, v)| self.cx.string(v, &self.f(name)))
            .transpose()
    }

    /// A list of strings, empty when absent.
    pub(crate) fn strings(&self, name: &str) -> Result<Vec<String>, InputError> {
        self.get(name)
            .map(|(_, v)| self.cx.strings(v, &self.f(name)))
            .transpose()
            .map(Option::unwrap_or_default)
    }

    /// A number, 0 when absent, negatives read as 0.
    pub(crate) fn rate(&self, name: &str) -> Result<f64, InputError> {
        Ok(self
            .get(name)
            .map(|(_, v)| self.cx.number(v, &self.f(name)))
            .transpose()?
            .unwrap_or(0.0)
            .max(0.0))
    }

    /// A label selector (a map of strings), empty when absent.
    pub(crate) fn selector(&self, name: &str) -> Result<BTreeMap<String, String>, InputError> {
        self.get(name)
            .map(|(_, v)| self.cx.string_map(v, &self.f(name)))
            .transpose()
            .map(Option::unwrap_or_default)
    }

    /// `templateParams`, with `$name` values replaced by the workload's params.
    pub(crate) fn template_params(
        &self,
    ) -> Result<serde_json::Map<String, serde_json::Value>, InputError> {
        template_params(
            self.cx,
            self.get("templateParams"),
            &self.f("templateParams"),
            self.wl,
            &mut self.used.borrow_mut(),
        )
    }

    /// `duration` / `durationParam` (a Go duration), None when neither is given.
    pub(crate) fn duration(&self) -> Result<Option<Duration>, InputError> {
        let f = |name: &str| self.f(name);
        let cx = self.cx;
        let (text, pos, field) = match (self.get("duration"), self.get("durationParam")) {
            (None, None) => return Ok(None),
            (Some((_, v)), None) => (cx.string(v, &f("duration"))?, pos_of(v), f("duration")),
            (None, Some((_, v))) => match self.param(v, &f("durationParam"))? {
                ParamValue::Str(s) => (s, pos_of(v), f("durationParam")),
                other => {
                    return Err(cx.err(
                        pos_of(v),
                        &f("durationParam"),
                        format!("expected a duration string, got {other:?}"),
                    ));
                }
            },
            (Some(_), Some((k, _))) => {
                return Err(cx.err(
                    pos_of(k),
                    &f("durationParam"),
                    "duration and durationParam are mutually exclusive",
                ));
            }
        };
        parse_go_duration(&text).map(Some).ok_or_else(|| {
            cx.err(
                pos,
                &field,
                format!("invalid duration {text:?} (examples: 500ms, 2s, 1m30s)"),
            )
        })
    }

    /// Marks params referenced as `$name` anywhere inside `n` as used.
    pub(crate) fn mark_params(&self, n: &SNode) {
        mark_params(&n.value, self.wl, &mut self.used.borrow_mut());
    }

    /// Marks every param the op references as used.
    pub(crate) fn mark_all_params(&self) {
        for (_, v) in &self.raw.fields {
            self.mark_params(v);
        }
    }

    /// The op, skipped for `reason`.
    pub(crate) fn unsupported(&self, reason: String) -> Op {
        Op::Unsupported(Unsupported {
            opcode: self.raw.opcode.clone(),
            reason,
        })
    }

    /// The namespace of an op that names none: `namespace-<op number>`.
    pub(crate) fn default_namespace(&self) -> String {
        format!("namespace-{}", self.index)
    }
}

/// What planning loads for the ops, by op number: templates read and checked once, before
/// anything runs.
#[derive(Default)]
pub(crate) struct Prepared {
    /// The pod source of createPods ops.
    pub(crate) pods: BTreeMap<usize, crate::workload::manifest::PodSource>,
    /// Node, namespace, updateAny and createAny templates.
    pub(crate) templates: BTreeMap<usize, crate::workload::manifest::ObjectTemplate>,
    /// The objects a churn op creates, one per template.
    pub(crate) churn: BTreeMap<usize, Vec<AnyObject>>,
}

/// What an op's run step works with: the workload, its prepared templates, the cluster and
/// scheduler, the clock, and the collectors (the open window, the data items so far).
pub(crate) struct RunCx<'r> {
    pub(crate) cfg: &'r Config,
    pub(crate) tc: &'r TestCase,
    pub(crate) wl: &'r Workload,
    pub(crate) prepared: &'r Prepared,
    pub(crate) opts: &'r RunOptions,
    pub(crate) store: &'r Arc<Store>,
    pub(crate) sched: &'r Arc<Scheduler>,
    pub(crate) pace: &'r mut Pace,
    pub(crate) profile: &'r mut Option<Profile>,
    pub(crate) series: &'r mut Vec<WindowSeries>,
    /// The data items of the windows closed so far.
    pub(crate) items: Vec<DataItem>,
    /// Pods created without waiting (`skipWaitToCompletion`), per namespace, for barriers.
    pub(crate) pending_ns: BTreeMap<String, usize>,
    /// The open collection window.
    pub(crate) window: Option<Window>,
    /// The number of the op running.
    pub(crate) index: usize,
}

impl RunCx<'_> {
    /// The op's field path in errors.
    pub(crate) fn field(&self) -> String {
        format!("{}.workloadTemplate[{}]", self.tc.name, self.index)
    }

    /// Opens a collection window reported under
    /// `BenchmarkPerfScheduling/<testCase>/<workload>/<last>`: an error if one is open.
    pub(crate) fn open_window(
        &mut self,
        last: &str,
        namespaces: &[String],
        selector: &BTreeMap<String, String>,
    ) -> Result<(), HarnessError> {
        if self.window.is_some() {
            return Err(HarnessError::Run(format!(
                "op {}: {OVERLAPPING}",
                self.index
            )));
        }
        let name = format!(
            "BenchmarkPerfScheduling/{}/{}/{last}",
            self.tc.name, self.wl.name
        );
        self.window = Some(Window::open(
            self.store,
            self.sched,
            self.pace,
            name,
            namespaces,
            selector,
            self.opts.flamegraph,
        ));
        Ok(())
    }

    /// Closes window `w`, adding its data items.
    pub(crate) fn close_window(&mut self, w: Window) {
        let items = w.close(self.store, self.sched, self.pace, self.profile, self.series);
        self.items.extend(items);
    }

    /// The error when `want` pods of namespace `ns` were not there in time: what the queues
    /// hold and why the pending pods are pending.
    pub(crate) fn timeout_error(&self, ns: &str, want: usize) -> HarnessError {
        timeout_error(self.store, self.sched, ns, want, self.opts.timeout)
    }
}

fn timeout_error(
    store: &Store,
    sched: &Scheduler,
    ns: &str,
    want: usize,
    timeout: Duration,
) -> HarnessError {
    let s = store.ns_stats(ns);
    let q = sched.queue.counts();
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    // The rejector plugins of each pending pod, summarised (kube's UnschedulablePlugins; a
    // pod that failed with an error has none).
    let mut rejectors: BTreeMap<String, usize> = BTreeMap::new();
    for (key, cond) in store.unbound_pods() {
        let reason = cond.map_or("not attempted yet".to_string(), |(r, m)| {
            format!("{r}: {m}")
        });
        *reasons.entry(reason).or_default() += 1;
        if let Some(info) = sched.queue.pending_info(&key)
            && info.attempts > 0
        {
            let by = if info.unschedulable_plugins.is_empty() {
                "(an error, no plugin)".to_string()
            } else {
                info.unschedulable_plugins.join("+")
            };
            *rejectors.entry(by).or_default() += 1;
        }
    }
    let top = |m: BTreeMap<String, usize>| -> String {
        let mut v: Vec<(String, usize)> = m.into_iter().collect();
        v.sort_by_key(|t| std::cmp::Reverse(t.1));
        v.iter()
            .take(5)
            .map(|(r, n)| format!("{n} × {r}"))
            .collect::<Vec<_>>()
            .join("; ")
    };
    HarnessError::Run(format!(
        "timed out after {timeout:?} waiting for {want} pods in namespace {ns} (bound {}, attempted {}; {} scheduling attempts in all); queues: active {}, backoff {}, unschedulable {}, gated {}, in flight {}; rejected by: {}; pending because: {}",
        s.bound,
        s.attempted_unbound,
        sched.stats.attempts.load(Ordering::Relaxed),
        q.active,
        q.backoff,
        q.unschedulable,
        q.gated,
        q.in_flight,
        top(rejectors),
        top(reasons),
    ))
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::parse_config;
    use std::path::Path;

    const CFG: &str = "\
- name: Basic
  defaultPodTemplatePath: pod.yaml
  workloadTemplate:
  - opcode: createNodes
    countParam: $nodes
  - opcode: createPods
    countParam: $pods
    collectMetrics: true
  workloads:
  - name: small
    labels: [integration-test]
    threshold: 10
    params:
      nodes: 5
      pods: 10
";

    /// A folder `misc/` holding `pod.yaml`, the template [`CFG`] names.
    fn fixture() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("misc")).unwrap();
        std::fs::write(dir.path().join("misc/pod.yaml"), "kind: Pod\n").unwrap();
        dir
    }

    #[test]
    fn parses_and_resolves_params() {
        let dir = fixture();
        let misc = dir.path().join("misc");
        let cfg = parse_config(&misc.join("c.yaml"), CFG).unwrap();
        assert_eq!(cfg.topic, "misc");
        let tc = &cfg.test_cases[0];
        let ops = resolve_ops(&cfg, tc, &tc.workloads[0]).unwrap();
        assert_eq!(ops.len(), 2);
        match &ops[1] {
            Op::CreatePods(CreatePods {
                count,
                namespace,
                template,
                collect_metrics,
                ..
            }) => {
                assert_eq!(*count, 10);
                assert_eq!(namespace, "namespace-1");
                assert_eq!(template.as_deref(), Some(misc.join("pod.yaml").as_path()));
                assert!(collect_metrics);
            }
            other => panic!("{other:?}"),
        }
    }

    /// The error for config `text`, read as `w.yaml` (beside `pod.yaml`).
    fn err(text: &str) -> String {
        let dir = fixture();
        let path = Path::new("w.yaml");
        let mut cfg = match parse_config(path, text) {
            Err(e) => return e.to_string(),
            Ok(cfg) => cfg,
        };
        cfg.dir = dir.path().join("misc");
        let tc = &cfg.test_cases[0];
        resolve_ops(&cfg, tc, &tc.workloads[0])
            .map(|_| String::new())
            .unwrap_or_else(|e| e.to_string())
    }

    #[test]
    fn bad_input_names_file_position_and_field() {
        assert_eq!(
            err(&CFG.replace("collectMetrics: true", "collectMetric: true")),
            "w.yaml:8:5: Basic.workloadTemplate[1].collectMetric: unknown field \"collectMetric\" (known: opcode, count, countParam, countMultiplierParam, namespace, podTemplatePath, collectMetrics, skipWaitToCompletion, steadyState, steadyStateParam, duration, durationParam, persistentVolumeTemplatePath, persistentVolumeClaimTemplatePath, templateParams, signatureBatchSize, signatureBatchSizeParam, nominatedNodeName)"
        );
        assert_eq!(
            err(&CFG.replace("opcode: createNodes", "opcode: makeNodes")),
            "w.yaml:4:13: Basic.workloadTemplate[0].opcode: unknown op \"makeNodes\" (known: createNodes, createNamespaces, createPods, barrier, deletePods, updateAny, sleep, churn, createPodSets, createAny, startCollectingMetrics, stopCollectingMetrics, createResourceDriver, createResourceClaims, allocResourceClaims, updateDeviceConditions, checkPodScheduled, createPodGroups, createCompositePodGroups, waitForPodGroups, startCollectingProfile, stopCollectingProfile)"
        );
        assert_eq!(
            err(&CFG.replace("      pods: 10\n", "      pods: 10\n      extra: 3\n")),
            "w.yaml:16:7: Basic.workloads[small].params: parameter(s) extra unused"
        );
        assert_eq!(
            err(&CFG.replace("countParam: $pods", "countParam: $podz")),
            "w.yaml:7:17: Basic.workloadTemplate[1].countParam: parameter podz is undefined in workload small"
        );
        assert_eq!(
            err(&CFG.replace("pods: 10", "pods: -3")),
            "w.yaml:7:17: Basic.workloadTemplate[1].countParam: must not be negative, got -3"
        );
        assert_eq!(
            err(&CFG.replace("threshold: 10", "threshold: fast")),
            "w.yaml:12:16: Basic.workloads[0].threshold: expected a number, found string"
        );
        assert!(err("- name: [").starts_with("w.yaml:1:"));
        // A template that is not there is reported where the config names it.
        assert!(
            err(&CFG.replace(
                "defaultPodTemplatePath: pod.yaml",
                "defaultPodTemplatePath: pdo.yaml"
            ))
            .starts_with("w.yaml:2:27: Basic.defaultPodTemplatePath: no such file: ")
        );
        assert!(
            err(&CFG.replace(
                "    collectMetrics: true",
                "    collectMetrics: true\n    podTemplatePath: x/p.yaml"
            ))
            .starts_with("w.yaml:9:22: Basic.workloadTemplate[1].podTemplatePath: no such file: ")
        );
    }
}
