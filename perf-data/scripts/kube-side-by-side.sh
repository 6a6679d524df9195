#!/usr/bin/env bash
# Usage: bash perf-data/scripts/kube-side-by-side.sh CONFIG [--workload P]... [--rounds N] [--label-filter F] [--shard I/N] [--out DIR]
#
# Runs each selected workload of the scheduler_perf file CONFIG alternately in the real
# kube-scheduler (kube's own scheduler_perf, kube-reference/) and in tidegate, N rounds (3 by
# default), and prints and records one table: kube and tidegate SchedulingThroughput Average
# (median and spread), their ratio, and the p90 of PreEnqueue and of the scheduling attempt
# where both report them. Workloads: every --workload P (TestCase/Workload), else those CONFIG
# labels with F (default `performance`) that tidegate runs. --shard I/N keeps shard I's share of
# those (positions k with k mod N = I - 1, as `tidegate run --shard` splits a selection), so N
# machines split a sweep; docs/sharding.md.
#
# Builds the kube side once (kube-reference/build.sh, cached) and tidegate's release binary.
# Writes DIR (default perf-data/results/kube-side-by-side/<topic>-<commit>): the data items
# of every run (kube/rK/, tidegate/rK/), each run's log (kube's shortened to its verdict lines
# and end), and table.md. KUBE_RUN_TIMEOUT (seconds, default 1800) caps one kube run.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
config="" rounds=3 filter="performance" out="" shard=""
workloads=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --workload) workloads+=("$2"); shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --label-filter) filter="$2"; shift 2 ;;
    --shard) shard="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    -*) echo "kube-side-by-side.sh: unknown flag $1" >&2; exit 2 ;;
    *) [[ -z "$config" ]] || { echo "kube-side-by-side.sh: one CONFIG only" >&2; exit 2; }; config="$1"; shift ;;
  esac
done
[[ -n "$config" && -f "$config" ]] || { echo "kube-side-by-side.sh: CONFIG missing or not a file (see --help)" >&2; exit 2; }
config="$(cd "$(dirname "$config")" && pwd)/$(basename "$config")"
topic="$(basename "$(dirname "$config")")"
commit="$(git -C "$root" rev-parse --short HEAD)"
out="${out:-$root/perf-data/results/kube-side-by-side/$topic-$commit}"
# shellcheck source=../../kube-reference/lib.sh
source "$root/kube-reference/lib.sh"
mkdir -p "$out"
out="$(cd "$out" && pwd)" # kube runs from the config's folder

kube_dir="$(bash "$root/kube-reference/build.sh")"
(cd "$root" && cargo build --release -p tidegate-bench --quiet)
tidegate="${CARGO_TARGET_DIR:-$root/target}/release/tidegate"

if [[ ${#workloads[@]} -eq 0 ]]; then
  mapfile -t workloads < <(runnable_workloads "$tidegate" "$config" "$filter" "$shard")
elif [[ -n "$shard" ]]; then
  [[ "$shard" =~ ^([0-9]+)/([0-9]+)$ ]] && (( BASH_REMATCH[1] >= 1 && BASH_REMATCH[1] <= BASH_REMATCH[2] )) ||
    { echo "kube-side-by-side.sh: --shard $shard: a shard is I/N with 1 <= I <= N" >&2; exit 2; }
  mine=()
  for k in "${!workloads[@]}"; do
    (( k % BASH_REMATCH[2] == BASH_REMATCH[1] - 1 )) && mine+=("${workloads[$k]}")
  done
  workloads=("${mine[@]}")
fi
[[ ${#workloads[@]} -gt 0 ]] || { echo "kube-side-by-side.sh: no workload selected" >&2; exit 2; }

for w in "${workloads[@]}"; do
  for r in $(seq 1 "$rounds"); do
    slug=${w//\//_}
    mkdir -p "$out/kube/r$r" "$out/tidegate/r$r" "$out/logs"
    echo "round $r/$rounds: $w (kube)" >&2
    (cd "$(dirname "$config")" && PATH="$kube_dir:$PATH" timeout "${KUBE_RUN_TIMEOUT:-1800}" "$kube_dir/perf.test" -test.run '^$' \
      -test.bench "$(kube_bench_regex "$w")" -test.benchtime 1x -test.timeout 60m \
      -config "$(basename "$config")" -topic "$topic" -data-items-dir "$out/kube/r$r" \
      -perf-scheduling-label-filter= >"$out/logs/kube-$slug-r$r.log" 2>&1) ||
      echo "  kube reported a failure (a missed threshold fails kube's benchmark; see logs/kube-$slug-r$r.log)" >&2
    # kube logs every object it creates: keep the verdict lines and the end of the log.
    log="$out/logs/kube-$slug-r$r.log"
    { grep -E '^(--- |FAIL|PASS|ok |Benchmark)|ERROR|expected' "$log" | head -n 40; echo "[...]"; tail -n 60 "$log"; } >"$log.short" || true
    mv "$log.short" "$log"
    echo "round $r/$rounds: $w (tidegate)" >&2
    "$tidegate" run "$config" --workload "$w" --data-items-dir "$out/tidegate/r$r" --no-progress \
      >"$out/logs/tidegate-$slug-r$r.log" 2>&1 ||
      echo "  tidegate failed (see logs/tidegate-$slug-r$r.log)" >&2
  done
done

{
  echo "# kube-scheduler beside tidegate: $(basename "$(dirname "$config")")/$(basename "$config")"
  echo
  echo "tidegate $commit; kube-scheduler $(grep -m1 'k8s.io/kubernetes v' "$root/kube-reference/go.mod" | awk '{print $2}') (kube's scheduler_perf, in-process kube-apiserver on etcd); $rounds rounds, alternated; $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(date -u +%F)"
  echo
  python3 "$root/perf-data/scripts/kube-side-by-side-table.py" "$out" "${workloads[@]}"
} | tee "$out/table.md"
