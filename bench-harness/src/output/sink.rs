//! Everything `tidegate run` prints and writes, for any caller of the library: a [`Sink`]
//! takes a run's reports as they come and prints the results table ([`super::table`]) and
//! writes the files ([`super::files`]) its [`OutputOptions`] name.
//!
//! Protocol (what `run::run_config_to` does): [`Sink::begin`] once the selection is known,
//! then [`Sink::report`] with every report so far, first with none (the input is good: the
//! header goes out) and then as each workload ends (its row goes out after its data items
//! are on disk, so a run stopped by a signal keeps everything finished), then
//! [`Sink::finish`] with all of them: the digest and peak RSS, the other files, the
//! failures on the error stream, and the exit status `tidegate run` gives
//! ([`Sink::exit_status`]).

use crate::error::HarnessError;
use crate::output::files;
use crate::output::report::{self, RunInfo};
use crate::output::results::{Outcome, WorkloadReport};
use crate::output::table;
use std::io::Write;
use std::path::PathBuf;

/// What to print and which files to write (each `tidegate run` flag of the same name).
#[derive(Clone, Debug, Default)]
pub struct OutputOptions {
    /// Print the results table (stdout: a row as each workload ends, the placements digest,
    /// the peak RSS, where the data items went) and the run's failures (stderr: thresholds
    /// not met, failed workloads, a signal's stop, where the flamegraph went).
    pub print: bool,
    /// The perf-dash data-items file goes into this folder (`--data-items-dir`).
    pub data_items_dir: Option<PathBuf>,
    /// One JSON line per bound pod (`--placements`).
    pub placements: Option<PathBuf>,
    /// One JSON line per pod at the end of each workload (`--dump-pods`).
    pub dump_pods: Option<PathBuf>,
    /// Every workload's final metrics, Prometheus text format (`--prometheus`).
    pub prometheus: Option<PathBuf>,
    /// The measured phases' CPU samples as a flamegraph SVG (`--flamegraph`).
    pub flamegraph: Option<PathBuf>,
}

/// Prints and writes one run's output (see the module doc for the order of calls).
pub struct Sink<'w> {
    opts: OutputOptions,
    out: Box<dyn Write + 'w>,
    err: Box<dyn Write + 'w>,
    topic: String,
    /// When the run started (Unix seconds): the data-items file's name.
    started: u64,
    info: Option<RunInfo>,
    /// The workload column's width.
    width: usize,
    /// How many rows are out.
    printed: usize,
    status: u8,
}

impl Sink<'static> {
    /// A sink printing to the process's stdout and stderr.
    pub fn stdio(opts: OutputOptions) -> Sink<'static> {
        Sink::new(
            opts,
            Box::new(std::io::stdout()),
            Box::new(std::io::stderr()),
        )
    }
}

impl<'w> Sink<'w> {
    /// A sink printing to `out` (the table) and `err` (failures and notes).
    pub fn new(opts: OutputOptions, out: Box<dyn Write + 'w>, err: Box<dyn Write + 'w>) -> Self {
        Sink {
            opts,
            out,
            err,
            topic: String::new(),
            started: 0,
            info: None,
            width: table::name_width(std::iter::empty()),
            printed: 0,
            status: 0,
        }
    }

    /// What this sink prints and writes.
    pub fn options(&self) -> &OutputOptions {
        &self.opts
    }

    /// The run starts: its config's `topic` (for the data-items file's name), the workload
    /// column's `width` ([`table::name_width`] of the selected names), its provenance.
    pub fn begin(&mut self, topic: &str, width: usize, info: RunInfo) {
        self.topic = topic.to_string();
        self.started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        self.width = width;
        self.info = Some(info);
        self.printed = 0;
    }

    fn info(&self) -> RunInfo {
        self.info
            .clone()
            .unwrap_or_else(|| RunInfo::here(None, 0, "real"))
    }

