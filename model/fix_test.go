package model_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/flower-run/flower/model"
)

// TestFix: an API error retrying cannot cure names what to change, found
// through any wrapping; other errors get nothing (issue 23).
func TestFix(t *testing.T) {
	wrap := func(e *model.APIError) error { return fmt.Errorf("step work failed: %w", e) }
	for _, tt := range []struct {
		err  error
		want string
	}{
		{wrap(&model.APIError{Provider: "anthropic", Status: 401}), "ANTHROPIC_API_KEY"},
		{wrap(&model.APIError{Provider: "openai", Status: 401}), "OPENAI_API_KEY"},
		{wrap(&model.APIError{Provider: "openai", Status: 403}), "permissions"},
		{wrap(&model.APIError{Provider: "anthropic", Status: 404}), "--model"},
		{wrap(&model.APIError{Provider: "anthropic", Status: 529}), ""},
		{errors.New("anthropic: 401 authentication_error"), ""},
		{nil, ""},
	} {
		got := model.Fix(tt.err)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("Fix(%v) = %q, want it to contain %q", tt.err, got, tt.want)
		}
	}
}
