package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/flower-run/flower/config"
	"github.com/flower-run/flower/tool"
)

// dedupServer is a Go SDK server on loopback whose "charge" tool dedupes by
// the idempotency key flower sends, and which requires a bearer token.
type dedupServer struct {
	srv     *sdk.Server
	mu      sync.Mutex // guards charged and auth
	charged map[string]int
	auth    []string
}

func newDedupServer(t testing.TB) (*dedupServer, string) {
	d := &dedupServer{charged: map[string]int{}}
	d.srv = sdk.NewServer(&sdk.Implementation{Name: "dedup", Version: "1"}, nil)
	d.srv.AddTool(&sdk.Tool{Name: "charge", Description: "Charges a card once per key.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"cents": map[string]any{"type": "integer"}}}},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			key, _ := req.Params.Meta[IdempotencyKey].(string)
			d.mu.Lock()
			d.charged[key]++
			n := d.charged[key]
			d.mu.Unlock()
			text := "charged " + string(req.Params.Arguments) + " key " + key
			if n > 1 {
				text = "already charged under key " + key
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		d.mu.Lock()
		d.auth = append(d.auth, r.Header.Get("Authorization"))
		d.mu.Unlock()
		return d.srv
	}, nil)
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return d, hs.URL
}

func TestHTTPServerIdempotencyKeyAndHeaders(t *testing.T) { // issue 13
	d, url := newDedupServer(t)
	cfg := Server{Name: "pay", Type: "http", URL: url, Headers: map[string]string{"Authorization": "Bearer ${SECRET_TOKEN}"},
		Class: map[string]config.OpClass{"charge": config.ClassEffect}}
	set, reg, rep := startSet(t, t.TempDir(), cfg)
	if got := rep.all(); len(got) != 1 || got[0] != "mcp: pay 1 tools" {
		t.Errorf("reported %q", got)
	}
	charge := reg["mcp__pay__charge"]
	if charge == nil || charge.Class() != tool.Effect || tool.IsIdempotent(charge) {
		t.Fatalf("charge: %v", charge)
	}
	first := call(t, charge, "toolu_A", `{"cents":100}`)
	again := call(t, charge, "toolu_A", `{"cents":100}`) // the same op run again after a crash
	other := call(t, charge, "toolu_B", `{"cents":100}`)
	if first.Content != `charged {"cents":100} key toolu_A` || again.Content != "already charged under key toolu_A" ||
		!strings.HasPrefix(other.Content, "charged") {
		t.Errorf("results %q, %q, %q", first.Content, again.Content, other.Content)
	}
	d.mu.Lock()
	auth := append([]string(nil), d.auth...)
	d.mu.Unlock()
	if len(auth) == 0 || auth[0] != "Bearer s3cret" {
		t.Errorf("Authorization headers seen: %q", auth)
	}

	// A new tool on the server: the list changed notification reaches the
	// next Tools call.
	srv := set.servers[0]
	changed := make(chan struct{}, 1)
	srv.mu.Lock()
	srv.changed = changed
	srv.mu.Unlock()
	d.srv.AddTool(&sdk.Tool{Name: "refund", InputSchema: map[string]any{"type": "object"},
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "refunded"}}}, nil
		})
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("no tools/list_changed notification")
	}
	reg = tool.NewRegistry(set.Tools(context.Background())...)
	if reg["mcp__pay__refund"] == nil {
		t.Fatalf("the new tool is not offered: %v", reg.Names())
	}
	if reg["mcp__pay__refund"].Class() != tool.Pure {
		t.Error("refund has readOnlyHint: want pure")
	}
}

func TestMissingEnvVarIsOneLine(t *testing.T) {
	_, _, rep := startSet(t, t.TempDir(), Server{Name: "pay", Type: "http", URL: "http://127.0.0.1:1/mcp",
		Headers: map[string]string{"Authorization": "Bearer ${NOT_SET_ANYWHERE_XYZ}"}})
	got := rep.all()
	if len(got) != 1 || !strings.Contains(got[0], "header Authorization: environment variable NOT_SET_ANYWHERE_XYZ is not set") {
		t.Errorf("reported %q", got)
	}
}

// TestHTTPServerGoneIsReconnected: a Streamable HTTP server that stops
// answering loses its session; after the backoff the next use reconnects.
func TestHTTPServerGoneIsReconnected(t *testing.T) {
	d, _ := newDedupServer(t)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return d.srv }, nil)
	var down atomic.Bool
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "gone", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer hs.Close()
	var mu sync.Mutex
	now := time.Unix(1000, 0)
	rep := &lines{}
	set := New([]Server{{Name: "pay", Type: "http", URL: hs.URL}}, Options{Report: rep.add,
		Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }})
	defer set.Close()
	reg := tool.NewRegistry(set.Tools(context.Background())...)
	down.Store(true)
	if res := call(t, reg["mcp__pay__charge"], "toolu_1", `{"cents":1}`); !res.IsError || !strings.Contains(res.Content, "went down during the call") {
		t.Errorf("a call to a gone server: %+v", res)
	}
	down.Store(false)
	mu.Lock()
	now = now.Add(time.Second)
	mu.Unlock()
	reg = tool.NewRegistry(set.Tools(context.Background())...)
	if res := call(t, reg["mcp__pay__charge"], "toolu_2", `{"cents":1}`); res.IsError || !strings.HasPrefix(res.Content, "charged") {
		t.Errorf("after reconnecting: %+v", res)
	}
	if got := rep.all(); len(got) != 2 || !strings.Contains(got[1], "reconnecting at the next use") {
		t.Errorf("reported %q", got)
	}
}
