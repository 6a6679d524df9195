//! `createPodGroups` and `createCompositePodGroups`: `count` PodGroups (or, on kube's master,
//! CompositePodGroups) in a namespace from a template, then a wait until the scheduler's
//! informer has them all (kube v1.37.2, `test/integration/scheduler_perf/executor.go`:
//! `runCreatePodGroupsOp`; master's `createCompositePodGroups` takes the same fields, as its
//! `cpg/` files use them).
//!
//! Protocol: the op's namespace is created and registered first (upstream's
//! `createNamespaceIfNotPresent`), then object `i` of `count` is rendered with `.Index` = `i`
//! and the template params and created through the typed client of the kind's one version
//! (`scheduling.k8s.io/v1beta1` PodGroup, `v1alpha3` CompositePodGroup: a template naming
//! another version is refused, as the API server refuses a body whose version does not match
//! the URL's). An invalid object fails the op at once (kube fails fast on Invalid). The wait
//! then reads the store's list of the kind in the namespace, which the scheduler's handlers
//! have seen by the time a create returns (writes are delivered under the kind's writer
//! lock), so it passes on its first check unless an object is missing.

use super::{Op, Prepared, Resolve, RunCx};
use crate::cluster::store::kind::{Kind, decode_rendered};
use crate::cluster::store::registry;
use crate::cluster::store::{ApiGates, KubeObject, StoredObject};
use crate::error::{HarnessError, InputError};
use crate::workload::manifest::{self, ObjectTemplate, Rendered};
use crate::workload::yaml::pos_of;
use std::path::PathBuf;
use std::sync::Arc;

/// `createPodGroups` (or, with `composite`, `createCompositePodGroups`).
#[derive(Clone, Debug, PartialEq)]
pub struct CreatePodGroups {
    /// CompositePodGroups rather than PodGroups.
    pub composite: bool,
    pub namespace: String,
    pub template: PathBuf,
    pub count: usize,
    pub template_params: serde_json::Map<String, serde_json::Value>,
}

