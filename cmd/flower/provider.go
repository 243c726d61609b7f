package main

import (
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/model/anthropic"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/model/openai"
	"github.com/flower-run/flower/resilience"
)

const defaultModel = "claude-sonnet-4-6"

// backend is the model API chosen for a model name.
type backend struct {
	provider model.Provider
	model    string // the name to send
	baseURL  string // what the offline probe checks (R4.1)
	release  func() // stops what was started for it (the demo server)
}

// retrier waits out failures of this backend, probing its endpoint.
func (b backend) retrier() resilience.Retrier {
	return resilience.Retrier{Probe: resilience.EndpointProbe(b.baseURL, 5*time.Second)}
}

// chooseBackend picks the model API for a model name.
func chooseBackend(name string, hc *http.Client) (backend, error) {
	if name == "" {
		name = os.Getenv("FLOWER_MODEL")
	}
	if name == "" {
		name = defaultModel
	}
	switch {
	case name == "demo":
		srv := modeltest.NewDemo()
		p := anthropic.New(anthropic.Config{APIKey: "demo", BaseURL: srv.URL, HTTPClient: hc})
		return backend{p, "demo", srv.URL, srv.Close}, nil
	case isOpenAI(name):
		return openAI(strings.TrimPrefix(name, "openai/"), hc)
	}
	key := os.Getenv("ANTHROPIC_API_KEY")
	if key == "" {
		return backend{}, usageErr("ANTHROPIC_API_KEY is not set: export it (or OPENAI_API_KEY with --model gpt-4o), or try --model demo to run offline")
	}
	base := os.Getenv("ANTHROPIC_BASE_URL")
	p := anthropic.New(anthropic.Config{APIKey: key, BaseURL: base, HTTPClient: hc})
	if base == "" {
		base = resilience.DefaultBaseURL
	}
	return backend{p, name, base, func() {}}, nil
}

func isOpenAI(name string) bool {
	for _, p := range []string{"openai/", "gpt-", "o1", "o3", "o4", "chatgpt-"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func openAI(name string, hc *http.Client) (backend, error) {
	key, base := os.Getenv("OPENAI_API_KEY"), os.Getenv("OPENAI_BASE_URL")
	if key == "" && base == "" {
		return backend{}, usageErr("OPENAI_API_KEY is not set: export it, or set OPENAI_BASE_URL for a local server, or try --model demo to run offline")
	}
	if key == "" {
		key = "none" // local servers (ollama, vLLM, llama.cpp) take any key
	}
	p := openai.New(openai.Config{APIKey: key, BaseURL: base, HTTPClient: hc})
	if base == "" {
		base = "https://api.openai.com/v1"
	}
	return backend{p, name, base, func() {}}, nil
}
