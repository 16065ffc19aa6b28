#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Unmodified MariaDB (Debian's mariadbd, InnoDB on io_uring) as the mysql
# user pinned to CPU 0, a private instance with a 64 MiB buffer pool over a
# larger data set (reads reach the disk), under sysbench oltp_read_only and
# oltp_write_only, in four configurations, alternating:
#   debian       Debian's liburing
#   rsuring      rsuring (LD_PRELOAD), plain rings
#   transparent  rsuring with RSURING_SQPOLL=1 (no RSURING_SQPOLL_CPUS: the
#                poller goes to a CPU the server does not run on, unless the
#                step-aside rule finds that CPU busy: poller-busy)
#   always       the same with RSURING_SQPOLL_STEP_ASIDE=0 (no step-aside rule)
# and two client placements: sysbench on CPU 0 ("spare": the poller's CPU
# is free) or on CPUs 0-1 ("shared"). Each server lifetime ends with CHECK
# TABLE on every table. Not a test (bench-only: needs mariadb-server and
# sysbench, which scripts/setup.sh does not install); writes
# target/bench/servers/mariadb.md.
#
#   bench/servers_mariadb.sh [ROUNDS [SECONDS [TABLES [ROWS]]]]   (default 2 20 4 200000)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-2}
SECS=${2:-20}
TABLES=${3:-4}
ROWS=${4:-200000}
# bench_setup (OUT, LIB), need_commands, at_exit, stop_process, cpu_ticks,
# server_rounds.
# shellcheck source=../scripts/lib-common.sh
. scripts/lib-common.sh
bench_setup servers
need_commands "apt-get install mariadb-server sysbench" \
	mariadbd mariadb-install-db mariadb sysbench setpriv taskset
RUN=$(mktemp -d /tmp/rsuring-mariadb.XXXXXX)
at_exit 'rm -rf "$RUN"'
chown mysql:mysql "$RUN"
chmod 755 "$RUN"
cp "$LIB" "$RUN/librsuring.so"
chmod 755 "$RUN/librsuring.so"
PID=
stop_db() { stop_process "$PID"; PID=; }
at_exit stop_db

start_db() { # CONFIG
	local env=()
	case $1 in
	rsuring) env=(LD_PRELOAD="$RUN/librsuring.so") ;;
	transparent) env=(LD_PRELOAD="$RUN/librsuring.so" RSURING_SQPOLL=1
		RSURING_STATS="json:$RUN/stats.json") ;;
	always) env=(LD_PRELOAD="$RUN/librsuring.so" RSURING_SQPOLL=1 RSURING_SQPOLL_STEP_ASIDE=0
		RSURING_STATS="json:$RUN/stats.always.json") ;;
	esac
	taskset -c 0 setpriv --reuid=mysql --regid=mysql --clear-groups -- env "${env[@]}" \
		/usr/sbin/mariadbd --no-defaults --datadir="$RUN/data" --socket="$RUN/sock" \
		--skip-networking --innodb-use-native-aio=1 --innodb-buffer-pool-size=64M \
		--innodb-flush-log-at-trx-commit=1 --pid-file="$RUN/pid" >"$RUN/err.$1.log" 2>&1 &
	PID=$!
	for _ in $(seq 300); do
		mariadb --socket="$RUN/sock" -uroot -e 'select 1' >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "mariadbd did not start:" >&2
	tail "$RUN/err.$1.log" >&2
	exit 1
}

SB=(--db-driver=mysql --mysql-socket="$RUN/sock" --mysql-user=root --mysql-db=sbtest
	--tables="$TABLES" --table-size="$ROWS")

mariadb-install-db --user=mysql --datadir="$RUN/data" --auth-root-authentication-method=normal \
	>"$RUN/install.log" 2>&1
start_db debian
mariadb --socket="$RUN/sock" -uroot -e 'create database sbtest'
sysbench oltp_write_only "${SB[@]}" --threads=2 prepare >"$RUN/prepare.log"
stop_db

