#!/usr/bin/env python3
"""Checks the I/O priorities the block layer saw, from a tracefs
block:block_rq_issue trace (one instance, filtered to one device).

  ioprio_check.py TRACE --min N --expect "DIR BYTES PRIO LO-HI" ...

Each trace line gives a request's direction (first letter of rwbs: R, W),
its size in bytes and its priority as class,hint,level (rt,0,2). An
--expect says that LO..HI percent of the requests of that direction and
size carry PRIO; BYTES "*" stands for every size that no other --expect of
that direction names (the block layer splits large requests at its own
limits). Every request must match the DIR BYTES PRIO of some
--expect, and there must be at least N requests. Prints the histogram;
exits 1 with the reason when a check fails.
"""
import argparse
import collections
import re
import sys

LINE = re.compile(r"block_rq_issue: \d+,\d+ (\S+) (\d+) \(.*?\) \d+ \+ \d+ "
                  r"([a-z]+,\d+,\d+) \[")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--min", type=int, default=1)
    ap.add_argument("--expect", action="append", default=[])
    a = ap.parse_args()

    hist = collections.Counter()
    for line in open(a.trace, errors="replace"):
        m = LINE.search(line)
        if m:
            hist[(m.group(1)[0], int(m.group(2)), m.group(3))] += 1
    named = set()
    for spec in a.expect:
        d, b = spec.split()[:2]
        if b != "*":
            named.add((d, int(b)))
    # Sizes no --expect names fold into "*" of their direction.
    folded = collections.Counter()
    for (d, b, p), n in hist.items():
        folded[(d, b if (d, b) in named else "*", p)] += n
    hist = folded
    groups = collections.Counter()
    for (d, b, _), n in hist.items():
        groups[(d, b)] += n
    for (d, b, p), n in sorted(hist.items(), key=str):
        print(f"  {d} {b} {p}: {n} of {groups[(d, b)]}")
    total = sum(hist.values())
    fails = []
    if total < a.min:
        fails.append(f"{total} requests traced, wanted at least {a.min}")
    wanted = set()
    for spec in a.expect:
        d, b, p, rng = spec.split()
        lo, hi = (float(x) for x in rng.split("-"))
        b = b if b == "*" else int(b)
        wanted.add((d, b, p))
        have = groups[(d, b)]
        pct = 100.0 * hist[(d, b, p)] / have if have else 0.0
        if not lo <= pct <= hi:
            fails.append(f"{d} {b} {p}: {pct:.1f}% of {have}, wanted {lo:g}-{hi:g}%")
    for key, n in sorted(hist.items(), key=str):
        if key not in wanted:
            fails.append(f"unexpected: {n} requests {' '.join(map(str, key))}")
    if fails:
        print("\n".join(fails))
        sys.exit(1)


if __name__ == "__main__":
    main()
