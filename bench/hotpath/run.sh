#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Hot-path benchmarks: rsuring vs Debian's liburing, same C binary, same run.
#
#   bench/hotpath/run.sh            full suite (about 5 minutes on 2 cores)
#   REPS=3 DUR=0.5 bench/hotpath/run.sh   quicker, noisier
#
# Environment: REPS (repetitions per variant, default 5), DUR (seconds per
# timed run, default 1; a tenth more is spent warming up), CPU (the CPU every
# benchmark process is pinned to, default 0), FILE_SIZE (the /dev/shm file,
# default 512M), SKIP_FIO=1 / SKIP_RUST=1 to leave out the reference rows,
# QUIET=P to wait (up to 60 s) before each round until CPU $CPU is under P %
# busy (for machines shared with other work; costs 0.3 s a round when quiet),
# ONLY="PATTERN..." to run only the cases whose names match one of the shell
# patterns (nop_qd1 nop_b1 nop_b8 nop_b32 reap_one reap_batch reap_wait
# read_{buffered,direct}_qd{1,32,128}_{plain,defer}; e.g. ONLY="nop_*").
#
# Needs: gcc, Debian's liburing-dev (the header and liburing.so.2), cargo,
# python3; root for the O_DIRECT rows (loop device) and for fetching fio's
# source (apt-get source). Writes bench/hotpath/results.md and ratios.png;
# builds and raw numbers go to target/bench/hotpath/.
#
# Every run of the C program reports which library its io_uring_submit came
# from (dladdr + realpath); a run that loaded the wrong library aborts the
# suite.

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
WORK=$ROOT/target/bench/hotpath

REPS=${REPS:-5}
DUR=${DUR:-1}
CPU=${CPU:-0}
FILE_SIZE=${FILE_SIZE:-512M}
REAP_ITERS=${REAP_ITERS:-20000}
SKIP_FIO=${SKIP_FIO:-0}
SKIP_RUST=${SKIP_RUST:-0}

