#!/usr/bin/env bash
# upstream-suite.sh — run upstream liburing's test suite (2.15 ABI) against rsuring.
#
# Usage:
#   scripts/upstream-suite.sh CHECKOUT [--mode MODE] [--lib PATH] [--jobs N]
#                             [--reruns N] [--timeout S] [--work DIR] [TEST...]
#
#   e.g. scripts/upstream-suite.sh ~/src/liburing            (all three modes)
#        scripts/upstream-suite.sh ~/src/liburing --mode liburing-header nop
#
#   CHECKOUT  an upstream liburing source tree (a git work tree, an unpacked
#             tarball, or a bare git repository, whose HEAD is exported).  It
#             is copied to the work dir and never written to.
#   --mode    liburing-header  tests compiled against the checkout's own
#                              src/include/liburing.h, linked to rsuring
#             rsuring-header   tests compiled against rsuring's include/,
#                              linked to rsuring
#             baseline         tests compiled against the checkout's header,
#                              linked to the checkout's own liburing.so.2 (built
#                              here): the reference on this machine
#             all              baseline, liburing-header, rsuring-header (default)
#   --lib PATH  the rsuring library (default target/release/librsuring.so).  It
#             is snapshotted into the work dir, so rebuilding it while the
#             suite runs does not mix two builds.
#   --jobs N  run N tests at once (default 1).  Many tests bind fixed TCP
#             ports (accept, connect, send_recv, socket-*, ...) and several
#             time themselves, so N > 1 may add failures that are not real.
#             Builds always use every CPU (make -jNPROC).
#   --reruns N   re-run a failed or timed-out test up to N more times, alone
#             (default 2; 0: never).  One that then passes is FLAKY: counted
#             as passed, listed separately, not a regression.
#   --timeout S  per-test timeout (default 60, as upstream's runtests.sh)
#   --work DIR   scratch dir (default <repo>/target/upstream-suite)
#   TEST...   only these tests (names without .c/.t), e.g. to re-run failures.
#
# What it does:
#   1. copies CHECKOUT to DIR/tree, runs its ./configure and builds liburing
#      itself there (src/: liburing.a, liburing.so.2.<minor>);
#   2. per mode, compiles every test of test/Makefile's test_srcs (its
#      conditionals respected: statx, sq-full-cpp, nolibc) with test/Makefile's
#      flags, links it to the mode's library and checks the binary: its
#      dependency file names the mode's liburing.h and no other, it NEEDs
#      liburing.so.2 and ldd resolves that to the mode's file;
#   3. runs the tests as upstream's test/runtests.sh does: each in a fresh
#      scratch cwd (with ./exec-target.t, which sqpoll-exec and timeout exec),
#      `timeout -s INT -k S S`, exit 0 = pass (then, as root, the dmesg check
#      of runtests.sh), 77 = skip (T_EXIT_SKIP), anything else = fail
#      (T_EXIT_FAIL is 1).  runtests.sh only warns on a timeout ("may not be a
#      failure"); here a timeout counts as a failure.  After each test,
#      processes it left running in its cwd are killed and the cwd removed;
#      after each mode, the fixed /tmp files tests create, loop devices backed
#      by files in the work dir and mounts under it are removed (no upstream
#      test creates loop devices or mounts; this is a safety net).
#
# Upstream's test/Makefile links `-L../src/ -luring`; src/ holds liburing.a and
# liburing.so.2.<minor> but no liburing.so, so upstream links every test
# STATICALLY.  Here they link against a shared liburing.so.2, which all but the
# STATIC_ONLY tests below do.  Those are built statically in baseline (as
# upstream) for reference, and excluded from the rsuring modes.
#
# Output: one line per test, a summary per mode, with the line
#   "[MODE] N passed, M failed"
# and, when a rsuring mode runs and baseline results exist (this run or a
# previous one in the same work dir), the tests that pass in baseline but not
# in that mode (regressions: FAIL, TIMEOUT, BUILDFAIL and also SKIP count, as
# the target is to pass everything baseline passes).  Last line:
# "N passed, M failed" over all modes.  M counts failures, timeouts and build
# failures; skips and excluded tests are in neither.  Exit status: 0 when no rsuring mode has a regression against
# baseline (or, with only baseline, when M = 0), 1 otherwise, 2 on set-up
# errors.
#
# Work dir layout:
#   tree/                  the copied, configured and built checkout
#   lib-baseline/          liburing.so.2 -> tree/src/liburing.so.2.<minor>
#   lib-rsuring/           librsuring.so (snapshot), liburing.so(.2) -> it
#   <mode>/bin/T.t         built tests; <mode>/build/T.log compiler output
#   <mode>/logs/T.log      test output; <mode>/results: "name status exit secs"
#
# Environment passes through to the tests (RSURING_SQPOLL=1, RSURING_STATS=1...).
# Not run by scripts/test.sh: upstream sources are not reachable in CI.
#
# Reference (liburing 2.15 @ 27255f4c, kernel 6.18, 2 CPUs, root): 256 tests in
# test_srcs, 252 link against a shared liburing.so.2.  With liburing itself,
# conn-unreach, read-write (setrlimit EPERM in this VM) and timens-abs-timer
# (kernel lacks the timens fix) fail every time.  Timing-sensitive tests fail
# when the machine is busy, in every mode: iowait (/proc/stat iowait ticks),
# min-timeout, min-timeout-wait, poll-cancel-all, and send-zerocopy runs
# 40-60 s against the 60 s timeout.  The summary prints the load average for
# that reason.  A mode runs in 6-13 min (build about 100 s of it).

