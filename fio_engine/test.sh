#!/bin/bash
# Tests of the rsuring fio ioengine. Run as root (loop devices, SQ threads):
#
#   fio_engine/test.sh
#
# Builds what is missing (build.sh), installs Debian's fio package if it is
# missing, then runs the verify matrix (verify_matrix.py: workloads x modes
# x {buffered /dev/shm file, O_DIRECT loop device over /dev/shm} x iodepth,
# with the project's fio and Debian's /usr/bin/fio); a late-SQ-head fault
# injection (c_tests/fio_engine/late_sq_head.c) that must cause no requeue; checks that
# sqthread_poll_percpu gives 4 jobs ONE kernel SQ thread; trims, syncs,
# batching, multiple files, statistics, option errors and an installed
# (copied) engine. Everything it creates (loop devices, /dev/shm files) is
# removed on exit. Prints "N passed, M failed"; exits non-zero on any
# failure. RSURING_STRICT=1: a missing Debian fio is a failure, not a skip.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
# require_root, FIO_TREE, build_fio_engine.
# shellcheck source=../scripts/lib-common.sh
. "$ROOT/scripts/lib-common.sh"

require_root "loop devices, SQ poll threads"
# The default build needs fio's Debian source: the set-up script's
# --fio-source fetches it (FIO_SRC=DIR: a fio tree of your own instead).
if [ -z "${FIO_SRC:-}" ] && [ ! -x "$FIO_TREE/configure" ]; then
	bash "$ROOT/scripts/setup.sh" --fio-source ||
		{ echo "test.sh: scripts/setup.sh --fio-source failed"; echo "0 passed, 1 failed"; exit 1; }
fi
build_fio_engine || { echo "test.sh: build failed"; echo "0 passed, 1 failed"; exit 1; }
ENGINE=$FIO_ENGINE_SO
BUILD=$FIO_BUILD_DIR
FIO=$BUILD/fio
E=external:$ENGINE
[ -x "$FIO" ] || { echo "test.sh: no fio binary at $FIO (build the fio in FIO_SRC)"; echo "0 passed, 1 failed"; exit 1; }
FIO_VER=$("$FIO" --version)
echo "test.sh: $FIO_VER, $ENGINE"

WORK=$(mktemp -d /dev/shm/rsuring-fio-test.XXXXXX)
LOOPS=()
BG_PIDS=()
TRACE_INST=
cleanup() {
	local p l
	[ -n "$TRACE_INST" ] && [ -d "$TRACE_INST" ] && {
		echo 0 >"$TRACE_INST/events/block/block_rq_issue/enable"; rmdir "$TRACE_INST"; } 2>/dev/null
	for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	for l in "${LOOPS[@]}"; do losetup -d "$l" 2>/dev/null; done
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

PASS=0
FAIL=0
ok()   { PASS=$((PASS + 1)); printf 'ok    %s\n' "$1"; }
bad()  { FAIL=$((FAIL + 1)); printf 'FAIL  %s\n' "$1"; [ -n "${2:-}" ] && sed 's/^/      | /' "$2" | tail -25; }

FILE=$WORK/file
truncate -s 64M "$FILE"
LOOPFILE=$WORK/loop.img
truncate -s 64M "$LOOPFILE"
LOOP=$(losetup -f --show --direct-io=on "$LOOPFILE") || { echo "losetup failed"; exit 1; }
LOOPS+=("$LOOP")

# check_json FILE [min_read_bytes] : every job error 0, I/O happened,
# verify read back at least min_read_bytes.
check_json() {
	python3 - "$1" "${2:-0}" <<'EOF'
import json, sys
text = open(sys.argv[1]).read()
doc = json.loads(text[text.index('{'):])
need_read = int(sys.argv[2])
jobs = doc["jobs"]
errs = [(j["jobname"], j["error"]) for j in jobs if j["error"]]
rd = sum(j["read"]["io_bytes"] for j in jobs)
wr = sum(j["write"]["io_bytes"] for j in jobs)
tr = sum(j["trim"]["io_bytes"] for j in jobs)
if errs:
    sys.exit("job errors: %s" % errs)
if rd + wr + tr == 0:
    sys.exit("no I/O done")
if rd < need_read:
    sys.exit("read back %d bytes, expected >= %d" % (rd, need_read))
EOF
}

# run_ok NAME [fio args...] : fio must exit 0 and report no job errors.
# With verify in the args, the verify pass must have read the data back.
run_ok() {
	local name=$1; shift
	local out=$WORK/out.json log=$WORK/log.txt need=0
	case " $* " in *" --verify="*) need=1;; esac
	if "$FIO" --output-format=json --output="$out" "$@" >"$log" 2>&1 &&
	   check_json "$out" "$need" >"$log.check" 2>&1; then
		ok "$name"
	else
		cat "$log.check" >>"$log"
		bad "$name" "$log"
	fi
}

