# SPDX-License-Identifier: MIT
"""What bench/hotpath.sh measures: the blocks of interleaved runs, the variants
in them, and the comparisons the report draws from them.

A block is one loop (an interleave.c or reads.c command, or a reference program doing the
same work) run by several variants -- libraries, environments, ring flags --
in the same rounds, and every round gives one ratio per pair of variants.

- NOP blocks are interleaved inside one process per round
  (interleave.c): every library in a dlmopen() namespace of its own, the
  variants taking turns in chunks of a few milliseconds, so they share the
  machine's moment. Reference programs that cannot be loaded that way
  (t/io_uring, the Rust crate) run as processes next to it in the round.
- The other blocks run one process per variant, in an order that rotates
  from round to round.

Every block has rsuring twice ("rs" and "rs2": separately loaded copies of
the same file): their ratio is the block's noise floor. The batch-32 block
also runs t/io_uring twice ("tio", "tio2") for the noise floor of
comparisons between separate processes.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Variant:
    """How one variant runs. lib: which liburing.so.2 the program loads
    (deb = Debian's 2.3, up = upstream's, when built; rs = rsuring); kind:
    hotpath (interleave.c, or reads.c for the read blocks), tio (fio's
    t/io_uring), crate (the io-uring crate peer)."""

    label: str
    lib: str = ""
    kind: str = "hotpath"
    args: tuple = ()
    env: tuple = ()
    own_process: bool = False  # a process of its own even in an interleaved block


VARIANTS = {
    "deb": Variant("liburing 2.3 (Debian)", lib="deb"),
    "up": Variant("liburing 2.15 (upstream)", lib="up"),
    "rs": Variant("rsuring", lib="rs"),
    "rs2": Variant("rsuring, second copy (A vs A)", lib="rs"),
    "rs_sqarray": Variant("rsuring with RSURING_SQARRAY=1 (kernel SQ array kept)", lib="rs",
                          env=(("RSURING_SQARRAY", "1"),)),
    "rs_stats": Variant("rsuring with RSURING_STATS=1", lib="rs", env=(("RSURING_STATS", "1"),)),
    "rs_autoreg": Variant("rsuring with RSURING_REGISTER_RING_FD=1 (automatic ring fd registration)",
                          lib="rs", env=(("RSURING_REGISTER_RING_FD", "1"),)),
    "deb_reg": Variant("liburing 2.3, registered ring fd", lib="deb", args=("regring",)),
    "up_reg": Variant("liburing 2.15, registered ring fd", lib="up", args=("regring",)),
    "rs_reg": Variant("rsuring, registered ring fd", lib="rs", args=("regring",)),
    "deb_defer": Variant("liburing 2.3, SINGLE_ISSUER|DEFER_TASKRUN ring", lib="deb", args=("defer",)),
    "up_defer": Variant("liburing 2.15, SINGLE_ISSUER|DEFER_TASKRUN ring", lib="up", args=("defer",)),
    "rs_defer": Variant("rsuring, SINGLE_ISSUER|DEFER_TASKRUN ring", lib="rs", args=("defer",)),
    "rs_ext": Variant("rsuring, rsuring_wait_batch_cqe", lib="rs", args=("waitbatch",)),
    "tio": Variant("fio t/io_uring -N1 (raw system calls)", kind="tio"),
    "tio2": Variant("fio t/io_uring -N1, second run (A vs A between processes)", kind="tio"),
    "crate": Variant("io-uring crate (Rust)", kind="crate"),
    "rs_proc": Variant("rsuring, a process of its own (paired with t/io_uring)", lib="rs", own_process=True),
}


@dataclass(frozen=True)
class Block:
    """One command, its fixed amount of work, and its variants.
    metric: cpu (CPU ns per operation), wall (wall ns per operation: I/O
    that other threads or devices complete), reap (median ns per CQE).
    chunks: interleave the library variants in one process, in this many
    chunks of ops / chunks operations each (0: a process per variant)."""

    name: str
    label: str
    args: tuple  # interleave.c or reads.c arguments; "{ops}" (last) is the amount of work
    ops: int
    metric: str
    variants: tuple
    rounds_scale: float = 1.0
    needs: str = ""  # "file" or "dev": the read target
    chunks: int = 0


NOP_VARIANTS = ("deb", "up", "rs", "rs2", "rs_sqarray", "rs_autoreg")
B32_VARIANTS = NOP_VARIANTS + ("rs_stats", "deb_reg", "up_reg", "rs_reg",
                               "deb_defer", "up_defer", "rs_defer", "tio", "rs_proc", "tio2", "crate")
READ_VARIANTS = ("deb", "up", "rs", "rs2")

BLOCKS = [
    Block("nop_qd1", "NOP QD1 round trip", ("nop-qd1", "{ops}"), 2_000_000, "cpu",
          NOP_VARIANTS + ("rs_stats",), chunks=200),
    Block("nop_b1", "NOP QD128, submit batch 1", ("nop-qd", "128", "1", "{ops}"), 2_000_000, "cpu",
          NOP_VARIANTS, chunks=200),
    Block("nop_b8", "NOP QD128, submit batch 8", ("nop-qd", "128", "8", "{ops}"), 8_000_000, "cpu",
          NOP_VARIANTS, chunks=200),
    Block("nop_b32", "NOP QD128, submit batch 32", ("nop-qd", "128", "32", "{ops}"), 10_000_000, "cpu",
          B32_VARIANTS, chunks=200),
    Block("reap_one", "reap 128 CQEs: peek_cqe + cqe_seen each", ("reap-one", "{ops}"), 40_000,
          "reap", READ_VARIANTS, chunks=100),
    Block("reap_batch", "reap 128 CQEs: peek_batch_cqe + cq_advance", ("reap-batch", "{ops}"), 40_000,
          "reap", READ_VARIANTS + ("rs_ext",), chunks=100),
]


def read_block(target, qd, ring, ops, extra=()):
    """A 4k random read block (reads.c): buffered on a /dev/shm file
    (target "file", CPU time) or O_DIRECT on the loop device ("dev", wall
    time), QD `qd`, a plain or DEFER_TASKRUN ("defer") ring; `extra`:
    variants beyond READ_VARIANTS."""
    buffered = target == "file"
    where = "buffered (/dev/shm)" if buffered else "O_DIRECT (loop device)"
    defer = ring == "defer"
    return Block(f"read_{'buf' if buffered else 'dio'}_qd{qd}{'_defer' if defer else ''}",
                 f"4k random reads, {where}, QD{qd}{', DEFER_TASKRUN' if defer else ''}",
                 ("{" + target + "}", str(qd), "buffered" if buffered else "direct", ring, "{ops}"),
                 ops, "cpu" if buffered else "wall", READ_VARIANTS + tuple(extra), 0.6, target)


BLOCKS += [read_block(*b) for b in (("file", 1, "plain", 300_000, ("rs_stats",)), ("file", 32, "plain", 600_000),
                                    ("file", 32, "defer", 600_000), ("dev", 1, "plain", 60_000),
                                    ("dev", 32, "plain", 300_000), ("dev", 128, "defer", 300_000))]


@dataclass(frozen=True)
class Row:
    """One ratio in the report: speed of `subject` relative to `baseline`
    (baseline ns per op / subject ns per op: > 1 means subject is faster),
    from the pairs of runs of one block. target: the ratio it should reach."""

    block: str
    subject: str
    baseline: str
    label: str
    target: float = 0.0
    section: str = "other"


def against_both(block, what, targets=(0.0, 0.0), section="other", vs="rsuring vs liburing"):
    """The two rows of `block` for rsuring against liburing 2.15 ("up") and
    2.3 ("deb"), labelled "WHAT: VS 2.15" and "WHAT: VS 2.3"."""
    return [Row(block, "rs", base, f"{what}: {vs} {version}", target, section)
            for base, version, target in (("up", "2.15", targets[0]), ("deb", "2.3", targets[1]))]


def attribution(block, what, notes=("", "", "")):
    """Where the difference to liburing 2.3 comes from, in `block`'s runs:
    the library code, NO_SQARRAY, and liburing's own change (each label
    with its note, if any)."""
    parts = (("rs_sqarray", "deb", "library code alone"),
             ("rs", "rs_sqarray", "NO_SQARRAY alone"),
             ("up", "deb", "liburing 2.15 vs 2.3"))
    return [Row(block, subject, base, f"{what}: {text}{note}", 0, "attribution")
            for (subject, base, text), note in zip(parts, notes)]


def references(pairs):
    """Like-for-like ring setups of the NOP QD128 b32 block: (subject,
    baseline, label) each."""
    return [Row("nop_b32", subject, base, label, 0, "references") for subject, base, label in pairs]


ROWS = [
    # Targets of issue 20: at least 2.15's speed and 1.03x 2.3's at every batch.
    *against_both("nop_b32", "NOP QD128 b32", (1.00, 1.03), "targets"),
    *against_both("nop_b8", "NOP QD128 b8", (1.00, 1.03), "targets"),
    *against_both("nop_b1", "NOP QD128 b1", (1.00, 1.03), "targets"),
    *against_both("nop_qd1", "NOP QD1", (1.00, 1.03), "targets"),
    # The opt-in automatic ring fd registration (issue 34: off by default).
    *[Row(b, "rs_autoreg", "up", f"{what}: RSURING_REGISTER_RING_FD=1 vs liburing 2.15", 0, "targets")
      for b, what in (("nop_qd1", "NOP QD1"), ("nop_b1", "NOP QD128 b1"), ("nop_b8", "NOP QD128 b8"),
                      ("nop_b32", "NOP QD128 b32"))],
    Row("nop_b32", "rs_proc", "tio", "NOP QD128 b32: rsuring vs t/io_uring -N1 (separate processes)", 0.95,
        "targets"),
    # Where the difference to liburing 2.3 comes from (same runs).
    *attribution("nop_b32", "b32", (" (both with the kernel's SQ array)", " (rsuring with vs without)",
                                    " (its library and NO_SQARRAY)")),
    *attribution("nop_b8", "b8"),
    *attribution("nop_qd1", "QD1"),
    # The raw limit and like-for-like ring setups.
    *references((
        ("rs_defer", "tio", "b32, DEFER_TASKRUN ring (as t/io_uring): rsuring vs t/io_uring"),
        ("up_defer", "tio", "b32, DEFER_TASKRUN ring: liburing 2.15 vs t/io_uring"),
        ("rs_defer", "up_defer", "b32, DEFER_TASKRUN ring: rsuring vs liburing 2.15"),
        ("rs_defer", "deb_defer", "b32, DEFER_TASKRUN ring: rsuring vs liburing 2.3"),
        ("rs_reg", "up_reg", "b32, registered ring fd: rsuring vs liburing 2.15"),
        ("rs_reg", "deb_reg", "b32, registered ring fd: rsuring vs liburing 2.3"),
        ("rs_proc", "crate", "b32: rsuring vs the io-uring crate (separate processes)"),
        ("rs_proc", "rs", "b32: rsuring in a process of its own vs interleaved"),
        ("rs_stats", "rs", "b32: RSURING_STATS=1 vs off"),
    )),
    # The cost of statistics where a round trip is shortest (issue 38).
    Row("nop_qd1", "rs_stats", "rs", "QD1: RSURING_STATS=1 vs off", 0, "references"),
    Row("read_buf_qd1", "rs_stats", "rs", "reads, buffered (/dev/shm), QD1: RSURING_STATS=1 vs off",
        0, "references"),
    # Other cases.
    *against_both("reap_one", "reap peek_cqe + cqe_seen"),
    *against_both("reap_batch", "reap peek_batch_cqe"),
    Row("reap_batch", "rs_ext", "up", "reap rsuring_wait_batch_cqe vs liburing 2.15 peek_batch_cqe"),
]
for _b in BLOCKS:
    if _b.name.startswith("read_"):
        ROWS += against_both(_b.name, _b.label.replace("4k random reads", "reads"), vs="rsuring vs")

SECTIONS = [
    ("targets", "Targets"),
    ("attribution", "Where the difference comes from (same runs)"),
    ("references", "References and other ring setups"),
    ("other", "Other cases"),
]

BLOCK_BY_NAME = {b.name: b for b in BLOCKS}

# The A-vs-A pairs: (subject, baseline) of the same variant twice. A row's
# noise floor is that of the pair of its kind: within one process ("rs")
# or between processes ("tio", where the block has it).
NOISE = {"inproc": ("rs2", "rs"), "process": ("tio2", "tio")}


def is_inproc(block, vid):
    """Whether a variant of a block runs interleaved inside one process."""
    v = VARIANTS[vid]
    return bool(block.chunks) and v.kind == "hotpath" and not v.own_process
