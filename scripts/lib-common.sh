# shellcheck shell=bash
# The shell helpers the project's scripts share (scripts/, bench/,
# fio_engine/). Sourced by bash scripts, never run. Each helper is written
# here once; a script sets its own log prefix (COMMON_WHO, default its name).
#
#   require_root WHY          exit 2 with "must run as root (WHY)" unless root
#   as_root CMD...            CMD as root (directly, or through sudo -n)
#   at_exit CMD               run the shell command CMD when the script ends:
#                             on exit, on an error under set -e, and on INT,
#                             TERM or HUP (then the script dies of that
#                             signal); the last registered runs first
#   run_child CMD...          run CMD in the background and wait for it, so
#                             that a signal stops CMD first and the at_exit
#                             commands run at once (bash defers traps while
#                             a foreground command runs); a script that
#                             starts and waits for a child itself sets
#                             COMMON_CHILD=PID meanwhile
#   rsuring_lib               prints target/release/librsuring.so
#                             (resolved), or fails with "build first"
#   bench_setup DIR [WHY]     the start of a bench/ script: root (WHY, as
#                             require_root), OUT=target/bench/DIR (absolute,
#                             created) and LIB=$(rsuring_lib)
#   build_for_nobody NAME SRC [CC ARGS...]
#                             SRC built with cc -O2 -Wall -Wextra -Werror
#                             against Debian's liburing as $OUT/NAME, which
#                             nobody may run (both modes 755)
#   AS_NOBODY=(...)           the prefix that runs a command as nobody (uid
#                             and gid 65534, no groups), the kind of process
#                             RSURING_SQPOLL=1 serves
#   median_range [DECIMALS]   the numbers on stdin as "MEDIAN (MIN-MAX)"
#   rotated K WORD...         the WORDs rotated left by K (mod their count),
#                             one a line: the order of a round's cases
#   server_rounds ROUNDS FN   bench/servers_*.sh: per round, per placement (spare:
#                             clients on CPU 0, the poller's CPU free; shared:
#                             clients on CPUs 0-1), per configuration
#                             (SERVER_CONFIGS, default: debian rsuring
#                             transparent; rotating), calls FN ROUND
#                             PLACEMENT CPUS CONFIG
#   need_commands HINT CMD... exit 2 naming the first CMD missing (on PATH or
#                             in /usr/sbin) and HINT (how to install it)
#   stop_process PID          SIGTERM to PID (if any), then wait for it
#   cpu_ticks PID             utime + stime of PID in clock ticks, its
#                             threads (SQ poll threads too) included
#   has_deb_src               a deb-src entry exists
#   ensure_deb_src            add one (the twin of the system's deb entries)
#                             and fetch its index, unless there is one
#   apt_update                apt-get update, once per script
#   fetch_fio_source          fio's Debian source into FIO_TREE (once)
#   configure_fio_source      ./configure FIO_TREE with FIO_CONFIGURE_ARGS,
#                             unless it is configured with them already
#   build_fio_engine [ARGS]   fio_engine/build.sh; sets FIO_ENGINE_SO and
#                             FIO_BUILD_DIR (its fio is FIO_BUILD_DIR/fio)
#   loopdev_setup [SIZE]      a direct-I/O loop device over a /dev/shm file
#                             filled with random data: sets LOOPDEV and
#                             LOOPDEV_FILE, torn down at exit (at_exit)
#   loopdev_teardown          detach and remove now (idempotent)
#
# fio's source: ONE tree, $FIO_TREE (target/fio-src/fio-3.33, `apt-get
# source fio` on bookworm). fio_engine/build.sh builds fio and the engine in
# it; bench/hotpath.sh builds fio's t/io_uring there too.

COMMON_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
COMMON_WHO=${COMMON_WHO:-${0##*/}}

_common_log() { printf '%s: %s\n' "$COMMON_WHO" "$*" >&2; }

require_root() {
	[ "$(id -u)" = 0 ] && return 0
	_common_log "must run as root${1:+ ($1)}"
	exit 2
}

as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"
	elif command -v sudo >/dev/null; then sudo -n "$@"
	else _common_log "need root for: $*"; return 1
	fi
}

rsuring_lib() {
	local lib
	lib=$(readlink -f "$COMMON_ROOT/target/release/librsuring.so" 2>/dev/null) && [ -f "$lib" ] ||
		{ _common_log "build first: cargo build --release"; return 2; }
	echo "$lib"
}

AS_NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --)

bench_setup() {
	require_root "${2:-}"
	OUT=$COMMON_ROOT/target/bench/$1
	mkdir -p "$OUT"
	LIB=$(rsuring_lib)
}

build_for_nobody() {
	local name=$1 src=$2
	shift 2
	cc -O2 -Wall -Wextra -Werror "$@" -o "$OUT/$name" "$src" -luring
	chmod 755 "$OUT" "$OUT/$name"
}

