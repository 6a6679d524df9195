#!/usr/bin/env python3
"""Cut one scenario out of a kube-diff record, for a replay fixture.

Usage: cut-record.py RECORD.jsonl OUT.jsonl --namespace scenario-N [--namespace ...]

A record (`kube-reference/perf/record.go`) holds every scenario of a batch. The cut keeps:
- every line of the namespaces named (decisions, assignments, deletions, pod groups...);
- every node (`nodes` lines whole: a pod group's placement may name any node of the
  cluster, and a scenario's pods are kept off other scenarios' nodes by their node selector
  and taints, which do not depend on the pods left out);
- of the `dra` and `volumes` lines, the objects of those namespaces, the cluster-scoped ones
  named after them (`<namespace>-...`), every CSINode (one per node) and the in-flight
  allocations of those namespaces' claims (with the line's `pendingSet`); a line left empty
  is dropped;
- `gates` lines; not `op` lines (their counts are the whole batch's: the outcome check
  needs the batch).
`managedFields` are dropped everywhere. The replay of the cut judges the scenario's own
attempts as the batch's replay does.
"""

import argparse
import json
import sys


def strip(o):
    if isinstance(o, dict):
        o.pop("managedFields", None)
        for v in o.values():
            strip(v)
    elif isinstance(o, list):
        for v in o:
            strip(v)
    return o


def ours(obj, namespaces, kind):
    meta = obj.get("metadata", {}) if isinstance(obj, dict) else {}
    ns = meta.get("namespace")
    if ns:
        return ns in namespaces
    if kind == "csiNodes":
        return True
    name = meta.get("name", "")
    return any(name.startswith(n + "-") for n in namespaces)


def cut_objects(section, namespaces):
    out = {}
    for kind, items in section.items():
        if kind == "deleted":
            kept = [k for k in items if any(f"/{n}/" in k or f"/{n}-" in k for n in namespaces)]
        elif kind == "pending":
            kept = [p for p in items if p.get("claim", "").split("/")[0] in namespaces]
        elif isinstance(items, list):
            kept = [o for o in items if ours(o, namespaces, kind)]
        else:
            kept = items
        if kept:
            out[kind] = kept
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("record")
    ap.add_argument("out")
    ap.add_argument("--namespace", action="append", required=True)
    a = ap.parse_args()
    namespaces = set(a.namespace)
    kept = []
    with open(a.record) as f:
        for n, raw in enumerate(f, 1):
            try:
                line = json.loads(raw)
            except json.JSONDecodeError as e:
                sys.exit(f"{a.record}:{n}:{e.colno}: not JSON: {e.msg}")
            kind, ns = line.get("kind"), line.get("namespace", "")
            if ns:
                if ns in namespaces:
                    kept.append(strip(line))
                continue
            if kind in ("nodes", "gates", "nodeDeleted"):
                kept.append(strip(line))
            elif kind in ("dra", "volumes"):
                section = cut_objects(line.get(kind) or {}, namespaces)
                if section:
                    line[kind] = section
                    kept.append(strip(line))
    with open(a.out, "w") as f:
        for line in kept:
            f.write(json.dumps(line, separators=(",", ":")) + "\n")
    print(f"{a.out}: {len(kept)} lines", file=sys.stderr)


if __name__ == "__main__":
    main()
