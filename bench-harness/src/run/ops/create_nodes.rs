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
    /// `nodeAllocatableStrategy.nodeAllocatable`: these `status.allocatable` entries set on
    /// every node (the others kept, from capacity when the template gives no allocatable).
    /// Its `csiNodeAllocatable` (CSINode volume limits) is accepted and has no effect: only
    /// NodeVolumeLimits reads it, and volume plugins are out of scope.
    Allocatable { resources: BTreeMap<String, String> },
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
            cx.store
                .create_prepared_node(n, converted)
                .map_err(|e| e.into_input(&cx.cfg.path, &cx.field()))?;
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
            Some(NodeStrategy::Allocatable { resources }) => {
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
                r.cx.map(mv, &r.f("nodeAllocatableStrategy.csiNodeAllocatable"))?;
            }
            // The CSINode migration annotation: read only by the volume plugins.
            "migratedPlugins" => {
                r.cx.seq(mv, &r.f("nodeAllocatableStrategy.migratedPlugins"))?;
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
    Ok(NodeStrategy::Allocatable { resources })
}
