# Shell helpers shared by the scripts that run kube's scheduler_perf (kube-reference/perf.test):
# perf-data/scripts/kube-side-by-side.sh and ci/kube-diff.sh. Source it; it defines functions only.

# kube_bench_regex NAME: kube's -test.bench pattern for workload NAME (TestCase/Workload).
# Go matches each /-separated element against one level of sub-benchmarks
# (`Unschedulable/5kNodes/100Init/1kPods` is four), so every element is anchored.
kube_bench_regex() {
  local out="BenchmarkPerfScheduling" part
  local IFS=/
  for part in $1; do
    out+="/^${part}\$"
  done
  printf '%s' "$out"
}

# runnable_workloads TIDEGATE CONFIG FILTER [SHARD]: the workloads of CONFIG matching the
# label FILTER that tidegate runs, one per line (from `tidegate list`); with SHARD (I/N),
# only that shard's share of the selection, as `tidegate run --shard I/N` runs it.
runnable_workloads() {
  local name rest
  while read -r name rest; do
    [[ "$name" == workload || -z "$name" ]] && continue
    [[ "$rest" == *" yes" || "$rest" == "yes" ]] && printf '%s\n' "$name"
  done < <("$1" list "$2" --label-filter "$3" ${4:+--shard "$4"})
}
