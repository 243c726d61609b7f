package flower

import "testing"

// TestTaskLine: a step prompt's heading is skipped for the task itself;
// a plain prompt is its first line (issue 23).
func TestTaskLine(t *testing.T) {
	for prompt, want := range map[string]string{
		"The task, in the person's words:\n\nwrite a greeting file\nin French\n\nClarify it ...": "write a greeting file",
		"say hello":                   "say hello",
		"fix the bug\n\nmore detail":  "fix the bug",
		"Note:\n\n":                   "Note:",
		"":                            "",
		"Goals:\n- one\n\nwrite them": "Goals:",
	} {
		if got := TaskLine(prompt); got != want {
			t.Errorf("TaskLine(%q) = %q, want %q", prompt, got, want)
		}
	}
}
