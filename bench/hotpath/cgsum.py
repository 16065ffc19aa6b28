#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Self cost (Ir) per object and per function from a callgrind output file.

usage: cgsum.py CALLGRIND_OUT OPS [TOP]
Prints instructions per operation (Ir / OPS) for each object, then the TOP
most expensive functions of the io_uring library objects (liburing*, librsuring*).
"""

import re
import sys
from collections import defaultdict

NAME = re.compile(r"^\((\d+)\)(?: (.*))?$")


def parse(path):
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
                if skip_next:  # the inclusive cost of a call line
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
            elif key == "cob":
                resolve("ob", val)
            elif key == "cfn":
                resolve("fn", val)
            elif key == "calls":
                skip_next = True
    return cost


def main():
    path, ops = sys.argv[1], int(sys.argv[2])
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    cost = parse(path)
    by_ob = defaultdict(int)
    for (ob, _), v in cost.items():
        by_ob[ob] += v
    for ob, v in sorted(by_ob.items(), key=lambda kv: -kv[1]):
        if v / ops >= 0.01:
            print(f"  object {ob.rsplit('/', 1)[-1]:<28} {v / ops:9.2f} Ir/op")
    lib = [(k, v) for k, v in cost.items() if k[0] and "uring" in k[0].rsplit("/", 1)[-1]]
    for (ob, fn), v in sorted(lib, key=lambda kv: -kv[1])[:top]:
        if v / ops >= 0.01:
            print(f"    {fn[:100]:<100} {v / ops:9.2f} Ir/op")


if __name__ == "__main__":
    main()
