package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
	"github.com/flower-run/flower/workflow/starter"
)

// How long a wake takes to ask the model anything: from exec of flower to
// the fake's receipt of its first model request (issue 4, "Measured";
// figures in BENCHMARKS.md). The binary is built without -race, as users
// run it. Each iteration kills flower at that request, before it is
// answered, so the next starts from the same state.
//
//	go test -run '^$' -bench 'ToFirstRequest' -benchtime 20x ./cmd/flower/

// benchLine fills tool results: text like a Read of source code.
const benchLine = "func example() { return fmt.Sprintf(\"%d\", 42) } // a line of source\n"

// resumeEntries is the size of the work session a resumed run continues.
const resumeEntries = 10_000

var (
	plainOnce sync.Once
	plainBin  string
	plainErr  error
)

// plainFlower builds flower without -race, next to the test binary.
func plainFlower(b *testing.B) string {
	b.Helper()
	plainOnce.Do(func() {
		plainBin = filepath.Join(filepath.Dir(flowerBin), "flower-plain")
		out, err := exec.Command("go", "build", "-o", plainBin, ".").CombinedOutput()
		if err != nil {
			plainErr = fmt.Errorf("build flower: %v\n%s", err, out)
		}
	})
	if plainErr != nil {
		b.Fatal(plainErr)
	}
	return plainBin
}

// firstRequest is a fake model that holds its first request unanswered
// and tells when it arrived: when its whole body has come in, before any
// parsing. (The timer used to stop in modeltest's responder, after the
// fake had decoded the request in this process: 100 ms and more for the
// megabytes of a long session's request on a loaded machine, which is not
// flower's time.) Other paths go to a modeltest fake.
type firstRequest struct {
	srv     *modeltest.Server
	front   *httptest.Server
	arrived chan struct{}
	release chan struct{}
	mu      sync.Mutex    // guards bodies
	bodies  [][]byte      // the requests' bodies
	cpu     time.Duration // CPU time of the flower processes so far
}

func newFirstRequest(b *testing.B) *firstRequest {
	f := &firstRequest{arrived: make(chan struct{}), release: make(chan struct{}, 1)}
	f.srv = modeltest.NewAnthropic(func(r *modeltest.Request) modeltest.Turn { return modeltest.Turn{Text: "ok"} })
	b.Cleanup(f.srv.Close)
	fake, err := url.Parse(f.srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(fake)
	f.front = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/messages") {
			proxy.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		f.arrived <- struct{}{}
		f.mu.Lock()
		f.bodies = append(f.bodies, body)
		f.mu.Unlock()
		<-f.release // flower is dead by now
	}))
	b.Cleanup(f.front.Close)
	return f
}

// bodiesDiffer reports whether the requests received are not all the
// same: every wake of an unchanged session sends the same one.
func (f *firstRequest) bodiesDiffer() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, b := range f.bodies[1:] {
		if !bytes.Equal(b, f.bodies[0]) {
			return true
		}
	}
	return false
}

// first is the first request flower sent: its system prompt, its number of
// messages and its size.
func (f *firstRequest) first(b *testing.B) (system string, messages, size int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var req struct {
		System   []struct{ Text string } `json:"system"`
		Messages []json.RawMessage       `json:"messages"`
	}
	if len(f.bodies) == 0 || json.Unmarshal(f.bodies[0], &req) != nil {
		b.Fatalf("no readable model request among %d", len(f.bodies))
	}
	for _, t := range req.System {
		system += t.Text
	}
	return system, len(req.Messages), len(f.bodies[0])
}

// time runs flower in dir and returns when its first model request came;
// the benchmark timer runs from just before exec to then.
func (f *firstRequest) time(b *testing.B, bin, dir string, args ...string) {
	b.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(baseEnv(dir), "ANTHROPIC_BASE_URL="+f.front.URL, "ANTHROPIC_API_KEY=test")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error, 1)
	b.StartTimer()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-f.arrived:
		b.StopTimer()
	case err := <-done:
		b.StopTimer()
		b.Fatalf("flower ended (%v) before asking the model anything:\n%s", err, out.String())
	case <-time.After(guard):
		b.StopTimer()
		cmd.Process.Kill()
		b.Fatalf("no model request within %v", guard)
	}
	cmd.Process.Kill()
	<-done
	// Killed while it waited for the answer: its CPU time is what it took
	// to get there, whatever else the machine was doing.
	f.cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	f.release <- struct{}{}
}