set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=$REPO/target/upstream-suite
TIMEOUT=60
LIB=$REPO/target/release/librsuring.so
MODE=all
JOBS=1
RERUNS=2
CHECKOUT=""
ONLY=()
NPROC=$(nproc 2>/dev/null || echo 2)

# ---------------------------------------------------------------------------
# Tests that cannot link against a shared liburing.so.2 — upstream's or ours —
# because they call liburing-internal functions (`local: *` in liburing.map,
# so neither library exports them).  Built statically against tree/src/liburing.a
# in baseline only.
declare -A STATIC_ONLY=(
	[accept-reuse]="t_io_uring_init_sqarray() (helpers.h) calls __io_uring_queue_init_params(), liburing-internal (src/setup.h)"
	[io_uring_enter]="t_io_uring_init_sqarray() (helpers.h) calls __io_uring_queue_init_params(), liburing-internal (src/setup.h)"
	[sqe-mixed-boundary]="t_io_uring_init_sqarray() (helpers.h) calls __io_uring_queue_init_params(), liburing-internal (src/setup.h)"
	[resize-rings]="mmap_child() calls io_uring_unmap_rings(), liburing-internal (src/setup.h)"
)
# Not static-only although they look it: nolibc.c includes ../src/lib.h only
# for its static inline get_page_size(); the tests including ../src/syscall.h
# use its static inline __sys_io_uring_* wrappers; helpers.h declares
# __io_uring_flush_sq() but no test calls it.  No test links liburing-ffi.
# bpf_*.c need clang+bpftool+libbpf (test/Makefile's bpf_toolchain) and the
# xfail_* tests need CONFIG_USE_SANITIZER; neither is in test_srcs otherwise.

# Fixed /tmp paths tests create (normally unlinked by the test itself).
TMP_NAMES=(/tmp/.open.at2 /tmp/.open.close /tmp/.open.direct.pick /tmp/.statx
	/tmp/.tmp.access /tmp/io_uring_openat_test /tmp/io_uring_openat_write_test1
	/tmp/cbpf_filter_no_such_socket)
TMP_GLOBS=('/tmp/cbpf_test_??????' '/tmp/io_uring_enter-test.??????')

log() { printf '%s\n' "upstream-suite: $*" >&2; }
die() { log "error: $*"; exit 2; }
usage() { sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

while [ $# -gt 0 ]; do
	case "$1" in
	--mode) MODE=${2:?--mode needs a value}; shift 2 ;;
	--mode=*) MODE=${1#*=}; shift ;;
	--lib) LIB=${2:?--lib needs a path}; shift 2 ;;
	--lib=*) LIB=${1#*=}; shift ;;
	--jobs|-j) JOBS=${2:?--jobs needs a number}; shift 2 ;;
	--jobs=*) JOBS=${1#*=}; shift ;;
	--reruns) RERUNS=${2:?--reruns needs a number}; shift 2 ;;
	--reruns=*) RERUNS=${1#*=}; shift ;;
	--timeout) TIMEOUT=${2:?--timeout needs seconds}; shift 2 ;;
	--timeout=*) TIMEOUT=${1#*=}; shift ;;
	--work) WORK=${2:?--work needs a dir}; shift 2 ;;
	--work=*) WORK=${1#*=}; shift ;;
	-h|--help) usage; exit 0 ;;
	--) shift; ONLY+=("$@"); break ;;
	-*) usage >&2; die "unknown option $1" ;;
	*) if [ -z "$CHECKOUT" ]; then CHECKOUT=$1; else ONLY+=("${1%.t}"); fi; shift ;;
	esac
