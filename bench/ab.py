#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A/B of the hot paths of several builds of the library (or liburing), for
a change that must not move them: CPU time per NOP, the variants
interleaved in one process (bench/hotpath/interleave.c), in rounds.

    bench/ab.py [--rounds N] [--ops N] [--cpu C] NAME=LIB NAME=LIB ...

Every block (QD1, and queue depth 32 submitted in batches of 1, 8 and 32)
runs --rounds times; each round is one interleave process in which the
variants take turns chunk by chunk. Printed per block and variant: the
median, min and max over the rounds of CPU time per operation relative to
the first variant (> 1: the variant takes longer). Give the first library
twice (A=x A2=x B=y) to see the noise floor in the same run. Measures
only; writes nothing into the tree.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BLOCKS = [
    ("qd1", ["nop-qd1", "{ops}", "10"]),
    ("qd32 b1", ["nop-qd", "32", "1", "{ops}", "10"]),
    ("qd32 b8", ["nop-qd", "32", "8", "{ops}", "10"]),
    ("qd32 b32", ["nop-qd", "32", "32", "{ops}", "10"]),
]
RESULT = re.compile(r"^RESULT name=(\S+) ops=(\d+) cpu_ns=(\d+)", re.M)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--ops", type=int, default=400000)
    ap.add_argument("--cpu", default="1")
    ap.add_argument("variants", nargs="+", metavar="NAME=LIB")
    args = ap.parse_args()
    names = [v.split("=", 1)[0] for v in args.variants]
    if len(names) < 2 or any("=" not in v for v in args.variants):
        ap.error("give at least two NAME=LIB variants")
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "interleave")
        subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-pthread", "-o", exe,
                        os.path.join(HERE, "hotpath", "interleave.c"), "-ldl"], check=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("RSURING_")}
        print(f"{args.rounds} rounds of {args.ops} ops per block, CPU {args.cpu}; "
              f"CPU time per op relative to {names[0]}: median (min-max)")
        for block, argv in BLOCKS:
            ratios = {n: [] for n in names[1:]}
            for r in range(args.rounds):
                order = args.variants[r % len(names):] + args.variants[:r % len(names)]
                cmd = ["taskset", "-c", args.cpu, exe] + [a.format(ops=args.ops) for a in argv] + order
                out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
                per_op = {m[0]: int(m[2]) / int(m[1]) for m in RESULT.findall(out)}
                if set(per_op) != set(names):
                    sys.exit(f"interleave printed {sorted(per_op)}, expected {names}:\n{out}")
                for n in names[1:]:
                    ratios[n].append(per_op[n] / per_op[names[0]])
            cells = [f"{n} {statistics.median(v):.3f} ({min(v):.3f}-{max(v):.3f})"
                     for n, v in ratios.items()]
            print(f"{block:9} " + "  ".join(cells))


if __name__ == "__main__":
    main()
