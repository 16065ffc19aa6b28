#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turns hotpath_measure.py's raw runs into results.md and ratios.svg.

Statistics, per block (see hotpath_cases.py):
- a variant's figure is ns per operation (CPU or wall time over the fixed
  work, or the median ns per CQE for the reaping blocks); its cell is the
  median over the rounds with the min-max;
- a ratio row pairs the subject's and the baseline's runs of the same round:
  ratio = baseline ns / subject ns (> 1: the subject is faster); the row
  shows the median of these pair ratios and their min-max;
- the noise floor is the largest deviation from 1 of the A-vs-A pair
  ratios of the same block (rsuring against a second copy of itself for
  comparisons inside one process; t/io_uring against itself for
  comparisons between processes); a ratio whose median is no further from
  1 than its noise floor is reported as inside the noise.
"""

import argparse
import json
import os
import statistics
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)  # bench/: hotpath_cases.py, ratio_svg.py
import hotpath_cases as cases  # noqa: E402
import ratio_svg  # noqa: E402

METRIC_UNIT = {"cpu": "CPU ns/op", "wall": "wall ns/op", "reap": "ns/CQE"}


def load(path):
    runs = defaultdict(dict)  # (block, variant) -> round -> run
    absent = {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if "absent" in r:
                absent[(r["block"], r["variant"])] = r["absent"]
            else:
                runs[(r["block"], r["variant"])][r["round"]] = r
    return runs, absent


def figure(block, run):
    if block.metric == "reap":
        return run["ns_per_cqe"]
    ns = run["cpu_ns"] if block.metric == "cpu" else run["wall_ns"]
    return ns / run["ops"]


def pair_ratios(runs, block, subject, baseline):
    s, b = runs.get((block.name, subject), {}), runs.get((block.name, baseline), {})
    return [figure(block, b[r]) / figure(block, s[r]) for r in sorted(s) if r in b]


def noise_floor(runs, block, kind="inproc"):
    ratios = pair_ratios(runs, block, *cases.NOISE[kind])
    return (max(abs(x - 1) for x in ratios), ratios) if ratios else (None, [])


def row_noise(runs, block, row):
    """The noise floor that applies to a row: between processes when either
    side ran in a process of its own (in an interleaved block), else within
    the block's runs."""
    if block.chunks and not (cases.is_inproc(block, row.subject) and cases.is_inproc(block, row.baseline)):
        noise, _ = noise_floor(runs, block, "process")
        if noise is not None:
            return noise
    noise, _ = noise_floor(runs, block)
    return noise or 0.0


def fmt_ns(v):
    return f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def evaluate(runs, absent, row):
    block = cases.BLOCK_BY_NAME[row.block]
    for vid in (row.subject, row.baseline):
        if (row.block, vid) in absent:
            return {"absent": absent[(row.block, vid)]}
    ratios = pair_ratios(runs, block, row.subject, row.baseline)
    if not ratios:
        return {"absent": "not run"}
    noise = row_noise(runs, block, row)
    med = statistics.median(ratios)
    verdict = "noise" if abs(med - 1) <= noise else ("faster" if med > 1 else "slower")
    return {"median": med, "lo": min(ratios), "hi": max(ratios), "noise": noise, "n": len(ratios),
            "verdict": verdict}


def verdict_text(e):
    return {"noise": "inside noise", "faster": "faster", "slower": "slower"}[e["verdict"]]


