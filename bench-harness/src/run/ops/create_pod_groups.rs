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

type Params = serde_json::Map<String, serde_json::Value>;

/// `createPodGroups` (or, with `composite`, `createCompositePodGroups`).
#[derive(Clone, Debug, PartialEq)]
pub struct CreatePodGroups {
    /// CompositePodGroups rather than PodGroups.
    pub composite: bool,
    pub namespace: String,
    pub template: PathBuf,
    /// The objects created in all (a tree's: every composite level's).
    pub count: usize,
    pub template_params: serde_json::Map<String, serde_json::Value>,
    /// kube v1.38's tree form of `createCompositePodGroups` (`rootCount`, `depth`, …);
    /// `None`: the flat form, `count` objects with `.Index` 0.. (earlier master).
    pub tree: Option<Tree>,
}

/// kube v1.38.0-beta.0's `createCompositePodGroups` (`test/integration/scheduler_perf/
/// operations.go`, `executor.go`): `rootCount` trees of composite groups `depth - 1` levels
/// deep (level 1 the roots, each level `childrenCompositePodGroupsPerCPG` children per
/// parent); the leaf PodGroups of level `depth` are a later `createPodGroups`' to make,
/// `childrenPodGroupsPerCPG` per composite group of the last level. The op sets the
/// workload params `podGroupsCount` (the leaves wanted) and `parentLevel` (`depth - 1`) for
/// the ops after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tree {
    pub root_count: usize,
    pub depth: usize,
    pub children_cpg: usize,
    pub children_pg: usize,
}

impl Tree {
    /// The composite groups of each level, 1 to `depth - 1`.
    pub fn level_counts(&self) -> Vec<usize> {
        let mut out = Vec::new();
        let mut n = self.root_count;
        for level in 1..self.depth {
            out.push(n);
            if level + 1 < self.depth {
                n = n.saturating_mul(self.children_cpg);
            }
        }
        out
    }

    /// `$podGroupsCount`: the leaf PodGroups the tree wants.
    pub fn pod_groups_count(&self) -> usize {
        let counts = self.level_counts();
        counts
            .last()
            .copied()
            .unwrap_or(0)
            .saturating_mul(self.children_pg)
    }

