#!/usr/bin/env bash
# Option 3 of SPEC issue 2a, measured and rejected: decode the JSON entry
# body with github.com/goccy/go-json v0.12.0 instead of encoding/json.
# Builds a scratch copy of HEAD that uses goccy in model/codec.go and adds
# goccy sub-benchmarks beside BenchmarkDecode10k's, then runs them all in
# one go test run. Nothing here touches the work tree.
#
#	bash bench/goccy-decode.sh            # -count 5
#	COUNT=1 bash bench/goccy-decode.sh
set -euo pipefail
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$root" archive HEAD | tar -x -C "$tmp"
cd "$tmp"
go get github.com/goccy/go-json@v0.12.0 >/dev/null 2>&1
sed -i 's#^\t"encoding/json"$#\tjson "github.com/goccy/go-json"#' model/codec.go
cat > store/sqlite/goccy_bench_test.go <<'EOF'
package sqlite_test

import (
	"encoding/json"
	"testing"

	goccy "github.com/goccy/go-json"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
)

// BenchmarkDecode10kGoccy is BenchmarkDecode10k's json and json-split
// decoded by goccy/go-json (model.Message.UnmarshalJSON uses it too).
func BenchmarkDecode10kGoccy(b *testing.B) {
	entries := realistic("-home-me-proj/s", 10_000, 1)
	b.Run("goccy", func(b *testing.B) {
		bodies := make([][]byte, len(entries))
		size := 0
		for i, e := range entries {
			bodies[i], _ = json.Marshal(e)
			size += len(bodies[i])
		}
		b.SetBytes(int64(size))
		for b.Loop() {
			for _, body := range bodies {
				var e store.Entry
				if err := goccy.Unmarshal(body, &e); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("goccy-split", func(b *testing.B) {
		rest, msgs := make([][]byte, len(entries)), make([][]byte, len(entries))
		size := 0
		for i, e := range entries {
			if e.Message != nil {
				msgs[i], _ = json.Marshal(e.Message)
				e.Message = nil
			}
			rest[i], _ = json.Marshal(e)
			size += len(rest[i]) + len(msgs[i])
		}
		b.SetBytes(int64(size))
		for b.Loop() {
			for i := range rest {
				var e store.Entry
				if err := goccy.Unmarshal(rest[i], &e); err != nil {
					b.Fatal(err)
				}
				if msgs[i] != nil {
					e.Message = new(model.Message)
					if err := e.Message.UnmarshalJSON(msgs[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
	})
}
EOF
go test -count=1 ./model ./store/sqlite >/dev/null # goccy decodes what the tests expect
go test -run XXX -bench 'Decode10k' -benchtime 10x -count "${COUNT:-5}" ./store/sqlite