median_range() {
	sort -n | awk -v d="${1:-0}" '{ a[NR] = $1 }
		END {
			if (NR == 0) { print "-"; exit }
			m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
			f = "%." d "f (%." d "f-%." d "f)"
			printf f, m, a[1], a[NR]
		}'
}

rotated() {
	local k=$1
	shift
	k=$((k % $#))
	printf '%s\n' "${@:k+1}" "${@:1:k}"
}

server_rounds() {
	local rounds=$1 fn=$2 r placement cpus c
	for r in $(seq "$rounds"); do
		for placement in spare shared; do
			cpus=0
			[ "$placement" = shared ] && cpus=0-1
			# shellcheck disable=SC2086 # a list of words
			for c in $(rotated $((r + ${#placement})) ${SERVER_CONFIGS:-debian rsuring transparent}); do
				"$fn" "$r" "$placement" "$cpus" "$c"
			done
		done
	done
}

need_commands() {
	local hint=$1 c
	shift
	for c in "$@"; do
		command -v "$c" >/dev/null || [ -x "/usr/sbin/$c" ] ||
			{ _common_log "missing $c${hint:+ ($hint)}"; exit 2; }
	done
}

stop_process() {
	[ -n "${1:-}" ] || return 0
	kill -TERM "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# ---------------------------------------------------------------- exit ----

_COMMON_AT_EXIT=()
COMMON_CHILD=

_common_run_at_exit() {
	local cmd
	while [ ${#_COMMON_AT_EXIT[@]} -gt 0 ]; do
		cmd=${_COMMON_AT_EXIT[0]}
		_COMMON_AT_EXIT=("${_COMMON_AT_EXIT[@]:1}")
		eval "$cmd" || true
	done
}

_common_on_signal() {
	local sig=$1
	if [ -n "$COMMON_CHILD" ]; then
		kill -TERM "$COMMON_CHILD" 2>/dev/null
		wait "$COMMON_CHILD" 2>/dev/null
		COMMON_CHILD=
	fi
	_common_run_at_exit
	trap - "$sig" EXIT
	kill -s "$sig" $$
}

at_exit() {
	_COMMON_AT_EXIT=("$1" "${_COMMON_AT_EXIT[@]}")
	trap '_common_run_at_exit' EXIT
	trap '_common_on_signal INT' INT
	trap '_common_on_signal TERM' TERM
	trap '_common_on_signal HUP' HUP
}

run_child() {
	local rc=0
	"$@" &
	COMMON_CHILD=$!
	wait "$COMMON_CHILD" || rc=$?
	COMMON_CHILD=
	return "$rc"
}

# ----------------------------------------------------------------- apt ----

APT_UPDATED=0
apt_update() {
	[ "$APT_UPDATED" = 1 ] && return 0
	_common_log "apt-get update"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get -qq update >/dev/null || return 1
	APT_UPDATED=1
}

has_deb_src() {
	grep -qs -E '^[[:space:]]*deb-src[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list && return 0
	grep -qs -E '^[[:space:]]*Types:.*deb-src' /etc/apt/sources.list.d/*.sources
}

# The twin of the system's entries with Types: deb-src (deb822, Debian 12's
# debian.sources), or deb-src lines for its sources.list deb lines; then the
# index, without which apt-get source finds nothing.
ensure_deb_src() {
	has_deb_src && return 0
	local deb822=/etc/apt/sources.list.d/debian.sources
	if [ -f "$deb822" ]; then
		_common_log "adding deb-src: /etc/apt/sources.list.d/debian-src.sources"
		sed -E 's/^Types:.*/Types: deb-src/' "$deb822" |
			as_root tee /etc/apt/sources.list.d/debian-src.sources >/dev/null || return 1
	elif grep -qs -E '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list; then
		_common_log "adding deb-src: /etc/apt/sources.list.d/debian-src.list"
		sed -nE 's/^[[:space:]]*deb[[:space:]]/deb-src /p' /etc/apt/sources.list |
			as_root tee /etc/apt/sources.list.d/debian-src.list >/dev/null || return 1
	else
		_common_log "no Debian apt source found to derive a deb-src entry from"
		return 1
	fi
	APT_UPDATED=0
	apt_update
}

# ----------------------------------------------------------------- fio ----

FIO_SRC_DIR=$COMMON_ROOT/target/fio-src
FIO_SRC_VER=3.33
FIO_TREE=$FIO_SRC_DIR/fio-$FIO_SRC_VER
# A small, deterministic feature set: no optional engine libraries.
FIO_CONFIGURE_ARGS="--disable-native --disable-numa --disable-rdma --disable-rados
 --disable-rbd --disable-http --disable-gfapi --disable-libnfs --disable-pmem
 --disable-xnvme --disable-libzbc --disable-tcmalloc --disable-dfs"

# Needs a deb-src entry (ensure_deb_src, as root); a no-op when it is there.
fetch_fio_source() {
	[ -x "$FIO_TREE/configure" ] && return 0
	_common_log "apt-get source fio (into $FIO_SRC_DIR)"
	mkdir -p "$FIO_SRC_DIR"
	(cd "$FIO_SRC_DIR" && apt-get source -qq fio >/dev/null 2>&1) ||
		(cd "$FIO_SRC_DIR" && apt-get source -qq fio) || return 1
	[ -x "$FIO_TREE/configure" ] || {
		_common_log "apt-get source fio did not give fio-$FIO_SRC_VER"; return 1; }
}

configure_fio_source() {
	local stamp=$FIO_TREE/.rsuring-configure args
	# shellcheck disable=SC2086 # one line of words
	args=$(echo $FIO_CONFIGURE_ARGS)
	if [ -f "$FIO_TREE/config-host.h" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$args" ]; then
		return 0
	fi
	_common_log "configure fio: $args"
	# shellcheck disable=SC2086
	(cd "$FIO_TREE" && ./configure $args >configure.out 2>&1) || {
		tail -20 "$FIO_TREE/configure.out" >&2; return 1; }
	echo "$args" >"$stamp"
}

# build.sh's last line names what it built: "build.sh: ok: SO for fio-X.Y (...)".
build_fio_engine() {
	local log
	log=$(mktemp)
	if ! "$COMMON_ROOT/fio_engine/build.sh" "$@" 2>"$log"; then
		cat "$log" >&2; rm -f "$log"; return 1
	fi
	FIO_ENGINE_SO=$(sed -n 's/^build.sh: ok: \(.*\) for fio-.*/\1/p' "$log" | tail -1)
	rm -f "$log"
	[ -n "$FIO_ENGINE_SO" ] || { _common_log "fio_engine/build.sh named no engine"; return 1; }
	FIO_BUILD_DIR=$(dirname "$FIO_ENGINE_SO")
}

# ---------------------------------------------------------- loop device ----

LOOPDEV=${LOOPDEV:-}
LOOPDEV_FILE=${LOOPDEV_FILE:-}

_loopdev_bytes() {
	local s=$1 n unit
	n=${s%[KkMmGg]}
	unit=${s#"$n"}
	[[ $n =~ ^[0-9]+$ ]] || { _common_log "loop device: bad size '$s'"; return 1; }
	case $unit in
	"") echo "$n" ;;
	[Kk]) echo $((n << 10)) ;;
	[Mm]) echo $((n << 20)) ;;
	[Gg]) echo $((n << 30)) ;;
	esac
}

loopdev_teardown() {
	if [[ -n $LOOPDEV ]]; then
		losetup -d "$LOOPDEV" 2>/dev/null || _common_log "losetup -d $LOOPDEV failed"
		_common_log "detached $LOOPDEV"
		LOOPDEV=
	fi
	if [[ -n $LOOPDEV_FILE ]]; then
		rm -f -- "$LOOPDEV_FILE"
		LOOPDEV_FILE=
	fi
}

# SIZE takes K, M, G suffixes; default $LOOPDEV_SIZE or 1G. The file is
# filled with random data so that every read copies a real page (a sparse
# file would be served from holes).
loopdev_setup() {
	local size=${1:-${LOOPDEV_SIZE:-1G}} bytes mib dio
	bytes=$(_loopdev_bytes "$size") || return 1
	if ((bytes < 1 << 20 || bytes % (1 << 20))); then
		_common_log "loop device: size must be a positive multiple of 1M (got $size)"
		return 1
	fi
	[[ $(id -u) == 0 ]] || { _common_log "loop device: needs root"; return 1; }
	at_exit loopdev_teardown
	LOOPDEV_FILE=$(mktemp /dev/shm/rsuring-bench.XXXXXX) || return 1
	mib=$((bytes >> 20))
	_common_log "filling $LOOPDEV_FILE with $mib MiB of random data"
	if ! dd if=/dev/urandom of="$LOOPDEV_FILE" bs=1M count="$mib" status=none; then
		_common_log "cannot fill $LOOPDEV_FILE (is /dev/shm big enough?)"
		loopdev_teardown
		return 1
	fi
	if ! LOOPDEV=$(losetup -f --show --direct-io=on "$LOOPDEV_FILE"); then
		LOOPDEV=
		_common_log "losetup failed"
		loopdev_teardown
		return 1
	fi
	dio=$(cat "/sys/block/${LOOPDEV#/dev/}/loop/dio" 2>/dev/null || echo '?')
	_common_log "attached $LOOPDEV -> $LOOPDEV_FILE (direct-io=$dio)"
	[[ $dio == 1 ]] || _common_log "warning: direct I/O is not on for $LOOPDEV"
	export LOOPDEV LOOPDEV_FILE
}
