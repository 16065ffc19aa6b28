#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A direct-I/O loop device over a file in /dev/shm, for benchmarks that need
# a fast, repeatable block device. Needs root.
#
# As a command:
#   loopdev.sh setup [SIZE]          create FILE, attach it, print "DEV FILE"
#   loopdev.sh teardown DEV [FILE]   detach DEV and remove FILE
#   loopdev.sh run [SIZE] -- CMD...  set up, run CMD with $LOOPDEV set, and
#                                    always tear down (exit, error, Ctrl-C)
#
# As a library (source it):
#   loopdev_setup [SIZE]      sets LOOPDEV and LOOPDEV_FILE; installs a trap
#                             (EXIT INT TERM HUP) that calls loopdev_teardown
#   loopdev_teardown          idempotent
#   loopdev_exec CMD...       run CMD and wait for it; a signal to the script
#                             stops CMD first, then tears down at once
#
# SIZE takes dd-style suffixes (K, M, G); default $LOOPDEV_SIZE or 1G. The
# file is filled with random data so every read hits a real page (a sparse or
# never-written file would be served from the zero page / holes).

LOOPDEV=${LOOPDEV:-}
LOOPDEV_FILE=${LOOPDEV_FILE:-}

_loopdev_log() { echo "loopdev: $*" >&2; }

_loopdev_bytes() {
	local s=$1 n unit
	n=${s%[KkMmGg]}
	unit=${s#"$n"}
	[[ $n =~ ^[0-9]+$ ]] || { _loopdev_log "bad size '$s'"; return 1; }
	case $unit in
	"") echo "$n" ;;
	[Kk]) echo $((n << 10)) ;;
	[Mm]) echo $((n << 20)) ;;
	[Gg]) echo $((n << 30)) ;;
	esac
}

# Detach the device and remove the file; safe to call twice or half set up.
loopdev_teardown() {
	if [[ -n $LOOPDEV ]]; then
		losetup -d "$LOOPDEV" 2>/dev/null || _loopdev_log "losetup -d $LOOPDEV failed"
		_loopdev_log "detached $LOOPDEV"
		LOOPDEV=
	fi
	if [[ -n $LOOPDEV_FILE ]]; then
		rm -f -- "$LOOPDEV_FILE"
		LOOPDEV_FILE=
	fi
}

# PID of the command loopdev_exec is waiting for, so a signal can stop it
# before the device goes away.
_loopdev_child=

# Runs "$@" in the background and waits: bash defers traps until a
# foreground command finishes, so a plain call would keep the device busy
# (and the user waiting) until the command ends on its own.
loopdev_exec() {
	local rc=0
	"$@" &
	_loopdev_child=$!
	wait "$_loopdev_child" || rc=$?
	_loopdev_child=
	return "$rc"
}

_loopdev_on_signal() {
	local sig=$1
	if [[ -n $_loopdev_child ]]; then
		kill -TERM "$_loopdev_child" 2>/dev/null
		wait "$_loopdev_child" 2>/dev/null
		_loopdev_child=
	fi
	loopdev_teardown
	trap - "$sig" EXIT
	kill -s "$sig" $$
}

_loopdev_install_trap() {
	trap 'loopdev_teardown' EXIT
	trap '_loopdev_on_signal INT' INT
	trap '_loopdev_on_signal TERM' TERM
	trap '_loopdev_on_signal HUP' HUP
}

# Creates and attaches; sets LOOPDEV and LOOPDEV_FILE.
loopdev_setup() {
	local size=${1:-${LOOPDEV_SIZE:-1G}} bytes mib
	bytes=$(_loopdev_bytes "$size") || return 1
	if ((bytes < 1 << 20 || bytes % (1 << 20))); then
		_loopdev_log "size must be a positive multiple of 1M (got $size)"
		return 1
	fi
	[[ $(id -u) == 0 ]] || { _loopdev_log "needs root"; return 1; }
	_loopdev_install_trap
	LOOPDEV_FILE=$(mktemp /dev/shm/rsuring-bench.XXXXXX) || return 1
	mib=$((bytes >> 20))
	_loopdev_log "filling $LOOPDEV_FILE with $mib MiB of random data"
	if ! dd if=/dev/urandom of="$LOOPDEV_FILE" bs=1M count="$mib" status=none; then
		_loopdev_log "cannot fill $LOOPDEV_FILE (is /dev/shm big enough?)"
		loopdev_teardown
		return 1
	fi
	if ! LOOPDEV=$(losetup -f --show --direct-io=on "$LOOPDEV_FILE"); then
		LOOPDEV=
		_loopdev_log "losetup failed"
		loopdev_teardown
		return 1
	fi
	local dio
	dio=$(cat "/sys/block/${LOOPDEV#/dev/}/loop/dio" 2>/dev/null || echo '?')
	_loopdev_log "attached $LOOPDEV -> $LOOPDEV_FILE (direct-io=$dio)"
	[[ $dio == 1 ]] || _loopdev_log "warning: direct I/O is not on for $LOOPDEV"
	export LOOPDEV LOOPDEV_FILE
}

_loopdev_main() {
	local cmd=${1:-}
	shift || true
	case $cmd in
	setup)
		loopdev_setup "$@" || exit 1
		# The caller owns the device now: no teardown on our exit.
		trap - EXIT INT TERM HUP
		echo "$LOOPDEV $LOOPDEV_FILE"
		;;
	teardown)
		[[ $# -ge 1 ]] || { echo "usage: $0 teardown DEV [FILE]" >&2; exit 2; }
		LOOPDEV=$1 LOOPDEV_FILE=${2:-}
		if [[ -z $LOOPDEV_FILE ]]; then
			LOOPDEV_FILE=$(losetup -n -O BACK-FILE "$LOOPDEV" 2>/dev/null | sed 's/ *$//')
			[[ $LOOPDEV_FILE == /dev/shm/rsuring-bench.* ]] || LOOPDEV_FILE=
		fi
		loopdev_teardown
		;;
	run)
		local size=
		if [[ ${1:-} != -- ]]; then size=${1:-}; shift || true; fi
		[[ ${1:-} == -- ]] && shift
		[[ $# -ge 1 ]] || { echo "usage: $0 run [SIZE] -- CMD..." >&2; exit 2; }
		loopdev_setup "$size" || exit 1
		local rc=0
		loopdev_exec "$@" || rc=$?
		exit "$rc"
		;;
	*)
		sed -n '4,11s/^# \{0,1\}//p' "$0" >&2
		exit 2
		;;
	esac
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	set -u
	_loopdev_main "$@"
fi
