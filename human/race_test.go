package human

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestConcurrent drives every goroutine-safe method at once; run it with
// -race. Asks are answered through NextAsk while mail arrives, the inbox is
// read and Pending is polled.
func TestConcurrent(t *testing.T) {
	const asks, senders, mailsEach = 20, 3, 10
	f := newFixture(t, Options{})
	ctx, stop := context.WithCancel(context.Background())
	var helpers sync.WaitGroup
	defer func() { stop(); helpers.Wait() }()

	var mu sync.Mutex // guards read
	read := 0
	countInbox := func() { // no t.Fatal here: it runs off the test goroutine
		res, _ := f.inbx.Run(context.Background(), nil)
		mu.Lock()
		read += strings.Count(res.Content, "mail ")
		mu.Unlock()
	}
	helpers.Go(func() { // the person: answers whatever is asked
		for {
			a, err := f.c.NextAsk(ctx)
			if err != nil {
				return
			}
			f.c.Answer(a.ID, "re "+a.Question)
		}
	})
	helpers.Go(func() { // a front end polling
		for ctx.Err() == nil {
			for _, a := range f.c.Pending() {
				_ = a.Question + strings.Join(a.Options, "")
			}
			countInbox()
		}
	})

	var work sync.WaitGroup
	for i := range senders {
		work.Go(func() {
			for j := range mailsEach {
				f.c.Send(fmt.Sprintf("mail %d-%d", i, j))
			}
		})
	}
	results := make([]outcome, asks)
	for i := range asks {
		work.Go(func() {
			res, err := f.ask.Run(context.Background(), json.RawMessage(fmt.Sprintf(`{"question":"n%d","options":["x"]}`, i)))
			results[i] = outcome{res, err}
		})
	}
	work.Wait()
	stop()
	helpers.Wait()
	countInbox()

	for i, o := range results {
		if want := fmt.Sprintf("The person answered:\n\nre n%d", i); o.err != nil || o.res.Content != want {
			t.Errorf("ask %d = %q, %v; want %q", i, o.res.Content, o.err, want)
		}
	}
	if read != senders*mailsEach {
		t.Errorf("inbox delivered %d mails, want %d", read, senders*mailsEach)
	}
	if got := f.c.Pending(); len(got) != 0 {
		t.Errorf("Pending = %v, want none", got)
	}
}
