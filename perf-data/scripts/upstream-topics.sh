#!/usr/bin/env bash
# Usage: bash perf-data/scripts/upstream-topics.sh OUTDIR ROOT...
#
# Runs every upstream scheduler_perf topic at integration size, unchanged: for each
# performance-config.yaml under each ROOT (a copy of kube's test/integration/scheduler_perf,
# e.g. the module cache's k8s.io/kubernetes@v1.37.2 copy, ../shared/upstream/scheduler_perf, or
# files fetched from kube's master), `tidegate list` and `tidegate run --label-filter
# integration-test`. Writes OUTDIR/<root>/<topic>.{list,run}.txt and OUTDIR/table.md (topic, test
# cases, integration workloads, ran, unsupported with reason, failed with the error; a config
# that does not load is a failed row with its error line). BIN: $TIDEGATE, else
# target/release/tidegate.
set -uo pipefail
out="${1:?OUTDIR}"; shift
bin="${TIDEGATE:-target/release/tidegate}"
mkdir -p "$out"
for root in "$@"; do
  rname="$(basename "$(cd "$root/.." && pwd)")-$(basename "$root")"
  while IFS= read -r cfg; do
    topic="${cfg#"$root"/}"; topic="${topic%/performance-config.yaml}"; topic="${topic//\//_}"
    mkdir -p "$out/$rname"
    "$bin" list "$cfg" --label-filter integration-test >"$out/$rname/$topic.list.txt" 2>&1
    echo "rc=$?" >>"$out/$rname/$topic.list.txt"
    timeout 900 "$bin" run "$cfg" --label-filter integration-test --timeout 120 --no-progress \
      >"$out/$rname/$topic.run.txt" 2>&1
    echo "rc=$?" >>"$out/$rname/$topic.run.txt"
  done < <(find "$root" -name performance-config.yaml | sort)
done
python3 "$(dirname "$0")/upstream-topics-table.py" "$out" >"$out/table.md"
cat "$out/table.md"
