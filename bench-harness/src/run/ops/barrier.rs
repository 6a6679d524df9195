//! `barrier`: waits until the pods created so far without waiting (or those of the named
//! namespaces) are scheduled, or with `stageRequirement: Attempted`, attempted.

use super::{Op, Resolve, RunCx};
use crate::error::{HarnessError, InputError};
use crate::workload::yaml::pos_of;
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq)]
pub struct Barrier {
    pub namespaces: Vec<String>,
    pub label_selector: BTreeMap<String, String>,
    pub attempted: bool,
}

impl Barrier {
    pub const OPCODE: &'static str = "barrier";
    pub const FIELDS: &'static [&'static str] =
        &["opcode", "namespaces", "labelSelector", "stageRequirement"];

    pub(crate) fn resolve(r: &Resolve) -> Result<Op, InputError> {
        let attempted = match r.string("stageRequirement")?.as_deref() {
            None | Some("Scheduled") => false,
            Some("Attempted") => true,
            Some(other) => {
                let (_, v) = r.get("stageRequirement").expect("present");
                return Err(r.err(
                    pos_of(v),
                    &r.f("stageRequirement"),
                    format!("unknown stage requirement {other:?} (known: Scheduled, Attempted)"),
                ));
            }
        };
        Ok(Op::Barrier(Barrier {
            namespaces: r.strings("namespaces")?,
            label_selector: r.selector("labelSelector")?,
            attempted,
        }))
    }

    /// Upstream's runBarrierOp: every named namespace must be registered (a createPods,
    /// createNamespaces, createAny or updateAny into it since the last `Scheduled` barrier that
    /// covered it); no names means every registered namespace. For each, in name order, it
    /// waits until the namespace's pods matching `labelSelector` that are scheduled (nodeName
    /// set; with `Attempted`, also those with a PodScheduled condition) number at least the
    /// pods created there without waiting since then — pods created by any op count, pods
    /// deleted meanwhile do not (see `wait` for what the first check reads). A `Scheduled` barrier then unregisters the namespaces it
    /// covered (all of them when none are named); an `Attempted` one leaves them.
    pub(crate) fn run(&self, cx: &mut RunCx) -> Result<(), HarnessError> {
        if let Some(unknown) = self
            .namespaces
            .iter()
            .find(|n| !cx.known_ns.contains_key(*n))
        {
            return Err(HarnessError::Run(format!(
                "op {}: barrier: unknown namespace {unknown}",
                cx.index
            )));
        }
        let targets: Vec<String> = if self.namespaces.is_empty() {
            cx.known_ns.keys().cloned().collect()
        } else {
            self.namespaces.clone()
        };
        for ns in &targets {
            let want = cx.known_ns.get(ns).copied().unwrap_or(0);
            cx.wait_pods(ns, &self.label_selector, want, self.attempted)?;
        }
        if !self.attempted {
            if self.namespaces.is_empty() {
                cx.known_ns.clear();
            } else {
                for ns in &targets {
                    cx.known_ns.remove(ns);
                }
            }
        }
        Ok(())
    }
}
