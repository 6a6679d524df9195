//! The scheduler_perf workload schema: a list of test cases, each with a workload template
//! (ops) and workloads (params, labels, thresholds, feature gates).
//!
//! Parsing is strict, as scheduler_perf's is: unknown fields, wrong types, duplicate names,
//! undefined and unused params are errors that name the file, line:column and field. Paths in
//! the config resolve relative to the config file's folder.

use crate::error::{InputError, Pos};
use crate::workload::yaml::{SNode, YNode, parse, pos_of};
use serde_saphyr::Spanned;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A parsed config file.
#[derive(Clone, Debug)]
pub struct Config {
    pub path: PathBuf,
    /// The folder that relative paths resolve against.
    pub dir: PathBuf,
    /// The topic used in output names (the config's folder name, as scheduler_perf's package).
    pub topic: String,
    pub test_cases: Vec<TestCase>,
}

#[derive(Clone, Debug)]
pub struct TestCase {
    pub name: String,
    pub pos: Pos,
    pub feature_gates: BTreeMap<String, bool>,
    pub ops: Vec<RawOp>,
    pub workloads: Vec<Workload>,
    pub scheduler_config_path: Option<String>,
    pub default_pod_template_path: Option<String>,
    /// Where `schedulerConfigPath` and `defaultPodTemplatePath` are written, for errors.
    pub path_pos: BTreeMap<&'static str, Pos>,
    pub labels: Vec<String>,
    pub default_threshold_metric_selector: Option<MetricSelector>,
    pub has_metrics_collector_config: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    Int(i64),
    Float(f64),
    Str(String),
    Bool(bool),
}

impl ParamValue {
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            ParamValue::Int(i) => (*i).into(),
            ParamValue::Float(f) => serde_json::Number::from_f64(*f)
                .map_or(serde_json::Value::Null, serde_json::Value::Number),
            ParamValue::Str(s) => s.clone().into(),
            ParamValue::Bool(b) => (*b).into(),
        }
    }
}

/// A threshold: one number, or one number per topic.
#[derive(Clone, Debug, PartialEq)]
pub enum Threshold {
    Value(f64),
    PerTopic(BTreeMap<String, f64>),
}

/// Which data item a threshold applies to.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricSelector {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub data_bucket: String,
    pub expect_lower: bool,
}

impl Default for MetricSelector {
    fn default() -> Self {
        MetricSelector {
            name: "SchedulingThroughput".into(),
            labels: BTreeMap::new(),
            data_bucket: "Average".into(),
            expect_lower: false,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Workload {
    pub name: String,
    pub pos: Pos,
    pub params: BTreeMap<String, (ParamValue, Pos)>,
    pub labels: Vec<String>,
    pub threshold: Option<Threshold>,
    pub threshold_metric_selector: Option<MetricSelector>,
    pub feature_gates: BTreeMap<String, bool>,
}

/// An op as written: resolved per workload (params substituted) by [`resolve_ops`].
#[derive(Clone, Debug)]
pub struct RawOp {
    pub index: usize,
    pub pos: Pos,
    pub opcode: String,
    pub fields: Vec<(Spanned<String>, SNode)>,
}

/// How node labels are prepared by createNodes.
#[derive(Clone, Debug, PartialEq)]
pub enum NodeStrategy {
    /// `labelNodePrepareStrategy`: values assigned round-robin.
    Label { key: String, values: Vec<String> },
    /// `uniqueNodeLabelStrategy`: a unique value per node.
    Unique { key: String },
    /// `nodeAllocatableStrategy.nodeAllocatable`: these `status.allocatable` entries set on
    /// every node (the others kept, from capacity when the template gives no allocatable).
    /// Its `csiNodeAllocatable` (CSINode volume limits) is accepted and has no effect: only
    /// NodeVolumeLimits reads it, and volume plugins are out of scope.
    Allocatable { resources: BTreeMap<String, String> },
}

/// An op, resolved for one workload.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    CreateNodes {
        count: usize,
        template: Option<PathBuf>,
        template_params: serde_json::Map<String, serde_json::Value>,
        strategy: Option<NodeStrategy>,
    },
    CreateNamespaces {
        prefix: String,
        count: usize,
        template: Option<PathBuf>,
    },
    CreatePods {
        count: usize,
        namespace: String,
        template: Option<PathBuf>,
        template_params: serde_json::Map<String, serde_json::Value>,
        collect_metrics: bool,
        skip_wait: bool,
        /// `steadyState` with its `duration`: for that long, every pod of the namespace
        /// seen scheduled is deleted and replaced, keeping `count` pods pending.
        steady: Option<Duration>,
        /// `nominatedNodeName`: every pod is created with this `status.nominatedNodeName`
        /// (as if an earlier preemption had nominated it), which the scheduler's nominator
        /// takes from the informer as kube's does.
        nominated_node_name: Option<String>,
        /// `signatureBatchSize[Param]`: pod `i` gets the label
        /// `signature=signature-label-<i / batch>` (pods of one batch share a signature).
        signature_batch: Option<usize>,
    },
    Barrier {
        namespaces: Vec<String>,
        label_selector: BTreeMap<String, String>,
        attempted: bool,
    },
    DeletePods {
        namespace: String,
        label_selector: BTreeMap<String, String>,
        per_second: f64,
        skip_wait: bool,
    },
    UpdateAny {
        template: PathBuf,
        namespace: Option<String>,
        count: usize,
        per_second: f64,
        template_params: serde_json::Map<String, serde_json::Value>,
        /// `subresources: [resize]`: an in-place resize of the pods' container resources.
        resize: bool,
    },
    Sleep {
        duration: Duration,
    },
    /// `startCollectingMetrics`: collectors over the pods of `namespaces` that match
    /// `label_selector`, reported under `name`, until `stopCollectingMetrics`.
    StartCollecting {
        name: String,
        namespaces: Vec<String>,
        label_selector: BTreeMap<String, String>,
    },
    StopCollecting,
    /// `createAny`: `count` objects of any supported kind from a template.
    CreateAny {
        template: PathBuf,
        namespace: Option<String>,
        count: usize,
        template_params: serde_json::Map<String, serde_json::Value>,
    },
    /// `churn`: objects created (and in recreate mode deleted again) in the background every
    /// `interval` until the workload ends.
    Churn {
        recreate: bool,
        /// create: stop after this many ticks (0 = never); recreate: slots per template.
        number: usize,
        interval: Duration,
        namespace: String,
        templates: Vec<PathBuf>,
    },
    /// A known op that this build does not run; the workload is skipped.
    Unsupported {
        opcode: String,
        reason: String,
    },
}

impl Op {
    /// The scheduler_perf opcode this op came from.
    pub fn opcode(&self) -> &'static str {
        match self {
            Op::CreateNodes { .. } => "createNodes",
            Op::CreateNamespaces { .. } => "createNamespaces",
            Op::CreatePods { .. } => "createPods",
            Op::Barrier { .. } => "barrier",
            Op::DeletePods { .. } => "deletePods",
            Op::UpdateAny { .. } => "updateAny",
            Op::Sleep { .. } => "sleep",
            Op::StartCollecting { .. } => "startCollectingMetrics",
            Op::StopCollecting => "stopCollectingMetrics",
            Op::CreateAny { .. } => "createAny",
            Op::Churn { .. } => "churn",
            Op::Unsupported { .. } => "unsupported",
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

const MAX_COUNT: i64 = 100_000_000;
/// Collectors `startCollectingMetrics.collectors` may name (tidegate always runs them all).
const KNOWN_COLLECTORS: &[&str] = &[
    "Throughput",
    "Metrics",
    "Memory",
    "SchedulingDuration",
    "PodGroupLatency",
];
/// Most pod sets one createPodSets op may unroll into (each becomes an op).
const MAX_POD_SETS: usize = 1_000_000;

struct Ctx<'a> {
    file: &'a Path,
}

impl Ctx<'_> {
    fn err(&self, pos: Pos, field: &str, msg: impl Into<String>) -> InputError {
        InputError::new(self.file, Some(pos), field, msg)
    }

