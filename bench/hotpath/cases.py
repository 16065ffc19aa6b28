# SPDX-License-Identifier: MIT
"""What bench/hotpath measures: the blocks of interleaved runs, the variants
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


NOP_VARIANTS = ("deb", "up", "rs", "rs2", "rs_sqarray")
B32_VARIANTS = NOP_VARIANTS + ("rs_stats", "deb_reg", "up_reg", "rs_reg",
                               "deb_defer", "up_defer", "rs_defer", "tio", "rs_proc", "tio2", "crate")
READ_VARIANTS = ("deb", "up", "rs", "rs2")

BLOCKS = [
    Block("nop_qd1", "NOP QD1 round trip", ("nop-qd1", "{ops}"), 2_000_000, "cpu", NOP_VARIANTS,
          chunks=200),
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
    Block("read_buf_qd1", "4k random reads, buffered (/dev/shm), QD1",
          ("{file}", "1", "buffered", "plain", "{ops}"), 300_000, "cpu", READ_VARIANTS, 0.6, "file"),
    Block("read_buf_qd32", "4k random reads, buffered (/dev/shm), QD32",
          ("{file}", "32", "buffered", "plain", "{ops}"), 600_000, "cpu", READ_VARIANTS, 0.6, "file"),
    Block("read_buf_qd32_defer", "4k random reads, buffered (/dev/shm), QD32, DEFER_TASKRUN",
          ("{file}", "32", "buffered", "defer", "{ops}"), 600_000, "cpu", READ_VARIANTS, 0.6, "file"),
    Block("read_dio_qd1", "4k random reads, O_DIRECT (loop device), QD1",
          ("{dev}", "1", "direct", "plain", "{ops}"), 60_000, "wall", READ_VARIANTS, 0.6, "dev"),
    Block("read_dio_qd32", "4k random reads, O_DIRECT (loop device), QD32",
          ("{dev}", "32", "direct", "plain", "{ops}"), 300_000, "wall", READ_VARIANTS, 0.6, "dev"),
    Block("read_dio_qd128_defer", "4k random reads, O_DIRECT (loop device), QD128, DEFER_TASKRUN",
          ("{dev}", "128", "direct", "defer", "{ops}"), 300_000, "wall", READ_VARIANTS, 0.6, "dev"),
]


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


ROWS = [
    # Targets of issue 17.
    Row("nop_b32", "rs", "up", "NOP QD128 b32: rsuring vs liburing 2.15", 1.02, "targets"),
    Row("nop_b32", "rs", "deb", "NOP QD128 b32: rsuring vs liburing 2.3", 1.05, "targets"),
    Row("nop_b8", "rs", "up", "NOP QD128 b8: rsuring vs liburing 2.15", 1.02, "targets"),
    Row("nop_b8", "rs", "deb", "NOP QD128 b8: rsuring vs liburing 2.3", 1.05, "targets"),
    Row("nop_qd1", "rs", "up", "NOP QD1: rsuring vs liburing 2.15", 1.00, "targets"),
    Row("nop_qd1", "rs", "deb", "NOP QD1: rsuring vs liburing 2.3", 1.00, "targets"),
    Row("nop_b32", "rs_proc", "tio", "NOP QD128 b32: rsuring vs t/io_uring -N1 (separate processes)", 0.95,
        "targets"),
    # Where the difference to liburing 2.3 comes from (same runs).
    Row("nop_b32", "rs_sqarray", "deb", "b32: library code alone (both with the kernel's SQ array)", 0,
        "attribution"),
    Row("nop_b32", "rs", "rs_sqarray", "b32: NO_SQARRAY alone (rsuring with vs without)", 0, "attribution"),
    Row("nop_b32", "up", "deb", "b32: liburing 2.15 vs 2.3 (its library and NO_SQARRAY)", 0, "attribution"),
    Row("nop_b8", "rs_sqarray", "deb", "b8: library code alone", 0, "attribution"),
    Row("nop_b8", "rs", "rs_sqarray", "b8: NO_SQARRAY alone", 0, "attribution"),
    Row("nop_b8", "up", "deb", "b8: liburing 2.15 vs 2.3", 0, "attribution"),
    Row("nop_qd1", "rs_sqarray", "deb", "QD1: library code alone", 0, "attribution"),
    Row("nop_qd1", "rs", "rs_sqarray", "QD1: NO_SQARRAY alone", 0, "attribution"),
    Row("nop_qd1", "up", "deb", "QD1: liburing 2.15 vs 2.3", 0, "attribution"),
    # The raw limit and like-for-like ring setups.
    Row("nop_b32", "rs_defer", "tio", "b32, DEFER_TASKRUN ring (as t/io_uring): rsuring vs t/io_uring",
        0, "references"),
    Row("nop_b32", "up_defer", "tio", "b32, DEFER_TASKRUN ring: liburing 2.15 vs t/io_uring", 0, "references"),
    Row("nop_b32", "rs_defer", "up_defer", "b32, DEFER_TASKRUN ring: rsuring vs liburing 2.15", 0, "references"),
    Row("nop_b32", "rs_defer", "deb_defer", "b32, DEFER_TASKRUN ring: rsuring vs liburing 2.3", 0, "references"),
    Row("nop_b32", "rs_reg", "up_reg", "b32, registered ring fd: rsuring vs liburing 2.15", 0, "references"),
    Row("nop_b32", "rs_reg", "deb_reg", "b32, registered ring fd: rsuring vs liburing 2.3", 0, "references"),
    Row("nop_b32", "rs_proc", "crate", "b32: rsuring vs the io-uring crate (separate processes)", 0,
        "references"),
    Row("nop_b32", "rs_proc", "rs", "b32: rsuring in a process of its own vs interleaved", 0, "references"),
    Row("nop_b32", "rs_stats", "rs", "b32: RSURING_STATS=1 vs off", 0, "references"),
    # Other cases.
    Row("nop_b1", "rs", "up", "NOP QD128 b1: rsuring vs liburing 2.15"),
    Row("nop_b1", "rs", "deb", "NOP QD128 b1: rsuring vs liburing 2.3"),
    Row("reap_one", "rs", "up", "reap peek_cqe + cqe_seen: rsuring vs liburing 2.15"),
    Row("reap_one", "rs", "deb", "reap peek_cqe + cqe_seen: rsuring vs liburing 2.3"),
    Row("reap_batch", "rs", "up", "reap peek_batch_cqe: rsuring vs liburing 2.15"),
    Row("reap_batch", "rs", "deb", "reap peek_batch_cqe: rsuring vs liburing 2.3"),
    Row("reap_batch", "rs_ext", "up", "reap rsuring_wait_batch_cqe vs liburing 2.15 peek_batch_cqe"),
]
for _b in BLOCKS:
    if _b.name.startswith("read_"):
        ROWS.append(Row(_b.name, "rs", "up", _b.label.replace("4k random reads", "reads") + ": rsuring vs 2.15"))
        ROWS.append(Row(_b.name, "rs", "deb", _b.label.replace("4k random reads", "reads") + ": rsuring vs 2.3"))

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