# run_fail NAME PATTERN [fio args...] : fio must exit non-zero (no crash:
# not killed by a signal), print PATTERN, do no I/O, and never report an
# error without text (fio prints a bare job error as "err=1/").
run_fail() {
	local name=$1 pat=$2; shift 2
	local log=$WORK/log.txt rc
	"$FIO" "$@" >"$log" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] && grep -q -- "$pat" "$log" &&
	   ! grep -Eq 'err= *[0-9]+/ *$' "$log" &&
	   ! grep -Eq 'IOPS=[1-9]' "$log"; then
		ok "$name"
	else
		echo "exit status $rc, wanted 1..127, '$pat', no I/O, no empty error" >>"$log"
		bad "$name" "$log"
	fi
}

COMMON=(--ioengine="$E" --bs=4k --iodepth=16 --do_verify=1)
FILE_T=(--filename="$FILE" --size=64M --direct=0)
LOOP_T=(--filename="$LOOP" --size=64M --direct=1)

# ---- Debian's packaged fio (3.33) loads the same engine ------------------
DEBIAN_FIO=/usr/bin/fio
if [ ! -x "$DEBIAN_FIO" ]; then
	echo "test.sh: installing Debian's fio package" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fio >"$WORK/apt.txt" 2>&1 ||
		{ apt-get update -qq >/dev/null 2>&1 &&
		  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fio >"$WORK/apt.txt" 2>&1; }
fi
MATRIX_FIOS=(--fio "project=$FIO")
ALL_FIOS=("project=$FIO")
if [ -x "$DEBIAN_FIO" ] && [ "$("$DEBIAN_FIO" --version 2>/dev/null)" = "$FIO_VER" ]; then
	MATRIX_FIOS+=(--fio "debian=$DEBIAN_FIO")
	ALL_FIOS+=("debian=$DEBIAN_FIO")
elif [ -n "${FIO_SRC:-}" ]; then
	echo "note  Debian's fio is not $FIO_VER: tests with $FIO only"
elif [ "${RSURING_STRICT:-0}" = 1 ]; then
	echo "Debian fio 3.33 not usable at $DEBIAN_FIO ($("$DEBIAN_FIO" --version 2>&1))" >"$WORK/log.txt"
	cat "$WORK/apt.txt" >>"$WORK/log.txt" 2>/dev/null
	bad "Debian fio 3.33 present (RSURING_STRICT=1)" "$WORK/log.txt"
else
	echo "skip  Debian fio 3.33 not installed (apt-get install fio): matrix with the project's fio only"
fi

# ---- verify matrix ---------------------------------------------------------
# workload x mode x {file, loop} x iodepth {1,16,128}, verify=crc32c, for
# each fio binary: see verify_matrix.py.
python3 "$HERE/verify_matrix.py" "${MATRIX_FIOS[@]}" --engine "$ENGINE" \
	--dir "$WORK" --loop "$LOOP" 2>&1 | tee "$WORK/matrix.txt" |
	grep --line-buffered -v ' passed, .* failed$'
counts=$(tail -1 "$WORK/matrix.txt")
case $counts in
*" passed, "*" failed")
	PASS=$((PASS + ${counts%% passed*}))
	f=${counts#* passed, }
	FAIL=$((FAIL + ${f%% failed}))
	;;
*)	bad "verify matrix ran to the end" "$WORK/matrix.txt" ;;
esac
rm -f "$WORK/matrix-file"

