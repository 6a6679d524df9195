#!/usr/bin/env bash
# The differential oracle against the real kube-scheduler: kube's own scheduler_perf
# (kube-reference/, k8s.io/kubernetes as go.mod names it) runs every supported upstream
# workload labelled integration-test and records each scheduling attempt in its order
# (`-record`); `tidegate replay` replays them on the same state and judges each decision
# (kube's node feasible here and among tidegate's top totals when kube saw every feasible
# node; the same plugins rejecting an unschedulable pod). Last line:
# `kube-diff: N scenarios, D disagreements`; exit 1 on a disagreement.
#
# Usage: bash ci/kube-diff.sh [--quick] [SCHEDULER_PERF_DIR]
#   SCHEDULER_PERF_DIR: scheduler_perf's folder of a kubernetes checkout (default
#   ../shared/upstream/scheduler_perf); --quick: the `short` workloads only.
# Needs Go and the Go module proxy (skips cleanly without Go or without the folder).
# Not done yet: random scenarios (the property-test generators), recorded preemption victims.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
filter="integration-test"
sp=""
for a in "$@"; do
  case "$a" in
    --quick) filter="integration-test,short" ;;
    *) sp="$a" ;;
  esac
done
sp="${sp:-$root/../shared/upstream/scheduler_perf}"
if ! command -v go >/dev/null; then
  echo "ci/kube-diff.sh: Go not installed; skipping the kube differential"
  exit 0
fi
if [[ ! -d "$sp" ]]; then
  echo "ci/kube-diff.sh: no scheduler_perf folder at $sp; skipping the kube differential"
  exit 0
fi
kube_dir="$(bash kube-reference/build.sh)"
# shellcheck source=../kube-reference/lib.sh
source kube-reference/lib.sh
cargo build --release -p tidegate-bench --quiet
tidegate="$root/target/release/tidegate"
# Records and kube's logs stay in KUBE_DIFF_OUT (default target/kube-diff) for a look after.
out="${KUBE_DIFF_OUT:-$root/target/kube-diff}"
rm -rf "$out"
mkdir -p "$out"

records=()
for config in "$sp"/*/performance-config.yaml; do
  topic="$(basename "$(dirname "$config")")"
  while IFS= read -r name; do
    rec="$out/$topic"
    (cd "$(dirname "$config")" && PATH="$kube_dir:$PATH" timeout 600 "$kube_dir/perf.test" \
      -test.run '^$' -test.bench "$(kube_bench_regex "$name")" -test.benchtime 1x -config performance-config.yaml \
      -topic "$topic" -data-items-dir "$out/items" -record "$rec" \
      -perf-scheduling-label-filter= </dev/null >"$out/kube-${topic}-${name//\//_}.log" 2>&1) ||
      echo "ci/kube-diff.sh: kube's run of $topic $name failed (its record is judged as far as it goes)" >&2
  done < <(runnable_workloads "$tidegate" "$config" "$filter")
done
while IFS= read -r -d '' f; do records+=("$f"); done < <(find "$out" -name '*.jsonl' -print0 | sort -z)
[[ ${#records[@]} -gt 0 ]] || { echo "ci/kube-diff.sh: kube recorded nothing" >&2; exit 1; }
"$tidegate" replay "${records[@]}"
