#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# CPU cost per submit with one ring per thread (issue 21, "no lock on the
# submit path"): 1, 2, 4 and 8 threads, each with its own ring set up plain,
# NOP round trips, as nobody on CPU 0; rsuring plain against rsuring under
# RSURING_SQPOLL=1 with the poller on CPU 1 (RSURING_SQPOLL_CPUS=1; with
# RSURING_SQPOLL_STEP_ASIDE=0, since this measures the hand-over itself and
# a loaded CPU 1 would otherwise leave the rings plain), and,
# with OLD_LIB=path/to/librsuring.so, an earlier rsuring under the same
# transparent configuration (before/after a change). Rounds interleave the
# configurations; each figure is the median with min-max over rounds. Not a
# test: it prints figures and writes target/bench/transparent/threads.md.
#
#   bench/transparent_threads.sh [ROUNDS [OPS_PER_THREAD]]   (default 5, 20000)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
OPS=${2:-20000}
# bench_setup (OUT, LIB), build_for_nobody, AS_NOBODY, median_range.
# shellcheck source=../scripts/lib-common.sh
. scripts/lib-common.sh
bench_setup transparent "the cases switch to nobody"
build_for_nobody threads bench/transparent/threads.c -pthread
CONFIGS=(plain transparent)
[ -n "${OLD_LIB:-}" ] && CONFIGS+=(old)

one() { # CONFIG THREADS: prints "CONFIG THREADS app_ns proc_ns wall_s"
	local lib=$LIB vars=()
	case $1 in
	transparent) vars=(RSURING_SQPOLL=1 RSURING_SQPOLL_CPUS=1 RSURING_SQPOLL_STEP_ASIDE=0) ;;
	old) lib=$OLD_LIB vars=(RSURING_SQPOLL=1 RSURING_SQPOLL_CPUS=1) ;;
	esac
	taskset -c 0 "${AS_NOBODY[@]}" env LD_PRELOAD="$lib" "${vars[@]}" "$OUT/threads" "$2" "$OPS" |
		sed -E "s/.*wall_s=([0-9.]+) app_cpu_ns_per_op=([0-9.]+) proc_cpu_ns_per_op=([0-9.]+)/$1 $2 \2 \3 \1/"
}

: >"$OUT/threads.raw"
for r in $(seq "$ROUNDS"); do
	for t in 1 2 4 8; do
		# Rotate the order each round.
		for c in $(rotated $((r + t)) "${CONFIGS[@]}"); do one "$c" "$t" >>"$OUT/threads.raw"; done
	done
done

stat() { # CONFIG THREADS COLUMN [DECIMALS] -> "median (min-max)"
	awk -v c="$1" -v t="$2" -v k="$3" '$1 == c && $2 == t { print $k }' "$OUT/threads.raw" |
		median_range "${4:-0}"
}

{
	echo "# One ring per thread: CPU ns per NOP round trip ($ROUNDS interleaved rounds, $OPS per thread)"
	echo
	echo "Threads on CPU 0 as nobody; transparent: RSURING_SQPOLL=1 RSURING_SQPOLL_CPUS=1."
	echo "app: the submitting threads' CPU time; process: getrusage, the SQ poll thread included."
	echo "Host: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)."
	echo
	echo "| threads | config | app ns/op | process ns/op | wall s |"
	echo "| --- | --- | --- | --- | --- |"
	for t in 1 2 4 8; do
		for c in "${CONFIGS[@]}"; do
			echo "| $t | $c | $(stat "$c" "$t" 3) | $(stat "$c" "$t" 4) | $(stat "$c" "$t" 5 3) |"
		done
	done
} | tee "$OUT/threads.md"
