package mem

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/flower-run/flower/store"
)

var _ store.Events = (*Store)(nil)

// eventLog is the events of every stream, each stream in seq order. Its
// zero value is empty and ready.
type eventLog struct {
	mu      sync.Mutex
	streams map[string][]store.Event
}

// AppendEvents adds events, skipping those whose (stream, seq) is stored.
func (s *Store) AppendEvents(ctx context.Context, evs ...store.Event) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("append events: %w", err)
	}
	if err := store.CheckEvents(evs); err != nil {
		return err
	}
	l := &s.ev
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.streams == nil {
		l.streams = map[string][]store.Event{}
	}
	for _, e := range evs {
		list := l.streams[e.Stream]
		i := sort.Search(len(list), func(i int) bool { return list[i].Seq >= e.Seq })
		if i < len(list) && list[i].Seq == e.Seq {
			continue
		}
		e.Body = append([]byte(nil), e.Body...)
		list = append(list, store.Event{})
		copy(list[i+1:], list[i:])
		list[i] = e
		l.streams[e.Stream] = list
	}
	return nil
}

// EventsAfter returns the events of stream after seq after.
func (s *Store) EventsAfter(ctx context.Context, stream string, after int64, limit int) ([]store.Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("events of %s: %w", stream, err)
	}
	l := &s.ev
	l.mu.Lock()
	defer l.mu.Unlock()
	list := l.streams[stream]
	i := sort.Search(len(list), func(i int) bool { return list[i].Seq > after })
	var out []store.Event
	for ; i < len(list) && (limit <= 0 || len(out) < limit); i++ {
		e := list[i]
		e.Body = append([]byte(nil), e.Body...)
		out = append(out, e)
	}
	return out, nil
}

// LastEvent is the highest seq of stream.
func (s *Store) LastEvent(ctx context.Context, stream string) (int64, error) {
	l := &s.ev
	l.mu.Lock()
	defer l.mu.Unlock()
	list := l.streams[stream]
	if len(list) == 0 {
		return 0, nil
	}
	return list[len(list)-1].Seq, nil
}
