// Package eventlog keeps a broker's events in the store (store.Events), so
// that a UI that restarts, or another flower serve on the same database,
// resumes the stream from any seq (issue 14).
//
// A Writer follows the broker from its own goroutine: Publish stays
// non-blocking (R6.9), and each write takes every event published since
// the last one, in one transaction that waits for no fsync of its own (see
// store.Events). The seq stored is the broker's, so a client's after means
// the same thing to the broker and to the store. Deltas (streamed pieces
// of text) are never stored: the whole text event follows each.
//
// A Reader serves the stored events to the web front end when a client
// asks for events older than the broker keeps.
package eventlog

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/store"
)

// endKind marks a stream whose writer ended cleanly (Writer.End): every
// event its broker published is stored. Readers never return it.
const endKind = "~end"

// Skip is how far a stream that did not end cleanly is numbered on past
// its last stored event (Resume): its process published events it did not
// get to store, and a client that saw them must not mistake new events
// for them.
const Skip = event.DefaultKeep

// maxWrite bounds the events of one transaction.
const maxWrite = 500

// body is an event as stored: the fields the API sends.
type body struct {
	Kind    event.Kind     `json:"kind"`
	Text    string         `json:"text,omitempty"`
	Tool    string         `json:"tool,omitempty"`
	Payload map[string]any `json:"payload,omitempty"`
}

// Encode turns a numbered event into a store record of stream. A payload
// that cannot be encoded is replaced by a note, as the API does.
func Encode(stream string, n event.Numbered, at time.Time) store.Event {
	b := body{Kind: n.Kind, Text: n.Text, Tool: n.Tool, Payload: n.Payload}
	data, err := json.Marshal(b)
	if err != nil {
		b.Payload = map[string]any{"unencodable": err.Error()}
		data, _ = json.Marshal(b)
	}
	return store.Event{Stream: stream, Seq: int64(n.Seq), Kind: string(n.Kind), Time: at, Body: data}
}

// Decode turns a store record back into a numbered event.
func Decode(e store.Event) (event.Numbered, error) {
	var b body
	if err := json.Unmarshal(e.Body, &b); err != nil {
		return event.Numbered{}, fmt.Errorf("event %d of %s: %w", e.Seq, e.Stream, err)
	}
	return event.Numbered{Seq: int(e.Seq), Event: event.Event{Kind: b.Kind, Text: b.Text, Tool: b.Tool, Payload: b.Payload}}, nil
}

// Writer stores a broker's events. Its zero value is not usable; see
// NewWriter.
type Writer struct {
	b      *event.Broker
	stream string
	kick   chan struct{}
	// OnError is told of a failed write (once per failure streak); nil
	// drops it. The events are tried again with the next write.
	OnError func(error)
	Now     func() time.Time // nil: time.Now

	mu      sync.Mutex // guards the fields below
	covered int        // the broker seq up to which events are stored
	log     store.Events
	last    store.Events // the log attached last: End marks it
	stop    chan struct{}
	done    chan struct{}
	failing bool
}

// NewWriter returns a writer of b's events to stream, whose events up to
// seq covered are stored already (the broker's start: NewBrokerAt's last).
func NewWriter(b *event.Broker, stream string, covered int) *Writer {
	return &Writer{b: b, stream: stream, covered: covered, kick: make(chan struct{}, 1)}
}

// Kick says that events were published: the writer stores them soon. It
// never blocks; call it after Publish (in the run's sink).
func (w *Writer) Kick() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Attach starts writing to log, beginning with every event not stored
// yet. Events published while no log is attached wait in the broker's
// window for the next Attach.
func (w *Writer) Attach(log store.Events) {
	w.Detach()
	w.mu.Lock()
	w.log, w.last, w.stop, w.done = log, log, make(chan struct{}), make(chan struct{})
	stop, done := w.stop, w.done
	w.mu.Unlock()
	w.Kick()
	go func() {
		defer close(done)
		for {
			select {
			case <-w.kick:
				w.flush(log)
			case <-stop:
				w.flush(log)
				return
			}
		}
	}()
}