    /// The template data of each object, in creation order (level by level, `.Index`
    /// restarting at 0 on each): `.Level`, `.ParentLevel` and `.ParentIndex` below the roots,
    /// `.ChildrenCount` (the last level's: `childrenPodGroupsPerCPG`).
    pub fn objects(
        &self,
        params: &serde_json::Map<String, serde_json::Value>,
    ) -> Vec<(usize, serde_json::Map<String, serde_json::Value>)> {
        let counts = self.level_counts();
        let mut out = Vec::new();
        for (l, &n) in counts.iter().enumerate() {
            let level = l + 1;
            let children = if level == self.depth - 1 {
                self.children_pg
            } else {
                self.children_cpg
            };
            for index in 0..n {
                let mut m = params.clone();
                m.insert("Level".into(), level.into());
                if level > 1 {
                    m.insert("ParentLevel".into(), (level - 1).into());
                    m.insert("ParentIndex".into(), (index / self.children_cpg).into());
                }
                m.insert("ChildrenCount".into(), children.into());
                out.push((index, m));
            }
        }
        out
    }
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
    /// `createCompositePodGroups`' fields: the flat form's (earlier master) and the tree
    /// form's (kube v1.38.0-beta.0).
    pub const COMPOSITE_FIELDS: &'static [&'static str] = &[
        "opcode",
        "namespace",
        "templatePath",
        "templateParams",
        "count",
        "countParam",
        "rootCount",
        "rootCountParam",
        "depth",
        "childrenCompositePodGroupsPerCPG",
        "childrenCompositePodGroupsPerCPGParam",
        "childrenPodGroupsPerCPG",
        "childrenPodGroupsPerCPGParam",
    ];
    /// The params the tree form sets for the ops after it.
    pub const SET_PARAMS: [&'static str; 2] = ["podGroupsCount", "parentLevel"];

    pub(crate) fn resolve(r: &Resolve) -> Result<Op, InputError> {
        Self::resolve_as(r, false)
    }

    pub(crate) fn resolve_composite(r: &Resolve) -> Result<Op, InputError> {
        let tree_fields = &Self::COMPOSITE_FIELDS[6..];
        if !r
            .raw
            .fields
            .iter()
            .any(|(k, _)| tree_fields.contains(&k.value.as_str()))
        {
            return Self::resolve_as(r, true);
        }
        if let Some((k, _)) = r.get("count").or(r.get("countParam")) {
            return Err(r.err(
                pos_of(k),
                &r.f(&k.value),
                "count and countParam are the flat form's; the tree form counts rootCount",
            ));
        }
        let (template_params, template, namespace) = Self::common(r)?;
        let root_count = tree_count(r, "rootCount", "rootCountParam")?;
        if root_count.is_none_or(|c| c < 1) {
            return Err(r.err(
                r.raw.pos,
                &r.f("rootCount"),
                format!(
                    "rootCount must be greater than 0, got {}",
                    root_count.unwrap_or(0)
                ),
            ));
        }
        let depth = tree_count(r, "depth", "")?.unwrap_or(0);
        if !(2..=4).contains(&depth) {
            let pos = r.get("depth").map_or(r.raw.pos, |(_, v)| pos_of(v));
            return Err(r.err(
                pos,
                &r.f("depth"),
                format!("depth must be between 2 and 4, got {depth}"),
            ));
        }
        let children_cpg = tree_count(
            r,
            "childrenCompositePodGroupsPerCPG",
            "childrenCompositePodGroupsPerCPGParam",
        )?;
        if depth == 2 && children_cpg.is_some() {
            return Err(r.err(
                r.raw.pos,
                &r.f("childrenCompositePodGroupsPerCPG"),
                "childrenCompositePodGroupsPerCPG / childrenCompositePodGroupsPerCPGParam cannot be set when depth is 2",
            ));
        }
        let children_cpg = children_cpg.unwrap_or(0);
        if depth > 2 && children_cpg < 1 {
            return Err(r.err(
                r.raw.pos,
                &r.f("childrenCompositePodGroupsPerCPG"),
                format!(
                    "childrenCompositePodGroupsPerCPG must be greater than 0 when depth > 2, got {children_cpg}"
                ),
            ));
        }
        let children_pg =
            tree_count(r, "childrenPodGroupsPerCPG", "childrenPodGroupsPerCPGParam")?.unwrap_or(0);
        if children_pg < 1 {
            return Err(r.err(
                r.raw.pos,
                &r.f("childrenPodGroupsPerCPG"),
                format!("childrenPodGroupsPerCPG must be greater than 0, got {children_pg}"),
            ));
        }
        let tree = Tree {
            root_count: root_count.unwrap_or(0),
            depth,
            children_cpg,
            children_pg,
        };
        let count: usize = tree.level_counts().iter().sum();
        if count as i64 > crate::workload::params::MAX_COUNT
            || tree.pod_groups_count() as i64 > crate::workload::params::MAX_COUNT
        {
            return Err(r.err(
                r.raw.pos,
                &r.f("rootCount"),
                format!(
                    "the tree exceeds the limit of {} objects per op",
                    crate::workload::params::MAX_COUNT
                ),
            ));
        }
        Ok(Op::CreatePodGroups(CreatePodGroups {
            composite: true,
            namespace,
            template,
            count,
            template_params,
            tree: Some(tree),
        }))
    }

    /// What both forms require (upstream's `isValid`): the template params, the template
    /// and a namespace.
    fn common(r: &Resolve) -> Result<(Params, PathBuf, String), InputError> {
        let template_params = r.template_params()?;
        let template = r
            .path("templatePath")?
            .ok_or_else(|| r.err(r.raw.pos, &r.f("templatePath"), "templatePath must be set"))?;
        let namespace = r
            .string("namespace")?
            .filter(|n| !n.is_empty())
            .ok_or_else(|| r.err(r.raw.pos, &r.f("namespace"), "namespace must be set"))?;
        Ok((template_params, template, namespace))
    }

    /// The objects to create: (`.Index`, template data) in creation order.
    pub fn renderings(&self) -> Vec<(usize, serde_json::Map<String, serde_json::Value>)> {
        match &self.tree {
            Some(t) => t.objects(&self.template_params),
            None => (0..self.count)
                .map(|j| (j, self.template_params.clone()))
                .collect(),
        }
    }

    /// Upstream's `isValid`: a template and a namespace are required, the count at least 1.
    fn resolve_as(r: &Resolve, composite: bool) -> Result<Op, InputError> {
        let (template_params, template, namespace) = Self::common(r)?;
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
            tree: None,
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
        let (j, params) = self.renderings().into_iter().next().expect("count >= 1");
        let r = t.render(j, self.count, &params)?;
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
        for (j, params) in self.renderings() {
            let r = t.render(j, self.count, &params)?;
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

/// A count of the tree form: the literal field, or the `$param` one (`param` empty: none);
/// `None` when neither is given.
fn tree_count(r: &Resolve, literal: &str, param: &str) -> Result<Option<usize>, InputError> {
    use crate::workload::params::ParamValue;
    let (v, pos, field) = match (
        r.get(literal),
        (!param.is_empty()).then(|| r.get(param)).flatten(),
    ) {
        (Some(_), Some((k, _))) => {
            return Err(r.err(
                pos_of(k),
                &r.f(param),
                format!("{literal} and {param} are mutually exclusive"),
            ));
        }
        (Some((_, n)), None) => (
            ParamValue::Int(r.cx.number(n, &r.f(literal))? as i64),
            pos_of(n),
            r.f(literal),
        ),
        (None, Some((_, n))) => (r.param(n, &r.f(param))?, pos_of(n), r.f(param)),
        (None, None) => return Ok(None),
    };
    match v {
        ParamValue::Int(i) if i >= 0 => Ok(Some(i as usize)),
        ParamValue::Float(x) if x >= 0.0 && x.fract() == 0.0 => Ok(Some(x as usize)),
        other => Err(r.err(pos, &field, format!("expected a count, got {other:?}"))),
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

    const TREE: &str = "\
- name: T
  featureGates:
    GenericWorkload: true
    TopologyAwareWorkloadScheduling: true
    CompositePodGroup: true
  workloadTemplate:
  - opcode: createCompositePodGroups
    rootCountParam: $roots
    depth: 3
    childrenCompositePodGroupsPerCPGParam: $cpgs
    childrenPodGroupsPerCPGParam: $pgs
    namespace: ns
    templatePath: pg.yaml
  - opcode: createPodGroups
    countParam: $podGroupsCount
    namespace: ns
    templatePath: pg.yaml
    templateParams:
      parentLevel: $parentLevel
  workloads:
  - name: w
    params:
      roots: 2
      cpgs: 2
      pgs: 4
";

    /// kube v1.38.0-beta.0's tree form (test/integration/scheduler_perf/operations.go,
    /// executor.go): depth 3, 2 roots, 2 composite children each, 4 PodGroups per
    /// last-level composite: levels of 2 and 4 composite groups (`.Index` restarting per
    /// level, `.ParentIndex` = index / 2), `$podGroupsCount` 16 and `$parentLevel` 2 for the
    /// ops after it.
    #[test]
    fn the_tree_form_creates_levels_and_sets_params() {
        let ops = resolve(TREE).unwrap();
        let Op::CreatePodGroups(c) = &ops[0] else {
            panic!("{:?}", ops[0]);
        };
        let t = c.tree.expect("the tree form");
        assert_eq!(t.level_counts(), vec![2, 4]);
        assert_eq!((c.count, t.pod_groups_count()), (6, 16));
        let objs = c.renderings();
        let at = |i: usize, k: &str| objs[i].1.get(k).cloned();
        assert_eq!(objs[0].0, 0);
        assert_eq!(at(0, "Level"), Some(1.into()));
        assert_eq!(at(0, "ParentIndex"), None);
        assert_eq!(at(0, "ChildrenCount"), Some(2.into()));
        // Level 2, index 3: the child of root 1, with 4 PodGroups.
        assert_eq!(objs[5].0, 3);
        assert_eq!(at(5, "Level"), Some(2.into()));
        assert_eq!(at(5, "ParentLevel"), Some(1.into()));
        assert_eq!(at(5, "ParentIndex"), Some(1.into()));
        assert_eq!(at(5, "ChildrenCount"), Some(4.into()));
        let Op::CreatePodGroups(p) = &ops[1] else {
            panic!("{:?}", ops[1]);
        };
        assert_eq!(p.count, 16);
        assert_eq!(p.template_params["parentLevel"], serde_json::json!(2));
        // Upstream's `set`: a workload param of the same name not read before is an error.
        let e = resolve(&TREE.replace("      pgs: 4\n", "      pgs: 4\n      parentLevel: 9\n"))
            .unwrap_err();
        assert!(
            e.contains("parameter parentLevel is already defined"),
            "{e}"
        );
        // Depth 2 takes no composite children.
        let e = resolve(&TREE.replace("depth: 3", "depth: 2")).unwrap_err();
        assert!(e.contains("cannot be set when depth is 2"), "{e}");
    }
}
