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


def met(target, ratio):
    kind, x = target.split(":")
    x = float(x)
    return ratio >= x if kind == "ge" else abs(ratio - 1) <= x


def check(target, ratio, cpu_ratio):
    """The target, and whether the wall-clock ratio (and the per-CPU-second
    one, where there is one) meets it."""
    if not target:
        return ""
    kind, x = target.split(":")
    x = float(x)
    text = f"≥ {x:.2f}" if kind == "ge" else f"±{x * 100:.0f}%"
    text += f" wall {'✅' if met(target, ratio) else '❌'}"
    if cpu_ratio is not None:
        text += f", CPU {'✅' if met(target, cpu_ratio) else '❌'}"
    return text


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
        "Ratio > 1 means rsuring is faster: subject/baseline for rates, baseline/subject for ns/CQE "
        "(ns/CQE: the median of 128-CQE reaping rounds). "
        "*Per CPU-s*: operations per second of the process's own CPU time, for the NOP cases, "
        "which run entirely in the benchmark thread; time lost to other processes does not "
        "dilute it, so on a busy machine it is the steadier comparison (t/io_uring: its IOPS "
        "divided by its CPU time / wall time).\n"
    )
    out.append(
        "| case | baseline (liburing unless noted) | rsuring | ratio "
        "| baseline per CPU-s | rsuring per CPU-s | ratio per CPU-s | target |"
    )
    out.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")

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
        cb = values.get((r["base"][0] + "@cpu", r["base"][1]))
        cs = values.get((r["subj"][0] + "@cpu", r["subj"][1]))
        cpu_ratio, cpu_cells = None, "| | |"
        if cb and cs:
            cbm, cbc = cell(cb, "ops/CPU-s")
            csm, csc = cell(cs, "ops/CPU-s")
            cpu_ratio = csm / cbm
            cpu_cells = f"| {cbc} | {csc} | {cpu_ratio:.3f}"
        out.append(
            f"| {r['label']} | {bc} | {sc} | {ratio:.3f} {cpu_cells} "
            f"| {check(r['target'], ratio, cpu_ratio)} |"
        )
        chart.append((r, ratio, cpu_ratio))
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

    labels = [re.sub(r"\s*\([^)]*\)", "", r["label"]) for r, _, _ in chart]
    fig, ax = plt.subplots(figsize=(11, 0.45 * len(chart) + 1.5))
    ypos = list(range(len(chart)))[::-1]
    all_ratios = []
    for y, (r, x, c) in zip(ypos, chart):
        h = 0.38 if c is not None else 0.7
        yw = y + 0.2 if c is not None else y
        ax.barh(yw, x, height=h, color="#2e7d32" if x >= 1 else "#c62828")
        ax.text(x + 0.01, yw, f"{x:.3f}", va="center", fontsize=7)
        all_ratios.append(x)
        if c is not None:
            ax.barh(y - 0.2, c, height=h, color="#81c784" if c >= 1 else "#e57373", hatch="//")
            ax.text(c + 0.01, y - 0.2, f"{c:.3f} /CPU-s", va="center", fontsize=7)
            all_ratios.append(c)
        t = r["target"]
        if t.startswith("ge:"):
            ax.plot([float(t[3:])] * 2, [y - 0.45, y + 0.45], color="black", lw=2)
    ax.axvline(1.0, color="grey", ls="--", lw=1)
    ax.set_yticks(ypos)
    ax.set_yticklabels(labels, fontsize=8)
    lo = min(0.8, min(all_ratios) - 0.05)
    hi = max(1.2, max(all_ratios) + 0.15)
    ax.set_xlim(lo, hi)
    ax.set_xlabel(
        "rsuring speed relative to baseline (> 1: rsuring faster)\n"
        "solid: wall clock; hatched: per CPU-second; black tick: target"
    )
    ax.set_title(f"rsuring / liburing (and references), {env['date']}")
    fig.tight_layout()
    fig.savefig(a.png, dpi=110)


if __name__ == "__main__":
    main()
