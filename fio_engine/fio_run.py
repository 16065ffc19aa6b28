"""Running one fio process and reading what it did: shared by the verify
matrix (verify_matrix.py) and the engine comparison (compare.py)."""
import json
import os
import subprocess
import time


def ring_sq_threads(pid):
    """The SQ poll thread of each SQPOLL io_uring fd that process pid has
    open now, from the kernel's fdinfo ("SqThread:"), or -1 where that is
    not known yet. Until a new SQ thread first runs, fdinfo shows the pid
    of the task that created it instead (and -1 while it exits), so a value
    counts only if it names a thread called iou-sqp-*. Counting iou-sqp
    threads alone would also count io-wq workers an SQ thread has just
    created: they carry its name until they first run."""
    threads = []
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return threads
    for fd in fds:
        try:
            if "io_uring" not in os.readlink(f"/proc/{pid}/fd/{fd}"):
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                tids = [int(ln.split()[1]) for ln in f if ln.startswith("SqThread:")]
        except (OSError, ValueError):
            continue
        for tid in tids:
            threads.append(tid if _is_sq_thread(pid, tid) else -1)
    return threads


def _is_sq_thread(pid, tid):
    try:
        with open(f"/proc/{pid}/task/{tid}/comm") as f:
            return f.read().startswith("iou-sqp")
    except (OSError, ValueError):
        return False


class FioRun:
    """What one fio process did."""

    def __init__(self, returncode, log, rings, sq_threads, cpu_s):
        self.returncode = returncode
        self.log = log
        # Most SQPOLL rings open at once, and most distinct SQ threads
        # behind the rings open at one time.
        self.rings = rings
        self.sq_threads = sq_threads
        # User + system CPU time of the whole process: every job thread,
        # fio's helper threads and the kernel SQ threads it owns.
        self.cpu_s = cpu_s


def _fio_pid(pid, wrapped):
    """fio's pid: pid itself, or its first child when a wrapper runs fio."""
    if not wrapped:
        return pid
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = f.read().split()
    except OSError:
        return pid
    return int(kids[0]) if kids else pid


def run_fio(fio, args, out_json, env=None, sample_s=0.002, wrapper=()):
    """Runs fio with a JSON report in out_json, sampling its SQ threads.
    wrapper: a command (list) that runs fio, such as perf stat."""
    p = subprocess.Popen(list(wrapper) + [fio, "--output-format=json",
                                          f"--output={out_json}"] + args,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    rings = threads = 0
    while True:
        # Not p.poll(): it would reap the child and lose its rusage.
        pid, status, usage = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        now = ring_sq_threads(_fio_pid(p.pid, bool(wrapper)))
        rings = max(rings, len(now))
        threads = max(threads, len({t for t in now if t > 0}))
        time.sleep(sample_s)
    p.returncode = os.waitstatus_to_exitcode(status)
    log = p.stdout.read().decode(errors="replace")
    p.stdout.close()
    return FioRun(p.returncode, log, rings, threads, usage.ru_utime + usage.ru_stime)


def read_report(out_json):
    """The list of jobs of a fio JSON report (fio may print notes first)."""
    with open(out_json) as f:
        text = f.read()
    return json.loads(text[text.index("{"):])["jobs"]


def main(argv):
    """census FIO ARGS...: runs fio and prints "RINGS THREADS" (most SQPOLL
    rings open at once, most distinct SQ threads behind them), or "failed"
    when fio fails; for shell scripts."""
    import sys
    import tempfile
    if len(argv) < 3 or argv[1] != "census":
        sys.exit("usage: fio_run.py census FIO [fio args...]")
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        r = run_fio(argv[2], argv[3:], out.name, sample_s=0.01)
    sys.stderr.write(r.log)
    print("failed" if r.returncode else f"{r.rings} {r.sq_threads}")


if __name__ == "__main__":
    import sys
    main(sys.argv)
