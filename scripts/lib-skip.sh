# shellcheck shell=sh
# Sourced by the check scripts (POSIX sh): what a check does when it cannot
# run here. Under RSURING_STRICT=1 (CI: .ci/run) that is a failure.
#
#   skip WHY...           exit 1 under strict mode, else say why and exit 0
#   need_tool TOOL PKG    skip unless TOOL is on PATH (PKG: its Debian package,
#                         which scripts/setup.sh installs)

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
