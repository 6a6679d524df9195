#!/bin/bash
# Runs every performance-labelled workload of the upstream configs once (list + run),
# from the repository root: perf-data/results/issue5/run-upstream.sh BIN OUTDIR
BIN=${1:-target/release/tidegate}; OUT=${2:-perf-data/results/issue5}
for t in misc affinity topology_spreading event_handling default_preemption; do
  f=../shared/upstream/scheduler_perf/$t/performance-config.yaml
  "$BIN" list "$f" --label-filter performance > "$OUT/list-$t.txt" 2>&1
  timeout 1800 "$BIN" run "$f" --label-filter performance --timeout 120 > "$OUT/run-$t.txt" 2>&1
  echo "$t rc=$?" >> "$OUT/rc.txt"
done
