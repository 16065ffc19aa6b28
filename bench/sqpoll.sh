#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Shared-SQPOLL benchmark: K rings x iodepth D of 4 KiB O_DIRECT random reads
# on a loop device over /dev/shm, application threads on one CPU, SQ pollers
# on another. For each K, in the same run and interleaved:
#   shared     K rings sharing one SQ thread (IORING_SETUP_SQPOLL_PERCPU)
#   dedicated  K rings, one SQ thread each, all on the poll CPU
#   single     one ring at depth K*D
# repeated R times; the table shows medians. Needs root (loop device).
#
# usage: bench/sqpoll.sh [options]
#   --time T        measured seconds per run (default 5; 1 s warm-up on top)
#   --reps R        repetitions (default 3)
#   --ks "LIST"     ring counts (default "1 2 4 8")
#   --depth D       iodepth per ring (default 32)
#   --size SIZE     loop device size (default 1G)
#   --app-cpu N     CPU of the application threads (default 0)
#   --poll-cpu N    CPU of the SQ threads (default 1)
#   --idle MS       sq_thread_idle (default: kernel default, 1 s)
#   --nopoll        also run K rings without SQPOLL (reference column)
#   --fio           also run the fio cross-check (installs fio if missing)
#   --out FILE      where to write the Markdown (default
#                   target/bench/sqpoll/results.md; bench/run.sh
#                   --commit-results copies it to bench/sqpoll/results.md)
#   --no-build      skip cargo build / cc (use what target/ has)
#   --rings-args "ARGS"  extra options for every rings run (e.g. "--spin",
#                   "--wait-nr 8"; see target/bench/rings --help)
#   --boost N       run each benchmark process (rings, fio) in a session of its
#                   own whose autogroup nice is N (default -20), so that other
#                   sessions' load on a shared machine cannot take the SQ
#                   threads' CPU: with autogroup scheduling, all our threads
#                   otherwise get one session's share whatever their nice
#   --no-boost      leave scheduling alone
#   --wait-quiet P  before each run, wait (up to 60 s) until CPUs APP and POLL
#                   are under P % busy: for machines shared with other work
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
COMMON_WHO=sqpoll.sh
# shellcheck source=../scripts/lib-common.sh
. "$ROOT/scripts/lib-common.sh"
BUILD=$ROOT/target/bench
RINGS=$BUILD/rings
LIB=$ROOT/target/release/librsuring.so

TIME=5 REPS=3 KS="1 2 4 8" DEPTH=32 SIZE=1G APP_CPU=0 POLL_CPU=1 IDLE=
WITH_NOPOLL=0 WITH_FIO=0 OUT=$ROOT/target/bench/sqpoll/results.md DO_BUILD=1 QUIET=100 EXTRA= BOOST=-20

usage() { sed -n '3,36s/^# \{0,1\}//p' "$0"; exit "${1:-0}"; }

while [[ $# -gt 0 ]]; do
	case $1 in
	--time) TIME=$2; shift 2 ;;
	--reps) REPS=$2; shift 2 ;;
	--ks) KS=$2; shift 2 ;;
	--depth) DEPTH=$2; shift 2 ;;
	--size) SIZE=$2; shift 2 ;;
	--app-cpu) APP_CPU=$2; shift 2 ;;
	--poll-cpu) POLL_CPU=$2; shift 2 ;;
	--idle) IDLE=$2; shift 2 ;;
	--nopoll) WITH_NOPOLL=1; shift ;;
	--fio) WITH_FIO=1; shift ;;
	--out) OUT=$2; shift 2 ;;
	--no-build) DO_BUILD=0; shift ;;
	--wait-quiet) QUIET=$2; shift 2 ;;
	--rings-args) EXTRA=$2; shift 2 ;;
	--boost) BOOST=$2; shift 2 ;;
	--no-boost) BOOST=; shift ;;
	-h|--help) usage 0 ;;
	*) echo "sqpoll.sh: unknown option $1" >&2; usage 2 >&2 ;;
	esac
done

log() { echo "sqpoll.sh: $*" >&2; }
die() { log "error: $*"; exit 1; }

