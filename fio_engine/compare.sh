#!/bin/bash
# Runs the jobs in fio_engine/jobs/ with fio's built-in io_uring engine and
# with the rsuring engine, in one run of the same fio binary (interleaved
# rounds, median), on a loop device (direct I/O) over a /dev/shm file, and
# prints a Markdown table, also saved to $OUT (default fio_engine/results.md;
# bench/run.sh passes target/bench/fio/results.md). Run as root.
#
#   fio_engine/compare.sh              # 3 rounds, 3 s / 2 s runs (~4 min)
#   ROUNDS=1 RUNTIME=2 fio_engine/compare.sh
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" = 0 ] || { echo "compare.sh: must run as root" >&2; exit 1; }
"$HERE/build.sh"

WORK=$(mktemp -d /dev/shm/rsuring-fio-compare.XXXXXX)
LOOP=
cleanup() {
	[ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Real data (not holes) so that reads copy pages like a real device would.
dd if=/dev/urandom of="$WORK/disk.img" bs=1M count=256 status=none
LOOP=$(losetup -f --show --direct-io=on "$WORK/disk.img")

python3 "$HERE/compare.py" \
	--fio "$HERE/build/fio" \
	--engine-so "$HERE/build/rsuring-engine.so" \
	--jobs "$HERE/jobs" \
	--dev "$LOOP" \
	--rounds "${ROUNDS:-3}" \
	--runtime "${RUNTIME:-3}" \
	--lat-runtime "${LAT_RUNTIME:-2}" \
	--out "${OUT:-$HERE/results.md}"