// report adds the flower's CPU time per run to the benchmark's figures.
func (f *firstRequest) report(b *testing.B) {
	b.ReportMetric(float64(f.cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// BenchmarkFreshToFirstRequest starts flower "task" in an empty directory:
// the first request is clarify's.
func BenchmarkFreshToFirstRequest(b *testing.B) {
	bin := plainFlower(b)
	f := newFirstRequest(b)
	root := b.TempDir()
	b.StopTimer()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dir, err := os.MkdirTemp(root, "fresh")
		if err != nil {
			b.Fatal(err)
		}
		f.time(b, bin, dir, crashTask)
	}
	f.report(b)
}

// BenchmarkResumeToFirstRequest wakes flower on a run a crash cut in its
// work step, whose session holds 10,000 entries: the first request
// continues that session. Target (issue 19): ≤ 0.5 s.
func BenchmarkResumeToFirstRequest(b *testing.B) {
	bin := plainFlower(b)
	f := newFirstRequest(b)
	dir := resumeWorkspace(b, resumeEntries)
	b.StopTimer()
	// The first wake writes the spill files of the trimmed results (agent
	// BenchmarkFirstWake measures that); every later one finds them.
	f.time(b, bin, dir)
	f.cpu = 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f.time(b, bin, dir)
	}
	f.report(b)
	// The request must continue the stored session, not start a new one.
	system, messages, size := f.first(b)
	if crashStepOf(system) != "work" || messages < resumeEntries*2/3 {
		b.Fatalf("the first request is of step %q with %d messages, want the work session's %d",
			crashStepOf(system), messages, 1+2*(resumeEntries-1)/3)
	}
	// Every wake of an unchanged session asks the same: a request that
	// changes between processes misses the prompt cache (issue 12).
	if f.bodiesDiffer() {
		b.Fatal("the wakes sent different first requests")
	}
	b.ReportMetric(float64(size)/1024, "req-KiB")
}

// resumeWorkspace builds, without flower, a workspace whose run was cut in
// its work step: brief and goals written, clarify and goals done, and a
// work session of at least n entries (a prompt, then Bash calls with their
// intents and Read calls, each with a result of realistic size: 200 B to
// 20 KB from a fixed seed, one in a hundred a 200 KB read; a signed
// thinking block every third response) whose last call has its result, so
// the wake's first act is a model request (issue 12: the results were 18
// bytes before, which hid the cost of a wake).
func resumeWorkspace(b *testing.B, n int) string {
	b.Helper()
	dir, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	runDir := filepath.Join(dir, "runs")
	write := func(path string, v any) {
		data, ok := v.(string)
		if !ok {
			raw, err := json.Marshal(v)
			if err != nil {
				b.Fatal(err)
			}
			data = string(raw)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write(filepath.Join(dir, starter.BriefPath), crashBrief(crashTask))
	write(filepath.Join(dir, starter.GoalsPath), "# Goals\n\n- [ ] log has the lines\n")

	const session = "0b5e55ed-0000-4000-8000-000000010000"
	key := store.SessionKey(dir, session)
	db, err := sqlite.Open(filepath.Join(runDir, "sessions.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	start := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	if err := db.PutMeta(ctx, store.Meta{Key: key, Agent: "work", Model: flower.DefaultModel, Workspace: dir, Created: start}); err != nil {
		b.Fatal(err)
	}
	entries := make([]store.Entry, 0, n)
	add := func(e store.Entry) {
		i := len(entries)
		e.UUID, e.Key, e.Time = fmt.Sprintf("00000000-0000-4000-8000-%012d", i), key, start.Add(time.Duration(i)*time.Second)
		if i > 0 {
			e.Parent = entries[i-1].UUID
		}
		entries = append(entries, e)
	}
	add(store.Entry{Kind: store.KindUser, Message: &model.Message{Role: model.User,
		Content: []model.Block{&model.Text{Text: "Do the work. The brief is " + starter.BriefPath + "."}}}})
	rng := rand.New(rand.NewSource(12))
	for call := 0; len(entries) < n; call++ {
		id := fmt.Sprintf("toolu_%08d", call)
		size := 200 + rng.Intn(20_000-200) // a result of realistic size
		if call%100 == 99 {
			size = 200_000 // a large read
		}
		output := strings.Repeat(benchLine, size/len(benchLine)+1)[:size]
		content := []model.Block{&model.Text{Text: fmt.Sprintf("Logging line %d.", call)}}
		if call%3 == 0 {
			content = append([]model.Block{&model.Thinking{Thinking: strings.Repeat("Weigh the options. ", 30),
				Signature: fmt.Sprintf("sig%d", call)}}, content...)
		}
		name, input, class := "Bash", json.RawMessage(fmt.Sprintf(`{"command":"echo %d >> log"}`, call)), "effect"
		if call%2 == 1 {
			name, input, class = "Read", json.RawMessage(fmt.Sprintf(`{"file_path":"src/file%d.go"}`, call)), "pure"
		}
		add(store.Entry{Kind: store.KindAssistant, Model: flower.DefaultModel, StopReason: model.StopToolUse,
			Usage: &model.Usage{Input: 10, Output: 40, CacheRead: 60_000},
			Message: &model.Message{Role: model.Assistant, Content: append(content,
				&model.ToolUse{ID: id, Name: name, Input: input})}})
		if class == "effect" {
			add(store.Entry{Kind: store.KindOpStarted, Op: &store.Op{ID: id, Tool: name, Input: input, Class: class}})
		}
		add(store.Entry{Kind: store.KindResult, Op: &store.Op{ID: id, Tool: name, Class: class, Content: output}})
	}
	// The cut run, bound to the work session, in the same commit as the
	// session's entries, as flower itself commits them.
	run := store.Run{ID: "20260101-090000-b0b0b0", Workspace: dir, Status: store.RunInFlight,
		Done: []string{"clarify", "goals"}, Step: "work", Row: "work", Session: session, Created: start}
	if err := db.Commit(ctx, store.Batch{Wake: dir, Run: &run, Entries: entries,
		Bind: []store.Binding{{Workspace: dir, Step: "work", Session: session}}}); err != nil {
		b.Fatal(err)
	}
	return dir
}
