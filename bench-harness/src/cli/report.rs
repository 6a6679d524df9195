//! `tidegate report`: one self-contained HTML page from results files.

use std::path::PathBuf;
use std::process::ExitCode;
use tidegate_bench::error::HarnessError;
use tidegate_bench::output::files::write_file;

#[derive(clap::Args)]
pub(crate) struct ReportArgs {
    /// Results files (data items JSON written by `run --data-items-dir`).
    ///
    /// Example: out/BenchmarkPerfScheduling_benchmark_misc_2026-11-23T22:00:00Z.json
    #[arg(required = true)]
    pub results: Vec<PathBuf>,
    /// The HTML file to write.
    ///
    /// Example: -o report.html
    #[arg(short, long)]
    pub output: PathBuf,
}

pub(crate) fn report(a: ReportArgs) -> Result<ExitCode, HarnessError> {
    tidegate_bench::output::html::report(&a.results)
        .map_err(HarnessError::Input)
        .and_then(|html| write_file(&a.output, html.as_bytes()))
        .map(|()| ExitCode::SUCCESS)
}
