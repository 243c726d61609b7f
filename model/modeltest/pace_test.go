package modeltest_test

import (
	"context"
	"testing"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/model/anthropic"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/model/openai"
)

// Pace holds a stream between deltas: the client has the text so far and
// no response yet, over both wire formats and the real SDKs (issue 11).
func TestPaceHoldsTheStreamBetweenDeltas(t *testing.T) {
	for name, start := range map[string]func(modeltest.Responder) (*modeltest.Server, model.Provider){
		"anthropic": func(r modeltest.Responder) (*modeltest.Server, model.Provider) {
			s := modeltest.NewAnthropic(r)
			return s, anthropic.New(anthropic.Config{APIKey: "k", BaseURL: s.URL})
		},
		"openai": func(r modeltest.Responder) (*modeltest.Server, model.Provider) {
			s := modeltest.NewOpenAI(r)
			return s, openai.New(openai.Config{APIKey: "k", BaseURL: s.URL + "/v1"})
		},
	} {
		t.Run(name, func(t *testing.T) {
			held, release := make(chan struct{}), make(chan struct{})
			srv, p := start(modeltest.Script(modeltest.Turn{Text: "Hello there, streaming world.",
				Pace: func(ctx context.Context, n int) {
					if n == 1 {
						close(held)
						select {
						case <-release:
						case <-ctx.Done():
						}
					}
				}}))
			defer srv.Close()
			got := make(chan string, 64)
			done := make(chan *model.Response, 1)
			go func() {
				resp, err := p.Stream(context.Background(), &model.Request{Model: "m", Messages: []model.Message{
					{Role: model.User, Content: []model.Block{&model.Text{Text: "hi"}}}}}, func(d model.Delta) { got <- d.Text })
				if err != nil {
					t.Error(err)
				}
				done <- resp
			}()
			<-held
			first := <-got // the first delta reached the client while the stream is held
			select {
			case <-done:
				t.Fatal("the response completed while the stream was held")
			default:
			}
			close(release)
			resp := <-done
			if resp == nil || first == "" || resp.Message.TextOf() != "Hello there, streaming world." {
				t.Fatalf("first delta %q, response %+v", first, resp)
			}
		})
	}
}
