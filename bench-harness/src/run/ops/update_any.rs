//! `updateAny`: `count` updates of pods, nodes or objects of the store's registered kinds
//! rendered from a template (optionally at `updatePerSecond`); with `subresources: [resize]`,
//! in-place resizes of pods' resources. As upstream's `updateAny.update`, each update is a PUT
//! of the object and then a PUT of its status with the same object: a kind without a status
//! subresource fails there, as it does against kube's API server.

use super::{Op, Prepared, Resolve, RunCx};
use crate::cluster::objects::{self, AnyObject};
use crate::cluster::store::{StoreError, StoredObject, Subresource};
use crate::error::{HarnessError, InputError};
use crate::run::pace::ticker_due;
use crate::workload::manifest::{self, ObjectTemplate};
use k8s_openapi::api::core::v1 as core;
use std::path::PathBuf;

#[derive(Clone, Debug, PartialEq)]
pub struct UpdateAny {
    pub template: PathBuf,
    pub namespace: Option<String>,
    pub count: usize,
    pub per_second: f64,
    pub template_params: serde_json::Map<String, serde_json::Value>,
    /// `subresources: [resize]`: an in-place resize of the pods' container resources.
    pub resize: bool,
}

impl UpdateAny {
    pub const OPCODE: &'static str = "updateAny";
    pub const FIELDS: &'static [&'static str] = &[
        "opcode",
        "templatePath",
        "namespace",
        "count",
        "countParam",
        "updatePerSecond",
        "subresources",
        "templateParams",
    ];

    pub(crate) fn resolve(r: &Resolve) -> Result<Op, InputError> {
        let subresources = r.strings("subresources")?;
        let resize = match subresources.as_slice() {
            [] => false,
            [one] if one == "resize" => true,
            other => {
                r.mark_all_params();
                return Ok(r.unsupported(format!(
                    "updateAny.subresources {other:?} (only [resize] is supported)"
                )));
            }
        };
        let template_params = r.template_params()?;
        Ok(Op::UpdateAny(UpdateAny {
            template: r.path("templatePath")?.ok_or_else(|| {
                r.err(r.raw.pos, &r.f("templatePath"), "templatePath is required")
            })?,
            namespace: r.string("namespace")?,
            count: r.count(Some(1))?,
            per_second: r.rate("updatePerSecond")?,
            template_params,
            resize,
        }))
    }

    /// Renders the template once: Pod, Node and registered kinds' updates are supported.
    pub(crate) fn plan(
        &self,
        i: usize,
        prepared: &mut Prepared,
        unsupported: &mut Option<String>,
    ) -> Result<(), InputError> {
        let t = ObjectTemplate::load(&self.template)?;
        let r = t.render(0, 1, &self.template_params)?;
        match r.kind() {
            "Pod" => {
                let _: core::Pod = r.typed("Pod")?;
            }
            "Node" => {
                let n: core::Node = r.typed("Node")?;
                manifest::node(Some(&r), &n)?;
            }
            other => {
                let fixed = || {
                    format!(
                        "updateAny of kind {other:?} (Pod, Node and the kinds createAny stores \
                         can be updated)"
                    )
                };
                let why = match objects::prepare(&r)? {
                    Ok(AnyObject::Object(_)) => None,
                    Ok(_) => Some(fixed()),
                    Err(_) if objects::unsupported_kind(other).is_some() => Some(fixed()),
                    Err(why) => Some(format!("updateAny: {why}")),
                };
                if let Some(why) = why {
                    unsupported.get_or_insert(why);
                }
            }
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
        let start = cx.pace.now();
        for j in 0..self.count {
            // Upstream's updateAny.run: at a rate, one update per tick of a ticker, the first
            // one period after the start; at rate 0, all at once.
            if self.per_second > 0.0 {
                cx.pace.sleep_until(ticker_due(start, self.per_second, j));
            }
            self.update(cx, t, j)?;
        }
        Ok(())
    }

    /// The PUT of an object of a registered kind and then of its status (upstream's
    /// `Update` and `UpdateStatus` with the same object).
    fn update_object(&self, cx: &RunCx, o: &StoredObject) -> Result<(), StoreError> {
        let ns = self
            .namespace
            .clone()
            .or_else(|| o.obj.meta().namespace.clone())
            .unwrap_or_else(|| "default".into());
        cx.store.update_object(o, &ns, Subresource::Main)?;
        cx.store.update_object(o, &ns, Subresource::Status)
    }

    /// The `j`-th update.
    fn update(&self, cx: &RunCx, t: &ObjectTemplate, j: usize) -> Result<(), HarnessError> {
        let store = cx.store;
        let r = t.render(j, self.count, &self.template_params)?;
        let result = if r.kind() == "Node" {
            let n: core::Node = r.typed("Node")?;
            let converted = manifest::node(Some(&r), &n)?;
            store.update_node(n, converted)
        } else if r.kind() != "Pod" {
            let o = match objects::prepare(&r)? {
                Ok(AnyObject::Object(o)) => o,
                Ok(other) => {
                    return Err(HarnessError::Unsupported(format!(
                        "updateAny of kind {:?}",
                        other.kind()
                    )));
                }
                Err(why) => return Err(HarnessError::Unsupported(why)),
            };
            self.update_object(cx, &o)
        } else {
            let pod: core::Pod = r.typed("Pod")?;
            let ns = self
                .namespace
                .clone()
                .or_else(|| pod.metadata.namespace.clone())
                .unwrap_or_else(|| "default".into());
            if self.resize {
                store.resize_pod(&pod, &ns)
            } else {
                store.update_pod(&pod, &ns)
            }
        };
        result.map_err(|e| match e {
            // The first rejected field, where the template writes it.
            StoreError::InvalidFields { kind, name, errs } if !errs.is_empty() => {
                let first = &errs[0];
                let mut msg = first.to_string();
                msg.drain(..first.field.len() + 2);
                msg.push_str(&format!(" (updating {kind} {name:?}"));
                if errs.len() > 1 {
                    msg.push_str(&format!("; {} more errors", errs.len() - 1));
                }
                msg.push(')');
                r.error_at(&first.field, msg)
            }
            e => InputError::new(
                &t.path,
                Some(manifest::object_pos(&r)),
                format!("updateAny[{j}]"),
                e.to_string(),
            ),
        })?;
        Ok(())
    }
}
