#!/usr/bin/env bash
# The "before" of SPEC issue 2a: the load benchmarks on the last commit
# whose entry body was JSON (9eeae2d), with today's realistic-session
# benchmarks (and CPU metrics) copied in. Nothing here touches the work
# tree.
#
#	bash bench/json-body.sh               # -count 5
set -euo pipefail
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$root" archive 9eeae2d | tar -x -C "$tmp"
cp "$root"/store/sqlite/{bench,session_bench,cpu_unix}_test.go "$tmp"/store/sqlite/
cd "$tmp"
go test -run XXX -bench 'Load10k|LoadAndView10k|Scan10k' -benchtime 10x -count "${COUNT:-5}" ./store/sqlite
go test -run XXX -bench 'Append' -count "${COUNT:-5}" ./store/sqlite
