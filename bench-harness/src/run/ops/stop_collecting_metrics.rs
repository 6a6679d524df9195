//! `stopCollectingMetrics`: closes the window `startCollectingMetrics` opened and adds its
//! data items.

use super::{Op, Resolve, RunCx};
use crate::error::{HarnessError, InputError};

#[derive(Clone, Debug, PartialEq)]
pub struct StopCollectingMetrics;

impl StopCollectingMetrics {
    pub const OPCODE: &'static str = "stopCollectingMetrics";
    pub const FIELDS: &'static [&'static str] = &["opcode"];

    pub(crate) fn resolve(_: &Resolve) -> Result<Op, InputError> {
        Ok(Op::StopCollectingMetrics(StopCollectingMetrics))
    }

    pub(crate) fn run(&self, cx: &mut RunCx) -> Result<(), HarnessError> {
        let w = cx.window.take().ok_or_else(|| {
            HarnessError::Run(format!(
                "op {}: missing startCollectingMetrics operation before stopping",
                cx.index
            ))
        })?;
        cx.close_window(w);
        Ok(())
    }
}
