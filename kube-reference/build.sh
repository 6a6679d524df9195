#!/usr/bin/env bash
# Builds the reference side once: etcd (etcd's own server at the version kube's module
# requires) and perf.test (kube's scheduler_perf with the workload file as a flag), into
# $KUBE_REF_OUT (default: target/kube-reference of the repository; ignored by git). A build is
# reused until go.mod, go.sum or a Go file here changes. Prints the output folder.
#
# Usage: bash kube-reference/build.sh
# Needs Go (go.mod's version) and the Go module proxy; the first build takes about 6 minutes
# on 2 cores and fills about 3.5 GB of Go build cache.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="${KUBE_REF_OUT:-$root/target/kube-reference}"
mkdir -p "$out"
key=$(cd "$here" && cat go.mod go.sum $(find . -name '*.go' | sort) | sha256sum | cut -c1-16)
if [[ -x "$out/etcd" && -x "$out/perf.test" && "$(cat "$out/key" 2>/dev/null)" == "$key" ]]; then
  echo "$out"
  exit 0
fi
command -v go >/dev/null || { echo "kube-reference/build.sh: Go is not installed" >&2; exit 2; }
cd "$here"
echo "kube-reference: building etcd and kube's scheduler_perf ($(go version))" >&2
go build -o "$out/etcd" ./cmd/etcd
go test -c -o "$out/perf.test" ./perf
echo "$key" >"$out/key"
echo "$out"
