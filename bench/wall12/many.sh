#!/usr/bin/env bash
# 64 durable agent sessions on 2 processes, flower and DBOS side by side
# (issue 19): the wall12 session (bench/wall12/fake, 12 turns of Write,
# Bash and Read, each answer held back 50 ms) run 64 times, 32 at once in
# each of 2 processes, state in one PostgreSQL database:
#
#	flower      bench/wall12/many: each session a flower.Host doing Once
#	            over the process's one store (as flower worker shares it),
#	            sandbox as flower ships it (auto)
#	flower-off  the same with sandbox.mode off
#	dbos        bench/dbos -session: each session a DBOS workflow (each
#	            model and tool call a step) on a queue, 2 executors of 32
#
# A round runs each variant once, in an order that rotates from round to
# round; then the median of each. Needs FLOWER_TEST_POSTGRES (or DB) naming
# a server's postgres database: eval "$(.ci/postgres.sh start /tmp/flower-pg)".
#
#	bash bench/wall12/many.sh [ROUNDS]    # default 5; from the repo root
set -euo pipefail
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
rounds=${1:-5}
db=${DB:-${FLOWER_TEST_POSTGRES:?set FLOWER_TEST_POSTGRES or DB to a PostgreSQL server}}
read -r -a variants <<<"${VARIANTS:-flower flower-off dbos}"
out=$(mktemp -d "${TMPDIR:-/tmp}/many.XXXXXX")
cd "$root"
go build -o "$out/fake" ./bench/wall12/fake
go build -o "$out/many" ./bench/wall12/many
(cd bench/dbos && go build -o "$out/dbos" .)

"$out/fake" -delay 50ms -dump "$out/request.json" >"$out/url" 2>"$out/fake.log" &
fake=$!
trap 'kill $fake 2>/dev/null || true' EXIT
for _ in $(seq 100); do [[ -s $out/url ]] && break; sleep 0.05; done
url=$(cat "$out/url")
echo "# commit $(git rev-parse --short HEAD), $(go version), nproc $(nproc), load $(cut -d' ' -f1-3 /proc/loadavg)"

one() {
	case $1 in
	flower) "$out/many" -db "$db" -fake "$url" ;;
	flower-off) "$out/many" -db "$db" -fake "$url" -sandbox off ;;
	dbos)
		# DBOS sends the system prompt and tools flower sends.
		[[ -s $out/request.json ]] || "$out/many" -db "$db" -fake "$url" >/dev/null
		"$out/dbos" -db "$db" -session "$url" -request "$out/request.json" ;;
	esac
}

for r in $(seq "$rounds"); do
	n=${#variants[@]}
	for k in $(seq 0 $((n - 1))); do
		v=${variants[$(((k + r) % n))]}
		line=$(one "$v")
		echo "$r $v $line"
		echo "$v $(grep -o '[0-9.]* s,' <<<"$line" | cut -d' ' -f1)" >>"$out/times"
	done
done
echo "# medians (s for 64 sessions):"
for v in "${variants[@]}"; do
	echo "$v $(awk -v v="$v" '$1 == v {print $2}' "$out/times" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"
done
