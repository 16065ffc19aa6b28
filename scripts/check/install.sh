#!/usr/bin/env bash
# The install check: `make install DESTDIR=<scratch> prefix=/usr`, then,
# against that tree only (pkg-config restricted to it, no rpath):
#   - the layout: liburing.so.2 / liburing.so / liburing-ffi.so{,.2} links to
#     a stripped librsuring.so.<version> built from the current build,
#     liburing{,-ffi}.a, the .pc files, headers, manual pages, scripts;
#   - tests/install/uring_cp.c (a liburing program) built with pkg-config
#     dynamically runs on the tree's library with LD_LIBRARY_PATH (the path
#     in its /proc/self/maps), and not without it;
#   - the same built with -static and `pkg-config --static` links the tree's
#     liburing.a (linker trace) and runs rsuring's code (RSURING_STATS line);
#   - tests/install/ext_check.c (every extension) links and runs, dynamic
#     and static, with the header's version equal to rsuring.pc's;
#   - man finds every page of man/ in the tree; the fio engine is there
#     when it has been built;
#   - `make uninstall` leaves no file behind.
# Then the rpath method of README.md and docs/install.md: an install into a private prefix, a
# program linked with -Wl,-rpath, and rsuring-run, each on rsuring with no
# environment; and a relative prefix refused. Then the safe-install rules:
# `make install` builds nothing (a missing build: "run make first"), and
# refuses a prefix whose files dpkg owns (Debian's liburing at prefix=/usr)
# unless FORCE=1 (checked with INSTALL=false, so nothing is ever written
# there). KEEP=1 keeps the scratch directory for a look afterwards.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

. scripts/lib/skip.sh
fail() { echo "FAIL: $*" >&2; exit 1; }
need_tool make make
need_tool cc gcc
need_tool pkg-config pkg-config
need_tool readelf binutils
need_tool man man-db
unset RSURING_SQPOLL RSURING_SQPOLL_PERCPU RSURING_SQPOLL_CPUS RSURING_SQPOLL_IDLE_MS RSURING_STATS
unset LD_LIBRARY_PATH LD_PRELOAD
CFLAGS="-Wall -Wextra -Werror -O2"
version=$(make -s print-version)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || cc -print-multiarch 2>/dev/null || true)
libdir=/usr/lib${multiarch:+/$multiarch}
dest=$work/root
lib=$dest$libdir
real=librsuring.so.$version

# library PROGRAM-OUTPUT: the library path a uring_cp run printed.
library() { sed -n 's/^library: //p' "$1"; }
same_file() { [ "$(readlink -f "$1")" = "$(readlink -f "$2")" ]; }

# ---- install ---------------------------------------------------------------
# make builds (as the caller), make install only installs.
make -s >"$work/make.log" 2>&1 || { cat "$work/make.log" >&2; fail "make"; }
make -s install DESTDIR="$dest" prefix=/usr >"$work/install.log" 2>&1 ||
	{ cat "$work/install.log" >&2; fail "make install DESTDIR=... prefix=/usr"; }

[ -f "$lib/$real" ] || fail "no $libdir/$real"
for link in liburing.so.2 liburing.so liburing-ffi.so.2 liburing-ffi.so; do
	[ -L "$lib/$link" ] && same_file "$lib/$link" "$lib/$real" || fail "$libdir/$link does not lead to $real"
done
for link in liburing.a liburing-ffi.a; do
	same_file "$lib/$link" "$lib/librsuring.a" || fail "$libdir/$link does not lead to librsuring.a"
done
readelf -d "$lib/$real" | grep -q 'SONAME.*\[liburing\.so\.2\]' || fail "$real: SONAME is not liburing.so.2"
! readelf -S "$lib/$real" | grep -qE '\.(symtab|debug_info)\b' || fail "$real is not stripped"
build_id() { readelf -n "$1" | sed -n 's/.*Build ID: //p'; }
[ "$(build_id "$lib/$real")" = "$(build_id target/release/librsuring.so)" ] ||
	fail "$real is not the current build (build IDs differ)"
for f in liburing.pc liburing-ffi.pc rsuring.pc; do
	[ -f "$lib/pkgconfig/$f" ] || fail "no $libdir/pkgconfig/$f"
done
for f in liburing.h rsuring.h liburing/io_uring.h liburing/io_uring_version.h; do
	[ -f "$dest/usr/include/$f" ] || fail "no /usr/include/$f"
done
[ -x "$dest/usr/bin/rsuring-run" ] && [ -x "$dest/usr/sbin/rsuring-ldconfig" ] && [ -x "$dest/usr/bin/rsuring-stat" ] || fail "scripts or rsuring-stat not installed"
echo "  installed: $libdir/$real ($(stat -c %s "$lib/$real") bytes stripped," \
	"$(stat -c %s target/release/librsuring.so) in target/), librsuring.a $(stat -c %s "$lib/librsuring.a") bytes"