def target_text(row, e):
    if not row.target:
        return ""
    mark = "met" if e["median"] >= row.target else "**missed**"
    return f"≥ {row.target:.2f}: {mark}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--env", required=True)
    ap.add_argument("--notes", default="")
    ap.add_argument("--profile-md", default="")
    ap.add_argument("--md", required=True)
    ap.add_argument("--svg", required=True)
    a = ap.parse_args()

    runs, absent = load(a.raw)
    env = dict(line.rstrip("\n").split("=", 1) for line in open(a.env) if "=" in line)
    notes = [n.strip() for n in open(a.notes)] if a.notes and os.path.exists(a.notes) else []

    out = ["# rsuring hot-path benchmarks", ""]
    out.append(f"`bench/run.sh`, {env.get('date', '?')}: kernel {env.get('kernel', '?')}, "
               f"{env.get('cpu', '?')}, every benchmark process pinned to CPU {env.get('cpu_pin', '?')}; "
               f"load average {env.get('load_before', '?')} before, {env.get('load_after', '?')} after, "
               f"{env.get('elapsed', '?')} s.")
    out.append("")
    out.append(f"Libraries: rsuring `{env.get('rsuring', '?')}`; liburing 2.3 `{env.get('deb', '?')}` "
               f"(Debian's build); liburing 2.15 {env.get('upstream', 'not built')}; "
               f"t/io_uring from {env.get('tio', 'not built')}; io-uring crate {env.get('crate', 'not built')}.")
    out.append("")
    out.append("Method: every run does a fixed amount of work and is measured in CPU time (user + "
               "kernel), which waiting for the CPU does not inflate; NOPs complete inside "
               "`io_uring_enter`, so that is their whole cost, while the kernel hands every "
               "buffered read of a `/dev/shm` (tmpfs) file to an io-wq worker, a thread of the "
               "process that does the copy, so reads are timed with the process's CPU clock. The C "
               "programs are compiled once against Debian's liburing 2.3 header, so every library "
               "runs the same inline header code, and every run checks which library it loaded. "
               "**NOP blocks** run all library variants in one process per round (`interleave.c`: "
               "each library in a `dlmopen()` namespace of its own, the variants taking turns in "
               "chunks of a few milliseconds, timed with the thread's CPU clock), so that they share "
               "the machine's moment; t/io_uring and the Rust crate run as processes next to it. "
               "The other blocks run a process per variant in rotating order (O_DIRECT reads: wall "
               "time, a kernel worker does part of the work). Reaping is timed per 128-CQE round with the wall "
               "clock; its figure is the mean of the middle half of the rounds. "
               f"Each block runs {env.get('rounds', '?')} rounds; a ratio is the median of the "
               "per-round pairs (baseline ns / subject ns, > 1 = subject faster) with their min–max. "
               "The noise floor is the largest deviation from 1 of an A-vs-A pair of the same block "
               "(rsuring against a second, separately loaded copy of itself; t/io_uring against "
               "itself for comparisons between processes); a median within it is marked *inside "
               "noise*.")
    out.append("")

    chart_rows = []
    for section, title in cases.SECTIONS:
        rows = [r for r in cases.ROWS if r.section == section]
        out.append(f"## {title}")
        out.append("")
        out.append("| comparison | ratio (median) | pairs min–max | noise floor (A vs A) | verdict | target |")
        out.append("| --- | ---: | ---: | ---: | --- | --- |")
        chart_rows.append({"heading": title})
        for row in rows:
            e = evaluate(runs, absent, row)
            if "absent" in e:
                out.append(f"| {row.label} | – | – | – | absent: {e['absent']} | {row.target or ''} |")
                continue
            out.append(f"| {row.label} | {e['median']:.3f} | {e['lo']:.3f}–{e['hi']:.3f} | "
                       f"±{e['noise'] * 100:.1f}% | {verdict_text(e)} | {target_text(row, e)} |")
            chart_rows.append(dict(e, label=row.label, target=row.target, scale=section != "other"))
        out.append("")

    out.append("## Noise floors (A vs A)")
    out.append("")
    out.append("| block | pair | median | min–max | noise floor |")
    out.append("| --- | --- | ---: | ---: | ---: |")
    for block in cases.BLOCKS:
        for kind in ("inproc", "process"):
            noise, ratios = noise_floor(runs, block, kind)
            if noise is None:
                continue
            what = "rsuring vs a second copy, same process" if kind == "inproc" and block.chunks else \
                "rsuring vs rsuring, separate processes" if kind == "inproc" else "t/io_uring vs t/io_uring"
            out.append(f"| {block.label} | {what} | {statistics.median(ratios):.3f} | "
                       f"{min(ratios):.3f}–{max(ratios):.3f} | ±{noise * 100:.1f}% |")
    out.append("")
    out.append("## Per variant")
    out.append("")
    out.append("Median over the rounds (min–max); wall ns/op only for programs that time it "
               "(interleave.c times CPU only); *user*: the share of the CPU time spent in user mode "
               "(library and program; the rest is the kernel), from getrusage or /proc.")
    out.append("")
    out.append("| block | variant | figure | min–max | wall ns/op | user |")
    out.append("| --- | --- | ---: | ---: | ---: | ---: |")
    for block in cases.BLOCKS:
        for vid in block.variants:
            if (block.name, vid) in absent:
                continue
            rs = list(runs.get((block.name, vid), {}).values())
            if not rs:
                continue
            figs = [figure(block, r) for r in rs]
            walls = [r["wall_ns"] / r["ops"] for r in rs if r["wall_ns"]]
            user = [r["user_ns"] / max(1, r["user_ns"] + r["sys_ns"]) for r in rs]
            out.append(f"| {block.label} | {cases.VARIANTS[vid].label} | "
                       f"{fmt_ns(statistics.median(figs))} {METRIC_UNIT[block.metric]} | "
                       f"{fmt_ns(min(figs))}–{fmt_ns(max(figs))} | "
                       f"{fmt_ns(statistics.median(walls)) if walls else '–'} | "
                       f"{statistics.median(user) * 100:.1f}% |")
    out.append("")
    missing = sorted({why for why in absent.values()})
    if missing:
        out.append("Not measured: " + "; ".join(missing) + ".")
        out.append("")
    if a.profile_md and os.path.exists(a.profile_md):
        out.append(open(a.profile_md).read().rstrip("\n"))
        out.append("")
    for n in notes:
        if n:
            out.append(f"- {n}")
    md = "\n".join(out).rstrip("\n") + "\n"
    with open(a.md, "w") as f:
        f.write(md)
    if not chart_rows:
        # Only blocks without a ratio row ran (--only batch): no chart.
        print(md)
        return
    with open(a.svg, "w") as f:
        f.write(ratio_svg.chart(chart_rows, "rsuring hot path: speed ratios, same run",
                                f"{env.get('date', '')}, kernel {env.get('kernel', '')}; "
                                "CPU time over fixed work, paired interleaved runs"))
    print(md)


if __name__ == "__main__":
    main()
