package view

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
)

func user(text string) store.Entry {
	return store.Entry{Kind: store.KindUser, Message: &model.Message{Role: model.User, Content: []model.Block{&model.Text{Text: text}}}}
}

func asst(text string, calls ...string) store.Entry {
	m := &model.Message{Role: model.Assistant}
	if text != "" {
		m.Content = append(m.Content, &model.Text{Text: text})
	}
	for _, id := range calls {
		m.Content = append(m.Content, &model.ToolUse{ID: id, Name: "Bash", Input: json.RawMessage(`{}`)})
	}
	return store.Entry{Kind: store.KindAssistant, Message: m}
}

func result(id string) store.Entry {
	return store.Entry{Kind: store.KindResult, Op: &store.Op{ID: id, Tool: "Bash", Content: "ok " + id}}
}

func TestBuild(t *testing.T) {
	tests := []struct {
		name    string
		entries []store.Entry
		want    string // a compact rendering of the messages
	}{
		{"plain", []store.Entry{user("hi"), asst("hello")}, "U[T:hi] A[T:hello]"},
		{"results merged and first", []store.Entry{user("go"), asst("", "a", "b"), result("b"), result("a"), user("more")},
			"U[T:go] A[U:a U:b] U[R:a R:b T:more]"},
		{"orphan call answered neutrally", []store.Entry{user("go"), asst("x", "a")},
			"U[T:go] A[T:x U:a] U[R!:a]"},
		{"stray result dropped", []store.Entry{user("go"), result("zz"), asst("x")}, "U[T:go] A[T:x]"},
		{"api error and intents invisible", []store.Entry{user("go"), {Kind: store.KindAPIError, Text: "529"},
			{Kind: store.KindOpStarted, Op: &store.Op{ID: "a"}}, asst("ok")}, "U[T:go] A[T:ok]"},
		{"leading assistant gets a user", []store.Entry{asst("hm")}, "U[T:(continued)] A[T:hm]"},
		{"empty text dropped", []store.Entry{user(""), asst("")}, ""},
		{"call cut then new prompt", []store.Entry{user("go"), asst("", "a"), user("stop, do y")},
			"U[T:go] A[U:a] U[R!:a T:stop, do y]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs := Build(tt.entries)
			if got := render(msgs); got != tt.want {
				t.Fatalf("Build=%q, want %q", got, tt.want)
			}
			if err := Check(msgs); err != nil {
				t.Fatalf("Check: %v", err)
			}
		})
	}
}

func render(msgs []model.Message) string {
	s := ""
	for i, m := range msgs {
		if i > 0 {
			s += " "
		}
		s += string(m.Role[0]-32) + "["
		for j, b := range m.Content {
			if j > 0 {
				s += " "
			}
			switch v := b.(type) {
			case *model.Text:
				s += "T:" + v.Text
			case *model.ToolUse:
				s += "U:" + v.ID
			case *model.ToolResult:
				if v.IsError {
					s += "R!:" + v.ToolUseID
				} else {
					s += "R:" + v.ToolUseID
				}
			}
		}
		s += "]"
	}
	return s
}

// randomEntries builds an arbitrary entry sequence: any order, any kind.
func randomEntries(r *rand.Rand, n int) []store.Entry {
	ids := []string{"a", "b", "c"}
	var out []store.Entry
	for range n {
		switch r.IntN(6) {
		case 0:
			out = append(out, user([]string{"", "hi"}[r.IntN(2)]))
		case 1:
			var calls []string
			for _, id := range ids {
				if r.IntN(2) == 0 {
					calls = append(calls, fmt.Sprint(id, r.IntN(3)))
				}
			}
			out = append(out, asst([]string{"", "t"}[r.IntN(2)], calls...))
		case 2:
			out = append(out, result(fmt.Sprint(ids[r.IntN(3)], r.IntN(3))))
		case 3:
			out = append(out, store.Entry{Kind: store.KindAPIError, Text: "overloaded"})
		case 4:
			out = append(out, store.Entry{Kind: store.KindNote, Text: "note"})
		default:
			out = append(out, store.Entry{Kind: store.KindOpStarted, Op: &store.Op{ID: "a0"}})
		}
	}
	return out
}

func TestBuildAlwaysValid(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 5000 {
		entries := randomEntries(r, r.IntN(12))
		if err := Check(Build(entries)); err != nil {
			t.Fatalf("case %d: %v\n%s", i, err, render(Build(entries)))
		}
	}
}

func FuzzBuild(f *testing.F) {
	f.Add(uint64(1), uint64(2), uint8(8))
	f.Fuzz(func(t *testing.T, a, b uint64, n uint8) {
		entries := randomEntries(rand.New(rand.NewPCG(a, b)), int(n%40))
		if err := Check(Build(entries)); err != nil {
			t.Fatal(err)
		}
	})
}
