#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where the user-space hot path goes, without timing noise: instructions
per operation (callgrind), split by object (the library, the program with
the header's inline code, libc) and by library function, and io_uring_enter
calls per operation (strace), for each library.

Per-operation figures are differences: every case runs twice, with N and
2N operations, and (cost(2N) - cost(N)) / (ops(2N) - ops(N)) leaves out
everything that does not repeat per operation (loading, ring setup, exit).
Kernel work is invisible to callgrind; bench/hotpath's CPU-time ratios
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
from measure import clean_env, parse_result  # noqa: E402

# name, label, hotpath arguments ({ops}), N
CASES = [
    ("nop_qd1", "NOP QD1", ("nop-qd1", "{ops}"), 20_000),
    ("nop_b8", "NOP QD128 b8", ("nop-qd", "128", "8", "{ops}"), 100_000),
    ("nop_b32", "NOP QD128 b32", ("nop-qd", "128", "32", "{ops}"), 200_000),
    ("nop_b32_defer", "NOP QD128 b32, DEFER_TASKRUN ring", ("nop-qd", "128", "32", "{ops}", "defer"), 200_000),
]
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
    if base.startswith("hotpath"):
        return "program"
    if base.startswith("libc"):
        return "libc"
    return "other"


def run_case(a, env, args, ops, tag):
    cmd = [a.hotpath] + [x.replace("{ops}", str(ops)) for x in args]
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hotpath", required=True)
    ap.add_argument("--up-dir", default="")
    ap.add_argument("--rs-dir", required=True)
    ap.add_argument("--dir", required=True, help="where callgrind/strace outputs go")
    ap.add_argument("--md", required=True)
    ap.add_argument("--tsv", required=True)
    ap.add_argument("--only", default="", help="case names")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)

    results = {}  # (case, lib) -> dict
    for name, label, args, n in CASES:
        if a.only and name not in a.only.split():
            continue
        for lib, _ in LIBS:
            env = clean_env()
            if lib == "up":
                if not a.up_dir:
                    continue
                env["LD_LIBRARY_PATH"] = a.up_dir
            elif lib == "rs":
                env["LD_LIBRARY_PATH"] = a.rs_dir
            print(f"profile: {name} / {lib}", file=sys.stderr)
            ops1, cost1, ent1, path = run_case(a, env, args, n, f"{name}.{lib}.1")
            ops2, cost2, ent2, _ = run_case(a, env, args, 2 * n, f"{name}.{lib}.2")
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

    with open(a.tsv, "w") as f:
        f.write("case\tlib\ttotal\tlibrary\tprogram\tlibc\tother\tenter_per_op\n")
        for (name, lib), r in results.items():
            g = r["groups"]
            f.write(f"{name}\t{lib}\t{sum(g.values()):.2f}\t{g['library']:.2f}\t{g['program']:.2f}\t"
                    f"{g['libc']:.2f}\t{g['other']:.2f}\t{r['enters']:.4f}\n")

    md = ["## User-space instructions per operation (callgrind)", "",
          "Instructions executed in user space per operation, (cost(2N) − cost(N)) / N of two runs "
          "of the same case (so setup and exit drop out); *program* is hotpath.c with the inline "
          "code of Debian's 2.3 header, the same for every library. The kernel's share is not "
          "counted here. io_uring_enter calls per operation from strace.", "",
          "| case | library | total | library | program (inline header) | libc | io_uring_enter / op |",
          "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for name, label, _, _ in CASES:
        for lib, lib_label in LIBS:
            r = results.get((name, lib))
            if not r:
                md.append(f"| {label} | {lib_label} | – | – | – | – | absent |")
                continue
            g = r["groups"]
            md.append(f"| {label} | {lib_label} | {sum(g.values()):.1f} | {g['library']:.1f} | "
                      f"{g['program']:.1f} | {g['libc'] + g['other']:.1f} | {r['enters']:.4f} |")
    md += ["", "Library functions, instructions per operation (self cost, ≥ 0.05):", ""]
    for name, label, _, _ in CASES:
        parts = []
        for lib, lib_label in LIBS:
            r = results.get((name, lib))
            if not r:
                continue
            top = sorted(((v, fn) for fn, v in r["funcs"].items() if v >= 0.05), reverse=True)[:6]
            parts.append(f"{lib_label}: " + ", ".join(f"`{short(fn)}` {v:.1f}" for v, fn in top))
        md.append(f"- {label} — " + "; ".join(parts))
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
