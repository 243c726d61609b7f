package headless

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/permission"
	"github.com/flower-run/flower/store"
)

// Journal keeps the host's answers to permission questions by tool call,
// so that a call run again after a crash finds its answer instead of
// asking again, and a call the host denied is never run (DESIGN.md §3).
type Journal interface {
	Answer(ctx context.Context, call string) (answer string, ok bool, err error)
	Keep(ctx context.Context, call, answer string) error
}

// AskTool decides whether call u, which d asked about, may run: the
// host's PreToolUse hooks first (hook_callback, when d.Hook), then the
// host's canUseTool (Claude Code's can_use_tool with
// --permission-prompt-tool stdio); agent's ToolAsker. The answer is kept
// in the Journal before it is acted on, so the same call after a crash
// neither runs the hooks nor asks again.
func (s *Session) AskTool(ctx context.Context, u *model.ToolUse, d permission.Decision, question string, _ []string) (string, string, error) {
	if s.o.Journal != nil {
		if a, ok, err := s.o.Journal.Answer(ctx, u.ID); err != nil {
			return "", "", err
		} else if ok {
			return a, "answered", nil
		}
	}
	answer, state, err := s.decideCall(ctx, u, d, question)
	if err != nil || state != "answered" {
		return answer, state, err
	}
	if s.o.Journal != nil {
		if err := s.o.Journal.Keep(ctx, u.ID, answer); err != nil {
			return "", "", err
		}
	}
	return answer, state, nil
}

// decideCall asks the hooks, then the host.
func (s *Session) decideCall(ctx context.Context, u *model.ToolUse, d permission.Decision, question string) (string, string, error) {
	if d.Hook {
		verdict, err := s.preToolUse(ctx, u)
		switch {
		case err != nil:
			return "", "", err
		case verdict == "closed":
			return "", "declined", nil
		case verdict == "deny":
			return "deny", "answered", nil
		case verdict == "allow":
			return "allow once", "answered", nil
		case verdict == "" && d.Then == permission.Allow:
			return "allow once", "answered", nil
		}
	}
	if !s.o.PromptTool {
		return "", "declined", nil // no canUseTool: no one to ask, as unattended
	}
	r, err := s.request(ctx, map[string]any{"subtype": "can_use_tool", "tool_name": u.Name, "input": toolInput(u),
		"tool_use_id": u.ID, "permission_suggestions": []any{}, "description": question})
	if err != nil {
		return "", "", err
	}
	if r.Subtype == "closed" {
		return "", "declined", nil // the host went away: no answer, nothing kept
	}
	var p struct {
		Behavior string `json:"behavior"`
	}
	if r.Subtype == "success" && json.Unmarshal(r.Response, &p) == nil && p.Behavior == "allow" {
		return "allow once", "answered", nil
	}
	return "deny", "answered", nil
}

func toolInput(u *model.ToolUse) json.RawMessage {
	if len(u.Input) == 0 {
		return json.RawMessage("{}")
	}
	return json.RawMessage(u.Input)
}

// request sends a control request to the host and waits for its reply;
// a reply of subtype "closed" says the input ended first.
func (s *Session) request(ctx context.Context, body map[string]any) (controlReply, error) {
	id := "flower-" + newUUID()
	c := make(chan controlReply, 1)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return controlReply{Subtype: "closed", RequestID: id}, nil
	}
	s.pending[id] = c
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.pending, id)
		s.mu.Unlock()
	}()
	s.out.write(map[string]any{"type": "control_request", "request_id": id, "request": body})
	select {
	case r := <-c:
		return r, nil
	case <-ctx.Done():
		s.out.write(map[string]any{"type": "control_cancel_request", "request_id": id})
		return controlReply{}, ctx.Err()
	}
}

// AskPermission is AskTool for a question with no call in hand.
func (s *Session) AskPermission(ctx context.Context, call, question string, options []string) (string, string, error) {
	return s.AskTool(ctx, &model.ToolUse{ID: call, Name: "permission"}, permission.Decision{Action: permission.Ask}, question, options)
}

// answered hands a control_response of the host to the request awaiting it.
func (s *Session) answered(r controlReply) {
	s.mu.Lock()
	c, ok := s.pending[r.RequestID]
	s.mu.Unlock()
	if ok {
		c <- r
	}
}

// cancelPending settles every question still waiting once the input has
// ended: no answer can come any more.
func (s *Session) cancelPending() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for id, c := range s.pending {
		select {
		case c <- controlReply{Subtype: "closed", RequestID: id}:
		default:
		}
	}
}

// StoreJournal keeps the answers as note entries of a side log of the
// store (key: store.SideLog(workspace, id)).
type StoreJournal struct {
	Store store.Store
	Key   string
}

type permitRecord struct {
	Call   string `json:"call"`
	Answer string `json:"answer"`
}

// Answer finds the answer kept for call.
func (j StoreJournal) Answer(ctx context.Context, call string) (string, bool, error) {
	entries, err := j.Store.Load(ctx, j.Key)
	if err != nil {
		return "", false, fmt.Errorf("load the host's permission answers: %w", err)
	}
	for i := len(entries) - 1; i >= 0; i-- {
		var r permitRecord
		if json.Unmarshal([]byte(entries[i].Text), &r) == nil && r.Call == call {
			return r.Answer, true, nil
		}
	}
	return "", false, nil
}

// Keep makes answer durable for call.
func (j StoreJournal) Keep(ctx context.Context, call, answer string) error {
	if call == "" {
		return errors.New("keep a permission answer: no call id")
	}
	text, _ := json.Marshal(permitRecord{Call: call, Answer: answer})
	e := store.Entry{UUID: newUUID(), Key: j.Key, Kind: store.KindNote, Time: time.Now(), Text: string(text)}
	if err := j.Store.Append(ctx, e); err != nil {
		return fmt.Errorf("keep the host's permission answer: %w", err)
	}
	return nil
}
