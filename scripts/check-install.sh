#!/usr/bin/env bash
# The install check: `make install DESTDIR=<scratch> prefix=/usr`, then,
# against that tree only (pkg-config restricted to it, no rpath):
#   - the layout: liburing.so.2 / liburing.so / liburing-ffi.so{,.2} links to
#     a stripped librsuring.so.<version> built from the current build,
#     liburing{,-ffi}.a, the .pc files, headers, manual pages, scripts;
#   - c_tests/install/uring_cp.c (a liburing program) built with pkg-config
#     dynamically runs on the tree's library with LD_LIBRARY_PATH (the path
#     in its /proc/self/maps), and not without it;
#   - the same built with -static and `pkg-config --static` links the tree's
#     liburing.a (linker trace) and runs rsuring's code (RSURING_STATS line);
#   - c_tests/install/ext_check.c (every extension) links and runs, dynamic
#     and static, with the header's version equal to rsuring.pc's;
#   - man finds every page of docs/man/ in the tree; the fio engine is there
#     when it has been built, and when it was not, make install says how;
#   - the .pc files are relocatable: PKG_CONFIG_PATH alone, pointed at the
#     tree, gives paths inside it;
#   - rsuring-run and rsuring-ldconfig: --help and --version on stdout with
#     status 0; rsuring-run refuses (status 125) a library directory without
#     rsuring's liburing.so.2, as in a staged tree;
#   - the systemd drop-in example is installed and passes systemd-analyze
#     verify on a unit that uses it;
#   - `make uninstall` leaves no file behind.
# Then the rpath method of README.md and docs/install.md: an install into a private prefix, a
# program linked with -Wl,-rpath, and rsuring-run (and its --which), each on
# rsuring with no environment; a program started with the drop-in's
# environment has rsuring in its /proc/PID/maps; and a relative prefix refused. Then the safe-install rules:
# `make install` builds nothing (a missing build: "run make first"), and
# refuses a prefix whose files dpkg owns (Debian's liburing at prefix=/usr)
# unless FORCE=1 (checked with INSTALL=false, so nothing is ever written
# there). KEEP=1 keeps the scratch directory for a look afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

. scripts/lib-skip.sh
fail() { echo "FAIL: $*" >&2; exit 1; }
need_tool make make
need_tool cc gcc
need_tool pkg-config pkg-config
need_tool readelf binutils
need_tool man man-db
need_tool systemd-analyze systemd
unset RSURING_SQPOLL RSURING_SQPOLL_PERCPU RSURING_SQPOLL_CPUS RSURING_SQPOLL_IDLE_MS RSURING_STATS
unset LD_LIBRARY_PATH LD_PRELOAD
CFLAGS="-Wall -Wextra -Werror -O2"
# Every C test program is linked with the helper bodies; what it does not
# call is dropped at link time.
HELPERS=(c_tests/rsuring_test.c -ffunction-sections -fdata-sections -Wl,--gc-sections)
version=$(make -s print-version)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || cc -print-multiarch 2>/dev/null || true)
libdir=/usr/lib${multiarch:+/$multiarch}
dest=$work/root
lib=$dest$libdir
real=librsuring.so.$version