    fn map<'n>(
        &self,
        n: &'n SNode,
        field: &str,
    ) -> Result<&'n [(Spanned<String>, SNode)], InputError> {
        match &n.value {
            YNode::Map(m) => Ok(m),
            other => Err(self.err(
                pos_of(n),
                field,
                format!("expected a map, found {}", other.kind()),
            )),
        }
    }

    fn seq<'n>(&self, n: &'n SNode, field: &str) -> Result<&'n [SNode], InputError> {
        match &n.value {
            YNode::Seq(v) => Ok(v),
            YNode::Null => Ok(&[]),
            other => Err(self.err(
                pos_of(n),
                field,
                format!("expected a list, found {}", other.kind()),
            )),
        }
    }

    fn string(&self, n: &SNode, field: &str) -> Result<String, InputError> {
        match &n.value {
            YNode::Str(s) => Ok(s.clone()),
            other => Err(self.err(
                pos_of(n),
                field,
                format!("expected a string, found {}", other.kind()),
            )),
        }
    }

    fn boolean(&self, n: &SNode, field: &str) -> Result<bool, InputError> {
        match &n.value {
            YNode::Bool(b) => Ok(*b),
            other => Err(self.err(
                pos_of(n),
                field,
                format!("expected true or false, found {}", other.kind()),
            )),
        }
    }

    fn number(&self, n: &SNode, field: &str) -> Result<f64, InputError> {
        match &n.value {
            YNode::Int(i) => Ok(*i as f64),
            YNode::Float(f) => Ok(*f),
            other => Err(self.err(
                pos_of(n),
                field,
                format!("expected a number, found {}", other.kind()),
            )),
        }
    }

    fn int(&self, n: &SNode, field: &str) -> Result<i64, InputError> {
        match &n.value {
            YNode::Int(i) => Ok(*i),
            other => Err(self.err(
                pos_of(n),
                field,
                format!("expected an integer, found {}", other.kind()),
            )),
        }
    }

    fn strings(&self, n: &SNode, field: &str) -> Result<Vec<String>, InputError> {
        self.seq(n, field)?
            .iter()
            .enumerate()
            .map(|(i, x)| self.string(x, &format!("{field}[{i}]")))
            .collect()
    }

    fn string_map(&self, n: &SNode, field: &str) -> Result<BTreeMap<String, String>, InputError> {
        let mut out = BTreeMap::new();
        if matches!(n.value, YNode::Null) {
            return Ok(out);
        }
        for (k, v) in self.map(n, field)? {
            let s = match &v.value {
                YNode::Str(s) => s.clone(),
                YNode::Int(i) => i.to_string(),
                YNode::Bool(b) => b.to_string(),
                other => {
                    return Err(self.err(
                        pos_of(v),
                        &format!("{field}.{}", k.value),
                        format!("expected a string, found {}", other.kind()),
                    ));
                }
            };
            out.insert(k.value.clone(), s);
        }
        Ok(out)
    }

    fn gates(&self, n: &SNode, field: &str) -> Result<BTreeMap<String, bool>, InputError> {
        let mut out = BTreeMap::new();
        if matches!(n.value, YNode::Null) {
            return Ok(out);
        }
        for (k, v) in self.map(n, field)? {
            out.insert(
                k.value.clone(),
                self.boolean(v, &format!("{field}.{}", k.value))?,
            );
        }
        Ok(out)
    }

    fn unknown(&self, k: &Spanned<String>, field: &str, known: &[&str]) -> InputError {
        self.err(
            pos_of(k),
            &format!("{field}.{}", k.value),
            format!("unknown field {:?} (known: {})", k.value, known.join(", ")),
        )
    }

    fn selector(&self, n: &SNode, field: &str) -> Result<MetricSelector, InputError> {
        let mut s = MetricSelector::default();
        const KNOWN: &[&str] = &["name", "labels", "dataBucket", "expectLower"];
        for (k, v) in self.map(n, field)? {
            let f = format!("{field}.{}", k.value);
            match k.value.as_str() {
                "name" => s.name = self.string(v, &f)?,
                "labels" => s.labels = self.string_map(v, &f)?,
                "dataBucket" => s.data_bucket = self.string(v, &f)?,
                "expectLower" => s.expect_lower = self.boolean(v, &f)?,
                _ => return Err(self.unknown(k, field, KNOWN)),
            }
        }
        Ok(s)
    }
}

/// Reads and parses a config file.
pub fn load(path: &Path) -> Result<Config, InputError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError::new(path, None, "", format!("cannot read: {e}")))?;
    parse_config(path, &text)
}

