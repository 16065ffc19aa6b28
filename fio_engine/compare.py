#!/usr/bin/env python3
"""rsuring's fio engine against fio's own io_uring engine: same fio
binary, same job file, a fixed number of I/Os per run, interleaved rounds.
Called by compare.sh, which owns the loop device.

Per run it records IOPS, completion latency (clat) and total latency
(lat) from fio's JSON report, and the CPU time the fio process used
(wait4: every job thread, fio's helper threads and the kernel SQ threads
the process owns) per I/O, less that of a short run of the same job just
before it, so start-up and exit do not count. Over a fixed amount of work
CPU per I/O depends much less on what else the machine runs than IOPS
does. With perf, one extra run per configuration counts io_uring_enter
calls per I/O.

Every round runs every configuration once, in an order that is reversed
every other round, so a slow drift of background load does not favour
one side. Ratios are taken within a round (rsuring / fio) and reported as
median and min-max; the "A vs A" rows run fio's engine against itself the
same way and show how much two identical runs differ.
"""
import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fio_run import read_report, run_fio  # noqa: E402

FIO_URING = "io_uring"
NO_OPT = "stats=1"  # a no-op option line: fio rejects an empty ${ENGINE_OPT}
PLAIN_DEPTHS = [1, 4, 16, 32, 64, 128]
# Plain depths that also run the rsuring engine with submit_and_wait=1.
SAW_DEPTHS = [1, 4, 32]
# I/Os per job of the start-up run whose CPU time run_config takes off.
STARTUP_IOS = 256


class Config:
    def __init__(self, key, job, engine, opt, qd, ios, label):
        self.key, self.job, self.engine, self.opt = key, job, engine, opt
        self.qd, self.ios, self.label = qd, ios, label


def fio_once(a, c, ios, wrapper=()):
    """One fio run of configuration c with ios I/Os per job: (run, jobs)."""
    env = dict(os.environ, ENGINE=c.engine, DEV=a.dev, ENGINE_OPT=c.opt or NO_OPT,
               QD=str(c.qd), IO_SIZE=str(ios * 4096))
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        r = run_fio(a.fio, [os.path.join(a.jobs, c.job)], out.name, env=env,
                    sample_s=0.05, wrapper=wrapper)
        if r.returncode != 0:
            sys.exit(f"fio {c.job} ({c.engine} {c.opt}) failed ({r.returncode}):\n{r.log}")
        jobs = read_report(out.name)
    errs = [j["error"] for j in jobs if j["error"]]
    if errs:
        sys.exit(f"fio {c.job} ({c.engine} {c.opt}) job errors {errs}:\n{r.log}")
    return r, jobs


def run_config(a, c):
    """Measures configuration c once. CPU/IO is marginal: the same job with
    STARTUP_IOS I/Os runs right before, and its CPU time (fio starting,
    loading the engine, setting up and closing rings) is taken off."""
    small, _ = fio_once(a, c, STARTUP_IOS)
    r, jobs = fio_once(a, c, c.ios)
    ios = sum(j["read"]["total_ios"] for j in jobs)
    small_ios = STARTUP_IOS * len(jobs)
    clat = jobs[0]["read"]["clat_ns"]
    pct = clat.get("percentile", {})
    lat = jobs[0]["read"]["lat_ns"]
    return {
        "iops": sum(j["read"]["iops"] for j in jobs),
        "cpu_us_per_io": ((r.cpu_s - small.cpu_s) * 1e6 / (ios - small_ios)
                          if ios > small_ios else float("nan")),
        "p50": pct.get("50.000000", 0) / 1000,
        "p99": pct.get("99.000000", 0) / 1000,
        "lat_p50": lat.get("percentile", {}).get("50.000000", 0) / 1000,
        "lat_p99": lat.get("percentile", {}).get("99.000000", 0) / 1000,
        "sq_threads": r.sq_threads,
    }


ENTER_EVENT = "syscalls:sys_enter_io_uring_enter"


def perf_works():
    """Whether perf can count io_uring_enter calls here (tracefs, root)."""
    try:
        subprocess.run(["perf", "stat", "-x,", "-e", ENTER_EVENT, "true"],
                       check=True, capture_output=True, timeout=30)
        return True
    except (OSError, subprocess.SubprocessError):
        return False


