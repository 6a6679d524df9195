//! The resolve step shared by every op: the opcode tables, [`resolve_ops`] over a test
//! case's workload template, and `Resolve::resolve`, the dispatch to an op type's resolve
//! (`Resolve` itself, what that step reads, is in `input.rs`, which names no op).

use super::*;
use crate::error::InputError;
use crate::workload::ParamValue;
use crate::workload::fields::Ctx;
use crate::workload::params::MAX_COUNT;
use crate::workload::parse::existing_file;
use crate::workload::yaml::pos_of;
use crate::workload::{Config, TestCase, Workload};
use std::cell::RefCell;
use std::collections::BTreeMap;

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
    (
        "createResourceDriver",
        "kube v1.36's test driver op is not modelled (v1.37 publishes slices with createAny)",
    ),
    (
        "createResourceClaims",
        "this DRA op is not modelled yet (claims from createAny are)",
    ),
    (
        "updateDeviceConditions",
        "DRA binding conditions are not modelled yet",
    ),
    (
        "checkPodScheduled",
        "DRA binding conditions are not modelled yet",
    ),
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
        AllocResourceClaims::OPCODE,
        AllocResourceClaims::FIELDS,
        AllocResourceClaims::resolve,
    ),
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
    (
        CreatePodGroups::OPCODE,
        CreatePodGroups::FIELDS,
        CreatePodGroups::resolve,
    ),
    (
        CreatePodGroups::COMPOSITE_OPCODE,
        CreatePodGroups::COMPOSITE_FIELDS,
        CreatePodGroups::resolve_composite,
    ),
    (
        WaitForPodGroups::OPCODE,
        WaitForPodGroups::FIELDS,
        WaitForPodGroups::resolve,
    ),
];

/// Checks every op of every test case as upstream decodes the file, before any workload is
/// selected: the opcode is known, and a supported op has no unknown field (upstream's
/// decoder disallows unknown fields). What depends on a workload's params (an undefined
/// param, a count out of range) is checked only for the workloads that run, as upstream
/// checks it when it runs them.
pub fn check_ops(cfg: &Config) -> Result<(), InputError> {
    let cx = Ctx { file: &cfg.path };
    for tc in &cfg.test_cases {
        for raw in &tc.ops {
            let of = format!("{}.workloadTemplate[{}]", tc.name, raw.index);
            if !KNOWN_OPS.contains(&raw.opcode.as_str()) {
                let pos = raw
                    .fields
                    .iter()
                    .find(|(k, _)| k.value == "opcode")
                    .map_or(tc.pos, |(_, v)| pos_of(v));
                return Err(cx.err(
                    pos,
                    &format!("{of}.opcode"),
                    format!(
                        "unknown op {:?} (known: {})",
                        raw.opcode,
                        KNOWN_OPS.join(", ")
                    ),
                ));
            }
            let known = match OPS.iter().find(|(o, _, _)| *o == raw.opcode) {
                Some((_, known, _)) => *known,
                None if raw.opcode == super::create_pod_sets::OPCODE => {
                    super::create_pod_sets::FIELDS
                }
                None => continue,
            };
            if let Some((k, _)) = raw
                .fields
                .iter()
                .find(|(k, _)| !known.contains(&k.value.as_str()))
            {
                return Err(cx.unknown(k, &of, known));
            }
        }
    }
    Ok(())
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
    let used: RefCell<BTreeMap<String, bool>> =
        RefCell::new(wl.params.keys().map(|k| (k.clone(), false)).collect());
    let mut ops = Vec::new();
    // The workload's params as the ops see them: an op may set params for the ops after it
    // (kube v1.38's `createCompositePodGroups`), as upstream's `Params.set` does.
    let mut cur = wl.clone();
    for raw in &tc.ops {
        // Ops are numbered after createPodSets is unrolled, as upstream's
        // `unrollWorkloadTemplate` does: the default namespace `namespace-<i>` of a later op
        // counts every createPods op a pod set became.
        let r = Resolve {
            cfg,
            cx: &cx,
            tc,
            wl: &cur,
            raw,
            of: format!("{}.workloadTemplate[{}]", tc.name, raw.index),
            index: ops.len(),
            used: &used,
        };
        if raw.opcode == super::create_pod_sets::OPCODE {
            ops.extend(create_pod_sets::resolve(&r)?);
        } else {
            ops.push(r.resolve()?);
        }
        if let Some(Op::CreatePodGroups(CreatePodGroups { tree: Some(t), .. })) = ops.last() {
            let of = format!("{}.workloadTemplate[{}]", tc.name, raw.index);
            let values = [t.pod_groups_count() as i64, (t.depth - 1) as i64];
            let mut used = used.borrow_mut();
            for (name, v) in CreatePodGroups::SET_PARAMS.into_iter().zip(values) {
                // Upstream's `set`: a param defined and not read since is an error.
                if cur.params.contains_key(name) && used.get(name) == Some(&false) {
                    return Err(cx.err(
                        raw.pos,
                        &of,
                        format!("parameter {name} is already defined"),
                    ));
                }
                cur.params
                    .insert(name.to_string(), (ParamValue::Int(v), raw.pos));
                used.insert(name.to_string(), false);
            }
        }
    }
    check_total(cfg, tc, wl, &ops)?;
    let mut used = used.into_inner();
    for p in super::topic_hooks::params_read(cfg, wl) {
        if let Some(u) = used.get_mut(*p) {
            *u = true;
        }
    }
    check_all_params_used(cfg, tc, wl, used)?;
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
    used: BTreeMap<String, bool>,
) -> Result<(), InputError> {
    let unused: Vec<&str> = used
        .iter()
        .filter(|(_, u)| !**u)
        .map(|(k, _)| k.as_str())
        .collect();
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

impl<'a, 'w> Resolve<'a, 'w> {
    /// Resolves the op: unsupported ops first, then unknown opcodes and fields, then the
    /// op type's own resolve step.
    pub(crate) fn resolve(&self) -> Result<Op, InputError> {
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