for target in file loop; do
	if [ $target = file ]; then T=("${FILE_T[@]}"); else T=("${LOOP_T[@]}"); fi
	run_ok "verify md5 $target plain" --name=v "${COMMON[@]}" "${T[@]}" \
		--rw=randwrite --verify=md5 --defer_taskrun=0
	run_ok "verify md5 $target defer_taskrun+fixedbufs+registerfiles" \
		--name=v "${COMMON[@]}" "${T[@]}" --rw=randwrite --verify=md5 \
		--defer_taskrun=1 --fixedbufs=1 --registerfiles=1
done

# ---- SQ head published late (an SQ thread preempted mid-batch) -----------
# c_tests/fio_engine/late_sq_head.c shows every SQPOLL ring's SQ head 200 us late, so the
# SQ looks full while completions for its slots are already reaped. The
# engine must wait for room, never answer FIO_Q_BUSY: fio 3.33 draws a new
# verify seed for a requeued write and a mixed job then fails its verify.
# fio's debug log names every requeue; there must be none.
SHIM=$WORK/late_sq_head.so
late_sq_head_case() {
	local spec=$1 rw=$2 qd=$3
	local name="late SQ head [${spec%%=*}]: sqthread_poll $rw iodepth=$qd, no requeue, verify"
	local log=$WORK/late.txt
	if LD_PRELOAD=$SHIM "${spec#*=}" --name=l --ioengine="$E" \
		--directory="$WORK" --size=8M --bs=4k --rw="$rw" --iodepth="$qd" \
		--verify=crc32c --sqthread_poll=1 --debug=io >"$log" 2>&1 &&
	   grep -q '^late_sq_head: SQ head shown' "$log" &&
	   ! grep -q 'requeue' "$log" &&
	   grep -q 'err= 0' "$log"; then
		ok "$name"
	else
		echo "requeues: $(grep -c requeue "$log")" >>"$log"
		grep -v '^io ' "$log" >"$log.short"
		bad "$name" "$log.short"
	fi
	rm -f "$WORK"/l.*
}
if gcc -O2 -Wall -Wextra -Werror -fPIC -shared -I"$HERE/../include" \
	-ffunction-sections -fdata-sections -Wl,--gc-sections -o "$SHIM" \
	"$HERE/../c_tests/fio_engine/late_sq_head.c" "$HERE/../c_tests/rsuring_test.c" -ldl -lpthread 2>"$WORK/shim.txt"; then
	for spec in "${ALL_FIOS[@]}"; do
		for rw in randrw rw randwrite; do
			for qd in 1 16; do
				late_sq_head_case "$spec" "$rw" "$qd"
			done
		done
	done
else
	bad "build c_tests/fio_engine/late_sq_head.c" "$WORK/shim.txt"
fi

# ---- one SQ thread for four jobs ----------------------------------------
# "RINGS THREADS": most SQPOLL rings fio had open at once and most distinct
# kernel SQ threads behind the rings open at one time (fio_run.py reads
# them from fdinfo; counting iou-sqp threads would also count io-wq
# workers an SQ thread has just created, which keep its name for a moment).
count_sqp() {
	local name=$1; shift
	python3 "$HERE/fio_run.py" census "$FIO" --name="$name" --ioengine="$E" \
		--filename="$LOOP" --direct=1 --bs=4k --rw=randread --iodepth=32 \
		--numjobs=4 --thread=1 --cpus_allowed=0 --sqthread_poll_cpu=1 \
		--time_based --runtime=2 "$@" 2>"$WORK/sqp.txt"
}
n=$(count_sqp dedicated --sqthread_poll=1)
if [ "$n" = "4 4" ]; then ok "sqthread_poll: 4 thread jobs, 4 rings on 4 SQ threads (control)"
else bad "sqthread_poll: 4 thread jobs, 4 rings on 4 SQ threads (control): saw '$n'" "$WORK/sqp.txt"; fi
n=$(count_sqp shared --sqthread_poll_percpu=1)
if [ "$n" = "4 1" ]; then ok "sqthread_poll_percpu: 4 thread jobs, 4 rings share ONE SQ thread"
else bad "sqthread_poll_percpu: 4 thread jobs, 4 rings share ONE SQ thread: saw '$n'" "$WORK/sqp.txt"; fi

