#!/usr/bin/env bash
# The differential oracle against the real kube-scheduler. kube's own scheduler_perf
# (kube-reference/, k8s.io/kubernetes as go.mod names it) runs
#   - random scenarios: `tidegate kube-scenarios` writes isolated little clusters (taints,
#     node and pod (anti-)affinity, spread constraints, host ports, priorities and
#     preemption, gates removed later; about a third with gang and basic PodGroups, some
#     topology-constrained, in their own test case with GenericWorkload and
#     TopologyAwareWorkloadScheduling on) as scheduler_perf files, 100 scenarios per batch;
#   - our own workloads written for it (perf-data/workloads/nomination-lost.yaml,
#     batching.yaml, stress.yaml: our copy of upstream master's stress/ shapes, and
#     volumes.yaml; KUBE_DIFF_OWN='NAME ...' picks among them);
#   - every supported upstream workload labelled integration-test (--quick: the `short`
#     ones of default_preemption) of SCHEDULER_PERF_DIR, when that folder exists;
# and records each scheduling attempt in its order with kube's own Filter and Score over
# every node, PostFilter's nominations and the state changes it saw (`-record`).
# `tidegate replay` replays them on the same state and judges each: the same feasible nodes,
# rejecting plugins, top-scored nodes and per-plugin scores, kube's node feasible and
# top-scored here, the same rejecting plugins for a fit error, a nomination tidegate's
# dry run agrees with and victims of the same priorities; per pod group cycle, all or
# nothing, the quorum from tidegate's per-pod verdicts, kube's placement fitting in tidegate,
# the rejecting plugins, kube's kept placement top-scored by tidegate's PlacementScore
# plugins and a group preemption's victims the same as tidegate's
# (bench-harness/src/oracle/groups.rs).
# Then the outcome check (`tidegate outcomes`): tidegate runs every workload kube ran, and
# whether each side completed and the pod counts at each op's end (created, scheduled,
# pending, deleted; kube's from its executor's marks in the record) are compared, the
# differences timing explains (pods still pending, churn, a wait kube's first poll passed on
# a lagging informer view) named as such.
# Last line: `kube-diff: N scenarios, D disagreements (replay R; outcomes O of W workloads,
# E explained by timing)`; exit 1 on a disagreement of either.
#
# Usage: bash ci/kube-diff.sh [--quick] [--scenarios N] [--seed S] [--topics 'GLOB...']
#                             [--no-own] [SCHEDULER_PERF_DIR]
#   --quick: 300 random scenarios and the short preemption workloads (CI runs this);
#   default: 2,000 random scenarios and every supported upstream integration-test workload.
#   --topics: the topic folders of SCHEDULER_PERF_DIR to run (globs, nested topics too, e.g.
#     'podgroup/* workload_preemption starvation'; default: '*' and '*/*', quick:
#     default_preemption); --scenarios 0 runs no random scenarios; --no-own skips our own
#     differential workloads (nomination-lost, batching, stress).
#   SCHEDULER_PERF_DIR: scheduler_perf's folder of a kubernetes checkout (default
#   ../shared/upstream/scheduler_perf; skipped when missing). Seed: 1.
# Records and kube's logs stay in KUBE_DIFF_OUT (default target/kube-diff).
# Needs Go and the Go module proxy: skips (exit 0, saying why) without Go or when the
# modules cannot be downloaded.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
quick=0 scenarios="" seed=1 sp="" topics="" own=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick=1; shift ;;
    --scenarios) scenarios="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --topics) topics="$2"; shift 2 ;;
    --no-own) own=0; shift ;;
    -h|--help) sed -n '2,40p' "$0"; exit 0 ;;
    -*) echo "ci/kube-diff.sh: unknown flag $1 (see --help)" >&2; exit 2 ;;
    *) sp="$1"; shift ;;
  esac
done
if [[ $quick == 1 ]]; then
  scenarios="${scenarios:-300}" filter="integration-test,short" topics="${topics:-default_preemption}"
else
  scenarios="${scenarios:-2000}" filter="integration-test" topics="${topics:-* */*}"
fi
sp="${sp:-$root/../shared/upstream/scheduler_perf}"
if ! command -v go >/dev/null; then
  echo "ci/kube-diff.sh: Go not installed; skipping the kube differential"
  exit 0
fi
if ! (cd kube-reference && go mod download >/dev/null 2>&1); then
  echo "ci/kube-diff.sh: the Go modules of kube-reference/go.mod cannot be downloaded (no module proxy?); skipping the kube differential"
  exit 0
fi
start=$SECONDS
kube_dir="$(bash kube-reference/build.sh)"
# shellcheck source=../kube-reference/lib.sh
source kube-reference/lib.sh
cargo build --release -p tidegate-bench --quiet
tidegate="${CARGO_TARGET_DIR:-$root/target}/release/tidegate"
out="${KUBE_DIFF_OUT:-$root/target/kube-diff}"
rm -rf "$out"
mkdir -p "$out/logs"
out="$(cd "$out" && pwd)" # kube runs from each config's folder: a relative KUBE_DIFF_OUT must not move with it
echo "ci/kube-diff.sh: builds took $((SECONDS - start)) s" >&2

