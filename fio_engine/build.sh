#!/bin/sh
# Builds fio 3.33 from Debian's source and the rsuring ioengine against that
# same tree, so the engine's view of fio's structs matches the binary.
#
#   fio_engine/build.sh
#
# Outputs:
#   fio_engine/build/fio                  fio built from target/fio-src/
#   fio_engine/build/rsuring-engine.so    the engine (rpath $ORIGIN/lib:$ORIGIN/..)
#   fio_engine/build/lib/liburing.so.2 -> target/release/librsuring.so
#
# Needs: apt (deb-src for bookworm), gcc, make, cargo. Re-running is cheap:
# every step is skipped when its output is up to date.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
WORK=$ROOT/target/fio-src
FIO_VER=3.33
FIO_SRC=$WORK/fio-$FIO_VER
OUT=$HERE/build
# The headers the engine is written against (override to try another tree).
RSURING_INCLUDE=${RSURING_INCLUDE:-$ROOT/include}
# A small, deterministic feature set: no optional engine libraries.
CONFIGURE_ARGS="--disable-native --disable-numa --disable-rdma --disable-rados
 --disable-rbd --disable-http --disable-gfapi --disable-libnfs --disable-pmem
 --disable-xnvme --disable-libzbc --disable-tcmalloc --disable-dfs"

log() { printf 'build.sh: %s\n' "$*" >&2; }

# 1. The library.
if [ "${RSURING_SKIP_CARGO:-0}" != 1 ]; then
	log "cargo build --release"
	(cd "$ROOT" && cargo build --release --quiet)
fi
LIB=$ROOT/target/release/librsuring.so
[ -f "$LIB" ] || { log "missing $LIB"; exit 1; }

# 2. fio's source, from Debian.
if [ ! -x "$FIO_SRC/configure" ]; then
	SRCLIST=/etc/apt/sources.list.d/debian-src.sources
	if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ &&
	   ! grep -qs '^deb-src' /etc/apt/sources.list; then
		log "adding deb-src entries ($SRCLIST)"
		sed 's/^Types: deb$/Types: deb-src/' \
			/etc/apt/sources.list.d/debian.sources >"$SRCLIST"
		apt-get update -qq
	fi
	command -v dpkg-source >/dev/null ||
		{ apt-get update -qq; apt-get install -y -qq dpkg-dev; }
	mkdir -p "$WORK"
	log "apt-get source fio"
	(cd "$WORK" && apt-get source -qq fio >/dev/null 2>&1) ||
		(cd "$WORK" && apt-get update -qq && apt-get source -qq fio)
	[ -x "$FIO_SRC/configure" ] || {
		log "apt-get source fio did not give fio-$FIO_VER"; exit 1; }
fi

# 3. configure (once per argument set) and build fio.
STAMP=$FIO_SRC/.rsuring-configure
ARGS_NOW=$(echo $CONFIGURE_ARGS)
if [ ! -f "$FIO_SRC/config-host.h" ] || [ ! -f "$STAMP" ] ||
   [ "$(cat "$STAMP")" != "$ARGS_NOW" ]; then
	log "configure $ARGS_NOW"
	(cd "$FIO_SRC" && ./configure $ARGS_NOW >configure.out 2>&1) || {
		tail -20 "$FIO_SRC/configure.out" >&2; exit 1; }
	echo "$ARGS_NOW" >"$STAMP"
fi
JOBS=$(nproc 2>/dev/null || echo 2)
log "make fio (-j$JOBS)"
make -C "$FIO_SRC" -j"$JOBS" --no-print-directory -s fio >"$FIO_SRC/make.out" 2>&1 || {
	tail -30 "$FIO_SRC/make.out" >&2; exit 1; }
mkdir -p "$OUT/lib"
cp -p "$FIO_SRC/fio" "$OUT/fio.tmp" && mv -f "$OUT/fio.tmp" "$OUT/fio"

# 4. liburing.so.2 -> our library, next to the engine.
ln -sfn ../../../target/release/librsuring.so "$OUT/lib/liburing.so.2"

# 5. The engine, with fio's own CFLAGS/CPPFLAGS (config-host.h included),
#    from fio's directory so its relative -include/-I resolve.
FIO_FLAGS=$(make -C "$FIO_SRC" --no-print-directory -s \
	--eval='rsuring-print-flags: ; @echo $(CFLAGS) $(CPPFLAGS)' \
	rsuring-print-flags)
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
for f in $SRCS "$HERE/engine.h" "$0" "$FIO_SRC/config-host.h"; do
	[ "$f" -nt "$SO" ] && stale=1
done
[ -n "$(find "$RSURING_INCLUDE" -newer "$SO" -name '*.h' 2>/dev/null)" ] && stale=1
if [ $stale = 1 ]; then
	log "cc rsuring-engine.so"
	# shellcheck disable=SC2086
	(cd "$FIO_SRC" && ${CC:-gcc} $FIO_FLAGS \
		-Wall -Wextra -Werror $FIO_HDR_WNO \
		-fPIC -shared -fvisibility=hidden \
		-I"$RSURING_INCLUDE" -I"$HERE" -ffile-prefix-map="$HERE/"=fio_engine/ \
		-o "$SO.tmp" $SRCS \
		-L"$OUT/lib" -l:liburing.so.2 \
		-Wl,-rpath,"$ENGINE_RPATH" -Wl,--disable-new-dtags)
	mv -f "$SO.tmp" "$SO"
fi

# 6. The engine must resolve liburing.so.2 to ours, with no LD_LIBRARY_PATH.
RESOLVED=$(env -u LD_LIBRARY_PATH ldd "$SO" | awk '$1 == "liburing.so.2" { print $3 }')
if [ -z "$RESOLVED" ] ||
   [ "$(readlink -f "$RESOLVED")" != "$(readlink -f "$LIB")" ]; then
	log "engine resolves liburing.so.2 to '${RESOLVED:-nothing}', not $LIB"
	exit 1
fi
log "ok: $OUT/fio, $SO (liburing.so.2 => $RESOLVED)"
