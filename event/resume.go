package event

// NewBrokerAt returns a broker whose first event is numbered last+1: a
// stream that continues one kept in a store (package event/eventlog), so a
// client that counted on the broker before a restart resumes by its seq.
// Since reports a gap for an after older than last; the store has those.
func NewBrokerAt(keep, last int) *Broker {
	b := NewBroker(keep)
	b.seq, b.base = max(last, 0), max(last, 0)
	return b
}

// Oldest is the Seq of the oldest event kept for Since, or Last()+1 when
// none is kept yet.
func (b *Broker) Oldest() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return max(b.seq-len(b.ring)+1, b.base+1)
}
