#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes docs/performance.md from the committed benchmark results.

    bench/performance_doc.py           print the document on stdout
    bench/performance_doc.py --write   rewrite docs/performance.md

bench/run.sh --commit-results runs it after copying new results, and
tests/docs.rs fails when the committed docs/performance.md is not exactly
its output, so the figures the documentation quotes cannot drift from the
results files. The summary rows are looked up by their labels in the
results' tables; a label that no longer exists is an error (rename it here
together with the benchmark). Standard library only.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOTPATH = "bench/hotpath/results.md"
SQPOLL = "bench/sqpoll/results.md"
TRANSPARENT = "bench/transparent/results.md"
FIO = "fio_engine/results.md"
OUTPUT = "docs/performance.md"


def read(rel):
    path = os.path.join(ROOT, rel)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return f.read()


def tables(text):
    """Every markdown table of text: (header cells, [row cells])."""
    found, current = [], None
    for line in text.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if current is None:
                current = (cells, [])
                found.append(current)
            elif not all(set(c) <= set("-: ") for c in cells):
                current[1].append(cells)
        else:
            current = None
    return found


class Missing(Exception):
    pass


def lookup(text, source, label, column, newest=True, after=0):
    """The cell of the row whose first cell is label, in the column whose
    header is column (the last table that has both: results files append
    newer runs after older ones; newest=False: the first), or in the column
    `after` places to its right (for an unnamed column such as a second
    min–max)."""
    for header, rows in (reversed(tables(text)) if newest else tables(text)):
        if column not in header:
            continue
        for row in rows:
            if row[0] == label and len(row) == len(header):
                return row[header.index(column) + after]
    raise Missing(f"{source}: no row {label!r} with a column {column!r}")


def row_where(text, source, column_values, column, newest=True):
    """Like lookup, for a row identified by several columns' values."""
    for header, rows in (reversed(tables(text)) if newest else tables(text)):
        if column not in header or any(k not in header for k in column_values):
            continue
        for row in rows:
            if len(row) == len(header) and all(
                row[header.index(k)] == v for k, v in column_values.items()
            ):
                return row[header.index(column)]
    raise Missing(f"{source}: no row {column_values!r} with a column {column!r}")


def verdict(cell):
    """faster / slower / at par from a "median [min–max]" cell: faster when
    every round favoured rsuring, slower when every round favoured the peer,
    at par when the rounds disagree. A bare median (no range in the
    results) gives its side of 1, said to be a median only."""
    cell = cell.replace("(", "[").replace(")", "]")
    median = float(cell.split()[0])
    if "[" in cell:
        low, high = (float(x) for x in cell.split("[")[1].split("]")[0].split("–"))
        if low > 1:
            return "faster"
        if high < 1:
            return "slower"
        return "at par (rounds on both sides of 1)"
    side = "faster" if median > 1 else "slower" if median < 1 else "at par"
    return f"{side} (median of the runs; no range recorded)"


def demoted(text):
    """The results file as a section: its headings one level down."""
    out = []
    for line in text.rstrip("\n").splitlines():
        out.append("#" + line if line.startswith("#") else line)
    return "\n".join(out)


