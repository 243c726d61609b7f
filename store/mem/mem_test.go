package mem_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/mem"
	"github.com/flower-run/flower/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return mem.New() })
}

func entry(n int) store.Entry {
	return store.Entry{UUID: fmt.Sprint("u", n), Key: "k", Kind: store.KindAssistant,
		Message: &model.Message{Role: model.Assistant, Content: []model.Block{
			&model.Text{Text: "hi"},
			&model.ToolUse{ID: "t", Name: "Write", Input: json.RawMessage(`{"a":1}`)}}},
		Op:    &store.Op{ID: "t", Input: json.RawMessage(`{"a":1}`)},
		Usage: &model.Usage{Input: 1}}
}

// TestCopies: changing an appended entry, or a loaded one, changes nothing
// in the store.
func TestCopies(t *testing.T) {
	ctx := context.Background()
	s := mem.New()
	in := entry(0)
	if err := s.Append(ctx, in); err != nil {
		t.Fatal(err)
	}
	spoil := func(e store.Entry) {
		e.Message.Content[0].(*model.Text).Text = "changed"
		e.Message.Content[1].(*model.ToolUse).Input[0] = 'X'
		e.Message.Content = append(e.Message.Content[:1], &model.Text{Text: "more"})
		e.Message.Role = model.User
		e.Op.Input[0] = 'X'
		e.Usage.Input = 99
	}
	spoil(in)
	got, err := s.Load(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	spoil(got[0])
	again, err := s.Load(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	e := again[0]
	if e.Message.Role != model.Assistant || e.Message.TextOf() != "hi" || len(e.Message.Content) != 2 ||
		string(e.Message.ToolUses()[0].Input) != `{"a":1}` || string(e.Op.Input) != `{"a":1}` || e.Usage.Input != 1 {
		t.Fatalf("the store's entry changed with a copy: %+v %+v %+v", e.Message, e.Op, e.Usage)
	}
}

// TestConcurrent: appends and loads from many goroutines (run with -race)
// lose nothing and keep seq increasing.
func TestConcurrent(t *testing.T) {
	ctx := context.Background()
	s := mem.New()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				if err := s.Append(ctx, entry(g*1000+i)); err != nil {
					t.Error(err)
					return
				}
				if _, err := s.Load(ctx, "k"); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	got, err := s.Load(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 400 {
		t.Fatalf("%d entries, want 400", len(got))
	}
	for i := 1; i < len(got); i++ {
		if got[i].Seq <= got[i-1].Seq {
			t.Fatalf("seq %d after %d", got[i].Seq, got[i-1].Seq)
		}
	}
}