[[ $(id -u) == 0 ]] || die "needs root (losetup)"
ncpu=$(nproc --all)
((APP_CPU < ncpu && POLL_CPU < ncpu)) || die "need CPUs $APP_CPU and $POLL_CPU (have $ncpu)"
((APP_CPU != POLL_CPU)) || die "--app-cpu and --poll-cpu must differ"

# ---- build --------------------------------------------------------------

build() {
	log "cargo build --release"
	(cd "$ROOT" && cargo build --release --quiet) || die "cargo build failed"
	[[ -f $LIB ]] || die "$LIB missing after cargo build"
	mkdir -p "$BUILD/lib"
	# The library's SONAME is liburing.so.2: give the linker and the loader
	# that name, pointing at our build, on the binary's rpath.
	ln -sfn ../../release/librsuring.so "$BUILD/lib/liburing.so.2"
	log "cc rings.c"
	${CC:-cc} -O2 -Wall -Wextra -Werror -pthread -I"$ROOT/include" \
		"$ROOT/bench/sqpoll/rings.c" -o "$RINGS" \
		-L"$BUILD/lib" -l:liburing.so.2 -Wl,-rpath,'$ORIGIN/lib' ||
		die "cannot compile rings.c"
}

((DO_BUILD)) && build
[[ -x $RINGS ]] || die "$RINGS missing (run without --no-build)"
resolved=$(ldd "$RINGS" | awk '$1 == "liburing.so.2" { print $3 }')
[[ $(readlink -f "$resolved") == $(readlink -f "$LIB") ]] ||
	die "rings resolves liburing.so.2 to '$resolved', not $LIB"
log "rings uses $resolved -> $(readlink -f "$resolved")"

# ---- device ---------------------------------------------------------------

# loopdev_setup, run_child (scripts/lib-common.sh).
loopdev_setup "$SIZE" || die "loop device setup failed"
DEV=$LOOPDEV
DEV_QD=$(cat "/sys/block/${DEV#/dev/}/queue/nr_requests" 2>/dev/null || echo '?')

RAW=$BUILD/sqpoll-raw.txt
: >"$RAW"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

# Busy % of CPUs $APP_CPU and $POLL_CPU together over $1 seconds, from
# /proc/stat: taken between runs, it is load that is not ours.
background_load() {
	local a b
	a=$(grep -E "^cpu($APP_CPU|$POLL_CPU) " /proc/stat)
	sleep "$1"
	b=$(grep -E "^cpu($APP_CPU|$POLL_CPU) " /proc/stat)
	printf '%s\n%s\n' "$a" "$b" | awk '
		{ t = 0; for (i = 2; i <= 9; i++) t += $i; busy = t - $5 - $6 }
		NR <= 2 { t0 += t; b0 += busy; next }
		{ t1 += t; b1 += busy }
		END { printf "%.0f\n", (t1 > t0 ? 100 * (b1 - b0) / (t1 - t0) : 0) }'
}

# Waits (up to 60 s) for the two CPUs to be under $QUIET % busy.
wait_quiet() {
	local bg deadline=$((SECONDS + 60))
	while bg=$(background_load 0.5); ((bg > QUIET && SECONDS < deadline)); do
		:
	done
	echo "$bg"
}

# One run; appends "rep=R bg=B <RESULT line>" to $RAW.
run_one() {
	local rep=$1 mode=$2 k=$3 line out bg
	local args=(--dev "$DEV" --mode "$mode" --rings "$k" --depth "$DEPTH" --time "$TIME"
		--app-cpu "$APP_CPU" --poll-cpu "$POLL_CPU" --quiet)
	[[ -n $IDLE ]] && args+=(--idle "$IDLE")
	# shellcheck disable=SC2206 # word splitting of the user's options is wanted
	[[ -n $EXTRA ]] && args+=($EXTRA)
	[[ -n $BOOST ]] && args+=(--autogroup-nice "$BOOST")
	if ((QUIET < 100)); then bg=$(wait_quiet); else bg=$(background_load 0.3); fi
	out=$(mktemp)
	if ! run_child "$RINGS" "${args[@]}" >"$out" 2>&1; then
		cat "$out" >&2
		rm -f "$out"
		die "rings failed: mode=$mode K=$k (see above)"
	fi
	line=$(grep '^RESULT ' "$out" || true)
	rm -f "$out"
	[[ -n $line ]] || die "no RESULT from rings mode=$mode K=$k"
	echo "rep=$rep bg=$bg $line" >>"$RAW"
	log "rep $rep K=$k $mode: $(sed 's/.* iops=\([0-9]*\).* pollers=\([0-9]*\).*/\1 IOPS, \2 SQ threads/' <<<"$line") (background load before: $bg%)"
}

