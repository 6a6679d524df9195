#!/usr/bin/env python3
"""Medians of binary-ab.sh output: per thread count, A's and B's median pods/s and B/A."""
import statistics
import sys
from collections import defaultdict

runs = defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) != 4 or f[0] == "round":
        continue
    try:
        runs[(int(f[1]), f[2])].append(float(f[3].replace(",", "")))
    except ValueError:
        continue
for t in sorted({t for t, _ in runs}):
    a, b = runs[(t, "A")], runs[(t, "B")]
    if not a or not b:
        continue
    ma, mb = statistics.median(a), statistics.median(b)
    fmt = lambda xs: " / ".join(f"{x:,.0f}" for x in xs)
    print(f"threads {t}: A {fmt(a)} -> median {ma:,.0f}; B {fmt(b)} -> median {mb:,.0f}; B/A {mb / ma:.2f}")
