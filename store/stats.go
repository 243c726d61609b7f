package store

import "context"

// Stats is what a list of sessions shows of one (flower sessions): read,
// by a backend that can, without loading the session.
type Stats struct {
	Entries int     // entries under exactly the key
	LastSeq int64   // the newest entry's Seq; 0 when there is none
	Turns   int     // assistant entries: model responses
	Cost    float64 // their cost, USD
	Prompt  string  // the text of the first user entry with a message
	// LastStop is the stop reason of the last model response ("end_turn":
	// the model ended its turn); "" when there is none.
	LastStop string
}

// Stater is an optional part of a Store (consumers type-assert, as for
// Events): Stats of key without loading its tool results. It must agree
// with StatsOf(Load(key)); storetest checks that.
type Stater interface {
	Stats(ctx context.Context, key string) (Stats, error)
}

// StatsOf computes Stats from a session's entries.
func StatsOf(entries []Entry) Stats {
	var st Stats
	promptSet := false
	for _, e := range entries {
		st.Entries++
		st.LastSeq = max(st.LastSeq, e.Seq)
		switch {
		case e.Kind == KindAssistant:
			st.Turns++
			st.Cost += e.Cost
			st.LastStop = e.StopReason
		case e.Kind == KindUser && !promptSet && e.Message != nil:
			st.Prompt, promptSet = e.Message.TextOf(), true
		}
	}
	return st
}

// ReadStats is s's Stats of key: the backend's own query when it has one,
// else StatsOf the loaded session.
func ReadStats(ctx context.Context, s Store, key string) (Stats, error) {
	if st, ok := s.(Stater); ok {
		return st.Stats(ctx, key)
	}
	entries, err := s.Load(ctx, key)
	if err != nil {
		return Stats{}, err
	}
	return StatsOf(entries), nil
}

// LastSeqer is an optional part of a Store: the Seq of key's newest entry
// (0 when there is none) in one indexed read. The high-water mark reads it
// for each session of a lineage at every export, where Stats would decode
// every response of the session (issue 19: a worker's 64 runs).
type LastSeqer interface {
	LastSeq(ctx context.Context, key string) (int64, error)
}

// ReadLastSeq is s's LastSeq of key: the backend's own query when it has
// one, else ReadStats's.
func ReadLastSeq(ctx context.Context, s Store, key string) (int64, error) {
	if l, ok := s.(LastSeqer); ok {
		return l.LastSeq(ctx, key)
	}
	st, err := ReadStats(ctx, s, key)
	return st.LastSeq, err
}
