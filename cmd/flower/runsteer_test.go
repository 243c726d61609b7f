package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flower-run/flower/front/web"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/postgres"
	"github.com/flower-run/flower/store/postgres/pgtest"
)

const steerToken = "steer-token-0123456789"

// runsServer is a flower serve --runs process and its address.
type runsServer struct {
	t    *testing.T
	p    *proc
	base string
}

func startRunsServer(t *testing.T, dir string, env []string) *runsServer {
	t.Helper()
	p := startFlower(t, dir, env, false, "serve", "--runs")
	p.waitOutput("/runs (Authorization")
	base := regexp.MustCompile(`on (http://\S+)/runs`).FindStringSubmatch(p.stdout.String())[1]
	return &runsServer{t: t, p: p, base: base}
}

// do sends a request with the token and decodes the JSON answer into v
// (when not nil), returning the status.
func (s *runsServer) do(method, path, body string, v any) int {
	s.t.Helper()
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+steerToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if v != nil {
		if err := json.Unmarshal(data, v); err != nil {
			s.t.Fatalf("%s %s: %d %s: %v", method, path, resp.StatusCode, data, err)
		}
	}
	return resp.StatusCode
}

func (s *runsServer) asks(id string) []web.AskJSON {
	s.t.Helper()
	var out []web.AskJSON
	if code := s.do("GET", "/runs/"+id+"/asks", "", &out); code != http.StatusOK {
		s.t.Fatalf("GET /runs/%s/asks: %d", id, code)
	}
	return out
}

func (s *runsServer) events(id string, after int) []wireEvent {
	s.t.Helper()
	var out struct {
		Events []wireEvent `json:"events"`
		Gap    bool        `json:"gap"`
	}
	if code := s.do("GET", "/runs/"+id+"/events?after="+itoa(after), "", &out); code != http.StatusOK || out.Gap {
		s.t.Fatalf("GET /runs/%s/events?after=%d: %d gap %v", id, after, code, out.Gap)
	}
	return out.Events
}

func (s *runsServer) post(id, what, body string) map[string]any {
	s.t.Helper()
	var out map[string]any
	if code := s.do("POST", "/runs/"+id+"/"+what, body, &out); code != http.StatusOK {
		s.t.Fatalf("POST /runs/%s/%s %s: %d %v", id, what, body, code, out)
	}
	return out
}

// wireEvent is an event as GET /runs/ID/events serves it.
type wireEvent struct {
	Seq     int            `json:"seq"`
	Kind    string         `json:"kind"`
	Text    string         `json:"text"`
	Tool    string         `json:"tool"`
	Payload map[string]any `json:"payload"`
}

func itoa(n int) string { return strconv.Itoa(n) }

func lastSeq(evs []wireEvent) int {
	if len(evs) == 0 {
		return 0
	}
	return evs[len(evs)-1].Seq
}

func hasEvent(evs []wireEvent, kind, text string) bool {
	return slices.ContainsFunc(evs, func(e wireEvent) bool { return e.Kind == kind && strings.Contains(e.Text, text) })
}

// checkHistory: the sessions of ws hold the answer given through the
// store as the ask's result, once, and the interrupt with its words.
func checkHistory(t *testing.T, ctx context.Context, db *postgres.DB, ws string) {
	t.Helper()
	metas, err := db.Sessions(ctx, store.ProjectKey(ws)+"/")
	if err != nil {
		t.Fatal(err)
	}
	answers, interrupts := 0, 0
	for _, m := range metas {
		entries, err := db.Load(ctx, m.Key)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			switch {
			case e.Kind == store.KindResult && e.Op != nil && e.Op.Content == "The person answered:\n\n"+askSecond:
				answers++
			case e.Kind == store.KindInterrupt && e.Text == "start the clarification over":
				interrupts++
			}
		}
	}
	if answers != 1 || interrupts != 1 {
		t.Errorf("history: %d results with the answer, %d interrupts; want 1 and 1", answers, interrupts)
	}
}

