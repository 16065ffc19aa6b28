# shellcheck shell=bash
# The stage runner of scripts/test.sh (sourced): each step of the test
# command is a named stage, timed; stages that may overlap others run in the
# background with their output in a log file, printed once they have ended.
#
#   stage NAME DESCRIPTION CMD...         run CMD now, output on the terminal
#   stage_beside NAME DESCRIPTION CMD...  start CMD in the background, output
#                                         in $STAGE_LOGS/NAME.log
#   join_stages [NAME...] || failed "$FAILED_STAGE"
#                                         wait for background stages (all
#                                         without NAME), print their logs
#   summary                               the table of stage times
#
# CMD runs in a subshell with errexit on, so a shell function given as CMD
# stops at its first failing command. The first failed stage stops the run
# (failed): the stages still running in the background are waited for, their
# logs and the table printed, and the run exits 1 naming the stage.

STAGE_LOGS=${STAGE_LOGS:-target/test-logs}
mkdir -p "$STAGE_LOGS"
rm -f "$STAGE_LOGS"/*.log "$STAGE_LOGS"/*.status

STAGES=()
declare -A STAGE_SECS=() STAGE_STATE=() STAGE_BESIDE=() BG_PID=()
RUN_START=$SECONDS

summary() {
	local n
	printf '\n==> stage times (seconds; & ran beside the stages after it)\n'
	for n in "${STAGES[@]}"; do
		printf '%6s %1s %-7s %s\n' "${STAGE_SECS[$n]:-?}" "${STAGE_BESIDE[$n]:-}" \
			"${STAGE_STATE[$n]:-running}" "$n"
	done
	printf '%6s   total (wall clock)\n' $((SECONDS - RUN_START))
}

failed() { # NAME: stop the run
	join_stages || true
	summary
	printf '\nFAILED: stage %s\n' "$1" >&2
	exit 1
}

# stage NAME DESCRIPTION CMD...: runs CMD here, output on the terminal.
# CMD runs in a subshell with errexit, so a function stops at its first
# failing command.
stage() {
	local name=$1 desc=$2 start=$SECONDS rc=0
	shift 2
	reap_stages
	STAGES+=("$name")
	printf '\n==> [%s] %s\n' "$name" "$desc"
	set +e
	(set -e; "$@")
	rc=$?
	set -e
	STAGE_SECS[$name]=$((SECONDS - start))
	if [ "$rc" != 0 ]; then
		STAGE_STATE[$name]="FAIL($rc)"
		failed "$name"
	fi
	STAGE_STATE[$name]=ok
	printf '<== [%s] ok, %ss\n' "$name" "${STAGE_SECS[$name]}"
	reap_stages
}

# stage_beside NAME DESCRIPTION CMD...: starts CMD in the background, output
# in $STAGE_LOGS/NAME.log; reap_stages / join_stages print it once it has ended.
# RSURING_SERIAL_STAGES=1 runs it as a plain stage instead (to tell whether
# an overlap disturbs a test).
stage_beside() {
	local name=$1 desc=$2
	if [ "${RSURING_SERIAL_STAGES:-}" = 1 ]; then
		stage "$@"
		return
	fi
	shift 2
	STAGES+=("$name")
	STAGE_BESIDE[$name]='&'
	printf '\n==> [%s] %s: started beside the next stages (log: %s)\n' "$name" "$desc" "$STAGE_LOGS/$name.log"
	(
		set +e
		start=$SECONDS
		(set -e; "$@")
		rc=$?
		echo "$rc $((SECONDS - start))" >"$STAGE_LOGS/$name.status"
		exit "$rc"
	) </dev/null >"$STAGE_LOGS/$name.log" 2>&1 &
	BG_PID[$name]=$!
}

# finish_stage NAME: waits for a background stage, prints its log and
# records its result; returns non-zero when it failed.
finish_stage() {
	local name=$1 rc secs
	wait "${BG_PID[$name]}" || true
	unset "BG_PID[$name]"
	read -r rc secs <"$STAGE_LOGS/$name.status" || { rc=1 secs=?; }
	STAGE_SECS[$name]=$secs
	printf '\n==> [%s] ended (ran beside others); its log:\n' "$name"
	cat "$STAGE_LOGS/$name.log"
	if [ "$rc" != 0 ]; then
		STAGE_STATE[$name]="FAIL($rc)"
		printf '<== [%s] FAILED (exit %s), %ss; log: %s\n' "$name" "$rc" "$secs" "$STAGE_LOGS/$name.log"
		return 1
	fi
	STAGE_STATE[$name]=ok
	printf '<== [%s] ok, %ss\n' "$name" "$secs"
}

# reap_stages: finishes the background stages that have ended.
reap_stages() {
	local name
	for name in "${!BG_PID[@]}"; do
		[ -f "$STAGE_LOGS/$name.status" ] || continue
		finish_stage "$name" || failed "$name"
	done
}

# join_stages [NAME...]: waits for these background stages (all without
# NAME); returns non-zero, with the first failed one in FAILED_STAGE, when
# one failed.
FAILED_STAGE=
join_stages() {
	local name
	[ $# -gt 0 ] || set -- "${!BG_PID[@]}"
	for name in "$@"; do
		[ -n "${BG_PID[$name]+x}" ] || continue
		finish_stage "$name" || FAILED_STAGE=${FAILED_STAGE:-$name}
	done
	[ -z "$FAILED_STAGE" ]
}

