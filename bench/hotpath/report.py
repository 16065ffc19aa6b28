#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turns bench/hotpath/run.sh's raw numbers into results.md and ratios.png.

raw.tsv:  case, variant, value, unit           (one line per timed run)
meta.tsv: kind, label, base case, base variant, subject case, subject variant
          [, target]   kind "rate": ratio = subject / base; "time" (ns):
          ratio = base / subject, so a ratio > 1 always means the subject
          (rsuring) is faster. target "ge:X" (ratio >= X) or "within:X"
          (|ratio - 1| <= X).
"""

import argparse
import re
import statistics
import sys
from collections import defaultdict


def load_raw(path):
    values, units = defaultdict(list), {}
    with open(path) as f:
        for line in f:
            case, variant, value, unit = line.rstrip("\n").split("\t")
            values[(case, variant)].append(float(value))
            units[(case, variant)] = unit
    return values, units


def load_meta(path):
    rows = []
    with open(path) as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            kind, label, bc, bv, sc, sv = fields[:6]
            target = fields[6] if len(fields) > 6 else ""
            rows.append(dict(kind=kind, label=label, base=(bc, bv), subj=(sc, sv), target=target))
    return rows


def human(v, unit):
    if unit == "ns/CQE":
        return f"{v:.2f} ns"
    for scale, suffix in ((1e6, "M"), (1e3, "K")):
        if v >= scale:
            return f"{v / scale:.3g}{suffix}" if v / scale < 100 else f"{v / scale:.0f}{suffix}"
    return f"{v:.0f}"


def cell(samples, unit):
    """Median, and the half-range of the samples as a percentage of it."""
    med = statistics.median(samples)
    spread = (max(samples) - min(samples)) / 2 / med * 100 if med else 0.0
    return med, f"{human(med, unit)} ±{spread:.1f}%"


def check(target, ratio):
    if not target:
        return ""
    kind, x = target.split(":")
    x = float(x)
    if kind == "ge":
        return f"≥ {x:.2f} {'✅' if ratio >= x else '❌'}"
    if kind == "within":
        return f"±{x * 100:.0f}% {'✅' if abs(ratio - 1) <= x else '❌'}"
    return target


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--meta", required=True)
    ap.add_argument("--env", required=True)
    ap.add_argument("--notes")
    ap.add_argument("--md", required=True)
    ap.add_argument("--png", required=True)
    a = ap.parse_args()

    values, units = load_raw(a.raw)
    rows = load_meta(a.meta)
    env = dict(line.rstrip("\n").split("=", 1) for line in open(a.env) if "=" in line)
    notes = [n.strip() for n in open(a.notes)] if a.notes else []

    out = []
    out.append("# rsuring hot-path benchmarks\n")
    out.append(
        f"`bench/hotpath/run.sh`, {env['date']}. Kernel {env['kernel']}, {env['cpu']}; "
        f"benchmark pinned to CPU {env['cpu_pin']}. {env['reps']} alternating runs per variant, "
        f"{env['dur']} s each (+10% warm-up); medians, ± is half the min–max range. "
        f"Load average {env['load_before']} before, {env['load_after']} after; "
        f"{env['elapsed']} s of measuring.\n"
    )
    out.append(
        f"liburing: `{env['liburing']}` (Debian). rsuring: `{env['rsuring']}`. "
        f"Reference: fio `{env['t_io_uring']}` t/io_uring, io-uring crate {env['io_uring_crate']}.\n"
    )
    out.append(
        "The C program is compiled once against Debian's `/usr/include/liburing.h`; only the "
        "library it loads differs (each run reports the library `io_uring_submit` came from). "
        "Ratio > 1 means rsuring is faster: subject/baseline for rates, baseline/subject for ns/CQE.\n"
    )
    out.append("| case | baseline (liburing unless noted) | rsuring | ratio | target |")
    out.append("| --- | ---: | ---: | ---: | --- |")

    chart = []
    missing = []
    for r in rows:
        b, s = values.get(r["base"]), values.get(r["subj"])
        if not b or not s:
            missing.append(r["label"])
            continue
        bm, bc = cell(b, units[r["base"]])
        sm, sc = cell(s, units[r["subj"]])
        ratio = sm / bm if r["kind"] == "rate" else bm / sm
        out.append(f"| {r['label']} | {bc} | {sc} | {ratio:.3f} | {check(r['target'], ratio)} |")
        chart.append((r, ratio))
    out.append("")
    if missing:
        out.append("Not measured: " + "; ".join(missing) + "\n")
    for n in notes:
        if n:
            out.append(f"- {n}")
    if notes:
        out.append("")
    md = "\n".join(out)
    with open(a.md, "w") as f:
        f.write(md)
    print(md)

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(no matplotlib: ratios.png not written)", file=sys.stderr)
        return

    labels = [re.sub(r"\s*\([^)]*\)", "", r["label"]) for r, _ in chart]
    ratios = [x for _, x in chart]
    fig, ax = plt.subplots(figsize=(11, 0.38 * len(chart) + 1.5))
    ypos = range(len(chart))[::-1]
    colors = ["#2e7d32" if x >= 1 else "#c62828" for x in ratios]
    ax.barh(list(ypos), ratios, color=colors, height=0.7)
    for y, (r, x) in zip(ypos, chart):
        ax.text(x + 0.01, y, f"{x:.3f}", va="center", fontsize=8)
        t = r["target"]
        if t.startswith("ge:"):
            ax.plot([float(t[3:])] * 2, [y - 0.4, y + 0.4], color="black", lw=2)
    ax.axvline(1.0, color="grey", ls="--", lw=1)
    ax.set_yticks(list(ypos))
    ax.set_yticklabels(labels, fontsize=8)
    lo = min(0.8, min(ratios) - 0.05)
    hi = max(1.2, max(ratios) + 0.1)
    ax.set_xlim(lo, hi)
    ax.set_xlabel("rsuring speed relative to baseline (>1 = rsuring faster; black tick = target)")
    ax.set_title(f"rsuring / liburing (and references), {env['date']}")
    fig.tight_layout()
    fig.savefig(a.png, dpi=110)


if __name__ == "__main__":
    main()
