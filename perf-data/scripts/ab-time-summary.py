"""Summarize binary-ab-time.sh output: per setting, the median pods/s (all runs listed), the
median CPU time (user + system, s) and the median minor page faults.

    python3 perf-data/scripts/ab-time-summary.py OUT.txt
"""
import collections,statistics,sys
d=collections.defaultdict(list); cpu=collections.defaultdict(list); flt=collections.defaultdict(list)
for l in open(sys.argv[1]):
  k,v,tm=l.strip().split('|'); d[k].append(int(v or 0)); c,mj,mn=tm.split(); cpu[k].append(float(c)); flt[k].append(int(mn))
for k in d: print(f"{k:45s} pods/s med {statistics.median(d[k]):8.0f} {sorted(d[k])}  cpu med {statistics.median(cpu[k]):.2f}s  minflt med {statistics.median(flt[k]):.0f}")
