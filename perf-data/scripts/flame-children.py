#!/usr/bin/env python3
"""Where a frame's samples go, from an inferno flamegraph SVG.

    python3 perf-data/scripts/flame-children.py FLAME.svg PATTERN [DEPTH]

Finds the frames whose name contains PATTERN (the widest, and every other not inside it),
and prints their children down to DEPTH levels (default 2), with sample counts.
"""
import html
import re
import sys

svg, pattern = sys.argv[1], sys.argv[2]
depth = int(sys.argv[3]) if len(sys.argv) > 3 else 2
text = open(svg).read()
pat = re.compile(
    r'<title>(.*?) \(([\d,]+) samples?, [\d.]+%\)</title><rect x="([\d.]+)%" y="([\d.]+)" width="([\d.]+)%"'
)
rows = [
    (html.unescape(n), int(c.replace(",", "")), float(x), float(y), float(w))
    for n, c, x, y, w in pat.findall(text)
]
if not rows:
    sys.exit(f"{svg}: no frames found (not an inferno SVG?)")
step = min(abs(a[3] - b[3]) for a in rows for b in rows[:50] if a[3] != b[3])
hits = sorted((r for r in rows if pattern in r[0]), key=lambda r: -r[1])
roots = []
for r in hits:
    if not any(o[2] <= r[2] + 1e-9 and r[2] + r[4] <= o[2] + o[4] + 1e-9 and o[3] > r[3] for o in roots):
        roots.append(r)


def children(parent):
    x0, x1, y = parent[2], parent[2] + parent[4], parent[3]
    return sorted(
        (r for r in rows if abs(r[3] - (y - step)) < 1e-6 and x0 - 1e-9 <= r[2] and r[2] + r[4] <= x1 + 1e-9),
        key=lambda r: -r[1],
    )


def show(frame, level):
    print(f"{'  ' * level}{frame[1]:6} {frame[0][:150]}")
    if level < depth:
        for c in children(frame):
            show(c, level + 1)


for r in roots:
    show(r, 0)