/// Parses config text (`path` names it in errors and anchors relative paths).
pub fn parse_config(path: &Path, text: &str) -> Result<Config, InputError> {
    let root = parse(path, text)?;
    let cx = Ctx { file: path };
    let dir = path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let topic = dir
        .file_name()
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty() && *s != ".")
        .map(str::to_string)
        .or_else(|| {
            path.file_stem()
                .and_then(|s| s.to_str())
                .map(str::to_string)
        })
        .unwrap_or_else(|| "config".into());
    let mut test_cases: Vec<TestCase> = Vec::new();
    for (i, tc) in cx.seq(&root, "")?.iter().enumerate() {
        let t = parse_test_case(&cx, tc, i)?;
        if let Some(prev) = test_cases.iter().find(|p| p.name == t.name) {
            return Err(cx.err(
                t.pos,
                &format!("[{i}].name"),
                format!(
                    "duplicate test case name {:?} (first at line {})",
                    t.name, prev.pos.line
                ),
            ));
        }
        test_cases.push(t);
    }
    if test_cases.is_empty() {
        return Err(InputError::new(
            path,
            Some(pos_of(&root)),
            "",
            "expected a list of test cases",
        ));
    }
    Ok(Config {
        path: path.to_path_buf(),
        dir,
        topic,
        test_cases,
    })
}

fn parse_test_case(cx: &Ctx, n: &SNode, i: usize) -> Result<TestCase, InputError> {
    const KNOWN: &[&str] = &[
        "name",
        "featureGates",
        "metricsCollectorConfig",
        "workloadTemplate",
        "workloads",
        "schedulerConfigPath",
        "defaultPodTemplatePath",
        "labels",
        "defaultThresholdMetricSelector",
        "schedulerApiClientQPS",
        "schedulerApiClientBurst",
    ];
    let base = format!("[{i}]");
    let m = cx.map(n, &base)?;
    let mut tc = TestCase {
        name: String::new(),
        pos: pos_of(n),
        feature_gates: BTreeMap::new(),
        ops: vec![],
        workloads: vec![],
        scheduler_config_path: None,
        default_pod_template_path: None,
        path_pos: BTreeMap::new(),
        labels: vec![],
        default_threshold_metric_selector: None,
        has_metrics_collector_config: false,
    };
    let mut workloads_node = None;
    let mut ops_node = None;
    for (k, v) in m {
        if k.value == "name" {
            tc.name = cx.string(v, &format!("{base}.name"))?;
        }
    }
    if tc.name.is_empty() {
        return Err(cx.err(tc.pos, &format!("{base}.name"), "a test case needs a name"));
    }
    let field = tc.name.clone();
    for (k, v) in m {
        let f = format!("{field}.{}", k.value);
        match k.value.as_str() {
            "name" => {}
            "featureGates" => tc.feature_gates = cx.gates(v, &f)?,
            "metricsCollectorConfig" => {
                cx.map(v, &f)?;
                tc.has_metrics_collector_config = true;
            }
            "workloadTemplate" => ops_node = Some(v),
            "workloads" => workloads_node = Some(v),
            "schedulerConfigPath" => {
                tc.scheduler_config_path = Some(cx.string(v, &f)?);
                tc.path_pos.insert("schedulerConfigPath", pos_of(v));
            }
            "defaultPodTemplatePath" => {
                tc.default_pod_template_path = Some(cx.string(v, &f)?);
                tc.path_pos.insert("defaultPodTemplatePath", pos_of(v));
            }
            "labels" => tc.labels = cx.strings(v, &f)?,
            "defaultThresholdMetricSelector" => {
                tc.default_threshold_metric_selector = Some(cx.selector(v, &f)?)
            }
            "schedulerApiClientQPS" | "schedulerApiClientBurst" => {
                cx.number(v, &f)?;
            }
            _ => return Err(cx.unknown(k, &field, KNOWN)),
        }
    }
    let ops_node =
        ops_node.ok_or_else(|| cx.err(tc.pos, &format!("{field}.workloadTemplate"), "missing"))?;
    for (j, op) in cx
        .seq(ops_node, &format!("{field}.workloadTemplate"))?
        .iter()
        .enumerate()
    {
        let of = format!("{field}.workloadTemplate[{j}]");
        let fields = cx.map(op, &of)?.to_vec();
        let opcode = fields
            .iter()
            .find(|(k, _)| k.value == "opcode")
            .map(|(_, v)| cx.string(v, &format!("{of}.opcode")))
            .transpose()?
            .ok_or_else(|| cx.err(pos_of(op), &format!("{of}.opcode"), "missing"))?;
        tc.ops.push(RawOp {
            index: j,
            pos: pos_of(op),
            opcode,
            fields,
        });
    }
    let wn =
        workloads_node.ok_or_else(|| cx.err(tc.pos, &format!("{field}.workloads"), "missing"))?;
    for (j, w) in cx
        .seq(wn, &format!("{field}.workloads"))?
        .iter()
        .enumerate()
    {
        let wl = parse_workload(cx, w, &format!("{field}.workloads[{j}]"))?;
        if let Some(prev) = tc.workloads.iter().find(|p| p.name == wl.name) {
            return Err(cx.err(
                wl.pos,
                &format!("{field}.workloads[{j}].name"),
                format!(
                    "duplicate workload name {:?} (first at line {})",
                    wl.name, prev.pos.line
                ),
            ));
        }
        tc.workloads.push(wl);
    }
    Ok(tc)
}

fn parse_workload(cx: &Ctx, n: &SNode, field: &str) -> Result<Workload, InputError> {
    const KNOWN: &[&str] = &[
        "name",
        "params",
        "labels",
        "threshold",
        "thresholdMetricSelector",
        "featureGates",
    ];
    let mut w = Workload {
        name: String::new(),
        pos: pos_of(n),
        params: BTreeMap::new(),
        labels: vec![],
        threshold: None,
        threshold_metric_selector: None,
        feature_gates: BTreeMap::new(),
    };
    for (k, v) in cx.map(n, field)? {
        let f = format!("{field}.{}", k.value);
        match k.value.as_str() {
            "name" => w.name = cx.string(v, &f)?,
            "params" => {
                for (pk, pv) in cx.map(v, &f)? {
                    let val = match &pv.value {
                        YNode::Int(i) => ParamValue::Int(*i),
                        YNode::Float(x) => ParamValue::Float(*x),
                        YNode::Str(s) => ParamValue::Str(s.clone()),
                        YNode::Bool(b) => ParamValue::Bool(*b),
                        other => {
                            return Err(cx.err(
                                pos_of(pv),
                                &format!("{f}.{}", pk.value),
                                format!("expected a scalar, found {}", other.kind()),
                            ));
                        }
                    };
                    w.params.insert(pk.value.clone(), (val, pos_of(pk)));
                }
            }
            "labels" => w.labels = cx.strings(v, &f)?,
            "threshold" => {
                w.threshold = Some(match &v.value {
                    YNode::Map(m) => {
                        let mut t = BTreeMap::new();
                        for (tk, tv) in m {
                            t.insert(
                                tk.value.clone(),
                                cx.number(tv, &format!("{f}.{}", tk.value))?,
                            );
                        }
                        Threshold::PerTopic(t)
                    }
                    _ => Threshold::Value(cx.number(v, &f)?),
                });
                let negative = match &w.threshold {
                    Some(Threshold::Value(x)) => *x < 0.0,
                    Some(Threshold::PerTopic(m)) => m.values().any(|x| *x < 0.0),
                    None => false,
                };
                if negative {
                    return Err(cx.err(pos_of(v), &f, "threshold must not be negative"));
                }
            }
            "thresholdMetricSelector" => w.threshold_metric_selector = Some(cx.selector(v, &f)?),
            "featureGates" => w.feature_gates = cx.gates(v, &f)?,
            _ => return Err(cx.unknown(k, field, KNOWN)),
        }
    }
    if w.name.is_empty() {
        return Err(cx.err(w.pos, &format!("{field}.name"), "a workload needs a name"));
    }
    Ok(w)
}

