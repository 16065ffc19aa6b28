#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where the user-space hot path goes, without timing noise: instructions
per operation (callgrind), split by object (the library, the program with
the header's inline code, libc) and by library function, and io_uring_enter
calls per operation (strace), for each library.

Per-operation figures are differences: every case runs twice, with N and
2N operations, and (cost(2N) - cost(N)) / (ops(2N) - ops(N)) leaves out
everything that does not repeat per operation (loading, ring setup, exit).
Kernel work is invisible to callgrind; bench/hotpath.sh's CPU-time ratios
include it.

Writes a Markdown section (--md) and the raw figures (--tsv).
"""

import argparse
import os
import re
import subprocess
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
from hotpath_measure import clean_env, parse_result  # noqa: E402

# name, label, interleave.c arguments before the amount of work, variant flags, N
CASES = [
    ("nop_qd1", "NOP QD1", ("nop-qd1",), "", 20_000),
    ("nop_b1", "NOP QD128 b1", ("nop-qd", "128", "1"), "", 50_000),
    ("nop_b8", "NOP QD128 b8", ("nop-qd", "128", "8"), "", 100_000),
    ("nop_b32", "NOP QD128 b32", ("nop-qd", "128", "32"), "", 200_000),
    ("nop_b32_defer", "NOP QD128 b32, DEFER_TASKRUN ring", ("nop-qd", "128", "32"), ",defer", 200_000),
    ("nop_qd1_libsqe", "NOP QD1, exported io_uring_get_sqe", ("nop-qd1",), ",libsqe", 20_000),
    ("nop_b32_libsqe", "NOP QD128 b32, exported io_uring_get_sqe", ("nop-qd", "128", "32"), ",libsqe",
     200_000),
]
# batch.c's reaping step (reap_step, --toggle-collect): (library, pattern, label)
REAP_VARIANTS = [("up", "wnrpeek", "liburing 2.15: wait_cqe_nr + peek_batch_cqe"),
                 ("up", "wnreach", "liburing 2.15: wait_cqe_nr + for_each_cqe"),
                 ("rs", "wnrpeek", "rsuring: wait_cqe_nr + peek_batch_cqe"),
                 ("rs", "wb", "rsuring: rsuring_wait_batch_cqe")]
REAP_BATCHES = (8, 32, 128)
LIBS = [("deb", "liburing 2.3"), ("up", "liburing 2.15"), ("rs", "rsuring")]
NAME = re.compile(r"^\((\d+)\)(?: (.*))?$")


def parse_callgrind(path):
    """Self cost (Ir) per (object, function) of a callgrind output file."""
    names = {"ob": {}, "fn": {}}
    cost = defaultdict(int)
    ob = fn = None
    skip_next = False

    def resolve(kind, spec):
        m = NAME.match(spec)
        if not m:
            return spec
        ident, name = m.groups()
        if name is not None:
            names[kind][ident] = name
        return names[kind].get(ident, spec)

    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            c = line[0]
            if c.isdigit() or c in "+-*":
                if skip_next:  # the inclusive cost of a call, not self cost
                    skip_next = False
                    continue
                parts = line.split()
                if len(parts) >= 2 and fn is not None:
                    cost[(ob, fn)] += int(parts[1])
                continue
            key, _, val = line.partition("=")
            if key == "ob":
                ob = resolve("ob", val)
            elif key == "fn":
                fn = resolve("fn", val)
            elif key in ("cob", "cfn"):
                resolve(key[1:], val)
            elif key == "calls":
                skip_next = True
    return cost


def group_of(ob):
    base = os.path.basename(ob or "")
    if base.startswith("liburing") or base.startswith("librsuring"):
        return "library"
    if base.startswith("interleave"):
        return "program"
    if base.startswith("libc"):
        return "libc"
    return "other"


def run_case(a, lib_path, args, flags, ops, tag):
    """interleave.c with this one library (so a plain run of it)."""
    env = clean_env()
    cmd = [a.interleave] + list(args) + [str(ops), "10", f"lib={lib_path}{flags}"]
    out = os.path.join(a.dir, f"cg.{tag}")
    proc = subprocess.run(["valgrind", "-q", "--tool=callgrind", f"--callgrind-out-file={out}"] + cmd,
                          env=env, capture_output=True, text=True)
    r = parse_result(proc.stdout)
    if proc.returncode or r is None:
        raise SystemExit(f"profile: {' '.join(cmd)} under callgrind failed\n{proc.stdout}{proc.stderr}")
    st = os.path.join(a.dir, f"strace.{tag}")
    proc = subprocess.run(["strace", "-f", "-c", "-o", st] + cmd, env=env, capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"profile: {' '.join(cmd)} under strace failed\n{proc.stderr}")
    enters = 0
    with open(st) as f:
        for line in f:
            parts = line.split()
            if parts and parts[-1] == "io_uring_enter":
                enters = int(parts[3])
    return int(r["total_ops"]), parse_callgrind(out), enters, r["lib"]


def tio_case(a):
    """t/io_uring -N1 under callgrind, run for 3 and for 9 seconds. It runs
    for a time, not a number of operations: the operations between the two
    runs are taken as the difference of the sums of their per-second lines
    (each line counts exactly the operations of its second), which assumes
    that the unprinted last second of each run did as much. On a busy
    machine it does not quite, so the figure is approximate (it moved
    between 35 and 42 instructions per operation in repeated runs here)."""
    res = []
    for secs in (3, 9):
        out = os.path.join(a.dir, f"cg.tio.{secs}")
        proc = subprocess.run(["valgrind", "-q", "--tool=callgrind", f"--callgrind-out-file={out}",
                               a.tio, "-N1", "-r", str(secs)], env=clean_env(), capture_output=True, text=True)
        if proc.returncode:
            raise SystemExit(f"profile: t/io_uring under callgrind failed\n{proc.stdout}{proc.stderr}")
        ops = 0.0
        for line in proc.stdout.splitlines():
            m = re.match(r"^IOPS=([0-9.]+)([KM]?),", line)
            if m:
                ops += float(m.group(1)) * {"M": 1e6, "K": 1e3, "": 1}[m.group(2)]
        res.append((ops, parse_callgrind(out)))
    (ops1, cost1), (ops2, cost2) = res
    d = ops2 - ops1
    groups = defaultdict(float)
    for key in set(cost1) | set(cost2):
        base = os.path.basename(key[0] or "")
        group = "program" if base == "io_uring" else "libc" if base.startswith("libc") else "other"
        groups[group] += (cost2.get(key, 0) - cost1.get(key, 0)) / d
    return {"groups": groups, "funcs": {}, "enters": None, "path": a.tio}


def reap_case(a, lib_path, op, batch, pattern, rounds, tag):
    """User instructions inside batch.c's reap_step (the library calls it
    makes included) for one variant, and the CQEs it reaped (warm-up
    included: batch.c runs CHUNKS + 1 turns)."""
    chunks = 10
    cmd = [a.batch, "reap", op, str(batch), str(rounds), str(chunks), a.file if op == "read" else "-",
           f"v={lib_path},{pattern}"]
    out = os.path.join(a.dir, f"cg.reap.{tag}")
    proc = subprocess.run(["valgrind", "-q", "--tool=callgrind", "--toggle-collect=reap_step",
                           f"--callgrind-out-file={out}"] + cmd, env=clean_env(), capture_output=True,
                          text=True)
    if proc.returncode or "RESULT " not in proc.stdout:
        raise SystemExit(f"profile: {' '.join(cmd)} under callgrind failed\n{proc.stdout}{proc.stderr}")
    cost = parse_callgrind(out)
    groups = defaultdict(int)
    for key, v in cost.items():
        groups[group_of(key[0]) if not os.path.basename(key[0] or "").startswith("batch") else "program"] += v
    return (rounds // chunks) * (chunks + 1) * batch, groups


def reap_section(a):
    """Instructions per CQE of the reaping step, per pattern and batch."""
    rows = []
    for op in ("nop", "read") if a.file else ("nop",):
        for batch in REAP_BATCHES:
            for lib, pattern, label in REAP_VARIANTS:
                if lib == "up" and not a.up_dir:
                    continue
                path = os.path.join(a.up_dir if lib == "up" else a.rs_dir, "liburing.so.2")
                rounds = max(40, 8000 // batch) // 10 * 10
                print(f"profile: reap {op} b{batch} / {lib} {pattern}", file=sys.stderr)
                c1, g1 = reap_case(a, path, op, batch, pattern, rounds, f"{op}.{batch}.{lib}.{pattern}.1")
                c2, g2 = reap_case(a, path, op, batch, pattern, 2 * rounds, f"{op}.{batch}.{lib}.{pattern}.2")
                d = c2 - c1
                per = {k: (g2.get(k, 0) - g1.get(k, 0)) / d for k in set(g1) | set(g2)}
                rows.append((op, batch, label, sum(per.values()), per.get("library", 0.0),
                             per.get("program", 0.0)))
    md = ["", "## Reaping step, user instructions per CQE (callgrind)", "",
          "batch.c's reap_step alone (`--toggle-collect=reap_step`: the library calls it makes and the "
          "program's loop over the CQEs, which reads and checks each one), all CQEs ready, so no "
          "system call; (cost(2N) − cost(N)) / CQEs of two runs. *program* is the loop compiled "
          "against Debian's 2.3 header, the same for every library with the same pattern.", "",
          "| op | batch | pattern | total / CQE | library | program |",
          "| --- | ---: | --- | ---: | ---: | ---: |"]
    for op, batch, label, total, lib, prog in rows:
        md.append(f"| {op} | {batch} | {label} | {total:.2f} | {lib:.2f} | {prog:.2f} |")
    return md


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--interleave", required=True)
    ap.add_argument("--deb-lib", required=True)
    ap.add_argument("--up-dir", default="")
    ap.add_argument("--rs-dir", required=True)
    ap.add_argument("--dir", required=True, help="where callgrind/strace outputs go")
    ap.add_argument("--md", required=True)
    ap.add_argument("--tsv", required=True)
    ap.add_argument("--only", default="", help="case names")
    ap.add_argument("--tio", default="", help="fio's t/io_uring, for its batch-32 figure")
    ap.add_argument("--batch", default="", help="batch.c's binary: adds the reaping step's counts")
    ap.add_argument("--file", default="", help="with --batch: a file for the buffered-read cases")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)

    results = {}  # (case, lib) -> dict
    for name, label, args, flags, n in CASES:
        if a.only and name not in a.only.split():
            continue
        for lib, _ in LIBS:
            if lib == "up" and not a.up_dir:
                continue
            path = {"deb": a.deb_lib, "up": os.path.join(a.up_dir, "liburing.so.2"),
                    "rs": os.path.join(a.rs_dir, "liburing.so.2")}[lib]
            print(f"profile: {name} / {lib}", file=sys.stderr)
            ops1, cost1, ent1, path = run_case(a, path, args, flags, n, f"{name}.{lib}.1")
            ops2, cost2, ent2, _ = run_case(a, path, args, flags, 2 * n, f"{name}.{lib}.2")
            d = ops2 - ops1
            groups = defaultdict(float)
            funcs = defaultdict(float)
            for key in set(cost1) | set(cost2):
                per_op = (cost2.get(key, 0) - cost1.get(key, 0)) / d
                groups[group_of(key[0])] += per_op
                if group_of(key[0]) == "library":
                    funcs[key[1]] += per_op
            results[(name, lib)] = {"groups": groups, "funcs": funcs, "enters": (ent2 - ent1) / d,
                                    "path": path}

    if a.tio and (not a.only or "nop_b32" in a.only.split()):
        print("profile: t/io_uring", file=sys.stderr)
        results[("nop_b32", "tio")] = tio_case(a)

    with open(a.tsv, "w") as f:
        f.write("case\tlib\ttotal\tlibrary\tprogram\tlibc\tother\tenter_per_op\n")
        for (name, lib), r in results.items():
            g = r["groups"]
            f.write(f"{name}\t{lib}\t{sum(g.values()):.2f}\t{g['library']:.2f}\t{g['program']:.2f}\t"
                    f"{g['libc']:.2f}\t{g['other']:.2f}\t{r['enters'] if r['enters'] is not None else ''}\n")

    md = ["## User-space instructions per operation (callgrind)", "",
          "Instructions executed in user space per operation, (cost(2N) − cost(N)) / N of two runs "
          "of the same case (so setup and exit drop out), one library per run; *program* is "
          "interleave.c's loop with the inline code of Debian's 2.3 header, the same for every "
          "library. The kernel's share is not counted here. io_uring_enter calls per operation "
          "from strace.", "",
          "| case | library | total | library | program (inline header) | libc | io_uring_enter / op |",
          "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for name, label, _, _, _ in CASES:
        for lib, lib_label in LIBS + ([("tio", "t/io_uring -N1 (approximate, see below)")] if name == "nop_b32" else []):
            r = results.get((name, lib))
            if not r:
                md.append(f"| {label} | {lib_label} | – | – | – | – | absent |")
                continue
            g = r["groups"]
            if lib == "tio":
                md.append(f"| {label} | {lib_label} | {sum(g.values()):.1f} | – | "
                          f"{g['program']:.1f} (its own loop, no library) | {g['libc'] + g['other']:.1f} | "
                          "about 1/32 |")
                continue
            md.append(f"| {label} | {lib_label} | {sum(g.values()):.1f} | {g['library']:.1f} | "
                      f"{g['program']:.1f} | {g['libc'] + g['other']:.1f} | {r['enters']:.4f} |")
    if ("nop_b32", "tio") in results:
        md += ["", "t/io_uring runs for a time, not a number of operations; its operations are "
               "counted from its per-second lines, which leaves out each run's last second, so its "
               "figure is approximate (35–42 in repeated runs on this machine)."]
    md += ["", "Library functions, instructions per operation (self cost, ≥ 0.05):", ""]
    for name, label, _, _, _ in CASES:
        parts = []
        for lib, lib_label in LIBS:
            r = results.get((name, lib))
            if not r:
                continue
            top = sorted(((v, fn) for fn, v in r["funcs"].items() if v >= 0.05), reverse=True)[:6]
            parts.append(f"{lib_label}: " + ", ".join(f"`{short(fn)}` {v:.1f}" for v, fn in top))
        md.append(f"- {label} — " + "; ".join(parts))
    if a.batch and (not a.only or "reap" in a.only.split()):
        md += reap_section(a)
    with open(a.md, "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))


def short(fn):
    """A Rust symbol without its crate path and hash; C names unchanged."""
    fn = re.sub(r"::h[0-9a-f]{16}$", "", fn)
    fn = re.sub(r"<[^<>]*>", "", fn)
    return fn.split("::")[-1] if "::" in fn else fn


if __name__ == "__main__":
    main()
