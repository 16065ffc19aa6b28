# shellcheck shell=bash
# liburing-runner.sh — what scripts/compat-suite.sh and scripts/upstream-suite.sh
# share: building liburing's test/ programs one by one and running them with
# the rules of liburing's test/runtests.sh.  Sourced, never run.
#
# The sourcing script sets, before it calls anything here:
#   SUITE      its name: log prefix and dmesg marker (compat-suite, upstream-suite)
#   WORK       the work dir (absolute); <mode>/ dirs live under it
#   TIMEOUT    per-test timeout in seconds
#   TMP_NAMES, TMP_GLOBS   fixed /tmp paths the tests create (globs unquoted)
# and, before build_tests, the globals compile_test reads (see there), and
# defines check_binary MODE TEST, called on every binary that links.

# ---------------------------------------------------------------------------
# General

# as_root, apt_update, ensure_deb_src, ...
# shellcheck source=common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib-common.sh"

log() { printf '%s\n' "$SUITE: $*" >&2; }
die() { log "error: $*"; exit 2; }
# The sourcing script's header comment, up to its first empty line.
usage() { sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[-1]}"; }

# common_opt ARG...: the options both suites take, from the first ARG:
# --lib PATH, --jobs N, --help, -- TEST..., and an unknown option (an error).
# Sets SHIFT to the number of ARGs it took, 0 when the first is no option.
# shellcheck disable=SC2034 # LIB, JOBS, SHIFT are the caller's
common_opt() {
	SHIFT=1
	case "$1" in
	--lib) LIB=${2:?--lib needs a path}; SHIFT=2 ;;
	--lib=*) LIB=${1#*=} ;;
	--jobs|-j) JOBS=${2:?--jobs needs a number}; SHIFT=2 ;;
	--jobs=*) JOBS=${1#*=} ;;
	-h|--help) usage; exit 0 ;;
	--) shift; ONLY+=("$@"); SHIFT=$(($# + 1)) ;;
	-*) usage >&2; die "unknown option $1" ;;
	*) SHIFT=0 ;;
	esac
}

# wait_slot N [PID...]: wait until fewer than N background jobs run, not
# counting the jobs PID... (those run_tests starts aside).
wait_slot() {
	local n=$1
	shift
	while [ "$(jobs -rp | grep -vxF -f <(printf '%s\n' "$@" 0) | wc -l)" -ge "$n" ]; do wait -n; done
}

