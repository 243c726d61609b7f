#!/usr/bin/env bash
# End to end, whole processes (issue 19): `flower once` against a bare SDK
# loop (bench/wall12/bare) on the same 12-turn Write/Bash/Read session,
# served by a fake Anthropic API (bench/wall12/fake) that holds each answer
# back 50 ms. Each run is a new process in a new temporary workspace (and,
# for flower, a new state directory). A round runs every variant once, in
# an order that rotates from round to round:
#
#	flower      flower once as it ships (sandbox auto)
#	flower-off  the same with flower.yaml `sandbox: {mode: off}`
#	bare        the bare SDK loop
#	before      with BEFORE=PATH, that flower binary (say, main's), as
#	            flower is run: a before/after comparison in one run
#	dbos        with DBOS_DB=URL (a PostgreSQL database it may own), the
#	            bare loop made durable with DBOS Transact Go
#	            (bench/dbos/agent: each model and tool call a step)
#
# Every run is checked: 12 turns, 3 Write, 5 Bash and 3 Read calls, and the
# file they leave. Prints one line per run (wall seconds from bash's clock
# around the process, user and system seconds and peak RSS from
# /usr/bin/time; ms from the process's start to the fake's first request, from
# the first request to the last, and from the last answer to the process's
# exit; the mean time between two requests per tool the second one brings
# back, the 50 ms of the answer taken off), then medians per variant, the
# ratio to bare of each round and its median, and flower's added time per
# turn.
#
#	bash bench/wall12/run.sh [ROUNDS]      # default 7; from the repo root
#
# Environment: DELAY (default 50ms), VARIANTS (default "flower flower-off
# bare"), BEFORE (a flower binary, for the variant "before"), DBOS_DB (a
# PostgreSQL database URL, for the variant "dbos"), OUT (default a new temporary directory, kept: binaries, logs).
# Needs Go and bash; uses /usr/bin/time for CPU and RSS when it is there.
set -euo pipefail
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
rounds=${1:-7}
delay=${DELAY:-50ms}
read -r -a variants <<<"${VARIANTS:-flower flower-off bare}"
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/wall12.XXXXXX")}
mkdir -p "$out"
cd "$root"

echo "# building into $out" >&2
go build -o "$out/flower" ./cmd/flower
go build -o "$out/fake" ./bench/wall12/fake
go build -o "$out/bare" ./bench/wall12/bare
if [[ " ${variants[*]} " == *" dbos "* ]]; then
	: "${DBOS_DB:?the variant dbos needs DBOS_DB=a PostgreSQL database URL}"
	(cd bench/dbos && go build -o "$out/dbos" ./agent)
fi

"$out/fake" -delay "$delay" -log -dump "$out/request.json" >"$out/url" 2>"$out/fake.log" &
fake=$!
trap 'kill $fake 2>/dev/null || true' EXIT
for _ in $(seq 100); do [[ -s $out/url ]] && break; sleep 0.05; done
url=$(cat "$out/url")
delay_us=$(( $(sed -E 's/ms$//' <<<"$delay") * 1000 ))

{
	echo "# commit $(git rev-parse --short HEAD), $(go version)"
	echo "# nproc $(nproc), kernel $(uname -r), cpu$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
	echo "# fake $url, answers held back $delay"
	echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out/machine.txt"

# one VARIANT N: runs it in a new directory, checks it, prints its line.
one() {
	local v=$1 n=$2 dir
	dir=$(mktemp -d "$out/run.XXXXXX")
	mkdir "$dir/ws" "$dir/state"
	local cmd=("$out/flower" once --model claude-sonnet-4-6 "do the task")
	case $v in
	before) cmd=("${BEFORE:?before needs BEFORE=a flower binary}" "${cmd[@]:1}") ;;
	flower-off) printf 'sandbox:\n  mode: off\n' >"$dir/ws/flower.yaml" ;;
	bare) cmd=("$out/bare" -request "$out/request.json" "do the task") ;;
	dbos) cmd=("$out/dbos" -db "$DBOS_DB" -request "$out/request.json" "do the task") ;;
	esac
	local timer=()
	[[ -x /usr/bin/time ]] && timer=(/usr/bin/time -f '%e %U %S %M' -o "$dir/time")
	local before start end
	before=$(wc -l <"$out/fake.log")
	start=$EPOCHREALTIME
	(cd "$dir/ws" && ANTHROPIC_BASE_URL=$url ANTHROPIC_API_KEY=test XDG_STATE_HOME=$dir/state \
		"${timer[@]}" "${cmd[@]}" >"$dir/out" 2>"$dir/err") ||
		{ echo "$v run $n failed: see $dir" >&2; exit 1; }
	end=$EPOCHREALTIME
	[[ -s $dir/time ]] || echo "- 0 0 0" >"$dir/time"
	tail -n +"$((before + 1))" "$out/fake.log" >"$dir/requests"
	check "$v" "$dir"
	# wall user sys rss | first-request span after-last | per tool
	awk -v v="$v" -v n="$n" -v start="${start/./}" -v end="${end/./}" -v d="$delay_us" -v tm="$(tail -1 "$dir/time")" '
		{ t = substr($1, 3); if (NR == 1) first = t; else { tool = substr($3, 7); gap[tool] += t - prev - d; cnt[tool]++ } prev = t }
		END {
			split(tm, x, " ")
			printf "%-10s %2d  %6.3f %5.2f %5.2f %6d   %6.1f %7.1f %6.1f   %5.1f %5.1f %5.1f\n", v, n, (end - start) / 1e6, x[2], x[3], x[4],
				(first - start) / 1000, (prev - first) / 1000, (end - prev - d) / 1000,
				gap["Write"] / cnt["Write"] / 1000, gap["Bash"] / cnt["Bash"] / 1000, gap["Read"] / cnt["Read"] / 1000
		}' "$dir/requests"
	rm -rf "$dir"
}

