#!/usr/bin/env bash
# Two builds side by side, alternated runs (A then B, per thread count, per round):
#   bash perf-data/scripts/binary-ab.sh A_BIN B_BIN CONFIG WORKLOAD ROUNDS "THREADS..." > OUT.tsv
# Prints `round threads build pods_per_s` lines (build: A or B); summarize with
# binary-ab-summary.py. Each run is its own process; the figure is the run's average pods/s.
set -euo pipefail
cd "$(dirname "$0")/../.."
a=$1 b=$2 config=$3 workload=$4 rounds=$5 threads=${6:-"1 2"}
printf 'round\tthreads\tbuild\tpods_per_s\n'
for r in $(seq 1 "$rounds"); do
  for t in $threads; do
    for build in A B; do
      bin=$a; [[ $build == B ]] && bin=$b
      line=$("$bin" run "$config" --workload "$workload" --threads "$t" --no-progress 2>&1 |
        awk -v w="$workload" '$1 == w {print $2}')
      printf '%s\t%s\t%s\t%s\n' "$r" "$t" "$build" "$line"
    done
  done
done
