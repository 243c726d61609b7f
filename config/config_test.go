package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/google/go-cmp/cmp"
)

const full = `# flower.yaml
resume:
  default: skip
  per_step:
    publish: discard
    lint: prompt
  per_tool:
    Bash: retry
`

func TestParseValid(t *testing.T) {
	tests := []struct {
		name string
		data string
		want Config
	}{
		{"full", full, Config{Resume: Resume{
			Default: Skip,
			PerStep: map[string]Policy{"publish": Discard, "lint": Prompt},
			PerTool: map[string]Policy{"Bash": Retry},
		}}},
		{"per_tool only keeps the default", "resume:\n  per_tool:\n    Write: skip\n",
			Config{Resume: Resume{Default: Retry, PerTool: map[string]Policy{"Write": Skip}}}},
		{"default only", "resume:\n  default: discard\n", Config{Resume: Resume{Default: Discard}}},
		{"empty", "", Defaults()},
		{"comments only", "# nothing yet\n", Defaults()},
		{"bare null", "~\n", Defaults()},
		{"resume with no value", "resume:\n", Defaults()},
		{"empty maps", "resume:\n  per_step: {}\n  per_tool:\n", Config{Resume: Resume{
			Default: Retry, PerStep: map[string]Policy{},
		}}},
		{"flow style", "resume: {default: skip, per_step: {publish: discard}}\n", Config{Resume: Resume{
			Default: Skip, PerStep: map[string]Policy{"publish": Discard},
		}}},
		{"quoted values", "resume:\n  default: \"skip\"\n  per_tool: {'Bash': 'discard'}\n", Config{Resume: Resume{
			Default: Skip, PerTool: map[string]Policy{"Bash": Discard},
		}}},
		{"explicit map key", "resume:\n  per_step:\n    ? publish\n    : discard\n", Config{Resume: Resume{
			Default: Retry, PerStep: map[string]Policy{"publish": Discard},
		}}},
		{"YAML directive", "%YAML 1.2\n---\nresume: {default: skip}\n", Config{Resume: Resume{Default: Skip}}},
		{"step names are free text", "resume:\n  per_step:\n    \"deploy.prod\": discard\n    3: skip\n", Config{Resume: Resume{
			Default: Retry, PerStep: map[string]Policy{"deploy.prod": Discard, "3": Skip},
		}}},
		{"document markers", "---\nresume:\n  default: skip\n...\n", Config{Resume: Resume{Default: Skip}}},
		{"trailing empty document", "resume: {default: skip}\n---\n", Config{Resume: Resume{Default: Skip}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse("flower.yaml", []byte(tt.data))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseErrors pins every kind of error to its exact one-line message:
// file:line:col, the field at fault, what is wrong and the fix.
func TestParseErrors(t *testing.T) {
	const policies = "(use retry, skip, discard or prompt)"
	tests := []struct {
		name string
		data string
		want string
	}{
		{"unknown policy", "resume:\n  per_step:\n    publish: dicard\n",
			`flower.yaml:3:14: resume.per_step.publish: unknown policy "dicard" ` + policies},
		{"policy is case sensitive", "resume:\n  default: Retry\n",
			`flower.yaml:2:12: resume.default: unknown policy "Retry" ` + policies},
		{"empty string policy", "resume:\n  per_tool: {Bash: ''}\n",
			`flower.yaml:2:20: resume.per_tool.Bash: unknown policy "" ` + policies},
		{"legacy reyn name", "resume:\n  default: discard_skill\n",
			`flower.yaml:2:12: resume.default: unknown policy "discard_skill" ` + policies},
		{"missing default", "resume:\n  default:\n",
			"flower.yaml:2:3: resume.default: no policy given " + policies},
		{"missing step policy", "resume:\n  per_step:\n    publish: ~\n",
			"flower.yaml:3:5: resume.per_step.publish: no policy given " + policies},
		{"empty step name", "resume:\n  per_step:\n    ~: skip\n",
			`flower.yaml:3:5: resume.per_step."": empty name (name a step or tool, e.g. publish or Bash)`},
		{"empty tool name", "resume:\n  per_tool: {\"\": skip}\n",
			`flower.yaml:2:14: resume.per_tool."": empty name (name a step or tool, e.g. publish or Bash)`},
		{"anchor", "resume:\n  default: &safe discard\n",
			"flower.yaml:2:12: resume.default: anchors and aliases are not supported (write the value out)"},
		{"alias", "resume:\n  per_step: {publish: discard}\n  per_tool: *x\n",
			"flower.yaml:3:13: resume.per_tool: anchors and aliases are not supported (write the value out)"},
		{"tag", "resume: !!map\n  default: skip\n",
			"flower.yaml:1:9: resume: tags are not supported (remove !!map)"},
		{"keys equal once decoded", "resume:\n  per_step:\n    0x10: skip\n    16: retry\n",
			`flower.yaml:4:5: resume.per_step.16: duplicate key "16" (keep one)`},
		{"merge key", "resume:\n  <<: {default: skip}\n",
			"flower.yaml:2:3: resume: merge keys (<<) are not supported (write the keys out)"},
		{"nested too deeply", "resume:\n  per_step:\n    x: " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "\n",
			"flower.yaml:3:35: resume.per_step.x: nested far too deeply (flower.yaml needs no more than resume.per_step.<step>: <policy>)"},
		{"brackets nested absurdly", "resume: " + strings.Repeat("{a: ", 2000),
			"flower.yaml:1:4009: invalid YAML: brackets nested more than 1000 deep"},
		{"misspelt resume key", "resume:\n  per_tools:\n    Bash: retry\n",
			"flower.yaml:2:3: resume.per_tools: unknown key (use default, per_step or per_tool)"},
		{"misspelt top-level key", "resumes:\n  default: retry\n",
			"flower.yaml:1:1: resumes: unknown key (use resume, timeout, max_turns, max_asks, rounds, budget, sandbox, permissions, models, model, mcp or env)"},
		{"unknown key in a flow mapping", "resume: {default: skip, retries: 3}\n",
			"flower.yaml:1:25: resume.retries: unknown key (use default, per_step or per_tool)"},
		{"policy is a number", "resume:\n  default: 3\n",
			"flower.yaml:2:12: resume.default: got an int, want a policy " + policies},
		{"policy is a boolean", "resume:\n  per_tool:\n    Bash: true\n",
			"flower.yaml:3:11: resume.per_tool.Bash: got a boolean, want a policy " + policies},
		{"policy is a mapping", "resume:\n  per_step:\n    publish:\n      when: always\n",
			"flower.yaml:4:7: resume.per_step.publish: got a mapping, want a policy " + policies},
		{"policy is a block scalar", "resume:\n  default: |\n    retry\n",
			"flower.yaml:2:12: resume.default: got a block scalar, want a policy " + policies},
		{"per_step is a sequence", "resume:\n  per_step: [publish]\n",
			"flower.yaml:2:13: resume.per_step: got a sequence, want a mapping of step names to policies " + policies},
		{"per_tool is a string", "resume:\n  per_tool: Bash\n",
			"flower.yaml:2:13: resume.per_tool: got a string, want a mapping of tool names to policies " + policies},
		{"resume is a string", "resume: retry\n",
			"flower.yaml:1:9: resume: got a string, want a mapping with keys default, per_step or per_tool"},
		{"top level is a sequence", "- resume\n",
			"flower.yaml:1:1: got a sequence, want a mapping with a resume key"},
		{"step name quoted in the field", "resume:\n  per_step:\n    \"a.b\": dicard\n",
			`flower.yaml:3:12: resume.per_step."a.b": unknown policy "dicard" ` + policies},
		{"line break in a key stays on one line", "resume:\n  per_step:\n    \"pub\\nlish\": dicard\n",
			`flower.yaml:3:18: resume.per_step."pub\nlish": unknown policy "dicard" ` + policies},
		{"syntax", "resume:\n  per_step: [publish\n",
			"flower.yaml:2:13: invalid YAML: sequence end token ']' not found"},
		{"duplicate key", "resume:\n  default: skip\n  default: retry\n",
			`flower.yaml:3:3: invalid YAML: mapping key "default" already defined at [2:3]`},
		{"second document", "resume: {default: skip}\n---\nresume: {default: retry}\n",
			"flower.yaml:2:1: a second YAML document (keep one: remove this --- and what follows, or merge it into the first)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("flower.yaml", []byte(tt.data))
			if err == nil {
				t.Fatal("Parse succeeded, want an error")
			}
			got := err.Error()
			if got != tt.want {
				t.Errorf("error\ngot  %s\nwant %s", got, tt.want)
			}
			if strings.ContainsAny(got, "\r\n") {
				t.Errorf("error spans lines: %q", got)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error is %T, want *Error", err)
			}
			if ce.Line == 0 || ce.Column == 0 {
				t.Errorf("position %d:%d, want a line and column", ce.Line, ce.Column)
			}
		})
	}
}

// TestErrorUnwrap checks go-yaml's error stays reachable for callers that
// want more than the one-line message, e.g. yaml.FormatError's excerpt.
func TestErrorUnwrap(t *testing.T) {
	_, err := Parse("flower.yaml", []byte("resume:\n  per_tools: {}\n"))
	var unknown *yaml.UnknownFieldError
	if !errors.As(err, &unknown) {
		t.Errorf("errors.As(%v, *yaml.UnknownFieldError) = false, want true", err)
	}
	_, err = Parse("flower.yaml", []byte("a: [\n"))
	var syntax *yaml.SyntaxError
	if !errors.As(err, &syntax) {
		t.Errorf("errors.As(%v, *yaml.SyntaxError) = false, want true", err)
	}
}

func TestLoad(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // no user config.yaml
	t.Run("missing file gives defaults", func(t *testing.T) {
		got, err := Load(t.TempDir())
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		if diff := cmp.Diff(Defaults(), got); diff != "" {
			t.Errorf("Load mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("reads flower.yaml at the root", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, FileName), full)
		got, err := Load(dir)
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		if got, want := got.PolicyFor("publish", "Bash"), Discard; got != want {
			t.Errorf("PolicyFor(publish, Bash) = %q, want %q", got, want)
		}
	})
	t.Run("errors name the file's path", func(t *testing.T) {
		dir := t.TempDir()
		name := filepath.Join(dir, FileName)
		writeFile(t, name, "resume:\n  default: dicard\n")
		_, err := Load(dir)
		want := name + `:2:12: resume.default: unknown policy "dicard" (use retry, skip, discard or prompt)`
		if err == nil || err.Error() != want {
			t.Errorf("Load error\ngot  %v\nwant %s", err, want)
		}
	})
	t.Run("unreadable file is an error, not defaults", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, FileName), 0o755); err != nil {
			t.Fatal(err)
		}
		_, err := Load(dir)
		if err == nil || !strings.HasPrefix(err.Error(), "read config: ") {
			t.Errorf("Load error = %v, want a read config error", err)
		}
	})
}

func writeFile(t *testing.T, name, data string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestPolicyFor(t *testing.T) {
	cfg := Config{Resume: Resume{
		Default: Skip,
		PerStep: map[string]Policy{"publish": Discard, "lint": Prompt},
		PerTool: map[string]Policy{"Bash": Retry, "Write": Prompt, "Edit": Discard},
	}}
	tests := []struct {
		step, tool string
		want       Policy
	}{
		{"publish", "Bash", Discard}, // per_step beats per_tool
		{"publish", "Read", Discard}, // per_step beats the default
		{"build", "Bash", Retry},     // per_tool beats the default
		{"build", "Edit", Discard},
		{"build", "Read", Skip},   // neither: the default
		{"lint", "Edit", Retry},   // a per_step prompt still wins, as retry
		{"build", "Write", Retry}, // per_tool prompt is retry
		{"", "", Skip},            // no step or tool named
		{"Bash", "publish", Skip}, // step and tool names do not mix
	}
	for _, tt := range tests {
		if got := cfg.PolicyFor(tt.step, tt.tool); got != tt.want {
			t.Errorf("PolicyFor(%q, %q) = %q, want %q", tt.step, tt.tool, got, tt.want)
		}
	}
}

func TestPolicyForDefaults(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want Policy
	}{
		{"Defaults", Defaults(), Retry},
		{"zero Config", Config{}, Retry},
		{"prompt default", Config{Resume: Resume{Default: Prompt}}, Retry},
	}
	for _, tt := range tests {
		if got := tt.cfg.PolicyFor("publish", "Bash"); got != tt.want {
			t.Errorf("%s: PolicyFor = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestPolicyEffective(t *testing.T) {
	tests := []struct {
		in, want Policy
		valid    bool
	}{
		{Retry, Retry, true},
		{Skip, Skip, true},
		{Discard, Discard, true},
		{Prompt, Retry, true},
		{"", Retry, false},
	}
	for _, tt := range tests {
		if got := tt.in.Effective(); got != tt.want {
			t.Errorf("%q.Effective() = %q, want %q", tt.in, got, tt.want)
		}
		if got := tt.in.Valid(); got != tt.valid {
			t.Errorf("%q.Valid() = %v, want %v", tt.in, got, tt.valid)
		}
	}
}

// TestPoliciesAgreeWithPolicyFor: the runtime's plain resume.Policies
// decide as the Config they come from.
func TestPoliciesAgreeWithPolicyFor(t *testing.T) {
	cfg := Config{Resume: Resume{
		Default: Skip,
		PerStep: map[string]Policy{"publish": Discard, "lint": Prompt},
		PerTool: map[string]Policy{"Bash": Retry, "Write": Prompt, "Edit": Discard},
	}}
	ps := cfg.Policies()
	for _, step := range []string{"publish", "lint", "build", ""} {
		for _, tool := range []string{"Bash", "Write", "Edit", "Read", ""} {
			if got, want := string(ps.For(step, tool)), string(cfg.PolicyFor(step, tool)); got != want {
				t.Errorf("For(%q, %q) = %q, PolicyFor says %q", step, tool, got, want)
			}
		}
	}
	if got := string(Config{}.Policies().For("x", "y")); got != string(Retry) {
		t.Errorf("zero Config: %q", got)
	}
}

// Issue 10's keys: read when valid, refused in one line naming the key
// when they would silently do the wrong thing.
func TestContainKeys(t *testing.T) {
	cfg, err := Parse("flower.yaml", []byte("sandbox:\n  secrets: [GITHUB_TOKEN]\nmodels:\n  llama3.1: {input_per_mtok: 0.5, output_per_mtok: 1, window: 32000}\nmodel:\n  idle_timeout: 90s\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m := cfg.Models["llama3.1"]; *m.InputPerMTok != 0.5 || *m.OutputPerMTok != 1 || m.Window != 32000 ||
		cfg.Sandbox.Secrets[0] != "GITHUB_TOKEN" || cfg.Model.Idle().Seconds() != 90 || cfg.Model.FirstByte() != 0 {
		t.Errorf("parsed %+v", cfg)
	}
	for _, c := range []struct{ yaml, want string }{
		{"models:\n  x: {output_per_mtok: 1}\n", "models.x.input_per_mtok: missing"},
		{"models:\n  x: {input_per_mtok: -1, output_per_mtok: 1}\n", "models.x.input_per_mtok: -1: give a price >= 0"},
		{"model:\n  idle_timeout: soon\n", "model.idle_timeout: \"soon\" is not a duration"},
		{"model:\n  first_byte_timeout: 1ms\n", "model.first_byte_timeout"},
	} {
		_, err := Parse("flower.yaml", []byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want an error with %q", c.yaml, err, c.want)
		}
	}
}
