#!/usr/bin/env bash
# Random-kill soak (issue 22): N starter flows on the embedded demo model,
# each started in a fresh workspace and state dir, SIGKILLed at a random
# instant of its first WINDOW ms (800: the length of a whole flow on a
# loaded 2-core machine) with probability 3/4 per start, at most KILLS
# times, then woken
# bare until a wake ends by itself (a start killed before it printed
# anything acknowledged nothing, so the next one gives the task again, as
# the person would). A flow passes when:
#   - the wake that ends exits 0 and says the verdict passed,
#   - hello.txt holds "hello",
#   - manifest.json and lineage.json parse, the manifest has a passed
#     judge row and every row has seed 000's fields,
#   - no temp file (.*.tmp, sessions.db.new-*) is left in the run dir or
#     the workbench,
#   - one more bare wake exits 0 saying there is nothing to continue.
# Anything else is a violation, printed with the flow's directory.
#
#   FLOWER=/path/to/flower bash bench/soak/run.sh 60
set -u
FLOWER=${FLOWER:-flower}
N=${1:-40}
KILLS=${KILLS:-3}
WINDOW=${WINDOW:-800} # ms: the kill lands in the start's first WINDOW ms
flows=0 kills=0 wakes=0 bad=0 silent=0
fields='["step","session_id","ok","cost_usd","num_turns","text","error","started_at","ended_at","attempts","errors","resumed","retired","context","duration_s","run"]'
violation() { bad=$((bad + 1)); echo "VIOLATION flow $1: $2 ($3)"; }
for i in $(seq 1 "$N"); do
	root=$(mktemp -d)
	ws=$root/ws state=$root/state
	mkdir -p "$ws" "$state"
	n=0 killed=0 rc=0 told=0
	while :; do
		args=(--model demo --timeout 0)
		[ "$told" -eq 0 ] && args+=("write a greeting file")
		(cd "$ws" && XDG_STATE_HOME=$state exec "$FLOWER" "${args[@]}") >"$root/out.$n" 2>&1 &
		pid=$!
		if [ "$killed" -lt "$KILLS" ] && ((RANDOM % 4 != 0)); then
			ms=$((RANDOM % WINDOW))
			sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
			kill -9 "$pid" 2>/dev/null
		fi
		wait "$pid" 2>/dev/null
		rc=$?
		# A start killed before it printed anything acknowledged nothing: the
		# person types the task again. Once it printed, the task must survive.
		[ -s "$root/out.$n" ] && told=1
		n=$((n + 1))
		if [ "$rc" -eq 137 ]; then
			killed=$((killed + 1))
			continue
		fi
		break
	done
	flows=$((flows + 1)) kills=$((kills + killed)) wakes=$((wakes + n - 1))
	silent=$((silent + $(for f in "$root"/out.*; do [ -s "$f" ] || echo x; done | wc -l)))
	last=$root/out.$((n - 1))
	run=$(echo "$state"/flower/projects/*)
	if [ "$rc" -ne 0 ]; then
		if grep -q "nothing to continue" "$last"; then
			violation "$i" "the task was lost after the start printed its banner" "$root"
		else
			violation "$i" "the last wake exited $rc" "$root"
			tail -3 "$last"
		fi
		continue
	fi
	grep -q "passed" "$last" || violation "$i" "the last wake did not say passed" "$root"
	[ "$(cat "$ws/hello.txt" 2>/dev/null)" = hello ] || violation "$i" "hello.txt is not hello" "$root"
	python3 - "$run" "$fields" <<'PY' || violation "$i" "exports" "$root"
import json, sys
run, fields = sys.argv[1], set(json.loads(sys.argv[2]))
rows = json.load(open(run + "/manifest.json"))
json.load(open(run + "/lineage.json"))
assert any("judge" in r["step"] and r["ok"] for r in rows), "no passed judge row"
for r in rows:
    assert fields <= set(r), "row %s lacks %s" % (r.get("step"), fields - set(r))
PY
	left=$(find "$run" "$ws/.flower" \( -name '.*.tmp' -o -name 'sessions.db.new-*' \) 2>/dev/null)
	[ -z "$left" ] || violation "$i" "temp files left: $left" "$root"
	(cd "$ws" && XDG_STATE_HOME=$state "$FLOWER" --model demo --timeout 0) >"$root/out.after" 2>&1 &&
		grep -q "nothing to continue" "$root/out.after" || violation "$i" "the bare wake after the pass" "$root"
	[ "$bad" -eq 0 ] && rm -rf "$root"
done
echo "$flows flows, $kills kills ($silent before any output: the task typed again), $wakes starts after a kill, $bad violations"