# check_soname LIB: die unless LIB exists and has SONAME liburing.so.2.
check_soname() {
	local lib=$1 soname
	[ -f "$lib" ] || die "rsuring library not found: $lib (build it with cargo build --release, or pass --lib)"
	soname=$(readelf -d "$lib" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
	[ "$soname" = liburing.so.2 ] || die "$lib has SONAME '${soname:-none}', expected liburing.so.2"
}

# list_tests ROOT: test names from ROOT/test/Makefile's test_srcs (its
# conditionals evaluated), without .c/.cc, in order, once each.
list_tests() {
	local srcs
	# shellcheck disable=SC2016 # $(test_srcs) is make's, not the shell's
	srcs=$(make -s --no-print-directory -C "$1/test" -f Makefile \
		-f <(printf 'print-test-srcs:\n\t@echo $(test_srcs)\n') print-test-srcs) || return 1
	# shellcheck disable=SC2086 # split the make variable into words
	printf '%s\n' $srcs | sed -E 's/\.(c|cc)$//' | awk 'NF && !seen[$0]++'
}

# check_only NAME...: die unless every name of ONLY is one of NAME...
check_only() {
	local t
	for t in "${ONLY[@]}"; do
		printf '%s\n' "$@" | grep -qxF "$t" || die "no such test: $t"
	done
}

# ---------------------------------------------------------------------------
# Build

# set_test_flags ROOT OPT: CPPFLAGS_T, CFLAGS_T, CXXFLAGS_T as ROOT/test/Makefile
# (optimisation OPT), minus its -I (the header is the mode's), from ROOT's
# config-host.h/.mak.  The caller may append to CPPFLAGS_T.
set_test_flags() {
	local root=$1 opt=$2
	local -a xcflags=(-Wno-unused-parameter -Wno-sign-compare)
	grep -q '^CONFIG_HAVE_STRINGOP_OVERFLOW=y' "$root/config-host.mak" && xcflags+=(-Wstringop-overflow=0)
	grep -q '^CONFIG_HAVE_ARRAY_BOUNDS=y' "$root/config-host.mak" && xcflags+=(-Warray-bounds=0)
	CPPFLAGS_T=(-D_GNU_SOURCE -D__SANE_USERSPACE_TYPES__ -include "$root/config-host.h")
	CFLAGS_T=(-g "$opt" -Wall -Wextra "${xcflags[@]}" -DLIBURING_BUILD_TEST)
	CXXFLAGS_T=(-g "$opt" -Wall -Wextra "${xcflags[@]}" -std=c++11 -DLIBURING_BUILD_TEST)
}

# compile_test MODE TEST LINK...: build <mode>/bin/TEST.t from TEST_SRC/TEST.c
# (or .cc) and <mode>/build/helpers.o, with CPPFLAGS_T, MODE_INC_FLAGS and
# CFLAGS_T (CXXFLAGS_T), linked with LINK...; then check_binary MODE TEST.
# On failure: <mode>/build/TEST.failed holds the reason, no binary is left.
compile_test() {
	local mode=$1 t=$2 d=$WORK/$1 src cc
	local log=$d/build/$t.log
	local -a flags
	shift 2
	rm -f "$d/build/$t.failed" "$d/bin/$t.t"
	if [ -f "$TEST_SRC/$t.c" ]; then src=$TEST_SRC/$t.c; cc=${CC:-gcc}; flags=("${CFLAGS_T[@]}")
	elif [ -f "$TEST_SRC/$t.cc" ]; then src=$TEST_SRC/$t.cc; cc=${CXX:-g++}; flags=("${CXXFLAGS_T[@]}")
	else
		echo "no source for $t" >"$log"; echo "no source" >"$d/build/$t.failed"; return
	fi
	if ! "$cc" "${CPPFLAGS_T[@]}" "${MODE_INC_FLAGS[@]}" "${flags[@]}" -MD -MF "$d/build/$t.d" \
		-o "$d/bin/$t.t" "$src" "$d/build/helpers.o" "$@" -lpthread >"$log" 2>&1; then
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

# check_linkage BINARY STATIC EXPECT: BINARY needs no liburing when STATIC is
# 1, else NEEDs liburing.so.2 and ldd resolves it to EXPECT.
check_linkage() {
	local bin=$1 static=$2 expect=$3 needed got
	needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(liburing[^]]*\)\].*/\1/p')
	if [ "$static" = 1 ]; then
		[ -z "$needed" ] && return 0
		echo "check: static build still needs $needed"; return 1
	fi
	[ "$needed" = liburing.so.2 ] || { echo "check: NEEDED '${needed:-none}', expected liburing.so.2"; return 1; }
	got=$(ldd "$bin" | awk '$1 == "liburing.so.2" { print $3 }')
	if [ -z "$got" ] || [ "$(readlink -f "$got")" != "$(readlink -f "$expect")" ]; then
		echo "check: liburing.so.2 resolves to '${got:-nothing}', expected $expect"; return 1
	fi
}

