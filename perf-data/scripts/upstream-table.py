#!/usr/bin/env python3
# Usage: python3 perf-data/scripts/upstream-table.py perf-data/results/upstream-table/<commit> > .../table.md
"""Markdown table of every upstream performance workload from three runs (run1..run3 of
upstream-run3.sh): the median of the three Average and Perc50 pods/s, the config's threshold,
the ratio of the median Average to it, and the median p90 PreEnqueue. Reads the configs'
workload lists from run1/list-*.txt."""
import re, statistics, sys, pathlib

d = pathlib.Path(sys.argv[1])
CONFIGS = ["misc", "affinity", "topology_spreading", "event_handling", "default_preemption"]


def parse_runs(t):
    """name -> list of (avg, p50, preenq) or a FAILED message, over the three runs."""
    res = {}
    for r in (1, 2, 3):
        f = d / f"run{r}" / f"run-{t}.txt"
        if not f.exists():
            continue
        for l in f.read_text().splitlines():
            m = re.match(r"^(\S+/\S+)\s+(\d+)\s+(\d+)\s+\S+\s+\S+\s+(\S+ \S+)\s+", l)
            if m:
                res.setdefault(m.group(1), []).append((int(m.group(2)), int(m.group(3)), m.group(4)))
                continue
            m = re.match(r"^(\S+/\S+)\s+FAILED: (.*)$", l)
            if m:
                res.setdefault(m.group(1), []).append(("FAILED", m.group(2)[:80]))
    return res


def ns(v):
    """'70 ns' / '1.2 µs' -> nanoseconds."""
    num, unit = v.split()
    return float(num) * {"ns": 1, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}.get(unit, float("nan"))


print("| config | workload | threshold | Average pods/s (3 runs) | median Average | median Perc50 | ratio | p90 PreEnqueue (median) |")
print("|---|---|---:|---|---:|---:|---:|---:|")
for t in CONFIGS:
    lst = (d / "run1" / f"list-{t}.txt").read_text().splitlines()[1:]
    res = parse_runs(t)
    for l in lst:
        m = re.match(r"^(\S+)\s+(\S+)\s+(\S+)\s+(yes|skipped: .*)$", l)
        if not m:
            continue
        name, _labels, thr, runs = m.groups()
        if runs != "yes":
            why = runs.split("unsupported: ", 1)[-1]
            print(f"| {t} | {name} | {thr} | unsupported: {why} | | | | |")
            continue
        rs = res.get(name, [])
        ok = [x for x in rs if x[0] != "FAILED"]
        failed = [x for x in rs if x[0] == "FAILED"]
        if failed or len(ok) < 3:
            msg = failed[0][1] if failed else f"{len(ok)} of 3 runs"
            print(f"| {t} | {name} | {thr} | FAILED: {msg} | | | | |")
            continue
        avgs = [x[0] for x in ok]
        med_avg = statistics.median(avgs)
        med_p50 = statistics.median([x[1] for x in ok])
        pre = sorted(ok, key=lambda x: ns(x[2]))[1][2]
        ratio = f"{med_avg / float(thr):.1f}×" if thr != "-" else ""
        print(f"| {t} | {name} | {thr} | {' / '.join(map(str, avgs))} | {med_avg:.0f} | {med_p50:.0f} | {ratio} | {pre} |")
