//! `tidegate merge`: the data-items files of the N shards of one sweep (`tidegate run
//! --shard I/N`, [`crate::workload::shard`]) joined into one, as one unsharded run would have
//! written it: its data items and time series in the selection's order, its provenance the
//! first shard's, with `mergedShards` and every machine the shards ran on.
//!
//! Refused, as bad input naming the file: a file that is not a shard's; shards of another
//! sweep (another N, another selection, another commit, seed or clock); a shard given twice
//! (an overlap) or missing (a gap); a data item of a workload that is not its shard's.

use super::report::{DataItem, DataItems, RunInfo, WindowSeries, read_results};
use crate::error::InputError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The workload (`TestCase/Workload`) of a data item's or series' `Name`
/// (`BenchmarkPerfScheduling/<TestCase>/<Workload>[/<window>]`).
fn workload_of(name: &str) -> Option<String> {
    let mut parts = name.split('/');
    parts.next()?;
    let tc = parts.next()?;
    let wl = parts.next()?;
    Some(format!("{tc}/{wl}"))
}

struct ShardFile {
    path: PathBuf,
    run: RunInfo,
    items: Vec<DataItem>,
    series: Vec<WindowSeries>,
}

/// Reads and checks the shards' files; the merged document.
pub fn merge(paths: &[PathBuf]) -> Result<DataItems, InputError> {
    let mut files = Vec::new();
    for p in paths {
        let f = read_results(p, "")?;
        let run = f.run.filter(|r| r.shard.is_some()).ok_or_else(|| {
            shard_err(
                p,
                "not a shard's results (tidegate run --shard I/N writes them)",
            )
        })?;
        files.push(ShardFile {
            path: p.clone(),
            run,
            items: f.data_items,
            series: f.series,
        });
    }
    let first = files
        .first()
        .ok_or_else(|| InputError::new(Path::new("-"), None, "", "no files to merge"))?;
    let rec = first.run.shard.clone().expect("checked");
    let mut by_index: BTreeMap<usize, &ShardFile> = BTreeMap::new();
    for f in &files {
        let r = f.run.shard.as_ref().expect("checked");
        same_sweep(f, first)?;
        if r.count != rec.count || r.selected != rec.selected {
            return Err(shard_err(
                &f.path,
                format!(
                    "shard {}/{} of another sweep than {} (shard {}/{}): not the same number of shards or not the same workloads selected",
                    r.index,
                    r.count,
                    first.path.display(),
                    rec.index,
                    rec.count
                ),
            ));
        }
        if let Some(other) = by_index.insert(r.index, f) {
            return Err(shard_err(
                &f.path,
                format!(
                    "shard {}/{} given twice (also {})",
                    r.index,
                    r.count,
                    other.path.display()
                ),
            ));
        }
    }
    let missing: Vec<String> = (1..=rec.count)
        .filter(|i| !by_index.contains_key(i))
        .map(|i| format!("{i}/{}", rec.count))
        .collect();
    if !missing.is_empty() {
        return Err(shard_err(
            &first.path,
            format!("shard {} missing", missing.join(", ")),
        ));
    }
    // Each item of a workload of its own shard's share; then all in the selection's order.
    let position: BTreeMap<&str, usize> = rec
        .selected
        .iter()
        .enumerate()
        .map(|(k, w)| (w.as_str(), k))
        .collect();
    let mut items: Vec<(usize, usize, DataItem)> = Vec::new();
    let mut series: Vec<(usize, usize, WindowSeries)> = Vec::new();
    for f in by_index.values() {
        let shard = f.run.shard.as_ref().expect("checked").shard();
        let place = |name: &str, what: &str| -> Result<usize, InputError> {
            let w = workload_of(name).unwrap_or_default();
            match position.get(w.as_str()) {
                Some(&k) if shard.owns(k) => Ok(k),
                _ => Err(shard_err(
                    &f.path,
                    format!("{what} {name:?} is not of a workload of shard {shard}'s share"),
                )),
            }
        };
        for (n, it) in f.items.iter().enumerate() {
            let name = it.labels.get("Name").map_or("", String::as_str);
            items.push((place(name, "data item")?, n, it.clone()));
        }
        for (n, s) in f.series.iter().enumerate() {
            series.push((place(&s.name, "time series")?, n, s.clone()));
        }
    }
    items.sort_by_key(|(k, n, _)| (*k, *n));
    series.sort_by_key(|(k, n, _)| (*k, *n));
    let mut run = by_index[&1].run.clone();
    run.shard = None;
    run.merged_shards = Some(rec.count);
    let mut machines: Vec<String> = by_index
        .values()
        .map(|f| format!("{} x{}", f.run.cpu_model, f.run.cpus))
        .collect();
    machines.dedup();
    if machines.len() > 1 {
        run.cpu_model = machines.join(" | ");
    }
    Ok(DataItems {
        version: "v1",
        data_items: items.into_iter().map(|(_, _, i)| i).collect(),
        series: series.into_iter().map(|(_, _, s)| s).collect(),
        run: Some(run),
    })
}

/// The shards of one sweep ran one build with one seed and clock.
fn same_sweep(f: &ShardFile, first: &ShardFile) -> Result<(), InputError> {
    let (a, b) = (&f.run, &first.run);
    for (what, x, y) in [
        ("version", &a.version, &b.version),
        ("commit", &a.commit, &b.commit),
        ("clock", &a.clock, &b.clock),
    ] {
        if x != y {
            return Err(shard_err(
                &f.path,
                format!(
                    "{what} {x:?}, {} has {y:?}: not one sweep",
                    first.path.display()
                ),
            ));
        }
    }
    if a.seed != b.seed {
        return Err(shard_err(
            &f.path,
            format!(
                "seed {}, {} has {}: not one sweep",
                a.seed,
                first.path.display(),
                b.seed
            ),
        ));
    }
    Ok(())
}

fn shard_err(path: &Path, message: impl Into<String>) -> InputError {
    InputError::new(path, None, "tidegateRun.shard", message)
}

/// Writes the merged document to `out` (whole or not at all).
pub fn write(out: &Path, doc: &DataItems) -> std::io::Result<PathBuf> {
    let json = serde_json::to_vec_pretty(doc).map_err(std::io::Error::other)?;
    let dir = out
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = out
        .file_name()
        .ok_or_else(|| std::io::Error::other("--out names no file"))?;
    super::report::write_atomic(dir, &name.to_string_lossy(), &json)
}
