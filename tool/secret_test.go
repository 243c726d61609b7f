package tool

import "testing"

func TestSecretsRedactExactValues(t *testing.T) {
	s := NewSecrets("sk-ant-0123456789", "", "none", "sk-ant-0123456789-long-variant", "tok-abcdefgh")
	cases := []struct{ in, want string }{
		{"ANTHROPIC_API_KEY=sk-ant-0123456789\n", "ANTHROPIC_API_KEY=[redacted]\n"},
		{"x sk-ant-0123456789-long-variant y", "x [redacted] y"},
		{"FLOWER_TOKEN=tok-abcdefgh\x00HOME=/root", "FLOWER_TOKEN=[redacted]\x00HOME=/root"},
		{"none of these", "none of these"},
	}
	for _, c := range cases {
		if got := s.Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	var none *Secrets
	if got := none.Redact("sk-ant-0123456789"); got != "sk-ant-0123456789" {
		t.Errorf("nil Secrets redacted: %q", got)
	}
}
