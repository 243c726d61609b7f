package main

import (
	"os"
	"strings"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/model/anthropic"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/model/openai"
)

const defaultModel = "claude-sonnet-4-6"

// provider picks the model API for a model name and returns the provider,
// the model name to send, and a function releasing what it started.
func provider(name string) (model.Provider, string, func(), error) {
	if name == "" {
		name = os.Getenv("FLOWER_MODEL")
	}
	if name == "" {
		name = defaultModel
	}
	switch {
	case name == "demo":
		srv := modeltest.NewDemo()
		p := anthropic.New(anthropic.Config{APIKey: "demo", BaseURL: srv.URL})
		return p, "demo", srv.Close, nil
	case isOpenAI(name):
		return openAI(strings.TrimPrefix(name, "openai/"))
	default:
		key := os.Getenv("ANTHROPIC_API_KEY")
		if key == "" {
			return nil, "", nil, usageErr("ANTHROPIC_API_KEY is not set: export it (or OPENAI_API_KEY with --model gpt-4o), or try --model demo to run offline")
		}
		return anthropic.New(anthropic.Config{APIKey: key, BaseURL: os.Getenv("ANTHROPIC_BASE_URL")}), name, func() {}, nil
	}
}

func isOpenAI(name string) bool {
	for _, p := range []string{"openai/", "gpt-", "o1", "o3", "o4", "chatgpt-"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func openAI(name string) (model.Provider, string, func(), error) {
	key, base := os.Getenv("OPENAI_API_KEY"), os.Getenv("OPENAI_BASE_URL")
	if key == "" && base == "" {
		return nil, "", nil, usageErr("OPENAI_API_KEY is not set: export it, or set OPENAI_BASE_URL for a local server, or try --model demo to run offline")
	}
	if key == "" {
		key = "none" // local servers (ollama, vLLM, llama.cpp) take any key
	}
	return openai.New(openai.Config{APIKey: key, BaseURL: base}), name, func() {}, nil
}
