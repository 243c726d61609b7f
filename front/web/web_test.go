package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/front/web"
	"github.com/flower-run/flower/model/anthropic"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/oracle"
)

// routes lists every API request, with a valid body.
var routes = []struct{ method, path, body string }{
	{"GET", "/events", ""},
	{"GET", "/events?after=3", ""},
	{"GET", "/asks", ""},
	{"POST", "/answer", `{"id":"q1","text":"yes"}`},
	{"POST", "/decline", `{"id":"q1","reason":"later"}`},
	{"POST", "/send", `{"text":"hello"}`},
	{"POST", "/interrupt", `{"text":"stop"}`},
	{"POST", "/oracle", `{"question":"how far?"}`},
	{"GET", "/ws", ""},
	{"GET", "/nowhere", ""},
}

func TestEveryRouteNeedsTheToken(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, r := range routes {
		for _, tc := range []struct {
			name   string
			header string
			query  string
		}{
			{"no token", "", ""},
			{"wrong token", "Bearer wrong-token-0123456789abcdef", ""},
			{"token with a suffix", "Bearer " + token + "x", ""},
			{"another scheme", "Basic " + token, ""},
			{"token in the query", "", "token=" + token},
		} {
			path := r.path
			if tc.query != "" {
				path += map[bool]string{true: "&", false: "?"}[strings.Contains(path, "?")] + tc.query
			}
			req, _ := http.NewRequest(r.method, f.srv.URL+path, strings.NewReader(r.body))
			if tc.header != "" {
				req.Header.Set("Authorization", tc.header)
			}
			code, body := f.send(req)
			if code != http.StatusUnauthorized {
				t.Errorf("%s %s, %s: %d %s; want 401", r.method, path, tc.name, code, body)
			}
		}
	}
	if len(f.interrupts) != 0 || len(f.ch.Pending()) != 0 {
		t.Error("an unauthorized request steered the run")
	}
}

func TestPageTakesTheTokenInItsQuery(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, tc := range []struct {
		path, header string
		want         int
	}{
		{"/", "", 200}, // the page without data: its token is in the tab's sessionStorage
		{"/?token=wrong-token-0123456789abcdef", "", 401},
		{"/?token=" + token, "", 200},
		{"/", "Bearer " + token, 200},
	} {
		req, _ := http.NewRequest("GET", f.srv.URL+tc.path, nil)
		if tc.header != "" {
			req.Header.Set("Authorization", tc.header)
		}
		resp, err := f.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("GET %s (%q): %d, want %d", tc.path, tc.header, resp.StatusCode, tc.want)
			continue
		}
		if tc.want != 200 {
			if strings.Contains(string(body), "<script") {
				t.Errorf("GET %s without the token served the page", tc.path)
			}
			continue
		}
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'sha256-") {
			t.Errorf("CSP %q", csp)
		}
		if resp.Header.Get("Referrer-Policy") != "no-referrer" {
			t.Error("the page may leak its URL (and token) as a referrer")
		}
		if !strings.Contains(string(body), "Waiting for you") || strings.Contains(string(body), "/*SCRIPT*/") {
			t.Error("the page is not assembled")
		}
	}
}

func TestBodiesAreLimited(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	big := `{"text":"` + strings.Repeat("a", web.MaxBody) + `"}`
	if code, body := f.do("POST", "/send", big, token); code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: %d %s, want 413", code, body)
	}
	// Without a Content-Length, the limit still holds while reading.
	req, _ := http.NewRequest("POST", f.srv.URL+"/send", io.MultiReader(strings.NewReader(big)))
	req.ContentLength = -1
	req.Header.Set("Authorization", "Bearer "+token)
	if code, body := f.send(req); code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized chunked body: %d %s, want 413", code, body)
	}
	if _, err := os.Stat(filepath.Join(f.ws, ".flower", "notes", "brief.md")); err == nil {
		t.Error("an oversized note reached the brief")
	}
}