impl CreatePodGroups {
    pub const OPCODE: &'static str = "createPodGroups";
    pub const COMPOSITE_OPCODE: &'static str = "createCompositePodGroups";
    pub const FIELDS: &'static [&'static str] = &[
        "opcode",
        "namespace",
        "templatePath",
        "templateParams",
        "count",
        "countParam",
    ];

    pub(crate) fn resolve(r: &Resolve) -> Result<Op, InputError> {
        Self::resolve_as(r, false)
    }

    pub(crate) fn resolve_composite(r: &Resolve) -> Result<Op, InputError> {
        Self::resolve_as(r, true)
    }

    /// Upstream's `isValid`: a template and a namespace are required, the count at least 1.
    fn resolve_as(r: &Resolve, composite: bool) -> Result<Op, InputError> {
        let template_params = r.template_params()?;
        let template = r
            .path("templatePath")?
            .ok_or_else(|| r.err(r.raw.pos, &r.f("templatePath"), "templatePath must be set"))?;
        let namespace = r
            .string("namespace")?
            .filter(|n| !n.is_empty())
            .ok_or_else(|| r.err(r.raw.pos, &r.f("namespace"), "namespace must be set"))?;
        let count = r.count(None)?;
        if count < 1 {
            let pos = r
                .get("countParam")
                .or(r.get("count"))
                .map_or(r.raw.pos, |(_, v)| pos_of(v));
            return Err(r.err(
                pos,
                &r.f("count"),
                format!("count must be greater than 0, got {count}"),
            ));
        }
        Ok(Op::CreatePodGroups(CreatePodGroups {
            composite,
            namespace,
            template,
            count,
            template_params,
        }))
    }

    pub fn opcode(&self) -> &'static str {
        if self.composite {
            Self::COMPOSITE_OPCODE
        } else {
            Self::OPCODE
        }
    }

    /// The kind the op creates.
    pub fn kind(&self) -> &'static Kind {
        let name = if self.composite {
            "CompositePodGroup"
        } else {
            "PodGroup"
        };
        registry::lookup(name).expect("a registered kind")
    }

    /// The API version the op's typed client writes.
    fn api_version(&self) -> &'static str {
        if self.composite {
            "scheduling.k8s.io/v1alpha3"
        } else {
            "scheduling.k8s.io/v1beta1"
        }
    }

    /// Loads the template and checks object 0 (the census of `plan_groups` checks them all).
    pub(crate) fn plan(&self, i: usize, prepared: &mut Prepared) -> Result<(), InputError> {
        let t = ObjectTemplate::load(&self.template)?;
        let r = t.render(0, self.count, &self.template_params)?;
        self.decode(&r, &prepared.api_gates)?;
        prepared.templates.insert(i, t);
        Ok(())
    }

    /// Object `r` decoded and validated as the op's kind in its typed client's version, the
    /// fields of disabled `gates` dropped first, as the API server does.
    pub(crate) fn decode(
        &self,
        r: &Rendered,
        gates: &ApiGates,
    ) -> Result<Arc<dyn KubeObject>, InputError> {
        let kind = self.kind();
        let mut r = r.clone();
        let want = self.api_version();
        match r.json.get("apiVersion").and_then(|v| v.as_str()) {
            None | Some("") => r.json["apiVersion"] = want.into(),
            // A served version the template names (an older release's executor wrote
            // PodGroups through its own version's typed client, v1alpha3 for one).
            Some(v) if v == want || kind.version(v).is_some() => {}
            Some(v) => {
                return Err(r.error_at(
                    "apiVersion",
                    format!(
                        "the API version in the data ({v}) does not match the expected API version ({want}) of {}",
                        self.opcode()
                    ),
                ));
            }
        }
        match r.json.get("kind").and_then(|v| v.as_str()) {
            None | Some("") => r.json["kind"] = kind.kind.into(),
            Some(k) if k == kind.kind => {}
            Some(k) => {
                return Err(r.error_at(
                    "kind",
                    format!(
                        "{} creates objects of kind {}, the template is a {k}",
                        self.opcode(),
                        kind.kind
                    ),
                ));
            }
        }
        if let Some((field, message)) = (kind.gated)(&mut r.json, None, gates).into_iter().next() {
            return Err(r.error_at(&field, message));
        }
        decode_rendered(kind, &r)
    }

    pub(crate) fn run(&self, cx: &mut RunCx) -> Result<(), HarnessError> {
        cx.register_namespace(&self.namespace)?;
        let t = cx.prepared.templates.get(&cx.index).expect("planned");
        let kind = self.kind();
        for j in 0..self.count {
            let r = t.render(j, self.count, &self.template_params)?;
            let obj = StoredObject {
                kind,
                obj: self.decode(&r, &cx.prepared.api_gates)?,
            };
            cx.store.create_object(&obj, &self.namespace).map_err(|e| {
                InputError::new(
                    &t.path,
                    Some(manifest::object_pos(&r)),
                    format!("{}[{j}]", self.opcode()),
                    e.to_string(),
                )
            })?;
        }
        let have = cx.store.list_objects(kind, Some(&self.namespace)).len();
        if have < self.count {
            return Err(HarnessError::Run(format!(
                "op {}: timed out waiting for {}s to be cached: {have} of {} in namespace {}",
                cx.index, kind.kind, self.count, self.namespace
            )));
        }
        Ok(())
    }
}

/// `waitForPodGroups` (kube's development releases before v1.37, with the `GangScheduling`
/// gate): waits until the scheduler's informer has `count` PodGroups in `namespace`, which a
/// `createAny` made. The store's creates are seen by the time they return, so the wait
/// passes on its first check unless a group is missing.
#[derive(Clone, Debug, PartialEq)]
pub struct WaitForPodGroups {
    pub namespace: String,
    pub count: usize,
}

