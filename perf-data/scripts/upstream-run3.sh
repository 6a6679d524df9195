#!/bin/bash
# Usage: [SCHEDULER_PERF=DIR] bash perf-data/scripts/upstream-run3.sh [BIN] [OUTDIR]
#
# Every performance-labelled workload of the five upstream configs, three times in a row
# (OUTDIR/run1..run3, each written by upstream-run.sh; see there for BIN, SCHEDULER_PERF and
# the OUTDIR default), from the repository root.
# Then: python3 perf-data/scripts/upstream-table.py OUTDIR > OUTDIR/table.md
BIN=${1:-${TIDEGATE:-target/release/tidegate}}
OUT=${2:-perf-data/results/upstream-table/$(git rev-parse --short HEAD)}
for r in 1 2 3; do
  mkdir -p "$OUT/run$r"
  bash perf-data/scripts/upstream-run.sh "$BIN" "$OUT/run$r" || exit
done