def summary(hot, sq, fio, transparent):
    rows = []

    def hot_row(what, label, peer):
        ratio = lookup(hot, HOTPATH, label, "ratio (median)")
        span = lookup(hot, HOTPATH, label, "pairs min–max")
        noise = lookup(hot, HOTPATH, label, "noise floor (A vs A)")
        verdict = lookup(hot, HOTPATH, label, "verdict")
        rows.append((what, peer, f"{ratio} ({span}), noise {noise}", verdict, HOTPATH))

    hot_row("liburing API, NOP QD128, submit batch 32",
            "NOP QD128 b32: rsuring vs liburing 2.15", "liburing 2.15")
    hot_row("liburing API, NOP QD128, submit batch 32",
            "NOP QD128 b32: rsuring vs liburing 2.3", "Debian's liburing 2.3")
    hot_row("liburing API, NOP QD128, submit batch 8",
            "NOP QD128 b8: rsuring vs liburing 2.15", "liburing 2.15")
    hot_row("liburing API, NOP QD128, submit batch 8",
            "NOP QD128 b8: rsuring vs liburing 2.3", "Debian's liburing 2.3")
    hot_row("liburing API, NOP QD1 round trip",
            "NOP QD1: rsuring vs liburing 2.15", "liburing 2.15")
    hot_row("liburing API, NOP QD1 round trip",
            "NOP QD1: rsuring vs liburing 2.3", "Debian's liburing 2.3")
    # The opt-in automatic ring fd registration (off by default, issue 34).
    for block, what in (("NOP QD1", "NOP QD1 round trip"), ("NOP QD128 b8", "NOP QD128, submit batch 8"),
                        ("NOP QD128 b32", "NOP QD128, submit batch 32")):
        hot_row(f"with `RSURING_REGISTER_RING_FD=1` (opt-in), {what}",
                f"{block}: RSURING_REGISTER_RING_FD=1 vs liburing 2.15", "liburing 2.15")
    # The batch tables give cost ratios (< 1: rsuring cheaper); the summary
    # speaks in speed (> 1: rsuring faster), so they are inverted here.
    def speed(cost):
        return f"{1 / float(cost):.2f}"

    def batch_row(what, step, batch, op="nop"):
        key = {"step": step, "op": op, "batch": batch}
        cost = row_where(hot, HOTPATH, key, "wait_batch / 2.15 best")
        low, high = row_where(hot, HOTPATH, key, "min–max").split("–")
        noise = row_where(hot, HOTPATH, key, "A vs A noise")
        cell = f"{speed(cost)} [{speed(high)}–{speed(low)}]"
        rows.append((what, "liburing 2.15's cheapest loop in the same round",
                     f"{cell}, noise {noise}", verdict(cell), HOTPATH))

    for b in ("8", "32", "128"):
        batch_row(f"batched reap `rsuring_wait_batch_cqe`, reaping step, NOP batch {b}",
                  "reap", b)
    for b in ("8", "128"):
        batch_row(f"batched reap `rsuring_wait_batch_cqe`, reaping step, buffered reads, batch {b}",
                  "reap", b, "read")
    for op, what in (("nop", "NOP"), ("read", "buffered reads,")):
        for b in ("8", "32", "128"):
            batch_row(f"batched reap `rsuring_wait_batch_cqe`, reaping step timed over 1024 CQEs, "
                      f"{what} batch {b}", "deep", b, op)
    for b in ("8", "32", "128"):
        batch_row(f"batched reap `rsuring_wait_batch_cqe`, submit + wait + reap, NOP batch {b}",
                  "e2e", b)
    for b in ("8", "32", "128"):
        batch_row(f"batched reap `rsuring_wait_batch_cqe`, submit + wait + reap, buffered reads, "
                  f"batch {b}", "e2e", b, "read")
    for what in ("buffered (/dev/shm)", "O_DIRECT (loop device)"):
        cpu = lookup(hot, HOTPATH, what, "batched / plain CPU per I/O")
        low, high = lookup(hot, HOTPATH, what, "min–max").split("–")
        cell = f"{speed(cpu)} [{speed(high)}–{speed(low)}]"
        rows.append((f"`rsuring_queue_init_batched`, 4 KiB reads QD 32, {what}, "
                     "CPU per I/O of the process (its io-wq workers included)",
                     "a plain ring", cell, verdict(cell), HOTPATH))
        iops = lookup(hot, HOTPATH, what, "batched / plain IOPS")
        # The min–max beside the IOPS ratio is the column after it.
        low, high = lookup(hot, HOTPATH, what, "batched / plain IOPS", after=1).split("–")
        cell = f"{float(iops):.2f} [{float(low):.2f}–{float(high):.2f}]"
        rows.append((f"`rsuring_queue_init_batched`, 4 KiB reads QD 32, {what}, IOPS",
                     "a plain ring", cell, verdict(cell), HOTPATH))
    hot_row("statistics on (`RSURING_STATS=1`), batch 32",
            "b32: RSURING_STATS=1 vs off", "statistics off")
    hot_row("statistics on (`RSURING_STATS=1`), 4 KiB buffered reads QD1",
            "reads, buffered (/dev/shm), QD1: RSURING_STATS=1 vs off", "statistics off")
    hot_row("statistics on (`RSURING_STATS=1`), NOP QD1 round trip",
            "QD1: RSURING_STATS=1 vs off", "statistics off")

    k4 = {"K": "4"}
    shared = row_where(sq, SQPOLL, k4, "shared IOPS")
    dedicated = row_where(sq, SQPOLL, k4, "dedicated IOPS")
    single = row_where(sq, SQPOLL, k4, "single IOPS (1 ring, D=K×32)")
    rows.append(("shared SQPOLL, 4 rings × QD 32 (IOPS, medians)",
                 "a dedicated SQ thread per ring",
                 f"{row_where(sq, SQPOLL, k4, 'shared/dedicated')} ({shared} / {dedicated})",
                 verdict(row_where(sq, SQPOLL, k4, 'shared/dedicated')), SQPOLL))
    rows.append(("shared SQPOLL, 4 rings × QD 32 (IOPS, medians)",
                 "one ring at QD 128",
                 f"{row_where(sq, SQPOLL, k4, 'shared/single')} ({shared} / {single})",
                 verdict(row_where(sq, SQPOLL, k4, 'shared/single')), SQPOLL))

    # fio: the first section's figures (Debian's fio 3.33, the one CI runs);
    # later sections are other fio versions, measured by hand.
    plain = row_where(fio, FIO, {"QD": "32"}, "IOPS ratio", newest=False)
    rows.append(("fio engine, plain ring, QD 32 (IOPS)", "fio's io_uring engine",
                 f"{plain}; fio against itself "
                 + row_where(fio, FIO, {"job": "plain QD 32"}, "IOPS", newest=False),
                 verdict(plain), FIO))
    polled = lookup(fio, FIO, "ratio rsuring / fio", "IOPS", newest=False)
    rows.append(("fio engine, `sqthread_poll`, one job at QD 128 (IOPS)",
                 "fio's io_uring engine, same option", polled, verdict(polled), FIO))
    percpu = lookup(fio, FIO, "rsuring, `sqthread_poll_percpu=1`", "IOPS vs fio's 4 x 32",
                    newest=False)
    rows.append(("fio engine, 4 jobs × QD 32, `sqthread_poll_percpu=1` (IOPS)",
                 "fio's io_uring engine, a poller per ring", percpu, verdict(percpu), FIO))
    if transparent is None:
        rows.append(("transparent SQPOLL (`RSURING_SQPOLL=1`)", "a plain ring",
                     "no committed results yet (`bench/transparent.sh`)", "not measured",
                     TRANSPARENT))
    else:
        for header, body in tables(transparent):
            if header[:2] == ["what", "compared with"]:
                for r in body:
                    # Each row's "what" says how loaded the machine was.
                    rows.append((f"transparent SQPOLL: {r[0]}", r[1], r[2], r[3], TRANSPARENT))
                break
        else:
            raise Missing(f"{TRANSPARENT}: no summary table")

    out = ["| what | compared with | rsuring / peer (> 1: rsuring faster) | verdict | source |",
           "| --- | --- | --- | --- | --- |"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def document():
    hot, sq, fio, transparent = read(HOTPATH), read(SQPOLL), read(FIO), read(TRANSPARENT)
    for name, text in ((HOTPATH, hot), (SQPOLL, sq), (FIO, fio)):
        if text is None:
            raise Missing(f"{name} is missing")
    parts = [
        "# Performance",
        "",
        "<!-- Generated by bench/performance_doc.py from the committed results files"
        " (bench/run.sh --commit-results runs it; tests/docs.rs checks that this file"
        " is its output). Do not edit: rerun the generator. -->",
        "",
        "Every figure here comes from `bench/run.sh` (hot path, shared SQPOLL,"
        " transparent SQPOLL, fio engine; `bench/README.md` explains the method),"
        " on this project's 2-core VM (kernel 6.18) while other work ran on it."
        " Ratios are rsuring's speed over the peer's (> 1: rsuring faster), medians"
        " of interleaved rounds with their min–max, beside an A-vs-A noise floor;"
        " a difference inside the noise is marked as such. None of this is a timed"
        " test. The committed results change only with `bench/run.sh --commit-results`,"
        " which also regenerates this page.",
        "",
        "## Summary",
        "",
        summary(hot, sq, fio, transparent),
        "",
        "## Hot path (`" + HOTPATH + "`)",
        "",
        "![rsuring / liburing per case](../bench/hotpath/ratios.svg)",
        "",
        demoted(hot),
        "",
        "## Shared SQPOLL (`" + SQPOLL + "`)",
        "",
        demoted(sq),
        "",
        "## Transparent SQPOLL (`" + TRANSPARENT + "`)",
        "",
        demoted(transparent) if transparent is not None else
        "No committed results yet: `bench/transparent.sh` prints them.",
        "",
        "## fio engine (`" + FIO + "`)",
        "",
        demoted(fio),
        "",
    ]
    return "\n".join(parts)


def main():
    try:
        text = document()
    except Missing as e:
        print(f"performance_doc: {e}", file=sys.stderr)
        return 1
    if sys.argv[1:] == ["--write"]:
        with open(os.path.join(ROOT, OUTPUT), "w", encoding="utf-8") as f:
            f.write(text)
    elif sys.argv[1:]:
        print("usage: bench/performance_doc.py [--write]", file=sys.stderr)
        return 2
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
