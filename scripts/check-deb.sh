#!/usr/bin/env bash
# The Debian package check (docs/install.md, "Debian package"). As root:
#   - scripts/package-deb.sh builds the .deb; every file in it is rsuring's
#     by name and none is a file of liburing2 / liburing-dev;
#   - dpkg -i installs it; Debian's programs still get Debian's liburing;
#   - qemu-img (Debian's binary, linked to liburing.so.2) converts an image
#     with file.aio=io_uring under rsuring-run, the per-program method: its
#     io_uring_* symbols bind to the package's liburing.so.2 (LD_DEBUG),
#     rsuring prints its statistics lines, the image matches the source;
#   - a program built with the package's pkg-config files and an rpath,
#     and the extension program, run on it;
#   - the entry `rsuring-ldconfig on` would write puts rsuring first, shown
#     on a private ld.so cache (ldconfig -C), never on the machine's;
#   - the systemd drop-in example it ships preloads the package's library: a
#     program started with its environment has rsuring in /proc/PID/maps;
#     rsuring-run --which and --version answer for the package;
#   - man finds the pages; dpkg -r removes it and leaves no file behind.
# The package is purged on any failure. Runs of this check on one machine
# take turns (flock); dpkg's own lock is waited for.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

. scripts/lib-skip.sh
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || skip "not root: dpkg -i needs root"
need_tool dpkg-deb dpkg
need_tool dpkg-shlibdeps dpkg-dev
need_tool cc gcc
need_tool pkg-config pkg-config
need_tool man man-db
need_tool ldconfig libc-bin
need_tool qemu-img qemu-utils
qemu_img=$(command -v qemu-img)
readelf -d "$qemu_img" | grep -q 'NEEDED.*\[liburing\.so\.2\]' || skip "$qemu_img does not link liburing.so.2"
unset RSURING_SQPOLL RSURING_SQPOLL_PERCPU RSURING_SQPOLL_CPUS RSURING_SQPOLL_IDLE_MS RSURING_STATS
unset LD_LIBRARY_PATH LD_PRELOAD PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR

work=$(mktemp -d)
installed_here=
cleanup() {
	if [ -n "$installed_here" ] && dpkg-query -W -f='${Status}' rsuring 2>/dev/null | grep -q ' installed$'; then
		echo "deb check: purging the package it installed" >&2
		dpkg_run -P rsuring >/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

# dpkg_run ARGS...: dpkg, waiting (up to 5 minutes) while apt or dpkg run
# elsewhere hold dpkg's lock.
dpkg_run() {
	local i
	for i in $(seq 150); do
		if dpkg "$@" 2>"$work/dpkg.err"; then return 0; fi
		grep -qi 'lock' "$work/dpkg.err" || { cat "$work/dpkg.err" >&2; return 1; }
		sleep 2
	done
	cat "$work/dpkg.err" >&2
	return 1
}

# Take turns with other runs of this check (the package name is machine-wide)
# through a flock on dpkg's database directory, which exists anyway, so no
# lock file is left behind (dpkg itself locks other files, with fcntl).
exec 9</var/lib/dpkg
flock 9
if dpkg-query -W -f='${Status}' rsuring 2>/dev/null | grep -q ' installed$'; then
	skip "the rsuring package is installed already; this check would remove it"
fi

# ---- build ------------------------------------------------------------------
deb=$(bash scripts/package-deb.sh "$work/out" 2>"$work/build.log") ||
	{ cat "$work/build.log" >&2; fail "scripts/package-deb.sh"; }
version=$(make -s print-version)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
libdir=/usr/lib/$multiarch/rsuring
dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }' | sort >"$work/files"
[ -s "$work/files" ] || fail "empty package"
if grep -v -e '/rsuring/' -e '/rsuring[-_.][^/]*$' -e '/IORING_SETUP_SQPOLL_PERCPU\.3\.gz$' "$work/files"; then
	fail "the files above are not in rsuring's directories or named after it"
fi
for p in liburing2 liburing-dev; do
	dpkg -L "$p" 2>/dev/null || true
done | sort -u >"$work/liburing-files"
! comm -12 "$work/files" "$work/liburing-files" | grep . || fail "files shared with Debian's liburing packages"
echo "  built $(basename "$deb") ($(stat -c %s "$deb") bytes, $(wc -l <"$work/files") files, none shared with liburing2/liburing-dev)"