/// Parses a Go duration (`1s`, `500ms`, `1m30s`, `1.5h`, `10us`).
pub fn parse_go_duration(s: &str) -> Option<Duration> {
    let mut rest = s.trim();
    if rest == "0" {
        return Some(Duration::ZERO);
    }
    let mut total = 0f64;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let num: f64 = rest[..num_end].parse().ok()?;
        rest = &rest[num_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let mult = match &rest[..unit_end] {
            "ns" => 1e-9,
            "us" | "µs" | "μs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        total += num * mult;
        rest = &rest[unit_end..];
    }
    (total.is_finite() && total < 1e9).then(|| Duration::from_secs_f64(total))
}

/// Parses a `--label-filter` expression (scheduler_perf semantics): comma-separated labels;
/// a plain or `+` label must be present, a `-` label must be absent.
pub fn label_filter_matches(filter: &str, labels: &[String]) -> bool {
    filter
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .all(|t| {
            if let Some(l) = t.strip_prefix('-') {
                !labels.iter().any(|x| x == l)
            } else {
                let l = t.strip_prefix('+').unwrap_or(t);
                labels.iter().any(|x| x == l)
            }
        })
}

/// `rel` resolved against the config's folder, which must hold a file of that name: a missing
/// template or scheduler config is reported where the config names it, before anything runs.
fn existing_file(
    cx: &Ctx,
    cfg: &Config,
    rel: &str,
    pos: Pos,
    field: &str,
) -> Result<PathBuf, InputError> {
    let p = cfg.dir.join(rel);
    if p.is_file() {
        Ok(p)
    } else {
        Err(cx.err(
            pos,
            field,
            format!(
                "no such file: {} (paths resolve relative to the config file)",
                p.display()
            ),
        ))
    }
}

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
        let of = format!("{}.workloadTemplate[{}]", tc.name, raw.index);
        if raw.opcode == "createPodSets" {
            ops.extend(resolve_pod_sets(
                cfg,
                &cx,
                tc,
                wl,
                raw,
                &of,
                ops.len(),
                &used,
            )?);
        } else {
            ops.push(resolve_op(cfg, &cx, tc, wl, raw, &of, ops.len(), &used)?);
        }
    }
    // The objects the workload creates in all, against the same limit as one op: a config
    // that multiplies its way past it is refused here, before anything is allocated.
    let total: u64 = ops
        .iter()
        .map(|op| match op {
            Op::CreateNodes { count, .. }
            | Op::CreateNamespaces { count, .. }
            | Op::CreatePods { count, .. }
            | Op::CreateAny { count, .. } => *count as u64,
            _ => 0,
        })
        .sum();
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
    let used = used.into_inner();
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
    Ok(ops)
}

/// `createPodSets`: `count` createPods ops (the `createPodsOp` given) in namespaces
/// `<namespacePrefix>-<i>`, unrolled before anything runs, as upstream does.
#[allow(clippy::too_many_arguments)]
fn resolve_pod_sets<'w>(
    cfg: &Config,
    cx: &Ctx,
    tc: &TestCase,
    wl: &'w Workload,
    raw: &RawOp,
    of: &str,
    index: usize,
    used: &RefCell<BTreeMap<&'w str, bool>>,
) -> Result<Vec<Op>, InputError> {
    const KNOWN: &[&str] = &[
        "opcode",
        "count",
        "countParam",
        "namespacePrefix",
        "createPodsOp",
    ];
    for (k, _) in &raw.fields {
        if !KNOWN.contains(&k.value.as_str()) {
            return Err(cx.unknown(k, of, KNOWN));
        }
    }
    let get = |name: &str| raw.fields.iter().find(|(k, _)| k.value == name);
    let count = resolve_count(cx, wl, raw, of, used)?;
    let prefix = get("namespacePrefix")
        .map(|(_, v)| cx.string(v, &format!("{of}.namespacePrefix")))
        .transpose()?
        .filter(|p| !p.is_empty())
        .ok_or_else(|| {
            cx.err(
                raw.pos,
                &format!("{of}.namespacePrefix"),
                "namespacePrefix is required",
            )
        })?;
    let inner_field = format!("{of}.createPodsOp");
    let (_, inner) = get("createPodsOp")
        .ok_or_else(|| cx.err(raw.pos, &inner_field, "createPodsOp is required"))?;
    let fields = cx.map(inner, &inner_field)?.to_vec();
    let opcode = match fields.iter().find(|(k, _)| k.value == "opcode") {
        Some((_, v)) => cx.string(v, &format!("{inner_field}.opcode"))?,
        None => "createPods".to_string(),
    };
    if opcode != "createPods" {
        return Err(cx.err(
            pos_of(inner),
            &format!("{inner_field}.opcode"),
            format!("must be createPods, got {opcode:?}"),
        ));
    }
    let inner_raw = RawOp {
        index: raw.index,
        pos: pos_of(inner),
        opcode,
        fields,
    };
    let op = resolve_op(cfg, cx, tc, wl, &inner_raw, &inner_field, index, used)?;
    if let Op::CreatePods { count: per_set, .. } = &op
        && (count as i64).saturating_mul(*per_set as i64) > MAX_COUNT
    {
        return Err(cx.err(
            raw.pos,
            of,
            format!(
                "{count} pod sets of {per_set} pods exceed the limit of {MAX_COUNT} objects per op"
            ),
        ));
    }
    if count > MAX_POD_SETS {
        return Err(cx.err(
            raw.pos,
            &format!("{of}.count"),
            format!("{count} pod sets exceed the limit of {MAX_POD_SETS}"),
        ));
    }
    Ok((0..count)
        .map(|i| {
            let mut o = op.clone();
            if let Op::CreatePods { namespace, .. } = &mut o {
                *namespace = format!("{prefix}-{i}");
            }
            o
        })
        .collect())
}

