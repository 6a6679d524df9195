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

    pub(crate) fn run(&self, cx: &mut RunCx) -> Result<(), HarnessError> {
        let targets: Vec<String> = if self.namespaces.is_empty() {
            cx.pending_ns.keys().cloned().collect()
        } else {
            // Upstream's runBarrierOp: a namespace no op has created is an error.
            let known = cx.store.namespaces();
            if let Some(unknown) = self.namespaces.iter().find(|n| !known.contains(n)) {
                return Err(HarnessError::Run(format!(
                    "op {}: barrier: unknown namespace {unknown}",
                    cx.index
                )));
            }
            self.namespaces.clone()
        };
        let attempted = self.attempted;
        for ns in targets {
            let want = cx.pending_ns.get(&ns).copied().unwrap_or(0);
            let ok = cx
                .pace
                .wait_ns(cx.store, &ns, &self.label_selector, cx.opts.timeout, |s| {
                    s.bound + if attempted { s.attempted_unbound } else { 0 } >= want
                });
            if !ok {
                return Err(cx.timeout_error(&ns, want));
            }
            // A Scheduled barrier settles the namespace's count; an Attempted one
            // leaves it for a later Scheduled barrier (as upstream's runBarrierOp).
            if !attempted {
                cx.pending_ns.remove(&ns);
            }
        }
        Ok(())
    }
}
