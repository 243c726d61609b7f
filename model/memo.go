package model

import "sync"

// Memo lets a provider keep what it derived from one conversation's
// requests (converted messages, tool definitions) for the next request of
// the same conversation, so that a call converts only what is new. The
// caller gives each conversation its own Memo, in Request.Memo; the
// provider decides what it holds and checks it is still true before use.
// The zero Memo is empty and ready.
type Memo struct {
	mu sync.Mutex // guards v
	v  any
}

// Do calls f with the memo's value, under its lock; f may replace it.
func (m *Memo) Do(f func(v *any)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f(&m.v)
}