/// The value of the `$name` param that `n` references, marked as used.
fn lookup_param<'w>(
    cx: &Ctx,
    wl: &'w Workload,
    n: &SNode,
    field: &str,
    used: &RefCell<BTreeMap<&'w str, bool>>,
) -> Result<ParamValue, InputError> {
    let s = cx.string(n, field)?;
    let name = s.strip_prefix('$').ok_or_else(|| {
        cx.err(
            pos_of(n),
            field,
            format!("must reference a param as $name, got {s:?}"),
        )
    })?;
    let (key, (v, _)) = wl.params.get_key_value(name).ok_or_else(|| {
        cx.err(
            pos_of(n),
            field,
            format!("parameter {name} is undefined in workload {}", wl.name),
        )
    })?;
    if let Some(u) = used.borrow_mut().get_mut(key.as_str()) {
        *u = true;
    }
    Ok(v.clone())
}

/// `count` / `countParam` of a raw op (required).
fn resolve_count<'w>(
    cx: &Ctx,
    wl: &'w Workload,
    raw: &RawOp,
    of: &str,
    used: &RefCell<BTreeMap<&'w str, bool>>,
) -> Result<usize, InputError> {
    let get = |name: &str| raw.fields.iter().find(|(k, _)| k.value == name);
    let (v, pos, field) = match (get("count"), get("countParam")) {
        (Some(_), Some((k, _))) => {
            return Err(cx.err(
                pos_of(k),
                &format!("{of}.countParam"),
                "count and countParam are mutually exclusive",
            ));
        }
        (Some((_, n)), None) => (
            ParamValue::Int(cx.number(n, &format!("{of}.count"))? as i64),
            pos_of(n),
            format!("{of}.count"),
        ),
        (None, Some((_, n))) => {
            let field = format!("{of}.countParam");
            (lookup_param(cx, wl, n, &field, used)?, pos_of(n), field)
        }
        (None, None) => {
            return Err(cx.err(
                raw.pos,
                &format!("{of}.count"),
                "count or countParam is required",
            ));
        }
    };
    let c = match v {
        ParamValue::Int(i) => i,
        ParamValue::Float(x) if x.fract() == 0.0 => x as i64,
        other => {
            return Err(cx.err(pos, &field, format!("expected an integer, got {other:?}")));
        }
    };
    if c < 0 {
        return Err(cx.err(pos, &field, format!("must not be negative, got {c}")));
    }
    if c > MAX_COUNT {
        return Err(cx.err(
            pos,
            &field,
            format!("{c} exceeds the limit of {MAX_COUNT} objects per op"),
        ));
    }
    Ok(c as usize)
}

