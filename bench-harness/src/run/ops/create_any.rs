//! `createAny`: `count` objects of any supported kind (Services, PVCs, workloads' owners, …)
//! rendered from a template.

use super::{Op, Prepared, Resolve, RunCx};
use crate::cluster::objects;
use crate::error::{HarnessError, InputError};
use crate::workload::manifest::{self, ObjectTemplate};
use std::path::PathBuf;

/// `createAny`: `count` objects of any supported kind from a template.
#[derive(Clone, Debug, PartialEq)]
pub struct CreateAny {
    pub template: PathBuf,
    pub namespace: Option<String>,
    pub count: usize,
    pub template_params: serde_json::Map<String, serde_json::Value>,
}

impl CreateAny {
    pub const OPCODE: &'static str = "createAny";
    pub const FIELDS: &'static [&'static str] = &[
        "opcode",
        "templatePath",
        "namespace",
        "count",
        "countParam",
        "templateParams",
    ];

    pub(crate) fn resolve(r: &Resolve) -> Result<Op, InputError> {
        let template_params = r.template_params()?;
        Ok(Op::CreateAny(CreateAny {
            template: r.path("templatePath")?.ok_or_else(|| {
                r.err(r.raw.pos, &r.f("templatePath"), "templatePath is required")
            })?,
            namespace: r.string("namespace")?,
            count: r.count(Some(1))?,
            template_params,
        }))
    }

    /// Renders the template once and checks that its kind is supported.
    pub(crate) fn plan(
        &self,
        i: usize,
        prepared: &mut Prepared,
        unsupported: &mut Option<String>,
    ) -> Result<(), InputError> {
        let t = ObjectTemplate::load(&self.template)?;
        let r = t.render(0, 1, &self.template_params)?;
        if let Err(why) = objects::prepare(&r)? {
            unsupported.get_or_insert_with(|| format!("createAny: {why}"));
        }
        prepared.templates.insert(i, t);
        Ok(())
    }

    pub(crate) fn run(&self, cx: &mut RunCx) -> Result<(), HarnessError> {
        // Upstream's runDefaultOp: the op's namespace, if it names one, is created and
        // registered first (createNamespaceIfNotPresent).
        if let Some(ns) = &self.namespace {
            cx.register_namespace(ns)?;
        }
        let prepared = cx.prepared;
        let t = prepared.templates.get(&cx.index).expect("planned");
        for j in 0..self.count {
            let r = t.render(j, self.count, &self.template_params)?;
            let obj = match objects::prepare(&r)? {
                Ok(o) => o,
                Err(why) => return Err(HarnessError::Unsupported(why)),
            };
            let ns = self
                .namespace
                .clone()
                .or_else(|| {
                    r.json
                        .pointer("/metadata/namespace")
                        .and_then(|v| v.as_str())
                        .map(str::to_string)
                })
                .unwrap_or_else(|| "default".into());
            cx.store.create_any(&obj, &ns).map_err(|e| {
                InputError::new(
                    &t.path,
                    Some(manifest::object_pos(&r)),
                    format!("createAny[{j}]"),
                    e.to_string(),
                )
            })?;
        }
        Ok(())
    }
}
