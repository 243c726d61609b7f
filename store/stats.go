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
