package tool

import (
	"slices"
	"testing"
)

func TestWithheld(t *testing.T) {
	for _, kv := range [][2]string{
		{"GITHUB_TOKEN", "x"}, {"MY_SERVICE_PASSWORD", "x"}, {"AWS_SECRET_ACCESS_KEY", "x"}, {"api_key", "x"},
		{"FLOWER_STORE", "sqlite:x"}, {"FLOWER_MODEL", "m"}, {"ANTHROPIC_BASE_URL", "http://h"}, {"OPENAI_BASE_URL", "http://h"},
		{"PGPASSWORD", "x"}, {"DATABASE_URL", "postgres://u:p@h/d"}, {"REDIS", "redis://:p@h"},
	} {
		if !Withheld(kv[0], kv[1]) {
			t.Errorf("%s=%s is passed", kv[0], kv[1])
		}
	}
	for _, kv := range [][2]string{{"PATH", "/bin"}, {"DOCS_URL", "https://u@go.dev/doc"}, {"GOFLAGS", "-mod=mod"}} {
		if Withheld(kv[0], kv[1]) {
			t.Errorf("%s=%s is withheld", kv[0], kv[1])
		}
	}
}

func TestHeldSecrets(t *testing.T) {
	names, values := HeldSecrets([]string{"FLOWER_STORE=postgres://flower:s3cretpw@db/x", "FLOWER_MODEL=claude-sonnet", "GITHUB_TOKEN=ghp_abc", "PATH=/bin", "DATABASE_URL=postgres://a:b@h/d"})
	if !slices.Equal(names, []string{"FLOWER_STORE", "GITHUB_TOKEN", "DATABASE_URL"}) {
		t.Errorf("names %v", names)
	}
	if !slices.Contains(values, "s3cretpw") || !slices.Contains(values, "postgres://flower:s3cretpw@db/x") || slices.Contains(values, "claude-sonnet") {
		t.Errorf("values %v", values)
	}
}