# ---- workloads -------------------------------------------------------------
for target in file loop; do
	if [ $target = file ]; then T=("${FILE_T[@]}"); else T=("${LOOP_T[@]}"); fi
	run_ok "sequential write+verify 64k $target" --name=s --ioengine="$E" \
		"${T[@]}" --rw=write --bs=64k --iodepth=8 --verify=crc32c
	run_ok "sequential read $target" --name=s --ioengine="$E" "${T[@]}" \
		--rw=read --bs=128k --iodepth=4
	run_ok "mixed randrw 70/30 $target" --name=m --ioengine="$E" "${T[@]}" \
		--rw=randrw --rwmixread=70 --bs=4k --iodepth=32 --io_size=32M
	run_ok "fsync=8 + verify $target" --name=f "${COMMON[@]}" "${T[@]}" \
		--rw=randwrite --fsync=8 --verify=crc32c --size=16M
	run_ok "fdatasync=8 + verify $target" --name=f "${COMMON[@]}" "${T[@]}" \
		--rw=randwrite --fdatasync=8 --verify=crc32c --size=16M
	run_ok "iodepth_batch_* + verify $target" --name=b "${COMMON[@]}" \
		"${T[@]}" --rw=randwrite --iodepth=32 --iodepth_batch_submit=8 \
		--iodepth_batch_complete_min=4 --iodepth_batch_complete_max=16 \
		--verify=crc32c
	run_ok "reap_batch=8 + verify $target" --name=r "${COMMON[@]}" "${T[@]}" \
		--rw=randwrite --iodepth=32 --reap_batch=8 --verify=crc32c
	run_ok "vectored (nonvectored=0) + force_async=4 + verify $target" \
		--name=n "${COMMON[@]}" "${T[@]}" --rw=randwrite --nonvectored=0 \
		--force_async=4 --verify=crc32c
	run_ok "randtrim $target" --name=t --ioengine="$E" "${T[@]}" \
		--rw=randtrim --bs=64k --iodepth=8 --size=16M
	run_ok "trimwrite $target" --name=t --ioengine="$E" "${T[@]}" \
		--rw=trimwrite --bs=64k --iodepth=8 --size=16M
done
run_ok "sync_file_range + verify file" --name=f "${COMMON[@]}" "${FILE_T[@]}" \
	--rw=randwrite --sync_file_range=write:8 --verify=crc32c --size=16M

# A trim punches a hole in a regular file: its allocated blocks go down.
TF=$WORK/trimfile
dd if=/dev/urandom of="$TF" bs=1M count=16 status=none
before=$(stat -c %b "$TF")
"$FIO" --name=t --ioengine="$E" --filename="$TF" --rw=trim --bs=1M \
	--iodepth=4 --size=8M >"$WORK/log.txt" 2>&1
after=$(stat -c %b "$TF")
if [ "$after" -lt "$before" ]; then ok "trim punches holes in a file ($before -> $after blocks)"
else bad "trim punches holes in a file ($before -> $after blocks)" "$WORK/log.txt"; fi
run_fail "trim on a character device errors clearly" "trim is not supported" \
	--name=t --ioengine="$E" --filename=/dev/zero --rw=trim --bs=4k --size=1M

# Several files per job, registered and not, fewer open than there are.
mkdir -p "$WORK/dir"
for reg in 0 1; do
	run_ok "4 files per job, registerfiles=$reg + verify" --name=mf \
		"${COMMON[@]}" --directory="$WORK/dir" --nrfiles=4 --size=32M \
		--file_service_type=random --rw=randwrite --verify=crc32c \
		--registerfiles=$reg
	run_ok "4 files, openfiles=2, registerfiles=$reg + verify" --name=mo \
		"${COMMON[@]}" --directory="$WORK/dir" --nrfiles=4 --openfiles=2 \
		--size=32M --rw=randwrite --verify=crc32c --registerfiles=$reg