done
[ -n "$CHECKOUT" ] || { usage >&2; die "no liburing checkout given"; }
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || die "--jobs: not a positive number: $JOBS"
[[ "$RERUNS" =~ ^[0-9]+$ ]] || die "--reruns: not a number: $RERUNS"
[[ "$TIMEOUT" =~ ^[1-9][0-9]*$ ]] || die "--timeout: not a positive number: $TIMEOUT"
case "$MODE" in
all) MODES=(baseline liburing-header rsuring-header) ;;
baseline|liburing-header|rsuring-header) MODES=("$MODE") ;;
*) die "--mode must be liburing-header, rsuring-header, baseline or all (got $MODE)" ;;
esac
for c in gcc g++ make readelf ldd timeout tar; do
	command -v "$c" >/dev/null || die "$c not found"
done

mkdir -p "$WORK" || die "cannot create $WORK"
WORK=$(cd "$WORK" && pwd)
CHECKOUT=$(cd "$CHECKOUT" 2>/dev/null && pwd) || die "no such directory: $CHECKOUT"
case "$WORK/" in "$CHECKOUT"/*) die "work dir $WORK is inside the checkout" ;; esac
TREE=$WORK/tree

# ---------------------------------------------------------------------------
# Source: copy, configure, build liburing

copy_checkout() {
	rm -rf "$TREE"; mkdir -p "$TREE"
	if [ -f "$CHECKOUT/configure" ] && [ -d "$CHECKOUT/test" ]; then
		log "copying $CHECKOUT"
		tar -C "$CHECKOUT" --exclude=./.git -cf - . | tar -C "$TREE" -xf - ||
			die "copying $CHECKOUT failed"
		# A checkout that was built in place: start from clean sources.
		make -s -C "$TREE" clean >/dev/null 2>&1
		rm -f "$TREE/config-host.h" "$TREE/config-host.mak"
	elif git --git-dir="$CHECKOUT" rev-parse --verify -q HEAD >/dev/null 2>&1; then
		log "exporting HEAD of $CHECKOUT ($(git --git-dir="$CHECKOUT" rev-parse --short HEAD))"
		git --git-dir="$CHECKOUT" archive HEAD | tar -C "$TREE" -xf - ||
			die "git archive of $CHECKOUT failed"
	else
		die "$CHECKOUT is neither a liburing source tree nor a git repository"
	fi
	[ -x "$TREE/configure" ] && [ -f "$TREE/test/Makefile" ] && [ -f "$TREE/src/liburing.map" ] ||
		die "$CHECKOUT does not look like liburing (configure, test/Makefile, src/liburing.map)"
}

build_liburing() {
	log "configuring and building liburing in $TREE (make -j$NPROC)"
	(cd "$TREE" && ./configure >"$WORK/configure.log" 2>&1) ||
		{ tail -n 20 "$WORK/configure.log" >&2; die "./configure failed"; }
	make -j"$NPROC" -C "$TREE/src" >"$WORK/liburing-build.log" 2>&1 ||
		{ tail -n 20 "$WORK/liburing-build.log" >&2; die "building liburing failed"; }
	UP_SO=$(find "$TREE/src" -maxdepth 1 -name 'liburing.so.2.*' -type f | head -n 1)
	[ -n "$UP_SO" ] && [ -f "$TREE/src/liburing.a" ] || die "liburing build produced no liburing.so.2.* / liburing.a"
	UP_VERSION=$(sed -n 's/^#define IO_URING_VERSION_MINOR \([0-9]*\)/2.\1/p' \
		"$TREE/src/include/liburing/io_uring_version.h" 2>/dev/null)
	mkdir -p "$WORK/lib-baseline"
	ln -sfn "$UP_SO" "$WORK/lib-baseline/liburing.so.2"
	ln -sfn "$UP_SO" "$WORK/lib-baseline/liburing.so"
}

# Test names from test/Makefile's test_srcs, its conditionals evaluated.
list_tests() {
	local srcs
	srcs=$(make -s --no-print-directory -C "$TREE/test" -f Makefile \
		-f <(printf 'print-test-srcs:\n\t@echo $(test_srcs)\n') print-test-srcs) || return 1
	printf '%s\n' $srcs | sed -E 's/\.(c|cc)$//' | awk 'NF && !seen[$0]++'
}

RS_LIB=""
prepare_rsuring_lib() {
	local soname d=$WORK/lib-rsuring
	[ -f "$LIB" ] || die "rsuring library not found: $LIB (cargo build --release, or --lib)"
	soname=$(readelf -d "$LIB" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
	[ "$soname" = liburing.so.2 ] || die "$LIB has SONAME '${soname:-none}', expected liburing.so.2"
	rm -rf "$d"; mkdir -p "$d"
	cp "$(readlink -f "$LIB")" "$d/librsuring.so" || die "cannot copy $LIB"
	ln -s librsuring.so "$d/liburing.so.2"
	ln -s librsuring.so "$d/liburing.so"
	RS_LIB=$d/librsuring.so
	log "library under test: $(readlink -f "$LIB") (sha256 $(sha256sum "$RS_LIB" | cut -c1-16), snapshot $RS_LIB)"
}

# ---------------------------------------------------------------------------
# Build the tests of one mode

set_flags() {
	# test/Makefile's flags (CFLAGS default -g -O3 -Wall -Wextra), minus -I.
	XCFLAGS=(-Wno-unused-parameter -Wno-sign-compare)
	grep -q '^CONFIG_HAVE_STRINGOP_OVERFLOW=y' "$TREE/config-host.mak" && XCFLAGS+=(-Wstringop-overflow=0)
	grep -q '^CONFIG_HAVE_ARRAY_BOUNDS=y' "$TREE/config-host.mak" && XCFLAGS+=(-Warray-bounds=0)
	CPPFLAGS_T=(-D_GNU_SOURCE -D__SANE_USERSPACE_TYPES__ -include "$TREE/config-host.h"
		-D_LARGEFILE_SOURCE -D_FILE_OFFSET_BITS=64)
	CFLAGS_T=(-g -O3 -Wall -Wextra "${XCFLAGS[@]}" -DLIBURING_BUILD_TEST)
	CXXFLAGS_T=(-g -O3 -Wall -Wextra "${XCFLAGS[@]}" -std=c++11 -DLIBURING_BUILD_TEST)
}

# Per mode: MODE_INC (header dir), MODE_LIBDIR, MODE_EXPECT_LIB (what ldd must find).
mode_setup() {
	case "$1" in
	baseline) MODE_INC=$TREE/src/include; MODE_LIBDIR=$WORK/lib-baseline; MODE_EXPECT_LIB=$UP_SO ;;
	liburing-header) MODE_INC=$TREE/src/include; MODE_LIBDIR=$WORK/lib-rsuring; MODE_EXPECT_LIB=$RS_LIB ;;
	rsuring-header) MODE_INC=$REPO/include; MODE_LIBDIR=$WORK/lib-rsuring; MODE_EXPECT_LIB=$RS_LIB ;;
	esac
}

is_static() { [ "$1" = baseline ] && [ -n "${STATIC_ONLY[$2]+x}" ]; }

# compile_one MODE TEST -> <mode>/bin/TEST.t, or <mode>/build/TEST.failed with a reason.
compile_one() {
	local mode=$1 t=$2 d=$WORK/$1 src cc
	local log=$d/build/$t.log
	local -a flags link
	if [ -f "$TREE/test/$t.c" ]; then src=$TREE/test/$t.c; cc=${CC:-gcc}; flags=("${CFLAGS_T[@]}")
	elif [ -f "$TREE/test/$t.cc" ]; then src=$TREE/test/$t.cc; cc=${CXX:-g++}; flags=("${CXXFLAGS_T[@]}")
	else echo "no source" >"$d/build/$t.failed"; return; fi
	if is_static "$mode" "$t"; then
		link=("$TREE/src/liburing.a")
	else
		link=(-L"$MODE_LIBDIR" -luring -Wl,-rpath,"$MODE_LIBDIR" -Wl,--disable-new-dtags)
	fi
	if ! "$cc" "${CPPFLAGS_T[@]}" -I"$MODE_INC" "${flags[@]}" -MD -MF "$d/build/$t.d" \
		-o "$d/bin/$t.t" "$src" "$d/build/helpers.o" "${link[@]}" -lpthread >"$log" 2>&1; then
		if grep -q 'undefined reference' "$log"; then
			echo "link error: undefined $(grep -o "undefined reference to \`[^']*'" "$log" |
				sed "s/.*\`//; s/'//" | sort -u | tr '\n' ' ')" >"$d/build/$t.failed"
		else
			echo "compile error" >"$d/build/$t.failed"
		fi
		rm -f "$d/bin/$t.t"; return
	fi
	check_binary "$mode" "$t" >>"$log" 2>&1 ||
		{ tail -n 1 "$log" >"$d/build/$t.failed"; rm -f "$d/bin/$t.t"; }
}

# check_binary MODE TEST: compiled against the mode's header only, linked to its library.
check_binary() {
	local mode=$1 t=$2 d=$WORK/$1 dep bin needed got
	dep=$d/build/$t.d; bin=$d/bin/$t.t
	# exec-target.c includes nothing from liburing.
	if grep -q 'liburing\.h' "$dep" && ! grep -qF "$MODE_INC/liburing.h" "$dep"; then
		echo "check: not compiled against $MODE_INC/liburing.h"; return 1
	fi
	if [ "$mode" = rsuring-header ] && grep -qE "$TREE/src/include/|/usr/(local/)?include/liburing" "$dep"; then
		echo "check: uses a liburing header that is not rsuring's: $(tr ' \\' '\n\n' <"$dep" |
			grep -E "$TREE/src/include/|/usr/(local/)?include/liburing" | sort -u | tr '\n' ' ')"
		return 1
	fi
	needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(liburing[^]]*\)\].*/\1/p')
	if is_static "$mode" "$t"; then
		[ -z "$needed" ] && return 0
		echo "check: static build still needs $needed"; return 1
	fi
	[ "$needed" = liburing.so.2 ] || { echo "check: NEEDED '${needed:-none}', expected liburing.so.2"; return 1; }
	got=$(ldd "$bin" | awk '$1 == "liburing.so.2" { print $3 }')
	if [ -z "$got" ] || [ "$(readlink -f "$got")" != "$(readlink -f "$MODE_EXPECT_LIB")" ]; then
		echo "check: liburing.so.2 resolves to '${got:-nothing}', expected $MODE_EXPECT_LIB"; return 1
	fi
}