def enters_per_io(a, c):
    """io_uring_enter calls per I/O of configuration c, counted by perf in
    a run outside the timed ones (a count, not a time: one run is enough)."""
    with tempfile.NamedTemporaryFile(suffix=".txt") as counts:
        _, jobs = fio_once(a, c, c.ios // 4,
                           wrapper=["perf", "stat", "-x,", "-e", ENTER_EVENT,
                                    "-o", counts.name, "--"])
        lines = [ln for ln in open(counts.name).read().splitlines()
                 if ENTER_EVENT in ln]
    ios = sum(j["read"]["total_ios"] for j in jobs)
    try:
        return int(lines[0].split(",")[0]) / ios
    except (IndexError, ValueError, ZeroDivisionError):
        return float("nan")


def configs(a):
    rs = "external:" + a.engine_so
    c = []
    for qd in PLAIN_DEPTHS:
        ios = a.ios // 4 if qd == 1 else a.ios
        c.append(Config(f"qd{qd}/fio", "randread.fio", FIO_URING, None, qd, ios,
                        f"fio io_uring QD {qd}"))
        c.append(Config(f"qd{qd}/rs", "randread.fio", rs, None, qd, ios,
                        f"rsuring QD {qd}"))
        if qd in SAW_DEPTHS:
            c.append(Config(f"qd{qd}/rs-saw", "randread.fio", rs, "submit_and_wait=1",
                            qd, ios, f"rsuring submit_and_wait=1 QD {qd}"))
        if qd in a.noise_depths:
            c.append(Config(f"qd{qd}/fio-again", "randread.fio", FIO_URING, None, qd,
                            ios, f"fio io_uring QD {qd} (again)"))
    c.append(Config("sq128/fio", "randread-sqpoll-qd128.fio", FIO_URING, None, 128,
                    a.ios, "fio io_uring sqthread_poll QD 128"))
    c.append(Config("sq128/rs", "randread-sqpoll-qd128.fio", rs, None, 128, a.ios,
                    "rsuring sqthread_poll QD 128"))
    for key, eng, opt, label in (
            ("seed/fio", FIO_URING, None, "fio io_uring, a poller per ring"),
            ("seed/rs-dedicated", rs, None, "rsuring, a poller per ring"),
            ("seed/rs-percpu", rs, "sqthread_poll_percpu=1",
             "rsuring, `sqthread_poll_percpu=1`")):
        c.append(Config(key, "seed-4x32-sqpoll.fio", eng, opt, 32, a.ios // 4, label))
    return c


def fmt_range(vals, f):
    vals = [v for v in vals if v == v]  # drop NaN
    if not vals:
        return "n/a"
    return f"{f(statistics.median(vals))} [{f(min(vals))}–{f(max(vals))}]"


def kiops(v):
    return f"{v / 1000:.1f}K"


def num(v):
    return f"{v:.2f}"


def us(v):
    return f"{v:.1f}"


class Results:
    """Per-configuration lists of per-round measurements."""

    def __init__(self, cfgs):
        self.cfgs = cfgs
        self.runs = {c.key: [] for c in cfgs}
        self.enters = {}

    def vals(self, k, field):
        return [x[field] for x in self.runs[k]]

    def paired(self, k_rs, k_fio, field):
        """Per-round ratios k_rs / k_fio."""
        return [x[field] / y[field] if y[field] else float("nan")
                for x, y in zip(self.runs[k_rs], self.runs[k_fio])]

    def best_ratio(self, k_rs, k_fio, field, higher_is_better):
        """Ratio of the two sides' best rounds. Other work on the machine
        only ever slows a run down, so the best round of each side is the
        one least disturbed."""
        pick = max if higher_is_better else min
        a, b = self.vals(k_rs, field), self.vals(k_fio, field)
        if not a or not b or not pick(b):
            return "n/a"
        return f"{pick(a) / pick(b):.2f}"

    def enters_of(self, k):
        v = self.enters.get(k)
        return f"{v:.2f}" if v is not None and v == v else "n/a"


def fio_version(fio):
    """What the fio binary says it is (fio-3.33, fio-3.42, ...)."""
    try:
        return subprocess.run([fio, "--version"], capture_output=True, text=True,
                              timeout=30).stdout.strip() or "fio (version unknown)"
    except (OSError, subprocess.SubprocessError):
        return "fio (version unknown)"


def report(a, res, load, seconds):
    v, pr = res.vals, res.paired

    def row(*cells):
        return "| " + " | ".join(str(c) for c in cells) + " |"

    def val(k, field, f=num):
        return fmt_range(v(k, field), f)

    def ratio(k, base, field):
        return fmt_range(pr(k, base, field), num)

    def table(title, header, align, rows, notes=()):
        """A section: its title, notes, and a Markdown table."""
        L.extend([f"## {title}", "", *notes, *([""] if notes else []),
                  row(*header), row(*align), *rows, ""])

    L = ["# rsuring fio engine vs fio's io_uring engine", ""]
    L.append(f"- {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}, Linux "
             f"{platform.release()}, {os.cpu_count()} CPUs; {fio_version(a.fio)} built by build.sh, "
             "both engines in the same binary, same job file")
    L.append("- 4k random reads, O_DIRECT, on a loop device (`--direct-io=on`) over a "
             f"256 MiB /dev/shm file; {a.ios} I/Os per run ({a.ios // 4} at QD 1, "
             f"{a.ios // 4} per job for 4 jobs); {a.rounds} rounds, order reversed every "
             "other round")
    L.append("- median [min–max] over the rounds; ratios are rsuring / fio within a "
             "round, median [min–max]; \"best\": the ratio of each side's best round "
             "(highest IOPS, lowest CPU/IO), which other load on the machine disturbs "
             "least. CPU/IO: CPU time of the whole fio process (job, "
             "helper and kernel SQ threads) per I/O, less that of the same job with "
             f"{STARTUP_IOS} I/Os run just before it (start-up, exit); lower is better. "
             "enters/IO: io_uring_enter calls per I/O (perf, one extra run)")
    L.append("- clat runs from the engine's issue stamp, which both engines take after "
             "the submit call returns (except rsuring with `submit_and_wait=1`, see "
             "its table); lat runs from fio's start of the I/O and means the same for "
             "every engine")
    L.append(f"- load average before/after: {load[0]:.1f} / {load[1]:.1f}; "
             f"{seconds:.0f} s in all")
    L.append("")
    table("Noise: fio's engine against itself (A vs A, same rounds)",
          ("job", "IOPS", "best IOPS", "CPU/IO", "best CPU/IO", "clat p50", "clat p99", "lat p50"),
          ("---",) + ("---:",) * 7,
          [row(f"plain QD {qd}", ratio(k2, k, "iops"), res.best_ratio(k2, k, "iops", True),
               ratio(k2, k, "cpu_us_per_io"), res.best_ratio(k2, k, "cpu_us_per_io", False),
               ratio(k2, k, "p50"), ratio(k2, k, "p99"), ratio(k2, k, "lat_p50"))
           for qd in a.noise_depths for k, k2 in ((f"qd{qd}/fio", f"qd{qd}/fio-again"),)])
    table("Plain rings: throughput and CPU (both engines: SINGLE_ISSUER | DEFER_TASKRUN)",
          ("QD", "fio IOPS", "rsuring IOPS", "IOPS ratio", "best", "fio CPU/IO µs",
           "rsuring CPU/IO µs", "CPU/IO ratio", "best", "enters/IO fio / rsuring"),
          ("---:",) * 10,
          [row(qd, val(f, "iops", kiops), val(r, "iops", kiops), ratio(r, f, "iops"),
               res.best_ratio(r, f, "iops", True), val(f, "cpu_us_per_io"),
               val(r, "cpu_us_per_io"), ratio(r, f, "cpu_us_per_io"),
               res.best_ratio(r, f, "cpu_us_per_io", False),
               f"{res.enters_of(f)} / {res.enters_of(r)}")
           for qd in PLAIN_DEPTHS for f, r in ((f"qd{qd}/fio", f"qd{qd}/rs"),)])
    table("rsuring with `submit_and_wait=1` (one io_uring_enter per I/O)",
          ("QD", "IOPS ratio", "CPU/IO ratio", "lat p50 ratio", "lat p99 ratio", "clat p50 ratio",
           "enters/IO"),
          ("---:",) * 7,
          [row(qd, *(ratio(r, f, field)
                     for field in ("iops", "cpu_us_per_io", "lat_p50", "lat_p99", "p50")),
               res.enters_of(r))
           for qd in SAW_DEPTHS for f, r in ((f"qd{qd}/fio", f"qd{qd}/rs-saw"),)],
          notes=("Ratios against fio's engine in the same round; clat includes the "
                 "submission in this mode (lat does not change meaning).",))
    for title, p50, p99 in (("Completion latency (clat), plain rings, µs", "p50", "p99"),
                            ("Total latency (lat), plain rings, µs", "lat_p50", "lat_p99")):
        table(title,
              ("QD", "fio p50", "rsuring p50", "p50 ratio", "fio p99", "rsuring p99", "p99 ratio"),
              ("---:",) * 7,
              [row(qd, val(f, p50, us), val(r, p50, us), ratio(r, f, p50),
                   val(f, p99, us), val(r, p99, us), ratio(r, f, p99))
               for qd in PLAIN_DEPTHS for f, r in ((f"qd{qd}/fio", f"qd{qd}/rs"),)])
    fields = ("iops", "cpu_us_per_io", "p50", "p99", "lat_p50")
    table("sqthread_poll, one job at QD 128 (job on CPU 0, SQ thread on CPU 1)",
          ("engine", "IOPS", "CPU/IO µs", "clat p50 µs", "clat p99 µs", "lat p50 µs"),
          ("---",) + ("---:",) * 5,
          [row(label, *(val(k, field, (kiops, num, us, us, us)[i]) for i, field in enumerate(fields)))
           for label, k in (("fio io_uring", "sq128/fio"), ("rsuring", "sq128/rs"))]
          + [row("ratio rsuring / fio", *(ratio("sq128/rs", "sq128/fio", field) for field in fields))])
    table("4 jobs x QD 32 as threads, jobs on CPU 0, SQ threads on CPU 1",
          ("configuration", "SQ threads", "IOPS", "CPU/IO µs", "IOPS vs fio's 4 x 32",
           "IOPS vs fio's 1 x 128"),
          ("---",) + ("---:",) * 5,
          [row(next(c.label for c in res.cfgs if c.key == k), max(v(k, "sq_threads")),
               val(k, "iops", kiops), val(k, "cpu_us_per_io"), ratio(k, "seed/fio", "iops"),
               ratio(k, "sq128/fio", "iops"))
           for k in ("seed/fio", "seed/rs-dedicated", "seed/rs-percpu")])
    return "\n".join(L)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fio", required=True)
    ap.add_argument("--engine-so", required=True)
    ap.add_argument("--jobs", required=True)
    ap.add_argument("--dev", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--ios", type=int, default=1 << 17,
                    help="I/Os per run (QD 1 runs a quarter)")
    ap.add_argument("--noise-depths", default="1,32",
                    help="plain depths that also run fio's engine twice (A vs A)")
    ap.add_argument("--only", default="",
                    help="run only the configurations whose key matches this"
                         " regular expression (qd4/, sq128/, seed/...) and"
                         " print their figures, no report")
    ap.add_argument("--out", required=True,
                    help="the report (Markdown); the measurements go next to it"
                         " as .json")
    ap.add_argument("--from-json", default="",
                    help="write the report from measurements saved by an earlier"
                         " run instead of measuring")
    a = ap.parse_args()
    a.noise_depths = [int(d) for d in a.noise_depths.split(",") if d]
    if a.from_json:
        with open(a.from_json) as f:
            saved = json.load(f)
        for k in ("rounds", "ios", "noise_depths"):
            setattr(a, k, saved[k])
        res = Results(configs(a))
        res.runs.update(saved["runs"])
        res.enters.update(saved["enters"])
        write_report(a, report(a, res, saved["load"], saved["seconds"]))
        return

    cfgs = configs(a)
    if a.only:
        cfgs = [c for c in cfgs if re.search(a.only, c.key)]
    res = Results(cfgs)
    load_before = os.getloadavg()
    t0 = time.time()
    if perf_works():
        for c in cfgs:
            res.enters[c.key] = enters_per_io(a, c)
    else:
        print("compare.py: perf cannot count io_uring_enter here: no enters/IO",
              file=sys.stderr)
    for r in range(a.rounds):
        order = cfgs if r % 2 == 0 else list(reversed(cfgs))
        for c in order:
            m = run_config(a, c)
            res.runs[c.key].append(m)
            print(f"round {r + 1}/{a.rounds} {c.key:22s} {kiops(m['iops']):>8s} IOPS"
                  f"  {m['cpu_us_per_io']:.2f} us CPU/IO  clat p50 {us(m['p50'])}"
                  f" p99 {us(m['p99'])}  lat p50 {us(m['lat_p50'])} us"
                  f"  sq_threads {m['sq_threads']}", file=sys.stderr, flush=True)
    load = (load_before[0], os.getloadavg()[0])
    if a.only:
        for c in cfgs:
            print(f"{c.key:22s} enters/IO      {res.enters_of(c.key)}")
            for field in ("iops", "cpu_us_per_io", "p50", "p99", "lat_p50", "lat_p99"):
                print(f"{c.key:22s} {field:14s} {fmt_range(res.vals(c.key, field), num)}")
        return
    seconds = time.time() - t0
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(os.path.splitext(a.out)[0] + ".json", "w") as f:
        json.dump({"rounds": a.rounds, "ios": a.ios, "noise_depths": a.noise_depths,
                   "load": load, "seconds": seconds, "runs": res.runs,
                   "enters": res.enters}, f, indent=1)
    write_report(a, report(a, res, load, seconds))


def write_report(a, text):
    print(text)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        f.write(text + "\n")
    print(f"compare.py: wrote {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
