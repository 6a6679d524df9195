#!/usr/bin/env bash
# Miri over the engine's concurrent queue structures (activeQ shards and index, the gated set,
# the unschedulable index), which checks the lock-free crates they build on (papaya,
# arc-swap) as we use them, and over the engine's one unsafe block (the NodeInfo prefetch
# hint). Tests shrink under cfg(miri).
# Skips cleanly where Miri is not installed.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! cargo +nightly miri --version >/dev/null 2>&1; then
  echo "ci/miri.sh: Miri is not installed (rustup +nightly component add miri); skipping"
  exit 0
fi
export MIRIFLAGS="${MIRIFLAGS:--Zmiri-disable-isolation -Zmiri-permissive-provenance}"
cargo +nightly miri test -p tidegate-engine --lib -- queue::active queue::unschedulable queue::tests \
  framework::node_info::tests::prefetch_changes_nothing