# build_tests MODE JOBS TEST...: helpers.o, then each TEST with compile_one
# MODE TEST (the caller's), JOBS at a time.  build_tests_failed MODE TEST...
# marks every TEST as failed to build with a reason.
build_tests() {
	local mode=$1 jobs=$2 d=$WORK/$1 t
	shift 2
	if ! ${CC:-gcc} "${CPPFLAGS_T[@]}" "${MODE_INC_FLAGS[@]}" "${CFLAGS_T[@]}" -c \
		-o "$d/build/helpers.o" "$TEST_SRC/helpers.c" >"$d/build/helpers.log" 2>&1; then
		log "[$mode] test/helpers.c does not compile:"; head -n 20 "$d/build/helpers.log" >&2
		build_tests_failed "$mode" "helpers.c does not compile, see build/helpers.log" "$@"
		return
	fi
	for t in "$@"; do
		wait_slot "$jobs"
		compile_one "$mode" "$t" &
	done
	wait
}

build_tests_failed() {
	local d=$WORK/$1 reason=$2 t
	shift 2
	for t in "$@"; do echo "$reason" >"$d/build/$t.failed"; done
}

# ---------------------------------------------------------------------------
# Run

# runtests.sh checks dmesg after a passing test when run as root.
DO_KMSG=0
if [ "$(id -u)" = 0 ] && [ -w /dev/kmsg ] && dmesg >/dev/null 2>&1; then DO_KMSG=1; fi

