# SPDX-License-Identifier: MIT
"""A ratio chart as a standalone SVG file, written without any plotting
library: one line per comparison, the median as a dot, the min-max of the
paired runs as an error bar, the block's A-vs-A noise floor as a grey band
around 1.0, and a tick at the target. Differences inside the noise floor are
drawn hollow and grey and labelled as such."""

from xml.sax.saxutils import escape

GREEN, RED, GREY, BAND = "#2e7d32", "#c62828", "#8a8a8a", "#e6e6e6"


def chart(rows, title, subtitle=""):
    """rows: dicts with label, median, lo, hi, noise, verdict ("faster",
    "slower", "noise"), target (0 for none), scale (whether the row's median
    sets the axis; default True), and optionally heading (a section title
    line instead of a comparison). Returns the SVG text."""
    data = [r for r in rows if not r.get("heading")]
    # The axis is centred on 1.0 and spans the medians and targets (not the
    # whiskers, which one noisy row could stretch over everything); bars and
    # bands beyond it are cut at the edge and marked with an arrow.
    scaled = [r for r in data if r.get("scale", True)] or data
    reach = max([abs(r["median"] - 1) for r in scaled] +
                [abs(r["target"] - 1) for r in scaled if r["target"]])
    span = min(max(reach * 1.3 + 0.01, 0.06), 0.5)
    x_lo, x_hi = 1 - span, 1 + span
    step = nice_step(2 * span)
    label_w, plot_w, value_w = 500, 420, 250
    line_h, top = 20, 64
    height = top + line_h * len(rows) + 70
    width = label_w + plot_w + value_w

    def x(v):
        v = min(max(v, x_lo), x_hi)
        return label_w + (v - x_lo) / (x_hi - x_lo) * plot_w

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="10" y="20" font-size="15" font-weight="bold">{escape(title)}</text>',
           f'<text x="10" y="40" fill="#444">{escape(subtitle)}</text>']
    y0, y1 = top - 6, top + line_h * len(rows)
    # Grid and axis labels.
    v = round((x_lo // step) * step, 6)
    while v <= x_hi + 1e-9:
        if v >= x_lo - 1e-9:
            colour = "#444" if abs(v - 1) < 1e-9 else "#ddd"
            out.append(f'<line x1="{x(v):.1f}" y1="{y0}" x2="{x(v):.1f}" y2="{y1}" stroke="{colour}"/>')
            out.append(f'<text x="{x(v):.1f}" y="{y1 + 16}" text-anchor="middle">{v:.2f}</text>')
        v = round(v + step, 6)
    out.append(f'<text x="{label_w + plot_w / 2:.0f}" y="{y1 + 34}" text-anchor="middle" fill="#444">'
               'speed relative to the baseline (&gt; 1: faster); bar: min–max of the paired runs; '
               'grey band: A-vs-A noise floor</text>')
    for i, r in enumerate(rows):
        yc = top + line_h * i + line_h / 2
        if r.get("heading"):
            out.append(f'<text x="10" y="{yc + 4:.1f}" font-weight="bold">{escape(r["heading"])}</text>')
            continue
        out.append(f'<text x="{label_w - 8}" y="{yc + 4:.1f}" text-anchor="end">'
                   f'{escape(r["label"])}</text>')
        n = r["noise"]
        out.append(f'<rect x="{x(1 - n):.1f}" y="{yc - 8:.1f}" width="{x(1 + n) - x(1 - n):.1f}" '
                   f'height="16" fill="{BAND}"/>')
        colour = {"faster": GREEN, "slower": RED}.get(r["verdict"], GREY)
        out.append(f'<line x1="{x(r["lo"]):.1f}" y1="{yc:.1f}" x2="{x(r["hi"]):.1f}" y2="{yc:.1f}" '
                   f'stroke="{colour}" stroke-width="2"/>')
        for end, sign in ((r["lo"], -1), (r["hi"], 1)):
            if x_lo <= end <= x_hi:
                out.append(f'<line x1="{x(end):.1f}" y1="{yc - 4:.1f}" x2="{x(end):.1f}" y2="{yc + 4:.1f}" '
                           f'stroke="{colour}" stroke-width="2"/>')
            else:  # cut at the axis: an arrow head pointing outwards
                tip = x(end)
                out.append(f'<path d="M{tip:.1f},{yc:.1f} l{-6 * sign},-4 v8 z" fill="{colour}"/>')
        fill = colour if r["verdict"] != "noise" else "white"
        if x_lo <= r["median"] <= x_hi:
            out.append(f'<circle cx="{x(r["median"]):.1f}" cy="{yc:.1f}" r="4.5" fill="{fill}" '
                       f'stroke="{colour}" stroke-width="2"/>')
        else:  # off the axis: a large arrow head at its edge
            sign = 1 if r["median"] > 1 else -1
            tip = x(r["median"])
            out.append(f'<path d="M{tip:.1f},{yc:.1f} l{-10 * sign},-7 v14 z" fill="{fill}" '
                       f'stroke="{colour}" stroke-width="2"/>')
        if r["target"]:
            out.append(f'<line x1="{x(r["target"]):.1f}" y1="{yc - 9:.1f}" x2="{x(r["target"]):.1f}" '
                       f'y2="{yc + 9:.1f}" stroke="black" stroke-width="2"/>')
        text = f'{r["median"]:.3f} ({r["lo"]:.3f}–{r["hi"]:.3f})'
        if r["verdict"] == "noise":
            text += " inside noise"
        out.append(f'<text x="{label_w + plot_w + 8}" y="{yc + 4:.1f}" fill="{colour}">{escape(text)}</text>')
    out.append(f'<text x="10" y="{height - 10}" fill="#444">black tick: target. filled dot: a difference '
               'larger than the block\'s noise floor; hollow grey: inside it. arrow: range cut at the '
               'axis (see the numbers).</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def nice_step(span):
    for step in (0.01, 0.02, 0.025, 0.05, 0.1, 0.2, 0.25, 0.5, 1.0):
        if span / step <= 10:
            return step
    return 2.0
