#!/usr/bin/env python3
"""The engine's verify matrix, run by test.sh (which owns the loop device
and the scratch directory):

    workload x mode x target x iodepth, verify=crc32c, for each fio binary

workload: write, randwrite, rw, randrw, and read-after-write (a randwrite
          pass with do_verify=0, then the same job with verify_only=1 in a
          second fio process)
mode:     plain ring, defer_taskrun, sqthread_poll, sqthread_poll_percpu
          (4 thread jobs; the rings open at the same time must have
          exactly one kernel SQ thread between them, from fdinfo),
          fixedbufs+registerfiles, nonvectored=0 (READV/WRITEV; the
          default on current kernels is nonvectored READ/WRITE, which the
          plain mode uses), submit_and_wait
target:   a buffered file on /dev/shm, O_DIRECT on a loop device
iodepth:  1, 16, 128

A cell passes when fio exits 0, every job reports error 0, and the verify
pass read back at least what the cell wrote. Prints one line per
(fio, target, mode, workload) and "N passed, M failed"; exits non-zero
on any failure.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fio_run import read_report, run_fio  # noqa: E402

WORKLOADS = ["write", "randwrite", "rw", "randrw", "read-after-write"]
MODES = {
    "plain": ["--defer_taskrun=0"],
    "defer_taskrun": ["--defer_taskrun=1"],
    "sqthread_poll": ["--sqthread_poll=1"],
    "sqthread_poll_percpu": ["--sqthread_poll_percpu=1", "--thread=1"],
    "fixedbufs+registerfiles": ["--fixedbufs=1", "--registerfiles=1"],
    "nonvectored=0": ["--nonvectored=0", "--defer_taskrun=0"],
    "submit_and_wait": ["--submit_and_wait=1"],
}
PERCPU_JOBS = 4
DEPTHS = [1, 16, 128]


def cell_args(a, target, mode, qd):
    size = a.size_kib * 1024
    args = ["--name=m", f"--ioengine=external:{a.engine}", "--bs=4k",
            "--verify=crc32c", f"--iodepth={qd}"]
    if target == "file":
        args += [f"--filename={os.path.join(a.dir, 'matrix-file')}", "--direct=0"]
    else:
        args += [f"--filename={a.loop}", "--direct=1"]
    if mode == "sqthread_poll_percpu":
        part = size // PERCPU_JOBS
        args += [f"--numjobs={PERCPU_JOBS}", f"--size={part}",
                 f"--offset_increment={part}"]
    else:
        args += [f"--size={size}"]
    return args + MODES[mode]


def run_cell(a, fio, target, mode, workload, qd):
    """Returns None when the cell passes, else a description of the failure."""
    base = cell_args(a, target, mode, qd)
    out = os.path.join(a.dir, "matrix.json")
    if workload == "read-after-write":
        steps = [base + ["--rw=randwrite", "--do_verify=0"],
                 base + ["--rw=randwrite", "--verify_only=1"]]
    else:
        steps = [base + [f"--rw={workload}"]]
    shared_seen = False
    for i, args in enumerate(steps):
        r = run_fio(fio, args, out)
        log = r.log
        what = f"step {i + 1}/{len(steps)}: {' '.join(args)}"
        if r.returncode != 0:
            return f"{what}\nfio exit status {r.returncode}\n{log}"
        jobs = read_report(out)
        errors = [(j["jobname"], j["error"]) for j in jobs if j["error"]]
        rd = sum(j["read"]["io_bytes"] for j in jobs)
        wr = sum(j["write"]["io_bytes"] for j in jobs)
        if errors:
            return f"{what}\njob errors {errors}\n{log}"
        verify_step = i == len(steps) - 1
        if workload == "read-after-write":
            if verify_step and rd < a.size_kib * 1024:
                return f"{what}\nverify_only read {rd} bytes of {a.size_kib * 1024}\n{log}"
            if not verify_step and wr < a.size_kib * 1024:
                return f"{what}\nwrote {wr} bytes of {a.size_kib * 1024}\n{log}"
        elif wr == 0 or rd < wr:
            return f"{what}\nwrote {wr} bytes but read back {rd}\n{log}"
        # Sharing is seen when rings are open together: at every sample
        # they had one SQ thread between them. A short step (the verify-only
        # pass reads a few hundred KiB per job) may finish each job before
        # the next opens its ring, so rings open together are required of
        # the cell as a whole, one thread of every step.
        if mode == "sqthread_poll_percpu":
            if r.sq_threads > 1:
                return (f"{what}\n{PERCPU_JOBS} jobs: up to {r.rings} rings open at"
                        f" once on {r.sq_threads} SQ threads; wanted 1\n{log}")
            shared_seen = shared_seen or (r.rings >= 2 and r.sq_threads == 1)
    if mode == "sqthread_poll_percpu" and not shared_seen:
        # Every step was too short for the sampler to see two jobs' rings
        # open together (small cells on an idle machine). One more step,
        # reading for a fixed second without verifying (the data was checked
        # above), keeps the rings open together long enough to be seen.
        hold = base + ["--rw=randread", "--verify=0", "--time_based", "--runtime=1"]
        r = run_fio(fio, hold, out)
        what = f"observation step: {' '.join(hold)}"
        if r.returncode != 0:
            return f"{what}\nfio exit status {r.returncode}\n{r.log}"
        if r.rings < 2 or r.sq_threads != 1:
            return (f"{what}\n{PERCPU_JOBS} jobs: up to {r.rings} rings open at once"
                    f" on {r.sq_threads} SQ threads; wanted 2 or more on 1\n{r.log}")
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fio", action="append", required=True,
                    help="LABEL=PATH of a fio binary (repeatable)")
    ap.add_argument("--engine", required=True)
    ap.add_argument("--dir", required=True, help="scratch directory (/dev/shm)")
    ap.add_argument("--loop", required=True, help="loop device (direct I/O)")
    ap.add_argument("--size-kib", type=int, default=2048)
    a = ap.parse_args()

    passed = failed = 0
    t0 = time.time()
    for spec in a.fio:
        label, _, fio = spec.partition("=")
        for target in ("file", "loop"):
            for mode in MODES:
                for workload in WORKLOADS:
                    bad = []
                    for qd in DEPTHS:
                        why = run_cell(a, fio, target, mode, workload, qd)
                        if why is None:
                            passed += 1
                        else:
                            failed += 1
                            bad.append((qd, why))
                    name = (f"verify matrix [{label}] {target} {mode} {workload}"
                            f" iodepth {','.join(map(str, DEPTHS))}")
                    if not bad:
                        print(f"ok    {name}", flush=True)
                    for qd, why in bad:
                        print(f"FAIL  {name}: iodepth={qd}", flush=True)
                        for line in why.splitlines()[-25:]:
                            print(f"      | {line}")
    print(f"verify matrix: {passed} cells passed, {failed} failed"
          f" ({time.time() - t0:.0f} s)")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