# As runtests.sh's _check_dmesg: a kernel splat logged since the marker fails the test.
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
	# One find, not a readlink process per process of the machine: this
	# runs after every test (-lname: $dir holds no glob characters).
	while read -r p; do
		p=${p#/proc/}
		pids+=("${p%/cwd}")
	done < <(find /proc -mindepth 2 -maxdepth 2 -name cwd -lname "$dir" 2>/dev/null)
	[ ${#pids[@]} -eq 0 ] && return 0
	echo "left processes behind: ${pids[*]} (killed)"
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	sleep 0.2
}

# new_scratch DIR TEST: an empty <mode>/scratch/TEST, with ./exec-target.t
# (sqpoll-exec and timeout exec it from their cwd).
new_scratch() {
	local d=$1 scratch=$1/scratch/$2
	rm -rf "$scratch"; mkdir -p "$scratch"
	[ -f "$d/bin/exec-target.t" ] && ln -s "$d/bin/exec-target.t" "$scratch/exec-target.t"
	[ -n "$SUITE_UID" ] && chown "$SUITE_UID:$SUITE_UID" "$scratch"
	return 0
}

# How each test is started. RSURING_SUITE_USER=UID runs every test as that
# user (gid = uid, no supplementary groups, no capabilities: setpriv), the
# kind of process RSURING_SQPOLL=1 serves; RSURING_SUITE_CPUS=LIST pins the
# tests to those CPUs (taskset), e.g. 0, leaving CPU 1 to pollers
# (RSURING_SQPOLL_CPUS=1). Compare such a run with --baseline run the same way.
SUITE_UID=${RSURING_SUITE_USER:-}
RUN_WRAP=()
if [ -n "${RSURING_SUITE_CPUS:-}" ]; then
	RUN_WRAP+=(taskset -c "$RSURING_SUITE_CPUS")
fi
if [ -n "$SUITE_UID" ]; then
	[[ "$SUITE_UID" =~ ^[0-9]+$ ]] || { echo "RSURING_SUITE_USER: not a numeric uid: $SUITE_UID" >&2; exit 2; }
	RUN_WRAP+=(setpriv "--reuid=$SUITE_UID" "--regid=$SUITE_UID" --clear-groups --)
fi

# exec_test MODE TEST: run <mode>/bin/TEST.t once as runtests.sh does
# (timeout -s INT -k T T, exit 77 = skip, then the dmesg check), output in
# <mode>/logs/TEST.log.  Sets RUN_STATUS (exit status), RUN_ST (PASS, SKIP,
# FAIL or TIMEOUT), RUN_SECS and RUN_NOTE.  The scratch dir stays.
# shellcheck disable=SC2034 # RUN_* are for the caller
exec_test() {
	local mode=$1 t=$2 d=$WORK/$1 t0 t1 marker
	local log=$d/logs/$t.log scratch=$d/scratch/$t
	new_scratch "$d" "$t"
	marker="$SUITE $mode: running test $t $$-$RANDOM:"
	[ "$DO_KMSG" = 1 ] && echo "$marker" >/dev/kmsg 2>/dev/null
	RUN_NOTE=""
	t0=$(date +%s.%N)
	# No exec: if the test dies of a signal, this subshell reports it
	# ("Aborted") into the log rather than on the console.
	(cd "$scratch" && timeout -s INT -k "$TIMEOUT" "$TIMEOUT" "${RUN_WRAP[@]}" "$d/bin/$t.t"; exit $?) \
		</dev/null >"$log" 2>&1
	RUN_STATUS=$?
	t1=$(date +%s.%N)
	RUN_SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	if [ "$RUN_STATUS" -eq 124 ] ||
		{ [ "$RUN_STATUS" -eq 137 ] && awk -v s="$RUN_SECS" -v t="$TIMEOUT" 'BEGIN { exit !(s >= t) }'; }; then
		RUN_ST=TIMEOUT
	elif [ "$RUN_STATUS" -eq 77 ]; then RUN_ST=SKIP
	elif [ "$RUN_STATUS" -ne 0 ]; then RUN_ST=FAIL
	elif ! dmesg_clean "$marker" "$d/logs/$t.dmesg"; then
		RUN_ST=FAIL; RUN_NOTE=" (kernel warning in dmesg, see logs/$t.dmesg)"
	else RUN_ST=PASS
	fi
	reap_leftovers "$scratch" >>"$log"
}

# record_result MODE TEST ST STATUS SECS NOTE: the result line, on stdout and
# in <mode>/results.d/TEST ("name status exit secs"); removes the scratch dir.
record_result() {
	local d=$WORK/$1 t=$2
	rm -rf "$d/scratch/$t"
	echo "$t $3 $4 $5" >"$d/results.d/$t"
	printf '[%s] %-28s %-7s %6ss  exit %s%s\n' "$1" "$t" "$3" "$5" "$4" "$6"
}

# run_tests MODE JOBS TEST...: each TEST that excluded_reason MODE TEST does
# not name a reason for and that built, with run_one MODE TEST (the caller's),
# JOBS at a time; EXCLUDED and BUILDFAIL results for the others. The tests
# that runs_aside MODE TEST (the caller's, optional) is true for start
# first, beside the others and outside the JOBS count: tests that only wait
# until the timeout (they hang with liburing too), so that their wait does
# not add to the run's.
run_tests() {
	local mode=$1 jobs=$2 d=$WORK/$1 t reason
	local -a aside=() aside_pids=()
	shift 2
	for t in "$@"; do
		if reason=$(excluded_reason "$mode" "$t"); then
			echo "$t EXCLUDED - 0" >"$d/results.d/$t"
			printf '[%s] %-28s %-7s  %s\n' "$mode" "$t" EXCLUDED "$reason"
		elif [ -f "$d/build/$t.failed" ]; then
			echo "$t BUILDFAIL - 0" >"$d/results.d/$t"
			printf '[%s] %-28s %-7s  %s, see %s\n' "$mode" "$t" BUILDFAIL "$(cat "$d/build/$t.failed")" "$d/build/$t.log"
		elif declare -F runs_aside >/dev/null && runs_aside "$mode" "$t"; then
			aside+=("$t")
		fi
	done
	for t in "${aside[@]}"; do
		log "[$mode] $t runs beside the others (it waits until the timeout)"
		run_one "$mode" "$t" &
		aside_pids+=("$!")
	done
	for t in "$@"; do
		[ -f "$d/results.d/$t" ] && continue
		[[ " ${aside[*]} " == *" $t "* ]] && continue
		wait_slot "$jobs" "${aside_pids[@]}"
		run_one "$mode" "$t" &
	done
	wait
}

# collect_results MODE FILE TEST...: the results of TEST..., in order, into
# <mode>/FILE; removes results.d.
collect_results() {
	local d=$WORK/$1 file=$2 t
	shift 2
	for t in "$@"; do cat "$d/results.d/$t"; done >"$d/$file"
	rm -rf "$d/results.d"
}

# ---------------------------------------------------------------------------
# Clean-up: loop devices backed by files in WORK, mounts under it, the fixed
# /tmp files the tests create.  No test should leave any; a safety net.

detach_our_loops() {
	command -v losetup >/dev/null || return 0
	losetup -n -l -O NAME,BACK-FILE 2>/dev/null | while read -r dev back; do
		case "$back" in
		"$WORK"/*) log "detaching leftover loop device $dev ($back)"; as_root losetup -d "$dev" ;;
		esac
	done
}

unmount_ours() {
	awk '{ print $2 }' /proc/mounts | while read -r m; do
		case "$m" in "$WORK"/*) log "unmounting $m"; as_root umount -l "$m" ;; esac
	done
}

# note_tmp_before once before the first mode: what exists then is kept.
declare -A TMP_BEFORE=()
note_tmp_before() {
	local f
	# shellcheck disable=SC2068 # TMP_GLOBS are globs
	for f in "${TMP_NAMES[@]}" ${TMP_GLOBS[@]}; do
		[ -e "$f" ] && TMP_BEFORE[$f]=1
	done
}

remove_tmp_leftovers() {
	local f
	# shellcheck disable=SC2068 # TMP_GLOBS are globs
	for f in "${TMP_NAMES[@]}" ${TMP_GLOBS[@]}; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		[ -n "${TMP_BEFORE[$f]+x}" ] || rm -rf "$f"
	done
}

# cleanup_after_mode MODE: after a mode's tests have run.
cleanup_after_mode() {
	rm -rf "$WORK/$1/scratch"
	detach_our_loops; unmount_ours; remove_tmp_leftovers
}

# run_modes MODE...: per MODE, the caller's build_mode MODE, run_mode MODE and
# summarize_mode MODE START BUILT END (seconds since the epoch); the clean-up
# also on exit.
run_modes() {
	local mode start built
	note_tmp_before
	trap 'detach_our_loops; unmount_ours' EXIT
	for mode in "$@"; do
		start=$(date +%s)
		build_mode "$mode"
		built=$(date +%s)
		run_mode "$mode"
		summarize_mode "$mode" "$start" "$built" "$(date +%s)"
	done
}

# ---------------------------------------------------------------------------
# Summary

# read_results FILE: the names in FILE by status, into the arrays R_PASS,
# R_FLAKY, R_SKIP, R_FAIL, R_TOUT, R_BFAIL, R_XFAIL, R_XPASS, R_EXCL.
read_results() {
	local name st
	R_PASS=() R_FLAKY=() R_SKIP=() R_FAIL=() R_TOUT=() R_BFAIL=() R_XFAIL=() R_XPASS=() R_EXCL=()
	while read -r name st _; do
		case $st in
		PASS) R_PASS+=("$name") ;;
		FLAKY) R_FLAKY+=("$name") ;;
		SKIP) R_SKIP+=("$name") ;;
		FAIL) R_FAIL+=("$name") ;;
		TIMEOUT) R_TOUT+=("$name") ;;
		BUILDFAIL) R_BFAIL+=("$name") ;;
		XFAIL) R_XFAIL+=("$name") ;;
		XPASS) R_XPASS+=("$name") ;;
		EXCLUDED) R_EXCL+=("$name") ;;
		esac
	done <"$1"
}

# list_line LABEL NAME...: "LABEL: N (NAME...)", nothing without names.
list_line() {
	[ $# -gt 1 ] && echo "$1: $(($# - 1)) (${*:2})"
	return 0
}

# print_failure_lists: the failed, timed-out and build-failure lines of
# the R_ arrays.
print_failure_lists() {
	list_line "failed" "${R_FAIL[@]}"
	list_line "timed out" "${R_TOUT[@]}"
	list_line "build failures" "${R_BFAIL[@]}"
}