// Detach stores what was published so far and stops writing. Safe to call
// when not attached.
func (w *Writer) Detach() {
	w.mu.Lock()
	stop, done := w.stop, w.done
	w.stop, w.done, w.log = nil, nil, nil
	w.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

// End stores what is left and marks the stream as ended cleanly, so the
// next process numbers on right after it (Resume). Call it when nothing
// more is published: an event published after End is not stored.
func (w *Writer) End() error {
	w.Detach()
	w.mu.Lock()
	log, covered, failing := w.last, w.covered, w.failing
	w.mu.Unlock()
	if log == nil || failing || covered < w.b.Last() {
		return nil // not all stored: the next process skips ahead
	}
	mark := store.Event{Stream: w.stream, Seq: int64(covered + 1), Kind: endKind, Time: time.Now(), Body: []byte(`{}`)}
	if err := log.AppendEvents(context.Background(), mark); err != nil {
		return fmt.Errorf("store events of %s: %w", w.stream, err)
	}
	return nil
}

// Resume is where a new broker of stream starts (event.NewBrokerAt): after
// the end mark of a stream that ended cleanly; Skip past the last stored
// event of one that did not, with lost reporting that (0 when nothing was
// lost). A stream never stored starts at 0.
func Resume(ctx context.Context, log store.Events, stream string) (start, lost int, err error) {
	last, err := log.LastEvent(ctx, stream)
	if err != nil || last == 0 {
		return 0, 0, err
	}
	recs, err := log.EventsAfter(ctx, stream, last-1, 1)
	if err != nil {
		return 0, 0, err
	}
	if len(recs) == 1 && recs[0].Kind == endKind {
		return int(last), 0, nil
	}
	return int(last) + Skip, int(last), nil
}

// Covered is the broker seq up to which events are stored.
func (w *Writer) Covered() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.covered
}

// flush stores the events published since the last write, maxWrite at a
// time. Events that fell out of the broker's window before they could be
// stored (a store slower than 2000 events) are skipped: a reader shows
// them as missing.
func (w *Writer) flush(log store.Events) {
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	for {
		w.mu.Lock()
		from := w.covered
		w.mu.Unlock()
		ns, _ := w.b.Since(from)
		if len(ns) == 0 {
			return
		}
		ns = ns[:min(len(ns), maxWrite)]
		recs := make([]store.Event, 0, len(ns))
		at := now()
		for _, n := range ns {
			if n.Kind != event.Delta { // streamed pieces are never stored
				recs = append(recs, Encode(w.stream, n, at))
			}
		}
		err := log.AppendEvents(context.Background(), recs...)
		w.mu.Lock()
		if err != nil {
			report := !w.failing
			w.failing = true
			w.mu.Unlock()
			if report && w.OnError != nil {
				w.OnError(fmt.Errorf("store events of %s: %w", w.stream, err))
			}
			return
		}
		w.failing = false
		w.covered = ns[len(ns)-1].Seq
		w.mu.Unlock()
	}
}

// Reader reads a stream's stored events for the web front end.
type Reader struct {
	Log    store.Events
	Stream string
}

// After returns at most limit stored events with seq > after, in order
// (limit <= 0: all). End marks are skipped, and do not count.
func (r Reader) After(ctx context.Context, after, limit int) ([]event.Numbered, error) {
	var out []event.Numbered
	for limit <= 0 || len(out) < limit {
		want := 0
		if limit > 0 {
			want = limit - len(out)
		}
		recs, err := r.Log.EventsAfter(ctx, r.Stream, int64(after), want)
		if err != nil {
			return nil, err
		}
		for _, rec := range recs {
			after = int(rec.Seq)
			if rec.Kind == endKind {
				continue
			}
			n, err := Decode(rec)
			if err != nil {
				return nil, err
			}
			out = append(out, n)
		}
		if want <= 0 || len(recs) < want {
			break
		}
	}
	return out, nil
}

// Last is the highest seq stored for stream, 0 if none.
func Last(ctx context.Context, log store.Events, stream string) (int, error) {
	n, err := log.LastEvent(ctx, stream)
	return int(n), err
}
