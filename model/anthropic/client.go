package anthropic

import (
	"net/http"
	"sync"
	"time"

	"github.com/flower-run/flower/model"
)

// sharedClient is the HTTP client of every Provider configured without
// one. The SDK would give each client a transport of its own (a clone of
// http.DefaultTransport with a response-header timeout), so a Provider made
// per run or per step would dial, and on the real API shake hands, anew
// each time; one transport per process keeps the connections (issue 12).
// Its settings are the SDK's default ones, but for the idle connections
// kept per host: model.MaxIdlePerHost, as model.Transport keeps them.
var sharedClient = sync.OnceValue(func() *http.Client {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t = t.Clone()
		t.ResponseHeaderTimeout = 10 * time.Minute // the SDK's default
		t.MaxIdleConnsPerHost = model.MaxIdlePerHost
		return &http.Client{Transport: t}
	}
	return &http.Client{Transport: http.DefaultTransport} // replaced by a wrapper: keep it
})
