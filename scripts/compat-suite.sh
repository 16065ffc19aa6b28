#!/usr/bin/env bash
# compat-suite.sh — run Debian's liburing 2.3 test suite against rsuring.
#
# Usage:
#   scripts/compat-suite.sh [--lib PATH] [--headers debian|rsuring|both]
#                           [--baseline] [--jobs N] [TEST...]
#
# Modes (each builds liburing 2.3's test/ programs and runs them):
#   debian    compiled against Debian's installed liburing 2.3 header
#             (/usr/include/liburing.h, package liburing-dev) -- the way an
#             existing binary was built -- but linked to rsuring.
#   rsuring   compiled against rsuring's include/ (source compatibility),
#             linked to rsuring.  A test that fails to build here is a
#             compatibility failure of our header.
#   baseline  (--baseline) compiled against Debian's header and linked to
#             Debian's own liburing.so.2: what passes with real liburing on
#             this machine.
# Without --baseline, --headers defaults to "both".  With --baseline and no
# --headers, only the baseline runs (useful before librsuring.so exists).
#
#   --lib PATH   librsuring.so to test (default target/release/librsuring.so)
#   --jobs N     run N tests at once (default 1; tests time things and a few
#                use fixed ports, so >1 may add noise).  Builds always use
#                every CPU.
#   TEST...      only these tests (names without .c/.t), for debugging.
#
# Environment:
#   RSURING_COMPAT_DIR      work dir (default <repo>/target/compat)
#   RSURING_COMPAT_TIMEOUT  per-test timeout in seconds (default 60, as
#                           liburing's runtests.sh)
#   Anything else (RSURING_SQPOLL=1, RSURING_STATS=1, ...) passes through to
#   the tests, so the suite can be run under rsuring's environment knobs.
#
# Output: one line per test, a summary per mode, then a final line
#   "N passed, M failed"
# where N counts passing tests (all modes run), and M counts unexpected
# failures + timeouts + build failures.  Skips (exit 77), expected failures
# and excluded tests are reported on their own lines and are in neither.
# Exit status: 0 when M = 0, 1 when M > 0, 2 when the suite could not be set
# up (no source, no library, ...).
#
# Layout of the work dir:
#   src/liburing-2.3/         Debian source (apt-get source liburing), configured
#   lib/                      liburing.so.2 / liburing.so -> <abs>/librsuring.so
#   <mode>/bin/<test>.t       built tests
#   <mode>/build/<test>.log   compiler output
#   <mode>/logs/<test>.log    test output (stdout+stderr)
#   <mode>/results            one "name status seconds" line per test
#   <mode>/scratch/<test>/    the test's cwd while it runs; removed afterwards
#
# Runner rules are liburing's test/runtests.sh: per-test timeout 60 s
# (SIGINT, then SIGKILL), exit 0 = pass (then a dmesg check when /dev/kmsg is
# usable, as runtests.sh does for root), exit 77 = skip, timeout (124) and any
# other status = failure.  runtests.sh only warns on timeouts ("may not be a
# failure"); here an unexpected timeout counts as a failure so that a hang in
# rsuring cannot pass CI.

set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=${RSURING_COMPAT_DIR:-$REPO/target/compat}
TIMEOUT=${RSURING_COMPAT_TIMEOUT:-60}
LIB=$REPO/target/release/librsuring.so
HEADERS=""
BASELINE=0
JOBS=1
ONLY=()
BUILD_JOBS=$(nproc 2>/dev/null || echo 2)

# ---------------------------------------------------------------------------
# Tests that cannot be linked against any shared liburing.so.2 (Debian's or
# ours): they use liburing internals that are not part of its ABI.  Upstream
# links them statically against its own build tree.  Excluded from every mode
# (including --baseline, which links Debian's shared library).
# (nolibc.c looks like one but is not: with CONFIG_NOLIBC, ../src/lib.h gives
# it a static inline get_page_size() and it links against any liburing.so.)
declare -A EXCLUDED=(
	[iopoll]="calls __io_uring_flush_sq(), a liburing-internal symbol that liburing.so.2 does not export (local: * in liburing.map)"
	[io_uring_passthrough]="calls __io_uring_flush_sq(), a liburing-internal symbol that liburing.so.2 does not export (local: * in liburing.map)"
)

