#!/usr/bin/env bash
# Builds the rsuring ioengine against one fio source tree, with that tree's
# headers, config-host.h and CFLAGS, so that the engine's view of fio's
# structs is the one of the fio binary built from the same tree.
#
#   fio_engine/build.sh                       # default: fio 3.33 (Debian)
#   FIO_SRC=/path/to/fio fio_engine/build.sh  # any fio 3.33 .. 3.42 tree
#
# Default (no FIO_SRC): fio's Debian source in target/fio-src/fio-3.33,
# which `scripts/setup.sh --fio-source` fetches (this script never touches
# apt); it configures that tree with optional libraries off and builds fio.
# Outputs:
#   fio_engine/build/fio                  fio 3.33 built from that tree
#   fio_engine/build/rsuring-engine.so    the engine (rpath $ORIGIN/lib:$ORIGIN/..)
#   fio_engine/build/lib/liburing.so.2 -> target/release/librsuring.so
#   fio_engine/build/fio-version          the fio the engine is built for
#                                         (`make install` picks the engine by it)
#
# FIO_SRC=DIR: DIR must be a configured fio tree (./configure has run:
# config-host.h exists); it is not reconfigured. The engine goes to
# fio_engine/build/<fio version>/ (BUILD_DIR=DIR to choose), with the same files;
# `fio` there is a link to DIR/fio when that has been built, and fio-src
# names DIR (for `make install`, which brings the engine up to date).
#
# Needs: gcc, make, cargo. Re-running is cheap: every step is skipped when
# its output is up to date.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
# FIO_TREE (the one fio tree, target/fio-src/fio-3.33) and
# configure_fio_source (FIO_CONFIGURE_ARGS, once per argument set).
COMMON_WHO=build.sh
# shellcheck source=../scripts/lib-common.sh
. "$ROOT/scripts/lib-common.sh"
DEFAULT_SRC=$FIO_TREE
# The headers the engine is written against (override to try another tree).
RSURING_INCLUDE=${RSURING_INCLUDE:-$ROOT/include}

log() { printf 'build.sh: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# 1. The library.
if [ "${RSURING_SKIP_CARGO:-0}" != 1 ]; then
	log "cargo build --release"
	(cd "$ROOT" && cargo build --release --quiet)
fi
LIB=$ROOT/target/release/librsuring.so
[ -f "$LIB" ] || die "missing $LIB"

# 2. fio's source tree.
if [ -n "${FIO_SRC:-}" ]; then
	OWN_TREE=0
	FIO_SRC=$(cd "$FIO_SRC" 2>/dev/null && pwd) ||
		die "FIO_SRC: no such directory"
	[ -f "$FIO_SRC/ioengines.h" ] && [ -f "$FIO_SRC/fio.h" ] ||
		die "FIO_SRC=$FIO_SRC is not a fio source tree (no ioengines.h)"
	[ -f "$FIO_SRC/config-host.h" ] ||
		die "FIO_SRC=$FIO_SRC is not configured: run ./configure there first"
else
	OWN_TREE=1
	FIO_SRC=$DEFAULT_SRC
	[ -x "$FIO_SRC/configure" ] || die "no fio source in $FIO_SRC.
  Fetch Debian's (fio 3.33, apt-get source; adds a deb-src entry as root):
      scripts/setup.sh --fio-source
  or build against a fio tree of your own (3.33 .. 3.42, configured):
      FIO_SRC=/path/to/fio $0"
fi

# 3. Our own tree: configure (once per argument set) and build fio.
if [ $OWN_TREE = 1 ]; then
	configure_fio_source || exit 1
	JOBS=$(nproc 2>/dev/null || echo 2)
	log "make fio (-j$JOBS)"
	make -C "$FIO_SRC" -j"$JOBS" --no-print-directory -s fio >"$FIO_SRC/make.out" 2>&1 || {
		tail -30 "$FIO_SRC/make.out" >&2; exit 1; }
fi

# 4. What fio's Makefile compiles with (FIO_VERSION, config-host.h, ...).
fio_make() {
	make -C "$FIO_SRC" --no-print-directory -s --eval="rsuring-print: ; @echo $1" rsuring-print
}
FIO_FLAGS=$(fio_make '$(CFLAGS) $(CPPFLAGS)')
FIO_VERSION=$(fio_make '$(FIO_VERSION)')
case $FIO_VERSION in
fio-[0-9]*) ;;
*) die "FIO_SRC=$FIO_SRC: cannot tell its fio version (got '$FIO_VERSION')" ;;
esac
IOOPS=$(sed -n 's/^#define FIO_IOOPS_VERSION[[:space:]]*\([0-9]*\).*/\1/p' "$FIO_SRC/ioengines.h")
# 31 is fio 3.33; 39 is fio 3.41 and 3.42, the newest the engine knows.
[ -n "$IOOPS" ] && [ "$IOOPS" -ge 31 ] ||
	die "$FIO_VERSION (FIO_IOOPS_VERSION ${IOOPS:-?}) is older than fio 3.33, the oldest this engine supports"

