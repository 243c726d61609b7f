package model_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/model/anthropic"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/model/openai"
	"github.com/flower-run/flower/resilience"
)

// A server that accepts and never answers, or whose stream stops, is cut
// by the watchdog with a StallError, which resilience retries (issue 10).
// The timeouts are short real ones: the test waits on the call, not on a
// sleep.
func TestWatchdogCutsASilentServer(t *testing.T) {
	for _, stall := range []modeltest.Fault{{Stall: true}, {StallAfterStart: true}} {
		for _, p := range []string{"anthropic", "openai"} {
			srv := modeltest.NewAnthropic(func(*modeltest.Request) modeltest.Turn { f := stall; return modeltest.Turn{Fault: &f} })
			hc := model.NewHTTPClient(300*time.Millisecond, 300*time.Millisecond)
			var prov model.Provider = anthropic.New(anthropic.Config{APIKey: "k", BaseURL: srv.URL, HTTPClient: hc})
			if p == "openai" {
				srv.Close()
				srv = modeltest.NewOpenAI(func(*modeltest.Request) modeltest.Turn { f := stall; return modeltest.Turn{Fault: &f} })
				prov = openai.New(openai.Config{APIKey: "k", BaseURL: srv.OpenAIBaseURL(), HTTPClient: hc})
			}
			start := time.Now()
			_, err := prov.Stream(context.Background(), &model.Request{Model: "m", MaxTokens: 10,
				Messages: []model.Message{{Role: model.User, Content: []model.Block{&model.Text{Text: "hi"}}}}}, func(model.Delta) {})
			var s *model.StallError
			if !errors.As(err, &s) {
				t.Errorf("%s %+v: error %v, want a StallError", p, stall, err)
			} else if c := resilience.ClassifyErr(err); c != resilience.Transient {
				t.Errorf("%s %+v: classified %v, want transient", p, stall, c)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("%s %+v: cut after %s", p, stall, d)
			}
			srv.Close()
		}
	}
}
