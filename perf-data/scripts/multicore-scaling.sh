#!/usr/bin/env bash
# Usage: bash perf-data/scripts/multicore-scaling.sh [--bundle DIR] [--rounds N] [--kube-rounds K] [--threads "1 2 4 8 16"] [--scaling FILE:WORKLOAD] [--workload W] [--out DIR] [--no-kube | --kube-only]
#
# Multi-core scaling on a machine with many cores. 1) tidegate's thread scaling on a workload
# big enough for parallel Filter and Score to matter (default
# scale.yaml:SchedulingBasicScale/100000Nodes_110000Pods, 5,000 nodes filtered per pod), at
# each thread count, N rounds (3 by default), alternated round by round. 2) Beside the real
# kube-scheduler on W of perf-data/workloads/default.yaml (SchedulingBasic/5000Nodes_10000Pods):
# tidegate with every core, N rounds, and (unless --no-kube) kube's own scheduler_perf
# (kube-reference/) K times (--kube-rounds, 1 by default) with every core (GOMAXPROCS unset). Prints both tables and writes
# the data items and logs under DIR (default $OUT, else target/multicore-scaling).
#
# The binaries come from --bundle DIR (tidegate, and perf.test and etcd, each possibly .xz),
# so that a machine without Rust or Go can run it (the device machine: build the bundle here
# with `perf-data/scripts/multicore-scaling.sh --make-bundle DIR`); default: target/release
# and target/kube-reference. The device tool carries at most 64 MiB with the working tree,
# which holds tidegate or kube's two binaries but not all three: split the bundle and make
# two calls, `--no-kube` with tidegate's, then `--kube-only` with kube's.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bundle="" kube_only=0 rounds=3 kube_rounds=1 kube_spread="" threads="1 2 4 8 16" out="${OUT:-$root/target/multicore-scaling}" kube=1 make=""
scaling="scale.yaml:SchedulingBasicScale/100000Nodes_110000Pods"
workload="SchedulingBasic/5000Nodes_10000Pods"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bundle) bundle="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --kube-rounds) kube_rounds="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --no-kube) kube=0; shift ;;
    --kube-only) kube_only=1; shift ;;
    --scaling) scaling="$2"; shift 2 ;;
    --workload) workload="$2"; shift 2 ;;
    --make-bundle) make="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "multicore-scaling.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -z "$bundle" ]] || bundle="$(cd "$bundle" && pwd)"

if [[ -n "$make" ]]; then
  make="$(mkdir -p "$make" && cd "$make" && pwd)" # absolute: the Go build runs elsewhere
  (cd "$root" && cargo build --release -p tidegate-bench --quiet)
  cp "$root/target/release/tidegate" "$make/tidegate" && strip "$make/tidegate"
  (cd "$root/kube-reference" && go test -c -ldflags='-s -w' -o "$make/perf.test" ./perf &&
    go build -ldflags='-s -w' -o "$make/etcd" ./cmd/etcd)
  xz -f -T2 -6 "$make/perf.test" "$make/etcd" "$make/tidegate"
  ls -l "$make"
  exit 0
fi

bin="$out/bin"
mkdir -p "$bin" "$out/logs"
pick() { # NAME: the bundle's file (unpacked when .xz), else the local build
  if [[ -n "$bundle" && -f "$bundle/$1.xz" ]]; then xz -dc "$bundle/$1.xz" >"$bin/$1"; chmod +x "$bin/$1"
  elif [[ -n "$bundle" && -f "$bundle/$1" ]]; then cp "$bundle/$1" "$bin/$1"
  elif [[ "$1" == tidegate ]]; then cp "$root/target/release/tidegate" "$bin/$1"
  else cp "$root/target/kube-reference/$1" "$bin/$1"; fi
}
[[ $kube_only == 1 ]] || pick tidegate
throughput() { # DIR: SchedulingThroughput Average of the data items there
  python3 - "$1" <<'EOF'
import glob, json, sys
for f in glob.glob(sys.argv[1] + "/*.json"):
    for it in json.load(open(f)).get("dataItems") or []:
        if it["labels"].get("Metric") == "SchedulingThroughput":
            print(round(it["data"]["Average"])); sys.exit(0)
print("nan")
EOF
}
cd "$root/perf-data/workloads"
all="$(nproc)"
echo "machine: $all CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $("$bin/tidegate" --version 2>/dev/null || echo 'no tidegate'), tree $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')" | tee "$out/table.md"
run_tidegate() { # FILE WORKLOAD THREADS DIR
  mkdir -p "$4"
  "$bin/tidegate" run "$1" --workload "$2" --threads "$3" --data-items-dir "$4" --no-progress \
    >"$4.log" 2>&1 || echo "tidegate $2 t$3 failed (see $4.log)" >&2
  echo "$2 threads $3: $(throughput "$4") pods/s" >&2
}
for r in $(seq 1 "$rounds"); do
  [[ $kube_only == 0 ]] || break
  for t in $threads; do
    run_tidegate "${scaling%%:*}" "${scaling#*:}" "$t" "$out/scaling/t$t-r$r"
  done
  run_tidegate default.yaml "$workload" "$all" "$out/basic/r$r"
