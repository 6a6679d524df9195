#!/usr/bin/env bash
# The scaling curve: ScalingCurve (perf-data/workloads/scale.yaml) at 500 to 100,000 nodes, for
# each thread count given (default: 1 2), three runs each; writes results.tsv (median Average
# pods/s) and scaling.svg here. Usage: bash perf-data/scaling/run.sh [THREADS...]
set -euo pipefail
cd "$(dirname "$0")/../.."
threads=("${@:-1 2}")
[[ $# -eq 0 ]] && threads=(1 2)
cargo build --release -q -p tidegate-bench
out=perf-data/scaling
echo -e "# commit $(git rev-parse --short HEAD), $(date -u +%F), $(nproc) CPUs: median of 3 runs, SchedulingThroughput Average (pods/s)\nnodes\tthreads\tavg_pods_per_s" > $out/results.tsv
for t in "${threads[@]}"; do
  for n in 500 5000 15000 50000 100000; do
    vals=()
    for r in 1 2 3; do
      v=$(target/release/tidegate run perf-data/workloads/scale.yaml --workload "ScalingCurve/${n}Nodes" \
            --threads "$t" --no-progress | awk -v w="ScalingCurve/${n}Nodes" '$1==w {print $2}')
      vals+=("$v")
    done
    med=$(printf '%s\n' "${vals[@]}" | sort -n | sed -n 2p)
    echo -e "$n\t$t\t$med" | tee -a $out/results.tsv
  done
done
python3 perf-data/scaling/plot.py $out/results.tsv $out/scaling.svg
echo "wrote $out/results.tsv and $out/scaling.svg"
