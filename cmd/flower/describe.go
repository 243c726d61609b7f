package main

import (
	"github.com/flower-run/flower/model/anthropic"
	"github.com/flower-run/flower/model/openai"
	"github.com/flower-run/flower/resilience"
)

// describe names the model and who serves it, for the banner (issue 11):
// "claude-sonnet-4-6 · Anthropic", "llama3.1 · OpenAI-compatible at
// http://localhost:11434/v1", "demo · offline fake model".
func (b backend) describe() string {
	switch b.provider.(type) {
	case *anthropic.Provider:
		if b.model == "demo" {
			return "model demo · offline fake model"
		}
		if b.baseURL != resilience.DefaultBaseURL {
			return "model " + b.model + " · Anthropic API at " + b.baseURL
		}
		return "model " + b.model + " · Anthropic"
	case *openai.Provider:
		if b.baseURL != "https://api.openai.com/v1" {
			return "model " + b.model + " · OpenAI-compatible at " + b.baseURL
		}
		return "model " + b.model + " · OpenAI"
	}
	return "model " + b.model
}
