package anthropic

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/model/modeltest"
)

// conversation is the last of MemoSteps' growing conversations and the
// JSON its first k messages had in a request that carried them, joined
// by commas as a snapshot holds them.
func conversation(t *testing.T, p *Provider, k int) ([]model.Message, *io.SectionReader) {
	t.Helper()
	steps := modeltest.MemoSteps()
	msgs := steps[5]
	memo := &model.Memo{}
	if _, err := p.Stream(t.Context(), &model.Request{Model: testModel, System: "Be terse.", Messages: msgs, Memo: memo}, nil); err != nil {
		t.Fatal(err)
	}
	prefix, ok := p.Kept(memo, k)
	if !ok || len(prefix) != k {
		t.Fatalf("Kept(%d) = %d messages, %v", k, len(prefix), ok)
	}
	joined := bytes.Join(prefix, []byte(","))
	return msgs, io.NewSectionReader(bytes.NewReader(joined), 0, int64(len(joined)))
}

// TestSpeculationIsTakenByTheSameRequest: a request sent ahead from kept
// JSON and the messages after it is the request the Stream that follows
// builds from all the messages, byte for byte: the server sees it once,
// and the Stream returns its answer with every delta.
func TestSpeculationIsTakenByTheSameRequest(t *testing.T) {
	srv := modeltest.NewAnthropic(func(*modeltest.Request) modeltest.Turn { return modeltest.Turn{Text: "sunny all week"} })
	defer srv.Close()
	p := newProvider(srv)
	msgs, prefix := conversation(t, p, 12)
	before := srv.Count()
	memo := &model.Memo{}
	req := func(msgs []model.Message) *model.Request {
		return &model.Request{Model: testModel, System: "Be terse.", Tools: []model.ToolDef{weatherTool}, Messages: msgs, Memo: memo}
	}
	cancel, err := p.Speculate(t.Context(), req(msgs[12:]), prefix)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	var text strings.Builder
	resp, err := p.Stream(t.Context(), req(msgs), func(d model.Delta) { text.WriteString(d.Text) })
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.Count() - before; got != 1 {
		t.Fatalf("the server saw %d requests, want the speculation's alone", got)
	}
	if resp.Message.TextOf() != "sunny all week" || text.String() != "sunny all week" {
		t.Fatalf("answer %q, deltas %q", resp.Message.TextOf(), text.String())
	}
	if hits, misses := p.Speculations(); hits != 1 || misses != 0 {
		t.Fatalf("speculations: %d taken, %d abandoned", hits, misses)
	}
	// What was sent is what a Stream without any of this sends.
	if _, err := p.Stream(t.Context(), &model.Request{Model: testModel, System: "Be terse.", Tools: []model.ToolDef{weatherTool}, Messages: msgs}, nil); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if spec, plain := reqs[len(reqs)-2].Body, reqs[len(reqs)-1].Body; !bytes.Equal(spec, plain) {
		t.Fatalf("speculation sent\n%s\na plain Stream sends\n%s", spec, plain)
	}
	// The memo was filled as by any Stream: the next call encodes only what is new.
	if kept, ok := p.Kept(memo, len(msgs)-1); !ok || len(kept) != len(msgs)-1 {
		t.Fatalf("the memo keeps %d messages after a taken speculation", len(kept))
	}
}

// TestSpeculationOfAnotherRequestIsAbandoned: when the Stream builds a
// different request, the speculation is cancelled and the Stream sends
// its own; a cancelled speculation is taken by no Stream.
func TestSpeculationOfAnotherRequestIsAbandoned(t *testing.T) {
	srv := modeltest.NewAnthropic(func(r *modeltest.Request) modeltest.Turn {
		return modeltest.Turn{Text: strings.Repeat("m", len(r.Messages))}
	})
	defer srv.Close()
	p := newProvider(srv)
	msgs, prefix := conversation(t, p, 12)
	memo := &model.Memo{}
	req := func(msgs []model.Message) *model.Request {
		return &model.Request{Model: testModel, System: "Be terse.", Messages: msgs, Memo: memo}
	}
	before := srv.Count()
	cancel, err := p.Speculate(t.Context(), req(msgs[13:]), prefix) // one message short
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Stream(t.Context(), req(msgs), nil)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Repeat("m", len(msgs)); resp.Message.TextOf() != want {
		t.Fatalf("answer %q, want the answer to the whole conversation %q", resp.Message.TextOf(), want)
	}
	if hits, misses := p.Speculations(); hits != 0 || misses != 1 {
		t.Fatalf("speculations: %d taken, %d abandoned; want 0 and 1", hits, misses)
	}
	if got := srv.Count() - before; got > 2 {
		t.Fatalf("the server saw %d requests", got)
	}

	cancel, err = p.Speculate(t.Context(), req(msgs[12:]), prefix)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := p.Stream(t.Context(), req(msgs), nil); err != nil {
		t.Fatal(err)
	}
	if hits, misses := p.Speculations(); hits != 0 || misses != 1 {
		t.Fatalf("a cancelled speculation was taken: %d taken, %d abandoned", hits, misses)
	}
}
