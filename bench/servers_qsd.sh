#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Unmodified qemu-storage-daemon (Debian's, 10.0 from bookworm-backports)
# serving NBD exports of a direct-I/O loop device with aio=io_uring, run as
# nobody pinned to CPU 0, in four configurations:
#   debian       Debian's liburing
#   rsuring      rsuring (LD_PRELOAD), plain rings
#   transparent  rsuring with RSURING_SQPOLL=1 RSURING_SQPOLL_CPUS=1
#                (the daemon's rings get a poller on CPU 1 unless the
#                step-aside rule finds that CPU busy: poller-busy)
#   always       the same with RSURING_SQPOLL_STEP_ASIDE=0 (the mode
#                without its step-aside rule, as before it)
# and two client placements: "spare" (clients on CPU 0 too: the poller's
# CPU is spare) and "shared" (clients on CPUs 0-1: the poller's CPU is
# shared). Configurations alternate, one daemon lifetime per (round,
# placement, configuration); each lifetime ends with a write+verify job
# (data integrity). Not a test: it prints figures and writes
# target/bench/servers/qsd.md. Needs root, fio (nbd engine), qemu-img.
#
#   bench/servers_qsd.sh [ROUNDS [SECONDS [EXPORTS]]]   (default 2 5 2)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-2}
SECS=${2:-5}
N=${3:-2}
# bench_setup (OUT, LIB), need_commands, loopdev_setup, at_exit,
# stop_process, cpu_ticks, AS_NOBODY, server_rounds.
# shellcheck source=../scripts/lib-common.sh
. scripts/lib-common.sh
bench_setup servers
need_commands "apt-get install qemu-utils fio" qemu-storage-daemon qemu-img fio setpriv taskset
loopdev_setup 512M
chown nobody "$LOOPDEV"
RUN=$(mktemp -d /tmp/rsuring-qsd.XXXXXX)
chmod 777 "$RUN"
SOCK=$RUN/nbd.sock
QSD_PID=
stop_qsd() { stop_process "$QSD_PID"; QSD_PID=; }
at_exit 'rm -rf "$RUN"'
at_exit stop_qsd

start_qsd() { # CONFIG
	local env=() args=()
	case $1 in
	rsuring) env=(LD_PRELOAD="$LIB") ;;
	transparent) env=(LD_PRELOAD="$LIB" RSURING_SQPOLL=1 RSURING_SQPOLL_CPUS=1
		RSURING_STATS="json:$RUN/stats.$1.json") ;;
	always) env=(LD_PRELOAD="$LIB" RSURING_SQPOLL=1 RSURING_SQPOLL_CPUS=1
		RSURING_SQPOLL_STEP_ASIDE=0 RSURING_STATS="json:$RUN/stats.$1.json") ;;
	esac
	local size=$(($(blockdev --getsize64 "$LOOPDEV") / N))
	for i in $(seq 0 $((N - 1))); do
		args+=(--object "iothread,id=io$i"
			--blockdev "driver=host_device,filename=$LOOPDEV,aio=io_uring,cache.direct=on,node-name=dev$i"
			--blockdev "driver=raw,file=dev$i,offset=$((i * size)),size=$size,node-name=d$i"
			--export "type=nbd,id=e$i,node-name=d$i,name=d$i,writable=on,iothread=io$i")
	done
	rm -f "$SOCK"
	taskset -c 0 "${AS_NOBODY[@]}" env "${env[@]}" \
		qemu-storage-daemon --nbd-server "addr.type=unix,addr.path=$SOCK" "${args[@]}" \
		2>"$RUN/qsd.err" &
	QSD_PID=$!
	for _ in $(seq 100); do [ -S "$SOCK" ] && return 0; sleep 0.1; done
	echo "qemu-storage-daemon did not start:" >&2
	cat "$RUN/qsd.err" >&2
	exit 1
}

fio_jobs() { # extra fio args per export
	for i in $(seq 0 $((N - 1))); do
		echo "--name=j$i" "--uri=nbd+unix:///d$i?socket=$SOCK"
	done
}

workload() { # NAME CPUS: prints "OPS_PER_S TOTAL_OPS"
	local name=$1 cpus=$2 common=(--ioengine=nbd --direct=1 --time_based --runtime="$SECS"
		--group_reporting --output-format=json --size=64M)
	case $name in
	rr1) set -- --rw=randread --bs=4k --iodepth=1 ;;
	rr32) set -- --rw=randread --bs=4k --iodepth=32 ;;
	rw32) set -- --rw=randrw --bs=4k --iodepth=32 ;;
	seq8) set -- --rw=read --bs=256k --iodepth=8 ;;
	qr32 | qw32)
		local w=() pids=() t0 t1
		[ "$name" = qw32 ] && w=(-w)
		t0=$(date +%s.%N)
		for i in $(seq 0 $((N - 1))); do
			taskset -c "$cpus" qemu-img bench -f raw -t none -c 20000 -d 32 -s 4k "${w[@]}" \
				"nbd+unix:///d$i?socket=$SOCK" >/dev/null &
			pids+=($!)
		done
		wait "${pids[@]}"
		t1=$(date +%s.%N)
		awk -v n=$((N * 20000)) -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f %d\n", n / (b - a), n }'
		return
		;;
	esac
	# shellcheck disable=SC2046
	taskset -c "$cpus" fio "${common[@]}" --output="$RUN/fio.json" "$@" $(fio_jobs) >/dev/null
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0]; print(round(j["read"]["iops"]+j["write"]["iops"]), j["read"]["total_ios"]+j["write"]["total_ios"])' "$RUN/fio.json"
}