RAW=$OUT/mariadb.raw
: >"$RAW"
one_run() { # ROUND PLACEMENT CPUS CONFIG
	local r=$1 placement=$2 cpus=$3 c=$4 w t0 t1 tps bad
	start_db "$c"
	for w in oltp_read_only oltp_write_only; do
		t0=$(cpu_ticks "$PID")
		tps=$(taskset -c "$cpus" sysbench "$w" "${SB[@]}" --threads=4 --time="$SECS" run |
			awk '/transactions:/ { gsub(/[()]/, "", $3); print $3 }')
		t1=$(cpu_ticks "$PID")
		echo "$r $placement $c $w $tps $((t1 - t0))" >>"$RAW"
	done
	bad=$(for t in $(seq "$TABLES"); do
		mariadb --socket="$RUN/sock" -uroot -N -e "check table sbtest.sbtest$t"
	done | awk '$NF != "OK"' | wc -l)
	echo "$r $placement $c check $bad 0" >>"$RAW"
	echo "$r $placement $c load $(cut -d' ' -f1 /proc/loadavg) 0" >>"$RAW"
	stop_db
}
SERVER_CONFIGS="debian rsuring transparent always" server_rounds "$ROUNDS" one_run
[ -f "$RUN/stats.json" ] && cp "$RUN/stats.json" "$OUT/mariadb-transparent-stats.json"

python3 - "$RAW" "$SECS" "$RUN" <<'PY' | tee "$OUT/mariadb.md"
import collections, statistics, sys
sys.path.insert(0, "bench")
import servers_summary as summary
raw, secs, run = sys.argv[1], float(sys.argv[2]), sys.argv[3]
tps, bad, load = {}, collections.defaultdict(int), []
for line in open(raw):
    r, place, conf, w, v, ticks = line.split()
    if w == "load":
        load.append(float(v))
    elif w == "check":
        bad[(place, conf)] += int(v)
    else:
        tps[(r, place, conf, w)] = (float(v), int(ticks))
rounds = sorted({k[0] for k in tps})
print("# MariaDB (Debian's, as mysql on CPU 0), sysbench, 64 MiB buffer pool")
print()
print("Transactions/s ratio to Debian's liburing, same round and placement, median (min-max);")
print("transparent: RSURING_SQPOLL=1 alone; always: the same with RSURING_SQPOLL_STEP_ASIDE=0.")
print("spare: sysbench on CPU 0; shared: on CPUs 0-1.")
print("CPU: server CPU ms per 1000 transactions (SQ thread included).")
print()
print("| placement | workload | debian tps | rsuring/debian | transparent/debian | always/debian | CPU debian / rsuring / transparent / always |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for place in ("spare", "shared"):
    for w in ("oltp_read_only", "oltp_write_only"):
        base = [tps[(r, place, "debian", w)][0] for r in rounds]
        cells = []
        for conf in ("rsuring", "transparent", "always"):
            rs = [tps[(r, place, conf, w)][0] / tps[(r, place, "debian", w)][0] for r in rounds]
            cells.append(f"{statistics.median(rs):.2f} ({min(rs):.2f}-{max(rs):.2f})")
        cpu = []
        for conf in ("debian", "rsuring", "transparent", "always"):
            v = [10 * 1000 * tps[(r, place, conf, w)][1] / (tps[(r, place, conf, w)][0] * secs) for r in rounds]
            cpu.append(f"{statistics.median(v):.0f}")
        print(f"| {place} | {w} | {statistics.median(base):.0f} | {' | '.join(cells)} | {' / '.join(cpu)} |")
print()
summary.print_rings(run, (("transparent", "stats.json"), ("always", "stats.always.json")))
summary.print_load(load)
print("CHECK TABLE failures per configuration: " + ", ".join(f"{p}/{c}: {n}" for (p, c), n in sorted(bad.items())))
PY