# Tests that also fail or hang with Debian's own liburing 2.3 on the reference
# machine (kernel 6.18): the 2.3 tests predate kernel behaviour changes.  They
# may fail or time out; they count neither as passed nor as failed.  If one of
# them passes it is reported as XPASS (and counted as passed).
declare -A EXPECTED=(
	[read-write]="fails with Debian's liburing 2.3 too: test_write_efbig, setrlimit(RLIMIT_FSIZE) gets EPERM here"
	[rsrc_tags]="fails with Debian's liburing 2.3 too: test_buffers_update asserts ret == -EAGAIN"
	[send_recv]="fails with Debian's liburing 2.3 too: test_invalid"
	[io_uring_register]="hangs with Debian's liburing 2.3 too (after 'expected -9, got -22')"
	[multicqes_drain]="hangs with Debian's liburing 2.3 too"
)

# Tests Debian's liburing.so.2 cannot link: liburing 2.3 declares
# io_uring_enable_rings() and io_uring_register_restrictions() in its header
# but forgot them in liburing.map (exported from 2.4 on, LIBURING_2.4).  In
# --baseline they are linked statically against liburing.a built from the
# same Debian source, so there is still a real-liburing reference for them;
# in the rsuring modes (2.15 ABI) they link to rsuring like every other test.
declare -A STATIC_IN_BASELINE=(
	[defer-taskrun]="io_uring_enable_rings"
	[register-restrictions]="io_uring_register_restrictions, io_uring_enable_rings"
	[single-issuer]="io_uring_enable_rings"
)

# Fixed /tmp paths some 2.3 tests use (they normally unlink them; removed
# after a run in case a test died first).
TMP_LEFTOVERS=(/tmp/.open.close /tmp/.open.direct.pick /tmp/.open.at2
	/tmp/.tmp.access /tmp/.statx /tmp/io_uring_openat_test
	/tmp/io_uring_openat_write_test1)

log() { printf '%s\n' "compat-suite: $*" >&2; }
die() { log "error: $*"; exit 2; }

usage() { sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

while [ $# -gt 0 ]; do
	case "$1" in
	--lib) LIB=${2:?--lib needs a path}; shift 2 ;;
	--lib=*) LIB=${1#*=}; shift ;;
	--headers) HEADERS=${2:?--headers needs debian|rsuring|both}; shift 2 ;;
	--headers=*) HEADERS=${1#*=}; shift ;;
	--baseline) BASELINE=1; shift ;;
	--jobs|-j) JOBS=${2:?--jobs needs a number}; shift 2 ;;
	--jobs=*) JOBS=${1#*=}; shift ;;
	-h|--help) usage; exit 0 ;;
	--) shift; ONLY+=("$@"); break ;;
	-*) usage >&2; die "unknown option $1" ;;
	*) ONLY+=("${1%.t}"); shift ;;
	esac
done
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || die "--jobs: not a positive number: $JOBS"
[[ "$TIMEOUT" =~ ^[1-9][0-9]*$ ]] || die "RSURING_COMPAT_TIMEOUT: not a positive number: $TIMEOUT"

MODES=()
[ "$BASELINE" = 1 ] && MODES+=(baseline)
if [ -n "$HEADERS" ] || [ "$BASELINE" = 0 ]; then
	case "${HEADERS:-both}" in
	debian) MODES+=(debian) ;;
	rsuring) MODES+=(rsuring) ;;
	both) MODES+=(debian rsuring) ;;
	*) die "--headers must be debian, rsuring or both (got $HEADERS)" ;;
	esac
