package agent_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/store"
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
