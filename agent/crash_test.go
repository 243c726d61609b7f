//go:build unix

package agent_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/internal/failpoint"
	"github.com/flower-run/flower/model/anthropic"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/store"
)

// The child's environment: where it works and which model server it asks.
const (
	crashChildEnv = "FLOWER_AGENT_CRASH_CHILD" // the workspace
	crashURLEnv   = "FLOWER_AGENT_CRASH_URL"
	crashSession  = "11111111-2222-3333-4444-ffffffffffff"
)

// TestCrashChild is the process the crash test kills: it resumes the
// session and runs it to the end, unless a failpoint kills it first.
func TestCrashChild(t *testing.T) {
	ws := os.Getenv(crashChildEnv)
	if ws == "" {
		t.Skip("run by TestRepeatedKillsRunACallAtMostTwice")
	}
	rt, err := agent.New(agent.Options{Workspace: ws, Store: openStore(t, ws),
		Provider: anthropic.New(anthropic.Config{APIKey: "test-key", BaseURL: os.Getenv(crashURLEnv)})})
	if err != nil {
		t.Fatal(err)
	}
	res := rt.Run(context.Background(), agent.Spec{Name: "work", Model: "claude-sonnet-4-6"}, "",
		agent.RunOptions{Resume: crashSession})
	if !res.OK {
		t.Fatalf("child: %+v", res)
	}
}

// TestRepeatedKillsRunACallAtMostTwice is issue 9's first finding with real
// processes: flower is SIGKILLed after a Bash call's effect, again and
// again. Under retry the command runs twice in all, never more, and the
// model is told the call was given up (R5.7, DESIGN §5).
func TestRepeatedKillsRunACallAtMostTwice(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	ws := t.TempDir()
	srv := modeltest.NewAnthropic(modeltest.Script(
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{{ID: "toolu_echo", Name: "Bash", Input: `{"command":"echo x >> log"}`}}},
		modeltest.Turn{Text: "done"},
	))
	defer srv.Close()
	seedCrashSession(t, ws, "keep a log of x")
	for i := 0; i < 4; i++ { // the first run, then three wakes: each killed after the effect point
		if err := crashChild(t, ws, srv.URL, "after-effect"); !killed(err) {
			t.Fatalf("child %d was not killed: %v", i+1, err)
		}
	}
	if err := crashChild(t, ws, srv.URL, ""); err != nil {
		t.Fatalf("the last wake failed: %v", err)
	}
	data, _ := os.ReadFile(filepath.Join(ws, "log"))
	if got := strings.Count(string(data), "x\n"); got != 2 {
		t.Fatalf("the command ran %d times in 4 kills, want 2", got)
	}
	if srv.Count() != 2 || !strings.Contains(lastUserText(srv.Requests()[1]), "Bash call (toolu_echo)") {
		t.Fatalf("%d requests; the model was not told: %q", srv.Count(), lastUserText(srv.Requests()[srv.Count()-1]))
	}
}

// seedCrashSession stores the session TestCrashChild resumes: its prompt
// and metadata. It returns the session's key.
func seedCrashSession(t *testing.T, ws, prompt string) string {
	t.Helper()
	s := openStore(t, ws)
	key := store.SessionKey(ws, crashSession)
	appendChain(t, s, key, userEntry(prompt))
	if err := s.PutMeta(context.Background(), store.Meta{Key: key}); err != nil {
		t.Fatal(err)
	}
	return key
}

// crashChild runs TestCrashChild in a new process with failpoint armed.
func crashChild(t *testing.T, ws, url, point string) error {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+ws, crashURLEnv+"="+url, failpoint.Env+"="+point)
	out, err := cmd.CombinedOutput()
	if err != nil && !killed(err) {
		t.Logf("child output:\n%s", out)
	}
	return err
}

func killed(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// TestKillAfterHandoffEntry: flower is SIGKILLed after a handoff entry,
// before the successor starts. The wake starts the successor the entry
// names, once, and finishes the work there (issue 9, R4.7).
func TestKillAfterHandoffEntry(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	ws := t.TempDir()
	srv := modeltest.NewAnthropic(handoffModel)
	defer srv.Close()
	key := seedCrashSession(t, ws, "count things")
	if err := crashChild(t, ws, srv.URL, "after-handoff"); !killed(err) {
		t.Fatalf("child was not killed: %v", err)
	}
	if err := crashChild(t, ws, srv.URL, ""); err != nil {
		t.Fatalf("the wake failed: %v", err)
	}
	rt, err := agent.New(agent.Options{Workspace: ws, Store: openStore(t, ws), Provider: anthropic.New(anthropic.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	old, _ := rt.Store().Load(ctx, key)
	succ := old[len(old)-1]
	metas, _ := rt.Store().Sessions(ctx, store.ProjectKey(ws))
	if succ.Kind != store.KindHandoff || len(metas) != 2 || metas[1].Key != store.SessionKey(ws, succ.UUID) {
		t.Fatalf("old session ends in %s; sessions %+v", succ.Kind, metas)
	}
	es, _ := rt.Store().Load(ctx, metas[1].Key)
	if len(es) != 2 || es[1].Message.TextOf() != "continued from the handoff" {
		t.Fatalf("successor holds %d entries", len(es))
	}
}

// TestWorldCallRerunsAfterACrash: a WebFetch is a world call (R5.2): on
// resume it is fetched again, never replayed, so a flaky page is not
// pinned (seed 002). flower is SIGKILLed once the Bash call after it in the
// same response has its result durable, before the next model request.
// The wake fetches the page again and the model sees the new page; the
// Bash effect stays once. On the old code the fetch rode along with the
// Bash result's commit and was replayed: one fetch, the stale page.
func TestWorldCallRerunsAfterACrash(t *testing.T) { // issue 22 item 5, R5.2, R5.3
	if testing.Short() {
		t.Skip("starts processes")
	}
	var fetches atomic.Int32
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := fetches.Add(1)
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "page version %d", n)
	}))
	defer page.Close()
	ws := t.TempDir()
	srv := modeltest.NewAnthropic(modeltest.Script(
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{
			{ID: "toolu_fetch", Name: "WebFetch", Input: `{"url":"` + page.URL + `/"}`},
			{ID: "toolu_echo", Name: "Bash", Input: `{"command":"echo x >> log"}`},
		}},
		modeltest.Turn{Text: "done"},
	))
	defer srv.Close()
	seedCrashSession(t, ws, "read the page, log x")
	if err := crashChild(t, ws, srv.URL, "after-result"); !killed(err) {
		t.Fatalf("the child was not killed: %v", err)
	}
	if err := crashChild(t, ws, srv.URL, ""); err != nil {
		t.Fatalf("the wake failed: %v", err)
	}
	if n := fetches.Load(); n != 2 {
		t.Errorf("the page was fetched %d times, want 2: once, and again on resume", n)
	}
	if data, _ := os.ReadFile(filepath.Join(ws, "log")); string(data) != "x\n" {
		t.Errorf("log = %q: the Bash effect must stay once", data)
	}
	if srv.Count() != 2 {
		t.Fatalf("%d model requests, want 2", srv.Count())
	}
	if got := lastUserText(srv.Requests()[1]); !strings.Contains(got, "page version 2") || strings.Contains(got, "page version 1") {
		t.Errorf("the model saw %q, want the page fetched again (version 2)", got)
	}
}
