package anthropic

import (
	"context"
	"net/http/httptrace"
	"testing"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/model/modeltest"
)

// TestProvidersShareConnections: a Provider made after another one, as a
// runtime per run or per step makes them, sends its request over the
// connection the first one opened (issue 12; client.go).
func TestProvidersShareConnections(t *testing.T) {
	srv := modeltest.NewAnthropic(func(*modeltest.Request) modeltest.Turn { return modeltest.Turn{Text: "hi"} })
	defer srv.Close()
	var reused []bool
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { reused = append(reused, info.Reused) },
	})
	req := &model.Request{Model: testModel, Messages: []model.Message{userText("hello")}}
	for range 2 {
		if _, err := newProvider(srv).Stream(ctx, req, nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(reused) != 2 || !reused[1] {
		t.Fatalf("connections reused %v, want the second request on the first's connection", reused)
	}
}