impl WaitForPodGroups {
    pub const OPCODE: &'static str = "waitForPodGroups";
    pub const FIELDS: &'static [&'static str] = &["opcode", "namespace", "count", "countParam"];

    pub(crate) fn resolve(r: &Resolve) -> Result<Op, InputError> {
        let namespace = r
            .string("namespace")?
            .filter(|n| !n.is_empty())
            .ok_or_else(|| r.err(r.raw.pos, &r.f("namespace"), "namespace must be set"))?;
        Ok(Op::WaitForPodGroups(WaitForPodGroups {
            namespace,
            count: r.count(None)?,
        }))
    }

    pub(crate) fn run(&self, cx: &mut RunCx) -> Result<(), HarnessError> {
        let kind = registry::lookup("PodGroup").expect("a registered kind");
        let have = cx.store.list_objects(kind, Some(&self.namespace)).len();
        if have < self.count {
            return Err(HarnessError::Run(format!(
                "op {}: timed out waiting for PodGroups to be cached: {have} of {} in namespace {}",
                cx.index, self.count, self.namespace
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::ops::resolve_ops;
    use crate::workload::parse_config;

    const CFG: &str = "\
- name: G
  featureGates:
    GenericWorkload: true
  workloadTemplate:
  - opcode: createPodGroups
    countParam: $groups
    namespace: gangs
    templatePath: pg.yaml
    templateParams:
      podsPerGroup: $size
  - opcode: waitForPodGroups
    namespace: gangs
    countParam: $groups
  - opcode: createCompositePodGroups
    count: 1
    namespace: gangs
    templatePath: pg.yaml
  - opcode: createPods
    count: 1
    collectMetrics: true
  workloads:
  - name: w
    params:
      groups: 4
      size: 3
";

    /// The ops of `text` (with `pg.yaml` beside it), or the first error.
    fn resolve(text: &str) -> Result<Vec<Op>, String> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("pg.yaml"), "kind: PodGroup\n").unwrap();
        let cfg = parse_config(&dir.path().join("c.yaml"), text).map_err(|e| e.to_string())?;
        let tc = &cfg.test_cases[0];
        resolve_ops(&cfg, tc, &tc.workloads[0]).map_err(|e| e.to_string())
    }

    /// kube's fields: count or countParam, namespace, templatePath, templateParams; a
    /// composite op of the same shape; waitForPodGroups' namespace and count.
    #[test]
    fn resolves_kubes_fields() {
        let ops = resolve(CFG).unwrap();
        let Op::CreatePodGroups(c) = &ops[0] else {
            panic!("{:?}", ops[0]);
        };
        assert_eq!(
            (c.count, c.namespace.as_str(), c.composite),
            (4, "gangs", false)
        );
        assert_eq!(c.template_params["podsPerGroup"], serde_json::json!(3));
        assert_eq!(c.kind().kind, "PodGroup");
        assert_eq!(
            ops[1],
            Op::WaitForPodGroups(WaitForPodGroups {
                namespace: "gangs".into(),
                count: 4
            })
        );
        let Op::CreatePodGroups(c) = &ops[2] else {
            panic!("{:?}", ops[2]);
        };
        assert!(c.composite);
        assert_eq!(c.opcode(), "createCompositePodGroups");
        assert_eq!(c.kind().kind, "CompositePodGroup");
    }

    /// kube's `isValid`: a namespace and a template are required, the count at least 1.
    #[test]
    fn refuses_what_kube_refuses() {
        let e = resolve(&CFG.replacen(
            "    namespace: gangs\n    templatePath",
            "    templatePath",
            1,
        ))
        .unwrap_err();
        assert!(
            e.contains("G.workloadTemplate[0].namespace: namespace must be set"),
            "{e}"
        );
        let e = resolve(&CFG.replacen(
            "    templatePath: pg.yaml\n    templateParams",
            "    templateParams",
            1,
        ))
        .unwrap_err();
        assert!(e.contains("templatePath must be set"), "{e}");
        let e = resolve(&CFG.replace("groups: 4", "groups: 0")).unwrap_err();
        assert!(e.contains("count must be greater than 0, got 0"), "{e}");
        let e = resolve(&CFG.replace(
            "    countParam: $groups\n    namespace: gangs\n    templatePath",
            "    countParam: $groups\n    namespace: gangs\n    podsPerGroup: 3\n    templatePath",
        ))
        .unwrap_err();
        assert!(e.contains("unknown field \"podsPerGroup\""), "{e}");
    }
}