// TestSteerARunThroughAnyServe is issue 14's real-process test of item 4:
// a PostgreSQL server, a worker driving a submitted run whose fake model
// asks a question, and two flower serve --runs on the same database. The
// question shows on the second serve; an interrupt posted to the first
// cuts it and the agent asks again; a note and the answer posted to the
// second reach the worker's run, which finishes with both in its history.
// The first serve is killed mid-run and started again: its client resumes
// the event stream by seq and ends with exactly what the other serve
// shows.
func TestSteerARunThroughAnyServe(t *testing.T) {
	if testing.Short() {
		t.Skip("a worker and three serve processes on PostgreSQL")
	}
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	_, env := fakeModel(t)
	env = append(env, storeEnv+"="+url, "FLOWER_TOKEN="+steerToken)
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	a, b := startRunsServer(t, dir, env), startRunsServer(t, dir, env)
	var sub map[string]string
	if code := a.do("POST", "/runs", `{"task":"`+testTask+`","workspace":"`+ws+`"}`, &sub); code != http.StatusCreated {
		t.Fatalf("POST /runs: %d", code)
	}
	id := sub["id"]
	w := startFlower(t, dir, env, false, "worker", "--poll", "50ms", "-r", filepath.Join(dir, "worker"))

	var asked []web.AskJSON
	until(t, "the question shows on the second serve", func() bool {
		asked = b.asks(id)
		return len(asked) == 1
	})
	if q := asked[0]; q.Question != askQuestion || !slices.Equal(q.Options, []string{askFirst, askSecond}) {
		t.Fatalf("asks = %+v", asked)
	}
	if got := a.asks(id); len(got) != 1 || got[0].ID != asked[0].ID {
		t.Errorf("the first serve lists %+v, want the same ask", got)
	}
	var seen []wireEvent // a client of the first serve, before its restart
	until(t, "the question is in the stored stream", func() bool {
		seen = a.events(id, 0)
		return hasEvent(seen, "ask", askQuestion)
	})

	// An interrupt through the first serve: the ask is cut, the agent
	// continues with the words and asks again.
	a.post(id, "interrupt", `{"text":"start the clarification over"}`)
	var again []web.AskJSON
	until(t, "the agent asks again after the interrupt", func() bool {
		again = b.asks(id)
		return len(again) == 1 && again[0].ID != asked[0].ID
	})
	if ok := b.post(id, "answer", `{"id":"`+asked[0].ID+`","text":"1"}`); ok["ok"] != false {
		t.Errorf("an answer to the cut ask: %v, want ok false", ok)
	}

	// The first serve dies; its client's stream resumes from a new one.
	seen = append(seen, a.events(id, lastSeq(seen))...)
	a.p.cmd.Process.Kill()
	a.p.wait()
	a = startRunsServer(t, dir, env)

	const note = "sign it with the team name"
	b.post(id, "send", `{"text":"`+note+`"}`)
	posted := time.Now()
	if ok := b.post(id, "answer", `{"id":"`+again[0].ID+`","text":"2"}`); ok["ok"] != true {
		t.Fatalf("answer: %v", ok)
	}
	until(t, "the answer settles the question", func() bool { return len(b.asks(id)) == 0 })
	t.Logf("answer through another serve reached the worker's run and settled in %v", time.Since(posted).Round(time.Millisecond))

	db, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	until(t, "the run finishes", func() bool {
		r, ok, _ := db.Run(ctx, id)
		return ok && r.Status == store.RunFinished
	})
	if r, _, _ := db.Run(ctx, id); r.Outcome != "passed" {
		t.Errorf("run: %s %s", r.Status, r.Outcome)
	}
	brief := readFile(t, filepath.Join(ws, ".flower", "notes", "brief.md"))
	if !strings.Contains(brief, askQuestion+" The person answered: "+askSecond) || !strings.Contains(brief, note) {
		t.Errorf("brief.md, want the answer %q and the note %q:\n%s", askSecond, note, brief)
	}
	checkHistory(t, ctx, db, ws)

	// The restarted serve gives the client what followed its last seq;
	// with what it had, that is the whole stream, as the other serve has it.
	w.waitOutput("run " + id + " ended") // its driver stored its last events
	resumed := append(slices.Clone(seen), a.events(id, lastSeq(seen))...)
	whole := b.events(id, 0)
	if len(resumed) != len(whole) {
		t.Fatalf("resumed stream has %d events, the whole has %d", len(resumed), len(whole))
	}
	for i := range whole {
		if resumed[i].Seq != whole[i].Seq || resumed[i].Text != whole[i].Text || resumed[i].Kind != whole[i].Kind {
			t.Fatalf("event %d: resumed %+v, whole %+v", i, resumed[i], whole[i])
		}
	}
	if !hasEvent(whole, "ask", "answered: "+askSecond) || !hasEvent(whole, "interrupt", "start the clarification over") {
		t.Errorf("the stored stream lacks the settled answer or the interrupt")
	}

	// A finished run refuses notes and interrupts (the other refusals are
	// front/web's conformance test, in process).
	for _, c := range []struct {
		method, path, body string
		code               int
		says               string
	}{
		{"POST", "/runs/" + id + "/send", `{"text":"too late"}`, http.StatusConflict, "is finished"},
		{"POST", "/runs/" + id + "/interrupt", `{"text":""}`, http.StatusConflict, "is finished"},
	} {
		var v map[string]string
		if code := b.do(c.method, c.path, c.body, &v); code != c.code || !strings.Contains(v["error"], c.says) || strings.Contains(v["error"], "\n") {
			t.Errorf("%s %s %s: %d %q, want %d and one line saying %q", c.method, c.path, c.body, code, v["error"], c.code, c.says)
		}
	}
	if got := b.asks(id); len(got) != 0 {
		t.Errorf("asks of a finished run: %+v", got)
	}
	req, _ := http.NewRequest("GET", b.base+"/runs/"+id+"/asks", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("asks without the token: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	w.cmd.Process.Signal(syscall.SIGTERM)
	if r := w.wait(); r.code != 0 {
		t.Errorf("worker: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, s := range []*runsServer{a, b} {
		s.p.cmd.Process.Signal(syscall.SIGTERM)
		s.p.wait()
	}
}

// TestAnswerWhileNoDriverLives: the worker driving the run dies (SIGKILL;
// its runs are goroutines of it, issue 19) while its question waits; the
// person answers through a serve while no process drives the run; another
// worker drives it, the agent asks the same call again and gets that
// answer at once, and the run finishes with it, once.
func TestAnswerWhileNoDriverLives(t *testing.T) {
	if testing.Short() {
		t.Skip("a worker whose driver is killed, and a serve, on PostgreSQL")
	}
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	_, env := fakeModel(t)
	env = append(env, storeEnv+"="+url, "FLOWER_TOKEN="+steerToken)
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	s := startRunsServer(t, dir, env)
	var sub map[string]string
	if code := s.do("POST", "/runs", `{"task":"`+testTask+`","workspace":"`+ws+`"}`, &sub); code != http.StatusCreated {
		t.Fatalf("POST /runs: %d", code)
	}
	id := sub["id"]
	w := startFlower(t, dir, env, false, "worker", "--poll", "50ms", "-r", filepath.Join(dir, "worker"))
	var asked []web.AskJSON
	until(t, "the question waits", func() bool {
		asked = s.asks(id)
		return len(asked) == 1
	})
	m := claimedLine.FindStringSubmatch(w.stdout.String())
	pid, _ := strconv.Atoi(m[2])
	if pid != w.cmd.Process.Pid {
		t.Fatalf("driver pid %d, want the worker's own, %d: runs are driven in process", pid, w.cmd.Process.Pid)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	w.wait()
	db, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	until(t, "the killed driver's lease is gone", func() bool {
		hs, err := db.Holders(ctx)
		return err == nil && !hs[ws].Live
	})
	if got := s.asks(id); len(got) != 1 || got[0].ID != asked[0].ID {
		t.Fatalf("asks while no driver lives: %+v, want the question still waiting", got)
	}
	if ok := s.post(id, "answer", `{"id":"`+asked[0].ID+`","text":"`+askSecond+`"}`); ok["ok"] != true {
		t.Fatalf("answer: %v", ok)
	}
	w = startFlower(t, dir, env, false, "worker", "--poll", "50ms", "-r", filepath.Join(dir, "worker"))
	until(t, "the run finishes", func() bool {
		r, ok, _ := db.Run(ctx, id)
		return ok && r.Status == store.RunFinished
	})
	if r, _, _ := db.Run(ctx, id); r.Outcome != "passed" {
		t.Errorf("run: %s %s", r.Status, r.Outcome)
	}
	if brief := readFile(t, filepath.Join(ws, ".flower", "notes", "brief.md")); !strings.Contains(brief, askQuestion+" The person answered: "+askSecond) {
		t.Errorf("brief.md, want the answer given while no driver lived:\n%s", brief)
	}
	metas, err := db.Sessions(ctx, store.ProjectKey(ws)+"/")
	if err != nil {
		t.Fatal(err)
	}
	answers := 0
	for _, m := range metas {
		entries, _ := db.Load(ctx, m.Key)
		for _, e := range entries {
			if e.Kind == store.KindResult && e.Op != nil && e.Op.Content == "The person answered:\n\n"+askSecond {
				answers++
			}
		}
	}
	if answers != 1 {
		t.Errorf("%d results with the answer, want 1", answers)
	}
	w.cmd.Process.Signal(syscall.SIGTERM)
	w.wait()
	s.p.cmd.Process.Signal(syscall.SIGTERM)
	s.p.wait()
}

// TestSubmitAskTimeout: a run submitted with --ask-timeout 0 is
// unattended under a worker whose own questions would wait 10 minutes:
// its question settles at once and the run finishes; POST /runs keeps
// ask_timeout_s, and refuses a negative one in one line.
func TestSubmitAskTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("a worker driving a run on PostgreSQL")
	}
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	_, env := fakeModel(t)
	env = append(env, storeEnv+"="+url, "FLOWER_TOKEN="+steerToken)
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	sub := runFlower(t, dir, env, "submit", "--workspace", ws, "--ask-timeout", "0", testTask)
	id := strings.TrimSpace(sub.stdout)
	if sub.code != 0 || id == "" {
		t.Fatalf("submit: exit %d\n%s%s", sub.code, sub.stdout, sub.stderr)
	}
	db, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if r, _, _ := db.Run(ctx, id); r.AskTimeout == nil || *r.AskTimeout != 0 {
		t.Fatalf("the submitted run's ask timeout: %v, want 0", r.AskTimeout)
	}
	w := startFlower(t, dir, env, false, "worker", "--poll", "50ms", "-r", filepath.Join(dir, "worker"))
	until(t, "the unattended run finishes", func() bool {
		r, ok, _ := db.Run(ctx, id)
		return ok && r.Status == store.RunFinished
	})
	if brief := readFile(t, filepath.Join(ws, ".flower", "notes", "brief.md")); !strings.Contains(brief, "No one answered") {
		t.Errorf("brief.md, want the question settled as unanswered:\n%s", brief)
	}
	w.cmd.Process.Signal(syscall.SIGTERM)
	w.wait()

	if r := runFlower(t, dir, env, "submit", "--workspace", ws, "--ask-timeout", "-1s", testTask); r.code != exitUsage || !strings.Contains(r.stderr, "--ask-timeout") {
		t.Errorf("submit --ask-timeout -1s: exit %d\n%s", r.code, r.stderr)
	}
	s := startRunsServer(t, dir, env)
	var v map[string]any
	if code := s.do("POST", "/runs", `{"task":"x","workspace":"`+ws+`","ask_timeout_s":-1}`, &v); code != http.StatusBadRequest || !strings.Contains(v["error"].(string), "ask_timeout_s") {
		t.Errorf("POST /runs with ask_timeout_s -1: %d %v", code, v)
	}
	if code := s.do("POST", "/runs", `{"task":"x","workspace":"`+ws+`","ask_timeout_s":90}`, &v); code != http.StatusCreated {
		t.Fatalf("POST /runs with ask_timeout_s 90: %d %v", code, v)
	}
	if r, _, _ := db.Run(ctx, v["id"].(string)); r.AskTimeout == nil || *r.AskTimeout != 90 {
		t.Errorf("ask timeout of the run POSTed: %v, want 90", r.AskTimeout)
	}
	s.p.cmd.Process.Signal(syscall.SIGTERM)
	s.p.wait()
}
