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
SUITE=upstream-suite
# shellcheck source-path=SCRIPTDIR source=lib-liburing-runner.sh
. "$REPO/scripts/lib-liburing-runner.sh"
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

while [ $# -gt 0 ]; do
	case "$1" in
	--mode) MODE=${2:?--mode needs a value}; shift 2 ;;
	--mode=*) MODE=${1#*=}; shift ;;
	--reruns) RERUNS=${2:?--reruns needs a number}; shift 2 ;;
	--reruns=*) RERUNS=${1#*=}; shift ;;
	--timeout) TIMEOUT=${2:?--timeout needs seconds}; shift 2 ;;
	--timeout=*) TIMEOUT=${1#*=}; shift ;;
	--work) WORK=${2:?--work needs a dir}; shift 2 ;;
	--work=*) WORK=${1#*=}; shift ;;
	*)
		common_opt "$@"
		if [ "$SHIFT" = 0 ]; then
			if [ -z "$CHECKOUT" ]; then CHECKOUT=$1; else ONLY+=("${1%.t}"); fi
			SHIFT=1
		fi
		shift "$SHIFT" ;;
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

RS_LIB=""
prepare_rsuring_lib() {
	local d=$WORK/lib-rsuring
	check_soname "$LIB"
	rm -rf "$d"; mkdir -p "$d"
	cp "$(readlink -f "$LIB")" "$d/librsuring.so" || die "cannot copy $LIB"
	ln -s librsuring.so "$d/liburing.so.2"
	ln -s librsuring.so "$d/liburing.so"
	RS_LIB=$d/librsuring.so
	log "library under test: $(readlink -f "$LIB") (sha256 $(sha256sum "$RS_LIB" | cut -c1-16), snapshot $RS_LIB)"
}

# ---------------------------------------------------------------------------
# Build the tests of one mode

# Per mode: MODE_INC (header dir), MODE_LIBDIR, MODE_EXPECT_LIB (what ldd must find).
mode_setup() {
	case "$1" in
	baseline) MODE_INC=$TREE/src/include; MODE_LIBDIR=$WORK/lib-baseline; MODE_EXPECT_LIB=$UP_SO ;;
	liburing-header) MODE_INC=$TREE/src/include; MODE_LIBDIR=$WORK/lib-rsuring; MODE_EXPECT_LIB=$RS_LIB ;;
	rsuring-header) MODE_INC=$REPO/include; MODE_LIBDIR=$WORK/lib-rsuring; MODE_EXPECT_LIB=$RS_LIB ;;
	esac
	MODE_INC_FLAGS=(-I"$MODE_INC")
}

is_static() { [ "$1" = baseline ] && [ -n "${STATIC_ONLY[$2]+x}" ]; }

# compile_one MODE TEST -> <mode>/bin/TEST.t, or <mode>/build/TEST.failed with a reason.
compile_one() {
	if is_static "$1" "$2"; then
		compile_test "$1" "$2" "$TREE/src/liburing.a"
	else
		compile_test "$1" "$2" -L"$MODE_LIBDIR" -luring -Wl,-rpath,"$MODE_LIBDIR" -Wl,--disable-new-dtags
	fi
}

# check_binary MODE TEST: compiled against the mode's header only, linked to its library.
check_binary() {
	local mode=$1 t=$2 dep=$WORK/$1/build/$2.d static=0
	# exec-target.c includes nothing from liburing.
	if grep -q 'liburing\.h' "$dep" && ! grep -qF "$MODE_INC/liburing.h" "$dep"; then
		echo "check: not compiled against $MODE_INC/liburing.h"; return 1
	fi
	if [ "$mode" = rsuring-header ] && grep -qE "$TREE/src/include/|/usr/(local/)?include/liburing" "$dep"; then
		echo "check: uses a liburing header that is not rsuring's: $(tr ' \\' '\n\n' <"$dep" |
			grep -E "$TREE/src/include/|/usr/(local/)?include/liburing" | sort -u | tr '\n' ' ')"
		return 1
	fi
	is_static "$mode" "$t" && static=1
	check_linkage "$WORK/$mode/bin/$t.t" "$static" "$MODE_EXPECT_LIB"
}

build_mode() {
	local mode=$1 d=$WORK/$1 t
	rm -rf "$d/bin" "$d/build"; mkdir -p "$d/bin" "$d/build"
	mode_setup "$mode"
	log "[$mode] building ${#BUILD[@]} tests against $MODE_INC/liburing.h, library $MODE_EXPECT_LIB ($NPROC at a time)"
	local -a build=()
	for t in "${BUILD[@]}"; do
		excluded_reason "$mode" "$t" >/dev/null || build+=("$t")
	done
	build_tests "$mode" "$NPROC" "${build[@]}"
}

# ---------------------------------------------------------------------------
# Run

