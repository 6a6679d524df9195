#!/usr/bin/env bash
# CI performance gate on counters that do not depend on the machine's load.
#
# Each workload of the suite runs single-threaded on the virtual clock (`--threads 1 --clock
# virtual --seed 1`, deterministic: the same placements and attempts on every run) under
# `valgrind --tool=callgrind`, three times. The gate compares with
# perf-data/baselines/bench-gate.tsv:
#   - instructions (median of the three runs): fail when more than the baseline by over
#     BENCH_GATE_MAX_REGRESSION percent (default 8: runs spread 0.1-4.3 % within one
#     invocation and medians moved up to 4 % between invocations, because the durations in
#     the reported histograms are real time and hash-table seeds differ per process; a
#     deliberate slowdown showed +18 % to +34 %);
#   - placements digest, bound pods and scheduling attempts: fail on any difference (the
#     scheduler decided differently: a behaviour change, to be recorded on purpose).
#
# Usage:
#   bash ci/bench-gate.sh            check against the baseline (skips cleanly without valgrind)
#   bash ci/bench-gate.sh --record   run the suite and write the baseline (commit it)
set -euo pipefail
cd "$(dirname "$0")/.."

BASELINE=perf-data/baselines/bench-gate.tsv
LIMIT=${BENCH_GATE_MAX_REGRESSION:-8}
RUNS=${BENCH_GATE_RUNS:-3}
RECORD=0
[[ "${1:-}" == "--record" ]] && RECORD=1

if ! command -v valgrind >/dev/null 2>&1; then
  echo "ci/bench-gate.sh: valgrind not installed; skipping the performance gate"
  exit 0
fi

# The suite: config|workload, small enough for callgrind (seconds each) and big enough that
# scheduling, not the report of real-time histograms, dominates the count (the spread of
# smaller runs was 2-6 %; of these, 0.2-1.2 %). DeterministicMix covers parallel-path
# code (run single-threaded), preemption, churn and rate-limited deletes.
SUITE=(
  "perf-data/workloads/default.yaml|SchedulingBasic/500Nodes"
  "perf-data/workloads/deterministic.yaml|DeterministicMix/1100Nodes"
  "perf-data/workloads/scale.yaml|SchedulingBasicScale/100Nodes_1000Pods"
  "perf-data/workloads/scale.yaml|GatesRemovedUnderLoad/100Nodes_1000Held"
)

cargo build --release -p tidegate-bench --quiet
BIN=target/release/tidegate

# One run: prints "instructions digest bound attempts".
measure() {
  local config=$1 workload=$2 out
  out=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null \
    "$BIN" run "$config" --workload "$workload" --threads 1 --clock virtual --seed 1 \
    --no-progress 2>&1) || { echo "$out" >&2; return 1; }
  local ir digest bound attempts
  ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' <<<"$out" | tail -1)
  digest=$(sed -n 's/^placements digest: \([0-9a-f]*\) (\([0-9]*\) pods bound, \([0-9]*\) attempts).*/\1 \2 \3/p' <<<"$out")
  if [[ -z "$ir" || -z "$digest" ]]; then
    echo "$out" >&2
    echo "ci/bench-gate.sh: no instruction count or digest for $workload" >&2
    return 1
  fi
  echo "$ir $digest"
}

declare -A BASE
if [[ $RECORD -eq 0 ]]; then
  if [[ ! -f $BASELINE ]]; then
    echo "ci/bench-gate.sh: no baseline ($BASELINE); record one with: bash ci/bench-gate.sh --record"
    exit 1
  fi
  while IFS=$'\t' read -r name ir digest bound attempts _rest; do
    [[ -z "$name" || "$name" == \#* ]] && continue
    BASE[$name]="$ir $digest $bound $attempts"
  done <"$BASELINE"
fi

fail=0
rows=()
for entry in "${SUITE[@]}"; do
  config=${entry%%|*}
  workload=${entry##*|}
  name="$(basename "$config") $workload"
  counts=()
  first=""
  for ((i = 0; i < RUNS; i++)); do
    read -r ir digest bound attempts < <(measure "$config" "$workload")
    counts+=("$ir")
    this="$digest $bound $attempts"
    if [[ -z "$first" ]]; then
      first=$this
    elif [[ "$this" != "$first" ]]; then
      echo "FAIL $name: not deterministic: '$first' then '$this'"
      fail=1
    fi
  done
  median=$(printf '%s\n' "${counts[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  spread=$(printf '%s\n' "${counts[@]}" | sort -n | awk 'NR==1{lo=$1} {hi=$1} END {printf "%.1f", (hi-lo)*100/lo}')
  read -r digest bound attempts <<<"$first"
  if [[ $RECORD -eq 1 ]]; then
    rows+=("$name"$'\t'"$median"$'\t'"$digest"$'\t'"$bound"$'\t'"$attempts")
    printf '%-60s %14s instr (spread %s %%)  digest %s  bound %s  attempts %s\n' \
      "$name" "$median" "$spread" "$digest" "$bound" "$attempts"
    continue
  fi
  if [[ -z "${BASE[$name]:-}" ]]; then
    echo "FAIL $name: not in $BASELINE (record a new baseline: bash ci/bench-gate.sh --record)"
    fail=1
    continue
  fi
  read -r bir bdigest bbound battempts <<<"${BASE[$name]}"
  pct=$(awk -v c="$median" -v b="$bir" 'BEGIN {printf "%+.2f", (c-b)*100/b}')
  verdict=ok
  if awk -v c="$median" -v b="$bir" -v l="$LIMIT" 'BEGIN {exit !(c > b*(1+l/100))}'; then
    verdict="FAIL: instructions +${pct#+} % over the baseline (limit ${LIMIT} %)"
    fail=1
  fi
  if [[ "$digest $bound $attempts" != "$bdigest $bbound $battempts" ]]; then
    verdict="FAIL: decisions changed (digest $bdigest -> $digest, bound $bbound -> $bound, attempts $battempts -> $attempts)"
    fail=1
  fi
  printf '%-60s %14s instr  baseline %14s  %s %%  (spread %s %%)  %s\n' \
    "$name" "$median" "$bir" "$pct" "$spread" "$verdict"
done

if [[ $RECORD -eq 1 ]]; then
  mkdir -p "$(dirname "$BASELINE")"
  {
    echo "# ci/bench-gate.sh --record: commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u +%F), $(rustc --version)"
    echo "# workload	instructions (median of $RUNS callgrind runs)	placements digest	bound	attempts"
    printf '%s\n' "${rows[@]}"
  } >"$BASELINE"
  echo "baseline written to $BASELINE"
  exit 0
fi
if [[ $fail -ne 0 ]]; then
  echo "ci/bench-gate.sh: performance gate FAILED (see above; README: 'CI performance gate')"
  exit 1
fi
echo "ci/bench-gate.sh: performance gate passed"
