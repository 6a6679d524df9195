//! `createPods`: `count` pods in a namespace from a template (or the test case's default
//! pod template), waited for until scheduled unless `skipWaitToCompletion`; optionally
//! measured (`collectMetrics`) or kept at `count` pending for a while (`steadyState`).

use super::pod_volumes::{LoadedVolumes, VolumeTemplates, with_claim};
use super::{Op, Prepared, Resolve, RunCx};
use crate::cluster::store::Store;
use crate::error::{HarnessError, InputError};
use crate::run::pace::Pace;
use crate::workload::ParamValue;
use crate::workload::manifest::{self, ObjectTemplate, PodSource};
use crate::workload::params::MAX_COUNT;
use crate::workload::yaml::{SNode, pos_of};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tidegate_engine::api::validation::validate_pod_create;

#[derive(Clone, Debug, PartialEq)]
pub struct CreatePods {
    pub count: usize,
    pub namespace: String,
    pub template: Option<PathBuf>,
    pub template_params: serde_json::Map<String, serde_json::Value>,
    pub collect_metrics: bool,
    pub skip_wait: bool,
    /// `steadyState` with its `duration`: for that long, every pod of the namespace
    /// seen scheduled is deleted and replaced, keeping `count` pods pending.
    pub steady: Option<Duration>,
    /// `nominatedNodeName`: every pod is created with this `status.nominatedNodeName`
    /// (as if an earlier preemption had nominated it), which the scheduler's nominator
    /// takes from the informer as kube's does.
    pub nominated_node_name: Option<String>,
    /// `signatureBatchSize[Param]`: pod `i` gets the label
    /// `signature=signature-label-<i / batch>` (pods of one batch share a signature).
    pub signature_batch: Option<usize>,
    /// `persistentVolumeClaimTemplatePath` (with `persistentVolumeTemplatePath`): each pod
    /// gets a claim and a volume of its own ([`super::pod_volumes`]).
    pub volumes: Option<VolumeTemplates>,
}

