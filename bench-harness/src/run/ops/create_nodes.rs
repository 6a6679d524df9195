//! `createNodes`: `count` nodes from a template (or a default node), their labels or
//! allocatable prepared by a strategy.

use super::{Op, Prepared, Resolve, RunCx};
use crate::error::{HarnessError, InputError};
use crate::workload::manifest::{self, ObjectTemplate};
use crate::workload::yaml::{SNode, YNode, pos_of};
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use serde_saphyr::Spanned;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Clone, Debug, PartialEq)]
pub struct CreateNodes {
    pub count: usize,
    pub template: Option<PathBuf>,
    pub template_params: serde_json::Map<String, serde_json::Value>,
    pub strategy: Option<NodeStrategy>,
}

/// How node labels are prepared by createNodes.
#[derive(Clone, Debug, PartialEq)]
pub enum NodeStrategy {
    /// `labelNodePrepareStrategy`: values assigned round-robin.
    Label { key: String, values: Vec<String> },
    /// `uniqueNodeLabelStrategy`: a unique value per node.
    Unique { key: String },
    /// `nodeAllocatableStrategy`: the `nodeAllocatable` entries set on every node's
    /// `status.allocatable` (the others kept, from capacity when the template gives no
    /// allocatable), and each node's CSINode as upstream's `PrepareDependentObjects` writes
    /// it: created (or updated) with one driver per `csiNodeAllocatable` entry (its
    /// `allocatable`, `nodeID` the node) and the annotation
    /// `storage.alpha.kubernetes.io/migrated-plugins` = `migratedPlugins` joined by commas
    /// (present, empty, when none are given).
    Allocatable {
        resources: BTreeMap<String, String>,
        csi: BTreeMap<String, Option<i32>>,
        migrated_plugins: Vec<String>,
    },
}

impl CreateNodes {
    pub const OPCODE: &'static str = "createNodes";
    pub const FIELDS: &'static [&'static str] = &[
        "opcode",
        "count",
        "countParam",
        "nodeTemplatePath",
        "templateParams",
        "nodeAllocatableStrategy",
        "labelNodePrepareStrategy",
        "uniqueNodeLabelStrategy",
    ];

    pub(crate) fn resolve(r: &Resolve) -> Result<Op, InputError> {
        let count = r.count(None)?;
        let template_params = r.template_params()?;
        // Upstream's order of precedence when several are given (getNodePreparer):
        // nodeAllocatableStrategy, then labelNodePrepareStrategy, then
        // uniqueNodeLabelStrategy.
        let mut strategy = None;
        if let Some((k, v)) = r.get("uniqueNodeLabelStrategy") {
            strategy = Some(unique_strategy(r, k, v)?);
        }
        if let Some((k, v)) = r.get("labelNodePrepareStrategy") {
            strategy = Some(label_strategy(r, k, v)?);
        }
        if let Some((k, v)) = r.get("nodeAllocatableStrategy") {
            strategy = Some(allocatable_strategy(r, k, v)?);
        }
        Ok(Op::CreateNodes(CreateNodes {
            count,
            template: r.path("nodeTemplatePath")?,
            template_params,
            strategy,
        }))
    }

    /// Renders the template once and checks the node it makes.
    pub(crate) fn plan(&self, i: usize, prepared: &mut Prepared) -> Result<(), InputError> {
        if let Some(path) = &self.template {
            let t = ObjectTemplate::load(path)?;
            let r = t.render(0, 1, &self.template_params)?;
            let n: core::Node = r.typed("Node")?;
            manifest::node(Some(&r), &n)?;
            prepared.templates.insert(i, t);
        }
        Ok(())
    }

    pub(crate) fn run(&self, cx: &mut RunCx) -> Result<(), HarnessError> {
        let i = cx.index;
        let t = cx.prepared.templates.get(&i);
        let mut created = Vec::with_capacity(self.count);
        for j in 0..self.count {
            let (mut n, r) = match (&self.template, t) {
                (Some(_), Some(t)) => {
                    let r = t.render(j, self.count, &self.template_params)?;
                    (r.typed::<core::Node>("Node")?, Some(r))
                }
                _ => (manifest::default_node(i), None),
            };
            self.prepare(j, &mut n);
            let converted = manifest::node(r.as_ref(), &n)?;
            let name = cx
                .store
                .create_prepared_node(n, converted)
                .map_err(|e| e.into_input(&cx.cfg.path, &cx.field()))?;
            created.push(name);
        }
        // Upstream prepares the dependent objects after every node of the op exists.
        if let Some(NodeStrategy::Allocatable {
            csi,
            migrated_plugins,
            ..
        }) = &self.strategy
        {
            for name in &created {
                put_csi_node(cx, name, csi, migrated_plugins)?;
            }
        }
        super::topic_hooks::after_create_nodes(cx)
    }

    /// Applies the strategy to node `j`.
    fn prepare(&self, j: usize, n: &mut core::Node) {
        match &self.strategy {
            Some(NodeStrategy::Label { key, values }) if !values.is_empty() => {
                let labels = n.metadata.labels.get_or_insert_with(Default::default);
                labels.insert(key.clone(), values[j % values.len()].clone());
            }
            Some(NodeStrategy::Unique { key }) => {
                let labels = n.metadata.labels.get_or_insert_with(Default::default);
                labels.insert(key.clone(), format!("node-{j}"));
            }
            Some(NodeStrategy::Allocatable { resources, .. }) => {
                let status = n.status.get_or_insert_with(Default::default);
                let capacity = status.capacity.clone().unwrap_or_default();
                let alloc = status.allocatable.get_or_insert(capacity);
                for (k, v) in resources {
                    alloc.insert(k.clone(), Quantity(v.clone()));
                }
            }
            _ => {}
        }
    }
}

