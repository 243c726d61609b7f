package tool

import (
	"slices"
	"strings"
)

// SecretEnv names environment variables Bash removes before running a
// command: flower's credentials never reach a tool (SPEC §8), and so never
// its output, which is stored.
var SecretEnv = []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_AUTH_TOKEN", "FLOWER_TOKEN"}

// Redacted replaces a secret's value wherever flower writes or sends text.
const Redacted = "[redacted]"

// minSecret is the shortest value treated as a secret: redacting "none"
// or "k" would garble ordinary text, and a key that short protects nothing.
const minSecret = 8

// Secrets scrubs the exact values of the secrets flower knows (its API
// keys, the serve token, the variables flower.yaml lists) from text before
// it is stored, shown or sent (issue 10). Clearing the variables from a
// tool's environment is not enough: Bash can read flower's own from
// /proc/<pid>/environ. A nil *Secrets redacts nothing.
type Secrets struct {
	r *strings.Replacer // nil: nothing to redact
}

// NewSecrets builds the redactor of values; empty and short ones are
// ignored.
func NewSecrets(values ...string) *Secrets {
	var vs []string
	for _, v := range values {
		if len(strings.TrimSpace(v)) >= minSecret && !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	// Longest first: a secret containing another is replaced whole.
	slices.SortFunc(vs, func(a, b string) int { return len(b) - len(a) })
	s := &Secrets{}
	if len(vs) > 0 {
		pairs := make([]string, 0, 2*len(vs))
		for _, v := range vs {
			pairs = append(pairs, v, Redacted)
		}
		s.r = strings.NewReplacer(pairs...)
	}
	return s
}

// Redact returns text with every secret value replaced by [redacted].
func (s *Secrets) Redact(text string) string {
	if s == nil || s.r == nil {
		return text
	}
	return s.r.Replace(text)
}

// SecretValues are the values of the variables named by SecretEnv and
// extra, read with getenv.
func SecretValues(getenv func(string) string, extra ...string) []string {
	var out []string
	for _, name := range append(slices.Clone(SecretEnv), extra...) {
		if v := getenv(name); v != "" {
			out = append(out, v)
		}
	}
	return out
}
