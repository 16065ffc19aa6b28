#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs the hot-path blocks of bench/hotpath_cases.py and appends one JSON
line per variant and round to --raw. Called by bench/hotpath.sh, which
builds what it needs; see there for the options.

Each block runs R rounds. In a round, the library variants of an
interleaved block run together in one interleave.c process, and every other
variant (all of them in the other blocks) runs as a process of its own; the
order of these processes rotates by one place per round and is reversed
every other round, so that none always runs first, last or next to the same
neighbour. Every process is pinned to --cpu.
"""

import argparse
import fnmatch
import json
import os
import re
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hotpath_cases as cases  # noqa: E402

RESULT = re.compile(r"^RESULT (.*)$", re.M)


class Failure(Exception):
    pass


def clean_env():
    """The environment without rsuring's own variables (they would change
    what is measured) and without LD_LIBRARY_PATH."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("RSURING_") and k != "LD_LIBRARY_PATH"}
    # interleave.c and batch.c load every library into a dlmopen namespace
    # of its own, each with its own libc, whose TLS is static: glibc
    # reserves static TLS for 4 namespaces unless told otherwise.
    env["GLIBC_TUNABLES"] = "glibc.rtld.nns=16"
    return env


def parse_result(text):
    m = RESULT.search(text)
    if not m:
        return None
    fields = {}
    for item in m.group(1).split():
        key, _, value = item.partition("=")
        fields[key] = value
    return fields


