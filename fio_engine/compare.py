#!/usr/bin/env python3
"""Runs fio_engine/jobs/*.fio with fio's built-in io_uring engine and with
the rsuring engine (same fio binary, same run, interleaved rounds) and
prints a Markdown table. Called by compare.sh, which owns the loop device.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

FIO_URING = "io_uring"
NO_OPT = "stats=1"  # a no-op option line: fio rejects an empty ${ENGINE_OPT}


def sample_sq_threads(pid):
    n = 0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/comm") as f:
                    if f.read().startswith("iou-sqp"):
                        n += 1
            except OSError:
                pass
    except OSError:
        pass
    return n


def run_fio(a, job, engine, opt, runtime, qd=None):
    env = dict(os.environ, ENGINE=engine, DEV=a.dev, RUNTIME=str(runtime),
               ENGINE_OPT=opt or NO_OPT, QD=str(qd or 1))
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        p = subprocess.Popen(
            [a.fio, os.path.join(a.jobs, job), "--output-format=json",
             f"--output={out.name}"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        sq_max = 0
        while p.poll() is None:
            sq_max = max(sq_max, sample_sq_threads(p.pid))
            time.sleep(0.2)
        log = p.stdout.read().decode(errors="replace")
        if p.returncode != 0:
            sys.exit(f"fio {job} ({engine} {opt}) failed ({p.returncode}):\n{log}")
        text = open(out.name).read()
    doc = json.loads(text[text.index("{"):])
    jobs = doc["jobs"]
    errs = [j["error"] for j in jobs if j["error"]]
    if errs:
        sys.exit(f"fio {job} ({engine} {opt}) job errors {errs}:\n{log}")
    iops = sum(j["read"]["iops"] for j in jobs)
    clat = jobs[0]["read"]["clat_ns"]
    p99 = clat.get("percentile", {}).get("99.000000", 0)
    return {"iops": iops, "clat_mean": clat["mean"], "clat_p99": p99,
            "sq_threads": sq_max}


def kiops(v):
    return f"{v / 1000:.1f}K"


def us(ns):
    return f"{ns / 1000:.1f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fio", required=True)
    ap.add_argument("--engine-so", required=True)
    ap.add_argument("--jobs", required=True)
    ap.add_argument("--dev", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runtime", type=int, default=3)
    ap.add_argument("--lat-runtime", type=int, default=2)
    ap.add_argument("--depths", default="1,4,16,64,256")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rs = "external:" + a.engine_so
    depths = [int(d) for d in a.depths.split(",")]

    # key: (job file, engine, engine option line, runtime, iodepth)
    cfgs = {
        "qd32/fio": ("randread-qd32.fio", FIO_URING, None, a.runtime, None),
        "qd32/rs": ("randread-qd32.fio", rs, None, a.runtime, None),
        "qd32/rs-plain": ("randread-qd32.fio", rs, "defer_taskrun=0", a.runtime, None),
        "sq128/fio": ("randread-sqpoll-qd128.fio", FIO_URING, None, a.runtime, None),
        "sq128/rs": ("randread-sqpoll-qd128.fio", rs, None, a.runtime, None),
        "seed/fio": ("seed-4x32-sqpoll.fio", FIO_URING, None, a.runtime, None),
        "seed/rs-dedicated": ("seed-4x32-sqpoll.fio", rs, None, a.runtime, None),
        "seed/rs-percpu": ("seed-4x32-sqpoll.fio", rs, "sqthread_poll_percpu=1",
                           a.runtime, None),
    }
    for qd in depths:
        cfgs[f"lat{qd}/fio"] = ("latency.fio", FIO_URING, None, a.lat_runtime, qd)
        cfgs[f"lat{qd}/rs"] = ("latency.fio", rs, None, a.lat_runtime, qd)
        cfgs[f"lat{qd}/rs-plain"] = ("latency.fio", rs, "defer_taskrun=0",
                                     a.lat_runtime, qd)

    load_before = os.getloadavg()
    t0 = time.time()
    results = {k: [] for k in cfgs}
    for r in range(a.rounds):
        # Alternate the order (ABBA) so slow drifts in background load do
        # not favour whichever engine always runs first.
        order = list(cfgs.items())
        if r % 2:
            order.reverse()
        for k, (job, eng, opt, rt, qd) in order:
            res = run_fio(a, job, eng, opt, rt, qd)
            results[k].append(res)
            print(f"round {r + 1}/{a.rounds} {k:20s} {kiops(res['iops']):>8s} IOPS"
                  f"  clat mean {us(res['clat_mean'])} us"
                  f"  p99 {us(res['clat_p99'])} us  sq_threads {res['sq_threads']}",
                  file=sys.stderr, flush=True)
    load_after = os.getloadavg()

    def med(k, field):
        return statistics.median(x[field] for x in results[k])

    def sqt(k):
        return max(x["sq_threads"] for x in results[k])

    L = []
    L.append("# rsuring fio engine vs fio's io_uring engine")
    L.append("")
    L.append(f"- {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}, "
             f"Linux {platform.release()}, {os.cpu_count()} CPUs, fio-3.33 built "
             f"by build.sh (both engines in the same binary)")
    L.append(f"- 4k random reads, O_DIRECT, on a loop device (`--direct-io=on`) over "
             f"a 256 MiB /dev/shm file; {a.rounds} interleaved rounds (order reversed "
             f"every other round), median shown; "
             f"{a.runtime} s per throughput run, {a.lat_runtime} s per latency run")
    L.append(f"- load average before/after: {load_before[0]:.1f} / {load_after[0]:.1f} "
             f"(other work on the machine makes single runs noisy); "
             f"{time.time() - t0:.0f} s in all")
    L.append("")
    L.append("## Same job, both engines")
    L.append("")
    L.append("Both engines set up `SINGLE_ISSUER | DEFER_TASKRUN` rings by default "
             "where they can (not with an SQ thread); the last column is the "
             "rsuring engine with `defer_taskrun=0` (a plain ring).")
    L.append("")
    L.append("| job | fio io_uring IOPS | rsuring IOPS (ratio) "
             "| rsuring `defer_taskrun=0` IOPS (ratio) |")
    L.append("| --- | ---: | ---: | ---: |")
    for label, k in (("plain, QD 32", "qd32"),
                     ("sqthread_poll, QD 128 (job on CPU 0, SQ thread on CPU 1)", "sq128")):
        f, r = med(f"{k}/fio", "iops"), med(f"{k}/rs", "iops")
        if f"{k}/rs-plain" in results:
            d = med(f"{k}/rs-plain", "iops")
            dcol = f"{kiops(d)} ({d / f:.2f})"
        else:
            dcol = "n/a (not with an SQ thread)"
        L.append(f"| {label} | {kiops(f)} | {kiops(r)} ({r / f:.2f}) | {dcol} |")
    L.append("")

    single_fio = med("sq128/fio", "iops")
    single_rs = med("sq128/rs", "iops")
    ded_fio = med("seed/fio", "iops")
    L.append("## Seed experiment: 4 jobs x QD 32, `thread=1`, jobs on CPU 0, "
             "`sqthread_poll=1 sqthread_poll_cpu=1`")
    L.append("")
    L.append("| configuration | SQ threads seen | IOPS | vs 1 job x QD 128 (fio) "
             "| vs 4 x 32 dedicated (fio) |")
    L.append("| --- | ---: | ---: | ---: | ---: |")
    rows = (
        ("fio io_uring, 1 job x QD 128", "sq128/fio"),
        ("rsuring, 1 job x QD 128", "sq128/rs"),
        ("fio io_uring, 4 x 32, a poller per ring", "seed/fio"),
        ("rsuring, 4 x 32, a poller per ring (`sqthread_poll` only)", "seed/rs-dedicated"),
        ("**rsuring, 4 x 32, `sqthread_poll_percpu=1`**", "seed/rs-percpu"),
    )
    for label, k in rows:
        v = med(k, "iops")
        L.append(f"| {label} | {sqt(k)} | {kiops(v)} | {v / single_fio:.0%} "
                 f"| {v / ded_fio:.1f}x |")
    shared = med("seed/rs-percpu", "iops")
    t1 = shared >= 0.95 * single_fio
    t2 = shared >= 4 * ded_fio
    L.append("")
    L.append(f"Targets: shared 4 x 32 >= 95% of one job x QD 128: "
             f"{shared / single_fio:.0%} of fio's, {shared / single_rs:.0%} of "
             f"rsuring's single job -> **{'met' if t1 else 'missed'}**; "
             f">= 4x the dedicated-poller figure: {shared / ded_fio:.1f}x -> "
             f"**{'met' if t2 else 'missed'}**.")
    L.append("")
    L.append("## Completion latency by iodepth (clat, microseconds)")
    L.append("")
    L.append("fio 3.33's io_uring engine always creates its ring with "
             "`SINGLE_ISSUER | DEFER_TASKRUN` (it has no option for a plain ring), "
             "so its one column is the reference for both rsuring columns.")
    L.append("")
    L.append("| iodepth | fio io_uring mean | p99 | rsuring plain mean | p99 "
             "| rsuring defer_taskrun mean | p99 | IOPS fio / plain / defer |")
    L.append("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for qd in depths:
        f, r, d = f"lat{qd}/fio", f"lat{qd}/rs-plain", f"lat{qd}/rs"
        L.append(f"| {qd} | {us(med(f, 'clat_mean'))} | {us(med(f, 'clat_p99'))} "
                 f"| {us(med(r, 'clat_mean'))} | {us(med(r, 'clat_p99'))} "
                 f"| {us(med(d, 'clat_mean'))} | {us(med(d, 'clat_p99'))} "
                 f"| {kiops(med(f, 'iops'))} / {kiops(med(r, 'iops'))} / "
                 f"{kiops(med(d, 'iops'))} |")
    L.append("")
    text = "\n".join(L)
    print(text)
    with open(a.out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
