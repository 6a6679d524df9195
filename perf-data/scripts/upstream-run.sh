#!/bin/bash
# Usage: [SCHEDULER_PERF=DIR] bash perf-data/scripts/upstream-run.sh [BIN] [OUTDIR]
#
# Runs every performance-labelled workload of the five upstream scheduler_perf configs once,
# unchanged (`tidegate list` and `tidegate run --label-filter performance --timeout 120`), from
# the repository root. Writes OUTDIR/list-<config>.txt, OUTDIR/run-<config>.txt and appends
# each run's exit status to OUTDIR/rc.txt. Then: python3 perf-data/scripts/upstream-table-1run.py OUTDIR
#
# BIN: default $TIDEGATE, else target/release/tidegate. OUTDIR: default
# perf-data/results/upstream-table/<short HEAD>. SCHEDULER_PERF: kube's scheduler_perf folder
# (test/integration/scheduler_perf of a kubernetes/kubernetes checkout); default
# ../shared/upstream/scheduler_perf, the copy on the project machine.
BIN=${1:-${TIDEGATE:-target/release/tidegate}}
OUT=${2:-perf-data/results/upstream-table/$(git rev-parse --short HEAD)}
SP=${SCHEDULER_PERF:-../shared/upstream/scheduler_perf}
[ -f "$SP/misc/performance-config.yaml" ] || { echo "no scheduler_perf configs under $SP (set SCHEDULER_PERF)" >&2; exit 2; }
mkdir -p "$OUT"
for t in misc affinity topology_spreading event_handling default_preemption; do
  f=$SP/$t/performance-config.yaml
  "$BIN" list "$f" --label-filter performance > "$OUT/list-$t.txt" 2>&1
  timeout 1800 "$BIN" run "$f" --label-filter performance --timeout 120 > "$OUT/run-$t.txt" 2>&1
  echo "$t rc=$?" >> "$OUT/rc.txt"
done
