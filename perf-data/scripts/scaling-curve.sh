#!/usr/bin/env bash
# Usage: bash perf-data/scripts/scaling-curve.sh [THREADS...]   (default threads: 1 2)
#
# The scaling curve: ScalingCurve (perf-data/workloads/scale.yaml) at 500 to 100,000 nodes, for
# each thread count given (default: 1 2), three runs each; writes results.tsv (median Average
# pods/s, with all three runs) and scaling.svg (drawn by plot-scaling.py).
#
# Environment: TIDEGATE=path/to/binary skips the build (a machine without cargo), and
#              TIDEGATE_COMMIT=abc1234 names its commit in the header;
#              SCALING_OUT=dir writes there instead of
#              perf-data/results/scaling/<N>cpu-<commit>;
#              SCALING_NODES="500 5000" limits the node counts.
set -euo pipefail
cd "$(dirname "$0")/../.."
threads=("$@")
[[ $# -eq 0 ]] && threads=(1 2)
bin=${TIDEGATE:-}
if [[ -z $bin ]]; then
  cargo build --release -q -p tidegate-bench
  bin=target/release/tidegate
fi
commit=${TIDEGATE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
out=${SCALING_OUT:-perf-data/results/scaling/$(nproc)cpu-$commit}
nodes=(${SCALING_NODES:-500 5000 15000 50000 100000})
mkdir -p "$out"
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
{
  echo "# commit $commit, $(date -u +%F), $(nproc) CPUs ($cpu): median of 3 runs, SchedulingThroughput Average (pods/s)"
  echo -e "nodes\tthreads\tavg_pods_per_s\truns"
} > "$out/results.tsv"
for t in "${threads[@]}"; do
  for n in "${nodes[@]}"; do
    vals=()
    for r in 1 2 3; do
      v=$("$bin" run perf-data/workloads/scale.yaml --workload "ScalingCurve/${n}Nodes" \
            --threads "$t" --no-progress | awk -v w="ScalingCurve/${n}Nodes" '$1==w {print $2}')
      vals+=("$v")
    done
    med=$(printf '%s\n' "${vals[@]}" | sort -n | sed -n 2p)
    echo -e "$n\t$t\t$med\t${vals[*]}" | tee -a "$out/results.tsv"
  done
done
python3 perf-data/scripts/plot-scaling.py "$out/results.tsv" "$out/scaling.svg"
echo "wrote $out/results.tsv and $out/scaling.svg"
