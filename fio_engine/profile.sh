#!/bin/bash
# Bench (not a test): user-space instructions per I/O of the whole fio
# process with fio's io_uring engine and with the rsuring engine, counted by
# callgrind, and io_uring_enter calls per I/O. Unlike times, these counts
# hardly move with other load on the machine, so differences of a few
# percent show. Kernel work is not counted (callgrind sees user space only):
# the enter count stands in for it. Under valgrind fio runs ~50 times
# slower, so more completions are ready when fio looks; the counts describe
# each engine's code, not its timing. Run as root.
#
#   fio_engine/profile.sh            # -> target/fio-compare/profile.md
#   DEPTHS="1 4" IOS=8192 fio_engine/profile.sh
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
OUT=$ROOT/target/fio-compare/profile.md
DEPTHS=${DEPTHS:-1 4 32}
IOS=${IOS:-16384}
SMALL_IOS=1024
# require_root, build_fio_engine, loopdev_setup, at_exit.
# shellcheck source=../scripts/lib-common.sh
. "$ROOT/scripts/lib-common.sh"
require_root
command -v valgrind >/dev/null || { echo "profile.sh: needs valgrind" >&2; exit 1; }
build_fio_engine || exit 1

# The device: loopdev_setup (a /dev/shm file of random data, so reads copy
# real pages, attached with direct I/O; detached on exit or a signal).
mkdir -p "$ROOT/target/fio-compare"
WORK=$(mktemp -d "$ROOT/target/fio-compare/profile.XXXXXX")
at_exit 'rm -rf "$WORK"'
loopdev_setup 64M
LOOP=$LOOPDEV

RS=external:$FIO_ENGINE_SO
SIDES=("fio io_uring|io_uring|" "rsuring|$RS|" "rsuring submit_and_wait=1|$RS|--submit_and_wait=1")

# instructions ENGINE QD IOS [opt]: user-space instructions of one fio run.
instructions() {
	local eng=$1 qd=$2 ios=$3 opt=${4:-}
	# shellcheck disable=SC2086
	valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.out" \
		"$FIO_BUILD_DIR/fio" --name=p --ioengine="$eng" --filename="$LOOP" \
		--direct=1 --rw=randread --bs=4k --norandommap --thread=1 \
		--iodepth="$qd" --io_size=$((ios * 4096)) $opt \
		--output-format=terse >"$WORK/log.txt" 2>&1 ||
		{ cat "$WORK/log.txt" >&2; exit 1; }
	sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$WORK/cg.out"
}

# enters ENGINE QD IOS [opt]: io_uring_enter calls of one fio run, or "".
enters() {
	local eng=$1 qd=$2 ios=$3 opt=${4:-}
	# shellcheck disable=SC2086
	perf stat -x, -e syscalls:sys_enter_io_uring_enter -o "$WORK/perf.txt" -- \
		"$FIO_BUILD_DIR/fio" --name=p --ioengine="$eng" --filename="$LOOP" \
		--direct=1 --rw=randread --bs=4k --norandommap --iodepth="$qd" \
		--io_size=$((ios * 4096)) $opt --output-format=terse \
		>/dev/null 2>&1 || return 0
	awk -F, '/io_uring_enter/ { print $1 }' "$WORK/perf.txt"
}

{
	echo "# User-space instructions per I/O (callgrind) and io_uring_enter calls per I/O"
	echo
	echo "- $(date '+%Y-%m-%d %H:%M'), Linux $(uname -r); fio-3.33 built by build.sh;"
	echo "  4k random reads, O_DIRECT, loop device over /dev/shm, \`thread=1\`"
	echo "- instructions: whole fio process, run of $IOS I/Os less a run of $SMALL_IOS"
	echo "  (start-up and exit), divided by the difference; enters: perf, $IOS I/Os"
	echo
	echo "| QD | engine | instructions/IO | vs fio's engine | enters/IO |"
	echo "| ---: | --- | ---: | ---: | ---: |"
} >"$WORK/profile.md"
for qd in $DEPTHS; do
	base=
	for side in "${SIDES[@]}"; do
		IFS='|' read -r label eng opt <<<"$side"
		big=$(instructions "$eng" "$qd" "$IOS" "$opt")
		small=$(instructions "$eng" "$qd" "$SMALL_IOS" "$opt")
		per=$(( (big - small) / (IOS - SMALL_IOS) ))
		[ -n "$base" ] || base=$per
		e=$(enters "$eng" "$qd" "$IOS" "$opt")
		if [ -n "$e" ]; then e=$(awk -v e="$e" -v n="$IOS" 'BEGIN { printf "%.2f", e / n }')
		else e=n/a; fi
		ratio=$(awk -v a="$per" -v b="$base" 'BEGIN { printf "%.3f", a / b }')
		echo "| $qd | $label | $per | $ratio | $e |" | tee -a "$WORK/profile.md" >&2
	done
done
mkdir -p "$(dirname "$OUT")"
cp "$WORK/profile.md" "$OUT"
cat "$OUT"
echo "profile.sh: wrote $OUT" >&2
