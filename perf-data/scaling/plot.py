"""Draws results.tsv (nodes, threads, pods/s) as an SVG line chart: throughput against nodes
(log scale), one line per thread count. No dependencies beyond the standard library."""
import math, sys
rows = [l.split("\t") for l in open(sys.argv[1]) if l.strip() and not l.startswith(("#", "nodes"))]
lines = {}
for n, t, v in rows:
    lines.setdefault(t, []).append((int(n), float(v)))
W, H, ML, MR, MT, MB = 640, 360, 80, 120, 40, 50
xs = [math.log10(n) for pts in lines.values() for n, _ in pts]
ys = [v for pts in lines.values() for _, v in pts]
x0, x1, y1 = min(xs), max(xs), max(ys) * 1.1
sx = lambda n: ML + (math.log10(n) - x0) / (x1 - x0) * (W - ML - MR)
sy = lambda v: MT + (H - MT - MB) * (1 - v / y1)
colors = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e"]
out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}">',
       f'<text x="{ML}" y="22" font-size="14" font-weight="bold">tidegate: SchedulingBasic-shaped throughput against cluster size</text>',
       f'<rect x="{ML}" y="{MT}" width="{W-ML-MR}" height="{H-MT-MB}" fill="none" stroke="#999"/>']
for n in sorted({n for pts in lines.values() for n, _ in pts}):
    out.append(f'<text x="{sx(n):.1f}" y="{H-MB+15}" font-size="10" text-anchor="middle">{n:,}</text>')
for i in range(5):
    v = y1 * i / 4
    out.append(f'<line x1="{ML}" x2="{W-MR}" y1="{sy(v):.1f}" y2="{sy(v):.1f}" stroke="#eee"/>'
               f'<text x="{ML-5}" y="{sy(v)+3:.1f}" font-size="10" text-anchor="end">{v:,.0f}</text>')
out.append(f'<text x="{(ML+W-MR)/2}" y="{H-12}" font-size="11" text-anchor="middle">nodes (log scale)</text>')
out.append(f'<text x="14" y="{H/2}" font-size="11" transform="rotate(-90 14 {H/2})" text-anchor="middle">pods/s (Average)</text>')
for i, (t, pts) in enumerate(sorted(lines.items())):
    c = colors[i % len(colors)]
    pts.sort()
    out.append(f'<polyline fill="none" stroke="{c}" stroke-width="2" points="' + " ".join(f"{sx(n):.1f},{sy(v):.1f}" for n, v in pts) + '"/>')
    out += [f'<circle cx="{sx(n):.1f}" cy="{sy(v):.1f}" r="3" fill="{c}"/>' for n, v in pts]
    out.append(f'<rect x="{W-MR+12}" y="{MT+16*i}" width="10" height="10" fill="{c}"/><text x="{W-MR+26}" y="{MT+9+16*i}" font-size="11">{t} thread(s)</text>')
out.append("</svg>")
open(sys.argv[2], "w").write("\n".join(out) + "\n")