build_mode() {
	local mode=$1 d=$WORK/$1 t
	rm -rf "$d/bin" "$d/build"; mkdir -p "$d/bin" "$d/build"
	mode_setup "$mode"
	log "[$mode] building ${#BUILD[@]} tests against $MODE_INC/liburing.h, library $MODE_EXPECT_LIB ($NPROC at a time)"
	if ! ${CC:-gcc} "${CPPFLAGS_T[@]}" -I"$MODE_INC" "${CFLAGS_T[@]}" -c \
		-o "$d/build/helpers.o" "$TREE/test/helpers.c" >"$d/build/helpers.log" 2>&1; then
		log "[$mode] test/helpers.c does not compile:"; head -n 20 "$d/build/helpers.log" >&2
		for t in "${BUILD[@]}"; do echo "helpers.c does not compile, see build/helpers.log" >"$d/build/$t.failed"; done
		return
	fi
	for t in "${BUILD[@]}"; do
		if [ "$mode" != baseline ] && [ -n "${STATIC_ONLY[$t]+x}" ]; then continue; fi
		while [ "$(jobs -rp | wc -l)" -ge "$NPROC" ]; do wait -n; done
		compile_one "$mode" "$t" &
	done
	wait
}

# ---------------------------------------------------------------------------
# Run