impl CreatePods {
    pub const OPCODE: &'static str = "createPods";
    pub const FIELDS: &'static [&'static str] = &[
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
    ];

    pub(crate) fn resolve(r: &Resolve) -> Result<Op, InputError> {
        let n = resolve_pod_count(r)?;
        let signature_batch = resolve_signature_batch(r)?;
        let collect_metrics = r.boolean("collectMetrics")?;
        let skip_wait = r.boolean("skipWaitToCompletion")?;
        if collect_metrics && skip_wait {
            return Err(r.err(
                r.raw.pos,
                &r.f("collectMetrics"),
                "collectMetrics and skipWaitToCompletion cannot be used together",
            ));
        }
        let template_params = r.template_params()?;
        let steady = resolve_steady(r, skip_wait)?;
        let volumes = resolve_volumes(r)?;
        r.mark_all_params();
        let template = r.path("podTemplatePath")?.or_else(|| {
            r.tc.default_pod_template_path
                .as_ref()
                .map(|p| crate::workload::parse::resolve_rel(&r.cfg.dir, p))
        });
        Ok(Op::CreatePods(CreatePods {
            count: n,
            namespace: r.string("namespace")?.unwrap_or(r.default_namespace()),
            template,
            template_params,
            collect_metrics,
            skip_wait,
            steady,
            nominated_node_name: r.string("nominatedNodeName")?.filter(|n| !n.is_empty()),
            signature_batch,
            volumes,
        }))
    }

    /// Makes one pod from the source, checks it as the API server would and notes what of
    /// its spec this build does not run.
    pub(crate) fn plan(
        &self,
        i: usize,
        prepared: &mut Prepared,
        unsupported: &mut Option<String>,
    ) -> Result<(), InputError> {
        let src = PodSource::new(self.template.as_deref())?
            .with_nominated_node_name(self.nominated_node_name.clone());
        let (pod, spec, rendered) = src.make(0, 1, &self.template_params)?;
        let mut sample = (*pod).clone();
        if sample.metadata.name.is_none() {
            sample.metadata.name = Some("sample".into());
        }
        if let Some(e) = validate_pod_create(&sample).into_iter().next() {
            let file = src.path().unwrap_or(Path::new("<default pod>"));
            let pos = rendered
                .as_ref()
                .map(|r| manifest::position_of(r, &e.field))
                .or_else(|| {
                    ObjectTemplate::load(file)
                        .ok()
                        .and_then(|t| t.render(0, 1, &self.template_params).ok())
                        .map(|r| manifest::position_of(&r, &e.field))
                });
            return Err(InputError::new(
                file,
                pos,
                e.field.clone(),
                e.to_string()
                    .trim_start_matches(&format!("{}: ", e.field))
                    .to_string(),
            ));
        }
        if let Some(u) = spec.unsupported.first() {
            let file = src
                .path()
                .map_or("<default pod>".into(), |p| p.display().to_string());
            unsupported.get_or_insert_with(|| format!("{u}, used by {file}"));
        }
        prepared.pods.insert(i, src);
        if let Some(v) = &self.volumes {
            prepared.volumes.insert(i, LoadedVolumes::load(v)?);
        }
        Ok(())
    }

    /// Pod `j` of `count` (with its claim and volume, created first, when the op has them).
    fn make_pod(
        &self,
        store: &Store,
        src: &PodSource,
        volumes: Option<&LoadedVolumes>,
        j: usize,
        count: usize,
    ) -> Result<MadePod, HarnessError> {
        let (pod, spec, _) = src.make(j, count, &self.template_params)?;
        let pod = with_signature(pod, j, self.signature_batch);
        let (Some(v), Some(paths)) = (volumes, &self.volumes) else {
            return Ok((pod, spec));
        };
        let claim = v
            .create(store, &self.namespace, j)
            .map_err(|e| e.into_input(&paths.claim, ""))?;
        Ok(with_claim(&pod, &claim)?)
    }

    pub(crate) fn run(&self, cx: &mut RunCx) -> Result<(), HarnessError> {
        let prepared = cx.prepared;
        let src = prepared.pods.get(&cx.index).expect("planned");
        let (store, namespace, count) = (cx.store, &self.namespace, self.count);
        // Upstream creates the namespace first (`createNamespaceIfNotPresent`), so a
        // createPods of 0 pods still makes it known to a later barrier.
        cx.register_namespace(namespace)?;
        // Steady state watches the namespace before its first pod exists.
        let watch = self.steady.map(|_| store.watch_scheduled(namespace));
        if self.collect_metrics {
            cx.open_window(namespace, std::slice::from_ref(namespace), &BTreeMap::new())?;
        }
        let volumes = prepared.volumes.get(&cx.index);
        for j in 0..count {
            let (pod, spec) = self.make_pod(store, src, volumes, j, count)?;
            store
                .create_pod(&pod, namespace, spec)
                .map_err(|e| e.into_input(src.path().unwrap_or(Path::new("<default pod>")), ""))?;
        }
        if let (Some(d), Some(rx)) = (self.steady, watch) {
            self.steady_state(store, cx.pace, (src, volumes), d, &rx)?;
            // Time passed: the executor's view has caught up (see `wait`).
            cx.view.catch_up(store, None);
        } else if self.skip_wait {
            // Only counted for a later barrier (upstream's numPodsScheduledPerNamespace).
            *cx.known_ns.entry(namespace.clone()).or_default() += count;
        } else {
            // Upstream's waitUntilPodsScheduledInNamespace(namespace, count): `count` pods of
            // the namespace scheduled, whenever and by whichever op they were created (see
            // `wait`).
            cx.wait_pods(namespace, &BTreeMap::new(), count, false)?;
        }
        if self.collect_metrics
            && let Some(w) = cx.window.take()
        {
            cx.close_window(w);
        }
        Ok(())
    }

    /// createPods' steady state (upstream's createPodsSteadily): for `duration`, every pod of
    /// the namespace seen scheduled is deleted and a new one created, so the scheduler's queue
    /// stays at about `count` pods and the cluster near its starting condition. An error if no
    /// pod at all got scheduled in that time. Each replacement is made as upstream's
    /// `strategy(..., 1)` makes it: template index 0 of a count of 1 (the op's namespace,
    /// template parameters and signature batches).
    fn steady_state(
        &self,
        store: &Store,
        pace: &mut Pace,
        (src, volumes): (&PodSource, Option<&LoadedVolumes>),
        duration: Duration,
        scheduled: &crossbeam::channel::Receiver<tidegate_engine::api::PodKey>,
    ) -> Result<(), HarnessError> {
        let namespace = &self.namespace;
        let mut seen = 0usize;
        let mut replace = |key: tidegate_engine::api::PodKey| -> Result<(), HarnessError> {
            seen += 1;
            // scheduler_perf deletes each scheduled pod with gracePeriodSeconds 0 (executor.go,
            // the steady state of runCreatePodsOp): gone at once, though bound.
            store.delete_pod_with_grace(&key, Some(0));
            let (pod, spec) = self.make_pod(store, src, volumes, 0, 1)?;
            store
                .create_pod(&pod, namespace, spec)
                .map_err(|e| e.into_input(src.path().unwrap_or(Path::new("<default pod>")), ""))?;
            Ok(())
        };
        if pace.is_virtual() {
            let deadline = pace.now() + duration;
            let mut failed = None;
            pace.run_virtual_until(deadline, &mut || {
                while let Ok(key) = scheduled.try_recv() {
                    if let Err(e) = replace(key) {
                        failed = Some(e);
                        return true;
                    }
                }
                false
            });
            if let Some(e) = failed {
                return Err(e);
            }
        } else {
            let deadline = Instant::now() + duration;
            loop {
                let now = Instant::now();
                if now >= deadline {
                    break;
                }
                if let Ok(key) = scheduled.recv_timeout(deadline - now) {
                    replace(key)?;
                }
            }
        }
        if seen == 0 {
            return Err(HarnessError::Run(format!(
                "steady state in namespace {namespace}: no pod at all got scheduled in {duration:?}, either because of a problem or because the interval was too small"
            )));
        }
        Ok(())
    }
}