/// The node's CSINode as upstream's `NodeAllocatableStrategy.PrepareDependentObjects` leaves
/// it: `existing` (the stored one) or a new one, its drivers' allocatable set (a driver
/// appended when missing) and the migration annotation replaced.
fn prepare_csi_node(
    existing: Option<k8s_openapi::api::storage::v1::CSINode>,
    node: &str,
    csi: &BTreeMap<String, Option<i32>>,
    migrated: &[String],
) -> k8s_openapi::api::storage::v1::CSINode {
    use k8s_openapi::api::storage::v1 as storage;
    const ANNOTATION: &str = "storage.alpha.kubernetes.io/migrated-plugins";
    let allocatable = |c: &Option<i32>| Some(storage::VolumeNodeResources { count: *c });
    let mut csi_node = existing.unwrap_or_else(|| storage::CSINode {
        metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            name: Some(node.to_string()),
            ..Default::default()
        },
        spec: storage::CSINodeSpec { drivers: vec![] },
        ..Default::default()
    });
    for (driver, count) in csi {
        match csi_node.spec.drivers.iter_mut().find(|d| &d.name == driver) {
            Some(d) => d.allocatable = allocatable(count),
            None => csi_node.spec.drivers.push(storage::CSINodeDriver {
                name: driver.clone(),
                node_id: node.to_string(),
                allocatable: allocatable(count),
                topology_keys: None,
            }),
        }
    }
    csi_node
        .metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(ANNOTATION.to_string(), migrated.join(","));
    csi_node
}

/// Writes the node's CSINode ([`prepare_csi_node`]): a create, or an update of the stored one.
fn put_csi_node(
    cx: &mut RunCx,
    node: &str,
    csi: &BTreeMap<String, Option<i32>>,
    migrated: &[String],
) -> Result<(), HarnessError> {
    use k8s_openapi::api::storage::v1 as storage;
    let existing = cx
        .store
        .get::<storage::CSINode>("", node)
        .map(|n| (*n).clone());
    let update = existing.is_some();
    let csi_node = prepare_csi_node(existing, node, csi, migrated);
    let written = if update {
        cx.store
            .update(csi_node, "", crate::cluster::store::Subresource::Main)
    } else {
        cx.store.create(csi_node, "").map(|_| ())
    };
    written.map_err(|e| e.into_input(&cx.cfg.path, &cx.field()).into())
}

/// `uniqueNodeLabelStrategy: {labelKey}`.
fn unique_strategy(
    r: &Resolve,
    k: &Spanned<String>,
    v: &SNode,
) -> Result<NodeStrategy, InputError> {
    let m = r.cx.map(v, &r.f(&k.value))?;
    let mut key = String::new();
    for (mk, mv) in m {
        match mk.value.as_str() {
            "labelKey" => key = r.cx.string(mv, &r.f("uniqueNodeLabelStrategy.labelKey"))?,
            _ => return Err(r.cx.unknown(mk, &r.f(&k.value), &["labelKey"])),
        }
    }
    Ok(NodeStrategy::Unique { key })
}

/// `labelNodePrepareStrategy: {labelKey, labelValues}`.
fn label_strategy(r: &Resolve, k: &Spanned<String>, v: &SNode) -> Result<NodeStrategy, InputError> {
    let m = r.cx.map(v, &r.f(&k.value))?;
    let mut key = String::new();
    let mut values = vec![];
    for (mk, mv) in m {
        match mk.value.as_str() {
            "labelKey" => key = r.cx.string(mv, &r.f("labelNodePrepareStrategy.labelKey"))?,
            "labelValues" => {
                values =
                    r.cx.strings(mv, &r.f("labelNodePrepareStrategy.labelValues"))?
            }
            _ => {
                return Err(r
                    .cx
                    .unknown(mk, &r.f(&k.value), &["labelKey", "labelValues"]));
            }
        }
    }
    Ok(NodeStrategy::Label { key, values })
}