fi

mkdir -p "$WORK" || die "cannot create $WORK"
WORK=$(cd "$WORK" && pwd)

# ---------------------------------------------------------------------------
# Packages and source

as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"
	elif command -v sudo >/dev/null; then sudo -n "$@"
	else log "need root for: $*"; return 1
	fi
}

APT_UPDATED=0
apt_update() {
	[ "$APT_UPDATED" = 1 ] && return 0
	log "apt-get update"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get -qq update >/dev/null || return 1
	APT_UPDATED=1
}

# ensure_pkg PACKAGE [COMMAND]: install PACKAGE unless installed (or COMMAND exists).
ensure_pkg() {
	local pkg=$1 cmd=${2:-}
	if [ -n "$cmd" ]; then command -v "$cmd" >/dev/null && return 0
	else dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' && return 0
	fi
	apt_update || return 1
	log "apt-get install $pkg"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get -qq install -y --no-install-recommends "$pkg" >/dev/null
}

has_deb_src() {
	grep -qs -E '^[[:space:]]*deb-src[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list && return 0
	grep -qs -E '^[[:space:]]*Types:.*deb-src' /etc/apt/sources.list.d/*.sources
}

ensure_deb_src() {
	has_deb_src && return 0
	local deb822=/etc/apt/sources.list.d/debian.sources
	if [ -f "$deb822" ]; then
		log "adding deb-src: /etc/apt/sources.list.d/debian-src.sources"
		sed -E 's/^Types:.*/Types: deb-src/' "$deb822" |
			as_root tee /etc/apt/sources.list.d/debian-src.sources >/dev/null || return 1
	elif grep -qs -E '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list; then
		log "adding deb-src: /etc/apt/sources.list.d/debian-src.list"
		sed -nE 's/^[[:space:]]*deb[[:space:]]/deb-src /p' /etc/apt/sources.list |
			as_root tee /etc/apt/sources.list.d/debian-src.list >/dev/null || return 1
	else
		log "no Debian apt source found to derive a deb-src entry from"
		return 1
	fi
	APT_UPDATED=0
}

find_src() { find "$WORK/src" -maxdepth 1 -type d -name 'liburing-*' 2>/dev/null | sort | tail -n 1; }

fetch_source() {
	SRC=$(find_src)
	if [ -n "$SRC" ] && [ -f "$SRC/test/runtests.sh" ]; then
		log "reusing source $SRC"
		return 0
	fi
	ensure_pkg dpkg-dev dpkg-source || die "cannot install dpkg-dev"
	ensure_deb_src || die "cannot add a deb-src entry"
	mkdir -p "$WORK/src"
	# Same version as the installed liburing-dev when possible.
	local ver want=liburing
	ver=$(dpkg-query -W -f='${Version}' liburing-dev 2>/dev/null) && [ -n "$ver" ] && want="liburing=$ver"
	log "apt-get source $want"
	if ! (cd "$WORK/src" && apt-get -qq source "$want" >/dev/null 2>"$WORK/src/apt-source.log"); then
		APT_UPDATED=0
		apt_update || die "apt-get update failed"
		(cd "$WORK/src" && apt-get -qq source "$want" >/dev/null 2>"$WORK/src/apt-source.log") ||
			{ cat "$WORK/src/apt-source.log" >&2; die "apt-get source $want failed"; }
	fi
	SRC=$(find_src)
	[ -n "$SRC" ] && [ -f "$SRC/test/runtests.sh" ] || die "no liburing source tree under $WORK/src"
}

configure_source() {
	case "$(basename "$SRC")" in
	liburing-2.3) ;;
	*) log "warning: expected liburing-2.3, got $(basename "$SRC"); expected-failure list is for 2.3" ;;
	esac
	log "configuring $SRC"
	(cd "$SRC" && ./configure >"$WORK/src/configure.log" 2>&1) ||
		{ tail -n 20 "$WORK/src/configure.log" >&2; die "liburing ./configure failed"; }
	[ -f "$SRC/config-host.h" ] && [ -f "$SRC/config-host.mak" ] || die "configure produced no config-host.h/.mak"
}

