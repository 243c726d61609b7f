package config

import (
	"strings"
	"testing"
)

func TestEnvKey(t *testing.T) {
	cfg, err := Parse("flower.yaml", []byte("env:\n  allow: [GOFLAGS, \"NODE_*\"]\n  set: {NODE_ENV: test}\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.Env.Policy().Environ([]string{"GOFLAGS=-x", "NODE_OPTIONS=--y", "NODE_AUTH_TOKEN=secret", "OTHER=z"})
	if strings.Join(got, " ") != "GOFLAGS=-x NODE_OPTIONS=--y NODE_ENV=test" {
		t.Errorf("environ = %v", got)
	}
	for _, bad := range []struct{ yaml, want string }{
		{"env: {allow: [GITHUB_TOKEN]}", "env.allow[0]: GITHUB_TOKEN is never passed"},
		{"env: {allow: [FLOWER_STORE]}", "FLOWER_STORE is never passed"},
		{"env: {allow: [\"[\"]}", "not a variable name or glob"},
		{"env: {set: {DB_PASSWORD: x}}", "env.set.DB_PASSWORD: DB_PASSWORD is never passed"},
		{"env: {set: {DATABASE: \"postgres://u:p@h/d\"}}", "is never passed"},
		{"env: {set: {\"A B\": x}}", "not a variable name"},
	} {
		_, err := Parse("flower.yaml", []byte(bad.yaml))
		if err == nil || !strings.Contains(err.Error(), bad.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", bad.yaml, err, bad.want)
		}
	}
}
