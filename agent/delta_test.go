package agent_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/model/modeltest"
)

// Text and reasoning reach the sink while the answer streams, before the
// answer is complete and stored; the whole Text and Thinking events follow
// (issue 11).
func TestDeltasStreamBeforeTheWholeAnswer(t *testing.T) {
	var f *fixture
	sawEarly := false
	first := make(chan struct{}) // closed at the first delta the sink gets
	f = newFixture(t, modeltest.Script(modeltest.Turn{Thinking: "Let me think about it.", Text: "Hello from a streamed answer.",
		Pace: func(ctx context.Context, n int) {
			if n == 1 { // the answer is half sent: deltas, and no whole text yet
				select {
				case <-first:
				case <-ctx.Done():
					return
				}
				f.mu.Lock()
				defer f.mu.Unlock()
				// init comes first, before any delta (issue 23)
				sawEarly = len(f.events) == 2 && f.events[0].Kind == event.Init && f.events[1].Kind == event.Delta
			}
		}}))
	var once sync.Once
	sink := func(e event.Event) {
		f.sink(e)
		if e.Kind == event.Delta {
			once.Do(func() { close(first) })
		}
	}
	res := f.rt.Run(context.Background(), agent.Spec{Model: "claude-sonnet-4-6"}, "go", agent.RunOptions{Sink: sink})
	if !res.OK {
		t.Fatalf("result %+v", res)
	}
	if !sawEarly {
		t.Error("init, then deltas, did not reach the sink before the answer completed")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var text, thinking strings.Builder
	whole := -1
	for i, e := range f.events {
		switch {
		case e.Kind == event.Delta && e.Payload["thinking"] == true:
			thinking.WriteString(e.Text)
		case e.Kind == event.Delta:
			text.WriteString(e.Text)
			if whole >= 0 {
				t.Error("a delta after the whole text")
			}
		case e.Kind == event.Text:
			whole = i
		}
	}
	if text.String() != "Hello from a streamed answer." || thinking.String() != "Let me think about it." || whole < 0 {
		t.Errorf("deltas joined: %q / %q; whole text at %d", text.String(), thinking.String(), whole)
	}
}
