#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Where the hot-path time goes, without timing noise: for each case, the
# user-space instructions per operation (callgrind, split by object and by
# library function) and the io_uring_enter calls per operation (strace -c),
# for Debian's liburing and for rsuring. Run bench/hotpath/run.sh first (it
# builds the programs); needs valgrind and strace.
#
#   bench/hotpath/profile.sh            all cases
#   bench/hotpath/profile.sh nop-qd1    only the cases whose name matches
#
# Output: printed, and target/bench/hotpath/prof/profile.txt.

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
WORK=$ROOT/target/bench/hotpath
PROF=$WORK/prof
FILTER=${1:-}

for v in $(env | sed -n 's/^\(RSURING_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
[[ -x $WORK/hotpath && -e $WORK/rslib/liburing.so.2 ]] || {
	echo "profile: run bench/hotpath/run.sh first" >&2
	exit 1
}
command -v valgrind >/dev/null && command -v strace >/dev/null || {
	echo "profile: needs valgrind and strace (apt-get install valgrind strace)" >&2
	exit 1
}
mkdir -p "$PROF"
: >"$PROF/profile.txt"

READ_FILE=
cleanup() { [[ -n $READ_FILE ]] && rm -f -- "$READ_FILE"; }
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# name | variant list | hotpath arguments
CASES=(
	"nop-qd1|liburing rsuring|nop-qd1 0.5"
	"nop-b1|liburing rsuring|nop-qd 128 1 0.5"
	"nop-b32|liburing rsuring rsuring-stats|nop-qd 128 32 0.5"
	"nop-b32-regring|liburing rsuring|nop-qd 128 32 0.5 regring"
	"reap-one|liburing rsuring|reap one 2000"
	"reap-batch|liburing rsuring|reap batch 2000"
	"reap-waitbatch|rsuring-ext|reap waitbatch 2000"
	"read-buffered-qd1|liburing rsuring|read @FILE 1 buffered plain 0.5"
	"read-buffered-qd32-defer|liburing rsuring|read @FILE 32 buffered defer 0.5"
)

for c in "${CASES[@]}"; do
	IFS='|' read -r name variants args <<<"$c"
	[[ -z $FILTER || $name == *$FILTER* ]] || continue
	if [[ $args == *@FILE* && -z $READ_FILE ]]; then
		READ_FILE=$(mktemp /dev/shm/rsuring-hotpath-prof.XXXXXX)
		dd if=/dev/urandom of="$READ_FILE" bs=1M count=64 status=none
	fi
	args=${args//@FILE/$READ_FILE}
	for v in $variants; do
		bin=$WORK/hotpath
		envs=()
		case $v in
		liburing) ;;
		rsuring) envs=(LD_LIBRARY_PATH="$WORK/rslib") ;;
		rsuring-stats) envs=(LD_LIBRARY_PATH="$WORK/rslib" RSURING_STATS=1) ;;
		rsuring-ext) envs=(LD_LIBRARY_PATH="$WORK/rslib"); bin=$WORK/hotpath-rsext ;;
		esac
		# shellcheck disable=SC2086
		out=$(env "${envs[@]}" valgrind -q --tool=callgrind \
			--callgrind-out-file="$PROF/cg.$name.$v" "$bin" $args 2>"$PROF/vg.$name.$v.log")
		ops=$(sed -n 's/.* ops=\([0-9]*\).*/\1/p' <<<"$out")
		# shellcheck disable=SC2086
		sout=$(env "${envs[@]}" strace -f -c -o "$PROF/strace.$name.$v" "$bin" $args)
		sops=$(sed -n 's/.* ops=\([0-9]*\).*/\1/p' <<<"$sout")
		enters=$(awk '$NF == "io_uring_enter" { print $4 }' "$PROF/strace.$name.$v")
		{
			echo "== $name / $v: $(awk -v e="${enters:-0}" -v o="$sops" 'BEGIN { printf "%.4f", e / o }') io_uring_enter per op (strace: $enters calls, $sops ops)"
			python3 "$HERE/cgsum.py" "$PROF/cg.$name.$v" "$ops" 6
		} | tee -a "$PROF/profile.txt"
	done
done