done

run_ok "filename=a:b:c list, registerfiles=1 + verify" --name=fl \
	"${COMMON[@]}" --filename="$WORK/dir/a:$WORK/dir/b:$WORK/dir/c" \
	--size=24M --rw=randwrite --verify=crc32c --registerfiles=1

# ---- statistics ------------------------------------------------------------
for how in "--ring_stats=1" "env RSURING_STATS=1"; do
	if [ "$how" = "--ring_stats=1" ]; then
		"$FIO" --name=st --ioengine="$E" "${FILE_T[@]}" --rw=randread \
			--io_size=8M --ring_stats=1 >"$WORK/log.txt" 2>&1
	else
		RSURING_STATS=1 "$FIO" --name=st --ioengine="$E" "${FILE_T[@]}" \
			--rw=randread --io_size=8M >"$WORK/log.txt" 2>&1
	fi
	if grep -Eq '^rsuring: pid=[0-9]+ .* sqes=2048 cqes=2048 .* job=st ' "$WORK/log.txt"; then
		ok "ring statistics printed ($how)"
	else
		bad "ring statistics printed ($how)" "$WORK/log.txt"
	fi
done

# submit_and_wait=1 at iodepth 1: one io_uring_enter per I/O (submit and
# wait together) where the default makes two. With the default, a read whose
# completion the submitting enter already posted (a page-cache hit that
# completes inline) needs no wait of its own, so a few of the 2048 waits may
# be spared: up to 1/16 of them are allowed, never more than two per I/O.
for sw in 0 1; do
	"$FIO" --name=st --ioengine="$E" "${FILE_T[@]}" --rw=randread \
		--io_size=8M --ring_stats=1 --submit_and_wait=$sw >"$WORK/log.txt" 2>&1
	enters=$(grep ' job=st ' "$WORK/log.txt" | grep ' sqes=2048 ' |
		sed -n 's/.* enters_submit=\([0-9]*\) enters_wait=\([0-9]*\) .*/\1 \2/p')
	want=$((2048 * (2 - sw)))
	least=$((want - (1 - sw) * 2048 / 16))
	# shellcheck disable=SC2086
	if [ -n "$enters" ] && [ $((${enters% *} + ${enters#* })) -le $want ] &&
		[ $((${enters% *} + ${enters#* })) -ge $least ]; then
		ok "submit_and_wait=$sw, iodepth 1: $want io_uring_enter calls for 2048 I/Os"
	else
		echo "enters (submit wait): '${enters}', wanted $least to $want in all" >>"$WORK/log.txt"
		bad "submit_and_wait=$sw, iodepth 1: $want io_uring_enter calls for 2048 I/Os" "$WORK/log.txt"
	fi
done

# ---- option errors -----------------------------------------------------------
BADBASE=(--name=e --ioengine="$E" --filename="$FILE" --size=1M)
run_fail "bad value: reap_batch=abc" "failed parsing reap_batch" "${BADBASE[@]}" --reap_batch=abc
run_fail "bad value: reap_batch=99999999" "reap_batch" "${BADBASE[@]}" --reap_batch=99999999
run_fail "bad value: sqthread_poll_cpu=4096" "no such CPU" "${BADBASE[@]}" --sqthread_poll_cpu=4096
run_fail "bad value: sqthread_poll_percpu=maybe" "failed parsing sqthread_poll_percpu" "${BADBASE[@]}" --sqthread_poll_percpu=maybe
run_fail "bad value: nonvectored=x" "failed parsing nonvectored" "${BADBASE[@]}" --nonvectored=x
run_fail "bad combination: defer_taskrun + sqthread_poll" "func=rsuring, error=defer_taskrun=1 cannot be combined" "${BADBASE[@]}" --defer_taskrun=1 --sqthread_poll=1
# fio reads "-3" as the range "-" "3"; the engine must still refuse it.
for bad_opt in reap_batch=-3 force_async=-2 nonvectored=5 defer_taskrun=3 \
	uncached=7 nowait=2 ring_stats=-1 sqthread_poll_cpu=-1 reap_batch=4k \
	submit_and_wait=2 \
	force_async=1.5; do
	run_fail "bad value: $bad_opt stops the job" "rsuring: ${bad_opt%%=*}=" \
		"${BADBASE[@]}" --"$bad_opt"
done
for flag in hipri fixedbufs registerfiles sqthread_poll; do
	run_fail "bad value: $flag=-1 stops the job" "func=rsuring, error=$flag=-1: expected 0 or 1" \
		"${BADBASE[@]}" --"$flag"=-1
done

# ---- every io_uring option of this fio, with the engine's own help -------
# fio --enghelp=io_uring lists the options of fio's own engine in the fio
# the engine is built for: each must be in the engine's list, with help
# text of its own (not fio's).
"$FIO" --enghelp=io_uring >"$WORK/help-fio.txt" 2>&1
"$FIO" --enghelp="$ENGINE" >"$WORK/help-rs.txt" 2>&1
if python3 - "$WORK/help-fio.txt" "$WORK/help-rs.txt" >"$WORK/log.txt" 2>&1 <<'PY'
import sys
def opts(path):
    d = {}
    for line in open(path):
        name, sep, text = line.partition(":")
        if sep and name.strip() and " " not in name.strip():
            d[name.strip()] = text.strip()
    return d
fio, rs = opts(sys.argv[1]), opts(sys.argv[2])
if len(fio) < 10:
    sys.exit(f"fio --enghelp=io_uring listed only {sorted(fio)}")
bad = [n for n in fio if n not in rs]
same = [n for n in fio if n in rs and rs[n] == fio[n]]
empty = [n for n, t in rs.items() if not t]
print(f"fio's io_uring options: {len(fio)}; the engine's: {len(rs)}")
if bad or same or empty:
    sys.exit(f"missing: {bad}; fio's own help text: {same}; no help: {empty}")
PY
then
	ok "--enghelp lists all $(grep -c ':' "$WORK/help-fio.txt") options of $FIO_VER's io_uring engine, with its own help"
else
	bad "--enghelp lists every io_uring option of $FIO_VER with its own help" "$WORK/log.txt"
fi

# ---- cmdprio*: the priority the block layer sees, request by request -----
# A tracefs instance of our own records block:block_rq_issue on the loop
# device only; its ioprio field is the priority of each request as the
# block layer issues it (class,hint,level). The same job runs with fio's
# own io_uring engine first, as a reference for the check itself.
TRACEFS=/sys/kernel/tracing
[ -d "$TRACEFS/events" ] || mount -t tracefs nodev "$TRACEFS" 2>/dev/null
LOOP_DEVNUM=$(( (0x$(stat -c %t "$LOOP") << 20) | 0x$(stat -c %T "$LOOP") ))
# prio_case NAME "EXPECT..." fio-args... : both engines, traced and checked.
prio_case() {
	local name=$1 expects=$2 eng ev rc; shift 2
	local -a exp=()
	local IFS_OLD=$IFS
	IFS=';'; for ev in $expects; do exp+=(--expect "$ev"); done; IFS=$IFS_OLD
	for eng in io_uring "$E"; do
		TRACE_INST=$TRACEFS/instances/rsuring-fio-test-$$
		if ! mkdir "$TRACE_INST" 2>"$WORK/log.txt"; then
			bad "$name: tracefs instance" "$WORK/log.txt"; TRACE_INST=; return
		fi
		ev=$TRACE_INST/events/block/block_rq_issue
		echo "dev == $LOOP_DEVNUM" >"$ev/filter"
		echo 1 >"$ev/enable"
		"$FIO" --name=p --ioengine="$eng" --filename="$LOOP" --size=64M \
			--direct=1 --iodepth=8 --number_ios=3000 --randseed=7 "$@" \
			--output="$WORK/prio-out.txt" >"$WORK/log.txt" 2>&1
		rc=$?
		echo 0 >"$ev/enable"
		cp "$TRACE_INST/trace" "$WORK/prio-trace.txt"
		rmdir "$TRACE_INST"; TRACE_INST=
		cat "$WORK/prio-out.txt" >>"$WORK/log.txt"
		if [ "$rc" = 0 ] && python3 "$HERE/ioprio_check.py" \
			"$WORK/prio-trace.txt" --min 2500 "${exp[@]}" >>"$WORK/log.txt" 2>&1; then
			ok "$name [${eng##*/}]"
			sed -n 's/^  \([RW] .*\)/      \1/p' "$WORK/log.txt"
		else
			echo "fio exit status $rc" >>"$WORK/log.txt"
			bad "$name [${eng##*/}]" "$WORK/log.txt"
		fi
	done
}
prio_case "cmdprio_percentage=30: 30% rt/2, the rest the job's be/5" \
	"R 4096 rt,0,2 20-40;R 4096 be,0,5 60-80" \
	--rw=randread --bs=4k --prioclass=2 --prio=5 \
	--cmdprio_percentage=30 --cmdprio_class=1 --cmdprio=2
# An SQ thread does not run with the job's ioprio_set() priority: the
# job's own be/5 must come from sqe->ioprio too.
prio_case "cmdprio with sqthread_poll: the job's priority travels in each request" \
	"R 4096 idle,0,7 40-60;R 4096 be,0,5 40-60" \
	--rw=randread --bs=4k --prioclass=2 --prio=5 --sqthread_poll=1 \
	--cmdprio_percentage=50 --cmdprio_class=3 --cmdprio=7
prio_case "cmdprio READ,WRITE pairs: reads untouched, 50% of writes idle/7" \
	"R 4096 be,0,4 100-100;W 4096 idle,0,7 35-65;W 4096 be,0,4 35-65" \
	--rw=randrw --bs=4k --prioclass=2 --prio=4 \
	--cmdprio_percentage=0,50 --cmdprio_class=1,3 --cmdprio=0,7
prio_case "cmdprio_bssplit: every 4k read idle/6, 16k reads the job's be/4" \
	"R 4096 idle,0,6 100-100;R * be,0,4 100-100" \
	--rw=randread --bssplit=4k/50:16k/50 --prioclass=2 --prio=4 \
	--cmdprio_bssplit=4k/100/3/6:16k/0
if grep -q '^cmdprio_hint' "$WORK/help-rs.txt"; then
	prio_case "cmdprio_hint=3: the hint travels with the priority" \
		"R 4096 be,3,1 100-100" \
		--rw=randread --bs=4k --cmdprio_percentage=100 --cmdprio_class=2 \
		--cmdprio=1 --cmdprio_hint=3
fi
for bad_opt in cmdprio_percentage=101 cmdprio_percentage=10,200 cmdprio_class=0 \
	cmdprio_class=4 cmdprio=8 cmdprio=-1 cmdprio_bssplit=4k/abc \
	cmdprio_bssplit=4k/50/9/0 cmdprio_bssplit=4k/150 cmdprio_bssplit=4k:8k \
	cmdprio_bssplit=4k/1,4k/1,4k/1; do
	run_fail "bad value: $bad_opt stops the job" "rsuring: ${bad_opt%%=*}=" \
		"${BADBASE[@]}" --"$bad_opt"
done
run_fail "bad combination: cmdprio_percentage + cmdprio_bssplit" "mutually exclusive" \
	"${BADBASE[@]}" --cmdprio_percentage=10 --cmdprio_bssplit=4k/10
run_fail "bad value: cmdprio_bssplit shares over 100% for one size" "exceeds 100" \
	"${BADBASE[@]}" --cmdprio_bssplit=4k/60:4k/60

# ---- NVMe passthrough options: refused, never ignored ---------------------
# This engine sends reads and writes, not NVMe commands: a value that would
# change what fio's io_uring_cmd engine sends stops the job with a message
# naming the option; fio's default value changes nothing and runs. Options
# this fio does not have must be unknown to fio.
run_fail "cmd_type=nvme is refused (no passthrough)" "rsuring: cmd_type=nvme: .*NVMe passthrough" \
	"${BADBASE[@]}" --cmd_type=nvme
for spec in readfua=1:readfua=0 writefua=1:writefua=0 write_mode=zeroes:write_mode=write \
	write_mode=uncor:write_mode=write verify_mode=compare:verify_mode=read \
	md_per_io_size=8:md_per_io_size=0 pi_act=0:pi_act=1 pi_chk=GUARD,REFTAG: \
	apptag=5:apptag=0x1234 apptag_mask=0xff:apptag_mask=0xffff deac=1:deac=0; do
	refused=${spec%%:*} accepted=${spec#*:} opt=${spec%%=*}
	if grep -q "^$opt " "$WORK/help-rs.txt"; then
		run_fail "$refused is refused (NVMe passthrough only)" \
			"rsuring: $refused: .*NVMe passthrough" "${BADBASE[@]}" --"$refused"
		[ -n "$accepted" ] &&
			run_ok "$accepted (fio's default) is accepted" --name=d "${COMMON[@]}" \
				"${FILE_T[@]}" --size=1M --rw=write --verify=crc32c --"$accepted"
	else
		run_fail "$opt: not an option of $FIO_VER, fio refuses it" \
			"unrecognized option" "${BADBASE[@]}" --"$refused"
	fi
done
run_fail "bad value: write_mode=bogus stops the job" "write_mode" "${BADBASE[@]}" --write_mode=bogus

# ---- an engine built for another fio --------------------------------------
# The same sources compiled as if for another fio version: fio must refuse
# the engine at load, with the engine's message naming both versions.
if BUILD_DIR=$WORK/other-fio RSURING_SKIP_CARGO=1 \
	RSE_EXTRA_CFLAGS='-UFIO_VERSION -DFIO_VERSION="fio-3.99-other"' \
	"$HERE/build.sh" >"$WORK/other.txt" 2>&1; then
	run_fail "an engine built for another fio is refused at load ($FIO_VER)" \
		"built for fio-3.99-other .* cannot run in $FIO_VER" --name=o \
		--ioengine="external:$WORK/other-fio/rsuring-engine.so" --filename="$FILE" --size=1M
else
	bad "build an engine for another fio version" "$WORK/other.txt"
fi

# ---- installed engine: $libdir/fio/rsuring-engine.so beside $libdir/liburing.so.2
# A copy in a temporary tree laid out like an install must load that
# tree's liburing.so.2 (rsuring), not the system's (Debian's liburing 2.3
# has no RSURING_0.1 and the engine would not load), with Debian's fio
# when it is there.
INST=$WORK/inst
mkdir -p "$INST/lib/fio"
cp "$ENGINE" "$INST/lib/fio/rsuring-engine.so"
cp "$(readlink -f "$BUILD/lib/liburing.so.2")" "$INST/lib/liburing.so.2"
for spec in "${ALL_FIOS[@]}"; do
	name="installed engine [${spec%%=*}]: $INST/lib/fio/rsuring-engine.so loads $INST/lib/liburing.so.2"
	log=$WORK/inst.txt
	maps=$WORK/inst-maps.txt
	: >"$maps"
	env -u LD_LIBRARY_PATH -u LD_PRELOAD "${spec#*=}" --name=i \
		--ioengine="external:$INST/lib/fio/rsuring-engine.so" \
		--filename="$FILE" --size=8M --rw=randread --time_based \
		--runtime=1 --ring_stats=1 >"$log" 2>&1 &
	pid=$!
	BG_PIDS+=("$pid")
	for i in $(seq 1 20); do
		sleep 0.1
		grep -o '/[^ ]*liburing[^ ]*' /proc/"$pid"/maps >>"$maps" 2>/dev/null
	done
	wait "$pid"
	rc=$?
	libs=$(sort -u "$maps" | tr '\n' ' ')
	if [ "$rc" = 0 ] && [ "$libs" = "$INST/lib/liburing.so.2 " ] &&
	   grep -q '^rsuring: pid=.* job=i ' "$log"; then
		ok "$name"
	else
		echo "exit status $rc; liburing mappings seen: ${libs:-none}" >>"$log"
		bad "$name" "$log"
	fi
done

echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
