#!/usr/bin/env bash
# Placements digests of the reference workloads: the check that a change which should not
# alter scheduling decisions (a refactor, an optimisation) did not.
#
# Each workload runs single-threaded on the virtual clock (`--threads 1 --clock virtual
# --seed 1`: deterministic) and prints `placements digest: D (B pods bound, A attempts)`.
#
# Usage:
#   bash perf-data/scripts/digests.sh            compare with perf-data/baselines/digests.tsv
#   bash perf-data/scripts/digests.sh --record   write that baseline (commit it)
# TIDEGATE=path/to/tidegate uses a prebuilt binary instead of building one.
set -euo pipefail
cd "$(dirname "$0")/../.."

BASELINE=perf-data/baselines/digests.tsv
RECORD=0
[[ "${1:-}" == "--record" ]] && RECORD=1

# config|workload[|extra flags]: every scheduling path the engine has (plain fit, gates, affinity, spreading,
# preemption, churn, finalizers, fault injection, the event storm, parallel Filter/Score).
SUITE=(
  "default.yaml|SchedulingBasic/500Nodes"
  "default.yaml|SchedulingWhileGated/1Node_10000GatedPods"
  "default.yaml|SchedulingGatesRemoved/1Node_10000HeldPods"
  "deterministic.yaml|DeterministicMix/1100Nodes"
  "scale.yaml|SchedulingBasicScale/100Nodes_1000Pods"
  "scale.yaml|GatesRemovedUnderLoad/100Nodes_1000Held"
  "scale.yaml|DaemonsetScale/5Nodes"
  "affinity.yaml|SchedulingPodAntiAffinity/5Nodes"
  "affinity.yaml|SchedulingPodAffinity/5Nodes"
  "affinity.yaml|SchedulingPreferredPodAffinity/5Nodes"
  "affinity.yaml|SchedulingPreferredPodAntiAffinity/5Nodes"
  "affinity.yaml|SchedulingNodeAffinity/5Nodes"
  "affinity.yaml|SchedulingRequiredPodAntiAffinityWithNSSelector/10Nodes"
  "topology-spreading.yaml|TopologySpreading/5Nodes"
  "topology-spreading.yaml|PreferredTopologySpreading/5Nodes"
  "topology-spreading.yaml|DefaultTopologySpreading/5Nodes"
  "topology-spreading.yaml|SchedulingWithNodeInclusionPolicy/5Nodes"
  "preemption.yaml|PreemptionBasic/5Nodes"
  "preemption.yaml|PreemptionAsync/5Nodes"
  "preemption.yaml|Unschedulable/5Nodes/1Init/10Pods"
  "churn.yaml|SchedulingWithMixedChurn/10Nodes"
  "churn.yaml|SchedulingDeletedPodsWithFinalizers/10Nodes_10DeletingPods"
  "faults.yaml|FaultTolerance/20Nodes|--inject error@filter=0.05,bind-failure=0.05"
  "faults.yaml|EventStorm/20Nodes|--inject node-updates=2000"
)

if [[ -z "${TIDEGATE:-}" ]]; then
  cargo build --release -p tidegate-bench --quiet
  TIDEGATE=target/release/tidegate
fi

declare -A BASE=()
if [[ $RECORD == 0 ]]; then
  while IFS=$'\t' read -r name digest _rest; do
    [[ "$name" == \#* || -z "$name" ]] && continue
    BASE[$name]="$digest"
  done <"$BASELINE"
fi

out_lines=()
fail=0
for entry in "${SUITE[@]}"; do
  IFS='|' read -r config workload extra <<<"$entry"
  name="$config $workload"
  # shellcheck disable=SC2086 # extra holds several flags
  out=$("$TIDEGATE" run "perf-data/workloads/$config" --workload "$workload" \
    --threads 1 --clock virtual --seed 1 --no-progress ${extra:-} 2>&1) || {
    echo "FAIL  $name: the run failed" >&2
    echo "$out" | tail -5 >&2
    fail=1
    continue
  }
  got=$(sed -n 's/^placements digest: \([0-9a-f]*\) (\([0-9]*\) pods bound, \([0-9]*\) attempts).*/\1 \2 \3/p' <<<"$out")
  if [[ -z "$got" ]]; then
    echo "FAIL  $name: no placements digest in the output" >&2
    fail=1
    continue
  fi
  out_lines+=("$name"$'\t'"$got")
  if [[ $RECORD == 0 ]]; then
    want=${BASE[$name]:-}
    if [[ "$got" == "$want" ]]; then
      echo "same  $name  $got"
    else
      echo "DIFF  $name  got '$got', baseline '${want:-none}'"
      fail=1
    fi
  fi
done

if [[ $RECORD == 1 ]]; then
  {
    echo "# perf-data/scripts/digests.sh --record: commit $(git rev-parse --short HEAD), $(date -u +%F)"
    echo "# config workload	digest bound attempts (--threads 1 --clock virtual --seed 1)"
    printf '%s\n' "${out_lines[@]}"
  } >"$BASELINE"
  echo "wrote $BASELINE (${#out_lines[@]} workloads)"
fi
exit $fail
