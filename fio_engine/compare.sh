#!/bin/bash
# Bench (not a test): the jobs in fio_engine/jobs/ with fio's built-in
# io_uring engine and with the rsuring engine, same fio binary, a fixed
# number of I/Os per run, interleaved rounds (compare.py), on a loop device
# (direct I/O) over a /dev/shm file. Run as root.
#
#   fio_engine/compare.sh                    # -> target/fio-compare/results.md
#   fio_engine/compare.sh --update-results   # also fio_engine/results.md
#   ROUNDS=7 IOS=262144 fio_engine/compare.sh
#
# ROUNDS (default 5) and IOS (I/Os per run, default 131072; QD 1 and each
# of the 4 jobs run a quarter) change the length: about 11 minutes with the
# defaults on 2 CPUs that other work keeps busy.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
OUT=${OUT:-$ROOT/target/fio-compare/results.md}
UPDATE=0
for arg in "$@"; do
	case $arg in
	--update-results) UPDATE=1 ;;
	*) echo "compare.sh: unknown argument $arg (only --update-results)" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "compare.sh: must run as root" >&2; exit 1; }
"$HERE/build.sh"

# The device: bench/lib/loopdev.sh (a /dev/shm file of random data, so reads
# copy real pages, attached with direct I/O; detached on exit or a signal).
# shellcheck source=../bench/lib/loopdev.sh
source "$ROOT/bench/lib/loopdev.sh"
mkdir -p "$ROOT/target/fio-compare"
WORK=$(mktemp -d "$ROOT/target/fio-compare/compare.XXXXXX")
loopdev_setup 256M
trap 'loopdev_teardown; rm -rf "$WORK"' EXIT
LOOP=$LOOPDEV

loopdev_exec python3 "$HERE/compare.py" \
	--fio "$HERE/build/fio" \
	--engine-so "$HERE/build/rsuring-engine.so" \
	--jobs "$HERE/jobs" \
	--dev "$LOOP" \
	--rounds "${ROUNDS:-5}" \
	--ios "${IOS:-131072}" \
	--out "$OUT"
if [ "$UPDATE" = 1 ]; then
	cp "$OUT" "$HERE/results.md"
	echo "compare.sh: updated $HERE/results.md" >&2
fi
