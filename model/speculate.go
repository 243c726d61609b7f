package model

import "context"

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
	// Kept is the JSON of the first n messages of the last request
	// streamed with memo, as that request carried them; ok is false when
	// the memo holds fewer.
	Kept(memo *Memo, n int) (msgs [][]byte, ok bool)
	// Speculate sends req with the JSON of prefix before its messages
	// and keeps the answer for the next Stream with req.Memo, which must
	// be set. cancel abandons it unless a Stream took it.
	Speculate(ctx context.Context, req *Request, prefix [][]byte) (cancel func(), err error)
}
