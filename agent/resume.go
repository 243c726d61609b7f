package agent

import (
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
)

// plan is where a stored session stands: what the loop must do before it
// may call the model again. It is a pure function of the entries
// (DESIGN.md §3.4), so it is tested as a table of entry sequences.
type plan struct {
	// pending are the calls of the last model response without a result,
	// in the order the model made them. Their results must be produced (or
	// replayed) before the model is called: a completed response is never
	// requested again.
	pending []*model.ToolUse
	// ambiguous marks pending calls whose intent is durable: the effect may
	// or may not have happened before the process died.
	ambiguous map[string]bool
	// ended is true when the last model response ended its turn and nothing
	// came after it: without a new prompt there is nothing to do.
	ended bool
	// last is the last model response, if any.
	last *store.Entry
}

func planResume(entries []store.Entry) plan {
	p := plan{ambiguous: map[string]bool{}}
	at := -1
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].Kind == store.KindAssistant && entries[i].Message != nil {
			at = i
			break
		}
	}
	if at < 0 {
		return p
	}
	p.last = &entries[at]
	done, started := map[string]bool{}, map[string]bool{}
	laterInput := false
	for _, e := range entries[at+1:] {
		switch {
		case e.Kind == store.KindResult && e.Op != nil:
			done[e.Op.ID] = true
		case e.Kind == store.KindOpStarted && e.Op != nil:
			started[e.Op.ID] = true
		case e.Kind == store.KindUser || e.Kind == store.KindNote:
			laterInput = true
		}
	}
	for _, u := range p.last.Message.ToolUses() {
		if !done[u.ID] {
			p.pending = append(p.pending, u)
			p.ambiguous[u.ID] = started[u.ID]
		}
	}
	p.ended = len(p.last.Message.ToolUses()) == 0 && !laterInput
	return p
}
