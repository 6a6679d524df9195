#!/usr/bin/env bash
# Supply-chain checks of the dependency tree: `cargo deny check` (advisories, licences, bans,
# sources; configured by deny.toml) where cargo-deny is installed, else `cargo audit`
# (RustSec advisories) where that is; skips cleanly where neither is, or where the advisory
# database cannot be fetched (no network).
set -euo pipefail
cd "$(dirname "$0")/.."

if cargo deny --version >/dev/null 2>&1; then
    # Licences, bans and sources need no network.
    cargo deny --log-level error check licenses bans sources
    # Advisories need the RustSec database: fetched when reachable.
    if cargo deny --log-level error fetch db >/dev/null 2>&1; then
        cargo deny --log-level error check advisories
    else
        echo "audit: the advisory database cannot be fetched (offline?); advisories skipped"
    fi
elif cargo audit --version >/dev/null 2>&1; then
    if ! cargo audit; then
        echo "audit: cargo audit found advisories (or could not fetch its database)"
        exit 1
    fi
else
    echo "audit: neither cargo-deny nor cargo-audit is installed (cargo install cargo-deny); skipping"
fi
