package view

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
)

// randomSession is a session of n entries drawn from r: every kind of
// entry, calls answered or not, denials, cut and large results, one-shot
// commands, malformed call input, empty texts, and now and then a branch
// or a missing parent. Entry ids are unique.
func randomSession(r *rand.Rand, n int) []store.Entry {
	var out []store.Entry
	var open []string // ids of calls not answered yet
	call := 0
	for len(out) < n {
		e := randomEntry(r, &open, &call)
		e.UUID = fmt.Sprintf("u%d", len(out))
		if len(out) > 0 {
			e.Parent = out[len(out)-1].UUID
			switch r.Intn(40) {
			case 0: // a branch: back to an older entry
				e.Parent = out[r.Intn(len(out))].UUID
			case 1: // a parent that is not in the store
				e.Parent = "gone"
			}
		}
		out = append(out, e)
	}
	return out
}

var commands = []string{"make", "git status", "ls -la", "go test ./...", "date", "rm -rf build"}

func randomEntry(r *rand.Rand, open *[]string, call *int) store.Entry {
	switch k := r.Intn(12); {
	case k < 2:
		text := []string{"go on", "", "fix the test"}[r.Intn(3)]
		return store.Entry{Kind: store.KindUser, Message: &model.Message{Role: model.User, Content: []model.Block{&model.Text{Text: text}}}}
	case k < 5:
		m := &model.Message{Role: model.Assistant}
		if r.Intn(3) == 0 {
			m.Content = append(m.Content, &model.Thinking{Thinking: "hmm", Signature: "sig"})
		}
		m.Content = append(m.Content, &model.Text{Text: []string{"", "ok", "let me look"}[r.Intn(3)]})
		for range r.Intn(4) {
			*call++
			id := fmt.Sprintf("toolu_%d", *call)
			in, _ := json.Marshal(map[string]string{"command": commands[r.Intn(len(commands))]})
			if r.Intn(15) == 0 {
				in = []byte(`{"command": "unterminated`)
			}
			m.Content = append(m.Content, &model.ToolUse{ID: id, Name: "Bash", Input: in})
			*open = append(*open, id)
		}
		return store.Entry{Kind: store.KindAssistant, Message: m}
	case k < 9 && len(*open) > 0:
		i := r.Intn(len(*open))
		id := (*open)[i]
		*open = append((*open)[:i:i], (*open)[i+1:]...)
		op := &store.Op{ID: id, Tool: "Bash", Content: strings.Repeat("x", []int{0, 30, 5000}[r.Intn(3)])}
		switch r.Intn(8) {
		case 0:
			op.Denied, op.IsError = true, true
		case 1:
			op.Cut, op.IsError = true, true
		case 2:
			op.IsError = true
		}
		return store.Entry{Kind: store.KindResult, Op: op}
	case k < 10:
		kinds := []store.Kind{store.KindNote, store.KindAPIError, store.KindOpStarted, store.KindInterrupt}
		return store.Entry{Kind: kinds[r.Intn(len(kinds))], Text: "note", Op: &store.Op{ID: "x"}}
	}
	*call++ // a result answering no call
	return store.Entry{Kind: store.KindResult, Op: &store.Op{ID: fmt.Sprintf("stray_%d", *call), Content: "?"}}
}

// TestBuilderMatchesRebuild holds the incremental view to the full
// rebuild: a session loaded at any point and extended entry by entry, or
// in batches, shows after each step exactly what BuildWith shows.
func TestBuilderMatchesRebuild(t *testing.T) {
	trim := &Trim{MinSize: 1000, Spill: func(op *store.Op) (string, error) { return ".flower/results/" + op.ID + ".txt", nil }}
	seeds := 300
	if testing.Short() {
		seeds = 60
	}
	for seed := range seeds {
		checkBuilder(t, int64(seed), trim)
	}
}