verify() { # a write+verify pass over each export: "ok" or "FAILED"
	# shellcheck disable=SC2046
	if taskset -c 0 fio --ioengine=nbd --direct=1 --rw=randwrite --bs=4k --iodepth=8 --size=8M \
		--verify=crc32c --do_verify=1 --verify_fatal=1 $(fio_jobs) >"$RUN/verify.log" 2>&1; then
		echo ok
	else
		echo FAILED
	fi
}

WORKLOADS=(rr1 rr32 rw32 seq8 qr32 qw32)
RAW=$OUT/qsd.raw
: >"$RAW"
one_run() { # ROUND PLACEMENT CPUS CONFIG
	local r=$1 placement=$2 cpus=$3 c=$4 w t0 t1 ops
	start_qsd "$c"
	for w in "${WORKLOADS[@]}"; do
		t0=$(cpu_ticks "$QSD_PID")
		ops=$(workload "$w" "$cpus")
		t1=$(cpu_ticks "$QSD_PID")
		echo "$r $placement $c $w $ops $((t1 - t0))" >>"$RAW" # ops: rate total
	done
	echo "$r $placement $c verify $(verify) 0 0" >>"$RAW"
	echo "$r $placement $c load $(cut -d' ' -f1 /proc/loadavg) 0 0" >>"$RAW"
	stop_qsd
}
SERVER_CONFIGS="debian rsuring transparent always" server_rounds "$ROUNDS" one_run
if [ -f "$RUN/stats.transparent.json" ]; then
	cp "$RUN/stats.transparent.json" "$OUT/qsd-transparent-stats.json"
fi
[ -f "$RUN/stats.always.json" ] && cp "$RUN/stats.always.json" "$OUT/qsd-always-stats.json"

python3 - "$RAW" "$SECS" "$RUN" <<'PY' | tee "$OUT/qsd.md"
import collections, statistics, sys
sys.path.insert(0, "bench")
import servers_summary as summary
raw, secs, run = sys.argv[1], float(sys.argv[2]), sys.argv[3]
ops = collections.defaultdict(list)
ver = collections.defaultdict(list)
load = []
for line in open(raw):
    r, place, conf, w, v, total, ticks = line.split()
    if w == "load":
        load.append(float(v))
    elif w == "verify":
        ver[(place, conf)].append(v)
    else:
        ops[(r, place, conf, w)] = (float(v), int(total), int(ticks))
print(f"# qemu-storage-daemon, NBD over a /dev/shm loop device (aio=io_uring), daemon as nobody on CPU 0")
print()
print("Ratio to Debian's liburing, same round and placement; median (min-max) over rounds.")
print("transparent: RSURING_SQPOLL=1 RSURING_SQPOLL_CPUS=1; always: the same with")
print("RSURING_SQPOLL_STEP_ASIDE=0 (no step-aside rule). spare: clients on CPU 0;")
print("shared: clients on CPUs 0-1. CPU: daemon CPU µs per op (SQ thread included).")
print()
print("| placement | workload | rsuring/debian | transparent/debian | always/debian | CPU µs/op debian | rsuring | transparent | always |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
rounds = sorted({k[0] for k in ops})
for place in ("spare", "shared"):
    for w in ("rr1", "rr32", "rw32", "seq8", "qr32", "qw32"):
        cells = []
        for conf in ("rsuring", "transparent", "always"):
            rs = [ops[(r, place, conf, w)][0] / ops[(r, place, "debian", w)][0]
                  for r in rounds if (r, place, conf, w) in ops and ops[(r, place, "debian", w)][0] > 0]
            cells.append(f"{statistics.median(rs):.2f} ({min(rs):.2f}-{max(rs):.2f})" if rs else "-")
        cpu = []
        for conf in ("debian", "rsuring", "transparent", "always"):
            # clock ticks (1/100 s) to CPU µs per op
            v = [1e4 * ops[(r, place, conf, w)][2] / max(ops[(r, place, conf, w)][1], 1)
                 for r in rounds if (r, place, conf, w) in ops]
            cpu.append(f"{statistics.median(v):.2f}" if v else "-")
        print(f"| {place} | {w} | {' | '.join(cells)} | {' | '.join(cpu)} |")
print()
summary.print_rings(run, [(conf, f"stats.{conf}.json") for conf in ("transparent", "always")])
summary.print_load(load)
print("Integrity (write+verify per lifetime): " + ", ".join(f"{p}/{c}: {' '.join(v)}" for (p, c), v in sorted(ver.items())))
PY
