#!/usr/bin/env bash
# Runs every benchmark BENCHMARKS.md quotes, -count 5, into a directory
# (default /tmp/flower-bench), one file per command, with the
# machine's description and load average, then summarizes each file with
# benchstat. Takes about ten minutes on 2 cores.
#
#	bash bench/run.sh [DIR]
set -euo pipefail
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
out=$(realpath -m "${1:-${TMPDIR:-/tmp}/flower-bench}")
mkdir -p "$out"
cd "$root"
benchstat="go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da"

{
	echo "commit: $(git rev-parse --short HEAD)"
	echo "uncommitted files under the benchmarked packages: $(git status --porcelain -- store view model agent tool | wc -l)"
	echo "nproc: $(nproc)"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
	echo "go: $(go version)"
	echo "tmp: $(findmnt -n -T "${TMPDIR:-/tmp}" -o SOURCE,FSTYPE,OPTIONS)"
} >"$out/machine.txt"

run() { # name, command...
	local name=$1
	shift
	echo "== $name: $*" >&2
	{ echo "# $*"; echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"; "$@"; echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"; } >"$out/$name.txt" 2>&1
}

run load go test -run XXX -bench 'Load10k|LoadAndView10k|Scan10k|Decode10k' -benchtime 20x -count 5 ./store/sqlite
run append go test -run XXX -bench 'Append' -count 5 ./store/sqlite
run json-body bash bench/json-body.sh
run goccy bash bench/goccy-decode.sh
run turn go test -run XXX -bench '^BenchmarkTurn' -count 5 ./agent
run sdk go test -run XXX -bench 'SDKCall|AgentTurn' -count 5 ./agent

# Real fsync calls of BenchmarkTurn (1 + 1000 turns: the probe run and the
# measured one), WAL checkpoints and store creation included.
go test -c -o "$out/agent.test" ./agent
strace -f -c -e trace=fsync,fdatasync -o "$out/fsync-strace.txt" \
	"$out/agent.test" -test.run XXX -test.bench 'BenchmarkTurn$' -test.benchtime 1000x >"$out/fsync-bench.txt" 2>&1 || true
rm -f "$out/agent.test"

for f in load append json-body goccy turn sdk; do
	echo "=== $f"
	$benchstat "$out/$f.txt"
done >"$out/benchstat.txt" 2>&1
cat "$out/machine.txt"