    /// The reports so far: none yet prints the header; otherwise the data items are
    /// rewritten, then the new rows go out.
    pub fn report(&mut self, rs: &[WorkloadReport]) -> Result<(), HarnessError> {
        if rs.is_empty() {
            if self.opts.print {
                table::write_header(&mut self.out, self.width);
            }
            return Ok(());
        }
        if let Some(dir) = &self.opts.data_items_dir {
            files::write_data_items(dir, &self.topic, rs, self.started, &self.info())?;
        }
        if self.opts.print {
            for r in &rs[self.printed.min(rs.len())..] {
                table::write_row(&mut self.out, r, self.width);
            }
        }
        self.printed = rs.len();
        Ok(())
    }

    /// The run ended with `reports` (the flamegraph takes their CPU samples out): prints
    /// the digest and the peak RSS, writes the other files, prints the failures, and sets
    /// the exit status.
    pub fn finish(&mut self, reports: &mut [WorkloadReport]) -> Result<(), HarnessError> {
        let info = self.info();
        let placements = files::placements(reports);
        // A shard whose share is empty still leaves its file: `tidegate merge` counts it.
        if reports.is_empty()
            && let Some(dir) = &self.opts.data_items_dir
        {
            files::write_data_items(dir, &self.topic, reports, self.started, &info)?;
        }
        if self.opts.print {
            table::write_digest(&mut self.out, reports, &placements);
            table::write_peak_rss(&mut self.out, reports);
            if let Some(dir) = &self.opts.data_items_dir {
                let name = report::file_name(&self.topic, self.started);
                let _ = writeln!(self.out, "data items: {}", dir.join(name).display());
            }
        }
        if let Some(file) = &self.opts.placements {
            files::write_placements(file, &placements, &info)?;
        }
        if let Some(file) = &self.opts.dump_pods {
            files::write_dump_pods(file, reports, &info)?;
        }
        if let Some(file) = &self.opts.flamegraph {
            let mut quiet = std::io::sink();
            let err: &mut dyn Write = if self.opts.print {
                &mut self.err
            } else {
                &mut quiet
            };
            files::write_flamegraph(file, reports, &info, err)?;
        }
        if let Some(file) = &self.opts.prometheus {
            files::write_prometheus(file, reports, &info)?;
        }
        let failed = self.write_failures(reports);
        self.status = match crate::interrupt::requested() {
            // The shell's convention: 128 + the signal (130 for SIGINT, 143 for SIGTERM).
            Some(sig) => (128 + sig) as u8,
            None => u8::from(failed),
        };
        Ok(())
    }

    /// Thresholds not met, failed workloads and a signal's stop, on the error stream.
    /// Returns whether anything failed.
    fn write_failures(&mut self, reports: &[WorkloadReport]) -> bool {
        let mut failed = false;
        let mut say = |line: String| {
            failed = true;
            if self.opts.print {
                let _ = writeln!(self.err, "{line}");
            }
        };
        for r in reports {
            if let Outcome::Ran(res) = &r.outcome {
                for f in &res.threshold_failures {
                    say(format!("threshold: {}", f.message));
                }
            }
        }
        for r in reports {
            if let Outcome::Failed(why) = &r.outcome {
                say(format!("failed: {}/{}: {why}", r.test_case, r.workload));
            }
        }
        if let Some(sig) = crate::interrupt::requested()
            && self.opts.print
        {
            let _ = writeln!(self.err, "{}", stop_message(sig, reports));
        }
        failed
    }

    /// The exit status `tidegate run` gives for the run [`Sink::finish`] saw: 0; 1 when a
    /// threshold was not met or a workload failed; 128 + the signal that stopped the run.
    pub fn exit_status(&self) -> u8 {
        self.status
    }
}

/// `tidegate: stopped by SIGINT: …`: what finished and was written.
fn stop_message(sig: i32, reports: &[WorkloadReport]) -> String {
    let interrupted = reports.last().is_some_and(
        |r| matches!(&r.outcome, Outcome::Failed(m) if crate::interrupt::is_interruption(m)),
    );
    format!(
        "tidegate: stopped by {}: {} workload(s) finished and written, {}",
        crate::interrupt::signal_name(sig),
        reports
            .iter()
            .filter(|r| !matches!(r.outcome, Outcome::Failed(_)))
            .count(),
        if interrupted {
            "the interrupted one marked FAILED"
        } else {
            "the signal came between two workloads, and no other one started"
        }
    )
}
