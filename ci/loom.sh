#!/usr/bin/env bash
# loom models of the engine's concurrent protocols (activeQ shard push/pop/delete, and a pod's
# ungate racing its delete through the queue lock), run on the
# real code with loom's primitives swapped in by engine/src/sync.rs. A separate target folder
# keeps the loom build from invalidating the normal one.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUSTFLAGS="${RUSTFLAGS:-} --cfg loom"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/loom}"
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-3}"
cargo test -p tidegate-engine --test loom_active --test loom_gated --release -- --test-threads=1