#[allow(clippy::too_many_arguments)]
fn resolve_op<'w>(
    cfg: &Config,
    cx: &Ctx,
    tc: &TestCase,
    wl: &'w Workload,
    raw: &RawOp,
    of: &str,
    index: usize,
    used: &RefCell<BTreeMap<&'w str, bool>>,
) -> Result<Op, InputError> {
    let of = of.to_string();
    let get = |name: &str| raw.fields.iter().find(|(k, _)| k.value == name);
    let param = |n: &SNode, field: &str| lookup_param(cx, wl, n, field, used);
    if let Some((_, reason)) = UNSUPPORTED_OPS.iter().find(|(o, _)| *o == raw.opcode) {
        // Mark the params it references as used, so the workload is reported as unsupported
        // rather than as a config error.
        for (_, v) in &raw.fields {
            mark_params(&v.value, wl, &mut used.borrow_mut());
        }
        return Ok(Op::Unsupported {
            opcode: raw.opcode.clone(),
            reason: reason.to_string(),
        });
    }
    let known: &[&str] = match raw.opcode.as_str() {
        "createNodes" => &[
            "opcode",
            "count",
            "countParam",
            "nodeTemplatePath",
            "templateParams",
            "nodeAllocatableStrategy",
            "labelNodePrepareStrategy",
            "uniqueNodeLabelStrategy",
        ],
        "createNamespaces" => &[
            "opcode",
            "prefix",
            "count",
            "countParam",
            "namespaceTemplatePath",
        ],
        "createPods" => &[
            "opcode",
            "count",
            "countParam",
            "countMultiplierParam",
            "namespace",
            "podTemplatePath",
            "collectMetrics",
            "skipWaitToCompletion",
            "steadyState",
            "steadyStateParam",
            "duration",
            "durationParam",
            "persistentVolumeTemplatePath",
            "persistentVolumeClaimTemplatePath",
            "templateParams",
            "signatureBatchSize",
            "signatureBatchSizeParam",
            "nominatedNodeName",
        ],
        "barrier" => &["opcode", "namespaces", "labelSelector", "stageRequirement"],
        "deletePods" => &[
            "opcode",
            "namespace",
            "labelSelector",
            "skipWaitToCompletion",
            "deletePodsPerSecond",
        ],
        "updateAny" => &[
            "opcode",
            "templatePath",
            "namespace",
            "count",
            "countParam",
            "updatePerSecond",
            "subresources",
            "templateParams",
        ],
        "sleep" => &["opcode", "duration", "durationParam"],
        "startCollectingMetrics" => &[
            "opcode",
            "name",
            "namespaces",
            "labelSelector",
            "collectors",
        ],
        "stopCollectingMetrics" => &["opcode"],
        "createAny" => &[
            "opcode",
            "templatePath",
            "namespace",
            "count",
            "countParam",
            "templateParams",
        ],
        "churn" => &[
            "opcode",
            "mode",
            "number",
            "intervalMilliseconds",
            "namespace",
            "templatePaths",
        ],
        other => {
            let (k, v) = get("opcode").expect("opcode present");
            let _ = k;
            return Err(cx.err(
                pos_of(v),
                &format!("{of}.opcode"),
                format!("unknown op {other:?} (known: {})", KNOWN_OPS.join(", ")),
            ));
        }
    };
    for (k, _) in &raw.fields {
        if !known.contains(&k.value.as_str()) {
            return Err(cx.unknown(k, &of, known));
        }
    }
    let f = |name: &str| format!("{of}.{name}");
    let count = |default: Option<usize>| -> Result<usize, InputError> {
        match default {
            Some(d) if get("count").is_none() && get("countParam").is_none() => Ok(d),
            _ => resolve_count(cx, wl, raw, &of, used),
        }
    };
    let path = |name: &str| -> Result<Option<PathBuf>, InputError> {
        get(name)
            .map(|(_, v)| {
                let s = cx.string(v, &f(name))?;
                existing_file(cx, cfg, &s, pos_of(v), &f(name))
            })
            .transpose()
    };
    let boolean = |name: &str| -> Result<bool, InputError> {
        get(name)
            .map(|(_, v)| cx.boolean(v, &f(name)))
            .transpose()
            .map(|b| b.unwrap_or(false))
    };
    let string = |name: &str| -> Result<Option<String>, InputError> {
        get(name).map(|(_, v)| cx.string(v, &f(name))).transpose()
    };
    let selector = |name: &str| -> Result<BTreeMap<String, String>, InputError> {
        get(name)
            .map(|(_, v)| cx.string_map(v, &f(name)))
            .transpose()
            .map(Option::unwrap_or_default)
    };
    let default_ns = format!("namespace-{index}");
    // `duration` / `durationParam` (a Go duration), None when neither is given.
    let duration = || -> Result<Option<Duration>, InputError> {
        let (text, pos, field) = match (get("duration"), get("durationParam")) {
            (None, None) => return Ok(None),
            (Some((_, v)), None) => (cx.string(v, &f("duration"))?, pos_of(v), f("duration")),
            (None, Some((_, v))) => match param(v, &f("durationParam"))? {
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
    };
    match raw.opcode.as_str() {
        "createNodes" => {
            let count = count(None)?;
            let template_params = template_params(
                cx,
                get("templateParams"),
                &f("templateParams"),
                wl,
                &mut used.borrow_mut(),
            )?;
            // Upstream's order of precedence when several are given (getNodePreparer):
            // nodeAllocatableStrategy, then labelNodePrepareStrategy, then
            // uniqueNodeLabelStrategy.
            let mut strategy = None;
            if let Some((k, v)) = get("uniqueNodeLabelStrategy") {
                let m = cx.map(v, &f(&k.value))?;
                let mut key = String::new();
                for (mk, mv) in m {
                    match mk.value.as_str() {
                        "labelKey" => {
                            key = cx.string(mv, &f("uniqueNodeLabelStrategy.labelKey"))?
                        }
                        _ => return Err(cx.unknown(mk, &f(&k.value), &["labelKey"])),
                    }
                }
                strategy = Some(NodeStrategy::Unique { key });
            }
            if let Some((k, v)) = get("labelNodePrepareStrategy") {
                let m = cx.map(v, &f(&k.value))?;
                let mut key = String::new();
                let mut values = vec![];
                for (mk, mv) in m {
                    match mk.value.as_str() {
                        "labelKey" => {
                            key = cx.string(mv, &f("labelNodePrepareStrategy.labelKey"))?
                        }
                        "labelValues" => {
                            values = cx.strings(mv, &f("labelNodePrepareStrategy.labelValues"))?
                        }
                        _ => {
                            return Err(cx.unknown(mk, &f(&k.value), &["labelKey", "labelValues"]));
                        }
                    }
                }
                strategy = Some(NodeStrategy::Label { key, values });
            }
            if let Some((k, v)) = get("nodeAllocatableStrategy") {
                let m = cx.map(v, &f(&k.value))?;
                let mut resources = BTreeMap::new();
                for (mk, mv) in m {
                    match mk.value.as_str() {
                        "nodeAllocatable" => {
                            let field = f("nodeAllocatableStrategy.nodeAllocatable");
                            for (rk, rv) in cx.map(mv, &field)? {
                                let rfield = format!("{field}.{}", rk.value);
                                let q = match &rv.value {
                                    YNode::Str(s) => s.clone(),
                                    YNode::Int(i) => i.to_string(),
                                    YNode::Float(x) => x.to_string(),
                                    other => {
                                        return Err(cx.err(
                                            pos_of(rv),
                                            &rfield,
                                            format!("expected a quantity, found {}", other.kind()),
                                        ));
                                    }
                                };
                                if let Err(e) = tidegate_engine::api::quantity::Quantity::parse(&q)
                                {
                                    return Err(cx.err(pos_of(rv), &rfield, e.to_string()));
                                }
                                resources.insert(rk.value.clone(), q);
                            }
                        }
                        "csiNodeAllocatable" => {
                            cx.map(mv, &f("nodeAllocatableStrategy.csiNodeAllocatable"))?;
                        }
                        _ => {
                            return Err(cx.unknown(
                                mk,
                                &f(&k.value),
                                &["nodeAllocatable", "csiNodeAllocatable"],
                            ));
                        }
                    }
                }
                strategy = Some(NodeStrategy::Allocatable { resources });
            }
            Ok(Op::CreateNodes {
                count,
                template: path("nodeTemplatePath")?,
                template_params,
                strategy,
            })
        }
        "createNamespaces" => Ok(Op::CreateNamespaces {
            prefix: string("prefix")?
                .ok_or_else(|| cx.err(raw.pos, &f("prefix"), "prefix is required"))?,
            count: count(None)?,
            template: path("namespaceTemplatePath")?,
        }),
        "createPods" => {
            let mut n = count(None)?;
            if let Some((_, v)) = get("countMultiplierParam") {
                match param(v, &f("countMultiplierParam"))? {
                    ParamValue::Int(m) if m >= 0 => n = n.saturating_mul(m as usize),
                    other => {
                        return Err(cx.err(
                            pos_of(v),
                            &f("countMultiplierParam"),
                            format!("expected a non-negative integer, got {other:?}"),
                        ));
                    }
                }
                if n as i64 > MAX_COUNT {
                    return Err(cx.err(
                        pos_of(v),
                        &f("countMultiplierParam"),
                        format!("{n} pods exceed the limit of {MAX_COUNT} objects per op"),
                    ));
                }
            }
            let signature_batch = match (get("signatureBatchSize"), get("signatureBatchSizeParam"))
            {
                (None, None) => None,
                (Some((_, v)), None) => Some((
                    cx.int(v, &f("signatureBatchSize"))?,
                    v,
                    "signatureBatchSize",
                )),
                (None, Some((_, v))) => match param(v, &f("signatureBatchSizeParam"))? {
                    ParamValue::Int(i) => Some((i, v, "signatureBatchSizeParam")),
                    other => {
                        return Err(cx.err(
                            pos_of(v),
                            &f("signatureBatchSizeParam"),
                            format!("expected an integer, got {other:?}"),
                        ));
                    }
                },
                (Some(_), Some((k, _))) => {
                    return Err(cx.err(
                        pos_of(k),
                        &f("signatureBatchSizeParam"),
                        "signatureBatchSize and signatureBatchSizeParam are mutually exclusive",
                    ));
                }
            };
            let signature_batch = match signature_batch {
                None => None,
                Some((b, _, _)) if b > 0 => Some(b as usize),
                Some((b, v, name)) => {
                    return Err(cx.err(
                        pos_of(v),
                        &f(name),
                        format!("signature batch size must be positive, got {b}"),
                    ));
                }
            };
            let collect_metrics = boolean("collectMetrics")?;
            let skip_wait = boolean("skipWaitToCompletion")?;
            if collect_metrics && skip_wait {
                return Err(cx.err(
                    raw.pos,
                    &f("collectMetrics"),
                    "collectMetrics and skipWaitToCompletion cannot be used together",
                ));
            }
            let template_params = template_params(
                cx,
                get("templateParams"),
                &f("templateParams"),
                wl,
                &mut used.borrow_mut(),
            )?;
            let steady_state = match (get("steadyState"), get("steadyStateParam")) {
                (None, None) => false,
                (Some((_, v)), None) => cx.boolean(v, &f("steadyState"))?,
                (None, Some((_, v))) => match param(v, &f("steadyStateParam"))? {
                    ParamValue::Bool(b) => b,
                    other => {
                        return Err(cx.err(
                            pos_of(v),
                            &f("steadyStateParam"),
                            format!("expected a boolean, got {other:?}"),
                        ));
                    }
                },
                (Some(_), Some((k, _))) => {
                    return Err(cx.err(
                        pos_of(k),
                        &f("steadyStateParam"),
                        "steadyState and steadyStateParam are mutually exclusive",
                    ));
                }
            };
            let steady = match (steady_state, duration()?) {
                (false, _) => None,
                (true, Some(d)) if !d.is_zero() => Some(d),
                (true, _) => {
                    return Err(cx.err(
                        raw.pos,
                        &f("duration"),
                        "steadyState needs a positive duration (duration or durationParam)",
                    ));
                }
            };
            if steady.is_some() && skip_wait {
                return Err(cx.err(
                    raw.pos,
                    &f("steadyState"),
                    "steadyState and skipWaitToCompletion cannot be used together",
                ));
            }
            for unsupported in [
                "persistentVolumeTemplatePath",
                "persistentVolumeClaimTemplatePath",
            ] {
                if let Some((_, v)) = get(unsupported) {
                    mark_params(&v.value, wl, &mut used.borrow_mut());
                    let reason = format!("createPods.{unsupported} (volumes are out of scope)");
                    for (_, v) in &raw.fields {
                        mark_params(&v.value, wl, &mut used.borrow_mut());
                    }
                    return Ok(Op::Unsupported {
                        opcode: raw.opcode.clone(),
                        reason,
                    });
                }
            }
            for (_, v) in &raw.fields {
                mark_params(&v.value, wl, &mut used.borrow_mut());
            }
            let template = path("podTemplatePath")?.or_else(|| {
                tc.default_pod_template_path
                    .as_ref()
                    .map(|p| cfg.dir.join(p))
            });
            Ok(Op::CreatePods {
                count: n,
                namespace: string("namespace")?.unwrap_or(default_ns),
                template,
                template_params,
                collect_metrics,
                skip_wait,
                steady,
                nominated_node_name: string("nominatedNodeName")?.filter(|n| !n.is_empty()),
                signature_batch,
            })
        }
        "barrier" => {
            let attempted = match string("stageRequirement")?.as_deref() {
                None | Some("Scheduled") => false,
                Some("Attempted") => true,
                Some(other) => {
                    let (_, v) = get("stageRequirement").expect("present");
                    return Err(cx.err(
                        pos_of(v),
                        &f("stageRequirement"),
                        format!(
                            "unknown stage requirement {other:?} (known: Scheduled, Attempted)"
                        ),
                    ));
                }
            };
            Ok(Op::Barrier {
                namespaces: get("namespaces")
                    .map(|(_, v)| cx.strings(v, &f("namespaces")))
                    .transpose()?
                    .unwrap_or_default(),
                label_selector: selector("labelSelector")?,
                attempted,
            })
        }
        "deletePods" => Ok(Op::DeletePods {
            namespace: string("namespace")?
                .ok_or_else(|| cx.err(raw.pos, &f("namespace"), "namespace is required"))?,
            label_selector: selector("labelSelector")?,
            per_second: get("deletePodsPerSecond")
                .map(|(_, v)| cx.number(v, &f("deletePodsPerSecond")))
                .transpose()?
                .unwrap_or(0.0)
                .max(0.0),
            skip_wait: boolean("skipWaitToCompletion")?,
        }),
        "updateAny" => {
            let subresources = get("subresources")
                .map(|(_, v)| cx.strings(v, &f("subresources")))
                .transpose()?
                .unwrap_or_default();
            let resize = match subresources.as_slice() {
                [] => false,
                [one] if one == "resize" => true,
                other => {
                    for (_, v) in &raw.fields {
                        mark_params(&v.value, wl, &mut used.borrow_mut());
                    }
                    return Ok(Op::Unsupported {
                        opcode: raw.opcode.clone(),
                        reason: format!(
                            "updateAny.subresources {other:?} (only [resize] is supported)"
                        ),
                    });
                }
            };
            let template_params = template_params(
                cx,
                get("templateParams"),
                &f("templateParams"),
                wl,
                &mut used.borrow_mut(),
            )?;
            Ok(Op::UpdateAny {
                template: path("templatePath")?.ok_or_else(|| {
                    cx.err(raw.pos, &f("templatePath"), "templatePath is required")
                })?,
                namespace: string("namespace")?,
                count: count(Some(1))?,
                per_second: get("updatePerSecond")
                    .map(|(_, v)| cx.number(v, &f("updatePerSecond")))
                    .transpose()?
                    .unwrap_or(0.0)
                    .max(0.0),
                template_params,
                resize,
            })
        }
        "sleep" => {
            let duration = duration()?.ok_or_else(|| {
                cx.err(
                    raw.pos,
                    &f("duration"),
                    "exactly one of duration and durationParam is required",
                )
            })?;
            Ok(Op::Sleep { duration })
        }
        "startCollectingMetrics" => {
            let namespaces = get("namespaces")
                .map(|(_, v)| cx.strings(v, &f("namespaces")))
                .transpose()?
                .unwrap_or_default();
            if namespaces.is_empty() {
                return Err(cx.err(
                    raw.pos,
                    &f("namespaces"),
                    "namespaces is required (the namespaces whose pods are measured)",
                ));
            }
            if let Some((_, v)) = get("collectors") {
                for c in cx.strings(v, &f("collectors"))? {
                    if !KNOWN_COLLECTORS.contains(&c.as_str()) {
                        return Err(cx.err(
                            pos_of(v),
                            &f("collectors"),
                            format!(
                                "unknown collector {c:?} (known: {})",
                                KNOWN_COLLECTORS.join(", ")
                            ),
                        ));
                    }
                }
            }
            Ok(Op::StartCollecting {
                name: string("name")?.unwrap_or_default(),
                namespaces,
                label_selector: selector("labelSelector")?,
            })
        }
        "stopCollectingMetrics" => Ok(Op::StopCollecting),
        "createAny" => {
            let template_params = template_params(
                cx,
                get("templateParams"),
                &f("templateParams"),
                wl,
                &mut used.borrow_mut(),
            )?;
            Ok(Op::CreateAny {
                template: path("templatePath")?.ok_or_else(|| {
                    cx.err(raw.pos, &f("templatePath"), "templatePath is required")
                })?,
                namespace: string("namespace")?,
                count: count(Some(1))?,
                template_params,
            })
        }
        "churn" => {
            let recreate = match string("mode")?.as_deref() {
                Some("create") => false,
                Some("recreate") => true,
                other => {
                    let pos = get("mode").map_or(raw.pos, |(_, v)| pos_of(v));
                    return Err(cx.err(
                        pos,
                        &f("mode"),
                        format!("must be create or recreate, got {other:?}"),
                    ));
                }
            };
            let int = |name: &str| -> Result<Option<i64>, InputError> {
                get(name)
                    .map(|(_, v)| {
                        let x = cx.number(v, &f(name))?;
                        if x < 0.0 || x.fract() != 0.0 || x > MAX_COUNT as f64 {
                            return Err(cx.err(
                                pos_of(v),
                                &f(name),
                                format!(
                                    "must be a non-negative integer up to {MAX_COUNT}, got {x}"
                                ),
                            ));
                        }
                        Ok(x as i64)
                    })
                    .transpose()
            };
            let number = int("number")?.unwrap_or(0) as usize;
            if recreate && number == 0 {
                let pos = get("number").map_or(raw.pos, |(_, v)| pos_of(v));
                return Err(cx.err(
                    pos,
                    &f("number"),
                    "recreate mode needs a positive number of objects per template",
                ));
            }
            let interval_ms = int("intervalMilliseconds")?
                .filter(|&m| m > 0)
                .unwrap_or(500);
            let templates: Vec<PathBuf> = match get("templatePaths") {
                Some((_, v)) => cx
                    .strings(v, &f("templatePaths"))?
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        let at = match &v.value {
                            YNode::Seq(items) => items.get(i).map_or(pos_of(v), pos_of),
                            _ => pos_of(v),
                        };
                        existing_file(cx, cfg, t, at, &format!("{}[{i}]", f("templatePaths")))
                    })
                    .collect::<Result<_, _>>()?,
                None => Vec::new(),
            };
            if templates.is_empty() {
                return Err(cx.err(
                    raw.pos,
                    &f("templatePaths"),
                    "at least one template path is required",
                ));
            }
            Ok(Op::Churn {
                recreate,
                number,
                interval: Duration::from_millis(interval_ms as u64),
                namespace: string("namespace")?.unwrap_or(default_ns),
                templates,
            })
        }
        _ => unreachable!("opcode checked above"),
    }
}

