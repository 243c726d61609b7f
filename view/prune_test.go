package view

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
)

func bash(id, cmd string) store.Entry {
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return store.Entry{Kind: store.KindAssistant, Message: &model.Message{Role: model.Assistant,
		Content: []model.Block{&model.ToolUse{ID: id, Name: "Bash", Input: in}}}}
}

func res(id, content string, mut func(*store.Op)) store.Entry {
	op := &store.Op{ID: id, Tool: "Bash", Content: content}
	if mut != nil {
		mut(op)
	}
	return store.Entry{Kind: store.KindResult, Op: op}
}

func denied(op *store.Op) { op.Denied, op.IsError = true, true }

func TestPruneKeepsNewestDenial(t *testing.T) { // R4.5
	entries := []store.Entry{user("go"),
		bash("d1", "rm -rf /"), res("d1", "Permission denied", denied),
		bash("d2", "curl x"), res("d2", "Permission denied", denied),
		bash("ok", "make"), res("ok", "built", nil)}
	got := render(Build(entries))
	want := "U[T:go] A[U:d2] U[R!:d2] A[U:ok] U[R:ok]"
	if got != want {
		t.Fatalf("Build=%q, want %q", got, want)
	}
	if got := render(BuildWith(entries, Options{KeepDenials: -1})); got != "U[T:go] A[U:ok] U[R:ok]" {
		t.Fatalf("keep none: %q", got)
	}
}

func TestPruneNeutralizesCutResults(t *testing.T) { // R4.5
	entries := []store.Entry{user("go"), bash("a", "make"), res("a", "partial junk", func(o *store.Op) { o.Cut, o.IsError = true, true })}
	msgs := Build(entries)
	if r := msgs[2].Content[0].(*model.ToolResult); r.Content != Interrupted {
		t.Fatalf("cut result shows %q", r.Content)
	}
	if entries[2].Op.Content != "partial junk" {
		t.Fatal("the entry itself was changed")
	}
}

func TestPruneExpiresOldOneShotResults(t *testing.T) { // R4.5
	entries := []store.Entry{user("go"), bash("a", "git status"), res("a", "clean", nil),
		bash("b", "make test"), res("b", "ok", nil), user("again"), bash("c", "git status"), res("c", "dirty", nil)}
	msgs := BuildWith(entries, Options{KeepDenials: 1, Old: 5})
	results := map[string]string{}
	for _, m := range msgs {
		for _, b := range m.Content {
			if r, ok := b.(*model.ToolResult); ok {
				results[r.ToolUseID] = r.Content
			}
		}
	}
	if results["a"] != Expired+"clean" || results["b"] != "ok" || results["c"] != "dirty" {
		t.Fatalf("results = %q", results)
	}
}

func TestTrimPointsToSpilledFile(t *testing.T) { // R4.6
	big := strings.Repeat("line of build output\n", 500)
	entries := []store.Entry{user("go"), bash("a", "make"), res("a", big, nil), user("next"), bash("b", "make"), res("b", big, nil)}
	var spilled []string
	trim := &Trim{Spill: func(op *store.Op) (string, error) {
		spilled = append(spilled, op.ID)
		return ".flower/results/" + op.ID + ".txt", nil
	}}
	msgs := BuildWith(entries, Options{Old: 4, Trim: trim})
	old := msgs[2].Content[0].(*model.ToolResult).Content
	recent := msgs[4].Content[0].(*model.ToolResult).Content
	if !strings.Contains(old, ".flower/results/a.txt") || len(old) > 800 || recent != big {
		t.Fatalf("old %d bytes: %.120q; recent %d bytes", len(old), old, len(recent))
	}
	if len(spilled) != 1 || spilled[0] != "a" {
		t.Fatalf("spilled %v", spilled)
	}
}

func TestChainReparentsAndDropsDeadBranches(t *testing.T) { // R4.5: the chain never breaks
	e := func(id, parent string, base store.Entry) store.Entry {
		base.UUID, base.Parent = id, parent
		return base
	}
	entries := []store.Entry{
		e("1", "", user("first")),
		e("2", "1", asst("answer one")),
		e("3", "gone", user("second")), // its parent was lost: re-parented to "2"
		e("4", "3", asst("dead branch")),
		e("5", "3", asst("answer two")), // the leaf's branch wins
	}
	if got, want := render(Build(entries)), "U[T:first] A[T:answer one] U[T:second] A[T:answer two]"; got != want {
		t.Fatalf("Build=%q, want %q", got, want)
	}
}