MODES=(shared dedicated single)
((WITH_NOPOLL)) && MODES+=(nopoll)
nm=${#MODES[@]}
start=$(date +%s)
for ((rep = 1; rep <= REPS; rep++)); do
	for k in $KS; do
		# Rotate the order each repetition so no mode always runs first.
		for ((i = 0; i < nm; i++)); do
			run_one "$rep" "${MODES[(i + rep - 1) % nm]}" "$k"
		done
	done
done
elapsed=$(($(date +%s) - start))
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- fio cross-check --------------------------------------------------------

FIO_MD=
run_fio() {
	local name=$1 jobs=$2 depth=$3 json pollers=0 pid
	shift 3
	json=$(mktemp)
	# Same scheduling as the rings runs: a session of its own (setsid does
	# not fork here: a background job of this script is no group leader).
	setsid -w bash -c '[[ -z $1 ]] || echo "$1" >/proc/self/autogroup; shift; exec "$@"' \
		boost "$BOOST" env "$@" fio --name="$name" --filename="$DEV" --ioengine=io_uring --direct=1 \
		--rw=randread --bs=4k --iodepth="$depth" --numjobs="$jobs" \
		--sqthread_poll=1 --sqthread_poll_cpu="$POLL_CPU" --cpus_allowed="$APP_CPU" \
		--time_based --runtime="$TIME" --ramp_time=1 --group_reporting \
		--output-format=json --output="$json" &
	pid=$!
	COMMON_CHILD=$pid
	sleep $((1 + TIME / 2))
	# fio's jobs are processes: count SQ threads in fio's process tree.
	pollers=$(ps -e -L -o tgid=,comm= | awk -v pids=" $pid $(pgrep -d ' ' -P "$pid" || true) " \
		'index(pids, " " $1 " ") && $2 ~ /^iou-sqp/ { n++ } END { print n + 0 }')
	wait "$pid" || { COMMON_CHILD=; rm -f "$json"; die "fio $name failed"; }
	COMMON_CHILD=
	FIO_IOPS=$(jq '[.jobs[].read.iops] | add | floor' "$json")
	FIO_POLLERS=$pollers
	rm -f "$json"
}

if ((WITH_FIO)); then
	if ! command -v fio >/dev/null; then
		log "installing fio"
		DEBIAN_FRONTEND=noninteractive apt-get install -y fio >/dev/null || die "apt-get install fio failed"
	fi
	command -v jq >/dev/null || die "jq is needed to read fio's JSON"
	fio_bin=$(command -v fio)
	fio_ver=$(fio --version)
	if ldd "$fio_bin" | grep -q 'liburing'; then
		fio_links="links $(ldd "$fio_bin" | awk '/liburing/ { print $1 " => " $3 }')"
		fio_preload_effective=1
	else
		fio_links="does not link liburing (ldd $fio_bin shows no liburing.so.2): its io_uring engine issues io_uring_setup/io_uring_enter itself"
		fio_preload_effective=0
	fi
	log "fio: $fio_ver, $fio_links"
	run_fio single 1 $((4 * DEPTH))
	f1=$FIO_IOPS p1=$FIO_POLLERS
	log "fio 1 job x iodepth $((4 * DEPTH)): $f1 IOPS, $p1 SQ threads"
	run_fio dedicated 4 "$DEPTH"
	f4=$FIO_IOPS p4=$FIO_POLLERS
	log "fio 4 jobs x iodepth $DEPTH: $f4 IOPS, $p4 SQ threads"
	run_fio preload 4 "$DEPTH" LD_PRELOAD="$LIB" RSURING_SQPOLL_PERCPU=1
	fp=$FIO_IOPS pp=$FIO_POLLERS
	log "fio 4 jobs x iodepth $DEPTH with LD_PRELOAD=$LIB RSURING_SQPOLL_PERCPU=1: $fp IOPS, $pp SQ threads"
	if ((fio_preload_effective)); then
		preload_cell="$fp | $pp"
		preload_note="fio links liburing, so the preload applies."
	else
		preload_cell="n/a (measured $fp, but that is fio's own rings) | $pp"
		preload_note="The preload has no effect: $fio_bin $fio_links, so librsuring.so is loaded but never called, and each job keeps its own SQ thread (fio's jobs are also separate processes, and the kernel shares SQ threads only within one process). The LD_PRELOAD figure is therefore just the dedicated case again, not an rsuring result; use rings.c above (or rsuring's fio engine) for the shared figure."
	fi
	FIO_MD=$(cat <<EOF

## fio cross-check ($fio_ver, its built-in io_uring engine)

\`sqthread_poll=1 sqthread_poll_cpu=$POLL_CPU cpus_allowed=$APP_CPU\`, randread 4k, direct, ${TIME} s + 1 s ramp, same loop device.

| case | IOPS | SQ threads seen |
| --- | ---: | ---: |
| 1 job, iodepth $((4 * DEPTH)) | $f1 | $p1 |
| 4 jobs, iodepth $DEPTH (dedicated SQ threads) | $f4 | $p4 |
| 4 jobs, iodepth $DEPTH, \`LD_PRELOAD=librsuring.so RSURING_SQPOLL_PERCPU=1\` | $preload_cell |

$preload_note

Note: with \`sqthread_poll=1\`, fio 3.33's engine never sleeps for completions: \`fio_ioring_getevents()\` only calls \`io_uring_enter(GETEVENTS)\` when \`sqthread_poll\` is off, so each job busy-polls its CQ on CPU $APP_CPU. On 2 CPUs that spinning competes with the loop device's kworker (which does the actual copy from /dev/shm); compare \`rings --spin\`.
EOF
)
fi

# ---- report -----------------------------------------------------------------

# Statistic of RESULT field $3 over the runs of mode $1 with K=$2:
# median (default), range (min-max), or set (the value, or min-max if not all equal).
med() {
	local mode=$1 k=$2 field=$3 how=${4:-median}
	awk -v pat=" mode=$mode rings=$k depth=$DEPTH " -v field="$field" -v how="$how" '
		index($0, pat) {
			for (i = 1; i <= NF; i++)
				if (index($i, field "=") == 1) v[n++] = substr($i, length(field) + 2) + 0
		}
		END {
			if (!n) { print "-"; exit }
			for (i = 1; i < n; i++)	# insertion sort: n is tiny
				for (j = i; j > 0 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
			if (how == "range") { printf "%s-%s\n", v[0], v[n - 1]; exit }
			if (how == "set") { if (v[0] == v[n - 1]) print v[0]; else printf "%s-%s\n", v[0], v[n - 1]; exit }
			printf "%.0f\n", n % 2 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2
		}' "$RAW"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 > 0) printf "%.2f", a / b; else print "-" }'; }
kfmt() { awk -v v="$1" 'BEGIN { if (v == "-") print v; else printf "%.1fK", v / 1000 }'; }

table() {
	local k s d g
	echo "| K | D | shared IOPS | dedicated IOPS | single IOPS (1 ring, D=K×$DEPTH) | shared/single | shared/dedicated | SQ threads seen (shared/dedicated) |"
	echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | :---: |"
	for k in $KS; do
		s=$(med shared "$k" iops) d=$(med dedicated "$k" iops) g=$(med single "$k" iops)
		echo "| $k | $DEPTH | $(kfmt "$s") | $(kfmt "$d") | $(kfmt "$g") | $(ratio "$s" "$g") | $(ratio "$s" "$d") | $(med shared "$k" pollers set) / $(med dedicated "$k" pollers set) |"
	done
}

details() {
	local k m
	echo "| K | mode | IOPS median (range) | slowest/fastest ring | SQ-thread CPU | SQ-thread run-queue wait | app-thread CPU | app waits/s | io-wq workers | CPU $APP_CPU / CPU $POLL_CPU busy | load before run |"
	echo "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	for k in $KS; do
		for m in "${MODES[@]}"; do
			echo "| $k | $m | $(kfmt "$(med "$m" "$k" iops)") ($(med "$m" "$k" iops range)) | $(kfmt "$(med "$m" "$k" min_ring_iops)") / $(kfmt "$(med "$m" "$k" max_ring_iops)") | $(med "$m" "$k" sqp_cpu_pct)% | $(med "$m" "$k" sqp_wait_pct)% | $(med "$m" "$k" app_cpu_pct)% | $(med "$m" "$k" waits_per_s) | $(med "$m" "$k" iowq set) | $(med "$m" "$k" app_cpu_busy)% / $(med "$m" "$k" poll_cpu_busy)% | $(med "$m" "$k" bg range)% |"
		done
	done
}

nopoll_table() {
	local k
	echo "| K | nopoll IOPS (K rings, no SQPOLL) | shared/nopoll |"
	echo "| ---: | ---: | ---: |"
	for k in $KS; do
		echo "| $k | $(kfmt "$(med nopoll "$k" iops)") | $(ratio "$(med shared "$k" iops)" "$(med nopoll "$k" iops)") |"
	done
}

noise() {
	awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^bg=/) { v = substr($i, 4) + 0; s += v; n++; if (v > m) m = v } }
		END { if (n && s / n > 10) printf "\n**Warning:** CPUs %s and %s were on average %.0f%% busy (up to %.0f%%) with other work just before the runs; the figures above are noisy. Rerun on an idle machine or with --wait-quiet 10.\n", a, p, s / n, m }' \
		a="$APP_CPU" p="$POLL_CPU" "$RAW"
}

verdict() {
	local s d g
	s=$(med shared 4 iops) d=$(med dedicated 4 iops) g=$(med single 4 iops)
	[[ $s == - ]] && return
	awk -v s="$s" -v d="$d" -v g="$g" 'BEGIN {
		printf "Target (K=4, D=32): shared >= 95%% of single -> %.0f%% (%s); shared >= 4x dedicated -> %.2fx (%s)\n",
			100 * s / g, (s >= 0.95 * g ? "met" : "MISSED"), s / d, (s >= 4 * d ? "met" : "MISSED")
	}'
}

MD=$(cat <<EOF
# Shared SQPOLL: K rings × iodepth $DEPTH

4 KiB O_DIRECT random reads on a $SIZE loop device (direct-io=on) over /dev/shm; application threads on CPU $APP_CPU, SQ threads on CPU $POLL_CPU (\`IORING_SETUP_SQ_AFF\`), sq_thread_idle ${IDLE:-kernel default (1 s)}${EXTRA:+, rings options \`$EXTRA\`}${BOOST:+, each run in its own autogroup with nice $BOOST (\`--boost\`)}. Median of $REPS interleaved runs of ${TIME} s (after 1 s warm-up). The device queue depth is $DEV_QD (\`nr_requests\`): when K×D exceeds it, reads beyond it get -EAGAIN from the block layer and io_uring punts them to io-wq (the "io-wq workers" column below), in every mode alike. Generated by \`bench/sqpoll.sh\` on $(date -u +%Y-%m-%d) — $(uname -sr), $(nproc --all) CPUs ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)), load average $load_before before, $load_after after.

$(table)

$(verdict)
$(noise)

<details><summary>Per-mode detail (medians)</summary>

SQ-thread and app-thread CPU are the sums over those threads, in % of one CPU (from /proc/self/task/*/schedstat); "CPU busy" is the whole CPU from /proc/stat, so busy minus our threads is kernel work done elsewhere (the loop device's kworker) and other load on the machine.

$(details)

</details>
$(if ((WITH_NOPOLL)); then printf '\n%s\n' "$(nopoll_table)"; fi)
$FIO_MD
EOF
)

mkdir -p "$(dirname "$OUT")"
printf '%s\n' "$MD" >"$OUT"
echo
printf '%s\n' "$MD"
echo
log "wrote $OUT (raw results: $RAW); benchmark time ${elapsed}s"
