package builtin

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/flower-run/flower/tool"
)

type schemaDoc struct {
	Type       string                     `json:"type"`
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
}

// TestSchemas pins the names, classes and input fields of the built-ins:
// models are trained on these exact names (SPEC R2.4).
func TestSchemas(t *testing.T) {
	tools := Builtins(Env{Workspace: t.TempDir()})
	tests := []struct {
		name     string
		class    tool.Class
		props    []string
		required []string
		schema   json.RawMessage
	}{
		{"Read", tool.Pure, []string{"file_path", "limit", "offset"}, []string{"file_path"}, nil},
		{"Write", tool.Effect, []string{"content", "file_path"}, []string{"file_path", "content"}, nil},
		{"Edit", tool.Effect, []string{"file_path", "new_string", "old_string", "replace_all"}, []string{"file_path", "old_string", "new_string"}, nil},
		{"Glob", tool.Pure, []string{"path", "pattern"}, []string{"pattern"}, nil},
		{"Grep", tool.Pure, []string{"-i", "glob", "output_mode", "path", "pattern"}, []string{"pattern"}, nil},
		{"Bash", tool.Effect, []string{"command", "run_in_background", "timeout"}, []string{"command"}, nil},
		{"WebFetch", tool.World, []string{"prompt", "url"}, []string{"url"}, nil},
		{"Task", tool.Effect, []string{"description", "prompt"}, []string{"description", "prompt"}, tool.TaskSchema},
	}
	if got, want := len(tools), len(tests)-1; got != want {
		t.Fatalf("len(Builtins) = %d, want %d", got, want)
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			schema := tt.schema
			if schema == nil {
				tl := tools[i]
				if tl.Name() != tt.name {
					t.Fatalf("Builtins[%d] = %s, want %s", i, tl.Name(), tt.name)
				}
				if tl.Class() != tt.class {
					t.Errorf("Class = %v, want %v", tl.Class(), tt.class)
				}
				if len(tl.Description()) < 200 {
					t.Errorf("Description too short to help a model: %q", tl.Description())
				}
				schema = tl.Schema()
			}
			checkSchema(t, schema, tt.props, tt.required)
		})
	}
}

func checkSchema(t *testing.T, schema json.RawMessage, props, required []string) {
	t.Helper()
	var doc schemaDoc
	if err := json.Unmarshal(schema, &doc); err != nil {
		t.Fatalf("schema is not valid JSON: %v\n%s", err, schema)
	}
	if doc.Type != "object" {
		t.Errorf("type = %q, want object", doc.Type)
	}
	var got []string
	for name, raw := range doc.Properties {
		got = append(got, name)
		var p struct {
			Type        string `json:"type"`
			Description string `json:"description"`
		}
		if err := json.Unmarshal(raw, &p); err != nil || p.Type == "" || p.Description == "" {
			t.Errorf("property %s lacks a type or description: %s", name, raw)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, props) {
		t.Errorf("properties = %v, want %v", got, props)
	}
	if !slices.Equal(doc.Required, required) {
		t.Errorf("required = %v, want %v", doc.Required, required)
	}
}

func TestRegistryOfBuiltins(t *testing.T) {
	r := tool.NewRegistry(Builtins(Env{})...)
	got, want := r.Names(), []string{"Bash", "Edit", "Glob", "Grep", "Read", "WebFetch", "Write"}
	if !slices.Equal(got, want) {
		t.Errorf("Names = %v, want %v", got, want)
	}
}
