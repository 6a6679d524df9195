#!/usr/bin/env bash
# Usage: TIDEGATE=path/to/tidegate TIDEGATE_COMMIT=abc1234 bash perf-data/scripts/scaling-multicore.sh OUTDIR
#
# One lease of a multi-core machine: the scaling curve at 1 to 16 threads, then the
# 100,000-node, 1,000,000-pod scale workload at 16 and 2 threads. Needs a built binary
# (TIDEGATE=path, default target/release/tidegate) and python3; writes everything under
# OUTDIR (default perf-data/results/scaling/multicore): machine.txt, results.tsv,
# scaling.svg, scale-100k-1m-{16,2}threads.txt.
# (TIDEGATE_COMMIT names the commit the binary was built from, for the TSV header.)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-perf-data/results/scaling/multicore}
mkdir -p "$out"
export TIDEGATE=${TIDEGATE:-target/release/tidegate}
{
  echo "date: $(date -u +%FT%TZ)"
  echo "cpus: $(nproc)"
  grep -m1 'model name' /proc/cpuinfo
  grep MemTotal /proc/meminfo
  uname -r
} > "$out/machine.txt"
cat "$out/machine.txt"
SCALING_OUT="$out" bash perf-data/scripts/scaling-curve.sh 1 2 4 8 16
for t in 16 2; do
  "$TIDEGATE" run perf-data/workloads/scale.yaml --workload SchedulingBasicScale/100000Nodes_1000000Pods \
    --threads "$t" --no-progress 2>&1 | tee "$out/scale-100k-1m-${t}threads.txt"
done
