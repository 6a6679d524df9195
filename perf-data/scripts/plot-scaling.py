# Usage: python3 perf-data/scripts/plot-scaling.py results.tsv out.svg
"""Draws results.tsv (nodes, threads, pods/s[, runs]) as one SVG with two panels: throughput
against nodes (log scale, one line per thread count) and throughput against rayon threads (log2
scale, one line per node count). The first comment line of the TSV (commit, date, machine) is
printed under the title. Standard library only."""
import math
import sys
from html import escape

lines_in = [l.rstrip("\n") for l in open(sys.argv[1]) if l.strip()]
header = next((l[1:].strip() for l in lines_in if l.startswith("#")), "")
rows = [l.split("\t") for l in lines_in if not l.startswith(("#", "nodes"))]
pts = [(int(r[0]), int(r[1]), float(r[2])) for r in rows]
colors = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2"]
PW, PH, ML, MR, MT, MB, GAP = 420, 300, 70, 110, 70, 50, 20
W, H = 2 * (ML + PW + MR) + GAP, MT + PH + MB
# Log-scale throughput: equal ratios look equal, so scaling reads as slope.
ylo, yhi = math.log10(min(v for _, _, v in pts) / 1.3), math.log10(max(v for _, _, v in pts) * 1.3)
yticks = [m * 10**e for e in range(int(ylo) - 1, int(yhi) + 2) for m in (1, 2, 5)
          if ylo <= math.log10(m * 10**e) <= yhi]
out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif">',
       f'<text x="{ML}" y="22" font-size="15" font-weight="bold">tidegate: SchedulingBasic-shaped throughput (ScalingCurve)</text>',
       f'<text x="{ML}" y="40" font-size="11" fill="#555">{escape(header)}</text>']


def panel(x_off, key_of_x, key_of_line, xlabel, fmt_x, fmt_line, logf):
    series = {}
    for n, t, v in pts:
        series.setdefault(key_of_line(n, t), []).append((key_of_x(n, t), v))
    xs = sorted({x for s in series.values() for x, _ in s})
    x0, x1 = logf(xs[0]), logf(xs[-1])
    span = (x1 - x0) or 1.0
    sx = lambda x: x_off + ML + (logf(x) - x0) / span * PW
    sy = lambda v: MT + PH * (1 - (math.log10(v) - ylo) / (yhi - ylo))
    o = [f'<rect x="{x_off+ML}" y="{MT}" width="{PW}" height="{PH}" fill="none" stroke="#999"/>']
    for v in yticks:
        o.append(f'<line x1="{x_off+ML}" x2="{x_off+ML+PW}" y1="{sy(v):.1f}" y2="{sy(v):.1f}" stroke="#eee"/>'
                 f'<text x="{x_off+ML-5}" y="{sy(v)+3:.1f}" font-size="10" text-anchor="end">{v:,.0f}</text>')
    for x in xs:
        o.append(f'<text x="{sx(x):.1f}" y="{MT+PH+15}" font-size="10" text-anchor="middle">{fmt_x(x)}</text>')
    o.append(f'<text x="{x_off+ML+PW/2}" y="{H-12}" font-size="11" text-anchor="middle">{xlabel}</text>')
    o.append(f'<text x="{x_off+16}" y="{MT+PH/2}" font-size="11" transform="rotate(-90 {x_off+16} {MT+PH/2})" text-anchor="middle">pods/s (Average, log scale)</text>')
    for i, (k, s) in enumerate(sorted(series.items())):
        c = colors[i % len(colors)]
        s.sort()
        o.append(f'<polyline fill="none" stroke="{c}" stroke-width="2" points="' + " ".join(f"{sx(x):.1f},{sy(v):.1f}" for x, v in s) + '"/>')
        o += [f'<circle cx="{sx(x):.1f}" cy="{sy(v):.1f}" r="3" fill="{c}"/>' for x, v in s]
        o.append(f'<rect x="{x_off+ML+PW+12}" y="{MT+16*i}" width="10" height="10" fill="{c}"/>'
                 f'<text x="{x_off+ML+PW+26}" y="{MT+9+16*i}" font-size="11">{fmt_line(k)}</text>')
    return o


out += panel(0, lambda n, t: n, lambda n, t: t, "nodes (log scale)", lambda n: f"{n:,}",
             lambda t: f"{t} thread{'s' if t > 1 else ''}", math.log10)
out += panel(ML + PW + MR + GAP, lambda n, t: t, lambda n, t: n, "rayon threads (log2 scale)", str,
             lambda n: f"{n:,} nodes", math.log2)
out.append("</svg>")
open(sys.argv[2], "w").write("\n".join(out) + "\n")