# ---- install ------------------------------------------------------------------
system_lib=$(ldd "$qemu_img" | awk '$1 == "liburing.so.2" { print $3 }')
installed_here=1
dpkg_run -i "$deb" >"$work/install.log" || fail "dpkg -i"
[ -f "$libdir/librsuring.so.$version" ] || fail "no $libdir/librsuring.so.$version"
[ "$(ldd "$qemu_img" | awk '$1 == "liburing.so.2" { print $3 }')" = "$system_lib" ] ||
	fail "installing the package changed the liburing.so.2 of Debian's programs"
case $(readlink -f "$system_lib") in "$libdir"/*) fail "qemu-img was on rsuring before the package" ;; esac
echo "  dpkg -i: installed; qemu-img still gets $system_lib by default"

# ---- qemu-img through rsuring-run ------------------------------------------------------
[ "$(rsuring-run ldd "$qemu_img" | awk '$1 == "liburing.so.2" { print $3 }')" = "$libdir/liburing.so.2" ] ||
	fail "rsuring-run ldd qemu-img does not show $libdir/liburing.so.2"
head -c 4194304 /dev/urandom >"$work/src.raw"
head -c 1048576 /dev/zero >>"$work/src.raw"
opts="driver=raw,file.driver=file,file.filename=$work/src.raw,file.aio=io_uring"
RSURING_STATS=1 LD_DEBUG=bindings LD_DEBUG_OUTPUT=$work/bind \
	rsuring-run "$qemu_img" convert -O qcow2 --image-opts "$opts" "$work/out.qcow2" 2>"$work/qemu.err" ||
	fail "rsuring-run qemu-img convert: $(head -c 400 "$work/qemu.err")"
"$qemu_img" compare -q -f raw -F qcow2 "$work/src.raw" "$work/out.qcow2" || fail "converted image differs from the source"
cat "$work"/bind.* | grep "normal symbol \`io_uring_" | grep -v "^ *[0-9]*: *binding file $libdir/" >"$work/bindings" || true
ours=$(grep -c "to $libdir/liburing\.so\.2 " "$work/bindings" || true)
theirs=$(grep -vc "to $libdir/liburing\.so\.2 " "$work/bindings" || true)
[ "$ours" -gt 0 ] && [ "$theirs" -eq 0 ] ||
	fail "qemu-img's io_uring_* bindings: $ours to rsuring, $theirs elsewhere"
stats=$(grep -c '^rsuring: pid=' "$work/qemu.err" || true)
[ "$stats" -gt 0 ] || fail "qemu-img convert: no rsuring statistics line"
echo "  rsuring-run qemu-img convert (file.aio=io_uring): image ok, $ours io_uring_* bindings to $libdir/liburing.so.2, none elsewhere, $stats rings reported"

# ---- building against the package -------------------------------------------------------
export PKG_CONFIG_PATH=$libdir/pkgconfig
# shellcheck disable=SC2046
cc -Wall -Wextra -Werror -o "$work/cp" c_tests/install/uring_cp.c c_tests/rsuring_test.c -ffunction-sections -fdata-sections -Wl,--gc-sections \
	$(pkg-config --cflags --libs liburing) -Wl,-rpath,"$(pkg-config --variable=libdir liburing)"
"$work/cp" "$work/src.raw" "$work/copy" >"$work/cp.out" || fail "uring_cp built against the package"
cmp -s "$work/src.raw" "$work/copy" || fail "uring_cp: copy differs"
[ "$(sed -n 's/^library: //p' "$work/cp.out")" = "$libdir/librsuring.so.$version" ] ||
	fail "uring_cp ran on '$(sed -n 's/^library: //p' "$work/cp.out")'"
# shellcheck disable=SC2046
cc -Wall -Wextra -Werror -DEXPECT_VERSION="\"$(pkg-config --modversion rsuring)\"" -o "$work/ext" \
	c_tests/install/ext_check.c c_tests/rsuring_test.c -ffunction-sections -fdata-sections -Wl,--gc-sections $(pkg-config --cflags --libs rsuring) -Wl,-rpath,"$libdir"
"$work/ext" >/dev/null || fail "ext_check built against the package"
unset PKG_CONFIG_PATH
echo "  built with PKG_CONFIG_PATH=$libdir/pkgconfig and an rpath: uring_cp and ext_check run on rsuring"

# ---- machine-wide entry, on a private cache -----------------------------------------------
conf_name=$(sed -n 's|^conf=/etc/ld.so.conf.d/||p' "$(command -v rsuring-ldconfig)")
[ -n "$conf_name" ] || fail "rsuring-ldconfig: no conf= line"
mkdir "$work/conf.d"
cp /etc/ld.so.conf.d/*.conf "$work/conf.d/" 2>/dev/null || true
rsuring-ldconfig print >"$work/conf.d/$conf_name"
echo "include $work/conf.d/*.conf" >"$work/ld.so.conf"
ldconfig -X -C "$work/ld.so.cache" -f "$work/ld.so.conf"
first=$(ldconfig -C "$work/ld.so.cache" -p | awk '$1 == "liburing.so.2" { print $NF; exit }')
[ "$first" = "$libdir/liburing.so.2" ] || fail "with the machine-wide entry liburing.so.2 would resolve to '$first'"
rsuring-ldconfig status | grep -q '^off:' || fail "rsuring-ldconfig status: not off"
echo "  rsuring-ldconfig's entry ($conf_name) puts $first first (private cache); the machine's is untouched"

# ---- the systemd drop-in example and the tools' answers ------------------------------------
dropin=/usr/share/doc/rsuring/examples/rsuring.conf
[ -f "$dropin" ] || fail "the package ships no $dropin"
mapfile -t assignments < <(sed -n 's/^Environment=//p' "$dropin")
[ "${assignments[*]}" = "LD_PRELOAD=$libdir/liburing.so.2" ] || fail "$dropin sets '${assignments[*]}'"
mapped=$(mapped_under_dropin "$dropin")
[ "$mapped" = "$libdir/librsuring.so.$version" ] || fail "a program started with $dropin's environment mapped '$mapped'"
[ "$(rsuring-run --version)" = "rsuring-run (rsuring $version)" ] || fail "rsuring-run --version: $(rsuring-run --version)"
rsuring-run --which "$qemu_img" | grep -q "=> $libdir/librsuring.so.$version (rsuring $version)" ||
	fail "rsuring-run --which qemu-img: $(rsuring-run --which "$qemu_img")"
echo "  $dropin: its environment maps $mapped; rsuring-run --which qemu-img names the package's library"

engine=$libdir/fio/rsuring-engine.so
if [ -f "$engine" ]; then
	readelf -d "$engine" | grep -q 'R.*PATH.*\$ORIGIN/\.\.' ||
		fail "the fio engine's RUNPATH lacks \$ORIGIN/.. (it would load another liburing.so.2)"
	resolved=$(ldd "$engine" | awk '$1 == "liburing.so.2" { print $3 }')
	[ "$(readlink -f "$resolved")" = "$libdir/librsuring.so.$version" ] ||
		fail "the packaged fio engine resolves liburing.so.2 to '$resolved'"
	echo "  fio engine: packaged, resolves liburing.so.2 to the package's"
fi

for page in 7:rsuring 3:rsuring_wait_batch_cqe 3:IORING_SETUP_SQPOLL_PERCPU 1:rsuring-stat 1:rsuring-run 8:rsuring-ldconfig; do
	man -w "${page%%:*}" "${page#*:}" >/dev/null 2>&1 || fail "man ${page/:/ } not found"
done

# ---- remove ---------------------------------------------------------------------------------
dpkg_run -r rsuring >"$work/remove.log" || fail "dpkg -r"
! dpkg-query -W -f='${Status}' rsuring 2>/dev/null | grep -q ' installed$' || fail "still installed after dpkg -r"
while read -r f; do
	[ ! -e "$f" ] && [ ! -L "$f" ] || fail "dpkg -r left $f"
done <"$work/files"
for d in "$libdir" /usr/include/rsuring /usr/share/doc/rsuring; do
	[ ! -e "$d" ] || fail "dpkg -r left $d"
done
[ ! -e "/etc/ld.so.conf.d/$conf_name" ] || fail "an ld.so.conf.d entry is left"
installed_here=
dpkg_run -P rsuring >/dev/null 2>&1 || true
echo "deb check: ok (dpkg -r left no file)"
