#!/usr/bin/env bash
# The whole test suite: formatting, lints, and every test of the workspace.
# This is the README's test command; .ci/run calls it.
set -euo pipefail
cd "$(dirname "$0")/.."

if cargo fmt --version >/dev/null 2>&1; then
  cargo fmt --all -- --check
else
  echo "ci/test.sh: rustfmt not installed; skipping the format check"
fi
if cargo clippy --version >/dev/null 2>&1; then
  cargo clippy --workspace --all-targets --quiet -- -D warnings
else
  echo "ci/test.sh: clippy not installed; skipping lints"
fi
cargo test --workspace