# Variables of rsuring's own that would change what is measured.
for v in $(env | sed -n 's/^\(RSURING_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done

log() { printf 'hotpath: %s\n' "$*" >&2; }
fail() { log "error: $*"; exit 1; }

mkdir -p "$WORK"
RAW=$WORK/raw.tsv
META=$WORK/meta.tsv
NOTES=$WORK/notes.txt
: >"$RAW"
: >"$META"
: >"$NOTES"
note() { printf '%s\n' "$*" >>"$NOTES"; log "$*"; }

# ---------------------------------------------------------------- build ----

[[ -r /usr/include/liburing.h ]] || fail "liburing's header is missing (apt-get install liburing-dev)"
MULTIARCH=$(gcc -print-multiarch)
LIBURING_SO=$(readlink -f "/usr/lib/$MULTIARCH/liburing.so.2") ||
	fail "Debian's liburing.so.2 is missing"
[[ -e $LIBURING_SO ]] || fail "Debian's liburing.so.2 is missing"

log "building rsuring (cargo build --release)"
(cd "$ROOT" && cargo build --release --quiet)
# LD_LIBRARY_PATH directory in which liburing.so.2 is rsuring: a symlink to
# a snapshot of the library just built, so that another cargo build during
# the run cannot swap it between the A and B runs.
RSLIB=$WORK/rslib
mkdir -p "$RSLIB"
cp -f "$ROOT/target/release/librsuring.so" "$RSLIB/librsuring.so.tmp"
mv -f "$RSLIB/librsuring.so.tmp" "$RSLIB/librsuring.so"
RSURING_SO=$RSLIB/librsuring.so
ln -sfn "$RSURING_SO" "$RSLIB/liburing.so.2"
RSURING_DESC="target/release/librsuring.so, $(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo '?')"

CFLAGS="-O2 -Wall -Wextra -Werror -pthread"
log "compiling hotpath.c against /usr/include/liburing.h"
# shellcheck disable=SC2086
gcc $CFLAGS -o "$WORK/hotpath" "$HERE/hotpath.c" -luring -ldl
log "compiling the rsuring-only variant against include/rsuring.h"
# shellcheck disable=SC2086
gcc $CFLAGS -DRSURING_EXT -I"$ROOT/include" -o "$WORK/hotpath-rsext" \
	"$HERE/hotpath.c" "$RSURING_SO" -ldl

# fio's t/io_uring, from Debian's fio source package.
TIO=
build_fio() {
	local dir
	dir=$(find "$WORK" -maxdepth 1 -type d -name 'fio-[0-9]*' | sort | tail -1)
	if [[ -z $dir ]]; then
		[[ $(id -u) == 0 ]] || { note "t/io_uring: not root, cannot fetch fio's source"; return 1; }
		if ! grep -qsr '^Types:.*deb-src' /etc/apt/sources.list.d/ &&
			! grep -qs '^deb-src' /etc/apt/sources.list; then
			[[ -r /etc/apt/sources.list.d/debian.sources ]] ||
				{ note "t/io_uring: no deb-src entry and no debian.sources to copy"; return 1; }
			log "adding a deb-src entry (/etc/apt/sources.list.d/debian-src.sources)"
			sed 's/^Types:.*/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
				>/etc/apt/sources.list.d/debian-src.sources
		fi
		log "fetching fio's source (apt-get source fio)"
		apt-get update -qq >"$WORK/apt.log" 2>&1 || true
		(cd "$WORK" && apt-get source -qq fio) >>"$WORK/apt.log" 2>&1 ||
			{ note "t/io_uring: apt-get source fio failed (see $WORK/apt.log)"; return 1; }
		dir=$(find "$WORK" -maxdepth 1 -type d -name 'fio-[0-9]*' | sort | tail -1)
		[[ -n $dir ]] || { note "t/io_uring: no fio source directory"; return 1; }
	fi
	if [[ ! -x $dir/t/io_uring ]]; then
		log "building $(basename "$dir")/t/io_uring"
		(cd "$dir" && ./configure && make -j2 t/io_uring) >"$WORK/fio-build.log" 2>&1 ||
			{ note "t/io_uring: build failed (see $WORK/fio-build.log)"; return 1; }
	fi
	TIO=$dir/t/io_uring
	TIO_VERSION=$(basename "$dir")
}
if [[ $SKIP_FIO != 1 ]]; then build_fio || true; fi

# The io-uring crate peer.
PEER=
if [[ $SKIP_RUST != 1 ]]; then
	log "building rust-peer (io-uring crate)"
	if cargo build --release --quiet --manifest-path "$HERE/rust-peer/Cargo.toml" \
		--target-dir "$WORK/rust-peer" 2>"$WORK/rust-peer.log"; then
		PEER=$WORK/rust-peer/release/rsuring-hotpath-rust-peer
		PEER_VERSION=$(sed -n '/^name = "io-uring"/{n;s/^version = "\(.*\)"/\1/p}' \
			"$HERE/rust-peer/Cargo.lock")
	else
		note "io-uring crate: build failed (see $WORK/rust-peer.log)"
	fi
fi

# ------------------------------------------------------------- measuring ----

# run_variant CASE VARIANT: one timed run, appended to $RAW.
run_variant() {
	local case=$1 variant=$2 out err value unit lib want
	local -a cmd env_=()
	err=$WORK/stderr.txt
	cmd=("${CASE_CMD[@]}")
	case $variant in
	liburing | liburing-reg) want=$LIBURING_SO ;;
	rsuring | rsuring-reg) want=$RSURING_SO; env_=(LD_LIBRARY_PATH="$RSLIB") ;;
	rsuring-stats) want=$RSURING_SO; env_=(LD_LIBRARY_PATH="$RSLIB" RSURING_STATS=1) ;;
	rsuring-ext) want=$RSURING_SO; env_=(LD_LIBRARY_PATH="$RSLIB"); cmd[0]=$WORK/hotpath-rsext ;;
	tio | tio-x0) want=; cmd=() ;;
	crate) want=; cmd=("$PEER" 128 32 "$DUR") ;;
	*) fail "unknown variant $variant" ;;
	esac
	[[ $variant == *-reg ]] && cmd+=(regring)

	if [[ $variant == tio* ]]; then
		# t/io_uring prints IOPS once a second; the figure is the median
		# without the first (ramp-up). Its rate per CPU-second is estimated
		# as the mean of all samples / (CPU time / wall time) of the run.
		local x=1 secs times samples mean
		[[ $variant == tio-x0 ]] && x=0
		secs=$(awk -v d="$DUR" 'BEGIN { s = int(d + 0.999) + 2; print (s < 3 ? 3 : s) }')
		out=$({
			TIMEFORMAT='%R %U %S'
			time taskset -c "$CPU" "$TIO" -N1 -X"$x" -r "$secs" 2>"$err"
		} 2>"$WORK/time.txt") ||
			{ cat "$err" >&2; fail "$case/$variant: t/io_uring failed"; }
		times=$(tail -1 "$WORK/time.txt")
		samples=$(printf '%s\n' "$out" | sed -n 's/^IOPS=\([0-9.]*\)\([KM]\{0,1\}\),.*/\1 \2/p' |
			awk '{ printf "%.0f\n", $1 * ($2 == "M" ? 1e6 : $2 == "K" ? 1e3 : 1) }')
		mean=$(awk '{ s += $1; n++ } END { if (n) print s / n }' <<<"$samples")
		value=$(awk 'NR > 1' <<<"$samples" | sort -g |
			awk '{ a[++n] = $1 } END { if (!n) exit 1; print (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2) }') ||
			{ printf '%s\n' "$out" >&2; fail "$case/$variant: no IOPS in t/io_uring's output"; }
		printf '%s\t%s\t%s\t%s\n' "$case" "$variant" "$value" "ops/s" >>"$RAW"
		awk -v t="$times" -v v="$mean" -v c="$case@cpu" -v n="$variant" 'BEGIN {
			split(t, x); if (x[2] + x[3] > 0) printf "%s\t%s\t%.6g\tops/CPU-s\n", c, n, v * x[1] / (x[2] + x[3]) }' >>"$RAW"
		return
	fi

	out=$(env "${env_[@]}" taskset -c "$CPU" "${cmd[@]}" 2>"$err") ||
		{ cat "$err" >&2; fail "$case/$variant: ${cmd[*]} failed"; }
	local cpu_rate
	read -r _ value unit lib _ cpu_rate <<<"$(printf '%s\n' "$out" | grep '^RESULT ')" ||
		{ printf '%s\n' "$out" >&2; fail "$case/$variant: no RESULT line"; }
	if [[ -n $want && ${lib#lib=} != "$want" ]]; then
		fail "$case/$variant: ran against ${lib#lib=}, expected $want"
	fi
	if [[ $variant == rsuring-stats ]] && ! grep -q '^rsuring: pid=' "$err"; then
		fail "$case/$variant: RSURING_STATS=1 printed no statistics"
	fi
	if [[ $variant != rsuring-stats && -s $err ]]; then
		cat "$err" >&2
	fi
	printf '%s\t%s\t%s\t%s\n' "$case" "$variant" "$value" "$unit" >>"$RAW"
	cpu_rate=${cpu_rate#cpu_rate=}
	if [[ $case == nop_* && -n $cpu_rate && $cpu_rate != 0 ]]; then
		printf '%s\t%s\t%s\t%s\n' "$case@cpu" "$variant" "$cpu_rate" "ops/CPU-s" >>"$RAW"
	fi
}

# With QUIET=P, wait (up to 60 s) until CPU $CPU was under P % busy for
# 0.3 s: for machines shared with other work.
QUIET=${QUIET:-}
cpu_busy() {
	local a b
	a=$(awk -v c="cpu$CPU" '$1 == c { print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat)
	sleep 0.3
	b=$(awk -v c="cpu$CPU" '$1 == c { print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat)
	awk -v a="$a" -v b="$b" 'BEGIN { split(a, x); split(b, y); t = y[2] - x[2]; print (t > 0 ? int(100 * (y[1] - x[1]) / t) : 0) }'
}
wait_quiet() {
	[[ -n $QUIET ]] || return 0
	local i busy
	for ((i = 0; i < 200; i++)); do
		busy=$(cpu_busy)
		((busy < QUIET)) && return 0
	done
	note "CPU $CPU still ${busy}% busy after 60 s of waiting (QUIET=$QUIET)"
}

ONLY=${ONLY:-}
want() {
	local p
	[[ -z $ONLY ]] && return 0
	for p in $ONLY; do
		# shellcheck disable=SC2053
		[[ $1 == $p ]] && return 0
	done
	return 1
}

# measure CASE "VARIANTS" CMD...: REPS rounds, the variants alternating and
# their order reversed every other round (so drift hits all alike).
measure() {
	local case=$1 r v
	want "$case" || return 0
	local -a variants
	read -r -a variants <<<"$2"
	shift 2
	CASE_CMD=("$WORK/hotpath" "$@")
	log "$case: ${variants[*]}"
	for ((r = 0; r < REPS; r++)); do
		wait_quiet
		if ((r % 2)); then
			for ((v = ${#variants[@]} - 1; v >= 0; v--)); do run_variant "$case" "${variants[v]}"; done
		else
			for v in "${variants[@]}"; do run_variant "$case" "$v"; done
		fi
	done
}

# row KIND LABEL BASE_CASE BASE_VARIANT SUBJ_CASE SUBJ_VARIANT [TARGET]
# KIND rate: ratio subject/base; time: base/subject (so >1 = subject faster).
row() { local IFS=$'\t'; printf '%s\n' "$*" >>"$META"; }

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
T_START=$(date +%s)

measure nop_qd1 "liburing rsuring" nop-qd1 "$DUR"
row rate "NOP QD1 round trip (ops/s)" nop_qd1 liburing nop_qd1 rsuring ge:1.00

for b in 1 8; do
	measure "nop_b$b" "liburing rsuring" nop-qd 128 "$b" "$DUR"
	row rate "NOP QD128, submit batch $b (ops/s)" "nop_b$b" liburing "nop_b$b" rsuring
done

# Batch 32 and everything compared with it, in one alternating block.
B32="liburing rsuring rsuring-stats liburing-reg rsuring-reg"
[[ -n $TIO ]] && B32+=" tio tio-x0"
[[ -n $PEER ]] && B32+=" crate"
measure nop_b32 "$B32" nop-qd 128 32 "$DUR"
row rate "NOP QD128, submit batch 32 (ops/s)" nop_b32 liburing nop_b32 rsuring ge:1.05
row rate "NOP QD128, batch 32, registered ring fd (ops/s)" nop_b32 liburing-reg nop_b32 rsuring-reg

measure reap_one "liburing rsuring" reap one "$REAP_ITERS"
measure reap_batch "liburing rsuring" reap batch "$REAP_ITERS"
measure reap_wait "rsuring-ext" reap waitbatch "$REAP_ITERS"
row time "reap 128 CQEs: peek_cqe + cqe_seen each (ns/CQE)" reap_one liburing reap_one rsuring
row time "reap 128 CQEs: peek_batch_cqe + cq_advance (ns/CQE)" reap_batch liburing reap_batch rsuring
row time "reap 128 CQEs: rsuring_wait_batch_cqe + cq_advance (ns/CQE; baseline: liburing peek_batch_cqe)" reap_batch liburing reap_wait rsuring-ext

# 4 KiB random reads: buffered on a /dev/shm file, O_DIRECT on a loop device
# over the same file.
READ_FILE=
READ_DEV=
READS=0
for mode in buffered direct; do
	for qd in 1 32 128; do
		for ring in plain defer; do
			want "read_${mode}_qd${qd}_$ring" && READS=1
		done
	done
done
if ((!READS)); then
	:
elif [[ $(id -u) == 0 ]] && command -v losetup >/dev/null; then
	if [[ -r $ROOT/bench/lib/loopdev.sh ]]; then
		# shellcheck source=../lib/loopdev.sh
		source "$ROOT/bench/lib/loopdev.sh"
		loopdev_setup "$FILE_SIZE" # traps EXIT/INT/TERM/HUP to tear down
		READ_FILE=$LOOPDEV_FILE
		READ_DEV=$LOOPDEV
	else
		READ_FILE=$(mktemp /dev/shm/rsuring-hotpath.XXXXXX)
		trap 'if [[ -n $READ_DEV ]]; then losetup -d "$READ_DEV"; fi; rm -f -- "$READ_FILE"' EXIT
		trap 'exit 130' INT TERM HUP
		log "filling $READ_FILE ($FILE_SIZE of random data)"
		dd if=/dev/urandom of="$READ_FILE" bs=1M count=$((${FILE_SIZE%M})) status=none
		READ_DEV=$(losetup -f --show --direct-io=on "$READ_FILE")
	fi
else
	READ_FILE=$(mktemp /dev/shm/rsuring-hotpath.XXXXXX)
	trap 'rm -f -- "$READ_FILE"' EXIT
	trap 'exit 130' INT TERM HUP
	dd if=/dev/urandom of="$READ_FILE" bs=1M count=$((${FILE_SIZE%M})) status=none
	note "O_DIRECT rows left out: needs root and losetup"
fi
for mode in buffered direct; do
	((READS)) || break
	if [[ $mode == direct ]]; then
		[[ -n $READ_DEV ]] || continue
		target=$READ_DEV
		where="O_DIRECT, loop dev"
	else
		target=$READ_FILE
		where="buffered, /dev/shm"
	fi
	for qd in 1 32 128; do
		for ring in plain defer; do
			c="read_${mode}_qd${qd}_$ring"
			measure "$c" "liburing rsuring" read "$target" "$qd" "$mode" "$ring" "$DUR"
			label="4k randread $where, QD$qd"
			[[ $ring == defer ]] && label+=", DEFER_TASKRUN"
			row rate "$label (IOPS)" "$c" liburing "$c" rsuring
		done
	done
done

row rate "statistics: rsuring RSURING_STATS=1 vs off, NOP QD128 b32 (baseline: rsuring, stats off)" \
	nop_b32 rsuring nop_b32 rsuring-stats within:0.01
if [[ -n $TIO ]]; then
	row rate "t/io_uring -N1 defaults (QD128, submit 32, complete 32, reg. ring -X1) vs rsuring b32 (baseline: t/io_uring)" \
		nop_b32 tio nop_b32 rsuring ge:0.95
	row rate "t/io_uring -N1 defaults vs liburing b32 (baseline: t/io_uring)" nop_b32 tio nop_b32 liburing
	row rate "t/io_uring -N1 -X1 vs rsuring b32 with registered ring (baseline: t/io_uring)" \
		nop_b32 tio nop_b32 rsuring-reg
	row rate "t/io_uring -N1 -X0 (ring fd not registered) vs rsuring b32 (baseline: t/io_uring -X0)" \
		nop_b32 tio-x0 nop_b32 rsuring
fi
if [[ -n $PEER ]]; then
	row rate "io-uring crate ${PEER_VERSION:-} NOP QD128 b32 vs rsuring b32 (baseline: io-uring crate)" \
		nop_b32 crate nop_b32 rsuring
fi

T_END=$(date +%s)
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

# --------------------------------------------------------------- report ----

{
	echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "kernel=$(uname -r)"
	echo "cpu=$(sed -n 's/^model name\t*: //p' /proc/cpuinfo | head -1) x $(nproc)"
	echo "liburing=$LIBURING_SO"
	echo "rsuring=$RSURING_DESC"
	echo "t_io_uring=${TIO_VERSION:-not run}"
	echo "io_uring_crate=${PEER_VERSION:-not run}"
	echo "reps=$REPS"
	echo "dur=$DUR"
	echo "cpu_pin=$CPU"
	echo "file_size=$FILE_SIZE"
	echo "load_before=$LOAD_BEFORE"
	echo "load_after=$LOAD_AFTER"
	echo "elapsed=$((T_END - T_START))"
} >"$WORK/env.txt"

if ! python3 -c 'import matplotlib' 2>/dev/null; then
	log "installing matplotlib (pip)"
	python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore matplotlib \
		>"$WORK/pip.log" 2>&1 || note "matplotlib could not be installed: no chart"
fi
python3 "$HERE/report.py" --raw "$RAW" --meta "$META" --env "$WORK/env.txt" --notes "$NOTES" \
	--md "$HERE/results.md" --png "$HERE/ratios.png"
