#!/bin/bash
# Tests of the rsuring fio ioengine. Run as root (loop devices, SQ threads):
#
#   fio_engine/test.sh
#
# Builds what is missing (build.sh), installs Debian's fio package if it is
# missing, then runs the verify matrix (verify_matrix.py: workloads x modes
# x {buffered /dev/shm file, O_DIRECT loop device over /dev/shm} x iodepth,
# with the project's fio and Debian's /usr/bin/fio); a late-SQ-head fault
# injection (tests/late_sq_head.c) that must cause no requeue; checks that
# sqthread_poll_percpu gives 4 jobs ONE kernel SQ thread; trims, syncs,
# batching, multiple files, statistics, option errors and an installed
# (copied) engine. Everything it creates (loop devices, /dev/shm files) is
# removed on exit. Prints "N passed, M failed"; exits non-zero on any
# failure. RSURING_STRICT=1: a missing Debian fio is a failure, not a skip.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
FIO=$HERE/build/fio
ENGINE=$HERE/build/rsuring-engine.so
E=external:$ENGINE

if [ "$(id -u)" != 0 ]; then
	echo "test.sh: must run as root (loop devices, SQ poll threads)" >&2
	exit 1
fi
"$HERE/build.sh" || { echo "test.sh: build failed"; echo "0 passed, 1 failed"; exit 1; }

WORK=$(mktemp -d /dev/shm/rsuring-fio-test.XXXXXX)
LOOPS=()
BG_PIDS=()
cleanup() {
	local p l
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
if [ -x "$DEBIAN_FIO" ] && "$DEBIAN_FIO" --version 2>/dev/null | grep -q '^fio-3\.33'; then
	MATRIX_FIOS+=(--fio "debian=$DEBIAN_FIO")
	ALL_FIOS+=("debian=$DEBIAN_FIO")
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
# tests/late_sq_head.c shows every SQPOLL ring's SQ head 200 us late, so the
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
	-o "$SHIM" "$HERE/tests/late_sq_head.c" -ldl -lpthread 2>"$WORK/shim.txt"; then
	for spec in "${ALL_FIOS[@]}"; do
		for rw in randrw rw randwrite; do
			for qd in 1 16; do
				late_sq_head_case "$spec" "$rw" "$qd"
			done
		done
	done
else
	bad "build tests/late_sq_head.c" "$WORK/shim.txt"
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
# wait together) where the default makes two.
for sw in 0 1; do
	"$FIO" --name=st --ioengine="$E" "${FILE_T[@]}" --rw=randread \
		--io_size=8M --ring_stats=1 --submit_and_wait=$sw >"$WORK/log.txt" 2>&1
	enters=$(grep ' job=st ' "$WORK/log.txt" | grep ' sqes=2048 ' |
		sed -n 's/.* enters_submit=\([0-9]*\) enters_wait=\([0-9]*\) .*/\1 \2/p')
	want=$((2048 * (2 - sw)))
	# shellcheck disable=SC2086
	if [ -n "$enters" ] && [ $((${enters% *} + ${enters#* })) -eq $want ]; then
		ok "submit_and_wait=$sw, iodepth 1: $want io_uring_enter calls for 2048 I/Os"
	else
		echo "enters (submit wait): '${enters}', wanted $want in all" >>"$WORK/log.txt"
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

# ---- installed engine: $libdir/fio/rsuring-engine.so beside $libdir/liburing.so.2
# A copy in a temporary tree laid out like an install must load that
# tree's liburing.so.2 (rsuring), not the system's (Debian's liburing 2.3
# has no RSURING_0.1 and the engine would not load), with Debian's fio
# when it is there.
INST=$WORK/inst
mkdir -p "$INST/lib/fio"
cp "$ENGINE" "$INST/lib/fio/rsuring-engine.so"
cp "$(readlink -f "$HERE/build/lib/liburing.so.2")" "$INST/lib/liburing.so.2"
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
