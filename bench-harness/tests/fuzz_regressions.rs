//! Replays every input kept in `fuzz/regressions/<target>/` through the fuzz target's entry
//! (`tidegate_bench::fuzzing`), on stable and without libFuzzer: inputs that once crashed, and
//! hand-made hostile ones (alias bombs, deep nesting, huge numbers). Each must return, not
//! panic. The queue target's inputs are replayed by `engine/tests/queue_model.rs`.

use std::path::Path;

#[test]
fn every_kept_fuzz_input_runs_without_a_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions");
    for (name, entry) in tidegate_bench::fuzzing::TARGETS {
        let dir = root.join(name);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .flatten()
            .map(|e| e.path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "{name}: no regression inputs kept");
        for f in files {
            let data = std::fs::read(&f).unwrap();
            let t = std::time::Instant::now();
            entry(&data);
            // Not a timing assertion: a note when an input is pathologically slow.
            if t.elapsed().as_secs() > 5 {
                eprintln!("{}: took {:?}", f.display(), t.elapsed());
            }
        }
    }
}
