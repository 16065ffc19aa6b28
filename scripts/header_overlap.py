#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""How much of rsuring's include/liburing.h is liburing's code, line for line.

Usage: scripts/header_overlap.py UPSTREAM [OURS] [THEIRS_RELPATH]

  UPSTREAM        a liburing checkout (or its header file itself)
  OURS            rsuring's header (default: include/liburing.h next to scripts/)
  THEIRS_RELPATH  header inside the checkout (default: src/include/liburing.h)

Both files are reduced to "code lines" first: comments removed, whitespace
folded, and set aside are blank lines, lone braces, #include lines, macro
definitions (with their continuation lines), and whole struct / union / enum
definitions (their fields and values are facts that must stay identical).

Reported:
  in-order runs   lines of ours inside runs of 3+ consecutive code lines that
                  also occur consecutively, in the same order, in upstream
                  (the matching blocks of a diff of the two line lists)
  anywhere runs   the stricter count: lines of ours covered by any 3-line
                  window that occurs anywhere in upstream
  same bodies     functions whose body (code lines between the outer braces)
                  is longer than 3 lines and identical to an upstream body

Not part of the test suite: upstream is not reachable from CI.  Exit status
is 0 when at most 60 lines are in runs (either count) and no body longer
than 3 lines is identical, 1 otherwise.
"""
import difflib
import os
import re
import sys

RUN_MIN = 3
RUN_BUDGET = 60
BODY_MAX_SAME = 3


def strip_comments(text):
    """Blank out /* */ and // comments, keeping newlines (and strings)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join("\n" if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def fold(line):
    return " ".join(line.split())


LONE_BRACE = re.compile(r"^[{}]\s*;?$|^\}\s*\)?\s*;?$")
AGGREGATE = re.compile(r"^(typedef\s+)?(struct|union|enum)\b[^()]*\{$")


def code_lines(text):
    """(line number, folded line) for every line that counts."""
    lines = strip_comments(text).split("\n")
    kept = []
    in_macro = False
    depth = 0  # inside a struct/union/enum definition
    for no, raw in enumerate(lines, 1):
        line = fold(raw)
        if in_macro:
            in_macro = raw.rstrip().endswith("\\")
            continue
        if depth:
            depth += line.count("{") - line.count("}")
            continue
        if line.startswith("#") and re.match(r"#\s*define\b", line):
            in_macro = raw.rstrip().endswith("\\")
            continue
        if AGGREGATE.match(line):
            depth = line.count("{") - line.count("}")
            continue
        if not line or LONE_BRACE.match(line):
            continue
        if re.match(r"#\s*include\b", line):
            continue
        kept.append((no, line))
    return kept


FUNC_HEAD = re.compile(r"\b([A-Za-z_]\w*)\s*\([^;{}]*\)\s*(LIBURING_NOEXCEPT)?\s*$")


def function_bodies(text):
    """{name: [folded body lines]} for function definitions."""
    lines = [fold(l) for l in strip_comments(text).split("\n")]
    bodies = {}
    i = 0
    while i < len(lines):
        if lines[i] != "{" or i == 0:
            i += 1
            continue
        # the signature: the folded lines before the brace, back to a blank
        # or a line ending a previous statement
        j = i - 1
        head = []
        while j >= 0 and lines[j] and not lines[j].endswith((";", "}")) \
                and not lines[j].startswith("#"):
            head.insert(0, lines[j])
            j -= 1
        m = FUNC_HEAD.search(" ".join(head))
        k, depth, body = i, 0, []
        while k < len(lines):
            depth += lines[k].count("{") - lines[k].count("}")
            if k != i and depth > 0 and lines[k] and not LONE_BRACE.match(lines[k]):
                body.append(lines[k])
            if depth == 0:
                break
            k += 1
        if m:
            bodies.setdefault(m.group(1), body)
        i = k + 1
    return bodies


def runs(ours, theirs):
    """(in-order covered, anywhere covered, longest in-order run, blocks)."""
    a = [l for _, l in ours]
    b = [l for _, l in theirs]
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    blocks = [m for m in sm.get_matching_blocks() if m.size >= RUN_MIN]
    in_order = sum(m.size for m in blocks)
    longest = max((m.size for m in blocks), default=0)
    windows = {tuple(b[i:i + RUN_MIN]) for i in range(len(b) - RUN_MIN + 1)}
    covered = set()
    for i in range(len(a) - RUN_MIN + 1):
        if tuple(a[i:i + RUN_MIN]) in windows:
            covered.update(range(i, i + RUN_MIN))
    return in_order, len(covered), longest, blocks


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    upstream = argv[1]
    ours_path = argv[2] if len(argv) > 2 else os.path.join(root, "include/liburing.h")
    rel = argv[3] if len(argv) > 3 else "src/include/liburing.h"
    theirs_path = upstream if os.path.isfile(upstream) else os.path.join(upstream, rel)
    ours_text = open(ours_path, encoding="utf-8").read()
    theirs_text = open(theirs_path, encoding="utf-8").read()

    ours = code_lines(ours_text)
    theirs = code_lines(theirs_text)
    their_set = {l for _, l in theirs}
    same_lines = sum(1 for _, l in ours if l in their_set)
    in_order, anywhere, longest, blocks = runs(ours, theirs)

    our_bodies = function_bodies(ours_text)
    their_bodies = function_bodies(theirs_text)
    their_by_body = {}
    for name, body in their_bodies.items():
        their_by_body.setdefault(tuple(body), name)
    shared = sorted(set(our_bodies) & set(their_bodies))
    same_named = [n for n in shared if our_bodies[n] == their_bodies[n]]
    long_same = sorted(
        (n, their_by_body[tuple(b)], len(b))
        for n, b in our_bodies.items()
        if len(b) > BODY_MAX_SAME and tuple(b) in their_by_body)

    print(f"ours:     {ours_path}")
    print(f"upstream: {theirs_path}")
    print(f"code lines: ours {len(ours)}, upstream {len(theirs)}; "
          f"ours also somewhere in upstream: {same_lines}")
    print(f"lines in in-order runs of {RUN_MIN}+: {in_order} "
          f"(longest {longest}, {len(blocks)} runs)")
    print(f"lines in {RUN_MIN}-line windows found anywhere upstream: {anywhere}")
    print(f"functions: ours {len(our_bodies)}, shared names {len(shared)}, "
          f"identical bodies among them {len(same_named)}")
    print(f"bodies longer than {BODY_MAX_SAME} lines identical to an upstream body: "
          f"{len(long_same)}")
    for ours_name, their_name, n in long_same:
        print(f"  {ours_name} ({n} lines) = upstream {their_name}")
    a = [l for _, l in ours]
    for m in blocks:
        first, last = ours[m.a][0], ours[m.a + m.size - 1][0]
        print(f"  run of {m.size}: lines {first}-{last}: {a[m.a]}")
    ok = in_order <= RUN_BUDGET and anywhere <= RUN_BUDGET and not long_same
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