# Test names from test/Makefile's test_srcs (respects its conditionals).
list_tests() {
	local srcs
	srcs=$(make -s --no-print-directory -C "$SRC/test" -f Makefile \
		-f <(printf 'print-test-srcs:\n\t@echo $(test_srcs)\n') print-test-srcs) || return 1
	printf '%s\n' $srcs | sed -E 's/\.(c|cc)$//' | awk '!seen[$0]++'
}

# ---------------------------------------------------------------------------
# Build

DEBIAN_LIB=""

mode_setup() {
	local mode=$1
	MODE_INC=()
	MODE_LINK=()
	MODE_EXPECT_LIB=""
	case "$mode" in
	baseline)
		MODE_LINK=(-luring)
		MODE_EXPECT_LIB=$DEBIAN_LIB ;;
	debian|rsuring)
		MODE_LINK=(-L"$WORK/lib" -luring -Wl,-rpath,"$WORK/lib" -Wl,--disable-new-dtags)
		MODE_EXPECT_LIB=$(readlink -f "$LIB")
		[ "$mode" = rsuring ] && MODE_INC=(-I"$REPO/include") ;;
	esac
}

# Header each mode must compile against, checked in the -MD dependency files.
mode_header() {
	case "$1" in
	rsuring) echo "$REPO/include/liburing.h" ;;
	*) echo /usr/include/liburing.h ;;
	esac
}

prepare_lib_dir() {
	local soname
	[ -f "$LIB" ] || die "rsuring library not found: $LIB (build it with cargo build --release, or pass --lib)"
	soname=$(readelf -d "$LIB" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
	[ "$soname" = liburing.so.2 ] || die "$LIB has SONAME '${soname:-none}', expected liburing.so.2"
	mkdir -p "$WORK/lib"
	ln -sfn "$(readlink -f "$LIB")" "$WORK/lib/liburing.so.2"
	ln -sfn "$(readlink -f "$LIB")" "$WORK/lib/liburing.so"
}

# compile_one MODE TEST: build <mode>/bin/TEST.t; on failure leave build/TEST.failed.
compile_one() {
	local mode=$1 t=$2 d=$WORK/$1 src compiler flags
	local log=$d/build/$t.log
	local -a link=("${MODE_LINK[@]}")
	if [ "$mode" = baseline ] && [ -n "${STATIC_IN_BASELINE[$t]+x}" ]; then
		link=("$SRC/src/liburing.a")
	fi
	rm -f "$d/build/$t.failed" "$d/bin/$t.t"
	if [ -f "$SRC/test/$t.c" ]; then
		src=$SRC/test/$t.c; compiler=${CC:-gcc}; flags=("${CFLAGS_T[@]}")
	elif [ -f "$SRC/test/$t.cc" ]; then
		src=$SRC/test/$t.cc; compiler=${CXX:-g++}; flags=("${CXXFLAGS_T[@]}")
	else
		echo "no source for $t" >"$log"; echo "no source" >"$d/build/$t.failed"; return
	fi
	if ! "$compiler" "${CPPFLAGS_T[@]}" "${MODE_INC[@]}" "${flags[@]}" \
		-MD -MF "$d/build/$t.d" -o "$d/bin/$t.t" "$src" "$d/build/helpers.o" \
		"${link[@]}" -lpthread >"$log" 2>&1; then
		echo "compile/link error" >"$d/build/$t.failed"; return
	fi
	check_binary "$mode" "$t" "$d/build/$t.d" "$d/bin/$t.t" >>"$log" 2>&1 ||
		{ echo "$(tail -n 1 "$log")" >"$d/build/$t.failed"; rm -f "$d/bin/$t.t"; }
}

# check_binary MODE TEST DEPFILE BINARY: right header, right library.
check_binary() {
	local mode=$1 t=$2 dep=$3 bin=$4 hdr got needed
	hdr=$(mode_header "$mode")
	# exec-target.c includes no liburing header at all; that is fine.
	if grep -q 'liburing\.h' "$dep" && ! grep -qF "$hdr" "$dep"; then
		echo "check: not compiled against $hdr"; return 1
	fi
	if [ "$mode" = rsuring ] && grep -qE '/usr/(local/)?include/liburing' "$dep"; then
		echo "check: compiled against a system liburing header: $(grep -oE '/usr/(local/)?include/liburing[^ ]*' "$dep" | sort -u | tr '\n' ' ')"
		return 1
	fi
	needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(liburing[^]]*\)\].*/\1/p')
	if [ "$mode" = baseline ] && [ -n "${STATIC_IN_BASELINE[$t]+x}" ]; then
		[ -z "$needed" ] && return 0
		echo "check: static baseline build still needs $needed"; return 1
	fi
	if [ "$needed" != liburing.so.2 ]; then
		echo "check: NEEDED '${needed:-none}', expected liburing.so.2"; return 1
	fi
	got=$(ldd "$bin" | awk '$1 == "liburing.so.2" { print $3 }')
	if [ -z "$got" ] || [ "$(readlink -f "$got")" != "$MODE_EXPECT_LIB" ]; then
		echo "check: liburing.so.2 resolves to '${got:-nothing}', expected $MODE_EXPECT_LIB"; return 1
	fi
}