class Runner:
    def __init__(self, a):
        self.a = a
        self.libdirs = {"deb": None, "up": a.up_dir, "rs": a.rs_dir}
        self.want_lib = {
            "deb": os.path.realpath(a.deb_lib),
            "up": os.path.realpath(os.path.join(a.up_dir, "liburing.so.2")) if a.up_dir else None,
            "rs": os.path.realpath(os.path.join(a.rs_dir, "liburing.so.2")),
        }

    def available(self, vid, block):
        v = cases.VARIANTS[vid]
        if v.lib == "up" and not self.a.up_dir:
            return "liburing 2.15 not built (bench/run.sh --upstream DIR)"
        if v.kind == "tio" and not self.a.tio:
            return "t/io_uring not built"
        if v.kind == "crate" and not self.a.crate:
            return "io-uring crate peer not built"
        if block.needs == "dev" and not self.a.dev:
            return "no loop device (needs root)"
        if block.needs == "file" and not self.a.file:
            return "no read file"
        return None

    def block_args(self, block, v):
        ops = max(1, int(block.ops * self.a.scale))
        out = []
        for arg in block.args:
            arg = arg.replace("{ops}", str(ops))
            arg = arg.replace("{file}", self.a.file or "").replace("{dev}", self.a.dev or "")
            out.append(arg)
        return out + list(v.args)

    def lib_path(self, lib):
        return {"deb": self.a.deb_lib, "up": os.path.join(self.a.up_dir or "", "liburing.so.2"),
                "rs": os.path.join(self.a.rs_dir, "liburing.so.2")}[lib]

    def run_interleaved(self, block, vids):
        """One interleave.c process for the library variants `vids` (one of
        them: a process of its own); returns {vid: result}."""
        ops = max(1, int(block.ops * self.a.scale))
        chunks = max(1, min(block.chunks, ops // 1000))
        cmd = [self.a.interleave, block.args[0]] + [x for x in block.args[1:] if x != "{ops}"]
        cmd += [str(ops), str(chunks)]
        for vid in vids:
            v = cases.VARIANTS[vid]
            flags = list(v.args) + [f"env:{name}" for name, _ in v.env]
            cmd.append(",".join([f"{vid}={self.lib_path(v.lib)}"] + flags))
        proc = subprocess.run(["taskset", "-c", str(self.a.cpu)] + cmd, env=clean_env(),
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise Failure(f"{block.name}: {' '.join(cmd)} exited {proc.returncode}\n{proc.stdout}{proc.stderr}")
        out = {}
        for line in proc.stdout.splitlines():
            r = parse_result(line)
            if r:
                out[r["name"]] = r
        for vid in vids:
            r = out.get(vid)
            if r is None:
                raise Failure(f"{block.name}/{vid}: no RESULT line\n{proc.stdout}{proc.stderr}")
            want = self.want_lib[cases.VARIANTS[vid].lib]
            if r["lib"] != want:
                raise Failure(f"{block.name}/{vid}: ran against {r['lib']}, expected {want}")
            out[vid] = {k: int(r[k]) for k in ("ops", "cpu_ns", "user_ns", "sys_ns", "total_ops")}
            out[vid].update(wall_ns=0, inproc=len(vids) > 1)
            if "ns_per_cqe" in r:
                out[vid]["ns_per_cqe"] = float(r["ns_per_cqe"])
        if "rs_stats" in vids and "rsuring: pid=" not in proc.stderr:
            raise Failure(f"{block.name}/rs_stats: RSURING_STATS=1 printed no statistics")
        return {vid: out[vid] for vid in vids}

    def run(self, block, vid):
        v = cases.VARIANTS[vid]
        if v.kind == "tio":
            return self.run_tio()
        env = clean_env()
        if self.libdirs.get(v.lib):
            env["LD_LIBRARY_PATH"] = self.libdirs[v.lib]
        env.update(dict(v.env))
        if v.kind == "crate":
            ops = max(1, int(block.ops * self.a.scale))
            cmd = [self.a.crate, "128", "32", str(ops)]
        elif block.chunks:
            return self.run_interleaved(block, [vid])[vid]
        else:
            cmd = [self.a.reads] + self.block_args(block, v)
        proc = subprocess.run(["taskset", "-c", str(self.a.cpu)] + cmd, env=env,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise Failure(f"{block.name}/{vid}: {' '.join(cmd)} exited {proc.returncode}\n"
                          f"{proc.stdout}{proc.stderr}")
        r = parse_result(proc.stdout)
        if r is None:
            raise Failure(f"{block.name}/{vid}: no RESULT line\n{proc.stdout}{proc.stderr}")
        want = self.want_lib.get(v.lib)
        if want and r.get("lib") != want:
            raise Failure(f"{block.name}/{vid}: ran against {r.get('lib')}, expected {want}")
        if vid == "rs_stats":
            if "rsuring: pid=" not in proc.stderr:
                raise Failure(f"{block.name}/{vid}: RSURING_STATS=1 printed no statistics")
        elif proc.stderr.strip():
            sys.stderr.write(proc.stderr)
        out = {k: int(r[k]) for k in ("ops", "cpu_ns", "wall_ns", "user_ns", "sys_ns", "total_ops")}
        if "ns_per_cqe" in r:
            out["ns_per_cqe"] = float(r["ns_per_cqe"])
        return out

    def run_tio(self):
        """fio's t/io_uring -N1 with its defaults (QD128, submit and complete
        batches of 32, registered ring fd and files). It runs for a time and
        prints the operations of each second; the window is from its first
        such line to its last, and its CPU time over that window comes from
        /proc (schedstat of all its threads, read as each line arrives)."""
        # -r 4: lines at 1, 2 and 3 s (the last second is not printed), so a
        # window of two seconds, about as much work as hotpath's b32 block.
        cmd = ["taskset", "-c", str(self.a.cpu), "stdbuf", "-oL", self.a.tio, "-N1", "-r", "4"]
        proc = subprocess.Popen(cmd, env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        samples = []
        for line in proc.stdout:
            m = re.match(r"^IOPS=([0-9.]+)([KM]?),", line)
            if not m:
                continue
            now = time.monotonic_ns()
            snap = proc_cpu(proc.pid)
            scale = {"M": 1e6, "K": 1e3, "": 1}[m.group(2)]
            samples.append((now, float(m.group(1)) * scale, snap))
        err = proc.stderr.read()
        if proc.wait() != 0 or len(samples) < 2:
            raise Failure(f"t/io_uring: exit {proc.returncode}, {len(samples)} samples\n{err}")
        first, last = samples[0], samples[-1]
        ops = int(sum(s[1] for s in samples[1:]))
        return {
            "ops": ops,
            "cpu_ns": last[2][0] - first[2][0],
            "wall_ns": last[0] - first[0],
            "user_ns": last[2][1] - first[2][1],
            "sys_ns": last[2][2] - first[2][2],
            "total_ops": ops,
        }


def proc_cpu(pid):
    """(CPU ns from schedstat, user ns, system ns) of all threads of pid."""
    tick = 1e9 / os.sysconf("SC_CLK_TCK")
    run = user = system = 0
    base = f"/proc/{pid}/task"
    for tid in os.listdir(base):
        try:
            with open(f"{base}/{tid}/schedstat") as f:
                run += int(f.read().split()[0])
            with open(f"{base}/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
                user += int(fields[11])
                system += int(fields[12])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return (run, int(user * tick), int(system * tick))


def order(variants, r):
    n = len(variants)
    rotated = variants[r % n:] + variants[:r % n]
    return rotated[::-1] if r % 2 else rotated


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of each block's work")
    ap.add_argument("--only", default="", help="shell patterns of block names")
    ap.add_argument("--cpu", type=int, default=0)
    ap.add_argument("--reads", required=True)
    ap.add_argument("--interleave", required=True)
    ap.add_argument("--deb-lib", required=True)
    ap.add_argument("--up-dir", default="")
    ap.add_argument("--rs-dir", required=True)
    ap.add_argument("--tio", default="")
    ap.add_argument("--crate", default="")
    ap.add_argument("--file", default="")
    ap.add_argument("--dev", default="")
    a = ap.parse_args()

    # This driver reads t/io_uring's output while it runs: keep it off the
    # benchmark's CPU where there is another one.
    others = os.sched_getaffinity(0) - {a.cpu}
    if others:
        os.sched_setaffinity(0, others)

    runner = Runner(a)
    patterns = a.only.split()
    with open(a.raw, "a") as raw:
        for block in cases.BLOCKS:
            if patterns and not any(fnmatch.fnmatch(block.name, p) for p in patterns):
                continue
            variants, absent = [], {}
            for vid in block.variants:
                why = runner.available(vid, block)
                if why:
                    absent[vid] = why
                else:
                    variants.append(vid)
            for vid, why in absent.items():
                raw.write(json.dumps({"block": block.name, "variant": vid, "absent": why}) + "\n")
            if "rs" not in variants:
                continue
            rounds = max(3, int(round(a.rounds * block.rounds_scale)))
            inproc = [vid for vid in variants if cases.is_inproc(block, vid)]
            units = ([tuple(inproc)] if inproc else []) + [vid for vid in variants if vid not in inproc]
            print(f"hotpath: {block.name}: {rounds} rounds of {' '.join(variants)}"
                  + (f" ({len(inproc)} interleaved in one process)" if inproc else ""), file=sys.stderr)
            for r in range(rounds):
                for pos, unit in enumerate(order(units, r)):
                    if isinstance(unit, tuple):
                        results = runner.run_interleaved(block, list(unit[r % len(unit):] + unit[:r % len(unit)]))
                    else:
                        results = {unit: runner.run(block, unit)}
                    for vid, res in results.items():
                        res.update(block=block.name, variant=vid, round=r, pos=pos,
                                   load=os.getloadavg()[0])
                        raw.write(json.dumps(res) + "\n")
                    raw.flush()


if __name__ == "__main__":
    try:
        main()
    except Failure as e:
        print(f"hotpath: error: {e}", file=sys.stderr)
        sys.exit(1)
