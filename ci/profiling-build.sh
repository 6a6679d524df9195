#!/usr/bin/env bash
# Builds `tidegate` for profiling: the `profiling` Cargo profile (release optimisation, full
# debug info) plus frame pointers, which a Cargo profile cannot ask for on stable Rust. The
# build goes to target/profiling-fp so that it does not invalidate the normal builds.
#
#   bash ci/profiling-build.sh
#   perf record -g target/profiling-fp/profiling/tidegate run ...     # or --flamegraph
set -euo pipefail
cd "$(dirname "$0")/.."
RUSTFLAGS="${RUSTFLAGS:-} -C force-frame-pointers=yes" \
  cargo build --profile profiling -p tidegate-bench --target-dir target/profiling-fp
echo "built target/profiling-fp/profiling/tidegate (debug info, frame pointers)"