build_mode() {
	local mode=$1 d=$WORK/$1 t
	rm -rf "$d/bin" "$d/build"
	mkdir -p "$d/bin" "$d/build"
	mode_setup "$mode"
	if [ "$mode" = rsuring ] && [ ! -f "$REPO/include/liburing.h" ]; then
		log "[$mode] $REPO/include/liburing.h does not exist: every test fails to build"
		for t in "${TESTS[@]}"; do
			echo "no include/liburing.h" >"$d/build/$t.failed"
		done
		return
	fi
	log "[$mode] building ${#TESTS[@]} tests ($BUILD_JOBS jobs)"
	if [ "$mode" = baseline ] &&
		! make -s -C "$SRC/src" liburing.a >"$d/build/liburing.a.log" 2>&1; then
		log "[$mode] building liburing.a failed, see $d/build/liburing.a.log"
	fi
	if ! ${CC:-gcc} "${CPPFLAGS_T[@]}" "${MODE_INC[@]}" "${CFLAGS_T[@]}" -c \
		-o "$d/build/helpers.o" "$SRC/test/helpers.c" >"$d/build/helpers.log" 2>&1; then
		log "[$mode] helpers.c failed to build:"; cat "$d/build/helpers.log" >&2
		for t in "${TESTS[@]}"; do
			echo "helpers.c failed to build" >"$d/build/$t.failed"
		done
		return
	fi
	for t in "${TESTS[@]}"; do
		while [ "$(jobs -rp | wc -l)" -ge "$BUILD_JOBS" ]; do wait -n; done
		compile_one "$mode" "$t" &
	done
	wait
}

# ---------------------------------------------------------------------------
# Run

DO_KMSG=0
if [ -w /dev/kmsg ] && dmesg >/dev/null 2>&1; then DO_KMSG=1; fi

# As runtests.sh's _check_dmesg: kernel splats logged since the marker.
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

