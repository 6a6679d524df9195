#!/usr/bin/env bash
# Builds side by side, alternated in each round, with each run's CPU time and page faults:
#   bash perf-data/scripts/binary-ab-time.sh CONFIG WORKLOAD "THREADS..." ROUNDS BIN... > OUT.txt
# Prints `t<threads> <binary name>|<pods/s>|<user+sys s> <major faults> <minor faults>`;
# summarize with ab-time-summary.py.
cfg=$1 w=$2 ths=$3 rounds=$4; shift 4
for r in $(seq 1 $rounds); do for t in $ths; do for b in "$@"; do
  out=$( { /usr/bin/time -f "TIME %U %S %F %R" $b run $cfg --workload $w --threads $t --no-progress; } 2>&1 )
  v=$(echo "$out" | awk -v w=$w '$1==w{print $2}')
  tm=$(echo "$out" | awk '/^TIME/{print $2+$3, $4, $5}')
  echo "t$t $(basename $b)|$v|$tm"
done; done; done