/// Marks params referenced as `$name` anywhere inside `n` as used.
fn mark_params<'w>(n: &YNode, wl: &'w Workload, used: &mut BTreeMap<&'w str, bool>) {
    match n {
        YNode::Str(s) => {
            if let Some(name) = s.strip_prefix('$')
                && let Some((k, _)) = wl.params.get_key_value(name)
                && let Some(u) = used.get_mut(k.as_str())
            {
                *u = true;
            }
        }
        YNode::Seq(v) => v.iter().for_each(|x| mark_params(&x.value, wl, used)),
        YNode::Map(m) => m.iter().for_each(|(_, x)| mark_params(&x.value, wl, used)),
        _ => {}
    }
}

/// `templateParams`, with `$name` values replaced by the workload's params.
fn template_params<'w>(
    cx: &Ctx,
    n: Option<&(Spanned<String>, SNode)>,
    field: &str,
    wl: &'w Workload,
    used: &mut BTreeMap<&'w str, bool>,
) -> Result<serde_json::Map<String, serde_json::Value>, InputError> {
    let mut out = serde_json::Map::new();
    let Some((_, n)) = n else { return Ok(out) };
    for (k, v) in cx.map(n, field)? {
        let value = match &v.value {
            YNode::Str(s) if s.starts_with('$') => {
                let name = &s[1..];
                let (key, (pv, _)) = wl.params.get_key_value(name).ok_or_else(|| {
                    cx.err(
                        pos_of(v),
                        &format!("{field}.{}", k.value),
                        format!("parameter {name} is undefined in workload {}", wl.name),
                    )
                })?;
                if let Some(u) = used.get_mut(key.as_str()) {
                    *u = true;
                }
                pv.to_json()
            }
            other => other.to_json(),
        };
        out.insert(k.value.clone(), value);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations() {
        assert_eq!(parse_go_duration("1s"), Some(Duration::from_secs(1)));
        assert_eq!(parse_go_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_go_duration("1m30s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_go_duration("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_go_duration("0"), Some(Duration::ZERO));
        assert_eq!(parse_go_duration("10"), None);
        assert_eq!(parse_go_duration("1x"), None);
        assert_eq!(parse_go_duration(""), None);
    }

    #[test]
    fn label_filter_semantics() {
        let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(label_filter_matches("performance", &l(&["performance"])));
        assert!(!label_filter_matches(
            "performance",
            &l(&["integration-test"])
        ));
        assert!(label_filter_matches(
            "integration-test,-performance",
            &l(&["integration-test", "short"])
        ));
        assert!(!label_filter_matches(
            "integration-test,-performance",
            &l(&["integration-test", "performance"])
        ));
        assert!(label_filter_matches("+short", &l(&["short"])));
        assert!(label_filter_matches("", &l(&[])));
    }

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
            Op::CreatePods {
                count,
                namespace,
                template,
                collect_metrics,
                ..
            } => {
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
