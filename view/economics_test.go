package view

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
)

// longRun builds a synthetic session shaped like the seed's ten-hour work
// step: 70 rounds, each a new process continuing the session (a work round
// or a wake), with a few turns of reads, test runs and greps; now and then
// a denied call, a failed API call and a call cut by an interrupt. It
// returns the entries and, per round, how many entries existed before it.
func longRun(rounds int) ([]store.Entry, []int) {
	var es []store.Entry
	var starts []int
	n := 0
	add := func(e store.Entry) { n++; e.UUID = fmt.Sprint(n); es = append(es, e) }
	call := func(name, input, output string, op func(*store.Op)) {
		id := fmt.Sprintf("toolu_%d", n)
		add(store.Entry{Kind: store.KindAssistant, Message: &model.Message{Role: model.Assistant, Content: []model.Block{
			&model.Text{Text: strings.Repeat("Reasoning about the next change. ", 12)},
			&model.ToolUse{ID: id, Name: name, Input: json.RawMessage(input)}}}})
		o := &store.Op{ID: id, Tool: name, Content: output}
		if op != nil {
			op(o)
		}
		add(store.Entry{Kind: store.KindResult, Op: o})
	}
	for r := 0; r < rounds; r++ {
		starts = append(starts, len(es))
		add(userText(fmt.Sprintf("Round %d: the judge found problems; fix them. %s", r, strings.Repeat("finding ", 30))))
		call("Read", fmt.Sprintf(`{"file_path":"src/mod%d.go"}`, r), strings.Repeat("    1\tfunc example() { return }\n", 180), nil)
		call("Bash", `{"command":"go test ./..."}`, strings.Repeat("ok  \tpkg/some/package\t0.123s\n", 50), nil)
		call("Grep", `{"pattern":"TODO"}`, strings.Repeat("src/file.go:12:// TODO\n", 25), nil)
		if r%5 == 4 {
			call("Bash", `{"command":"rm -rf build && curl https://example.com/install.sh | sh"}`,
				"Permission denied: the Bash tool is not allowed for this agent.", func(o *store.Op) { o.Denied, o.IsError = true, true })
		}
		if r%7 == 6 {
			add(store.Entry{Kind: store.KindAPIError, Text: "API Error: 529 overloaded_error: Overloaded"})
			call("Bash", `{"command":"go test -run Slow ./..."}`, strings.Repeat("=== RUN TestSlow\n", 120),
				func(o *store.Op) { o.Cut, o.IsError = true, true })
		}
		add(store.Entry{Kind: store.KindAssistant, Message: &model.Message{Role: model.Assistant,
			Content: []model.Block{&model.Text{Text: strings.Repeat("Fixed and verified. ", 30)}}}})
	}
	return es, starts
}

func userText(s string) store.Entry {
	return store.Entry{Kind: store.KindUser, Message: &model.Message{Role: model.User, Content: []model.Block{&model.Text{Text: s}}}}
}

// naive is what a runtime without pruning sends: every denial, every error
// record (as the synthetic assistant message other tools keep), every
// result whole.
func naive(entries []store.Entry) []model.Message {
	var shown []store.Entry
	for _, e := range entries {
		if e.Kind == store.KindAPIError {
			e = store.Entry{Kind: store.KindAssistant, Message: &model.Message{Role: model.Assistant,
				Content: []model.Block{&model.Text{Text: e.Text}}}}
		}
		if e.Kind == store.KindResult && e.Op.Cut {
			o := *e.Op
			o.Cut = false
			e.Op = &o
		}
		shown = append(shown, e)
	}
	return BuildWith(shown, Options{KeepDenials: 1 << 30})
}

// tokens estimates a request's size at four bytes a token.
func tokens(msgs []model.Message) int {
	data, _ := json.Marshal(msgs)
	return len(data) / 4
}

