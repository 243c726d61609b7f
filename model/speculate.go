package model

import (
	"context"
	"io"
)

// Speculator is a provider that can send a conversation's next request
// before the caller has built it: a wake sends the request its snapshot of
// the view predicts while the session is still loading, and the Stream
// that follows takes that answer if, and only if, the request it builds
// is byte for byte the one sent; otherwise it abandons it and sends its
// own (issue 12). Nothing of a speculation is kept but by that Stream, so
// what a crash leaves is what it would leave without one.
type Speculator interface {
	// Format names the JSON Kept returns, which only a provider of the
	// same format can send.
	Format() string
	// Prepare encodes req into req.Memo as Stream would, without sending
	// it: Kept then holds its messages before the last.
	Prepare(req *Request) error
	// Kept is the JSON of the first n messages of the last request
	// streamed with memo, as that request carried them; ok is false when
	// the memo holds fewer.
	Kept(memo *Memo, n int) (msgs [][]byte, ok bool)
	// Speculate sends req with the JSON of prefix before its messages
	// and keeps the answer for the next Stream with req.Memo, which must
	// be set. prefix is messages as Kept gives them, joined by commas; it
	// is read while the request is sent, and when a Stream compares its
	// request with the one sent, so it must hold still until cancel (a
	// file replaced by a rename does). cancel abandons the speculation
	// unless a Stream took it, and must be called in either case.
	Speculate(ctx context.Context, req *Request, prefix *io.SectionReader) (cancel func(), err error)
}
