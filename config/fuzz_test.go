package config

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the parser: it must never panic,
// an error must be a one-line *Error naming the file, and a success must
// hold only valid policies.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		full, "", "~", "resume:\n", "resume: {default: skip}\n---\nx: 1\n",
		"resume:\n  per_step:\n    publish: dicard\n",
		"resume:\n  <<: {default: }\n", "x: &a [*a]\n",
		"resume:\n  per_step: {[a]: skip}\n", "\tresume: x\n",
		"resume:\n  per_step:\n    ? publish\n    : discard\n",
		"resume: !!map {default: !!str skip}\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse("flower.yaml", data)
		if err != nil {
			checkError(t, err)
			return
		}
		checkConfig(t, cfg)
	})
}

func checkError(t *testing.T, err error) {
	t.Helper()
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("error is %T, want *Error: %v", err, err)
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\r\n") {
		t.Fatalf("error spans lines: %q", msg)
	}
	if !strings.HasPrefix(msg, "flower.yaml") {
		t.Fatalf("error does not name the file: %q", msg)
	}
}

func checkConfig(t *testing.T, cfg Config) {
	t.Helper()
	if !cfg.Resume.Default.Valid() {
		t.Fatalf("default %q is not a policy", cfg.Resume.Default)
	}
	for _, m := range []map[string]Policy{cfg.Resume.PerStep, cfg.Resume.PerTool} {
		for k, p := range m {
			if !p.Valid() {
				t.Fatalf("entry %q has policy %q", k, p)
			}
		}
	}
	switch p := cfg.PolicyFor("publish", "Bash"); p {
	case Retry, Skip, Discard:
	default:
		t.Fatalf("PolicyFor = %q, not an effective policy", p)
	}
}
