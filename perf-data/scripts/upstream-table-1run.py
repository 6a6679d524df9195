#!/usr/bin/env python3
# Usage: python3 perf-data/scripts/upstream-table-1run.py perf-data/results/upstream-table/<commit>
"""Markdown table of every upstream performance workload: supported or not, our Average and
Perc50 pods/s beside the config's threshold, from ONE run (upstream-run.sh's output folder);
upstream-table.py is the three-run version."""
import re, sys, pathlib
d = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
rows = []
for t in ["misc", "affinity", "topology_spreading", "event_handling", "default_preemption"]:
    lst = (d / f"list-{t}.txt").read_text().splitlines()[1:]
    run = (d / f"run-{t}.txt").read_text().splitlines() if (d / f"run-{t}.txt").exists() else []
    res = {}
    for l in run:
        m = re.match(r"^(\S+/\S+)\s+(\d+|-)\s+(\d+|-)\s+", l)
        if m:
            res[m.group(1)] = (m.group(2), m.group(3))
        m = re.match(r"^(\S+/\S+)\s+FAILED: (.*)$", l)
        if m:
            res[m.group(1)] = ("FAILED", m.group(2)[:90])
    for l in lst:
        m = re.match(r"^(\S+)\s+(\S+)\s+(\S+)\s+(yes|skipped: .*)$", l)
        if not m:
            continue
        name, labels, thr, runs = m.groups()
        if runs != "yes":
            rows.append((t, name, thr, "unsupported: " + runs.split("unsupported: ", 1)[1], "", ""))
            continue
        avg, p50 = res.get(name, ("not run", ""))
        ratio = ""
        if thr not in ("-",) and avg.isdigit():
            ratio = f"{int(avg) / float(thr):.1f}×"
        rows.append((t, name, thr, avg, p50, ratio))
print("| config | workload | threshold | Average pods/s | Perc50 | ratio |")
print("|---|---|---:|---:|---:|---:|")
for r in rows:
    print("| " + " | ".join(r) + " |")
