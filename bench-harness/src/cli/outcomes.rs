//! `tidegate outcomes`: the kube differential's outcome check (see
//! `tidegate_bench::oracle::outcome`): tidegate runs each workload kube ran and the two
//! outcomes are compared.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tidegate_bench::error::HarnessError;
use tidegate_bench::oracle::outcome::{self, Verdict};
use tidegate_bench::run::outcome::OutcomeLog;
use tidegate_bench::run::{self, RunOptions};
use tidegate_bench::workload;

#[derive(clap::Args)]
pub(crate) struct OutcomesArgs {
    /// kube's runs, one a line: `CONFIG<TAB>TestCase/Workload<TAB>RECORD` (the workload file
    /// kube ran, the workload, and the `.jsonl` record kube-reference's `-record` wrote for
    /// it). `ci/kube-diff.sh` writes this file.
    pub runs: PathBuf,
    /// How long one of tidegate's waits may take, in seconds.
    #[arg(long, default_value_t = 60)]
    pub timeout: u64,
    /// Print every op's counts, not only those of the ops that differ.
    #[arg(long)]
    pub verbose: bool,
}

pub(crate) fn outcomes(a: OutcomesArgs) -> Result<ExitCode, HarnessError> {
    let text = std::fs::read_to_string(&a.runs)
        .map_err(|e| HarnessError::Run(format!("{}: {e}", a.runs.display())))?;
    let mut configs = BTreeMap::new();
    let (mut workloads, mut disagreements, mut explained, mut unjudged) = (0, 0, 0, 0);
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let [config, name, record] = line.split('\t').collect::<Vec<_>>()[..] else {
            return Err(HarnessError::Run(format!(
                "{}:{}: expected CONFIG<TAB>WORKLOAD<TAB>RECORD",
                a.runs.display(),
                n + 1
            )));
        };
        if !configs.contains_key(config) {
            configs.insert(config.to_string(), workload::load(&PathBuf::from(config))?);
        }
        let log = Arc::new(OutcomeLog::default());
        let opts = RunOptions {
            workload: Some(name.to_string()),
            label_filter: Some(String::new()),
            keep_going: true,
            timeout: Duration::from_secs(a.timeout),
            outcomes: Some(log.clone()),
            ..RunOptions::default()
        };
        // A workload that failed at an op (a write the store refused, say) is an outcome to
        // judge, as kube's failure is; an error before it ran is not.
        let result = run::run_config(&configs[config], &opts);
        let ran = log.workloads.lock().pop();
        if ran.is_none() {
            result?;
        }
        let record = PathBuf::from(record);
        let (Some(t), true) = (ran, record.exists()) else {
            outln!(
                "outcome {name}: not judged (tidegate did not run it, or kube recorded nothing)"
            );
            unjudged += 1;
            continue;
        };
        let k = outcome::read_kube(&record)?;
        let j = outcome::judge(&t, &k);
        workloads += 1;
        print_judged(&j, &k, a.verbose);
        disagreements += j.disagreements().len();
        explained += j.explained().len();
    }
    outln!(
        "kube-diff outcomes: {workloads} workloads, {disagreements} disagreements, {explained} explained by timing, {unjudged} not judged"
    );
    Ok(if disagreements == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The explained differences and op rows printed per workload without --verbose.
const MAX_LINES: usize = 10;

fn print_judged(j: &outcome::Judged, k: &outcome::KubeOutcome, verbose: bool) {
    let kube = match (j.kube_completed, j.kube_failed_at) {
        (_, Some(n)) => format!("failed at op {n}"),
        (Some(true), None) => "completed".to_string(),
        _ => "cut off".to_string(),
    };
    let tg = match &j.tidegate_error {
        None => "completed".to_string(),
        Some(_) => "failed".to_string(),
    };
    let compared: Vec<_> = j.rows.iter().filter(|r| r.verdict.is_some()).collect();
    let same = compared
        .iter()
        .filter(|r| r.verdict == Some(Verdict::Same))
        .count();
    outln!(
        "outcome {}: kube {kube} ({} attempts, {} deletions), tidegate {tg}; {} op ends compared: {same} same, {} explained by timing, {} disagreements",
        j.name,
        k.attempts,
        k.deletions,
        compared.len(),
        j.explained().len(),
        j.disagreements().len()
    );
    for d in j.disagreements() {
        outln!("  DISAGREE {d}");
    }
    // Random scenarios make hundreds of ops, each a timing difference: ten lines each unless
    // --verbose.
    let cap = if verbose { usize::MAX } else { MAX_LINES };
    let explained = j.explained();
    for d in explained.iter().take(cap) {
        outln!("  explained {d}");
    }
    if explained.len() > cap {
        outln!(
            "  ... and {} more explained (--verbose)",
            explained.len() - cap
        );
    }
    let rows: Vec<_> = j
        .rows
        .iter()
        .filter(|r| verbose || !matches!(r.verdict, None | Some(Verdict::Same)))
        .collect();
    for r in rows.iter().take(cap) {
        outln!("  {}", outcome::row_text(r));
    }
    if rows.len() > cap {
        outln!("  ... and {} more ops (--verbose)", rows.len() - cap);
    }
}