func TestBadRequestsSayWhyInOneLine(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, tc := range []struct{ path, body, want string }{
		{"/answer", ``, "empty"},
		{"/answer", `{`, "bad JSON"},
		{"/answer", `[]`, "bad JSON"},
		{"/answer", `{"id":"q1","txt":"typo"}`, "unknown field"},
		{"/answer", `{"id":"q1","text":"a"} {}`, "more than one"},
		{"/answer", `{"id":"nope","text":"a"}`, "unknown ask id"},
		{"/answer", `{"text":"a"}`, "unknown ask id"},
		{"/decline", `{"id":"1","reason":""}`, "unknown ask id"},
		{"/send", `{"text":"  "}`, "empty"},
		{"/oracle", `{"question":""}`, "empty"},
	} {
		code, body := f.do("POST", tc.path, tc.body, token)
		var e struct{ Error string }
		json.Unmarshal([]byte(body), &e)
		if code != http.StatusBadRequest || !strings.Contains(e.Error, tc.want) || strings.Contains(strings.TrimSpace(body), "\n") {
			t.Errorf("POST %s %s: %d %s; want 400 saying %q in one line", tc.path, tc.body, code, body, tc.want)
		}
	}
	if code, body := f.do("GET", "/events?after=x", "", token); code != http.StatusBadRequest {
		t.Errorf("after=x: %d %s", code, body)
	}
	if code, _ := f.do("GET", "/answer", "", token); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /answer: %d, want 405", code)
	}
}

func TestEventsReplayWithAGap(t *testing.T) {
	f := newFixture(t, fixtureOptions{keep: 5})
	f.events.Publish(event.Event{Kind: event.ToolCall, Tool: "Read", Text: "a.go",
		Payload: map[string]any{"id": "t1"}, Raw: func() {}})
	for i := 2; i <= 8; i++ {
		f.events.Publish(event.Event{Kind: event.Text, Text: "line"})
	}
	type ev struct {
		Seq     int            `json:"seq"`
		Kind    string         `json:"kind"`
		Text    *string        `json:"text"`
		Tool    *string        `json:"tool"`
		Payload map[string]any `json:"payload"`
	}
	var got struct {
		Events []ev `json:"events"`
		Gap    bool `json:"gap"`
	}
	f.call("GET", "/events?after=0", "", &got)
	if len(got.Events) != 5 || got.Events[0].Seq != 4 || !got.Gap {
		t.Fatalf("after=0 with 5 kept of 8: %d events from %d, gap %v", len(got.Events), got.Events[0].Seq, got.Gap)
	}
	e := got.Events[0]
	if e.Kind != "text" || e.Text == nil || e.Tool == nil || e.Payload == nil {
		t.Errorf("event fields missing: %+v", e)
	}
	got.Gap = false
	f.call("GET", "/events?after=5", "", &got)
	if len(got.Events) != 3 || got.Events[0].Seq != 6 || got.Gap {
		t.Errorf("after=5: %d events from %d, gap %v", len(got.Events), got.Events[0].Seq, got.Gap)
	}
	f.call("GET", "/events?after=8", "", &got)
	if len(got.Events) != 0 || got.Gap {
		t.Errorf("caught up: %+v", got)
	}
	if _, raw := f.do("GET", "/events?after=8", "", token); !strings.HasPrefix(raw, `{"events":[]`) {
		t.Errorf("no events must be [], not null: %s", raw)
	}

	// Raw never leaves the process: a func would not even encode.
	g := newFixture(t, fixtureOptions{})
	g.events.Publish(event.Event{Kind: event.ToolCall, Tool: "Read", Text: "a.go",
		Payload: map[string]any{"id": "t1"}, Raw: func() {}})
	_, raw := g.do("GET", "/events", "", token)
	want := `{"events":[{"seq":1,"kind":"tool_call","text":"a.go","tool":"Read","payload":{"id":"t1"}}],"gap":false}`
	if strings.TrimSpace(raw) != want {
		t.Errorf("got  %s\nwant %s", raw, want)
	}
}

func TestAnUnencodablePayloadDoesNotBreakTheStream(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.events.Publish(event.Event{Kind: event.Text, Text: "odd", Payload: map[string]any{"c": make(chan int)}})
	f.events.Publish(event.Event{Kind: event.Text, Text: "fine"})
	var got struct {
		Events []struct {
			Text    string         `json:"text"`
			Payload map[string]any `json:"payload"`
		} `json:"events"`
	}
	f.call("GET", "/events", "", &got)
	if len(got.Events) != 2 || got.Events[1].Text != "fine" || got.Events[0].Payload["unencodable"] == nil {
		t.Errorf("got %+v", got)
	}
}

