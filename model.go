package flower

import (
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/flower-run/flower/config"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/model/anthropic"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/model/openai"
	"github.com/flower-run/flower/resilience"
)

// DefaultModel is the model used when none is named.
const DefaultModel = "claude-sonnet-4-6"

// openAIBase is the OpenAI API's own address.
const openAIBase = "https://api.openai.com/v1"

// Backend is the model API chosen for a model name.
type Backend struct {
	Provider model.Provider
	Model    string // the name sent to the API
	BaseURL  string // what the offline probe checks (R4.1)
	release  func() // stops what was started for it (the demo server)
}

// ChooseBackend picks the model API for a model name: "" is
// $FLOWER_MODEL, else DefaultModel; "demo" is the embedded fake model; an
// OpenAI name (gpt-..., o3..., openai/NAME) goes to OPENAI_BASE_URL; any
// other to Anthropic. A missing key is a *UsageError naming the variable.
func ChooseBackend(name string, hc *http.Client) (*Backend, error) {
	name = ModelName(name)
	switch {
	case name == "demo":
		srv := modeltest.NewDemo()
		p := anthropic.New(anthropic.Config{APIKey: "demo", BaseURL: srv.URL, HTTPClient: hc})
		return &Backend{p, "demo", srv.URL, srv.Close}, nil
	case isOpenAI(name):
		return openAI(strings.TrimPrefix(name, "openai/"), hc)
	}
	key := os.Getenv("ANTHROPIC_API_KEY")
	if key == "" {
		return nil, usage("ANTHROPIC_API_KEY is not set: export it (or OPENAI_API_KEY with --model gpt-4o), or try --model demo to run offline")
	}
	base := os.Getenv("ANTHROPIC_BASE_URL")
	p := anthropic.New(anthropic.Config{APIKey: key, BaseURL: base, HTTPClient: hc})
	if base == "" {
		base = resilience.DefaultBaseURL
	}
	return &Backend{p, name, base, func() {}}, nil
}

// ModelName is the model a name means: itself, else $FLOWER_MODEL, else
// DefaultModel.
func ModelName(name string) string {
	if name == "" {
		name = os.Getenv("FLOWER_MODEL")
	}
	if name == "" {
		name = DefaultModel
	}
	return name
}

func isOpenAI(name string) bool {
	for _, p := range []string{"openai/", "gpt-", "o1", "o3", "o4", "chatgpt-"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func openAI(name string, hc *http.Client) (*Backend, error) {
	key, base := os.Getenv("OPENAI_API_KEY"), os.Getenv("OPENAI_BASE_URL")
	if key == "" && base == "" {
		return nil, usage("OPENAI_API_KEY is not set: export it, or set OPENAI_BASE_URL for a local server, or try --model demo to run offline")
	}
	if key == "" {
		key = "none" // local servers (ollama, vLLM, llama.cpp) take any key
	}
	p := openai.New(openai.Config{APIKey: key, BaseURL: base, HTTPClient: hc})
	if base == "" {
		base = openAIBase
	}
	return &Backend{p, name, base, func() {}}, nil
}

// Retrier waits out failures of this backend, probing its endpoint.
func (b *Backend) Retrier() resilience.Retrier {
	return resilience.Retrier{Probe: resilience.EndpointProbe(b.BaseURL, 5*time.Second), URL: b.BaseURL}
}

// Describe names the model and who serves it, for a banner (issue 11):
// "model claude-sonnet-4-6 · Anthropic", "model llama3.1 ·
// OpenAI-compatible at http://localhost:11434/v1", "model demo · offline
// fake model".
func (b *Backend) Describe() string {
	switch b.Provider.(type) {
	case *anthropic.Provider:
		if b.Model == "demo" {
			return "model demo · offline fake model"
		}
		if b.BaseURL != resilience.DefaultBaseURL {
			return "model " + b.Model + " · Anthropic API at " + b.BaseURL
		}
		return "model " + b.Model + " · Anthropic"
	case *openai.Provider:
		if b.BaseURL != openAIBase {
			return "model " + b.Model + " · OpenAI-compatible at " + b.BaseURL
		}
		return "model " + b.Model + " · OpenAI"
	}
	return "model " + b.Model
}

// Close stops what was started for the backend (the demo's server).
func (b *Backend) Close() { b.release() }

// ModelClient is the HTTP client of model calls: it cuts a silent server
// (a stall), which the retrier then retries. idle, when not zero, wins
// over flower.yaml's model.idle_timeout.
func ModelClient(cfg config.Config, idle time.Duration) *http.Client {
	if idle <= 0 {
		idle = cfg.Model.Idle()
	}
	return model.NewHTTPClient(cfg.Model.FirstByte(), idle)
}
