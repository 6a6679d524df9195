#!/bin/bash
# Every performance-labelled workload of the five upstream configs, three times (run1..run3),
# from the repository root: perf-data/results/issue7/run-upstream-3.sh BIN OUTDIR
# Then: python3 perf-data/results/issue7/table3.py OUTDIR
BIN=${1:-target/release/tidegate}; OUT=${2:-perf-data/results/issue7/table}
for r in 1 2 3; do
  mkdir -p "$OUT/run$r"
  bash perf-data/results/issue5/run-upstream.sh "$BIN" "$OUT/run$r"
done
