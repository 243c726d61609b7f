package anthropic

import (
	"bytes"
	"testing"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/model/modeltest"
)

// TestMemoSendsWhatAFreshConversionSends grows a conversation over calls
// with a Memo, rewrites its middle once and shortens it once, and wants
// every request body byte for byte equal to the one a conversion from
// nothing sends, with the cache breakpoint only on the last block.
func TestMemoSendsWhatAFreshConversionSends(t *testing.T) {
	srv := modeltest.NewAnthropic(func(*modeltest.Request) modeltest.Turn { return modeltest.Turn{Text: "ok"} })
	defer srv.Close()
	p := newProvider(srv)
	memo := &model.Memo{}
	for i, m := range modeltest.MemoSteps() {
		for _, memo := range []*model.Memo{memo, nil} {
			req := &model.Request{Model: testModel, System: "Be terse.", Tools: []model.ToolDef{weatherTool}, Messages: m, Memo: memo}
			if _, err := p.Stream(t.Context(), req, nil); err != nil {
				t.Fatal(err)
			}
		}
		reqs := srv.Requests()
		with, without := reqs[len(reqs)-2], reqs[len(reqs)-1]
		if !bytes.Equal(with.Body, without.Body) {
			t.Fatalf("step %d: with a memo\n%s\nwithout\n%s", i, with.Body, without.Body)
		}
		body, _ := decodeBody(t, with)
		checkCacheMarks(t, body, true, false)
	}
}
