package view

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/flower-run/flower/store"
)

// TestLeftNamesWhatTheViewDrops: old denials, failed model calls and cut
// results each give one Left, in session order, after the block before
// them (issue 23 item 2).
func TestLeftNamesWhatTheViewDrops(t *testing.T) {
	push := bash("d1", "git push origin main")
	entries := []store.Entry{user("go"),
		push, res("d1", "denied", denied),
		bash("d2", "rm -rf /*"), res("d2", "denied", denied),
		{Kind: store.KindAPIError, Text: "overloaded_error"},
		bash("c", "sleep 60"), res("c", "half", func(o *store.Op) { o.Cut, o.IsError = true, true }),
		bash("d3", "curl x"), res("d3", "denied", denied)}
	msgs, left := BuildLeft(entries, Default)
	if !reflect.DeepEqual(msgs, Build(entries)) {
		t.Fatal("BuildLeft's messages differ from Build's")
	}
	var got []string
	for _, l := range left {
		got = append(got, l.String())
	}
	want := []string{
		"· denied (not sent to the model any more): Bash git push origin main",
		"· denied (not sent to the model any more): Bash rm -rf /*",
		"· model call failed (not sent to the model): overloaded_error",
		"· cut before it finished (the model sees only that): Bash sleep 60",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("left\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if left[0].After != entries[0].Message.Content[0] || left[1].After != left[0].After {
		t.Error("the dropped denials are not placed after the prompt")
	}
	if left[3].After != msgs[len(msgs)-3].Content[0] {
		t.Errorf("the cut is not placed after its result: %#v", left[3].After)
	}
}

// TestBuildLeftKeepsTheView: on random sessions BuildLeft's messages are
// BuildWith's, and it names one denial for each denied call on the chain the view drops.
func TestBuildLeftKeepsTheView(t *testing.T) {
	for seed := range 60 {
		entries := randomSession(rand.New(rand.NewSource(int64(seed))), 40)
		msgs, left := BuildLeft(entries, Default)
		if !reflect.DeepEqual(msgs, Build(entries)) {
			t.Fatalf("seed %d: BuildLeft's messages differ from Build's", seed)
		}
		calls := map[string]bool{}
		for _, m := range msgs {
			for _, u := range m.ToolUses() {
				calls[u.ID] = true
			}
		}
		denials := 0
		for _, l := range left {
			if l.Kind == "denied" {
				denials++
			}
		}
		chained, _ := chain(entries)
		made := map[string]bool{}
		dropped := 0
		for _, e := range chained {
			if e.Kind == store.KindAssistant {
				for _, u := range e.Message.ToolUses() {
					made[u.ID] = true
				}
			}
			if e.Kind == store.KindResult && e.Op.Denied && made[e.Op.ID] && !calls[e.Op.ID] {
				dropped++
			}
		}
		if denials != dropped {
			t.Fatalf("seed %d: %d denials named, %d dropped", seed, denials, dropped)
		}
	}
}
