//! `createNamespaces`: `count` namespaces `<prefix>-<i>`, from a template or empty.

use super::{Op, Prepared, Resolve, RunCx};
use crate::cluster::store::StoreError;
use crate::error::{HarnessError, InputError};
use crate::workload::manifest::ObjectTemplate;
use k8s_openapi::api::core::v1 as core;
use std::path::PathBuf;

#[derive(Clone, Debug, PartialEq)]
pub struct CreateNamespaces {
    pub prefix: String,
    pub count: usize,
    pub template: Option<PathBuf>,
}

impl CreateNamespaces {
    pub const OPCODE: &'static str = "createNamespaces";
    pub const FIELDS: &'static [&'static str] = &[
        "opcode",
        "prefix",
        "count",
        "countParam",
        "namespaceTemplatePath",
    ];

    pub(crate) fn resolve(r: &Resolve) -> Result<Op, InputError> {
        Ok(Op::CreateNamespaces(CreateNamespaces {
            prefix: r
                .string("prefix")?
                .ok_or_else(|| r.err(r.raw.pos, &r.f("prefix"), "prefix is required"))?,
            count: r.count(None)?,
            template: r.path("namespaceTemplatePath")?,
        }))
    }

    /// Renders the template once and checks the namespace it makes.
    pub(crate) fn plan(&self, i: usize, prepared: &mut Prepared) -> Result<(), InputError> {
        if let Some(path) = &self.template {
            let t = ObjectTemplate::load(path)?;
            let r = t.render(0, 1, &Default::default())?;
            let _: core::Namespace = r.typed("Namespace")?;
            prepared.templates.insert(i, t);
        }
        Ok(())
    }

    pub(crate) fn run(&self, cx: &mut RunCx) -> Result<(), HarnessError> {
        for j in 0..self.count {
            let mut ns: core::Namespace =
                match (&self.template, cx.prepared.templates.get(&cx.index)) {
                    (Some(_), Some(t)) => t
                        .render(j, self.count, &Default::default())?
                        .typed("Namespace")?,
                    _ => core::Namespace::default(),
                };
            let name = format!("{}-{j}", self.prefix);
            ns.metadata.name = Some(name.clone());
            // Upstream's namespacePreparer.prepare: a namespace that exists already is fine.
            match cx.store.create_namespace(ns) {
                Ok(_) | Err(StoreError::AlreadyExists { .. }) => {}
                Err(e) => return Err(e.into_input(&cx.cfg.path, &cx.field()).into()),
            }
            // Registered for barriers (upstream's runCreateNamespaceOp).
            cx.known_ns.entry(name).or_insert(0);
        }
        Ok(())
    }
}
