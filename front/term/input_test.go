package term

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flower-run/flower/human"
)

// fakeChannel records what the reader does with each line.
type fakeChannel struct {
	mu      sync.Mutex // guards all
	pending []human.Ask
	log     []string
}

func (f *fakeChannel) Pending() []human.Ask {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]human.Ask(nil), f.pending...)
}

func (f *fakeChannel) Answer(id, text string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, a := range f.pending {
		if a.ID == id {
			f.pending = append(f.pending[:i], f.pending[i+1:]...)
			f.log = append(f.log, "answer "+id+": "+text)
			return true
		}
	}
	return false
}

func (f *fakeChannel) Send(text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, "mail: "+text)
}

func TestReadInput(t *testing.T) { // R6.6: a line answers a waiting question, else goes to the inbox
	ch := &fakeChannel{pending: []human.Ask{{ID: "q1", Question: "which?", Options: []string{"red", "blue"}}}}
	var cmds []string
	c := Commands{
		Oracle: func(q string) { cmds = append(cmds, "oracle: "+q) },
		New:    func() { cmds = append(cmds, "new") },
	}
	in := strings.NewReader("2\nalso do X\n\n? how far along?\n/new\n")
	ReadInput(context.Background(), in, ch, c)
	if diff := cmp.Diff([]string{"answer q1: blue", "mail: also do X"}, ch.log); diff != "" {
		t.Fatalf("channel (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"oracle: how far along?", "new"}, cmds); diff != "" {
		t.Fatalf("commands (-want +got):\n%s", diff)
	}
}