done
kube_tp="-"
if [[ $kube == 1 ]]; then
  pick perf.test
  pick etcd
  source "$root/kube-reference/lib.sh"
  mkdir -p "$out/kube"
  # kube's test apiserver writes its self-signed certificate beside its own source, at the
  # path compiled in (the build machine's module cache): make it exist on a machine without Go.
  ver="$(awk '$1 == "k8s.io/kubernetes" {print $2; exit}' "$root/kube-reference/go.mod")"
  mkdir -p "${GOMODCACHE:-$HOME/go/pkg/mod}/k8s.io/kubernetes@$ver/cmd/kube-apiserver/app/testing/testdata" 2>/dev/null || true
  tps=()
  for k in $(seq 1 "$kube_rounds"); do
    log="$out/kube-r$k.log"
    PATH="$bin:$PATH" timeout "${KUBE_RUN_TIMEOUT:-900}" "$bin/perf.test" -test.run '^$' \
      -test.bench "$(kube_bench_regex "$workload")" -test.benchtime 1x -test.timeout 60m \
      -config default.yaml -topic scaling -data-items-dir "$out/kube/r$k" -perf-scheduling-label-filter= \
      </dev/null >"$log" 2>&1 || echo "kube reported a failure (see $(basename "$log"))" >&2
    { grep -E '^(--- |FAIL|PASS|ok )' "$log" | head -20; tail -n 30 "$log"; } >"$log.short" || true
    mv "$log.short" "$log"
    tps+=("$(throughput "$out/kube/r$k")")
    echo "kube $workload round $k: ${tps[-1]} pods/s" >&2
  done
  kube_tp="$(python3 -c 'import statistics,sys; v=[float(x) for x in sys.argv[1:] if x!="nan"]; print(round(statistics.median(v)) if v else "nan")' "${tps[@]}")"
  kube_spread="$(printf '%s ' "${tps[@]}")"
fi
if [[ $kube_only == 1 ]]; then
  echo "kube-scheduler $workload, $all cores (GOMAXPROCS unset): median $kube_tp pods/s of $kube_rounds runs: $kube_spread" | tee -a "$out/table.md"
  exit 0
fi
KUBE_RUNS="$kube_spread" python3 - "$out" "$rounds" "$kube_tp" "$all" "${scaling#*:}" "$workload" $threads <<'EOF' | tee -a "$out/table.md"
import glob, json, statistics, sys
out, rounds, kube, allc, scaling, workload = sys.argv[1:7]
rounds, threads = int(rounds), sys.argv[7:]
def tp(d):
    for f in glob.glob(d + "/*.json"):
        for it in json.load(open(f)).get("dataItems") or []:
            if it["labels"].get("Metric") == "SchedulingThroughput":
                return it["data"]["Average"]
    return None
def med(dirs):
    v = [x for x in map(tp, dirs) if x]
    return (statistics.median(v), min(v), max(v)) if v else None
print(f"\n{scaling}, tidegate alone, {rounds} rounds\n")
print("| threads | pods/s (median) | spread | speed-up vs 1 thread |")
print("|---|---|---|---|")
base = None
for t in threads:
    m = med([f"{out}/scaling/t{t}-r{r}" for r in range(1, rounds + 1)])
    if not m:
        print(f"| {t} | - | - | - |"); continue
    base = base or m[0]
    print(f"| {t} | {m[0]:,.0f} | {m[1]:,.0f}–{m[2]:,.0f} | {m[0] / base:.2f}x |")
m = med([f"{out}/basic/r{r}" for r in range(1, rounds + 1)])
print(f"\n{workload}, {allc} threads / all cores\n")
import os
kruns = os.environ.get("KUBE_RUNS", "").split()
print("| tidegate pods/s (median of %d) | spread | kube-scheduler pods/s (median of %d) | kube runs | ratio |" % (rounds, len(kruns)))
print("|---|---|---|---|---|")
if m:
    ratio = f"{m[0] / float(kube):.0f}x" if kube not in ("-", "nan") else "-"
    print(f"| {m[0]:,.0f} | {m[1]:,.0f}–{m[2]:,.0f} | {kube} | {' '.join(kruns) or '-'} | {ratio} |")
EOF
