//! The `tidegate` subcommands, one file each: [`run`] (and [`serve`], a run with a
//! `/metrics` endpoint; [`flamegraph`] writes its `--flamegraph`), [`list`], [`compare`],
//! [`report`], [`replay`], [`outcomes`] and [`scenarios`] (`kube-scenarios`).

pub(crate) mod compare;
pub(crate) mod flamegraph;
pub(crate) mod list;
pub(crate) mod outcomes;
pub(crate) mod queue_dump;
pub(crate) mod replay;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod scenarios;
pub(crate) mod serve;

use tidegate_bench::error::HarnessError;
use tidegate_bench::output::report as items;

/// Writes `contents` to `file` whole or not at all.
pub(crate) fn write_file(file: &std::path::Path, contents: &[u8]) -> Result<(), HarnessError> {
    let dir = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let name = file
        .file_name()
        .and_then(|s| s.to_str())
        .ok_or_else(|| HarnessError::Run(format!("{}: not a file name", file.display())))?;
    items::write_atomic(dir, name, contents)
        .map(|_| ())
        .map_err(|e| HarnessError::Run(format!("{}: {e}", file.display())))
}
