//! Parsing the workload file: test cases (name, labels, feature gates, scheduler config and
//! default pod template paths, the workload template's raw ops) and workloads (params,
//! labels, thresholds, feature gates); Go durations and `--label-filter` expressions.

use crate::error::{InputError, Pos};
use crate::workload::fields::Ctx;
use crate::workload::yaml::{SNode, YNode, parse, pos_of};
use crate::workload::{Config, ParamValue, RawOp, TestCase, Threshold, Workload};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

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
        metrics_collector: None,
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
            "metricsCollectorConfig" => tc.metrics_collector = Some(metrics_collector(cx, v, &f)?),
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
    tc.ops = parse_raw_ops(cx, ops_node, &field)?;
    let wn =
        workloads_node.ok_or_else(|| cx.err(tc.pos, &format!("{field}.workloads"), "missing"))?;
    tc.workloads = parse_workloads(cx, wn, &field)?;
    Ok(tc)
}

/// A `metricsCollectorConfig` (kube's `metricsCollectorConfig`: `metrics`, a map from metric
/// name to null or a list of `{label, values}`).
fn metrics_collector(
    cx: &Ctx,
    n: &SNode,
    field: &str,
) -> Result<crate::workload::MetricsCollectorConfig, InputError> {
    let mut out = BTreeMap::new();
    for (k, v) in cx.map(n, field)? {
        let f = format!("{field}.{}", k.value);
        if k.value != "metrics" {
            return Err(cx.unknown(k, field, &["metrics"]));
        }
        for (metric, lvs) in cx.map(v, &f)? {
            let mf = format!("{f}.{}", metric.value);
            let filter = match &lvs.value {
                YNode::Null => None,
                _ => {
                    let mut list = Vec::new();
                    for (i, lv) in cx.seq(lvs, &mf)?.iter().enumerate() {
                        let lf = format!("{mf}[{i}]");
                        let (mut label, mut values) = (None, Vec::new());
                        for (lk, lvv) in cx.map(lv, &lf)? {
                            match lk.value.as_str() {
                                "label" => label = Some(cx.string(lvv, &format!("{lf}.label"))?),
                                "values" => values = cx.strings(lvv, &format!("{lf}.values"))?,
                                _ => return Err(cx.unknown(lk, &lf, &["label", "values"])),
                            }
                        }
                        let label = label
                            .ok_or_else(|| cx.err(pos_of(lv), &format!("{lf}.label"), "missing"))?;
                        list.push((label, values));
                    }
                    Some(list)
                }
            };
            out.insert(metric.value.clone(), filter);
        }
    }
    Ok(out)
}

/// The ops of a workload template as written (`opcode` read, the rest kept for resolving).
fn parse_raw_ops(cx: &Ctx, ops_node: &SNode, field: &str) -> Result<Vec<RawOp>, InputError> {
    let mut ops = Vec::new();
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
        ops.push(RawOp {
            index: j,
            pos: pos_of(op),
            opcode,
            fields,
        });
    }
    Ok(ops)
}

/// The workloads of a test case (names unique).
fn parse_workloads(cx: &Ctx, wn: &SNode, field: &str) -> Result<Vec<Workload>, InputError> {
    let mut workloads: Vec<Workload> = Vec::new();
    for (j, w) in cx
        .seq(wn, &format!("{field}.workloads"))?
        .iter()
        .enumerate()
    {
        let wl = parse_workload(cx, w, &format!("{field}.workloads[{j}]"))?;
        if let Some(prev) = workloads.iter().find(|p| p.name == wl.name) {
            return Err(cx.err(
                wl.pos,
                &format!("{field}.workloads[{j}].name"),
                format!(
                    "duplicate workload name {:?} (first at line {})",
                    wl.name, prev.pos.line
                ),
            ));
        }
        workloads.push(wl);
    }
    Ok(workloads)
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
                        YNode::Seq(_) | YNode::Map(_) | YNode::Null => {
                            ParamValue::Json(pv.value.to_json())
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

/// `rel` against the config's folder `dir`, or against the folder above when only that one
/// has such a file (upstream's old `config/` layout, see [`existing_file`]).
pub fn resolve_rel(dir: &Path, rel: &str) -> PathBuf {
    let p = dir.join(rel);
    match dir.parent().map(|d| d.join(rel)) {
        Some(old) if !p.is_file() && old.is_file() => old,
        _ => p,
    }
}

/// `rel` resolved against the config's folder, which must hold a file of that name: a missing
/// template or scheduler config is reported where the config names it, before anything runs.
/// Upstream's old single-file layout (`config/performance-config.yaml`, run from the
/// scheduler_perf folder) writes paths as `config/...` relative to the folder above: when the
/// config's folder has no such file and the one above has, that one is used.
pub(crate) fn existing_file(
    cx: &Ctx,
    cfg: &Config,
    rel: &str,
    pos: Pos,
    field: &str,
) -> Result<PathBuf, InputError> {
    let p = resolve_rel(&cfg.dir, rel);
    if p.is_file() {
        Ok(p)
    } else {
        Err(cx.err(
            pos,
            field,
            format!(
                "no such file: {} (paths resolve relative to the config file's folder, or the folder above it as in upstream's old config/ layout)",
                p.display()
            ),
        ))
    }
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
}
