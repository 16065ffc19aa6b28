#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The whole benchmark set in one command: hot path (bench/hotpath.sh),
# shared SQPOLL (bench/sqpoll.sh), transparent SQPOLL
# (bench/transparent.sh), and the fio engine against fio's own io_uring
# engine (fio_engine/compare.sh). Results and charts go to target/bench/:
#
#   target/bench/results.md          everything, in one file
#   target/bench/hotpath/results.md  hot path: ratios, per-variant figures,
#                                    instruction counts
#   target/bench/hotpath/ratios.svg  the hot-path ratio chart
#   target/bench/sqpoll/results.md   shared SQPOLL
#   target/bench/fio/results.md      fio engine
#
# Committed result files (bench/hotpath/results.md and ratios.svg,
# bench/sqpoll/results.md, fio_engine/results.md) change only with
# --commit-results, and only after a complete run with the default amounts;
# --commit-results then regenerates docs/performance.md from them
# (bench/performance_doc.py; tests/docs.rs checks it is up to date).
#
# usage: bench/run.sh [--commit-results] [--quick] [--only "SUITES"]
#                     [--upstream DIR] [--rounds N]
#   --upstream DIR  a checkout of upstream liburing (2.15 or later): built
#                   into target/bench/build/ and measured as the second
#                   reference next to Debian's 2.3 (without it: reported
#                   as absent)
#   --only SUITES   some of: hotpath sqpoll transparent fio (default: all)
#   --quick         a few rounds of less work each (minutes, noisier)
#   --rounds N      hot-path rounds per block (default 9)
#
# Needs root (loop devices, fio's source via apt-get source), gcc, cargo,
# Debian's liburing-dev, python3 (standard library only), valgrind and
# strace. Takes 30-40 minutes on 2 busy cores.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$ROOT/target/bench
COMMIT=0 QUICK=0 ONLY="hotpath sqpoll transparent fio" UPSTREAM= ROUNDS=9 ROUNDS_SET=0 ONLY_SET=0

while [[ $# -gt 0 ]]; do
	case $1 in
	--commit-results) COMMIT=1; shift ;;
	--quick) QUICK=1; shift ;;
	--only) ONLY=$2; ONLY_SET=1; shift 2 ;;
	--upstream) UPSTREAM=$2; shift 2 ;;
	--rounds) ROUNDS=$2; ROUNDS_SET=1; shift 2 ;;
	-h | --help) sed -n '3,35s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "bench: unknown option $1" >&2; exit 2 ;;
	esac
done
log() { printf 'bench: %s\n' "$*" >&2; }
if ((COMMIT && (QUICK || ONLY_SET || ROUNDS_SET))); then
	log "--commit-results needs a complete run with the default amounts (no --quick, --only, --rounds)"
	exit 2
fi
for s in $ONLY; do
	case $s in hotpath | sqpoll | transparent | fio) ;; *) log "unknown suite $s"; exit 2 ;; esac
done
wants() { [[ " $ONLY " == *" $1 "* ]]; }

mkdir -p "$OUT"
T0=$(date +%s)
status=0

if wants hotpath; then
	args=(--rounds "$ROUNDS")
	((QUICK)) && args=(--rounds 3 --scale 0.3)
	[[ -n $UPSTREAM ]] && args+=(--upstream "$UPSTREAM")
	log "hot path"
	"$ROOT/bench/hotpath.sh" "${args[@]}" || status=1
fi
if wants sqpoll; then
	mkdir -p "$OUT/sqpoll"
	args=(--out "$OUT/sqpoll/results.md")
	((QUICK)) && args+=(--reps 1 --time 2 --ks "2 4")
	log "shared SQPOLL"
	"$ROOT/bench/sqpoll.sh" "${args[@]}" || status=1
fi
if wants transparent; then
	log "transparent SQPOLL"
	"$ROOT/bench/transparent.sh" "$( ((QUICK)) && echo 2 || echo 5)" || status=1
fi
if wants fio; then
	mkdir -p "$OUT/fio"
	log "fio engine"
	if ((QUICK)); then
		OUT="$OUT/fio/results.md" ROUNDS=1 IOS=16384 "$ROOT/fio_engine/compare.sh" || status=1
	else
		OUT="$OUT/fio/results.md" "$ROOT/fio_engine/compare.sh" || status=1
	fi
fi

# One file with everything.
{
	echo "# rsuring benchmarks"
	echo
	echo "\`bench/run.sh$( ((QUICK)) && echo ' --quick')\` at $(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo '?'), $(date -u '+%Y-%m-%d %H:%M UTC'), $(($(date +%s) - T0)) s."
	for f in hotpath/results.md sqpoll/results.md transparent/results.md fio/results.md; do
		if [[ -f $OUT/$f ]] && wants "${f%%/*}"; then
			echo
			sed 's/^#/##/' "$OUT/$f"
		fi
	done
} >"$OUT/results.md"
log "wrote $OUT/results.md"

if ((COMMIT)); then
	((status == 0)) || { log "a suite failed: committed results left as they are"; exit 1; }
	cp "$OUT/hotpath/results.md" "$ROOT/bench/hotpath/results.md"
	cp "$OUT/hotpath/ratios.svg" "$ROOT/bench/hotpath/ratios.svg"
	cp "$OUT/sqpoll/results.md" "$ROOT/bench/sqpoll/results.md"
	cp "$OUT/fio/results.md" "$ROOT/fio_engine/results.md"
	python3 "$ROOT/bench/performance_doc.py" --write
	log "copied the results into bench/hotpath/, bench/sqpoll/ and fio_engine/ and regenerated docs/performance.md (review, then commit)"
fi
exit "$status"
