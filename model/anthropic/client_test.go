package anthropic

import (
	"context"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/model/modeltest"
)

// TestProvidersShareConnections: a Provider made after another one, as a
// runtime per run or per step makes them, sends its request over the
// connection the first one opened (issue 12; client.go).
func TestProvidersShareConnections(t *testing.T) {
	srv := modeltest.NewAnthropic(func(*modeltest.Request) modeltest.Turn { return modeltest.Turn{Text: "hi"} })
	defer srv.Close()
	var reused []bool
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { reused = append(reused, info.Reused) },
	})
	req := &model.Request{Model: testModel, Messages: []model.Message{userText("hello")}}
	for range 2 {
		if _, err := newProvider(srv).Stream(ctx, req, nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(reused) != 2 || !reused[1] {
		t.Fatalf("connections reused %v, want the second request on the first's connection", reused)
	}
}

// TestSideBySideRunsKeepTheirConnections: 16 Providers side by side (a
// worker drives 32 runs at once), each sending a request per round with
// all 16 in flight at once and then idle at once, as runs are while
// their tools run: every connection goes back to the idle pool, none is
// closed for want of room. net/http keeps 2 idle per host unless told
// otherwise, so 14 of 16 were closed and dialed again, on the real API
// with a TLS handshake each (issue 19). Both ways a Provider gets its
// client: none given (sharedClient), and a watchdog client of its own
// over model.Transport, as flower.Host gives it.
func TestSideBySideRunsKeepTheirConnections(t *testing.T) {
	for _, c := range []struct {
		name   string
		client func() *http.Client
	}{
		{"shared client", func() *http.Client { return nil }},
		{"watchdog client", func() *http.Client { return model.NewHTTPClient(0, 0) }},
	} {
		t.Run(c.name, func(t *testing.T) { sideBySide(t, c.client) })
	}
}

func sideBySide(t *testing.T, client func() *http.Client) {
	const runs, rounds = 16, 3
	var mu sync.Mutex
	inFlight := map[int]chan struct{}{}
	arrived := map[int]int{}
	// A round's requests are answered once all of them are in flight, so
	// that each run holds a connection of its own.
	srv := modeltest.NewAnthropic(func(r *modeltest.Request) modeltest.Turn {
		round := (r.N - 1) / runs
		mu.Lock()
		if inFlight[round] == nil {
			inFlight[round] = make(chan struct{})
		}
		ch := inFlight[round]
		if arrived[round]++; arrived[round] == runs {
			close(ch)
		}
		mu.Unlock()
		<-ch
		return modeltest.Turn{Text: "hi"}
	})
	defer srv.Close()
	var dropped atomic.Int64
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		PutIdleConn: func(err error) {
			if err != nil {
				dropped.Add(1)
			}
		},
	})
	req := &model.Request{Model: testModel, Messages: []model.Message{userText("hello")}}
	providers := make([]*Provider, runs)
	for i := range providers {
		providers[i] = New(Config{APIKey: "test-key", BaseURL: srv.URL, HTTPClient: client()})
	}
	for range rounds {
		var wg sync.WaitGroup
		for _, p := range providers {
			wg.Go(func() {
				if _, err := p.Stream(ctx, req, nil); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	if n := dropped.Load(); n > 0 {
		t.Errorf("%d of %d connections closed instead of kept idle (%d opened)", n, runs*rounds, srv.Conns())
	}
}
