package store

import (
	"context"
	"errors"
)

// Heads loads a session leaving the text of its large tool results in the
// store (issue 12). A wake shows every old result over the trim size as a
// pointer to its spill file and its first few hundred bytes (package view,
// Trim), so reading the whole of tens of megabytes of old results to send
// a few hundred bytes of each would be most of what waking a long session
// costs. It is not part of Store: a consumer asserts it (every backend of
// this module has it) and falls back to Load.
type Heads interface {
	// LoadHeads is Load, except that the Op.Content of a tool result
	// (KindResult) longer than over bytes may hold only its first head
	// bytes (a byte count: it may end inside a UTF-8 sequence), with
	// Op.Size set to the whole content's length (Op.Partial). head must
	// be at least 1 and below over; a result of over bytes or fewer
	// comes whole.
	LoadHeads(ctx context.Context, key string, over, head int) ([]Entry, error)
	// ResultContent returns the whole Op.Content of the entry of key with
	// seq, as Load would: what a partial result left in the store. ok is
	// false when key has no such entry or the entry no op.
	ResultContent(ctx context.Context, key string, seq int64) (content string, ok bool, err error)
}

// Partial reports whether Content is only the head of the op's content, as
// Heads.LoadHeads leaves it; an entry holding such an op must not be
// appended (backends refuse it: the rest would be lost).
func (op *Op) Partial() bool { return op.Size > len(op.Content) }

// Len is the length in bytes of the op's whole content, partial or not.
func (op *Op) Len() int { return max(op.Size, len(op.Content)) }

// ErrPartial refuses an entry whose op is partial (see Heads).
var ErrPartial = errors.New("store: tool result content is partial (a head from LoadHeads): load it whole before appending it")