# run_one MODE TEST [RERUN-NOTE]: one result line on stdout and in
# <mode>/results.d/TEST ("name status exit secs").
run_one() {
	local mode=$1 t=$2 rerun=${3:-} st note
	exec_test "$mode" "$t"
	st=$RUN_ST; note=$RUN_NOTE
	is_static "$mode" "$t" && note="$note (static: ${STATIC_ONLY[$t]%%,*})"
	if [ -n "$rerun" ]; then
		[ "$st" = PASS ] && st=FLAKY
		note="$note ($rerun)"
	fi
	record_result "$mode" "$t" "$st" "$RUN_STATUS" "$RUN_SECS" "$note"
}

excluded_reason() {
	[ "$1" != baseline ] && [ -n "${STATIC_ONLY[$2]+x}" ] && echo "static-only: ${STATIC_ONLY[$2]}"
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
	local mode=$1 d=$WORK/$1
	rm -rf "$d/scratch" "$d/results.d"
	[ ${#ONLY[@]} -gt 0 ] || rm -rf "$d/logs"
	mkdir -p "$d/logs" "$d/scratch" "$d/results.d"
	LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
	log "[$mode] running ${#TESTS[@]} tests (timeout ${TIMEOUT}s, $JOBS at a time; load average $LOAD_START)"
	run_tests "$mode" "$JOBS" "${TESTS[@]}"
	LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
	rerun_failures "$mode"
	cleanup_after_mode "$mode"
	collect_results "$mode" results.run "${TESTS[@]}"
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

# summarize_mode MODE START BUILT END (seconds since the epoch)
summarize_mode() {
	local mode=$1 d=$WORK/$1 secs="build $(($3 - $2))s, run $(($4 - $3))s" name st status s
	local -a stat=() regr=()
	read_results "$d/results.run"
	for name in "${R_PASS[@]}"; do is_static "$mode" "$name" && stat+=("$name"); done
	local np=$((${#R_PASS[@]} + ${#R_FLAKY[@]})) nf=$((${#R_FAIL[@]} + ${#R_TOUT[@]} + ${#R_BFAIL[@]}))
	echo
	echo "== [$mode] $np passed, $nf failed, ${#R_SKIP[@]} skipped, ${#R_EXCL[@]} excluded ($secs) =="
	echo "load average (1/5/15 min) at start of run: $LOAD_START, after first pass: $LOAD_END; nproc $NPROC"
	list_line "passed linked statically (static-only tests)" "${stat[@]}"
	list_line "flaky (failed, then passed when re-run alone; counted as passed)" "${R_FLAKY[@]}"
	print_failure_lists
	list_line "skipped" "${R_SKIP[@]}"
	list_line "excluded (static-only)" "${R_EXCL[@]}"
	for name in "${R_FAIL[@]}" "${R_TOUT[@]}"; do
		echo "---- [$mode] $name: last lines of $d/logs/$name.log ----"
		tail -n 12 "$d/logs/$name.log"
	done
	for name in "${R_FLAKY[@]}"; do
		echo "---- [$mode] $name (flaky): last lines of its first run, $d/logs/$name.first.log ----"
		tail -n 4 "$d/logs/$name.first.log"
	done
	for name in "${R_BFAIL[@]}"; do
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
	SUMMARY_LINES+=("[$mode] $np passed, $nf failed, ${#R_SKIP[@]} skipped, ${#R_EXCL[@]} excluded$line")
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
set_test_flags "$TREE" -O3
CPPFLAGS_T+=(-D_LARGEFILE_SOURCE -D_FILE_OFFSET_BITS=64)
TEST_SRC=$TREE/test

mapfile -t ALL_TESTS < <(list_tests "$TREE")
[ ${#ALL_TESTS[@]} -gt 0 ] || die "could not list the tests of $TREE/test/Makefile"
if [ ${#ONLY[@]} -gt 0 ]; then
	check_only "${ALL_TESTS[@]}"
	TESTS=("${ONLY[@]}")
else
	TESTS=("${ALL_TESTS[@]}")
fi
# Build exec-target too: sqpoll-exec and timeout exec ./exec-target.t.
BUILD=("${TESTS[@]}")
[[ " ${BUILD[*]} " == *" exec-target "* ]] || BUILD+=(exec-target)
log "${#ALL_TESTS[@]} tests in test/Makefile; running ${#TESTS[@]}"

run_modes "${MODES[@]}"

echo
echo "== summary (work dir $WORK) =="
for l in "${SUMMARY_LINES[@]}"; do echo "$l"; done
echo "$TOTAL_PASS passed, $TOTAL_FAIL failed"
if [ "$MODE" = baseline ]; then [ "$TOTAL_FAIL" -eq 0 ]; else [ "$REGRESSIONS" -eq 0 ]; fi
