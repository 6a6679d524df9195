#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ for SECONDS each (default 60), seeding each corpus from
# the project's own inputs. Skips cleanly when cargo-fuzz or a nightly toolchain is missing.
# A crash leaves its input in fuzz/artifacts/<target>/ and fails the script: reproduce with
# `cargo +nightly fuzz run <target> <file>`, fix, then keep the input in
# fuzz/regressions/<target>/ (the test suite replays those on stable).
#
# usage: ci/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz: cargo-fuzz is not installed (cargo install cargo-fuzz); skipping"
    exit 0
fi
if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    echo "fuzz: no nightly toolchain (rustup toolchain install nightly); skipping"
    exit 0
fi

secs=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(workload_config scheduler_config quantity manifest template queue_ops)
fi

# Seeds: our workload files, templates, scheduler configs and bad inputs; upstream's too when
# ../shared is there.
seed() {
    local t=$1 dir=fuzz/corpus/$1
    mkdir -p "$dir"
    local files=()
    case $t in
        workload_config)
            files=(perf-data/workloads/*.yaml perf-data/workloads/plugins/*.yaml tests/bad_inputs/*.yaml)
            [ -d ../shared/upstream/scheduler_perf ] &&
                files+=($(find ../shared/upstream/scheduler_perf -name '*config*.yaml' -not -path '*/templates/*'))
            ;;
        scheduler_config)
            files=($(grep -l -r 'KubeSchedulerConfiguration' perf-data tests/bad_inputs examples 2>/dev/null || true))
            ;;
        manifest | template)
            files=(perf-data/workloads/templates/*.yaml tests/bad_inputs/support/*.pod.yaml)
            [ -d ../shared/upstream/scheduler_perf/templates ] &&
                files+=(../shared/upstream/scheduler_perf/templates/*.yaml)
            ;;
        quantity)
            local i=0
            for q in 100m 1.5Gi 2e3 -1 0.1m 1Ei 500Mi 12345678901234567890 1e-9 .5 +3k 1n 0; do
                printf '%s' "$q" >"$dir/seed-$i"
                i=$((i + 1))
            done
            ;;
        queue_ops)
            # Add, Pop, Fail(rejected), NodeAdd, Advance, Pop ... with PopFromBackoffQ off and on.
            printf '\x00\x00\x05\x06\x00\x09\x00\x0c\x00\x0e\x90\x06\x00' >"$dir/seed-0"
            printf '\x01\x00\x11\x00\x05\x03\x05\x06\x00\x09\x01\x0e\xf0\x06\x00\x0b\x00' >"$dir/seed-1"
            ;;
    esac
    for f in "${files[@]}"; do
        [ -f "$f" ] && cp "$f" "$dir/$(echo "$f" | tr '/.' '__')"
    done
    if [ -d "fuzz/regressions/$t" ]; then
        cp fuzz/regressions/"$t"/* "$dir"/ 2>/dev/null || true
    fi
}

status=0
for t in "${targets[@]}"; do
    seed "$t"
    echo "fuzz: $t for ${secs}s"
    log=$(mktemp)
    if cargo +nightly fuzz run "$t" "fuzz/corpus/$t" -- \
        -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
        -print_final_stats=1 >"$log" 2>&1; then
        grep -E '^Done [0-9]+ runs|stat::number_of_executed_units' "$log" | sed "s/^/fuzz: $t: /" || true
    else
        status=1
        tail -40 "$log"
        echo "fuzz: $t FAILED; the input is in fuzz/artifacts/$t/"
    fi
    rm -f "$log"
done
exit $status
