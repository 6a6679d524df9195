//! `sleep`: waits for a duration (on the workload's clock, real or virtual).

use super::{Op, Resolve, RunCx};
use crate::error::{HarnessError, InputError};
use std::time::Duration;

#[derive(Clone, Debug, PartialEq)]
pub struct Sleep {
    pub duration: Duration,
}

impl Sleep {
    pub const OPCODE: &'static str = "sleep";
    pub const FIELDS: &'static [&'static str] = &["opcode", "duration", "durationParam"];

    pub(crate) fn resolve(r: &Resolve) -> Result<Op, InputError> {
        let duration = r.duration()?.ok_or_else(|| {
            r.err(
                r.raw.pos,
                &r.f("duration"),
                "exactly one of duration and durationParam is required",
            )
        })?;
        Ok(Op::Sleep(Sleep { duration }))
    }

    pub(crate) fn run(&self, cx: &mut RunCx) -> Result<(), HarnessError> {
        let until = cx.pace.now() + self.duration;
        cx.pace.sleep_until(until);
        // Time passed: the executor's view has caught up (see `wait`).
        cx.view.catch_up(cx.store, None);
        Ok(())
    }
}
