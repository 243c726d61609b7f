package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/front/web"
	"github.com/flower-run/flower/human"
)

type wsBatch struct {
	Events []struct {
		Seq  int    `json:"seq"`
		Kind string `json:"kind"`
		Text string `json:"text"`
	} `json:"events"`
	Gap bool `json:"gap"`
}

// dial opens the WebSocket as the page does: the token as a subprotocol.
func (f *fixture) dial(ctx context.Context, after int) (*websocket.Conn, error) {
	u := strings.Replace(f.srv.URL, "http://", "ws://", 1) + fmt.Sprintf("/ws?after=%d", after)
	c, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{Subprotocols: []string{"flower.v1", "bearer." + token}})
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(1 << 20)
	if resp.Header.Get("Sec-WebSocket-Protocol") != "flower.v1" {
		f.t.Errorf("subprotocol %q: the token must never be echoed", resp.Header.Get("Sec-WebSocket-Protocol"))
	}
	return c, nil
}

func read(t *testing.T, ctx context.Context, c *websocket.Conn) wsBatch {
	t.Helper()
	_, data, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var b wsBatch
	if err := json.Unmarshal(data, &b); err != nil {
		t.Fatalf("message %s: %v", data, err)
	}
	return b
}

// readUntil reads messages until the event numbered seq, and returns the
// seqs received.
func readUntil(t *testing.T, ctx context.Context, c *websocket.Conn, seq int) []int {
	t.Helper()
	var got []int
	for len(got) == 0 || got[len(got)-1] < seq {
		for _, e := range read(t, ctx, c).Events {
			got = append(got, e.Seq)
		}
	}
	return got
}

func publish(b *event.Broker, from, to int) {
	for i := from; i <= to; i++ {
		b.Publish(event.Event{Kind: event.Text, Text: fmt.Sprint("event ", i)})
	}
}

func contiguous(seqs []int, from, to int) bool {
	if len(seqs) != to-from+1 {
		return false
	}
	for i, s := range seqs {
		if s != from+i {
			return false
		}
	}
	return true
}

func TestWebSocketStreamsAndResumesFromTheLastSeq(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := watchdog(t)
	publish(f.events, 1, 2)
	c, err := f.dial(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	first := read(t, ctx, c)
	if len(first.Events) != 2 || first.Gap {
		t.Fatalf("backlog %+v", first)
	}
	publish(f.events, 3, 5)
	if got := readUntil(t, ctx, c, 5); !contiguous(got, 3, 5) {
		t.Errorf("live events %v", got)
	}
	c.Close(websocket.StatusNormalClosure, "")

	// Away for a while, then back with the last seq seen.
	publish(f.events, 6, 9)
	c, err = f.dial(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	b := read(t, ctx, c)
	var got []int
	for _, e := range b.Events {
		got = append(got, e.Seq)
	}
	if !contiguous(got, 6, 9) || b.Gap {
		t.Errorf("resumed with %v, gap %v; want 6-9, no gap", got, b.Gap)
	}
	publish(f.events, 10, 10)
	if got := readUntil(t, ctx, c, 10); !contiguous(got, 10, 10) {
		t.Errorf("after the resume %v", got)
	}
}

func TestWebSocketReportsAGap(t *testing.T) {
	f := newFixture(t, fixtureOptions{keep: 3})
	ctx := watchdog(t)
	publish(f.events, 1, 6)
	c, err := f.dial(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	b := read(t, ctx, c)
	if len(b.Events) != 3 || b.Events[0].Seq != 4 || !b.Gap {
		t.Errorf("after=1 with 4-6 kept: %+v", b)
	}
}

// A client far behind (more events than its buffer while it is not read)
// still gets every kept event once, in order.
func TestWebSocketCatchesUpAfterDrops(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := watchdog(t)
	c, err := f.dial(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	read(t, ctx, c) // the empty backlog: subscribed now
	publish(f.events, 1, 1900)
	last := f.events.Last() // 1900, plus a report if the connection fell behind
	got := readUntil(t, ctx, c, last)
	if !contiguous(got, 1, last) {
		t.Errorf("got %d events, first %d, last %d; want 1-%d each once in order", len(got), got[0], got[len(got)-1], last)
	}
}

func TestWebSocketNeedsTheToken(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := watchdog(t)
	u := strings.Replace(f.srv.URL, "http://", "ws://", 1) + "/ws"
	for name, opts := range map[string]*websocket.DialOptions{
		"no token":       {Subprotocols: []string{"flower.v1"}},
		"wrong token":    {Subprotocols: []string{"flower.v1", "bearer.wrong-token-0123456789abcdef"}},
		"token in query": {Subprotocols: []string{"flower.v1"}},
	} {
		target := u
		if name == "token in query" {
			target += "?token=" + token
		}
		_, resp, err := websocket.Dial(ctx, target, opts)
		if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: err %v, resp %v; want 401", name, err, resp)
		}
	}
	// A non-browser client may use the header.
	c, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		t.Fatalf("with the header: %v", err)
	}
	c.CloseNow()
}

// Serve ends when its context does, taking open WebSockets with it.
func TestServeStopsWithItsContext(t *testing.T) {
	b := event.NewBroker(0)
	s, err := web.New(web.Options{Token: token, Events: b, Channel: human.New(human.Options{Workbench: t.TempDir()})})
	if err != nil {
		t.Fatal(err)
	}
	l, err := web.Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, l) }()
	wctx := watchdog(t)
	c, _, err := websocket.Dial(wctx, "ws://"+l.Addr().String()+"/ws",
		&websocket.DialOptions{Subprotocols: []string{"flower.v1", "bearer." + token}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	read(t, wctx, c)
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-wctx.Done():
		t.Fatal("Serve did not return")
	}
	if _, _, err := c.Read(wctx); err == nil {
		t.Error("the WebSocket is still open")
	}
}