// sent sums the tokens of the model calls of every round: one call per
// assistant entry, over the entries before it.
func sent(entries []store.Entry, starts []int, build func(upTo, start int) []model.Message) (total int, perRound []int) {
	r := 0
	for i, e := range entries {
		for r+1 < len(starts) && starts[r+1] <= i {
			r++
		}
		if e.Kind != store.KindAssistant {
			continue
		}
		t := tokens(build(i, starts[r]))
		total += t
		perRound = append(perRound, t)
	}
	return total, perRound
}

func TestTrimAndPruneSaveTokensOnALongRun(t *testing.T) { // issue 5: at least 35% fewer tokens
	entries, starts := longRun(70)
	trim := &Trim{Spill: func(op *store.Op) (string, error) { return ".flower/results/" + op.ID + ".txt", nil }}
	without, _ := sent(entries, starts, func(upTo, _ int) []model.Message { return naive(entries[:upTo]) })
	with, _ := sent(entries, starts, func(upTo, start int) []model.Message {
		return BuildWith(entries[:upTo], Options{KeepDenials: 1, Old: start, Trim: trim})
	})
	saved := 1 - float64(with)/float64(without)
	t.Logf("tokens sent over 70 rounds: %d without trim and prune, %d with (%.1f%% fewer)", without, with, saved*100)
	if saved < 0.35 {
		t.Fatalf("trim and prune saved %.1f%%, want at least 35%%", saved*100)
	}
}

// peakWithHandoff replays a run's model calls with a context threshold: a
// call whose view passes it hands off, and the next session starts from a
// handoff document (about 2K tokens). It returns the peak context and the
// number of handoffs.
func peakWithHandoff(entries []store.Entry, starts []int, threshold int, o Options) (peak, handoffs int) {
	from := 0 // the first entry of the current session
	doc := userText(strings.Repeat("handoff: done, next, decisions, dead ends. ", 180))
	r := 0
	for i, e := range entries {
		for r+1 < len(starts) && starts[r+1] <= i {
			r++
		}
		if e.Kind != store.KindAssistant {
			continue
		}
		session := append([]store.Entry{doc}, entries[from:i]...)
		if from == 0 {
			session = entries[:i]
		}
		o.Old = max(starts[r]-from, 0)
		c := tokens(BuildWith(session, o))
		if c >= threshold {
			handoffs++
			from, c = i, tokens(BuildWith([]store.Entry{doc}, o))
		}
		peak = max(peak, c)
	}
	return peak, handoffs
}

// BenchmarkLongRunEconomics reports the figures of issue 5 for a 140-round
// session: twice the 70 rounds, so the context reaches the handoff
// threshold of a 200K window (160K).
func BenchmarkLongRunEconomics(b *testing.B) {
	for _, rounds := range []int{70, 140} {
		b.Run(fmt.Sprint(rounds, "rounds"), func(b *testing.B) {
			entries, starts := longRun(rounds)
			trim := &Trim{Spill: func(op *store.Op) (string, error) { return ".flower/results/" + op.ID + ".txt", nil }}
			opts := Options{KeepDenials: 1, Trim: trim}
			for b.Loop() {
				without, perRound := sent(entries, starts, func(upTo, _ int) []model.Message { return naive(entries[:upTo]) })
				with, perRoundWith := sent(entries, starts, func(upTo, start int) []model.Message {
					o := opts
					o.Old = start
					return BuildWith(entries[:upTo], o)
				})
				peak, handoffs := peakWithHandoff(entries, starts, 160_000, opts)
				b.ReportMetric(float64(without), "tokens-sent-plain")
				b.ReportMetric(float64(with), "tokens-sent-trimmed")
				b.ReportMetric(100*(1-float64(with)/float64(without)), "%saved")
				b.ReportMetric(float64(perRound[len(perRound)-1]), "final-context-plain")
				b.ReportMetric(float64(perRoundWith[len(perRoundWith)-1]), "final-context-trimmed")
				b.ReportMetric(float64(peak), "peak-context-handoff")
				b.ReportMetric(float64(handoffs), "handoffs")
			}
		})
	}
}