type MadePod = (
    Arc<k8s_openapi::api::core::v1::Pod>,
    Arc<tidegate_engine::api::PodSpecInfo>,
);

/// `persistentVolumeClaimTemplatePath` turns the volume strategy on (upstream's
/// `getPodStrategy`); it then needs `persistentVolumeTemplatePath` too (upstream would
/// dereference a nil path).
fn resolve_volumes(r: &Resolve) -> Result<Option<VolumeTemplates>, InputError> {
    let mut missing = None;
    let mut path = |name: &str| match r.path(name) {
        Err(e) if e.message.starts_with("no such file") => {
            missing.get_or_insert(e);
            Ok(r.string(name)?.map(PathBuf::from))
        }
        other => other,
    };
    let claim = path("persistentVolumeClaimTemplatePath")?;
    let volume = path("persistentVolumeTemplatePath")?;
    match (claim, volume) {
        (None, _) => Ok(None),
        (Some(claim), Some(volume)) => Ok(Some(VolumeTemplates {
            volume,
            claim,
            missing,
        })),
        (Some(_), None) => Err(r.err(
            r.raw.pos,
            &r.f("persistentVolumeTemplatePath"),
            "persistentVolumeTemplatePath is required with persistentVolumeClaimTemplatePath",
        )),
    }
}

/// Pod `j` with the label `signature=signature-label-<j / batch>` when a signature batch
/// size is set.
fn with_signature(
    pod: Arc<k8s_openapi::api::core::v1::Pod>,
    j: usize,
    batch: Option<usize>,
) -> Arc<k8s_openapi::api::core::v1::Pod> {
    let Some(b) = batch else {
        return pod;
    };
    let mut p = (*pod).clone();
    p.metadata
        .labels
        .get_or_insert_with(Default::default)
        .insert("signature".into(), format!("signature-label-{}", j / b));
    Arc::new(p)
}