# run_one MODE TEST: prints one line, writes one line to <mode>/results.d/TEST.
run_one() {
	local mode=$1 t=$2 d=$WORK/$1 status st t0 t1 secs marker note=""
	local log=$d/logs/$t.log scratch=$d/scratch/$t
	rm -rf "$scratch"; mkdir -p "$scratch"
	# timeout.c execs ./exec-target.t from its cwd.
	[ -f "$d/bin/exec-target.t" ] && ln -s "$d/bin/exec-target.t" "$scratch/exec-target.t"
	marker="compat-suite $mode: running test $t $$-$RANDOM:"
	[ "$DO_KMSG" = 1 ] && echo "$marker" >/dev/kmsg 2>/dev/null
	t0=$(date +%s.%N)
	# No exec: if the test dies of a signal, this subshell reports it
	# ("Aborted") into the log rather than on the console.
	(cd "$scratch" && timeout -s INT -k "$TIMEOUT" "$TIMEOUT" "$d/bin/$t.t"; exit $?) \
		</dev/null >"$log" 2>&1
	status=$?
	t1=$(date +%s.%N)
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	if [ "$status" -eq 124 ] ||
		{ [ "$status" -eq 137 ] && awk -v s="$secs" -v t="$TIMEOUT" 'BEGIN { exit !(s >= t) }'; }; then
		st=TIMEOUT
	elif [ "$status" -eq 77 ]; then
		st=SKIP
	elif [ "$status" -ne 0 ]; then
		st=FAIL
	elif ! dmesg_clean "$marker" "$d/logs/$t.dmesg"; then
		st=FAIL; note=" (kernel warning in dmesg, see logs/$t.dmesg)"
	else
		st=PASS
	fi
	if [ -n "${EXPECTED[$t]+x}" ]; then
		case $st in
		FAIL|TIMEOUT) st=XFAIL; note=" (expected: ${EXPECTED[$t]})" ;;
		PASS) st=XPASS; note=" (listed as expected failure but passed)" ;;
		esac
	fi
	# A crash: rerun once under gdb (when installed) for a backtrace.
	case $st in FAIL|XFAIL)
		if [ "$status" -gt 128 ] && [ "$status" -lt 160 ] && command -v gdb >/dev/null; then
			rm -rf "$scratch"; mkdir -p "$scratch"
			[ -f "$d/bin/exec-target.t" ] && ln -s "$d/bin/exec-target.t" "$scratch/exec-target.t"
			(cd "$scratch" && timeout -k 5 "$TIMEOUT" gdb -q -batch -ex run -ex bt \
				"$d/bin/$t.t"; exit $?) </dev/null >"$d/logs/$t.gdb" 2>&1
		fi ;;
	esac
	if [ "$mode" = baseline ] && [ -n "${STATIC_IN_BASELINE[$t]+x}" ]; then
		note="$note (linked statically: Debian's liburing.so.2 lacks ${STATIC_IN_BASELINE[$t]})"
	fi
	rm -rf "$scratch"
	echo "$t $st $status $secs" >"$d/results.d/$t"
	printf '[%s] %-28s %-7s %6ss  exit %s%s\n' "$mode" "$t" "$st" "$secs" "$status" "$note"
}

