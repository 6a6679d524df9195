//! `--flamegraph`: the CPU samples of every workload's collection windows, merged into one
//! flamegraph SVG (frames folded by [`tidegate_bench::run::flame`]), and where it went.

use super::write_file;
use tidegate_bench::error::HarnessError;
use tidegate_bench::run::{self, Outcome, WorkloadReport};

/// Merges the workloads' profiles (taking them out of `reports`), writes the SVG and says on
/// stderr where it went.
pub(crate) fn write(
    file: &std::path::Path,
    reports: &mut [WorkloadReport],
    info: &tidegate_bench::output::report::RunInfo,
) -> Result<(), HarnessError> {
    let mut merged: Option<run::Profile> = None;
    let mut names = Vec::new();
    for r in reports.iter_mut() {
        if let Outcome::Ran(res) = &mut r.outcome
            && let Some(p) = res.profile.take()
        {
            names.push(format!("{}/{}", r.test_case, r.workload));
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
    let samples = profile.samples();
    let mut svg = Vec::new();
    if samples == 0 {
        // Too short to catch a sample: still a valid SVG, saying so.
        svg.extend_from_slice(
            br#"<?xml version="1.0" standalone="no"?><svg xmlns="http://www.w3.org/2000/svg" width="600" height="40"><text x="10" y="25">tidegate: no CPU samples in the measured phases (run longer)</text></svg>"#,
        );
    } else {
        let title = match names.as_slice() {
            [one] => format!("tidegate {one}: measured phases"),
            many => format!("tidegate, {} workloads: measured phases", many.len()),
        };
        profile
            .write_svg(&title, info.comment().trim_start_matches("# "), &mut svg)
            .map_err(|e| HarnessError::Run(format!("{}: {e}", file.display())))?;
    }
    write_file(file, &svg)?;
    eprintln!(
        "flamegraph: {} ({samples} CPU samples of the measured phases of {} workload{})",
        file.display(),
        names.len(),
        if names.len() == 1 { "" } else { "s" }
    );
    Ok(())
}