# kube_run DIR CONFIG TOPIC WORKLOAD: kube's scheduler_perf on one workload, recording into
# $out/TOPIC; a failed run is reported and its record judged as far as it goes. The run is
# listed in $out/runs.tsv (config, workload, record) for the outcome check.
kube_run() {
  printf '%s\t%s\t%s\n' "$(cd "$1" && pwd)/$2" "$4" \
    "$out/$3/BenchmarkPerfScheduling_${4//\//_}.jsonl" >>"$out/runs.tsv"
  (cd "$1" && PATH="$kube_dir:$PATH" timeout 600 "$kube_dir/perf.test" \
    -test.run '^$' -test.bench "$(kube_bench_regex "$4")" -test.benchtime 1x -config "$2" \
    -topic "$3" -data-items-dir "$out/items" -record "$out/$3" \
    -perf-scheduling-label-filter= </dev/null >"$out/logs/$3-${4//\//_}.log" 2>&1) ||
    echo "ci/kube-diff.sh: kube's run of $3 $4 failed (see $out/logs; its record is judged as far as it goes)" >&2
}

if [[ $scenarios -gt 0 ]]; then
  "$tidegate" kube-scenarios --seed "$seed" --scenarios "$scenarios" --out "$out/random" >"$out/logs/scenarios.txt"
  while read -r name; do
    kube_run "$out/random" random-config.yaml random "$name"
  done < <(grep -oE 'Random[0-9]+(Group)?Batch[0-9]+/Scenarios[0-9]+' "$out/logs/scenarios.txt")
  echo "ci/kube-diff.sh: random scenarios recorded at $((SECONDS - start)) s" >&2
fi

# Our own workloads written for the differential (each a case the random scenarios met only
# by chance): every run, quick or full, unless --no-own.
if [[ $own == 1 ]]; then
  for own_name in ${KUBE_DIFF_OWN:-nomination-lost batching stress volumes}; do
    config="$root/perf-data/workloads/$own_name.yaml"
    while IFS= read -r name; do
      kube_run "$(dirname "$config")" "$(basename "$config")" own "$name"
    done < <(runnable_workloads "$tidegate" "$config" integration-test)
  done
fi

if [[ -d "$sp" ]]; then
  configs=()
  for t in $topics; do
    for config in "$sp"/$t/performance-config.yaml; do
      [[ -f "$config" ]] && configs+=("$config")
    done
  done
  for config in "${configs[@]}"; do
    # A nested topic (podgroup/gangscheduling) records as podgroup-gangscheduling.
    topic="$(dirname "${config#"$sp"/}")"
    topic="${topic//\//-}"
    while IFS= read -r name; do
      kube_run "$(dirname "$config")" performance-config.yaml "$topic" "$name"
    done < <(runnable_workloads "$tidegate" "$config" "$filter")
  done
  echo "ci/kube-diff.sh: upstream workloads recorded at $((SECONDS - start)) s" >&2
else
  echo "ci/kube-diff.sh: no scheduler_perf folder at $sp; random scenarios only" >&2
fi
records=()
while IFS= read -r -d '' f; do records+=("$f"); done < <(find "$out" -name '*.jsonl' -print0 | sort -z)
[[ ${#records[@]} -gt 0 ]] || { echo "ci/kube-diff.sh: kube recorded nothing" >&2; exit 1; }
set +e
touch "$out/runs.tsv"
"$tidegate" replay --runs "$out/runs.tsv" "${records[@]}" | tee "$out/replay.txt"
replay_rc=${PIPESTATUS[0]}
"$tidegate" outcomes "$out/runs.tsv" | tee "$out/outcomes.txt"
outcomes_rc=${PIPESTATUS[0]}
set -e
# "kube-diff: N scenarios, D disagreements" and "kube-diff outcomes: W workloads, O
# disagreements, E explained by timing, U not judged".
read -r scen rdis < <(sed -nE 's/^kube-diff: ([0-9]+) scenarios, ([0-9]+) disagreements$/\1 \2/p' "$out/replay.txt")
read -r wls odis expl < <(sed -nE 's/^kube-diff outcomes: ([0-9]+) workloads, ([0-9]+) disagreements, ([0-9]+) explained.*/\1 \2 \3/p' "$out/outcomes.txt")
if [[ -z "${scen:-}" || -z "${wls:-}" ]]; then
  echo "ci/kube-diff.sh: replay (exit $replay_rc) or outcomes (exit $outcomes_rc) gave no summary line" >&2
  exit 1
fi
echo "kube-diff: $scen scenarios, $((rdis + odis)) disagreements (replay $rdis; outcomes $odis of $wls workloads, $expl explained by timing)"
if [[ $replay_rc -ne 0 || $outcomes_rc -ne 0 ]]; then
  # CI shows only the end of the output: repeat each disagreement there with its record.
  echo "ci/kube-diff.sh: the disagreements (whole reports: $out/replay.txt, $out/outcomes.txt):"
  awk '/^[^ ]/ { rec = $1 } /^  DISAGREE/ { print rec; print substr($0, 1, 3000) }' "$out/replay.txt"
  grep -E '^outcome .* [1-9][0-9]* disagreements$' "$out/outcomes.txt" || true
  exit $((replay_rc > outcomes_rc ? replay_rc : outcomes_rc))
fi
