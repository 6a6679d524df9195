#!/usr/bin/env bash
# Usage: bash perf-data/scripts/multicore-scaling.sh [--bundle DIR] [--rounds N] [--threads "1 2 4 8 16"] [--out DIR] [--no-kube]
#
# Multi-core scaling on a machine with many cores: tidegate on SchedulingBasic/5000Nodes_10000Pods
# (perf-data/workloads/default.yaml) at each thread count, N rounds (3 by default), alternated
# round by round; then, unless --no-kube, one run of the real kube-scheduler (kube's own
# scheduler_perf, kube-reference/) on the same workload file with every core (GOMAXPROCS
# unset). Prints one table (threads, median pods/s, spread, speed-up over 1 thread, kube) and
# writes the data items and logs under DIR (default $OUT, else target/multicore-scaling).
#
# The binaries come from --bundle DIR (tidegate, and perf.test and etcd, each possibly .xz),
# so that a machine without Rust or Go can run it (the device machine: build the bundle here
# with `perf-data/scripts/multicore-scaling.sh --make-bundle DIR`); default: target/release
# and target/kube-reference.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bundle="" rounds=3 threads="1 2 4 8 16" out="${OUT:-$root/target/multicore-scaling}" kube=1 make=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bundle) bundle="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --no-kube) kube=0; shift ;;
    --make-bundle) make="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "multicore-scaling.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
workload="SchedulingBasic/5000Nodes_10000Pods"

if [[ -n "$make" ]]; then
  mkdir -p "$make"
  (cd "$root" && cargo build --release -p tidegate-bench --quiet)
  cp "$root/target/release/tidegate" "$make/tidegate" && strip "$make/tidegate"
  (cd "$root/kube-reference" && go test -c -ldflags='-s -w' -o "$make/perf.test" ./perf &&
    go build -ldflags='-s -w' -o "$make/etcd" ./cmd/etcd)
  xz -f -T2 -6 "$make/perf.test" "$make/etcd"
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
pick tidegate
throughput() { # DIR: SchedulingThroughput Average of the data items there
  python3 - "$1" <<'EOF'
import glob, json, sys
for f in glob.glob(sys.argv[1] + "/*.json"):
    for it in json.load(open(f)).get("dataItems", []):
        if it["labels"].get("Metric") == "SchedulingThroughput":
            print(round(it["data"]["Average"])); sys.exit(0)
print("nan")
EOF
}
cd "$root/perf-data/workloads"
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); tidegate $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')" | tee "$out/table.md"
for r in $(seq 1 "$rounds"); do
  for t in $threads; do
    d="$out/tidegate/t$t-r$r"
    mkdir -p "$d"
    "$bin/tidegate" run default.yaml --workload "$workload" --threads "$t" --data-items-dir "$d" \
      --no-progress >"$out/logs/tidegate-t$t-r$r.log" 2>&1 || echo "tidegate t$t r$r failed" >&2
    echo "round $r threads $t: $(throughput "$d") pods/s" >&2
  done
done
kube_tp="-"
if [[ $kube == 1 ]]; then
  pick perf.test
  pick etcd
  source "$root/kube-reference/lib.sh"
  mkdir -p "$out/kube"
  PATH="$bin:$PATH" timeout "${KUBE_RUN_TIMEOUT:-900}" "$bin/perf.test" -test.run '^$' \
    -test.bench "$(kube_bench_regex "$workload")" -test.benchtime 1x -test.timeout 60m \
    -config default.yaml -topic scaling -data-items-dir "$out/kube" -perf-scheduling-label-filter= \
    </dev/null >"$out/logs/kube.log" 2>&1 || echo "kube reported a failure (see logs/kube.log)" >&2
  kube_tp="$(throughput "$out/kube")"
fi
python3 - "$out" "$rounds" "$kube_tp" $threads <<'EOF' | tee -a "$out/table.md"
import glob, json, statistics, sys
out, rounds, kube, threads = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
def tp(d):
    for f in glob.glob(d + "/*.json"):
        for it in json.load(open(f)).get("dataItems", []):
            if it["labels"].get("Metric") == "SchedulingThroughput":
                return it["data"]["Average"]
    return None
print("\n| threads | tidegate pods/s (median) | spread | speed-up vs 1 thread | kube-scheduler, all cores |")
print("|---|---|---|---|---|")
base = None
for t in threads:
    v = [x for x in (tp(f"{out}/tidegate/t{t}-r{r}") for r in range(1, rounds + 1)) if x]
    if not v:
        print(f"| {t} | - | - | - | |"); continue
    m = statistics.median(v)
    base = base or m
    print(f"| {t} | {m:,.0f} | {min(v):,.0f}–{max(v):,.0f} | {m / base:.2f}x | {kube if t == threads[-1] else ''} |")
EOF