/// `nodeAllocatableStrategy: {nodeAllocatable, csiNodeAllocatable, migratedPlugins}`.
fn allocatable_strategy(
    r: &Resolve,
    k: &Spanned<String>,
    v: &SNode,
) -> Result<NodeStrategy, InputError> {
    let m = r.cx.map(v, &r.f(&k.value))?;
    let mut resources = BTreeMap::new();
    let mut csi = BTreeMap::new();
    let mut migrated_plugins = Vec::new();
    for (mk, mv) in m {
        match mk.value.as_str() {
            "nodeAllocatable" => {
                let field = r.f("nodeAllocatableStrategy.nodeAllocatable");
                for (rk, rv) in r.cx.map(mv, &field)? {
                    let rfield = format!("{field}.{}", rk.value);
                    let q = match &rv.value {
                        YNode::Str(s) => s.clone(),
                        YNode::Int(i) => i.to_string(),
                        YNode::Float(x) => x.to_string(),
                        other => {
                            return Err(r.err(
                                pos_of(rv),
                                &rfield,
                                format!("expected a quantity, found {}", other.kind()),
                            ));
                        }
                    };
                    if let Err(e) = tidegate_engine::api::Quantity::parse(&q) {
                        return Err(r.err(pos_of(rv), &rfield, e.to_string()));
                    }
                    resources.insert(rk.value.clone(), q);
                }
            }
            "csiNodeAllocatable" => {
                let field = r.f("nodeAllocatableStrategy.csiNodeAllocatable");
                for (driver, res) in r.cx.map(mv, &field)? {
                    csi.insert(driver.value.clone(), csi_count(r, &field, driver, res)?);
                }
            }
            "migratedPlugins" => {
                migrated_plugins =
                    r.cx.strings(mv, &r.f("nodeAllocatableStrategy.migratedPlugins"))?;
            }
            _ => {
                return Err(r.cx.unknown(
                    mk,
                    &r.f(&k.value),
                    &["nodeAllocatable", "csiNodeAllocatable", "migratedPlugins"],
                ));
            }
        }
    }
    Ok(NodeStrategy::Allocatable {
        resources,
        csi,
        migrated_plugins,
    })
}

/// One `csiNodeAllocatable` entry: `{count: N}` (a `VolumeNodeResources`; no count: none).
fn csi_count(
    r: &Resolve,
    field: &str,
    driver: &Spanned<String>,
    v: &SNode,
) -> Result<Option<i32>, InputError> {
    let f = format!("{field}.{}", driver.value);
    let mut count = None;
    for (k, cv) in r.cx.map(v, &f)? {
        match k.value.as_str() {
            "count" => match &cv.value {
                YNode::Int(i) => {
                    let c = i32::try_from(*i)
                        .map_err(|_| r.err(pos_of(cv), &format!("{f}.count"), "out of range"))?;
                    count = Some(c);
                }
                other => {
                    return Err(r.err(
                        pos_of(cv),
                        &format!("{f}.count"),
                        format!("expected an integer, found {}", other.kind()),
                    ));
                }
            },
            _ => return Err(r.cx.unknown(k, &f, &["count"])),
        }
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    //! After kubernetes/kubernetes test/integration/scheduler_perf/runners.go (v1.37.2):
    //! `NodeAllocatableStrategy.createCSINode` and `updateCSINode`.
    use super::*;
    use k8s_openapi::api::storage::v1 as storage;

    fn ebs(count: i32) -> BTreeMap<String, Option<i32>> {
        BTreeMap::from([("ebs.csi.aws.com".to_string(), Some(count))])
    }

    fn annotation(n: &storage::CSINode) -> Option<&str> {
        let a = n.metadata.annotations.as_ref()?;
        a.get("storage.alpha.kubernetes.io/migrated-plugins")
            .map(String::as_str)
    }

    #[test]
    fn a_new_csi_node_has_one_driver_per_entry_and_the_annotation() {
        let migrated = vec!["kubernetes.io/aws-ebs".to_string()];
        let n = prepare_csi_node(None, "node-1", &ebs(39), &migrated);
        assert_eq!(n.metadata.name.as_deref(), Some("node-1"));
        let d = &n.spec.drivers[0];
        assert_eq!(
            (d.name.as_str(), d.node_id.as_str()),
            ("ebs.csi.aws.com", "node-1")
        );
        assert_eq!(d.allocatable.as_ref().and_then(|a| a.count), Some(39));
        assert_eq!(annotation(&n), Some("kubernetes.io/aws-ebs"));
        // Without migratedPlugins the annotation is there, empty.
        let n = prepare_csi_node(None, "node-1", &ebs(39), &[]);
        assert_eq!(annotation(&n), Some(""));
    }

    #[test]
    fn an_existing_csi_node_keeps_its_drivers_and_gets_the_counts() {
        let first = prepare_csi_node(None, "node-1", &ebs(39), &[]);
        let mut more = ebs(20);
        more.insert("pd.csi.storage.gke.io".to_string(), Some(16));
        let n = prepare_csi_node(Some(first), "node-1", &more, &["x".to_string()]);
        let counts: Vec<(&str, Option<i32>)> = n
            .spec
            .drivers
            .iter()
            .map(|d| {
                (
                    d.name.as_str(),
                    d.allocatable.as_ref().and_then(|a| a.count),
                )
            })
            .collect();
        assert_eq!(
            counts,
            vec![
                ("ebs.csi.aws.com", Some(20)),
                ("pd.csi.storage.gke.io", Some(16))
            ]
        );
        assert_eq!(annotation(&n), Some("x"));
    }
}