if [ $OWN_TREE = 1 ]; then
	OUT=${BUILD_DIR:-$HERE/build}
else
	OUT=${BUILD_DIR:-$HERE/build/$FIO_VERSION}
fi
mkdir -p "$OUT/lib"
if [ $OWN_TREE = 1 ]; then
	cp -p "$FIO_SRC/fio" "$OUT/fio.tmp" && mv -f "$OUT/fio.tmp" "$OUT/fio"
elif [ -x "$FIO_SRC/fio" ]; then
	ln -sfn "$FIO_SRC/fio" "$OUT/fio"
fi

# 5. liburing.so.2 -> our library, next to the engine (a relative link).
ln -sfn "$(realpath --relative-to="$OUT/lib" "$LIB")" "$OUT/lib/liburing.so.2"

# 6. The engine, with fio's own CFLAGS/CPPFLAGS (config-host.h included),
#    from fio's directory so its relative -include/-I resolve.
# The one -Wextra warning fio's headers force: unused parameters of inline
# helpers in arch/arch-x86-common.h and os/os-linux.h.
FIO_HDR_WNO="-Wno-unused-parameter"
SRCS="$HERE/rsuring_engine.c $HERE/engine_setup.c $HERE/engine_options.c"
SO=$OUT/rsuring-engine.so
# Where the engine finds liburing.so.2 (DT_RPATH, which LD_LIBRARY_PATH
# cannot override): $ORIGIN/lib in this build tree, $ORIGIN/.. when it is
# installed as $libdir/fio/rsuring-engine.so next to $libdir/liburing.so.2.
ENGINE_RPATH='$ORIGIN/lib:$ORIGIN/..'
stale=0
[ -f "$SO" ] || stale=1
[ "$(cat "$OUT/fio-version" 2>/dev/null)" = "$FIO_VERSION" ] || stale=1
for f in $SRCS "$HERE/engine.h" "$0" "$FIO_SRC/config-host.h" "$FIO_SRC/fio.h" \
	 "$FIO_SRC/ioengines.h"; do
	[ "$f" -nt "$SO" ] && stale=1
done
[ -n "$(find "$RSURING_INCLUDE" -newer "$SO" -name '*.h' 2>/dev/null)" ] && stale=1
if [ $stale = 1 ]; then
	log "cc rsuring-engine.so for $FIO_VERSION (FIO_IOOPS_VERSION $IOOPS)"
	# shellcheck disable=SC2086
	(cd "$FIO_SRC" && ${CC:-gcc} $FIO_FLAGS \
		-Wall -Wextra -Werror $FIO_HDR_WNO ${RSE_EXTRA_CFLAGS:-} \
		-fPIC -shared -fvisibility=hidden \
		-I"$RSURING_INCLUDE" -I"$HERE" -ffile-prefix-map="$HERE/"=fio_engine/ \
		-o "$SO.tmp" $SRCS \
		-L"$OUT/lib" -l:liburing.so.2 \
		-Wl,-rpath,"$ENGINE_RPATH" -Wl,--disable-new-dtags)
	mv -f "$SO.tmp" "$SO"
	echo "$FIO_VERSION" >"$OUT/fio-version"
fi
if [ $OWN_TREE = 0 ]; then
	echo "$FIO_SRC" >"$OUT/fio-src"
else
	rm -f "$OUT/fio-src"
fi

# 7. The engine must resolve liburing.so.2 to ours, with no LD_LIBRARY_PATH.
RESOLVED=$(env -u LD_LIBRARY_PATH ldd "$SO" | awk '$1 == "liburing.so.2" { print $3 }')
if [ -z "$RESOLVED" ] ||
   [ "$(readlink -f "$RESOLVED")" != "$(readlink -f "$LIB")" ]; then
	die "engine resolves liburing.so.2 to '${RESOLVED:-nothing}', not $LIB"
fi
log "ok: $SO for $FIO_VERSION (liburing.so.2 => $RESOLVED)"