# library PROGRAM-OUTPUT: the library path a uring_cp run printed.
library() { sed -n 's/^library: //p' "$1"; }
same_file() { [ "$(readlink -f "$1")" = "$(readlink -f "$2")" ]; }
# flag_dir FLAG PKG-CONFIG-OUTPUT: the directory of the first -I or -L flag,
# with the .pc file's relative steps resolved.
flag_dir() { readlink -f "$(tr ' ' '\n' <<<"$2" | sed -n "s/^$1//p" | head -n1)"; }

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
dropin=$dest/usr/share/doc/rsuring/examples/rsuring.conf
[ -f "$dropin" ] || fail "no /usr/share/doc/rsuring/examples/rsuring.conf (the systemd drop-in example)"
grep -qx "Environment=LD_PRELOAD=$libdir/liburing.so.2" "$dropin" || fail "the drop-in does not preload $libdir/liburing.so.2"
echo "  installed: $libdir/$real ($(stat -c %s "$lib/$real") bytes stripped," \
	"$(stat -c %s target/release/librsuring.so) in target/), librsuring.a $(stat -c %s "$lib/librsuring.a") bytes"

# ---- tools: --help, --version, a staged tree refused -------------------------
for tool in usr/bin/rsuring-run usr/sbin/rsuring-ldconfig; do
	name=${tool##*/}
	out=$("$dest/$tool" --help 2>"$work/help.err") || fail "$name --help: status $?"
	[ ! -s "$work/help.err" ] && grep -q "^usage: $name" <<<"$out" || fail "$name --help: no usage on stdout ($(cat "$work/help.err"))"
	[ "$("$dest/$tool" --version 2>&1)" = "$name (rsuring $version)" ] || fail "$name --version: $("$dest/$tool" --version 2>&1)"
done
# The staged rsuring-run names $libdir, where Debian's liburing (or nothing) is.
status=0
"$dest/usr/bin/rsuring-run" true 2>"$work/staged.err" || status=$?
[ "$status" = 125 ] && grep -q "rsuring-run: $libdir" "$work/staged.err" ||
	fail "staged rsuring-run: status $status, '$(cat "$work/staged.err")' (want 125 and a message naming $libdir)"
echo "  rsuring-run, rsuring-ldconfig: --help and --version ok; the staged rsuring-run refuses $libdir: $(head -c 100 "$work/staged.err")..."

# ---- pkg-config on the staged tree ------------------------------------------------
# The .pc files are relocatable: PKG_CONFIG_PATH alone, pointed at the tree,
# gives its directories (no sysroot, no --define-prefix).
unset PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR
pc_out=$(PKG_CONFIG_PATH=$lib/pkgconfig pkg-config --cflags --libs liburing)
[ "$(flag_dir -I "$pc_out")" = "$(readlink -f "$dest/usr/include")" ] || fail "PKG_CONFIG_PATH=<tree>: --cflags liburing: $pc_out"
[ "$(flag_dir -L "$pc_out")" = "$(readlink -f "$lib")" ] || fail "PKG_CONFIG_PATH=<tree>: --libs liburing: $pc_out"
echo "  PKG_CONFIG_PATH=<tree>/$libdir/pkgconfig: -I and -L inside the tree"
# From here pkg-config sees the tree's .pc files only.
export PKG_CONFIG_LIBDIR=$lib/pkgconfig
unset PKG_CONFIG_PATH
[ "$(pkg-config --modversion rsuring)" = "$version" ] || fail "rsuring.pc version is not $version"
[ "$(flag_dir -L "$(pkg-config --libs liburing)")" = "$(readlink -f "$lib")" ] || fail "pkg-config --libs liburing: no -L$lib"

# ---- a liburing program, dynamic --------------------------------------------
head -c 3145728 /dev/urandom >"$work/src"
head -c 12345 /dev/urandom >>"$work/src"
# shellcheck disable=SC2046
cc $CFLAGS -o "$work/cp-dyn" c_tests/install/uring_cp.c "${HELPERS[@]}" $(pkg-config --cflags --libs liburing)
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
cc $CFLAGS -static -o "$work/cp-static" c_tests/install/uring_cp.c "${HELPERS[@]}" \
	$(pkg-config --static --cflags --libs liburing) -Wl,--trace >"$work/static.link" 2>&1 ||
	{ cat "$work/static.link" >&2; fail "cp-static did not link"; }
# --trace names each archive the link used, one per line (resolved here: the
# .pc's paths are relative to its directory).
archives=$(grep -x '.*liburing\.a' "$work/static.link" | while read -r a; do readlink -f "$a"; done | sort -u)
[ "$archives" = "$(readlink -f "$lib/liburing.a")" ] || fail "cp-static: linked '$archives', not the tree's liburing.a only"
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
	c_tests/install/ext_check.c "${HELPERS[@]}" $(pkg-config --cflags --libs rsuring)
LD_LIBRARY_PATH=$lib "$work/ext-dyn" >/dev/null || fail "ext-dyn"
# shellcheck disable=SC2046
cc $CFLAGS -static -DEXPECT_VERSION="\"$(pkg-config --modversion rsuring)\"" -o "$work/ext-static" \
	c_tests/install/ext_check.c "${HELPERS[@]}" $(pkg-config --static --cflags --libs rsuring) >"$work/ext.link" 2>&1 ||
	{ cat "$work/ext.link" >&2; fail "ext-static did not link"; }
"$work/ext-static" >/dev/null || fail "ext-static"
echo "  extensions (pkg-config rsuring): dynamic and static ok"

# ---- manual pages, fio engine --------------------------------------------------
for page in docs/man/man*/*.[0-9]; do
	name=$(basename "$page")
	found=$(man -M "$dest/usr/share/man" -w "${name##*.}" "${name%.*}" 2>/dev/null || true)
	same_file "$found" "$dest/usr/share/man/$(basename "$(dirname "$page")")/$name" ||
		fail "man does not find $name in the tree ('$found')"
done
echo "  man finds the $(ls docs/man/man*/*.[0-9] | wc -l) pages in the tree"
if grep -q 'fio engine not installed' "$work/install.log"; then
	if command -v fio >/dev/null 2>&1; then
		grep -q 'make fio-engine' "$work/install.log" || fail "make install does not say how to build the fio engine: $(grep 'fio engine' "$work/install.log")"
		[ "${RSURING_STRICT:-}" != 1 ] ||
			fail "RSURING_STRICT=1: fio is here but its engine was not built, so its install is not checked (make fio-engine)"
		echo "  SKIPPED the installed fio engine: not built for this fio; make install says: $(grep -o 'build it with.*' "$work/install.log" | head -c 80)..."
	else
		echo "  fio engine: no fio here, not installed"
	fi
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
# ---- the systemd drop-in: systemd-analyze verify on a unit that uses it -------------
# (systemd need not run: verify loads the unit and its drop-ins from files.)
# The commented settings are checked too, uncommented; a broken copy must be
# reported, which shows the drop-in is read at all.
units=$work/units
mkdir -p "$units/rsuring-check.service.d"
printf '[Unit]\nDescription=rsuring drop-in check\n\n[Service]\nExecStart=/bin/sleep 1\n' >"$units/rsuring-check.service"
verify() { SYSTEMD_UNIT_PATH=$units: systemd-analyze verify "$units/rsuring-check.service" 2>&1; }
sed -E 's/^#((Environment|LimitMEMLOCK)=)/\1/' "$dropin" >"$units/rsuring-check.service.d/rsuring.conf"
grep -q '^LimitMEMLOCK=' "$units/rsuring-check.service.d/rsuring.conf" || fail "the drop-in has no LimitMEMLOCK example"
out=$(verify) || fail "systemd-analyze verify with the drop-in: $out"
[ -z "$out" ] || fail "systemd-analyze verify with the drop-in: $out"
sed 's/^LimitMEMLOCK=.*/LimitMEMLOCK=lots/' "$dropin" >"$units/rsuring-check.service.d/rsuring.conf"
echo 'LimitMEMLOCK=lots' >>"$units/rsuring-check.service.d/rsuring.conf"
verify | grep -q 'rsuring.conf' || fail "systemd-analyze verify does not read the drop-in (a broken copy passed)"
echo "  drop-in example: systemd-analyze verify clean on a unit using it (a broken copy is reported)"

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
cc $CFLAGS -o "$work/cp-rpath" c_tests/install/uring_cp.c "${HELPERS[@]}" $(pkg-config --cflags --libs liburing) \
	-Wl,-rpath,"$(pkg-config --variable=libdir liburing)"
"$work/cp-rpath" "$work/src" "$work/dst4" >"$work/rpath.out" || fail "cp-rpath"
same_file "$(library "$work/rpath.out")" "$opt/lib/$real" || fail "cp-rpath ran on '$(library "$work/rpath.out")'"
"$opt/bin/rsuring-run" "$work/cp-dyn" "$work/src" "$work/dst5" >"$work/run.out" || fail "rsuring-run cp-dyn"
same_file "$(library "$work/run.out")" "$opt/lib/$real" || fail "rsuring-run: ran on '$(library "$work/run.out")'"
which=$("$opt/bin/rsuring-run" --which "$work/cp-dyn") || fail "rsuring-run --which cp-dyn: $which"
grep -q "=> $(readlink -f "$opt/lib/$real") (rsuring $version)" <<<"$which" || fail "rsuring-run --which cp-dyn: $which"
status=0
"$opt/bin/rsuring-run" --which "$work/cp-static" >/dev/null || status=$?
[ "$status" = 1 ] || fail "rsuring-run --which on a static program: status $status (want 1)"
# The drop-in's environment, as systemd would give it to a service's processes.
mapfile -t assignments < <(sed -n 's/^Environment=//p' "$opt/share/doc/rsuring/examples/rsuring.conf")
[ ${#assignments[@]} -gt 0 ] || fail "the drop-in sets no environment"
mapped=$(mapped_under_dropin "$opt/share/doc/rsuring/examples/rsuring.conf")
same_file "$mapped" "$opt/lib/$real" || fail "a program started with the drop-in's environment mapped '$mapped', not $opt/lib/$real"
echo "  drop-in environment (${assignments[*]}): /proc/PID/maps has $mapped"
make -s uninstall prefix="$opt"
left=$(find "$opt" ! -type d)
[ -z "$left" ] || fail "make uninstall prefix=$opt left: $left"
echo "  prefix=$opt: -Wl,-rpath build, rsuring-run and its --which on rsuring; uninstall clean"

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