# pkg-config sees the tree's .pc files only; the sysroot prefixes their paths.
export PKG_CONFIG_LIBDIR=$lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest
unset PKG_CONFIG_PATH
[ "$(pkg-config --modversion rsuring)" = "$version" ] || fail "rsuring.pc version is not $version"
pkg-config --libs liburing | grep -q -- "-L$lib " || fail "pkg-config --libs liburing: no -L$lib"

# ---- a liburing program, dynamic --------------------------------------------
head -c 3145728 /dev/urandom >"$work/src"
head -c 12345 /dev/urandom >>"$work/src"
# shellcheck disable=SC2046
cc $CFLAGS -o "$work/cp-dyn" tests/install/uring_cp.c $(pkg-config --cflags --libs liburing)
! readelf -d "$work/cp-dyn" | grep -qE 'R(UN)?PATH' || fail "cp-dyn has an rpath"
RSURING_STATS=1 LD_LIBRARY_PATH=$lib "$work/cp-dyn" "$work/src" "$work/dst" >"$work/dyn.out" 2>"$work/dyn.err" ||
	fail "cp-dyn with LD_LIBRARY_PATH: $(cat "$work/dyn.err")"
cmp -s "$work/src" "$work/dst" || fail "cp-dyn: copy differs"
same_file "$(library "$work/dyn.out")" "$lib/$real" ||
	fail "cp-dyn ran on '$(library "$work/dyn.out")', not $lib/$real"
grep -q '^rsuring: pid=' "$work/dyn.err" || fail "cp-dyn: no RSURING_STATS line"
echo "  dynamic (pkg-config liburing, LD_LIBRARY_PATH): copy ok, /proc/self/maps: $(library "$work/dyn.out" | sed "s|$dest||")"
# Without a search path the tree is not found: the run gets whatever the
# system has (Debian's liburing2, or nothing), never the tree's.
if "$work/cp-dyn" "$work/src" "$work/dst2" >"$work/sys.out" 2>"$work/sys.err"; then
	sys=$(library "$work/sys.out")
	! same_file "$sys" "$lib/$real" || fail "cp-dyn found the tree without LD_LIBRARY_PATH"
	echo "  the same binary without LD_LIBRARY_PATH ran on $sys (the system's)"
else
	echo "  the same binary without LD_LIBRARY_PATH: $(head -n1 "$work/sys.err")"
fi

# ---- a liburing program, -static ----------------------------------------------
# shellcheck disable=SC2046
cc $CFLAGS -static -o "$work/cp-static" tests/install/uring_cp.c \
	$(pkg-config --static --cflags --libs liburing) -Wl,--trace >"$work/static.link" 2>&1 ||
	{ cat "$work/static.link" >&2; fail "cp-static did not link"; }
# --trace names each archive the link used, one per line.
grep -qx "$lib/liburing\.a" "$work/static.link" || fail "cp-static: the tree's liburing.a was not linked"
! grep -x '.*liburing\.a' "$work/static.link" | grep -vqx "$lib/liburing\.a" || fail "cp-static: another liburing.a was linked"
! readelf -l "$work/cp-static" | grep -q INTERP || fail "cp-static is not static"
RSURING_STATS=1 "$work/cp-static" "$work/src" "$work/dst3" >"$work/static.out" 2>"$work/static.err" ||
	fail "cp-static: $(cat "$work/static.err")"
cmp -s "$work/src" "$work/dst3" || fail "cp-static: copy differs"
[ -z "$(library "$work/static.out")" ] || fail "cp-static mapped $(library "$work/static.out")"
grep -q '^rsuring: pid=' "$work/static.err" || fail "cp-static: no RSURING_STATS line (not rsuring's code?)"
echo "  static (pkg-config --static liburing): links the tree's liburing.a, copy ok, rsuring's statistics line printed"

# ---- the extensions ---------------------------------------------------------
# shellcheck disable=SC2046
cc $CFLAGS -DEXPECT_VERSION="\"$(pkg-config --modversion rsuring)\"" -o "$work/ext-dyn" \
	tests/install/ext_check.c $(pkg-config --cflags --libs rsuring)
LD_LIBRARY_PATH=$lib "$work/ext-dyn" >/dev/null || fail "ext-dyn"
# shellcheck disable=SC2046
cc $CFLAGS -static -DEXPECT_VERSION="\"$(pkg-config --modversion rsuring)\"" -o "$work/ext-static" \
	tests/install/ext_check.c $(pkg-config --static --cflags --libs rsuring) >"$work/ext.link" 2>&1 ||
	{ cat "$work/ext.link" >&2; fail "ext-static did not link"; }
"$work/ext-static" >/dev/null || fail "ext-static"
echo "  extensions (pkg-config rsuring): dynamic and static ok"

