//! `tidegate merge`: the shards' data-items files joined into one
//! ([`tidegate_bench::output::merge`]).

use std::path::PathBuf;
use std::process::ExitCode;
use tidegate_bench::error::HarnessError;
use tidegate_bench::output::merge;

#[derive(clap::Args)]
pub(crate) struct MergeArgs {
    /// The data-items files of every shard of one sweep (`tidegate run --shard I/N
    /// --data-items-dir D`), in any order.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The merged file to write.
    ///
    /// Example: --out sweep.json
    #[arg(long, short)]
    pub out: PathBuf,
}

pub(crate) fn merge(args: MergeArgs) -> Result<ExitCode, HarnessError> {
    let doc = merge::merge(&args.files)?;
    let path = merge::write(&args.out, &doc)
        .map_err(|e| HarnessError::Run(format!("{}: {e}", args.out.display())))?;
    let run = doc.run.as_ref().expect("merge sets it");
    println!(
        "merged {} shards: {} data items → {}",
        run.merged_shards.unwrap_or(0),
        doc.data_items.len(),
        path.display()
    );
    Ok(ExitCode::SUCCESS)
}
