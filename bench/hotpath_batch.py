# SPDX-License-Identifier: MIT
"""Batched reaping (bench/hotpath/batch.c): rsuring_wait_batch_cqe against
liburing 2.15's best pattern, per round, and against rsuring's own
peek_batch_cqe loop, with the A-vs-A noise floor (two separately loaded
copies of rsuring doing the same). Prints a markdown table.

  python3 bench/hotpath_batch.py --batch BIN --up LIB --rs LIB --file F
                                [--rounds N] [--scale X] [--cpu N]

Each round is one process running every variant interleaved (batch.c).
Figures per CQE: reap = the reaping step alone (CQEs ready, no system
call), timed a round at a time; deep = the same step timed over 1024
CQEs queued at once and reaped a batch at a time (the clock's cost a
small part of each interval); e2e = submit + wait + reap, the process's
CPU time (user + kernel of every thread: the kernel hands each buffered
read of a tmpfs file to an io-wq worker of the process). A ratio is
rsuring's figure / the other's (< 1 = rsuring cheaper), per round; the
table gives the median over the rounds with min-max.
"""

import argparse
import statistics
import subprocess

UP_PATTERNS = {"reap": ("wnrpeek", "wnreach"), "deep": ("wnrpeek", "wnreach"), "e2e": ("swpeek", "sweach", "wnrpeek", "wnreach")}
# Rounds of batch.c per process at scale 1 (per mode/op), for BATCH 8;
# larger batches do proportionally fewer rounds (deep: 1024 CQEs a round
# at every batch).
WORK = {("reap", "nop"): 40000, ("reap", "read"): 8000, ("e2e", "nop"): 40000, ("e2e", "read"): 3000,
        ("deep", "nop"): 2000, ("deep", "read"): 400}


def run_once(args, mode, op, batch):
    per_batch = 1 if mode == "deep" else 8 / batch
    rounds = max(100, int(WORK[(mode, op)] * args.scale * per_batch))
    chunks = 20
    rounds -= rounds % chunks
    variants = [f"up_{p}={args.up},{p}" for p in UP_PATTERNS[mode]]
    own_peek = "swpeek" if mode == "e2e" else "wnrpeek"
    variants += [f"rs_wb={args.rs},wb", f"rs_wb2={args.rs2},wb", f"rs_peek={args.rs},{own_peek}"]
    cmd = ["taskset", "-c", str(args.cpu), args.batch, mode, op, str(batch), str(rounds),
           str(chunks), args.file if op == "read" else "-"] + variants
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    res = {}
    for line in out.splitlines():
        if not line.startswith("RESULT "):
            continue
        f = dict(kv.split("=", 1) for kv in line.split()[1:])
        cqes = int(f["cqes"])
        per = int(f["cpu_ns"]) / cqes if mode == "e2e" else float(f["reap_ns_per_cqe"])
        user = int(f["user_ns"]) / max(1, int(f["user_ns"]) + int(f["sys_ns"]))
        res[f["name"]] = (per, user)
    return res


def fmt(vals):
    return f"{statistics.median(vals):.3f} | {min(vals):.3f}–{max(vals):.3f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", required=True)
    ap.add_argument("--up", required=True)
    ap.add_argument("--rs", required=True)
    ap.add_argument("--rs2", help="a second copy of --rs (A vs A); default: --rs")
    ap.add_argument("--file", required=True)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--cpu", type=int, default=0)
    ap.add_argument("--only", default="", help="e.g. reap:nop")
    ap.add_argument("--batched", metavar="DEV", help="instead: rsuring_queue_init_batched vs a "
                    "plain ring, QD32 buffered reads of --file and O_DIRECT reads of DEV")
    args = ap.parse_args()
    args.rs2 = args.rs2 or args.rs
    if args.batched:
        batched(args)
        return
    print("| step | op | batch | rsuring ns/CQE | liburing 2.15 best ns/CQE (pattern) "
          "| wait_batch / 2.15 best | min–max | wait_batch / own peek loop | min–max "
          "| A vs A noise | user share (rs / 2.15) |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for mode in ("reap", "deep", "e2e"):
        for op in ("nop", "read"):
            if args.only and args.only != f"{mode}:{op}":
                continue
            for batch in (8, 32, 128):
                runs = [run_once(args, mode, op, batch) for _ in range(args.rounds)]
                best, own, noise, best_names = [], [], [], []
                for r in runs:
                    name = min((k for k in r if k.startswith("up_")), key=lambda k: r[k][0])
                    best_names.append(name[3:])
                    best.append(r["rs_wb"][0] / r[name][0])
                    own.append(r["rs_wb"][0] / r["rs_peek"][0])
                    noise.append(r["rs_wb"][0] / r["rs_wb2"][0])
                rs_med = statistics.median(r["rs_wb"][0] for r in runs)
                up_med = statistics.median(min(v[0] for k, v in r.items() if k.startswith("up_"))
                                           for r in runs)
                pat = max(set(best_names), key=best_names.count)
                nf = max(abs(x - 1) for x in noise) * 100
                us_rs = statistics.median(r["rs_wb"][1] for r in runs) * 100
                us_up = statistics.median(r[f"up_{pat}"][1] for r in runs) * 100
                print(f"| {mode} | {op} | {batch} | {rs_med:.2f} | {up_med:.2f} ({pat}) "
                      f"| {fmt(best)} | {fmt(own)} | ±{nf:.1f}% | {us_rs:.1f}% / {us_up:.1f}% |",
                      flush=True)


def batched(args):
    """rsuring_queue_init_batched's ring against a plain ring, both reaped
    with rsuring_wait_batch_cqe, QD32 (32 reads queued and reaped a round)."""
    print("| reads, QD32 | batched / plain CPU per I/O | min–max | batched / plain IOPS "
          "| min–max | A vs A noise (CPU) | plain: CPU ns/I/O, IOPS |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for op, path, work in (("read", args.file, 3000), ("dread", args.batched, 3000)):
        cpu, iops, noise, base = [], [], [], []
        for _ in range(args.rounds):
            rounds = max(100, int(work * args.scale)) // 20 * 20
            cmd = ["taskset", "-c", str(args.cpu), args.batch, "e2e", op, "32", str(rounds), "20",
                   path, f"plain={args.rs},wb", f"plain2={args.rs2},wb", f"batched={args.rs},wbb"]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            r = {}
            for line in out.splitlines():
                if line.startswith("RESULT "):
                    f = dict(kv.split("=", 1) for kv in line.split()[1:])
                    r[f["name"]] = (int(f["cpu_ns"]) / int(f["cqes"]),
                                    int(f["cqes"]) / int(f["wall_ns"]) * 1e9)
            cpu.append(r["batched"][0] / r["plain"][0])
            iops.append(r["batched"][1] / r["plain"][1])
            noise.append(r["plain2"][0] / r["plain"][0])
            base.append(r["plain"])
        nf = max(abs(x - 1) for x in noise) * 100
        what = "buffered (/dev/shm)" if op == "read" else "O_DIRECT (loop device)"
        print(f"| {what} | {fmt(cpu)} | {fmt(iops)} | ±{nf:.1f}% "
              f"| {statistics.median(b[0] for b in base):.0f}, "
              f"{statistics.median(b[1] for b in base):.0f} |", flush=True)


if __name__ == "__main__":
    main()
