package flower

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/flower-run/flower/store"
)

// WhereStopped says in a few words where the work in flight stopped: the
// run, its step and the call a crash or Ctrl-C cut, for a person deciding
// whether to continue (issue 23); "" when nothing is in flight. It only
// reads.
func WhereStopped(ctx context.Context, s store.Store, runDir, ws string) string {
	runs, err := Runs(ctx, s, runDir, ws, false)
	if err != nil || len(runs) == 0 {
		return ""
	}
	r := runs[len(runs)-1]
	text := "run " + r.ID
	if r.Row != "" {
		text += " at step " + r.Row
	}
	if r.Session == "" {
		return text
	}
	entries, err := s.Load(ctx, store.SessionKey(ws, r.Session))
	if err != nil {
		return text
	}
	if call := cutCall(entries); call != "" {
		text += ", cut during " + call
	}
	return text
}

// cutCall names the last call whose intent is stored without its result:
// the one a crash cut.
func cutCall(entries []store.Entry) string {
	open := map[string]*store.Op{}
	var order []string
	for _, e := range entries {
		switch {
		case e.Op == nil:
		case e.Kind == store.KindOpStarted:
			open[e.Op.ID] = e.Op
			order = append(order, e.Op.ID)
		case e.Kind == store.KindResult:
			delete(open, e.Op.ID)
		}
	}
	for i := len(order) - 1; i >= 0; i-- {
		if op, ok := open[order[i]]; ok {
			return op.Tool + callGist(op.Input)
		}
	}
	return ""
}

// callGist is the part of a call's input a person recognizes it by.
func callGist(input json.RawMessage) string {
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	for _, k := range []string{"command", "file_path", "description", "url", "pattern"} {
		if v, ok := in[k].(string); ok && v != "" {
			v = strings.Join(strings.Fields(v), " ")
			if r := []rune(v); len(r) > 60 {
				v = string(r[:59]) + "…"
			}
			return " (" + v + ")"
		}
	}
	return ""
}