// The whole point of the API: a question the agent asks is answered over
// HTTP, and the agent goes on with the answer.
func TestAnAnswerOverHTTPUnblocksTheAgent(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	_, done := f.agentRun(askThenEcho, "make a header")
	a := f.nextAsk()

	var asks []struct {
		ID       string   `json:"id"`
		Question string   `json:"question"`
		Options  []string `json:"options"`
		WaitedS  *float64 `json:"waited_s"`
	}
	f.call("GET", "/asks", "", &asks)
	if len(asks) != 1 || asks[0].ID != a.ID || asks[0].Question != "Which colour should the header be?" ||
		strings.Join(asks[0].Options, ",") != "red,blue" || asks[0].WaitedS == nil || *asks[0].WaitedS < 0 {
		t.Fatalf("GET /asks = %+v", asks)
	}
	var ok struct{ OK bool }
	f.call("POST", "/answer", jsonText(map[string]string{"id": a.ID, "text": "blue"}), &ok)
	if !ok.OK {
		t.Fatal("answer not taken")
	}
	res := result(t, done)
	if !res.OK || !strings.Contains(res.Text, "blue") {
		t.Fatalf("the agent did not go on with the answer: ok %v, %q, %s", res.OK, res.Text, res.Error)
	}
	f.call("POST", "/answer", jsonText(map[string]string{"id": a.ID, "text": "red"}), &ok)
	if ok.OK {
		t.Error("a second answer to a settled question was taken")
	}
	f.call("GET", "/asks", "", &asks)
	if len(asks) != 0 {
		t.Errorf("asks after the answer: %+v", asks)
	}
	var evs struct {
		Events []struct {
			Kind    string         `json:"kind"`
			Payload map[string]any `json:"payload"`
		} `json:"events"`
	}
	f.call("GET", "/events", "", &evs)
	var states []string
	for _, e := range evs.Events {
		if e.Kind == "ask" {
			states = append(states, e.Payload["state"].(string))
		}
	}
	if strings.Join(states, ",") != "asked,answered" || evs.Events[len(evs.Events)-1].Kind != "result" {
		t.Errorf("ask states %v; last event %+v", states, evs.Events[len(evs.Events)-1])
	}
}

func TestDeclineOverHTTP(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	_, done := f.agentRun(askThenEcho, "make a header")
	a := f.nextAsk()
	var ok struct{ OK bool }
	f.call("POST", "/decline", jsonText(map[string]string{"id": a.ID, "reason": "pick yourself"}), &ok)
	if !ok.OK {
		t.Fatal("decline not taken")
	}
	if res := result(t, done); !strings.Contains(res.Text, "declined") || !strings.Contains(res.Text, "pick yourself") {
		t.Errorf("the agent was not told: %q", res.Text)
	}
}

func TestSendReachesTheInboxAndTheBrief(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	var ok struct{ OK bool }
	f.call("POST", "/send", `{"text":"also report the total size"}`, &ok)
	inbox := f.ch.Tools()[1]
	res, err := inbox.Run(context.Background(), json.RawMessage(`{}`))
	if err != nil || !strings.Contains(res.Content, "also report the total size") {
		t.Errorf("inbox: %v %q", err, res.Content)
	}
	brief, _ := os.ReadFile(filepath.Join(f.ws, ".flower", "notes", "brief.md"))
	if !strings.Contains(string(brief), "also report the total size") {
		t.Errorf("brief: %q", brief)
	}
	ns, _ := f.events.Since(0)
	if len(ns) != 1 || ns[0].Payload["kind"] != "mail" {
		t.Errorf("events: %+v", ns)
	}
}

func TestInterruptOverHTTP(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	var ok struct{ OK bool }
	f.call("POST", "/interrupt", `{"text":"  use tabs instead "}`, &ok)
	f.call("POST", "/interrupt", `{}`, &ok)
	f.mu.Lock()
	defer f.mu.Unlock()
	if strings.Join(f.interrupts, "|") != "use tabs instead|" {
		t.Errorf("interrupts %q", f.interrupts)
	}
}

// An interrupt over HTTP reaches a real run: the agent waiting on a
// question stops at the boundary and continues with the person's text.
func TestInterruptStopsARealRun(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	rt, done := f.agentRun(askThenEcho, "make a header")
	f.mu.Lock()
	f.forward = rt.Interrupt
	f.mu.Unlock()
	f.nextAsk()
	var ok struct{ OK bool }
	f.call("POST", "/interrupt", `{"text":"forget the header; write the footer"}`, &ok)
	res := result(t, done)
	if !strings.Contains(res.Text, "forget the header") {
		t.Errorf("the run did not continue with the interrupt text: ok %v %q %s", res.OK, res.Text, res.Error)
	}
	if len(f.ch.Pending()) != 0 {
		t.Error("the cut question still waits")
	}
	var kinds []string
	ns, _ := f.events.Since(0)
	for _, n := range ns {
		kinds = append(kinds, string(n.Kind))
	}
	if !strings.Contains(strings.Join(kinds, ","), "interrupt") {
		t.Errorf("no interrupt event in %v", kinds)
	}
}

