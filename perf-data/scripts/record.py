#!/usr/bin/env python3
# Usage: python3 perf-data/scripts/record.py CONFIG WORKLOAD --out perf-data/results/NAME [--runs 3] [--bin BIN] [-- EXTRA_TIDEGATE_ARGS]
"""Runs one workload N times with `tidegate run`, keeps every data-items file, and prints the
medians of throughput (Average, Perc50) and of the exact/bucket p90 PreEnqueue duration.

Run from the repository root. BIN defaults to $TIDEGATE, else target/release/tidegate. Writes
runN.json (the data items of run N) and summary.json (every run and the medians) under --out.
"""
import argparse, json, os, statistics, subprocess, sys, tempfile, glob, shutil

ap = argparse.ArgumentParser()
ap.add_argument("config")
ap.add_argument("workload")
ap.add_argument("--runs", type=int, default=3)
ap.add_argument("--out", required=True, help="folder for the data-items files of every run")
ap.add_argument("--bin", default=os.environ.get("TIDEGATE", "target/release/tidegate"))
ap.add_argument("extra", nargs="*")
a = ap.parse_args()

os.makedirs(a.out, exist_ok=True)
rows = []
for i in range(a.runs):
    tmp = tempfile.mkdtemp()
    subprocess.run([a.bin, "run", a.config, "--workload", a.workload, "--data-items-dir", tmp, *a.extra],
                   check=True, stdout=subprocess.DEVNULL)
    (f,) = glob.glob(os.path.join(tmp, "*.json"))
    dst = os.path.join(a.out, f"run{i + 1}.json")
    shutil.move(f, dst)
    items = json.load(open(dst))["dataItems"]
    tp = next(x for x in items if x["labels"]["Metric"] == "SchedulingThroughput")
    def pe(est):
        return next(x for x in items
                    if x["labels"]["Metric"] == "scheduler_framework_extension_point_duration_seconds"
                    and x["labels"].get("extension_point") == "PreEnqueue"
                    and x["labels"].get("estimator") == est)["data"]["Perc90"]
    rows.append(dict(avg=tp["data"]["Average"], p50=tp["data"]["Perc50"],
                     pe_exact_ns=pe("exact") * 1e6, pe_buckets_ms=pe("buckets"),
                     interval=tp["labels"]["SamplingInterval"]))
med = {k: statistics.median(r[k] for r in rows) for k in ("avg", "p50", "pe_exact_ns", "pe_buckets_ms")}
summary = dict(config=a.config, workload=a.workload, runs=rows, median=med)
json.dump(summary, open(os.path.join(a.out, "summary.json"), "w"), indent=2)
print(json.dumps(summary, indent=2))
