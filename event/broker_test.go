package event_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/flower-run/flower/event"
)

// watchdog bounds a wait that should end at once, so a bug fails the test
// instead of hanging it. No test waits on it when things work.
func watchdog(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func text(i int) event.Event { return event.Event{Kind: event.Text, Text: fmt.Sprint(i)} }

func seqs(ns []event.Numbered) []int {
	out := []int{}
	for _, n := range ns {
		out = append(out, n.Seq)
	}
	return out
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSince(t *testing.T) {
	b := event.NewBroker(5)
	if got, gap := b.Since(0); len(got) != 0 || gap {
		t.Fatalf("empty broker: Since(0) = %v, %v", got, gap)
	}
	for i := 1; i <= 3; i++ {
		b.Publish(text(i))
	}
	tests := []struct {
		name  string
		after int
		want  []int
		gap   bool
	}{
		{"from the start", 0, []int{1, 2, 3}, false},
		{"negative is the start", -7, []int{1, 2, 3}, false},
		{"caught up", 3, []int{}, false},
		{"middle", 1, []int{2, 3}, false},
		{"ahead: another broker's numbering", 9, []int{1, 2, 3}, true},
	}
	for _, tt := range tests {
		got, gap := b.Since(tt.after)
		if !equal(seqs(got), tt.want) || gap != tt.gap {
			t.Errorf("%s: Since(%d) = %v, gap %v; want %v, gap %v", tt.name, tt.after, seqs(got), gap, tt.want, tt.gap)
		}
	}
	if got, _ := b.Since(1); got[0].Text != "2" {
		t.Errorf("event 2 carries %q", got[0].Text)
	}
}

func TestSinceGapAfterTheWindow(t *testing.T) {
	b := event.NewBroker(5)
	for i := 1; i <= 12; i++ {
		b.Publish(text(i))
	}
	tests := []struct {
		after int
		want  []int
		gap   bool
	}{
		{0, []int{8, 9, 10, 11, 12}, true}, // events 1-7 are gone
		{6, []int{8, 9, 10, 11, 12}, true}, // event 7 is gone
		{7, []int{8, 9, 10, 11, 12}, false},
		{10, []int{11, 12}, false},
		{12, []int{}, false},
	}
	for _, tt := range tests {
		got, gap := b.Since(tt.after)
		if !equal(seqs(got), tt.want) || gap != tt.gap {
			t.Errorf("Since(%d) = %v, gap %v; want %v, gap %v", tt.after, seqs(got), gap, tt.want, tt.gap)
		}
	}
	if b.Last() != 12 {
		t.Errorf("Last = %d, want 12", b.Last())
	}
}

func TestDefaultKeepIs2000(t *testing.T) {
	b := event.NewBroker(0)
	for i := 1; i <= 2001; i++ {
		b.Publish(text(i))
	}
	got, gap := b.Since(0)
	if len(got) != 2000 || got[0].Seq != 2 || !gap {
		t.Fatalf("kept %d events from %d, gap %v; want 2000 from 2, gap", len(got), got[0].Seq, gap)
	}
}

func TestNumberedJSON(t *testing.T) {
	n := event.Numbered{Seq: 4, Event: event.Event{Kind: event.ToolCall, Tool: "Read", Text: "a.go",
		Payload: map[string]any{"id": "t1"}, Raw: make(chan int)}}
	b, err := json.Marshal(n)
	if err != nil {
		t.Fatalf("marshal: %v (Raw must not be serialized)", err)
	}
	want := `{"seq":4,"kind":"tool_call","text":"a.go","tool":"Read","payload":{"id":"t1"}}`
	if string(b) != want {
		t.Errorf("got %s\nwant %s", b, want)
	}
}

func TestSubscribeDeliversInOrder(t *testing.T) {
	b := event.NewBroker(0)
	s := b.Subscribe(context.Background(), "test", 10)
	for i := 1; i <= 5; i++ {
		b.Publish(text(i))
	}
	s.Cancel()
	var got []int
	for n := range s.C { // buffered events survive Cancel, then C closes
		got = append(got, n.Seq)
	}
	if !equal(got, []int{1, 2, 3, 4, 5}) {
		t.Errorf("got %v", got)
	}
}

// A subscriber that never reads must not slow Publish: its events are
// dropped and counted, one Error event says so, and the others get
// everything.
func TestStalledSubscriberDropsAndIsReportedOnce(t *testing.T) {
	b := event.NewBroker(0)
	stalled := b.Subscribe(context.Background(), "stalled", 2)
	live := b.Subscribe(context.Background(), "live", 100)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; i <= 10; i++ {
			b.Publish(text(i))
		}
	}()
	select {
	case <-done:
	case <-watchdog(t).Done():
		t.Fatal("Publish blocked on a stalled subscriber")
	}
	if got := stalled.Dropped(); got != 9 { // 8 texts and the report
		t.Errorf("stalled dropped %d, want 9", got)
	}
	if live.Dropped() != 0 {
		t.Errorf("live dropped %d", live.Dropped())
	}
	live.Cancel()
	var reports, texts int
	for n := range live.C {
		switch n.Kind {
		case event.Error:
			reports++
			if n.Payload["subscriber"] != "stalled" || n.Payload["source"] != "broker" {
				t.Errorf("report %+v", n)
			}
		case event.Text:
			texts++
		}
	}
	if reports != 1 || texts != 10 {
		t.Errorf("live got %d reports and %d texts; want 1 and 10", reports, texts)
	}
}

func TestSubscriptionEndsWithItsContext(t *testing.T) {
	b := event.NewBroker(0)
	ctx, cancel := context.WithCancel(context.Background())
	s := b.Subscribe(ctx, "ctx", 4)
	b.Publish(text(1))
	cancel()
	got := []int{}
	for {
		select {
		case n, ok := <-s.C:
			if !ok {
				if !equal(got, []int{1}) {
					t.Errorf("got %v before the end", got)
				}
				b.Publish(text(2)) // nobody to offer it to: must not panic
				return
			}
			got = append(got, n.Seq)
		case <-watchdog(t).Done():
			t.Fatal("C was not closed when the context ended")
		}
	}
}

func TestSubscribeWithEndedContext(t *testing.T) {
	b := event.NewBroker(0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := b.Subscribe(ctx, "late", 1)
	select {
	case _, ok := <-s.C:
		if ok {
			t.Fatal("event on a subscription whose context had ended")
		}
	case <-watchdog(t).Done():
		t.Fatal("C was not closed")
	}
}

func TestPanickingFuncIsRecovered(t *testing.T) {
	b := event.NewBroker(0)
	watch := b.Subscribe(context.Background(), "watch", 100)
	var mu sync.Mutex // guards seen
	seen := []string{}
	b.SubscribeFunc(context.Background(), "bomb", 100, func(n event.Numbered) {
		if n.Kind != event.Text {
			return
		}
		mu.Lock()
		// By text, not Seq: the panic report may be numbered between them.
		seen = append(seen, n.Text)
		mu.Unlock()
		panic("boom")
	})
	b.Publish(text(1))
	b.Publish(text(2))
	// The report is published by the func's goroutine after its first
	// panic: wait for it on the watching subscription.
	ctx := watchdog(t)
	for reports := 0; reports == 0; {
		select {
		case n := <-watch.C:
			if n.Kind == event.Error {
				reports++
				if n.Payload["subscriber"] != "bomb" {
					t.Errorf("report %+v", n)
				}
			}
		case <-ctx.Done():
			t.Fatal("no report of the panic")
		}
	}
	b.Close() // waits for the func goroutine
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(seen) != "[1 2]" {
		t.Errorf("func saw %v; want both events despite panicking", seen)
	}
	for n := range watch.C {
		if n.Kind == event.Error {
			t.Errorf("second report: %+v", n)
		}
	}
}

func TestCloseEndsSubscriptions(t *testing.T) {
	b := event.NewBroker(0)
	s := b.Subscribe(context.Background(), "a", 1)
	calls := 0
	b.SubscribeFunc(context.Background(), "f", 1, func(event.Numbered) { calls++ })
	b.Publish(text(1))
	b.Close()
	if calls != 1 { // Close waited for the func goroutine
		t.Errorf("func called %d times, want 1", calls)
	}
	<-s.C
	if _, ok := <-s.C; ok {
		t.Error("C open after Close")
	}
	late := b.Subscribe(context.Background(), "late", 1)
	if _, ok := <-late.C; ok {
		t.Error("subscription after Close is open")
	}
	b.Publish(text(2)) // still numbered and kept
	if got, _ := b.Since(1); len(got) != 1 || got[0].Seq != 2 {
		t.Errorf("Since after Close = %v", seqs(got))
	}
}

// Publishers and subscribers on many goroutines; run with -race.
func TestBrokerConcurrent(t *testing.T) {
	b := event.NewBroker(50)
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	for i := range 4 {
		s := b.Subscribe(ctx, fmt.Sprint("sub", i), 8)
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := 0
			for n := range s.C {
				if n.Seq <= last {
					t.Errorf("out of order: %d after %d", n.Seq, last)
				}
				last = n.Seq
			}
		}()
	}
	var pubs sync.WaitGroup
	for range 4 {
		pubs.Add(1)
		go func() {
			defer pubs.Done()
			for i := range 500 {
				b.Publish(text(i))
				b.Since(b.Last() - 10)
			}
		}()
	}
	pubs.Wait()
	cancel()
	wg.Wait()
	if b.Last() < 2000 {
		t.Errorf("Last = %d, want at least 2000", b.Last())
	}
}

// TestBrokerAt: a broker that continues a stored stream numbers from
// last+1; an after before that is a gap for it, and Oldest says where its
// own events start.
func TestBrokerAt(t *testing.T) {
	b := event.NewBrokerAt(3, 40)
	if b.Last() != 40 || b.Oldest() != 41 {
		t.Fatalf("Last, Oldest = %d, %d; want 40, 41", b.Last(), b.Oldest())
	}
	if ns, gap := b.Since(40); len(ns) != 0 || gap {
		t.Errorf("Since(40) before any event = %v, %v; want nothing, no gap", ns, gap)
	}
	b.Publish(event.Event{Kind: event.Text, Text: "a"})
	b.Publish(event.Event{Kind: event.Text, Text: "b"})
	if ns, gap := b.Since(40); len(ns) != 2 || ns[0].Seq != 41 || gap {
		t.Errorf("Since(40) = %v, %v; want 41 and 42", ns, gap)
	}
	if ns, gap := b.Since(12); len(ns) != 2 || !gap {
		t.Errorf("Since(12) = %v, %v; want 41, 42 and a gap", ns, gap)
	}
	for range 3 {
		b.Publish(event.Event{Kind: event.Text})
	}
	if b.Oldest() != 43 {
		t.Errorf("Oldest after the ring wrapped = %d, want 43", b.Oldest())
	}
}
