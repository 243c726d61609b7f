package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/front/web"
	"github.com/flower-run/flower/human"
	"github.com/flower-run/flower/model/anthropic"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/store/sqlite"
)

const token = "test-token-0123456789abcdef"

// fixture is a web server over a real broker and human channel, on
// loopback.
type fixture struct {
	t      *testing.T
	ws     string
	events *event.Broker
	ch     *human.Channel
	srv    *httptest.Server

	mu         sync.Mutex // guards interrupts and forward
	interrupts []string
	forward    func(text string) // also gets each interrupt, when set
}

type fixtureOptions struct {
	keep   int
	oracle func(ctx context.Context, q string) (string, error)
	wake   func(text string) error
}

func newFixture(t *testing.T, o fixtureOptions) *fixture {
	t.Helper()
	f := &fixture{t: t, ws: t.TempDir(), events: event.NewBroker(o.keep)}
	f.ch = human.New(human.Options{Sink: f.events.Publish, Timeout: human.Forever,
		Workbench: filepath.Join(f.ws, ".flower")})
	s, err := web.New(web.Options{Token: token, Events: f.events, Channel: f.ch, Oracle: o.oracle, Wake: o.wake,
		Interrupt: func(text string) {
			f.mu.Lock()
			f.interrupts = append(f.interrupts, text)
			forward := f.forward
			f.mu.Unlock()
			if forward != nil {
				forward(text)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	f.srv = httptest.NewServer(s)
	t.Cleanup(f.srv.Close)
	t.Cleanup(f.events.Close)
	return f
}

// do sends a request with the token as a bearer header ("" for none) and
// returns the status and body.
func (f *fixture) do(method, path, body, tok string) (int, string) {
	f.t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	return f.send(req)
}

func (f *fixture) send(req *http.Request) (int, string) {
	f.t.Helper()
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// call sends an authorized request that must succeed and decodes its
// answer into out.
func (f *fixture) call(method, path, body string, out any) {
	f.t.Helper()
	code, got := f.do(method, path, body, token)
	if code != http.StatusOK {
		f.t.Fatalf("%s %s %s: %d %s", method, path, body, code, got)
	}
	if err := json.Unmarshal([]byte(got), out); err != nil {
		f.t.Fatalf("%s %s: %v in %s", method, path, err, got)
	}
}

// agentRun runs one agent on a fake Anthropic server with the channel's
// tools, its events going to the broker, in a goroutine.
func (f *fixture) agentRun(respond modeltest.Responder, prompt string) (*agent.Runtime, <-chan agent.Result) {
	f.t.Helper()
	srv := modeltest.NewAnthropic(respond)
	f.t.Cleanup(srv.Close)
	s, err := sqlite.Open(filepath.Join(f.ws, "runs", "sessions.db"))
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { s.Close() })
	rt, err := agent.New(agent.Options{Workspace: f.ws, Store: s, Tools: f.ch.Tools(),
		Provider: anthropic.New(anthropic.Config{APIKey: "test-key", BaseURL: srv.URL})})
	if err != nil {
		f.t.Fatal(err)
	}
	done := make(chan agent.Result, 1)
	go func() {
		done <- rt.Run(context.Background(), agent.Spec{Name: "worker", Model: "claude-sonnet-4-6"}, prompt,
			agent.RunOptions{Sink: f.events.Publish})
	}()
	return rt, done
}

// askThenEcho is a model that asks which colour, then says what the person
// answered (the last tool result) and ends its turn.
func askThenEcho(r *modeltest.Request) modeltest.Turn {
	if r.N == 1 {
		return modeltest.Turn{Text: "I need one thing from you.", ToolCalls: []modeltest.ToolCall{{Name: "ask",
			Input: `{"question":"Which colour should the header be?","options":["red","blue"]}`}}}
	}
	last := r.Messages[len(r.Messages)-1]
	return modeltest.Turn{Text: "Done. The answer was: " + jsonText(last)}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// watchdog bounds a wait that should end soon, so a bug fails the test
// instead of hanging it. No test waits on it when things work.
func watchdog(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func result(t *testing.T, done <-chan agent.Result) agent.Result {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-watchdog(t).Done():
		t.Fatal("the agent did not finish")
		return agent.Result{}
	}
}

// nextAsk waits for a question to be pending.
func (f *fixture) nextAsk() human.Ask {
	f.t.Helper()
	a, err := f.ch.NextAsk(watchdog(f.t))
	if err != nil {
		f.t.Fatalf("no question came: %v", err)
	}
	return a
}
