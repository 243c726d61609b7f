package headless

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/flower-run/flower/permission"
)

// maxLine is the longest input line read: a user message may carry a
// large document.
const maxLine = 64 << 20

// inbound is one line of the stream-json input.
type inbound struct {
	Type      string          `json:"type"`
	RequestID string          `json:"request_id"`
	Request   json.RawMessage `json:"request"`
	Response  *controlReply   `json:"response"`
	Message   struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// controlReply is the body of a control_response.
type controlReply struct {
	Subtype   string          `json:"subtype"`
	RequestID string          `json:"request_id"`
	Response  json.RawMessage `json:"response"`
	Error     string          `json:"error"`
}

// Serve reads user messages and control requests from in until it ends,
// running the messages one after another as turns of one session, and
// answering control requests at once, also while a turn runs. It returns
// the last turn's result, or an error for input that is not stream-json.
func (s *Session) Serve(ctx context.Context, in io.Reader) (last *Outcome, err error) {
	prompts := make(chan string, 64)
	readErr := make(chan error, 1)
	go func() { readErr <- s.read(ctx, in, prompts) }()
	for p := range prompts {
		res := s.turn(ctx, p)
		last = &Outcome{OK: res.OK, Interrupted: res.Stop == "interrupted", Session: res.SessionID}
		if ctx.Err() != nil {
			break
		}
	}
	if err := <-readErr; err != nil && ctx.Err() == nil {
		return last, err
	}
	return last, nil
}

// Outcome is how the last turn of Serve ended.
type Outcome struct {
	OK, Interrupted bool
	Session         string
}

// read dispatches the input's lines; at the end it closes prompts and
// settles the requests still waiting for the host, which cannot answer
// any more (a turn waiting on one would never end).
func (s *Session) read(ctx context.Context, in io.Reader, prompts chan<- string) error {
	defer close(prompts)
	defer s.cancelPending()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var m inbound
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			return fmt.Errorf("--input-format stream-json: line %d is not JSON (%v): send one JSON message per line", n, err)
		}
		switch m.Type {
		case "user":
			text, err := userText(m.Message.Content)
			if err != nil {
				return fmt.Errorf("--input-format stream-json: line %d: %w", n, err)
			}
			select {
			case prompts <- text:
			case <-ctx.Done():
				return nil
			}
		case "control_request":
			s.control(m.RequestID, m.Request)
		case "control_response":
			if m.Response != nil {
				s.answered(*m.Response)
			}
		case "control_cancel_request", "keep_alive", "update_environment_variables":
		default:
			fmt.Fprintf(s.o.Debug, "flower: stream-json input line %d: type %q ignored\n", n, m.Type)
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("--input-format stream-json: %w", err)
	}
	return nil
}

// userText is a user message's text: a string, or its text blocks.
func userText(content json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s, nil
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(content, &blocks); err != nil {
		return "", fmt.Errorf("a user message's content is a string or a list of blocks: %w", err)
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n"), nil
}

// control answers one control request of the host.
func (s *Session) control(id string, raw json.RawMessage) {
	var req struct {
		Subtype      string          `json:"subtype"`
		Mode         string          `json:"mode"`
		SystemPrompt json.RawMessage `json:"systemPrompt"`
		Append       string          `json:"appendSystemPrompt"`
		Hooks        json.RawMessage `json:"hooks"`
		SDKServers   []string        `json:"sdkMcpServers"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		s.reply(id, nil, fmt.Errorf("control request: %w", err))
		return
	}
	switch req.Subtype {
	case "initialize":
		s.initialize(req.SystemPrompt, req.Append)
		if err := s.setHooks(req.Hooks); err != nil {
			s.reply(id, nil, err)
			return
		}
		s.mu.Lock()
		s.sdkNames = req.SDKServers
		s.mu.Unlock()
		s.reply(id, map[string]any{"commands": []any{}, "agents": []any{}, "output_style": "default",
			"available_output_styles": []string{"default"}, "models": []any{}, "account": map[string]any{},
			"pending_permission_requests": []any{}}, nil)
	case "interrupt":
		s.mu.Lock()
		running := s.running
		s.mu.Unlock()
		if running { // an interrupt between turns would cut the next one
			s.o.Runner.Interrupt()
		}
		s.reply(id, map[string]any{"still_queued": []string{}}, nil)
	case "set_permission_mode":
		m, err := permission.ParseMode(req.Mode)
		if err == nil && s.o.Gate == nil {
			err = errors.New("this session has no permission modes")
		}
		if err != nil {
			s.reply(id, nil, err)
			return
		}
		s.o.Gate.SetMode(m)
		s.reply(id, map[string]any{"mode": string(m)}, nil)
	default:
		fmt.Fprintf(s.o.Debug, "flower: control request %q is not supported; answered with an error\n", req.Subtype)
		s.reply(id, nil, fmt.Errorf("flower does not support the control request %q", req.Subtype))
	}
}

// initialize keeps the system prompt the host set for the turns to come.
func (s *Session) initialize(system json.RawMessage, appendSys string) {
	var parts []string
	var one string
	if json.Unmarshal(system, &one) == nil {
		parts = []string{one}
	} else {
		_ = json.Unmarshal(system, &parts)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if joinNonEmpty(parts) != "" {
		s.system = parts
	}
	if appendSys != "" {
		s.appendSys = appendSys
	}
}

// reply writes the control_response to request id.
func (s *Session) reply(id string, body map[string]any, err error) {
	r := map[string]any{"subtype": "success", "request_id": id}
	if err != nil {
		r = map[string]any{"subtype": "error", "request_id": id, "error": err.Error()}
	} else if body != nil {
		r["response"] = body
	}
	s.out.write(map[string]any{"type": "control_response", "response": r})
}
