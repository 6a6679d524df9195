//! The runs a report shows: each results file read back, a short label that tells it from
//! the others (the path as given, less what every path shares), and its colour, the same in
//! every chart and table.

use crate::error::InputError;
use crate::output::report::{DataItem, RunInfo, WindowSeries};
use std::path::{Path, PathBuf};

/// One results file.
pub struct Results {
    /// Short and unique among the report's runs (legends, tables).
    pub label: String,
    /// The path as given (hover text, the runs list).
    pub full: String,
    pub items: Vec<DataItem>,
    pub series: Vec<WindowSeries>,
    /// What produced the file, where it says (`tidegateRun`).
    pub run: Option<RunInfo>,
}

/// One colour per run (Tableau 10, readable on white and by most colour-blind readers).
pub const COLORS: [(u8, u8, u8); 10] = [
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
];

/// The colour of run `i` as `#rrggbb`.
pub fn color_hex(i: usize) -> String {
    let (r, g, b) = COLORS[i % COLORS.len()];
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// Reads the results files and labels them (bad JSON is bad input, with its line and column).
pub fn load_all(paths: &[PathBuf]) -> Result<Vec<Results>, InputError> {
    let full: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let labels = short_labels(&full);
    paths
        .iter()
        .zip(full)
        .zip(labels)
        .map(|((path, full), label)| {
            let f = crate::output::report::read_results(Path::new(path), "")?;
            Ok(Results {
                label,
                full,
                items: f.data_items,
                series: f.series,
                run: f.run,
            })
        })
        .collect()
}

/// How `--data-items-dir` starts every file name.
const FILE_PREFIX: &str = "BenchmarkPerfScheduling_benchmark_";

/// Longest label kept whole; longer ones are shortened in the middle.
const MAX_LABEL: usize = 28;

/// `s` cut to the pieces between separators (`/`, `\`, `_`), each with the separator
/// before it.
fn tokens(s: &str) -> Vec<&str> {
    let mut out = vec![];
    let mut start = 0;
    for (i, c) in s.char_indices() {
        if i > 0 && matches!(c, '/' | '\\' | '_') {
            out.push(&s[start..i]);
            start = i;
        }
    }
    out.push(&s[start..]);
    out
}

/// A short label per path, unique among them, less `.json`: of paths cut alike (by `/` and
/// `_`) the first piece that differs in each (`out/a/X_T1.json`, `out/b/X_T2.json` → `a`,
/// `b`), else all the pieces that differ,
/// else the paths less their common leading and trailing pieces; one path keeps
/// its file stem (less `BenchmarkPerfScheduling_benchmark_`). Labels still too long are cut in the middle; where that leaves two alike,
/// or a label is empty, the runs are `run 1`, `run 2`, ….
pub fn short_labels(paths: &[String]) -> Vec<String> {
    let stems: Vec<&str> = paths
        .iter()
        .map(|p| p.strip_suffix(".json").unwrap_or(p))
        .collect();
    let toks: Vec<Vec<&str>> = stems.iter().map(|s| tokens(s)).collect();
    let labels: Vec<String> = if toks.len() == 1 {
        let last = toks[0].iter().rposition(|t| t.starts_with(['/', '\\']));
        let stem = toks[0][last.unwrap_or(0)..].concat();
        let stem = stem.trim_start_matches(['/', '\\']);
        // `--data-items-dir` names every file so: the topic and time tell it apart.
        let stem = stem.strip_prefix(FILE_PREFIX).unwrap_or(stem);
        vec![stem.to_string()]
    } else if toks.iter().all(|t| t.len() == toks[0].len()) {
        // Alike in shape (`out/a/<name>_<time>`, `out/b/<name>_<time>`): the pieces that differ.
        let mut differ: Vec<usize> = (0..toks[0].len())
            .filter(|&k| toks.iter().any(|t| t[k] != toks[0][k]))
            .collect();
        // One piece that tells every run apart is enough (the folder, not also the time).
        let alone = differ
            .iter()
            .copied()
            .find(|&k| (0..toks.len()).all(|i| (0..i).all(|j| toks[i][k] != toks[j][k])));
        if let Some(k) = alone {
            differ = vec![k];
        }
        toks.iter()
            .map(|t| {
                let parts: Vec<&str> = differ
                    .iter()
                    .map(|&k| t[k].trim_start_matches(['/', '\\', '_']))
                    .collect();
                parts.join(" ")
            })
            .collect()
    } else {
        let shortest = toks.iter().map(Vec::len).min().unwrap_or(0);
        let same =
            |at: &dyn Fn(&[&str]) -> usize| toks.iter().all(|t| t[at(t)] == toks[0][at(&toks[0])]);
        let mut head = 0;
        while head < shortest && same(&|_| head) {
            head += 1;
        }
        let mut tail = 0;
        while tail < shortest - head && same(&|t| t.len() - 1 - tail) {
            tail += 1;
        }
        toks.iter()
            .map(|t| t[head..t.len() - tail].concat())
            .collect()
    };
    let labels: Vec<String> = labels
        .into_iter()
        .map(|l| shorten(l.trim_matches(['/', '\\', '_', '-', '.'])))
        .collect();
    let unique = labels
        .iter()
        .enumerate()
        .all(|(i, l)| !l.is_empty() && !labels[..i].contains(l));
    if unique {
        labels
    } else {
        (1..=paths.len()).map(|i| format!("run {i}")).collect()
    }
}

/// `s` within [`MAX_LABEL`] characters, its middle replaced by `…`.
fn shorten(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    if chars.len() <= MAX_LABEL {
        return s.to_string();
    }
    let keep = (MAX_LABEL - 1) / 2;
    let head: String = chars[..keep].iter().collect();
    let tail: String = chars[chars.len() - keep..].iter().collect();
    format!("{head}…{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(p: &[&str]) -> Vec<String> {
        short_labels(&p.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn labels_keep_what_tells_runs_apart() {
        let f = "BenchmarkPerfScheduling_benchmark_misc_2026-11-23T22:00:00Z.json";
        assert_eq!(
            labels(&[&format!("out/a/{f}"), &format!("out/b/{f}")]),
            ["a", "b"]
        );
        // Same folder, two times: the old report cut both to `BenchmarkPerfScheduling_be`.
        assert_eq!(
            labels(&[
                "out/BenchmarkPerfScheduling_benchmark_misc_2026-11-23T22:00:00Z.json",
                "out/BenchmarkPerfScheduling_benchmark_misc_2026-11-23T22:05:00Z.json",
            ]),
            ["2026-11-23T22:00:00Z", "2026-11-23T22:05:00Z"]
        );
        assert_eq!(
            labels(&["base.json", "head.json", "head-2.json"]),
            ["base", "head", "head-2"]
        );
        // Two folders, two times.
        assert_eq!(
            labels(&[
                "/tmp/x/a/BenchmarkPerfScheduling_benchmark_misc_2026-11-23T22:00:00Z.json",
                "/tmp/x/b/BenchmarkPerfScheduling_benchmark_misc_2026-11-23T22:00:01Z.json",
            ]),
            ["a", "b"]
        );
        // Folders alike for two of three: the times tell them apart.
        assert_eq!(
            labels(&["r/a/X_T1.json", "r/a/X_T2.json", "r/b/X_T3.json"]),
            ["T1", "T2", "T3"]
        );
        assert_eq!(
            labels(&["r/a/X_T1.json", "r/a/X_T2.json", "r/b/X_T2.json"]),
            ["a T1", "a T2", "b T2"]
        );
        assert_eq!(
            labels(&["runs/base/r1.json", "other/head.json"]),
            ["runs/base/r1", "other/head"]
        );
        assert_eq!(
            labels(&["x/BenchmarkPerfScheduling_benchmark_misc_2026-11-23T22:00:00Z.json"]),
            ["misc_2026-11-23T22:00:00Z"]
        );
        assert_eq!(
            labels(&[&"z".repeat(40)]),
            [format!("{}…{}", "z".repeat(13), "z".repeat(13))]
        );
        assert_eq!(labels(&["r/misc.json"]), ["misc"]);
    }

    #[test]
    fn alike_or_empty_labels_fall_back_to_run_numbers() {
        assert_eq!(labels(&["a.json", "a.json"]), ["run 1", "run 2"]);
        // Cut in the middle, two long labels would read the same.
        let long_a = format!("{}A{}", "x".repeat(20), "y".repeat(20));
        let long_b = format!("{}B{}", "x".repeat(20), "y".repeat(20));
        let l = labels(&[&long_a, &long_b]);
        assert_eq!(l, ["run 1", "run 2"]);
        assert_eq!(color_hex(0), "#1f77b4");
        assert_ne!(color_hex(1), color_hex(0));
    }
}