func TestOracleOverHTTP(t *testing.T) {
	srv := modeltest.NewAnthropic(modeltest.Script(modeltest.Turn{Text: "Two of four steps are done."}))
	t.Cleanup(srv.Close)
	ws := t.TempDir()
	o := oracle.New(oracle.Options{Workspace: ws, RunDir: filepath.Join(ws, "runs"), Model: "claude-sonnet-4-6",
		Provider: anthropic.New(anthropic.Config{APIKey: "test-key", BaseURL: srv.URL})})
	t.Cleanup(func() { o.Close() })
	f := newFixture(t, fixtureOptions{oracle: o.Ask})
	o.Observe(event.Event{Kind: event.Step, Text: "── 3/4 work (new)"})
	var got struct{ Answer string }
	f.call("POST", "/oracle", `{"question":"how far along are you?"}`, &got)
	if got.Answer != "Two of four steps are done." {
		t.Errorf("answer %q", got.Answer)
	}
	if p := srv.Requests()[0].Messages[0].TextOf(); !strings.Contains(p, "3/4 work") {
		t.Errorf("the oracle did not see the events: %q", p)
	}
	if ns, _ := f.events.Since(0); len(ns) != 0 {
		t.Errorf("the oracle disturbed the run's stream: %+v", ns)
	}

	failing := newFixture(t, fixtureOptions{oracle: func(context.Context, string) (string, error) {
		return "", errors.New("oracle: model unreachable\nsecond line")
	}})
	code, body := failing.do("POST", "/oracle", `{"question":"?"}`, token)
	if code != http.StatusBadGateway || !strings.Contains(body, "model unreachable second line") {
		t.Errorf("failing oracle: %d %s", code, body)
	}
	none := newFixture(t, fixtureOptions{})
	if code, _ := none.do("POST", "/oracle", `{"question":"?"}`, token); code != http.StatusNotImplemented {
		t.Errorf("no oracle: %d", code)
	}
}

func TestListenStaysOnLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:0", "example.com:80"} {
		l, err := web.Listen(addr, false)
		if err == nil {
			l.Close()
			t.Errorf("Listen(%q) without allowRemote succeeded", addr)
			continue
		}
		if !errors.Is(err, web.ErrNotLoopback) || !strings.Contains(err.Error(), "--allow-remote") {
			t.Errorf("Listen(%q): %v", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0", "127.0.0.2:0"} {
		l, err := web.Listen(addr, false)
		if err != nil {
			t.Errorf("Listen(%q): %v", addr, err)
			continue
		}
		if ip := l.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
			t.Errorf("Listen(%q) bound %v", addr, ip)
		}
		if u := web.URL(l, token); !regexp.MustCompile(`^http://127\.0\.0\.\d:\d+/\?token=`+token+`$`).MatchString(u) &&
			!strings.HasPrefix(u, "http://[::1]:") {
			t.Errorf("URL %q", u)
		}
		l.Close()
	}
	l, err := web.Listen("0.0.0.0:0", true)
	if err != nil {
		t.Fatalf("with allowRemote: %v", err)
	}
	l.Close()
	if _, err := web.Listen("nonsense", false); err == nil || !strings.Contains(err.Error(), "HOST:PORT") {
		t.Errorf("bad address: %v", err)
	}
}

func TestToken(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "FLOWER_TOKEN" {
				return v
			}
			return ""
		}
	}
	a, err := web.Token(env(""))
	b, _ := web.Token(env(""))
	if err != nil || len(a) != 64 || a == b {
		t.Errorf("generated %q, %q, %v", a, b, err)
	}
	if got, err := web.Token(env(token)); got != token || err != nil {
		t.Errorf("FLOWER_TOKEN: %q %v", got, err)
	}
	for _, bad := range []string{"short", "has space in it 0123456789", "quote\"0123456789abcdef"} {
		if _, err := web.Token(env(bad)); err == nil || !strings.Contains(err.Error(), "FLOWER_TOKEN") {
			t.Errorf("FLOWER_TOKEN %q: %v", bad, err)
		}
	}
	if _, err := web.New(web.Options{Token: "", Events: event.NewBroker(0), Channel: newFixture(t, fixtureOptions{}).ch}); err == nil {
		t.Error("a server without a token")
	}
}
