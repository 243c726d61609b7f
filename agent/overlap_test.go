package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/tool"
)

// overlapFixture answers every request with text and closes requested at
// the first; its store holds the commit of the prompt until then, or
// fails it with fail.
func overlapFixture(t *testing.T, fail error) (*fixture, *faultStore, *bool) {
	requested := make(chan struct{})
	var once sync.Once
	f := newFixture(t, func(*modeltest.Request) modeltest.Turn {
		once.Do(func() { close(requested) })
		return modeltest.Turn{Text: "done"}
	})
	fs := withFaultStore(f, agent.Options{})
	overlapped := new(bool)
	fs.setFail(func(b store.Batch) error {
		if len(b.Entries) == 0 || b.Entries[0].Kind != store.KindUser {
			return nil
		}
		select {
		case <-requested:
			*overlapped = true // read after the run, which waits for this commit
		case <-time.After(10 * time.Second): // the run waited for the commit: it never comes
		}
		return fail
	})
	return f, fs, overlapped
}

// TestPromptCommitOverlapsFirstRequest: the first request is sent while
// the prompt is being made durable, and the response commits after it
// (package comment, "Overlap"; issue 12).
func TestPromptCommitOverlapsFirstRequest(t *testing.T) {
	f, fs, overlapped := overlapFixture(t, nil)
	res := f.run(agent.Spec{Name: "work"}, "hello", agent.RunOptions{})
	if !res.OK {
		t.Fatalf("run: %+v", res)
	}
	if !*overlapped {
		t.Error("the first request was not sent while the prompt's commit was under way")
	}
	if got := f.kinds(res.SessionID); got != "user assistant" {
		t.Errorf("entries %q, want %q", got, "user assistant")
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if got := fmt.Sprint(fs.batches); got != "[[user] [assistant]]" {
		t.Errorf("commits %s, want the prompt's, then the response's", got)
	}
}

// TestLostPromptLosesTheRun: when the prompt's commit fails, the response
// to the request sent meanwhile is not committed: the store holds nothing
// of the run, as after a crash before the prompt's commit, and the run
// fails with the store's error.
func TestLostPromptLosesTheRun(t *testing.T) {
	f, fs, overlapped := overlapFixture(t, errDiskFull)
	res := f.run(agent.Spec{Name: "work"}, "hello", agent.RunOptions{})
	if !errors.Is(res.Err, errDiskFull) || res.OK || !*overlapped {
		t.Fatalf("run: %+v (overlapped %v), want the prompt's error", res, *overlapped)
	}
	if got := f.kinds(res.SessionID); got != "" {
		t.Errorf("entries %q, want none", got)
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if len(fs.batches) != 0 {
		t.Errorf("commits %v after the lost prompt, want none", fs.batches)
	}
}

// signalTool is a pure tool that closes ran at its first run.
type signalTool struct {
	ran  chan struct{}
	once sync.Once
	n    atomic.Int32
}

func (*signalTool) Name() string            { return "Signal" }
func (*signalTool) Description() string     { return "reads" }
func (*signalTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (*signalTool) Class() tool.Class       { return tool.Pure }
func (s *signalTool) Run(context.Context, json.RawMessage) (tool.Result, error) {
	s.n.Add(1)
	s.once.Do(func() { close(s.ran) })
	return tool.Result{Content: "read"}, nil
}

// pureTurnFixture scripts a response calling Signal, then text, for
// every run; its store holds the commit of a response with calls until
// Signal has run, then fails it with fail. sentEarly reports a request
// sent before the commit of the response before it had returned.
func pureTurnFixture(t *testing.T, fail error) (f *fixture, sig *signalTool, overlapped, sentEarly *atomic.Bool) {
	sig = &signalTool{ran: make(chan struct{})}
	overlapped, sentEarly = new(atomic.Bool), new(atomic.Bool)
	var fs *faultStore
	early := make(chan struct{})
	f = newFixture(t, func(r *modeltest.Request) modeltest.Turn {
		if len(r.Messages) == 1 { // the prompt: call Signal
			return modeltest.Turn{ToolCalls: []modeltest.ToolCall{{ID: "toolu_s", Name: "Signal", Input: `{}`}}}
		}
		fs.mu.Lock()
		defer fs.mu.Unlock()
		if got := fmt.Sprint(fs.batches); !strings.Contains(got, "assistant") {
			sentEarly.Store(true)
			close(early)
		}
		return modeltest.Turn{Text: "finished"}
	}, sig)
	fs = withFaultStore(f, agent.Options{Tools: []tool.Tool{sig}})
	var held atomic.Bool // only the first such commit is held (and failed)
	fs.setFail(func(b store.Batch) error {
		last := b.Entries[len(b.Entries)-1]
		if last.Message == nil || len(last.Message.ToolUses()) == 0 || !held.CompareAndSwap(false, true) {
			return nil
		}
		select {
		case <-sig.ran:
			overlapped.Store(true)
		case <-time.After(10 * time.Second): // the call waited for the commit: it never runs
		}
		select { // a request that did not wait for this commit would come now
		case <-early:
		case <-time.After(100 * time.Millisecond):
		}
		return fail
	})
	return f, sig, overlapped, sentEarly
}

// TestPureCallsRunWhileTheResponseCommits: a response whose calls are all
// pure commits while they run; the next request waits for that commit
// (package comment, "Overlap"; issue 12).
func TestPureCallsRunWhileTheResponseCommits(t *testing.T) {
	f, _, overlapped, sentEarly := pureTurnFixture(t, nil)
	res := f.run(agent.Spec{Name: "work"}, "read", agent.RunOptions{})
	if !res.OK {
		t.Fatalf("run: %+v", res)
	}
	if !overlapped.Load() {
		t.Error("the pure call did not run while its response was being committed")
	}
	if sentEarly.Load() {
		t.Error("the next request was sent before the response before it was durable")
	}
	if got, want := f.kinds(res.SessionID), "user assistant tool_result assistant"; got != want {
		t.Errorf("entries %q, want %q", got, want)
	}
}

// TestLostResponseRunsItsPureCallsAgain: when the commit of such a
// response fails, no request follows it, the store holds only the prompt,
// and the resume asks the model again and runs the pure call again, as
// after a crash during the model call.
func TestLostResponseRunsItsPureCallsAgain(t *testing.T) {
	f, sig, overlapped, _ := pureTurnFixture(t, errDiskFull)
	res := f.run(agent.Spec{Name: "work"}, "read", agent.RunOptions{})
	if !errors.Is(res.Err, errDiskFull) || !overlapped.Load() || f.srv.Count() != 1 {
		t.Fatalf("run: %+v, overlapped %v, %d requests; want the commit's error after one request", res, overlapped.Load(), f.srv.Count())
	}
	if got := f.kinds(res.SessionID); got != "user" {
		t.Fatalf("entries %q, want the prompt only", got)
	}
	res = f.run(agent.Spec{Name: "work"}, "", agent.RunOptions{Resume: res.SessionID})
	if !res.OK || sig.n.Load() != 2 || f.srv.Count() != 3 {
		t.Fatalf("resume: %+v, %d runs of the call, %d requests", res, sig.n.Load(), f.srv.Count())
	}
	if got, want := f.kinds(res.SessionID), "user assistant tool_result assistant"; got != want {
		t.Errorf("entries %q, want %q", got, want)
	}
}
