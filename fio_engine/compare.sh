#!/bin/bash
# Bench (not a test): the jobs in fio_engine/jobs/ with fio's built-in
# io_uring engine and with the rsuring engine, same fio binary, a fixed
# number of I/Os per run, interleaved rounds (compare.py), on a loop device
# (direct I/O) over a /dev/shm file. Run as root.
#
#   fio_engine/compare.sh                    # -> target/fio-compare/results.md
#   fio_engine/compare.sh --update-results   # also fio_engine/results.md
#   ROUNDS=7 IOS=262144 fio_engine/compare.sh
#   FIO_SRC=/path/to/fio fio_engine/compare.sh   # that fio (build.sh FIO_SRC)
#   ONLY='^qd(1|4|32)/' fio_engine/compare.sh     # a subset (compare.py --only)
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
# require_root, build_fio_engine, loopdev_setup, at_exit, run_child.
# shellcheck source=../scripts/lib-common.sh
. "$ROOT/scripts/lib-common.sh"
require_root
build_fio_engine || exit 1
ENGINE_SO=$FIO_ENGINE_SO
BUILD=$FIO_BUILD_DIR
[ -x "$BUILD/fio" ] || { echo "compare.sh: no fio binary in $BUILD" >&2; exit 1; }
if [ -n "${ONLY:-}" ] && [ "$UPDATE" = 1 ]; then
	echo "compare.sh: --update-results wants every configuration; not with ONLY" >&2
	exit 2
fi
if [ -n "${FIO_SRC:-}" ] && [ "$UPDATE" = 1 ]; then
	echo "compare.sh: --update-results rewrites the default (3.33) figures; not with FIO_SRC" >&2
	exit 2
fi

# The device: loopdev_setup (a /dev/shm file of random data, so reads copy
# real pages, attached with direct I/O; detached on exit or a signal).
mkdir -p "$ROOT/target/fio-compare"
WORK=$(mktemp -d "$ROOT/target/fio-compare/compare.XXXXXX")
at_exit 'rm -rf "$WORK"'
loopdev_setup 256M
LOOP=$LOOPDEV

run_child python3 "$HERE/compare.py" \
	--fio "$BUILD/fio" \
	--engine-so "$ENGINE_SO" \
	--jobs "$HERE/jobs" \
	--dev "$LOOP" \
	--rounds "${ROUNDS:-5}" \
	--ios "${IOS:-131072}" \
	--out "$OUT" ${ONLY:+--only "$ONLY"}
if [ "$UPDATE" = 1 ]; then
	# What follows the marker (figures for other fios, by hand) stays.
	extra=$(sed -n '/^<!-- other fio versions/,$p' "$HERE/results.md")
	cp "$OUT" "$HERE/results.md"
	[ -z "$extra" ] || printf '\n%s\n' "$extra" >>"$HERE/results.md"
	echo "compare.sh: updated $HERE/results.md" >&2
fi
