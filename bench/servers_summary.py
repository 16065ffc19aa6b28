# SPDX-License-Identifier: MIT
"""The closing lines of the server benches' reports (servers_mariadb.sh,
servers_qsd.sh): what became of the rings that asked for transparent
SQPOLL, and the load. The scripts' report code imports it from bench/."""
import collections
import json
import os
import statistics


def print_rings(run, stats_files):
    """One line per configuration: how many rings of all its lifetimes
    ended in each `transparent` state, from the RSURING_STATS=json: file
    of the configuration in the run directory (none: no rings).
    stats_files: (configuration, file name) pairs."""
    for conf, name in stats_files:
        words = collections.Counter()
        path = os.path.join(run, name)
        for line in open(path) if os.path.exists(path) else []:
            words[json.loads(line).get("transparent", "-")] += 1
        print(f"{conf} rings (all lifetimes): " + ", ".join(f"{k}: {n}" for k, n in sorted(words.items())))


def print_load(load):
    """The 1-minute load averages sampled after each lifetime, if any."""
    if load:
        print(f"Load average (1 min) after each lifetime: {min(load):.2f}-{max(load):.2f}, "
              f"median {statistics.median(load):.2f}")
