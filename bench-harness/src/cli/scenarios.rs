//! `tidegate kube-scenarios`: random scheduler_perf scenarios for the differential oracle
//! (see `tidegate_bench::oracle::scenarios`).

use std::path::PathBuf;
use std::process::ExitCode;
use tidegate_bench::error::HarnessError;
use tidegate_bench::oracle::scenarios::{self, Mix};

#[derive(clap::Args)]
pub(crate) struct ScenariosArgs {
    /// The seed: the same seed, count and batch size write the same files, byte for byte.
    ///
    /// Example: --seed 1
    #[arg(long)]
    pub seed: u64,
    /// How many scenarios (isolated little clusters), over all batches.
    ///
    /// Example: --scenarios 300
    #[arg(long)]
    pub scenarios: usize,
    /// Scenarios per batch: one test case `Random<seed>Batch<b>` each, one API server and
    /// scheduler in kube.
    ///
    /// Example: --per-batch 100
    #[arg(long, default_value_t = scenarios::DEFAULT_PER_BATCH, value_parser = at_least_one)]
    pub per_batch: usize,
    /// The folder to write `random-config.yaml` and `templates/` into (created if missing);
    /// run kube's scheduler_perf from it.
    ///
    /// Example: --out /tmp/random
    #[arg(long)]
    pub out: PathBuf,
}

fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

pub(crate) fn scenarios(a: ScenariosArgs) -> Result<ExitCode, HarnessError> {
    let files = scenarios::generate(a.seed, a.scenarios, a.per_batch, &Mix::DEFAULT);
    for f in &files {
        let path = a.out.join(&f.path);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| HarnessError::Run(format!("{}: {e}", dir.display())))?;
        }
        tidegate_bench::output::files::write_file(&path, f.contents.as_bytes())?;
    }
    let batches = a.scenarios.div_ceil(a.per_batch);
    outln!(
        "{}: {} scenarios in {} batches, {} templates",
        a.out.join(scenarios::CONFIG_FILE).display(),
        a.scenarios,
        batches,
        files.len() - 1
    );
    for name in scenarios::test_cases(a.seed, a.scenarios, a.per_batch, &Mix::DEFAULT) {
        outln!("  {name}");
    }
    Ok(ExitCode::SUCCESS)
}