/// `count` / `countParam`, times `countMultiplierParam`.
fn resolve_pod_count(r: &Resolve) -> Result<usize, InputError> {
    let mut n = r.count(None)?;
    if let Some((_, v)) = r.get("countMultiplierParam") {
        let field = r.f("countMultiplierParam");
        match r.param(v, &field)? {
            ParamValue::Int(m) if m >= 0 => n = n.saturating_mul(m as usize),
            other => {
                return Err(r.err(
                    pos_of(v),
                    &field,
                    format!("expected a non-negative integer, got {other:?}"),
                ));
            }
        }
        if n as i64 > MAX_COUNT {
            return Err(r.err(
                pos_of(v),
                &field,
                format!("{n} pods exceed the limit of {MAX_COUNT} objects per op"),
            ));
        }
    }
    Ok(n)
}

/// `signatureBatchSize` / `signatureBatchSizeParam` (positive), None when neither is given.
fn resolve_signature_batch(r: &Resolve) -> Result<Option<usize>, InputError> {
    let f = |name: &str| r.f(name);
    let given: Option<(i64, &SNode, &str)> = match (
        r.get("signatureBatchSize"),
        r.get("signatureBatchSizeParam"),
    ) {
        (None, None) => None,
        (Some((_, v)), None) => Some((
            r.cx.int(v, &f("signatureBatchSize"))?,
            v,
            "signatureBatchSize",
        )),
        (None, Some((_, v))) => match r.param(v, &f("signatureBatchSizeParam"))? {
            ParamValue::Int(i) => Some((i, v, "signatureBatchSizeParam")),
            other => {
                return Err(r.err(
                    pos_of(v),
                    &f("signatureBatchSizeParam"),
                    format!("expected an integer, got {other:?}"),
                ));
            }
        },
        (Some(_), Some((k, _))) => {
            return Err(r.err(
                pos_of(k),
                &f("signatureBatchSizeParam"),
                "signatureBatchSize and signatureBatchSizeParam are mutually exclusive",
            ));
        }
    };
    match given {
        None => Ok(None),
        Some((b, _, _)) if b > 0 => Ok(Some(b as usize)),
        Some((b, v, name)) => Err(r.err(
            pos_of(v),
            &f(name),
            format!("signature batch size must be positive, got {b}"),
        )),
    }
}

/// `steadyState` / `steadyStateParam` with `duration` / `durationParam`.
fn resolve_steady(r: &Resolve, skip_wait: bool) -> Result<Option<Duration>, InputError> {
    let f = |name: &str| r.f(name);
    let steady_state = match (r.get("steadyState"), r.get("steadyStateParam")) {
        (None, None) => false,
        (Some((_, v)), None) => r.cx.boolean(v, &f("steadyState"))?,
        (None, Some((_, v))) => match r.param(v, &f("steadyStateParam"))? {
            ParamValue::Bool(b) => b,
            other => {
                return Err(r.err(
                    pos_of(v),
                    &f("steadyStateParam"),
                    format!("expected a boolean, got {other:?}"),
                ));
            }
        },
        (Some(_), Some((k, _))) => {
            return Err(r.err(
                pos_of(k),
                &f("steadyStateParam"),
                "steadyState and steadyStateParam are mutually exclusive",
            ));
        }
    };
    let steady = match (steady_state, r.duration()?) {
        (false, _) => None,
        (true, Some(d)) if !d.is_zero() => Some(d),
        (true, _) => {
            return Err(r.err(
                r.raw.pos,
                &f("duration"),
                "steadyState needs a positive duration (duration or durationParam)",
            ));
        }
    };
    if steady.is_some() && skip_wait {
        return Err(r.err(
            r.raw.pos,
            &f("steadyState"),
            "steadyState and skipWaitToCompletion cannot be used together",
        ));
    }
    Ok(steady)
}
