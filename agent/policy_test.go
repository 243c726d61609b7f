package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/resume"
	"github.com/flower-run/flower/store"
)

// storeCut stores what a process killed between a Write's intent and its
// result leaves behind, and returns the session id.
func storeCut(t *testing.T, f *fixture) string {
	t.Helper()
	id := "11111111-2222-3333-4444-666666666666"
	key := store.SessionKey(f.ws, id)
	use := &model.ToolUse{ID: "toolu_w", Name: "Write", Input: json.RawMessage(`{"file_path":"a.txt","content":"A"}`)}
	ctx := context.Background()
	err := f.rt.Store().Append(ctx,
		store.Entry{UUID: "c1", Key: key, Kind: store.KindUser, Message: &model.Message{Role: model.User, Content: []model.Block{&model.Text{Text: "write a"}}}},
		store.Entry{UUID: "c2", Parent: "c1", Key: key, Kind: store.KindAssistant, Message: &model.Message{Role: model.Assistant, Content: []model.Block{use}}},
		store.Entry{UUID: "c3", Parent: "c2", Key: key, Kind: store.KindOpStarted, Op: &store.Op{ID: "toolu_w", Tool: "Write"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.rt.Store().PutMeta(ctx, store.Meta{Key: key}); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestAmbiguousOpPolicies(t *testing.T) { // R5.4, R5.7
	tests := []struct {
		policy    resume.Policy
		written   bool
		requests  int
		errSubstr string
	}{
		{resume.Retry, true, 1, ""},
		{resume.Prompt, true, 1, ""},
		{resume.Skip, false, 1, ""},
		{resume.Discard, false, 0, "discard"},
	}
	for _, tt := range tests {
		t.Run(string(tt.policy), func(t *testing.T) {
			f := newFixture(t, modeltest.Script(modeltest.Turn{Text: "finished"}))
			f.rt = f.runtimeWith(agent.Options{Policies: resume.Policies{
				Default: resume.Retry, PerTool: map[string]resume.Policy{"Write": tt.policy}}})
			id := storeCut(t, f)
			res := f.run(agent.Spec{Name: "work"}, "", agent.RunOptions{Resume: id})
			_, err := os.Stat(filepath.Join(f.ws, "a.txt"))
			if written := err == nil; written != tt.written {
				t.Fatalf("a.txt written=%v, want %v", written, tt.written)
			}
			if f.srv.Count() != tt.requests || (tt.errSubstr == "") != res.OK || !strings.Contains(res.Error, tt.errSubstr) {
				t.Fatalf("result %+v after %d requests", res, f.srv.Count())
			}
			if tt.policy == resume.Skip && !strings.Contains(lastUserText(f.srv.Requests()[0]), `"skip"`) {
				t.Fatalf("the model was not told: %q", lastUserText(f.srv.Requests()[0]))
			}
		})
	}
}
