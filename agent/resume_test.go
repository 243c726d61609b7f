package agent

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
)

func eUser(text string) store.Entry {
	return store.Entry{Kind: store.KindUser, Message: &model.Message{Role: model.User, Content: []model.Block{&model.Text{Text: text}}}}
}

func eAsst(calls ...string) store.Entry {
	m := &model.Message{Role: model.Assistant, Content: []model.Block{&model.Text{Text: "t"}}}
	for _, id := range calls {
		m.Content = append(m.Content, &model.ToolUse{ID: id, Name: "Write", Input: json.RawMessage(`{}`)})
	}
	return store.Entry{Kind: store.KindAssistant, Message: m}
}

func eStarted(id string) store.Entry {
	return store.Entry{Kind: store.KindOpStarted, Op: &store.Op{ID: id, Tool: "Write"}}
}

func eResult(id string) store.Entry {
	return store.Entry{Kind: store.KindResult, Op: &store.Op{ID: id, Tool: "Write"}}
}

func TestPlanResume(t *testing.T) {
	tests := []struct {
		name      string
		entries   []store.Entry
		pending   []string
		ambiguous []string
		ended     bool
	}{
		{"empty", nil, nil, nil, false},
		{"prompt only: call the model", []store.Entry{eUser("go")}, nil, nil, false},
		{"turn ended", []store.Entry{eUser("go"), eAsst()}, nil, nil, true},
		{"ended then new prompt", []store.Entry{eUser("go"), eAsst(), eUser("more")}, nil, nil, false},
		{"response durable, no tool ran", []store.Entry{eUser("go"), eAsst("a", "b")}, []string{"a", "b"}, nil, false},
		{"intent durable, no result: ambiguous", []store.Entry{eUser("go"), eAsst("a", "b"), eStarted("a"), eStarted("b"), eResult("a")},
			[]string{"b"}, []string{"b"}, false},
		{"all results: call the model", []store.Entry{eUser("go"), eAsst("a"), eStarted("a"), eResult("a")}, nil, nil, false},
		{"older calls do not count", []store.Entry{eUser("go"), eAsst("a"), eResult("a"), eAsst("b"), eStarted("b")},
			[]string{"b"}, []string{"b"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := planResume(tt.entries)
			var pending, ambiguous []string
			for _, u := range p.pending {
				pending = append(pending, u.ID)
				if p.ambiguous[u.ID] {
					ambiguous = append(ambiguous, u.ID)
				}
			}
			if diff := cmp.Diff(tt.pending, pending); diff != "" {
				t.Errorf("pending (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.ambiguous, ambiguous); diff != "" {
				t.Errorf("ambiguous (-want +got):\n%s", diff)
			}
			if p.ended != tt.ended {
				t.Errorf("ended=%v, want %v", p.ended, tt.ended)
			}
		})
	}
}
