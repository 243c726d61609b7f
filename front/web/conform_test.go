package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flower-run/flower/front/web"
	"github.com/flower-run/flower/human"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/postgres"
	"github.com/flower-run/flower/store/postgres/pgtest"
	"github.com/flower-run/flower/tool"
)

// rig is one implementation of web.Run behind a server: the API of a run
// is under prefix, ch is the driver's human channel, interrupts what the
// driver was told, and end makes the run one nothing drives any more.
type rig struct {
	t      *testing.T
	srv    *httptest.Server
	prefix string
	ch     *human.Channel
	end    func()
	hub    *web.Hub // the local rig's

	mu         sync.Mutex // guards interrupts
	interrupts []string
}

func (r *rig) interrupt(text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.interrupts = append(r.interrupts, text)
}

func (r *rig) interrupted(text string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Contains(r.interrupts, text)
}

func (r *rig) do(method, path, body string) (int, map[string]any, string) {
	r.t.Helper()
	req, err := http.NewRequest(method, r.srv.URL+r.prefix+path, strings.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := r.srv.Client().Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var v map[string]any
	json.Unmarshal(data, &v)
	return resp.StatusCode, v, string(data)
}

// localRig is the run of this process, behind flower serve's Hub.
func localRig(t *testing.T) *rig {
	stream, err := web.NewStream(context.Background(), nil, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	h, err := web.NewHub(ts.Listener, stream, web.Options{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = h.Server()
	ts.Start()
	t.Cleanup(ts.Close)
	t.Cleanup(stream.Broker().Close)
	r := &rig{t: t, srv: ts, hub: h}
	r.ch = human.New(human.Options{Sink: h.Sink, Timeout: human.Forever, Workbench: filepath.Join(t.TempDir(), ".flower")})
	var once sync.Once
	detach := h.Attach(web.Wake{Channel: r.ch, Interrupt: r.interrupt, Banner: "-> starting", Number: 1})
	r.end = func() { once.Do(detach) }
	t.Cleanup(r.end)
	return r
}

// storedRig is a run of a PostgreSQL database, steered through the store
// by one connection while a driver on another follows its journal.
func storedRig(t *testing.T) *rig {
	url := pgtest.URL(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	serve, drive := openDB(t, url), openDB(t, url)
	ws := t.TempDir()
	now := time.Now()
	run := store.Run{ID: "20260101-000000-abcdef", Workspace: ws, Status: store.RunInFlight, Created: now, Updated: now}
	if err := drive.Commit(ctx, store.Batch{Run: &run}); err != nil {
		t.Fatal(err)
	}
	stream, err := web.NewStream(ctx, drive, ws, func(err error) { t.Error(err) })
	if err != nil {
		t.Fatal(err)
	}
	stream.Attach(drive)
	srv, err := web.New(web.Options{Token: token, Runs: &web.Runs{DB: serve}})
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, srv: httptest.NewServer(srv), prefix: "/runs/" + run.ID}
	t.Cleanup(r.srv.Close)
	r.ch = human.New(human.Options{Sink: stream.Publish, Timeout: human.Forever, Workbench: filepath.Join(ws, ".flower"),
		Store: drive, JournalKey: store.SideLog(ws, store.HumanJournal)})
	stop := web.Follow(ctx, r.ch, r.interrupt, drive, ws, io.Discard)
	var once sync.Once
	r.end = func() {
		once.Do(func() {
			stop()
			stream.End()
			run.Status, run.Updated = store.RunFinished, time.Now()
			if err := drive.Commit(ctx, store.Batch{Run: &run}); err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(r.end)
	return r
}

func openDB(t *testing.T, url string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// ask asks a question on the driver's channel as tool call call and
// returns the ask's id and where its result will arrive.
func (r *rig) ask(call, input string) (string, <-chan tool.Result) {
	r.t.Helper()
	done := make(chan tool.Result, 1)
	go func() {
		res, _ := r.ch.Tools()[0].Run(tool.WithCall(context.Background(), call), json.RawMessage(input))
		done <- res
	}()
	a, err := r.ch.NextAsk(watchdog(r.t))
	if err != nil {
		r.t.Fatalf("no question came: %v", err)
	}
	return a.ID, done
}

func (r *rig) result(done <-chan tool.Result) string {
	r.t.Helper()
	select {
	case res := <-done:
		return res.Content
	case <-watchdog(r.t).Done():
		r.t.Fatal("the ask never returned")
		return ""
	}
}

// eventually waits for cond, polled: the store-backed run reaches its
// driver through the journal.
func (r *rig) eventually(what string, cond func() bool) {
	r.t.Helper()
	ctx := watchdog(r.t)
	for !cond() {
		select {
		case <-ctx.Done():
			r.t.Fatalf("never: %s", what)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestSteeringConformance: the run of this process and a run of a
// database, steered through the store, answer the same requests alike
// (R6.7): one handler table, two implementations of web.Run.
func TestSteeringConformance(t *testing.T) {
	for name, newRig := range map[string]func(*testing.T) *rig{"local": localRig, "stored": storedRig} {
		t.Run(name, func(t *testing.T) { conform(t, newRig(t)) })
	}
}

func conform(t *testing.T, r *rig) {
	id, done := r.ask("call-1", `{"question":"Which colour?","options":["red","blue"]}`)
	var asks []web.AskJSON
	code, _, body := r.do("GET", "/asks", "")
	if err := json.Unmarshal([]byte(body), &asks); code != http.StatusOK || err != nil {
		t.Fatalf("GET /asks: %d %s", code, body)
	}
	if len(asks) != 1 || asks[0].ID != id || asks[0].Question != "Which colour?" || !slices.Equal(asks[0].Options, []string{"red", "blue"}) {
		t.Fatalf("GET /asks: %+v, want %s", asks, id)
	}

	for _, c := range []struct {
		method, path, body string
		code               int
		says               string
	}{
		{"POST", "/answer", `{"id":"x","text":"y"}`, http.StatusBadRequest, "ids look like q1"},
		{"POST", "/answer", `{"id":"q9","text":"y"}`, http.StatusNotFound, `no ask "q9"`},
		{"POST", "/decline", `{"id":"q9","reason":"y"}`, http.StatusNotFound, `no ask "q9"`},
		{"POST", "/answer", `{"id":"q1","text":"y","extra":1}`, http.StatusBadRequest, "bad JSON"},
		{"POST", "/send", `{"text":"  "}`, http.StatusBadRequest, "text is empty"},
		{"GET", "/events?after=-1", "", http.StatusBadRequest, "after="},
	} {
		code, v, _ := r.do(c.method, c.path, c.body)
		if msg, _ := v["error"].(string); code != c.code || !strings.Contains(msg, c.says) || strings.Contains(msg, "\n") {
			t.Errorf("%s %s %s: %d %q, want %d and one line saying %q", c.method, c.path, c.body, code, msg, c.code, c.says)
		}
	}

	if code, v, _ := r.do("POST", "/answer", `{"id":"`+id+`","text":"2"}`); code != http.StatusOK || v["ok"] != true {
		t.Fatalf("POST /answer: %d %v", code, v)
	}
	if got := r.result(done); !strings.Contains(got, "blue") {
		t.Errorf("the ask returned %q, want the option picked by its number", got)
	}
	if code, v, _ := r.do("POST", "/answer", `{"id":"`+id+`","text":"red"}`); code != http.StatusOK || v["ok"] != false {
		t.Errorf("POST /answer once settled: %d %v, want ok:false", code, v)
	}

	id2, done2 := r.ask("call-2", `{"question":"Tabs?"}`)
	if code, v, _ := r.do("POST", "/decline", `{"id":"`+id2+`","reason":"your call"}`); code != http.StatusOK || v["ok"] != true {
		t.Fatalf("POST /decline: %d %v", code, v)
	}
	if got := r.result(done2); !strings.Contains(got, "your call") {
		t.Errorf("the declined ask returned %q", got)
	}
	if code, _, body := r.do("GET", "/asks", ""); code != http.StatusOK || body != "[]\n" {
		t.Errorf("GET /asks once settled: %d %s", code, body)
	}

	if code, v, _ := r.do("POST", "/send", `{"text":"use tabs"}`); code != http.StatusOK || v["ok"] != true {
		t.Fatalf("POST /send: %d %v", code, v)
	}
	r.eventually("the note reaches the inbox", r.ch.Waiting)
	if code, v, _ := r.do("POST", "/interrupt", `{"text":" stop here "}`); code != http.StatusOK || v["ok"] != true {
		t.Fatalf("POST /interrupt: %d %v", code, v)
	}
	r.eventually("the interrupt reaches the runtime", func() bool { return r.interrupted("stop here") })

	var page struct {
		Events []struct {
			Seq     int            `json:"seq"`
			Kind    string         `json:"kind"`
			Payload map[string]any `json:"payload"`
		} `json:"events"`
		Gap bool `json:"gap"`
	}
	settled := func() int {
		code, _, body := r.do("GET", "/events?after=0", "")
		if err := json.Unmarshal([]byte(body), &page); code != http.StatusOK || err != nil || page.Gap {
			t.Fatalf("GET /events: %d %s", code, body)
		}
		n := 0
		for _, e := range page.Events {
			if e.Kind == "ask" && e.Payload["kind"] == "question" && e.Payload["state"] != "asked" {
				n++
			}
		}
		return n
	}
	r.eventually("the events show both asks settled", func() bool { return settled() == 2 })
	// A client that has them all up to seq last gets only what followed.
	last := page.Events[len(page.Events)-2].Seq
	code, _, body = r.do("GET", "/events?after="+strconv.Itoa(last), "")
	if err := json.Unmarshal([]byte(body), &page); code != http.StatusOK || err != nil || len(page.Events) == 0 || page.Events[0].Seq != last+1 {
		t.Errorf("GET /events?after=%d: %d %s", last, code, body)
	}

	r.end()
	for _, c := range []struct{ path, body string }{{"/send", `{"text":"too late"}`}, {"/interrupt", `{"text":""}`}} {
		if code, v, _ := r.do("POST", c.path, c.body); code != http.StatusConflict || v["error"] == "" {
			t.Errorf("POST %s once the run ended: %d %v, want 409", c.path, code, v)
		}
	}
	if code, v, _ := r.do("POST", "/answer", `{"id":"`+id+`","text":"red"}`); code != http.StatusOK || v["ok"] != false {
		t.Errorf("POST /answer once the run ended: %d %v, want ok:false", code, v)
	}
	if code, _, body := r.do("GET", "/asks", ""); code != http.StatusOK || body != "[]\n" {
		t.Errorf("GET /asks once the run ended: %d %s", code, body)
	}
}

// TestRunsUnknownRun: a run id no run has is 404 on every route.
func TestRunsUnknownRun(t *testing.T) {
	r := storedRig(t)
	r.prefix = "/runs/nope"
	for _, c := range []struct{ method, path, body string }{
		{"GET", "", ""}, {"GET", "/asks", ""}, {"GET", "/events", ""},
		{"POST", "/answer", `{"id":"q1","text":"y"}`}, {"POST", "/interrupt", `{"text":""}`},
	} {
		if code, v, _ := r.do(c.method, c.path, c.body); code != http.StatusNotFound || !strings.Contains(v["error"].(string), "no run nope") {
			t.Errorf("%s /runs/nope%s: %d %v", c.method, c.path, code, v)
		}
	}
}

// TestRunsListSubmitAndOne: GET and POST /runs and GET /runs/{id} over a
// database, with submit a function of the caller's.
func TestRunsListSubmitAndOne(t *testing.T) {
	db := openDB(t, pgtest.URL(t))
	submit := func(ctx context.Context, ws, task string, askTimeout *float64) (store.Run, error) {
		if strings.TrimSpace(task) == "" {
			return store.Run{}, web.Invalid(errors.New("submit needs a task"))
		}
		now := time.Now()
		r := store.Run{ID: "20260101-000000-" + fmt.Sprintf("%06x", len(task)), Workspace: ws, Task: task,
			Status: store.RunInFlight, Created: now, Updated: now, AskTimeout: askTimeout}
		return r, db.Commit(ctx, store.Batch{Run: &r})
	}
	srv, err := web.New(web.Options{Token: token, Runs: &web.Runs{DB: db, Submit: submit}})
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, srv: httptest.NewServer(srv)}
	t.Cleanup(r.srv.Close)
	ws := t.TempDir()
	for _, c := range []struct {
		body string
		code int
		says string
	}{
		{`{"task":"x","workspace":"relative"}`, http.StatusBadRequest, "absolute path"},
		{`{"task":"x","workspace":"` + ws + `","ask_timeout_s":-1}`, http.StatusBadRequest, "ask_timeout_s"},
		{`{"task":" ","workspace":"` + ws + `"}`, http.StatusBadRequest, "needs a task"},
		{`{"task":"x","workspace":"` + ws + `","extra":1}`, http.StatusBadRequest, "bad JSON"},
	} {
		if code, v, _ := r.do("POST", "/runs", c.body); code != c.code || !strings.Contains(fmt.Sprint(v["error"]), c.says) {
			t.Errorf("POST /runs %s: %d %v, want %d saying %q", c.body, code, v, c.code, c.says)
		}
	}
	code, v, _ := r.do("POST", "/runs", `{"task":"write tests","workspace":"`+ws+`","ask_timeout_s":90}`)
	id, _ := v["id"].(string)
	if code != http.StatusCreated || id == "" {
		t.Fatalf("POST /runs: %d %v", code, v)
	}
	if code, _, body := r.do("GET", "/runs", ""); code != http.StatusOK || !strings.Contains(body, `"id":"`+id+`"`) || strings.Contains(body, `"driver"`) {
		t.Errorf("GET /runs: %d %s, want the run, driven by nobody", code, body)
	}
	if code, _, body := r.do("GET", "/runs/"+id, ""); code != http.StatusOK || !strings.Contains(body, `"task":"write tests"`) || !strings.Contains(body, `"results":`) {
		t.Errorf("GET /runs/%s: %d %s", id, code, body)
	}
}
