#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Transparent SQPOLL (RSURING_SQPOLL=1) against the alternatives a program
# has, same run, as the unprivileged user nobody (the contract refuses
# root). Not a test: it prints figures and writes target/bench/transparent/
# results.md.
#
#   bench/transparent.sh [ROUNDS]          (default 5 rounds, interleaved)
#
# Cases, each a plain liburing program built against Debian's <liburing.h>:
#   spaced reads  100 single 4 KiB reads 20 ms apart (the poller stays awake
#                 between them): p50/p90 submit-to-completion latency for
#                 Debian's liburing plain, the program asking for SQPOLL
#                 itself (-s), and rsuring under RSURING_SQPOLL=1 with the
#                 program on CPU 0 and its poller on CPU 1;
#   wake-ups      the same program with RSURING_SQPOLL_IDLE_MS=10 and 50 ms
#                 pauses (the poller sleeps between reads), counting
#                 SQ_WAKEUP io_uring_enter calls per submit with strace;
#   one CPU       under taskset -c 0 with RSURING_SQPOLL=1 and no poller CPU
#                 of its own: the ring stays plain (refused), so this is the
#                 plain figure, not a collapse.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
# bench_setup (OUT, LIB), build_for_nobody, AS_NOBODY, at_exit, median_range.
# shellcheck source=../scripts/lib-common.sh
. scripts/lib-common.sh
bench_setup transparent "the cases switch to nobody"
build_for_nobody spaced bench/transparent/spaced.c
DATA=$(mktemp /tmp/rsuring-spaced.XXXXXX)
at_exit 'rm -f "$DATA" "$OUT"/strace.*'
dd if=/dev/urandom of="$DATA" bs=1M count=4 status=none
chmod 644 "$DATA"

run_case() { # NAME CMD...: prints "NAME p50 p90"
	local name=$1 line
	shift
	line=$("$@" 2>/dev/null | grep '^reads=')
	echo "$name $(sed -E 's/.*p50_us=([0-9.]+) p90_us=([0-9.]+)/\1 \2/' <<<"$line")"
}

: >"$OUT/raw.txt"
for r in $(seq "$ROUNDS"); do
	# Rotate the order each round.
	for c in $(rotated "$r" plain sqpoll transparent); do
		case $c in
		plain) run_case plain taskset -c 0 "${AS_NOBODY[@]}" "$OUT/spaced" 100 20 "$DATA" ;;
		sqpoll) run_case sqpoll taskset -c 0 "${AS_NOBODY[@]}" "$OUT/spaced" -s 100 20 "$DATA" ;;
		transparent) run_case transparent taskset -c 0 "${AS_NOBODY[@]}" env LD_PRELOAD="$LIB" \
			RSURING_SQPOLL=1 RSURING_SQPOLL_CPUS=1 "$OUT/spaced" 100 20 "$DATA" ;;
		esac
	done >>"$OUT/raw.txt"
done

wake_ups() { # enters with SQ_WAKEUP per submit, poller asleep between reads
	strace -f -qq -e trace=io_uring_enter -o "$OUT/strace.wake" taskset -c 0 "${AS_NOBODY[@]}" \
		env LD_PRELOAD="$LIB" RSURING_SQPOLL=1 RSURING_SQPOLL_CPUS=1 RSURING_SQPOLL_IDLE_MS=10 \
		"$OUT/spaced" 20 50 "$DATA" >/dev/null 2>&1
	grep -c 'IORING_ENTER_SQ_WAKEUP' "$OUT/strace.wake" || true
}

{
	echo "# Transparent SQPOLL: spaced single reads (µs, $ROUNDS interleaved rounds)"
	echo
	echo "Program on CPU 0, unprivileged; rsuring's poller on CPU 1."
	echo "Host: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)."
	echo
	echo "| case | p50 median (min-max) | p90 median (min-max) |"
	echo "| --- | --- | --- |"
	for c in plain sqpoll transparent; do
		p50=$(awk -v c=$c '$1 == c { print $2 }' "$OUT/raw.txt")
		p90=$(awk -v c=$c '$1 == c { print $3 }' "$OUT/raw.txt")
		echo "| $c | $(median_range 1 <<<"$p50") | $(median_range 1 <<<"$p90") |"
	done
	echo
	echo "plain: Debian's liburing, no SQPOLL; sqpoll: the same program asking for"
	echo "IORING_SETUP_SQPOLL itself (Debian's liburing, unbound poller);"
	echo "transparent: rsuring, RSURING_SQPOLL=1 RSURING_SQPOLL_CPUS=1."
	echo
	echo "Wake-up enters for 20 submits with the poller asleep before each: $(wake_ups)"
} | tee "$OUT/results.md"
