//! `startCollectingMetrics`: opens a collection window over the pods of `namespaces` that
//! match `labelSelector`, reported under `name`, until `stopCollectingMetrics`.

use super::{Op, Resolve, RunCx};
use crate::error::{HarnessError, InputError};
use crate::workload::yaml::pos_of;
use std::collections::BTreeMap;

/// Collectors `startCollectingMetrics.collectors` may name (tidegate always runs them all).
const KNOWN_COLLECTORS: &[&str] = &[
    "Throughput",
    "Metrics",
    "Memory",
    "SchedulingDuration",
    "PodGroupLatency",
];

#[derive(Clone, Debug, PartialEq)]
pub struct StartCollectingMetrics {
    pub name: String,
    pub namespaces: Vec<String>,
    pub label_selector: BTreeMap<String, String>,
}

impl StartCollectingMetrics {
    pub const OPCODE: &'static str = "startCollectingMetrics";
    pub const FIELDS: &'static [&'static str] = &[
        "opcode",
        "name",
        "namespaces",
        "labelSelector",
        "collectors",
    ];

    pub(crate) fn resolve(r: &Resolve) -> Result<Op, InputError> {
        let namespaces = r.strings("namespaces")?;
        if namespaces.is_empty() {
            return Err(r.err(
                r.raw.pos,
                &r.f("namespaces"),
                "namespaces is required (the namespaces whose pods are measured)",
            ));
        }
        if let Some((_, v)) = r.get("collectors") {
            for c in r.cx.strings(v, &r.f("collectors"))? {
                if !KNOWN_COLLECTORS.contains(&c.as_str()) {
                    return Err(r.err(
                        pos_of(v),
                        &r.f("collectors"),
                        format!(
                            "unknown collector {c:?} (known: {})",
                            KNOWN_COLLECTORS.join(", ")
                        ),
                    ));
                }
            }
        }
        Ok(Op::StartCollectingMetrics(StartCollectingMetrics {
            name: r.string("name")?.unwrap_or_default(),
            namespaces,
            label_selector: r.selector("labelSelector")?,
        }))
    }

    pub(crate) fn run(&self, cx: &mut RunCx) -> Result<(), HarnessError> {
        cx.open_window(&self.name, &self.namespaces, &self.label_selector)
    }
}