# check VARIANT DIR: 12 requests, 3 Write, 5 Bash, 3 Read, the file left.
check() {
	local v=$1 dir=$2 w b r
	w=$(grep -c 'after=Write' "$dir/requests" || true)
	b=$(grep -c 'after=Bash' "$dir/requests" || true)
	r=$(grep -c 'after=Read' "$dir/requests" || true)
	if [[ $(wc -l <"$dir/requests") != 12 || $w$b$r != 353 || $(wc -l <"$dir/ws/notes.txt") != 60 ]] ||
		grep -q 'last="no tool\|Permission denied\|error' "$dir/requests"; then
		echo "$v: not the 12-turn session: see $dir" >&2
		exit 1
	fi
	case $v in
	bare | dbos) grep -q "^$v · 12 turns · Write 3, Bash 5, Read 3$" "$dir/out" ;;
	*) grep -q '· 12 turns ·' "$dir/out" && [[ $(grep -c '^  \[Write\]' "$dir/out") == 3 &&
		$(grep -c '^  \[Bash\]' "$dir/out") == 5 && $(grep -c '^  \[Read\]' "$dir/out") == 3 ]] ;;
	esac || { echo "$v: its output is not the 12-turn session: see $dir" >&2; exit 1; }
}

# A warm-up round (not counted): page cache, the request bare copies.
one flower 0 >/dev/null
one bare 0 >/dev/null
if [[ " ${variants[*]} " == *" dbos "* ]]; then one dbos 0 >/dev/null; fi

echo "variant    round  wall-s user  sys   rss-KiB  first-ms span-ms last-ms  write bash  read (ms per turn)" | tee "$out/runs.txt"
for ((i = 1; i <= rounds; i++)); do
	k=${#variants[@]}
	for ((j = 0; j < k; j++)); do
		one "${variants[$(((i + j) % k))]}" "$i"
	done | tee -a "$out/runs.txt"
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/machine.txt"

# Medians per variant, the ratio to bare per round, and flower's added
# time per turn (median of the per-round differences).
awk -v rounds="$rounds" -v order="${variants[*]}" '
	function median(a, n,   i, j, t) {
		for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
		return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
	}
	NR > 1 { for (c = 3; c <= 12; c++) val[$1, $2, c] = $c; seen[$1] = 1 }
	END {
		split("wall-s user sys rss-KiB first-ms span-ms last-ms write bash read", name, " ")
		print "\nmedians over " rounds " rounds:"
		nv = split(order, vs, " ")
		for (k = 1; k <= nv; k++) {
			v = vs[k]
			line = sprintf("%-10s", v)
			for (c = 3; c <= 12; c++) { for (i = 1; i <= rounds; i++) a[i] = val[v, i, c]; line = line sprintf(" %s=%.3g", name[c-2], median(a, rounds)) }
			print line
		}
		if (!seen["bare"]) exit
		for (k = 1; k <= nv; k++) {
			v = vs[k]
			if (v == "bare") continue
			line = ""
			for (i = 1; i <= rounds; i++) { r[i] = val[v, i, 3] / val["bare", i, 3]; line = line sprintf(" %.3f", r[i]) }
			printf "\n%s / bare, wall, per round:%s\n  median %.3f\n", v, line, median(r, rounds)
			line = "  added per turn (ms, median of the rounds):"
			for (c = 10; c <= 12; c++) { for (i = 1; i <= rounds; i++) a[i] = val[v, i, c] - val["bare", i, c]; line = line sprintf(" %s %+.1f", name[c-2], median(a, rounds)) }
			print line
			line = "  added outside the turns (ms):"
			for (c = 7; c <= 9; c++) { for (i = 1; i <= rounds; i++) a[i] = val[v, i, c] - val["bare", i, c]; line = line sprintf(" %s %+.1f", name[c-2], median(a, rounds)) }
			print line
		}
	}' "$out/runs.txt" | tee "$out/summary.txt"
echo "# logs and binaries in $out" >&2
