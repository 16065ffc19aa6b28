# shellcheck shell=sh
# Sourced by the check scripts (POSIX sh): what a check does when it cannot
# run here (under RSURING_STRICT=1, CI's .ci/run, that is a failure), and
# what the install and package checks share.
#
#   skip WHY...           exit 1 under strict mode, else say why and exit 0
#   need_tool TOOL PKG    skip unless TOOL is on PATH (PKG: its Debian package,
#                         which scripts/setup.sh installs)
#   mapped_under_dropin F  starts a process with the Environment= lines of
#                         the systemd drop-in F, as systemd would, and prints
#                         the librsuring file it maps

skip() {
	if [ "${RSURING_STRICT:-}" = 1 ]; then
		echo "FAIL ${0##*/}: cannot be skipped under RSURING_STRICT=1: $*" >&2
		exit 1
	fi
	echo "SKIPPED ${0##*/}: $*" >&2
	exit 0
}

need_tool() {
	command -v "$1" >/dev/null 2>&1 ||
		skip "$1 is missing (Debian package $2; scripts/setup.sh installs it)"
}

mapped_under_dropin() {
	# shellcheck disable=SC2046 # one word per assignment (no spaces in them)
	env $(sed -n 's/^Environment=//p' "$1") sleep 30 &
	_pid=$!
	for _ in $(seq 50); do grep -q librsuring "/proc/$_pid/maps" 2>/dev/null && break; sleep 0.1; done
	awk '/librsuring/ { print $NF; exit }' "/proc/$_pid/maps" 2>/dev/null || true
	kill "$_pid" 2>/dev/null || true
	wait "$_pid" 2>/dev/null || true
}
