#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Hot-path benchmarks: rsuring vs Debian's liburing 2.3 vs upstream liburing
# (when built), same C binary, same run, fixed work, CPU time. Usually run
# through bench/run.sh; on its own:
#
#   bench/hotpath.sh [--rounds N] [--scale F] [--only "PATTERNS"]
#                    [--upstream DIR] [--cpu N] [--no-callgrind]
#
#   --rounds N      rounds per block (default 9; read blocks get 60 %)
#   --scale F       fraction of each block's fixed work (default 1)
#   --only P        only the blocks whose names match one of the shell
#                   patterns (see hotpath_cases.py: nop_qd1 nop_b1 nop_b8
#                   nop_b32 reap_one reap_batch read_*; "batch" for
#                   hotpath_batch.py, which needs --upstream)
#   --upstream DIR  a liburing checkout (2.15 or later) to build into
#                   target/bench/build/ and measure as the second reference;
#                   without it that column is reported as absent
#   --cpu N         the CPU every benchmark process is pinned to (default 0)
#   --no-callgrind  leave out the instruction counts
#                   (hotpath_callgrind.py)
#
# Needs gcc, Debian's liburing-dev, cargo, python3 (standard library only),
# taskset, stdbuf; valgrind and strace for the instruction counts; root for
# the O_DIRECT blocks (loop device) and for fetching fio's source
# (apt-get source fio) for t/io_uring. Writes everything under
# target/bench/hotpath/: results.md, ratios.svg, raw.jsonl, the builds.

set -euo pipefail

# BENCH: bench/, where this script and its Python helpers (hotpath_*.py)
# live; HERE: bench/hotpath/, its C sources and committed results.
BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
HERE=$BENCH/hotpath
ROOT=$(cd "$BENCH/.." && pwd)
WORK=$ROOT/target/bench/hotpath
BUILD=$ROOT/target/bench/build

ROUNDS=9 SCALE=1 ONLY= UPSTREAM= CPU=0 CALLGRIND=1
while [[ $# -gt 0 ]]; do
	case $1 in
	--rounds) ROUNDS=$2; shift 2 ;;
	--scale) SCALE=$2; shift 2 ;;
	--only) ONLY=$2; shift 2 ;;
	--upstream) UPSTREAM=$2; shift 2 ;;
	--cpu) CPU=$2; shift 2 ;;
	--no-callgrind) CALLGRIND=0; shift ;;
	-h | --help) sed -n '3,28s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "hotpath: unknown option $1" >&2; exit 2 ;;
	esac
done

