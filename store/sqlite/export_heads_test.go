package sqlite

import "github.com/flower-run/flower/store/internal/codec"

// The entry codec (store/internal/codec), for the external tests of this
// package, which fuzz and time it through SQLite's rows.
const PrefixSpan = codec.PrefixSpan

var (
	DecodeEntry = codec.DecodeEntry
	DecodeHead  = codec.DecodeHead
	HeadSpans   = codec.HeadSpans
	AppendBody  = codec.AppendEntry
)
