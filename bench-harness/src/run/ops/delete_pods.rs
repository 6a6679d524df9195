//! `deletePods`: deletes the pods of a namespace (matching a label selector), all at once
//! or at `deletePodsPerSecond`, in the background with `skipWaitToCompletion`.

use super::{Op, Resolve, RunCx};
use crate::error::{HarnessError, InputError};
use crate::run::pace::ticker_due;
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq)]
pub struct DeletePods {
    pub namespace: String,
    pub label_selector: BTreeMap<String, String>,
    pub per_second: f64,
    pub skip_wait: bool,
}

impl DeletePods {
    pub const OPCODE: &'static str = "deletePods";
    pub const FIELDS: &'static [&'static str] = &[
        "opcode",
        "namespace",
        "labelSelector",
        "skipWaitToCompletion",
        "deletePodsPerSecond",
    ];

    pub(crate) fn resolve(r: &Resolve) -> Result<Op, InputError> {
        Ok(Op::DeletePods(DeletePods {
            namespace: r
                .string("namespace")?
                .ok_or_else(|| r.err(r.raw.pos, &r.f("namespace"), "namespace is required"))?,
            label_selector: r.selector("labelSelector")?,
            per_second: r.rate("deletePodsPerSecond")?,
            skip_wait: r.boolean("skipWaitToCompletion")?,
        }))
    }

    pub(crate) fn run(&self, cx: &mut RunCx) -> Result<(), HarnessError> {
        let store = cx.store;
        let keys = store.list_pods(&self.namespace, &self.label_selector);
        let rate = self.per_second;
        let start = cx.pace.now();
        // Upstream's runDeletePodsOp: at a rate, the pods listed at the start are deleted one
        // per tick of a ticker (the first one period after the start); at rate 0, all at once
        // (DeleteCollection). Nothing waits for the pods to be gone.
        let due = move |n: usize| {
            if rate > 0.0 {
                ticker_due(start, rate, n)
            } else {
                start
            }
        };
        if self.skip_wait {
            let st = store.clone();
            let mut n = 0;
            cx.pace.spawn(
                due(0),
                Box::new(move |_| {
                    st.delete_pod(keys.get(n)?);
                    n += 1;
                    (n < keys.len()).then(|| due(n))
                }),
            );
        } else {
            for (n, k) in keys.iter().enumerate() {
                cx.pace.sleep_until(due(n));
                store.delete_pod(k);
            }
        }
        Ok(())
    }
}