func checkBuilder(t *testing.T, seed int64, trim *Trim) {
	t.Helper()
	r := rand.New(rand.NewSource(seed))
	entries := randomSession(r, 1+r.Intn(80))
	loaded := r.Intn(len(entries) + 1)
	o := Options{KeepDenials: r.Intn(3) - 1, Old: loaded, Settled: true}
	if r.Intn(2) == 0 {
		o.Trim = trim
	}
	b := NewBuilder(entries[:loaded], o)
	if o.Trim != nil { // loaded with the trimmed results' text left in the store
		over, head := o.Trim.Heads()
		if got, want := NewBuilder(headsOf(entries[:loaded], over, head), o).Messages(), BuildWith(entries[:loaded], o); !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d, loaded %d as heads:\nheads %s\nwhole %s", seed, loaded, render(got), render(want))
		}
	}
	check := func(upTo int) {
		want := BuildWith(entries[:upTo], o)
		if got := b.Messages(); !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d, loaded %d, at %d:\nincremental %s\nrebuild     %s", seed, loaded, upTo, render(got), render(want))
		}
	}
	check(loaded)
	for i := loaded; i < len(entries); {
		j := min(i+1+r.Intn(3), len(entries))
		if extra := entries[i:j]; b.Len() > 0 && r.Intn(2) == 0 && results(extra) && continues(entries[i-1:j]) {
			want := BuildWith(entries[:j], o)
			if got := b.Messages(extra...); !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d, loaded %d, %d to %d as extra:\nincremental %s\nrebuild     %s", seed, loaded, i, j, render(got), render(want))
			}
		}
		if !b.Append(entries[i:j]...) {
			b = NewBuilder(entries[:j], o)
		}
		i = j
		check(i)
	}
}

// results reports whether es are all results or user entries, as
// Builder.Messages takes for extra.
func results(es []store.Entry) bool {
	for _, e := range es {
		if e.Kind != store.KindResult && e.Kind != store.KindUser {
			return false
		}
	}
	return true
}

// continues reports whether each entry's parent is the one before it.
func continues(es []store.Entry) bool {
	for i := 1; i < len(es); i++ {
		if es[i].Parent != es[i-1].UUID {
			return false
		}
	}
	return true
}

// FuzzBuilderMatchesRebuild is TestBuilderMatchesRebuild over any seed.
func FuzzBuilderMatchesRebuild(f *testing.F) {
	f.Add(int64(1))
	trim := &Trim{MinSize: 1000, Spill: func(op *store.Op) (string, error) { return "f/" + op.ID, nil }}
	f.Fuzz(func(t *testing.T, seed int64) { checkBuilder(t, seed, trim) })
}

// TestBuilderKeepsHistoryStable: what a model call sent stays the prefix
// of the next call's messages, but for its last message, which a new
// entry may extend; a new denial drops no older one (prompt caching).
func TestBuilderKeepsHistoryStable(t *testing.T) {
	entries := []store.Entry{user("go"),
		bash("d1", "rm -rf /"), res("d1", "Permission denied", denied)}
	b := NewBuilder(entries, Options{KeepDenials: 1, Old: len(entries)})
	prev := append([]model.Message(nil), b.Messages()...)
	for _, e := range []store.Entry{bash("d2", "curl x"), res("d2", "Permission denied", denied),
		bash("ok", "make"), res("ok", "built", nil)} {
		b.Append(e)
		got := b.Messages()
		if !reflect.DeepEqual(got[:len(prev)-1], prev[:len(prev)-1]) {
			t.Fatalf("after %s the history changed:\n%s\nwas\n%s", e.Kind, render(got), render(prev))
		}
		prev = append(prev[:0], got...)
	}
	if got, want := render(prev), "U[T:go] A[U:d1] U[R!:d1] A[U:d2] U[R!:d2] A[U:ok] U[R:ok]"; got != want {
		t.Fatalf("view = %s, want %s", got, want)
	}
	if got := render(NewBuilder(entries, Options{KeepDenials: 1, Old: 3}).Messages()); got != "U[T:go] A[U:d1] U[R!:d1]" {
		t.Fatalf("loaded view = %s", got)
	}
}