# ---- manual pages, fio engine --------------------------------------------------
for page in man/man*/*.[0-9]; do
	name=$(basename "$page")
	found=$(man -M "$dest/usr/share/man" -w "${name##*.}" "${name%.*}" 2>/dev/null || true)
	same_file "$found" "$dest/usr/share/man/$(basename "$(dirname "$page")")/$name" ||
		fail "man does not find $name in the tree ('$found')"
done
echo "  man finds the $(ls man/man*/*.[0-9] | wc -l) pages in the tree"
if grep -q 'fio engine not built' "$work/install.log"; then
	echo "  fio engine: not built, not installed"
else
	engine=$lib/fio/rsuring-engine.so
	[ -f "$engine" ] || fail "fio engine built but not installed"
	readelf -d "$engine" | grep -q 'R.*PATH.*\$ORIGIN/\.\.' ||
		fail "the fio engine's RUNPATH lacks \$ORIGIN/.. (it would load another liburing.so.2)"
	resolved=$(ldd "$engine" | awk '$1 == "liburing.so.2" { print $3 }')
	same_file "$resolved" "$lib/$real" || fail "installed engine resolves liburing.so.2 to '$resolved'"
	echo "  fio engine: installed, resolves liburing.so.2 to the tree's"
fi

# ---- uninstall -------------------------------------------------------------------
make -s uninstall DESTDIR="$dest" prefix=/usr
left=$(find "$dest" ! -type d)
[ -z "$left" ] || fail "make uninstall left: $left"
[ ! -e "$dest/usr/include/liburing" ] || fail "make uninstall left /usr/include/liburing"
echo "  make uninstall: no file left"
unset PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR

# ---- a private prefix, rpath, rsuring-run -------------------------------------------
opt=$work/opt
make -s install prefix="$opt" >/dev/null 2>&1 || fail "make install prefix=$opt"
export PKG_CONFIG_PATH=$opt/lib/pkgconfig
# shellcheck disable=SC2046
cc $CFLAGS -o "$work/cp-rpath" tests/install/uring_cp.c $(pkg-config --cflags --libs liburing) \
	-Wl,-rpath,"$(pkg-config --variable=libdir liburing)"
"$work/cp-rpath" "$work/src" "$work/dst4" >"$work/rpath.out" || fail "cp-rpath"
same_file "$(library "$work/rpath.out")" "$opt/lib/$real" || fail "cp-rpath ran on '$(library "$work/rpath.out")'"
"$opt/bin/rsuring-run" "$work/cp-dyn" "$work/src" "$work/dst5" >"$work/run.out" || fail "rsuring-run cp-dyn"
same_file "$(library "$work/run.out")" "$opt/lib/$real" || fail "rsuring-run: ran on '$(library "$work/run.out")'"
make -s uninstall prefix="$opt"
left=$(find "$opt" ! -type d)
[ -z "$left" ] || fail "make uninstall prefix=$opt left: $left"
echo "  prefix=$opt: -Wl,-rpath build and rsuring-run both on rsuring; uninstall clean"

if make -s install prefix=relative/dir DESTDIR="$work/rel" >/dev/null 2>&1 || [ -e "$work/rel" ]; then
	fail "make install accepted a relative prefix"
fi
echo "  relative prefix refused"

# ---- safe installs --------------------------------------------------------------------------
if make -s install DESTDIR="$work/unbuilt" TARGET_DIR="$work/no-build" >"$work/unbuilt.log" 2>&1 ||
	[ -e "$work/unbuilt" ]; then
	fail "make install without a build did not stop"
fi
grep -q "run make first" "$work/unbuilt.log" || fail "make install without a build: $(cat "$work/unbuilt.log")"
echo "  make install without a build: stops, \"run make first\", builds nothing"
need_tool dpkg-query dpkg
# Debian's liburing2 is installed (scripts/setup.sh), so prefix=/usr has files dpkg owns.
dpkg-query -S "$libdir/liburing.so.2" >/dev/null 2>&1 ||
	skip "no dpkg package owns $libdir/liburing.so.2 (liburing2; scripts/setup.sh installs it)"
if make install prefix=/usr INSTALL=false STRIP=false >"$work/dpkg.log" 2>&1; then
	fail "make install prefix=/usr went ahead over dpkg's files"
fi
grep -q "belong to Debian packages" "$work/dpkg.log" && grep -q "liburing2" "$work/dpkg.log" &&
	grep -q "prefix=/usr/local" "$work/dpkg.log" && grep -q "FORCE=1" "$work/dpkg.log" ||
	fail "make install prefix=/usr: refusal without the expected message: $(cat "$work/dpkg.log")"
make install prefix=/usr INSTALL=false STRIP=false FORCE=1 >"$work/force.log" 2>&1 || true
! grep -q "belong to Debian packages" "$work/force.log" || fail "FORCE=1 did not override the dpkg check"
grep -q "^false " "$work/force.log" || fail "FORCE=1: install did not go ahead: $(cat "$work/force.log")"
echo "  make install prefix=/usr: refused (files of liburing2/liburing-dev), FORCE=1 overrides"
echo "install check: ok"