DO_KMSG=0
if [ "$(id -u)" = 0 ] && [ -w /dev/kmsg ] && dmesg >/dev/null 2>&1; then DO_KMSG=1; fi

# runtests.sh's _check_dmesg: a kernel splat logged since the marker fails the test.
dmesg_clean() {
	local marker=$1 out=$2
	[ "$DO_KMSG" = 1 ] || return 0
	dmesg | grep -A 9999 -F "$marker" >"$out" 2>/dev/null
	if grep -q -e "kernel BUG at" -e "WARNING:" -e "BUG:" -e "Oops:" \
		-e "possible recursive locking detected" -e "Internal error" \
		-e "INFO: suspicious RCU usage" \
		-e "INFO: possible circular locking dependency detected" \
		-e "general protection fault:" -e "blktests failure" "$out"; then
		return 1
	fi
	rm -f "$out"
}

# Processes (a test's forked children) still running in a scratch dir: end them.
reap_leftovers() {
	local dir=$1 p pids=()
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/cwd" 2>/dev/null)" = "$dir" ] && pids+=("${p#/proc/}")
	done
	[ ${#pids[@]} -eq 0 ] && return 0
	echo "left processes behind: ${pids[*]} (killed)"
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	sleep 0.2
}

detach_our_loops() {
	command -v losetup >/dev/null || return 0
	losetup -n -l -O NAME,BACK-FILE 2>/dev/null | while read -r dev back; do
		case "$back" in "$WORK"/*) log "detaching loop device $dev ($back)"; losetup -d "$dev" ;; esac
	done
}

unmount_ours() {
	awk '{ print $2 }' /proc/mounts | while read -r m; do
		case "$m" in "$WORK"/*) log "unmounting $m"; umount -l "$m" ;; esac
	done
}

remove_tmp_leftovers() {
	local f
	for f in "${TMP_NAMES[@]}" ${TMP_GLOBS[@]}; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		[ -n "${TMP_BEFORE[$f]+x}" ] || rm -rf "$f"
	done
}

declare -A TMP_BEFORE=()
note_tmp_before() {
	local f
	for f in "${TMP_NAMES[@]}" ${TMP_GLOBS[@]}; do
		[ -e "$f" ] && TMP_BEFORE[$f]=1
	done
}

# run_one MODE TEST [RERUN-NOTE]: one result line on stdout and in
# <mode>/results.d/TEST ("name status exit secs").
run_one() {
	local mode=$1 t=$2 rerun=${3:-} d=$WORK/$1 status st t0 t1 secs marker note=""
	local log=$d/logs/$t.log scratch=$d/scratch/$t
	rm -rf "$scratch"; mkdir -p "$scratch"
	[ -f "$d/bin/exec-target.t" ] && ln -s "$d/bin/exec-target.t" "$scratch/exec-target.t"
	marker="upstream-suite $mode: running test $t $$-$RANDOM:"
	[ "$DO_KMSG" = 1 ] && echo "$marker" >/dev/kmsg 2>/dev/null
	t0=$(date +%s.%N)
	(cd "$scratch" && timeout -s INT -k "$TIMEOUT" "$TIMEOUT" "$d/bin/$t.t"; exit $?) \
		</dev/null >"$log" 2>&1
	status=$?
	t1=$(date +%s.%N)
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	if [ "$status" -eq 124 ] ||
		{ [ "$status" -eq 137 ] && awk -v s="$secs" -v t="$TIMEOUT" 'BEGIN { exit !(s >= t) }'; }; then
		st=TIMEOUT
	elif [ "$status" -eq 77 ]; then st=SKIP
	elif [ "$status" -ne 0 ]; then st=FAIL
	elif ! dmesg_clean "$marker" "$d/logs/$t.dmesg"; then
		st=FAIL; note=" (kernel warning in dmesg: logs/$t.dmesg)"
	else st=PASS
	fi
	reap_leftovers "$scratch" >>"$log"
	is_static "$mode" "$t" && note="$note (static: ${STATIC_ONLY[$t]%%,*})"
	if [ -n "$rerun" ]; then
		[ "$st" = PASS ] && st=FLAKY
		note="$note ($rerun)"
	fi
	rm -rf "$scratch"
	echo "$t $st $status $secs" >"$d/results.d/$t"
	printf '[%s] %-28s %-7s %6ss  exit %s%s\n' "$mode" "$t" "$st" "$secs" "$status" "$note"
}

# Failed and timed-out tests again, one at a time, until one run passes.
rerun_failures() {
	local mode=$1 d=$WORK/$1 t k name st status secs first
	[ "$RERUNS" -gt 0 ] || return 0
	for t in "${TESTS[@]}"; do
		read -r name st status secs <"$d/results.d/$t"
		case $st in FAIL|TIMEOUT) ;; *) continue ;; esac
		first="$st, exit $status, in ${secs}s"
		mv "$d/logs/$t.log" "$d/logs/$t.first.log"
		for k in $(seq 1 "$RERUNS"); do
			run_one "$mode" "$t" "rerun $k/$RERUNS; first run: $first, logs/$t.first.log"
			read -r name st status secs <"$d/results.d/$t"
			[ "$st" = FLAKY ] && break
		done
	done
}

run_mode() {
	local mode=$1 d=$WORK/$1 t
	rm -rf "$d/scratch" "$d/results.d"
	[ ${#ONLY[@]} -gt 0 ] || rm -rf "$d/logs"
	mkdir -p "$d/logs" "$d/scratch" "$d/results.d"
	LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
	log "[$mode] running ${#TESTS[@]} tests (timeout ${TIMEOUT}s, $JOBS at a time; load average $LOAD_START)"
	for t in "${TESTS[@]}"; do
		if [ "$mode" != baseline ] && [ -n "${STATIC_ONLY[$t]+x}" ]; then
			echo "$t EXCLUDED - 0" >"$d/results.d/$t"
			printf '[%s] %-28s %-7s  static-only: %s\n' "$mode" "$t" EXCLUDED "${STATIC_ONLY[$t]}"
		elif [ -f "$d/build/$t.failed" ]; then
			echo "$t BUILDFAIL - 0" >"$d/results.d/$t"
			printf '[%s] %-28s %-7s  %s (%s)\n' "$mode" "$t" BUILDFAIL "$(cat "$d/build/$t.failed")" "$d/build/$t.log"
		else
			while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
			run_one "$mode" "$t" &
		fi
	done
	wait
	LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
	rerun_failures "$mode"
	rm -rf "$d/scratch"
	detach_our_loops; unmount_ours; remove_tmp_leftovers
	for t in "${TESTS[@]}"; do cat "$d/results.d/$t"; done >"$d/results.run"
	rm -rf "$d/results.d"
	# results: every test's latest result (a run of a few tests updates theirs).
	if [ ${#ONLY[@]} -gt 0 ] && [ -f "$d/results" ]; then
		awk 'NR == FNR { seen[$1] = 1; print; next } !($1 in seen)' \
			"$d/results.run" "$d/results" >"$d/results.new" && mv "$d/results.new" "$d/results"
	else
		cp "$d/results.run" "$d/results"
	fi
}

TOTAL_PASS=0
TOTAL_FAIL=0
REGRESSIONS=0
SUMMARY_LINES=()

summarize_mode() {
	local mode=$1 d=$WORK/$1 secs=$2 name st status s
	local -a pass=() skip=() fail=() tout=() bfail=() excl=() stat=() regr=() flaky=()
	while read -r name st status s; do
		case $st in
		PASS) pass+=("$name"); is_static "$mode" "$name" && stat+=("$name") ;;
		FLAKY) pass+=("$name"); flaky+=("$name") ;;
		SKIP) skip+=("$name") ;;
		FAIL) fail+=("$name") ;;
		TIMEOUT) tout+=("$name") ;;
		BUILDFAIL) bfail+=("$name") ;;
		EXCLUDED) excl+=("$name") ;;
		esac
	done <"$d/results.run"
	local np=${#pass[@]} nf=$((${#fail[@]} + ${#tout[@]} + ${#bfail[@]}))
	echo
	echo "== [$mode] $np passed, $nf failed, ${#skip[@]} skipped, ${#excl[@]} excluded ($secs) =="
	echo "load average (1/5/15 min) at start of run: $LOAD_START, after first pass: $LOAD_END; nproc $NPROC"
	[ ${#stat[@]} -gt 0 ] && echo "passed linked statically (static-only tests): ${#stat[@]} (${stat[*]})"
	[ ${#flaky[@]} -gt 0 ] && echo "flaky (failed, then passed when re-run alone; counted as passed): ${#flaky[@]} (${flaky[*]})"
	[ ${#fail[@]} -gt 0 ] && echo "failed: ${#fail[@]} (${fail[*]})"
	[ ${#tout[@]} -gt 0 ] && echo "timed out: ${#tout[@]} (${tout[*]})"
	[ ${#bfail[@]} -gt 0 ] && echo "build failures: ${#bfail[@]} (${bfail[*]})"
	[ ${#skip[@]} -gt 0 ] && echo "skipped: ${#skip[@]} (${skip[*]})"
	[ ${#excl[@]} -gt 0 ] && echo "excluded (static-only): ${#excl[@]} (${excl[*]})"
	for name in "${fail[@]}" "${tout[@]}"; do
		echo "---- [$mode] $name: last lines of $d/logs/$name.log ----"
		tail -n 12 "$d/logs/$name.log"
	done
	for name in "${flaky[@]}"; do
		echo "---- [$mode] $name (flaky): last lines of its first run, $d/logs/$name.first.log ----"
		tail -n 4 "$d/logs/$name.first.log"
	done
	for name in "${bfail[@]}"; do
		echo "---- [$mode] $name: $(cat "$d/build/$name.failed"); first errors in $d/build/$name.log ----"
		grep -m 8 -E 'error|undefined|check:' "$d/build/$name.log"
	done
	# Regressions: pass in baseline, not here.
	local line=""
	if [ "$mode" != baseline ] && [ -f "$WORK/baseline/results" ]; then
		while read -r name st status s; do
			[ "$st" = PASS ] || [ "$st" = FLAKY ] || continue
			[ -n "${STATIC_ONLY[$name]+x}" ] && continue
			s=$(awk -v n="$name" '$1 == n { print $2 }' "$d/results.run")
			case $s in ""|PASS|FLAKY) ;; *) regr+=("$name:$s") ;; esac
		done <"$WORK/baseline/results"
		echo "regressions vs baseline ($(date -r "$WORK/baseline/results" '+%F %T')): ${#regr[@]}${regr:+ (${regr[*]})}"
		line=", ${#regr[@]} regressions vs baseline"
		REGRESSIONS=$((REGRESSIONS + ${#regr[@]}))
	fi
	echo "[$mode] $np passed, $nf failed"
	SUMMARY_LINES+=("[$mode] $np passed, $nf failed, ${#skip[@]} skipped, ${#excl[@]} excluded$line")
	TOTAL_PASS=$((TOTAL_PASS + np))
	TOTAL_FAIL=$((TOTAL_FAIL + nf))
}

# ---------------------------------------------------------------------------
# Main

for mode in "${MODES[@]}"; do
	case $mode in liburing-header|rsuring-header) [ -n "$RS_LIB" ] || prepare_rsuring_lib ;; esac
done
[ "$MODE" = rsuring-header ] || [ "$MODE" = all ] && [ ! -f "$REPO/include/liburing.h" ] &&
	die "$REPO/include/liburing.h does not exist"

copy_checkout
build_liburing
log "liburing ${UP_VERSION:-?} built: $UP_SO"
set_flags

mapfile -t ALL_TESTS < <(list_tests)
[ ${#ALL_TESTS[@]} -gt 0 ] || die "could not list the tests of $TREE/test/Makefile"
if [ ${#ONLY[@]} -gt 0 ]; then
	for t in "${ONLY[@]}"; do
		printf '%s\n' "${ALL_TESTS[@]}" | grep -qxF "$t" || die "no such test: $t"
	done
	TESTS=("${ONLY[@]}")
else
	TESTS=("${ALL_TESTS[@]}")
fi
# Build exec-target too: sqpoll-exec and timeout exec ./exec-target.t.
BUILD=("${TESTS[@]}")
[[ " ${BUILD[*]} " == *" exec-target "* ]] || BUILD+=(exec-target)
log "${#ALL_TESTS[@]} tests in test/Makefile; running ${#TESTS[@]}"

note_tmp_before
trap 'detach_our_loops; unmount_ours' EXIT

for mode in "${MODES[@]}"; do
	start=$(date +%s)
	build_mode "$mode"
	built=$(date +%s)
	run_mode "$mode"
	summarize_mode "$mode" "build $((built - start))s, run $(($(date +%s) - built))s"
done

echo
echo "== summary (work dir $WORK) =="
for l in "${SUMMARY_LINES[@]}"; do echo "$l"; done
echo "$TOTAL_PASS passed, $TOTAL_FAIL failed"
if [ "$MODE" = baseline ]; then [ "$TOTAL_FAIL" -eq 0 ]; else [ "$REGRESSIONS" -eq 0 ]; fi
