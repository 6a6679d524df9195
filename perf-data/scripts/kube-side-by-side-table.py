#!/usr/bin/env python3
# Usage: python3 perf-data/scripts/kube-side-by-side-table.py DIR WORKLOAD...
# The table of kube-side-by-side.sh from DIR/{kube,tidegate}/rK/*.json (perf-dash data items):
# SchedulingThroughput Average, and the p90 of PreEnqueue and of the scheduling attempt
# (kube's bucket-interpolated percentiles; tidegate's "buckets" estimator, the same method);
# where either side reports pod-group attempts, a second table: the p90 of the pod group's
# scheduling attempt (scheduler_podgroup_scheduling_attempt_duration_seconds, scheduled) and
# of its algorithm (scheduler_podgroup_scheduling_algorithm_duration_seconds).
import glob
import json
import os
import statistics
import sys


def items(path):
    out = []
    for f in glob.glob(os.path.join(path, "*.json")):
        with open(f) as fh:
            out.extend(json.load(fh).get("dataItems") or [])
    return out


def pick(its, workload, metric, **labels):
    for it in its:
        l = it["labels"]
        name = l.get("Name", "")
        if not name.startswith(f"BenchmarkPerfScheduling/{workload}/") and name != f"BenchmarkPerfScheduling/{workload}":
            continue
        if l.get("Metric") != metric:
            continue
        if l.get("estimator", "buckets") not in ("buckets", "not applicable"):
            continue
        if all(l.get(k) == v for k, v in labels.items()):
            return it["data"]
    return None


def series(d, side, workload, metric, stat, **labels):
    vals = []
    for r in sorted(glob.glob(os.path.join(d, side, "r*"))):
        data = pick(items(r), workload, metric, **labels)
        if data is not None and stat in data:
            vals.append(data[stat])
    return vals


def fmt(vals, unit=""):
    if not vals:
        return "–"
    m = statistics.median(vals)
    lo, hi = min(vals), max(vals)
    if unit == "ms":
        return f"{m:.3g} ms ({lo:.3g}–{hi:.3g})"
    if hi < 10:
        # Below 10 pods/s (kube's slowest workloads) whole numbers would hide the figure.
        return f"{m:.3g} ({lo:.3g}–{hi:.3g})"
    return f"{m:,.0f} ({lo:,.0f}–{hi:,.0f})"


def ratio(a, b):
    if not a or not b or statistics.median(b) == 0:
        return "–"
    return f"{statistics.median(a) / statistics.median(b):,.1f}x"


def main():
    d, workloads = sys.argv[1], sys.argv[2:]
    print("| workload | kube pods/s | tidegate pods/s | ratio | kube p90 PreEnqueue | tidegate p90 PreEnqueue | kube p90 attempt | tidegate p90 attempt | attempt ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for w in workloads:
        kt = series(d, "kube", w, "SchedulingThroughput", "Average")
        tt = series(d, "tidegate", w, "SchedulingThroughput", "Average")
        pe = dict(extension_point="PreEnqueue")
        kp = series(d, "kube", w, "scheduler_framework_extension_point_duration_seconds", "Perc90", **pe)
        tp = series(d, "tidegate", w, "scheduler_framework_extension_point_duration_seconds", "Perc90", **pe)
        at = dict(result="scheduled")
        ka = series(d, "kube", w, "scheduler_scheduling_attempt_duration_seconds", "Perc90", **at)
        ta = series(d, "tidegate", w, "scheduler_scheduling_attempt_duration_seconds", "Perc90", **at)
        both_pe = kp and tp
        print(
            f"| {w} | {fmt(kt)} | {fmt(tt)} | {ratio(tt, kt)} | "
            f"{fmt(kp, 'ms') if both_pe else '–'} | {fmt(tp, 'ms') if both_pe else '–'} | "
            f"{fmt(ka, 'ms')} | {fmt(ta, 'ms')} | {ratio(ka, ta)} |"
        )
    durations = []
    for w in workloads:
        kd = series(d, "kube", w, "SchedulingDuration", "Duration")
        td = series(d, "tidegate", w, "SchedulingDuration", "Duration")
        kt = series(d, "kube", w, "SchedulingThroughput", "Average")
        if kd and td and not kt:
            durations.append(f"| {w} | {statistics.median(kd):.3g} s ({min(kd):.3g}–{max(kd):.3g}) | "
                             f"{statistics.median(td):.3g} s ({min(td):.3g}–{max(td):.3g}) | {ratio(kd, td)} |")
    if durations:
        print()
        print("kube reported no SchedulingThroughput (every pod bound within its first 1 s sample); "
              "SchedulingDuration instead (the collection window, same pods on both sides):")
        print()
        print("| workload | kube SchedulingDuration | tidegate SchedulingDuration | kube / tidegate |")
        print("|---|---|---|---|")
        for l in durations:
            print(l)
    groups = []
    for w in workloads:
        sc = dict(result="scheduled")
        ka = series(d, "kube", w, "scheduler_podgroup_scheduling_attempt_duration_seconds", "Perc90", **sc)
        ta = series(d, "tidegate", w, "scheduler_podgroup_scheduling_attempt_duration_seconds", "Perc90", **sc)
        kg = series(d, "kube", w, "scheduler_podgroup_scheduling_algorithm_duration_seconds", "Perc90")
        tg = series(d, "tidegate", w, "scheduler_podgroup_scheduling_algorithm_duration_seconds", "Perc90")
        if ka or ta or kg or tg:
            groups.append(f"| {w} | {fmt(ka, 'ms')} | {fmt(ta, 'ms')} | {ratio(ka, ta)} | "
                          f"{fmt(kg, 'ms')} | {fmt(tg, 'ms')} | {ratio(kg, tg)} |")
    if groups:
        print()
        print("| workload | kube p90 podgroup attempt | tidegate p90 podgroup attempt | ratio | kube p90 podgroup algorithm | tidegate p90 podgroup algorithm | ratio |")
        print("|---|---|---|---|---|---|---|")
        for g in groups:
            print(g)
    print()
    print("Medians of the rounds, (min–max) in brackets; ratio = tidegate / kube for throughput, kube / tidegate for the attempt p90. "
          "Percentiles of durations are bucket-interpolated on both sides (kube's buckets). '–': not reported by both.")


main()