for v in $(env | sed -n 's/^\(RSURING_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done

# FIO_TREE, ensure_deb_src, fetch_fio_source, configure_fio_source,
# loopdev_setup, at_exit.
COMMON_WHO=hotpath
# shellcheck source=../scripts/lib-common.sh
. "$ROOT/scripts/lib-common.sh"

log() { printf 'hotpath: %s\n' "$*" >&2; }
fail() { log "error: $*"; exit 1; }

mkdir -p "$WORK" "$BUILD"
NOTES=$WORK/notes.txt
: >"$NOTES"
note() { printf '%s\n' "$*" >>"$NOTES"; log "$*"; }

# ---------------------------------------------------------------- build ----

[[ -r /usr/include/liburing.h ]] || fail "liburing's header is missing (apt-get install liburing-dev)"
DEB_LIB=$(readlink -f "/usr/lib/$(gcc -print-multiarch)/liburing.so.2") ||
	fail "Debian's liburing.so.2 is missing"
[[ -e $DEB_LIB ]] || fail "Debian's liburing.so.2 is missing"

log "building rsuring (cargo build --release)"
(cd "$ROOT" && cargo build --release --quiet)
# A snapshot of the library just built, so that another cargo build during
# the run cannot swap it between runs; liburing.so.2 is its SONAME.
RS_DIR=$WORK/libs/rsuring
mkdir -p "$RS_DIR"
cp -f "$ROOT/target/release/librsuring.so" "$RS_DIR/librsuring.so.tmp"
mv -f "$RS_DIR/librsuring.so.tmp" "$RS_DIR/librsuring.so"
ln -sfn librsuring.so "$RS_DIR/liburing.so.2"
RS_DESC="$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo '?')"

# Upstream liburing, built with its own defaults from a checkout the caller
# names (never committed; CI has none).
UP_DIR= UP_DESC="not built (pass --upstream DIR)"
if [[ -n $UPSTREAM ]]; then
	[[ -f $UPSTREAM/liburing.spec && -d $UPSTREAM/src ]] || fail "$UPSTREAM is not a liburing checkout"
	src=$BUILD/liburing-upstream
	log "building upstream liburing from $UPSTREAM into $src"
	rm -rf "$src"
	mkdir -p "$src"
	(cd "$UPSTREAM" && tar --exclude=.git -cf - .) | (cd "$src" && tar -xf -)
	if (cd "$src" && ./configure && make -j"$(nproc)" -C src) >"$BUILD/liburing-upstream.log" 2>&1; then
		version=$(awk '/^Version:/ { print $2 }' "$src/liburing.spec")
		UP_DIR=$WORK/libs/upstream
		mkdir -p "$UP_DIR"
		cp -f "$src/src/liburing.so.$version" "$UP_DIR/liburing.so.$version"
		ln -sfn "liburing.so.$version" "$UP_DIR/liburing.so.2"
		commit=$(git -C "$UPSTREAM" rev-parse --short HEAD 2>/dev/null || echo "no git")
		UP_DESC="(upstream commit $commit, built with its default flags)"
	else
		note "upstream liburing: build failed (see $BUILD/liburing-upstream.log)"
	fi
fi

CFLAGS="-O2 -Wall -Wextra -Werror -pthread"
log "compiling interleave.c, reads.c and batch.c against /usr/include/liburing.h"
# interleave.c links no liburing at all: it loads each library with
# dlmopen(). reads.c links Debian's, and runs with LD_LIBRARY_PATH choosing.
# shellcheck disable=SC2086
gcc $CFLAGS -o "$WORK/interleave" "$HERE/interleave.c" -ldl
# shellcheck disable=SC2086
gcc $CFLAGS -o "$WORK/reads" "$HERE/reads.c" -luring -ldl
# shellcheck disable=SC2086
gcc $CFLAGS -o "$WORK/batch" "$HERE/batch.c" -ldl

# fio's t/io_uring, from Debian's fio source package: the one fio tree
# (FIO_TREE, scripts/lib-common.sh), configured as fio_engine/build.sh does.
TIO= TIO_DESC="not built"
build_tio() {
	if [[ ! -x $FIO_TREE/configure ]]; then
		[[ $(id -u) == 0 ]] || { note "t/io_uring: not root, cannot fetch fio's source"; return 1; }
		{ ensure_deb_src && fetch_fio_source; } >>"$BUILD/apt.log" 2>&1 ||
			{ note "t/io_uring: cannot fetch fio's source (see $BUILD/apt.log)"; return 1; }
	fi
	if [[ ! -x $FIO_TREE/t/io_uring ]]; then
		log "building $(basename "$FIO_TREE")/t/io_uring"
		{ configure_fio_source && make -C "$FIO_TREE" -j"$(nproc)" t/io_uring; } >"$BUILD/fio-build.log" 2>&1 ||
			{ note "t/io_uring: build failed (see $BUILD/fio-build.log)"; return 1; }
	fi
	TIO=$FIO_TREE/t/io_uring
	TIO_DESC="$(basename "$FIO_TREE") (Debian source)"
}
build_tio || true

CRATE= CRATE_DESC="not built"
log "building the io-uring crate peer"
if cargo build --release --quiet --manifest-path "$HERE/rust-peer/Cargo.toml" \
	--target-dir "$BUILD/rust-peer" 2>"$BUILD/rust-peer.log"; then
	CRATE=$BUILD/rust-peer/release/rsuring-hotpath-rust-peer
	CRATE_DESC=$(sed -n '/^name = "io-uring"/{n;s/^version = "\(.*\)"/\1/p}' "$HERE/rust-peer/Cargo.lock")
else
	note "io-uring crate peer: build failed (see $BUILD/rust-peer.log)"
fi

# ---------------------------------------------------------------- files ----

READ_FILE= READ_DEV=
if [[ -z $ONLY || $ONLY == *read* || $ONLY == *batch* ]]; then
	if [[ $(id -u) == 0 ]] && command -v losetup >/dev/null; then
		loopdev_setup 512M # torn down at exit (at_exit)
		READ_FILE=$LOOPDEV_FILE
		READ_DEV=$LOOPDEV
	else
		READ_FILE=$(mktemp /dev/shm/rsuring-hotpath.XXXXXX)
		at_exit 'rm -f -- "$READ_FILE"'
		dd if=/dev/urandom of="$READ_FILE" bs=1M count=512 status=none
		note "O_DIRECT blocks left out: they need root and losetup"
	fi
fi

# ------------------------------------------------------------- measuring ----

RAW=$WORK/raw.jsonl
: >"$RAW"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
T_START=$(date +%s)
python3 "$BENCH/hotpath_measure.py" --raw "$RAW" --rounds "$ROUNDS" --scale "$SCALE" --only "$ONLY" \
	--cpu "$CPU" --reads "$WORK/reads" --interleave "$WORK/interleave" --deb-lib "$DEB_LIB" \
	--up-dir "$UP_DIR" --rs-dir "$RS_DIR" --tio "$TIO" --crate "$CRATE" \
	--file "$READ_FILE" --dev "$READ_DEV"
# Batched reaping (rsuring_wait_batch_cqe against liburing 2.15's loops):
# hotpath_batch.py compares with 2.15, so only with --upstream.
BATCH_MD=$WORK/batch.md
rm -f "$BATCH_MD"
if [[ -z $ONLY || $ONLY == *batch* ]]; then
	if [[ -n $UP_DIR ]]; then
		log "batched reaping (hotpath_batch.py)"
		python3 "$BENCH/hotpath_batch.py" --batch "$WORK/batch" --up "$UP_DIR/liburing.so.2" \
			--rs "$RS_DIR/liburing.so.2" --file "$READ_FILE" --rounds "$ROUNDS" \
			--scale "$SCALE" --cpu "$CPU" >"$BATCH_MD"
	else
		note "batched reaping left out: it compares with liburing 2.15 (pass --upstream DIR)"
	fi
fi
T_END=$(date +%s)
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

PROFILE_MD=$WORK/callgrind.md
rm -f "$PROFILE_MD"
if ((CALLGRIND)); then
	if command -v valgrind >/dev/null && command -v strace >/dev/null; then
		python3 "$BENCH/hotpath_callgrind.py" --interleave "$WORK/interleave" --deb-lib "$DEB_LIB" \
			--up-dir "$UP_DIR" --rs-dir "$RS_DIR" --tio "$TIO" \
			--batch "$WORK/batch" --file "$READ_FILE" \
			--dir "$WORK/callgrind" --md "$PROFILE_MD" --tsv "$WORK/callgrind.tsv" >/dev/null
	else
		note "instruction counts left out: they need valgrind and strace"
	fi
fi

{
	echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "kernel=$(uname -r)"
	echo "cpu=$(sed -n 's/^model name\t*: //p' /proc/cpuinfo | head -1) x $(nproc)"
	echo "deb=$DEB_LIB"
	echo "rsuring=$RS_DESC"
	echo "upstream=$UP_DESC"
	echo "tio=$TIO_DESC"
	echo "crate=$CRATE_DESC"
	echo "rounds=$ROUNDS"
	echo "scale=$SCALE"
	echo "cpu_pin=$CPU"
	echo "load_before=$LOAD_BEFORE"
	echo "load_after=$LOAD_AFTER"
	echo "elapsed=$((T_END - T_START))"
} >"$WORK/env.txt"

python3 "$BENCH/hotpath_report.py" --raw "$RAW" --env "$WORK/env.txt" --notes "$NOTES" \
	--profile-md "$PROFILE_MD" --md "$WORK/results.md" --svg "$WORK/ratios.svg" >/dev/null
if [[ -s $BATCH_MD ]]; then
	{
		printf '\n## Batched reaping (hotpath_batch.py)\n\n'
		printf 'rsuring_wait_batch_cqe (then one io_uring_cq_advance) against the cheapest liburing 2.15 loop of each round; < 1 = rsuring cheaper. See bench/hotpath_batch.py.\n\n'
		cat "$BATCH_MD"
	} >>"$WORK/results.md"
fi
log "wrote $WORK/results.md and $WORK/ratios.svg"