detach_our_loops() {
	command -v losetup >/dev/null || return 0
	losetup -n -l -O NAME,BACK-FILE 2>/dev/null | while read -r dev back; do
		case "$back" in
		"$WORK"/*) log "detaching leftover loop device $dev ($back)"; as_root losetup -d "$dev" ;;
		esac
	done
}

run_mode() {
	local mode=$1 d=$WORK/$1 t reason
	local -a tmp_before=()
	rm -rf "$d/logs" "$d/scratch" "$d/results.d"
	mkdir -p "$d/logs" "$d/scratch" "$d/results.d"
	for f in "${TMP_LEFTOVERS[@]}"; do [ -e "$f" ] && tmp_before+=("$f"); done
	log "[$mode] running tests (timeout ${TIMEOUT}s, $JOBS at a time)"
	for t in "${ALL_TESTS[@]}"; do
		if [ -n "${EXCLUDED[$t]+x}" ]; then
			echo "$t EXCLUDED - 0" >"$d/results.d/$t"
			printf '[%s] %-28s %-7s  %s\n' "$mode" "$t" EXCLUDED "${EXCLUDED[$t]}"
		elif [ -f "$d/build/$t.failed" ]; then
			reason=$(cat "$d/build/$t.failed")
			echo "$t BUILDFAIL - 0" >"$d/results.d/$t"
			printf '[%s] %-28s %-7s  %s, see %s\n' "$mode" "$t" BUILDFAIL "$reason" "$d/build/$t.log"
		else
			while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
			run_one "$mode" "$t" &
		fi
	done
	wait
	rmdir "$d/scratch" 2>/dev/null || rm -rf "$d/scratch"
	detach_our_loops
	for f in "${TMP_LEFTOVERS[@]}"; do
		[ -e "$f" ] || continue
		[[ " ${tmp_before[*]} " == *" $f "* ]] || rm -rf "$f"
	done
	for t in "${ALL_TESTS[@]}"; do cat "$d/results.d/$t"; done >"$d/results"
	rm -rf "$d/results.d"
}

TOTAL_PASS=0
TOTAL_FAIL=0

summarize_mode() {
	local mode=$1 d=$WORK/$1 secs=$2
	local -a pass=() skip=() fail=() tout=() bfail=() xfail=() xpass=() excl=()
	local name st status s
	while read -r name st status s; do
		case $st in
		PASS) pass+=("$name") ;;
		SKIP) skip+=("$name") ;;
		FAIL) fail+=("$name") ;;
		TIMEOUT) tout+=("$name") ;;
		BUILDFAIL) bfail+=("$name") ;;
		XFAIL) xfail+=("$name") ;;
		XPASS) xpass+=("$name") ;;
		EXCLUDED) excl+=("$name") ;;
		esac
	done <"$d/results"
	local np=$((${#pass[@]} + ${#xpass[@]})) nf=$((${#fail[@]} + ${#tout[@]} + ${#bfail[@]}))
	echo
	echo "== mode $mode: $np passed, $nf failed, ${#skip[@]} skipped, ${#xfail[@]} expected failures, ${#excl[@]} excluded (${secs}) =="
	[ ${#fail[@]} -gt 0 ] && echo "failed: ${#fail[@]} (${fail[*]})"
	[ ${#tout[@]} -gt 0 ] && echo "timed out: ${#tout[@]} (${tout[*]})"
	[ ${#bfail[@]} -gt 0 ] && echo "build failures: ${#bfail[@]} (${bfail[*]})"
	[ ${#xfail[@]} -gt 0 ] && echo "expected failures: ${#xfail[@]} (${xfail[*]})"
	[ ${#xpass[@]} -gt 0 ] && echo "unexpected passes (listed as expected failures): ${#xpass[@]} (${xpass[*]})"
	[ ${#skip[@]} -gt 0 ] && echo "skipped: ${#skip[@]} (${skip[*]})"
	[ ${#excl[@]} -gt 0 ] && echo "excluded: ${#excl[@]} (${excl[*]})"
	for name in "${fail[@]}" "${tout[@]}"; do
		echo "---- [$mode] $name: last lines of $d/logs/$name.log ----"
		tail -n 15 "$d/logs/$name.log"
		if [ -f "$d/logs/$name.gdb" ]; then
			echo "---- [$mode] $name: backtrace (rerun under gdb, $d/logs/$name.gdb) ----"
			sed -n '/^Program received signal/,$p' "$d/logs/$name.gdb" | head -n 20
		fi
	done
	for name in "${bfail[@]}"; do
		echo "---- [$mode] $name: first lines of $d/build/$name.log ----"
		head -n 15 "$d/build/$name.log"
	done
	TOTAL_PASS=$((TOTAL_PASS + np))
	TOTAL_FAIL=$((TOTAL_FAIL + nf))
}

# ---------------------------------------------------------------------------
# Main

command -v timeout >/dev/null || die "timeout (coreutils) not found"
ensure_pkg make make || die "cannot install make"
ensure_pkg gcc gcc || die "cannot install gcc"
ensure_pkg g++ g++ || die "cannot install g++"
ensure_pkg binutils readelf || die "cannot install binutils"
ensure_pkg liburing-dev || die "cannot install liburing-dev (Debian's liburing header)"
DEBIAN_LIB=$(readlink -f "$(dpkg -L liburing2 2>/dev/null | grep -E '/liburing\.so\.2$' | head -n 1)")
[ -f "$DEBIAN_LIB" ] || die "Debian's liburing.so.2 (package liburing2) not found"

LIB_ID=""
lib_id() { stat -L -c '%s bytes, modified %y' "$LIB" 2>/dev/null; }
for mode in "${MODES[@]}"; do
	case $mode in debian|rsuring)
		prepare_lib_dir
		LIB_ID=$(lib_id)
		log "library under test: $(readlink -f "$LIB") ($LIB_ID)"
		break ;;
	esac
done

fetch_source
configure_source

mapfile -t ALL_TESTS < <(list_tests)
[ ${#ALL_TESTS[@]} -gt 0 ] || die "could not list tests from $SRC/test/Makefile"
if [ ${#ONLY[@]} -gt 0 ]; then
	for t in "${ONLY[@]}"; do
		printf '%s\n' "${ALL_TESTS[@]}" | grep -qxF "$t" || die "no such test: $t"
	done
	ALL_TESTS=("${ONLY[@]}")
fi
# The tests to build: all but the excluded ones, plus exec-target (timeout.c execs it).
TESTS=()
for t in "${ALL_TESTS[@]}"; do [ -n "${EXCLUDED[$t]+x}" ] || TESTS+=("$t"); done
[[ " ${TESTS[*]} " == *" exec-target "* ]] || TESTS+=(exec-target)

# Flags as test/Makefile, minus -I../src/include (the header is the mode's).
# io_uring_setup.c includes "../syscall.h" (found via -I../src/include
# upstream); a one-line shim under build/quote/ provides it.
mkdir -p "$WORK/quote/x"
printf '#include "%s/src/syscall.h"\n' "$SRC" >"$WORK/quote/syscall.h"
CPPFLAGS_T=(-D_GNU_SOURCE -D__SANE_USERSPACE_TYPES__ -iquote "$WORK/quote/x"
	-include "$SRC/config-host.h")
XCFLAGS=(-Wno-unused-parameter -Wno-sign-compare)
grep -q '^CONFIG_HAVE_STRINGOP_OVERFLOW=y' "$SRC/config-host.mak" && XCFLAGS+=(-Wstringop-overflow=0)
grep -q '^CONFIG_HAVE_ARRAY_BOUNDS=y' "$SRC/config-host.mak" && XCFLAGS+=(-Warray-bounds=0)
CFLAGS_T=(-g -O2 -Wall -Wextra "${XCFLAGS[@]}" -DLIBURING_BUILD_TEST)
CXXFLAGS_T=(-g -O2 -Wall -Wextra "${XCFLAGS[@]}" -std=c++11 -DLIBURING_BUILD_TEST)

trap detach_our_loops EXIT

for mode in "${MODES[@]}"; do
	start=$(date +%s)
	build_mode "$mode"
	built=$(date +%s)
	run_mode "$mode"
	summarize_mode "$mode" "$(( $(date +%s) - start ))s: build $(( built - start ))s, run $(( $(date +%s) - built ))s"
done
if [ -n "$LIB_ID" ] && [ "$(lib_id)" != "$LIB_ID" ]; then
	echo
	echo "WARNING: $LIB changed while the suite ran; results mix two builds"
fi

echo
echo "modes: ${MODES[*]}; logs under $WORK"
echo "$TOTAL_PASS passed, $TOTAL_FAIL failed"
[ "$TOTAL_FAIL" -eq 0 ]
