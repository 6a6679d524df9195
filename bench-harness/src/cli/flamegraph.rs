//! `--flamegraph`: the CPU samples of every workload's collection windows, merged into one
//! flamegraph SVG.

use super::write_file;
use tidegate_bench::error::HarnessError;
use tidegate_bench::runner::{self, Outcome, WorkloadReport};

/// Merges the workloads' profiles (taking them out of `reports`) and writes the SVG.
pub(crate) fn write(
    file: &std::path::Path,
    reports: &mut [WorkloadReport],
) -> Result<(), HarnessError> {
    let mut merged: Option<runner::Profile> = None;
    for r in reports.iter_mut() {
        if let Outcome::Ran(res) = &mut r.outcome
            && let Some(p) = res.profile.take()
        {
            match &mut merged {
                Some(m) => m.merge(p),
                None => merged = Some(p),
            }
        }
    }
    let Some(profile) = merged else {
        return Err(HarnessError::Run(format!(
            "{}: no CPU samples (no collection window ran)",
            file.display()
        )));
    };
    let mut svg = Vec::new();
    if profile.0.data.is_empty() {
        // Too short to catch a sample: still a valid SVG, saying so.
        svg.extend_from_slice(
            br#"<?xml version="1.0" standalone="no"?><svg xmlns="http://www.w3.org/2000/svg" width="600" height="40"><text x="10" y="25">tidegate: no CPU samples in the measured phases (run longer)</text></svg>"#,
        );
    } else {
        profile
            .0
            .flamegraph(&mut svg)
            .map_err(|e| HarnessError::Run(format!("{}: {e}", file.display())))?;
    }
    write_file(file, &svg)
}
