#!/usr/bin/env bash
# The node memo's effect, alternated runs (memo on, then off, per thread count, per round):
#   bash perf-data/scripts/node-memo-ab.sh CONFIG WORKLOAD ROUNDS "THREADS..." > OUT.tsv
# Prints `round threads memo pods_per_s` lines; summarize with node-memo-summary.py.
set -euo pipefail
cd "$(dirname "$0")/../.."
TIDEGATE=${TIDEGATE:-target/release/tidegate}
config=$1 workload=$2 rounds=$3 threads=${4:-"1 2"}
printf 'round\tthreads\tmemo\tpods_per_s\n'
for r in $(seq 1 "$rounds"); do
  for t in $threads; do
    for memo in on off; do
      flag=(); [[ $memo == off ]] && flag=(--no-node-memo)
      line=$("$TIDEGATE" run "$config" --workload "$workload" --threads "$t" --no-progress "${flag[@]}" 2>&1 |
        awk -v w="$workload" '$1 == w {print $2}')
      printf '%s\t%s\t%s\t%s\n' "$r" "$t" "$memo" "$line"
    done
  done
done
