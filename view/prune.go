package view

import (
	"encoding/json"
	"strings"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
)

// Expired marks the result of a one-shot command from an earlier run: it
// described a moment that has passed.
const Expired = "[expired: this output was captured earlier in the work and may no longer be true; run the command again if you need it]\n"

// pruner holds what the pruning rules need to know about a whole session.
type pruner struct {
	o       Options
	dropped map[string]bool           // tool_use ids of old denials, call and result dropped
	calls   map[string]*model.ToolUse // tool_use id -> call
}

// newPruner sees the chained entries; at maps them to their index in the
// session (nil: the same), which is what Options.Old counts.
func newPruner(entries []store.Entry, at []int, o Options) *pruner {
	p := &pruner{o: o, dropped: map[string]bool{}, calls: map[string]*model.ToolUse{}}
	var denials []string
	for i, e := range entries {
		p.see(e)
		if e.Kind == store.KindResult && e.Op != nil && e.Op.Denied && (!o.Settled || index(at, i) < o.Old) {
			denials = append(denials, e.Op.ID)
		}
	}
	keep := max(o.KeepDenials, 0)
	for i := 0; i < len(denials)-keep; i++ {
		p.dropped[denials[i]] = true
	}
	return p
}

// see records the calls of e.
func (p *pruner) see(e store.Entry) {
	if e.Kind == store.KindAssistant && e.Message != nil {
		for _, u := range e.Message.ToolUses() {
			p.calls[u.ID] = u
		}
	}
}

// message is the message the entry at index i of the session contributes, if any.
func (p *pruner) message(i int, e store.Entry) (model.Message, bool) {
	switch e.Kind {
	case store.KindUser:
		if e.Message != nil {
			return *e.Message, true
		}
	case store.KindAssistant:
		if e.Message != nil {
			return p.assistant(*e.Message), true
		}
	case store.KindResult:
		if e.Op != nil && !p.dropped[e.Op.ID] {
			return model.Message{Role: model.User, Content: []model.Block{p.result(i, e.Op)}}, true
		}
	case store.KindNote:
		return model.Message{Role: model.User, Content: []model.Block{&model.Text{Text: e.Text}}}, true
	}
	// op_started, api_error, interrupt, handoff: bookkeeping the model never sees.
	return model.Message{}, false
}

// assistant drops the calls of old denials from a response.
func (p *pruner) assistant(m model.Message) model.Message {
	if len(p.dropped) == 0 {
		return m
	}
	out := model.Message{Role: m.Role}
	for _, b := range m.Content {
		if u, ok := b.(*model.ToolUse); ok && p.dropped[u.ID] {
			continue
		}
		out.Content = append(out.Content, b)
	}
	return out
}

// result is the block a tool result shows: neutral when the call was cut,
// marked when it is an old one-shot output, a pointer when trimmed.
func (p *pruner) result(i int, op *store.Op) *model.ToolResult {
	r := &model.ToolResult{ToolUseID: op.ID, Content: op.Content, IsError: op.IsError}
	switch {
	case op.Cut:
		r.Content = Interrupted
	case i >= p.o.Old:
	case p.o.Trim != nil && op.Len() > p.o.Trim.minSize():
		r.Content = p.o.Trim.pointer(op)
	case oneShot(p.calls[op.ID]):
		r.Content = Expired + op.Content
	}
	return r
}

// oneShotCommands print a snapshot of a moment: their output expires.
var oneShotCommands = []string{"date", "ls", "pwd", "ps", "df", "du", "free", "uptime", "whoami", "top",
	"git status", "git log", "git diff", "git branch", "git show", "docker ps", "kubectl get"}

func oneShot(u *model.ToolUse) bool {
	if u == nil || u.Name != "Bash" {
		return false
	}
	var in struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(u.Input, &in) != nil {
		return false
	}
	cmd := strings.TrimSpace(in.Command)
	for _, c := range oneShotCommands {
		if cmd == c || strings.HasPrefix(cmd, c+" ") {
			return true
		}
	}
	return false
}
