package permission

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDynamicLinesAreAsked: a line whose commands cannot be read off its
// text is not covered by allow rules, however harmless its first word
// (issue 20 item 5; R9.3).
func TestDynamicLinesAreAsked(t *testing.T) {
	r, err := New(t.TempDir(), []string{"Bash(echo:*)", "Bash(go test:*)", "Bash(bash -c:*)"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	asked := []string{
		`x='a[$(touch P)]'; echo $((x))`,
		`echo $((x + 1))`,
		`echo ${x@P}`,
		`echo ${!x}`,
		`echo ${a[i]}`,
		`echo ${s:n}`,
		`((x)); echo`,
		`let x; echo`,
		`a[x]=1; echo`,
		`[[ $x -eq 1 ]] && echo`,
		`eval 'echo hi'`,
		`source ./x.sh`,
		`. ./x.sh`,
		`trap 'touch P' EXIT; echo`,
		"bash <<EOF\ntouch P\nEOF",
		`echo touch P | bash`,
		`bash x.sh`,
		`bash -c "$x"`,
		`bash -c 'echo $((x))'`,
		`echo $(touch P)`,
		"echo `touch P`",
		`echo <(touch P)`,
		`$cmd x`,
		`go test $(go list ./...)`,
		`echo "unterminated`,
	}
	for _, line := range asked {
		d := r.Check("Bash", in("command", line))
		if d.Action != Ask || !d.Unlisted || d.Why == "" {
			t.Errorf("%q: %+v, want asked with a reason", line, d)
		}
	}
	for _, line := range []string{`echo $((1 + 2))`, `echo "$HOME" ${#x} ${x:-d}`, `echo ${a[0]}`, `bash -c 'echo hi'`, `go test ./... && echo ok`, `[[ 1 -eq 1 ]] && echo`} {
		if d := r.Check("Bash", in("command", line)); d.Action != Allow {
			t.Errorf("%q: %+v, want allowed", line, d)
		}
	}
}

// TestDynamicNeedsABashRule: without any rule on Bash, such a line is
// allowed as every Bash line is (the sandbox confines it); a deny rule on
// Bash makes it asked, since the deny cannot be checked against it.
func TestDynamicNeedsABashRule(t *testing.T) {
	ws := t.TempDir()
	none, _ := New(ws, nil, nil, []string{"Read(.env)"})
	if d := none.Check("Bash", in("command", "eval $x")); d.Action != Allow {
		t.Errorf("no Bash rule: %+v", d)
	}
	deny, _ := New(ws, nil, nil, []string{"Bash(rm:*)"})
	if d := deny.Check("Bash", in("command", "eval $x")); d.Action != Ask {
		t.Errorf("a Bash deny rule: %+v, want ask", d)
	}
	if d := deny.Check("Bash", in("command", "eval 'rm -rf x'")); d.Action != Deny {
		t.Errorf("a literal eval of a denied command: %+v, want deny", d)
	}
}

// TestBashPathsMeetFileRules: cat .env meets Read(.env), > flower.yaml
// meets Edit(flower.yaml), ~ and $HOME expand.
func TestBashPathsMeetFileRules(t *testing.T) {
	home, _ := os.UserHomeDir()
	r, err := New(t.TempDir(), nil, nil, []string{"Read(.env)", "Read(~/.ssh/**)", "Edit(/flower.yaml)"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		line string
		want Action
	}{
		{"cat .env", Deny},
		{"head -n 3 config/.env", Deny},
		{"wc -l < .env", Deny},
		{"cat ~/.ssh/id_rsa", Deny},
		{"cat $HOME/.ssh/id_rsa", Deny},
		{`cat "$HOME"/.ssh/id_rsa`, Deny},
		{"cat " + filepath.Join(home, ".ssh", "id_rsa"), Deny},
		{"bash -c 'cat .env'", Deny},
		{"echo 'mode: off' > flower.yaml", Deny},
		{"echo x >> ./flower.yaml", Deny},
		{"cat flower.yaml", Allow}, // reading it is fine
		{"cat .envrc README.md", Allow},
		{"grep -r .env-example .", Allow},
	}
	for _, tt := range tests {
		if d := r.Check("Bash", in("command", tt.line)); d.Action != tt.want {
			t.Errorf("%q: %+v, want %v", tt.line, d, tt.want)
		}
	}
	// A Read allow rule never allows a Bash line by its paths.
	a, _ := New(t.TempDir(), []string{"Read(**)", "Bash(ls)"}, nil, nil)
	if d := a.Check("Bash", in("command", "rm x")); d.Action != Ask {
		t.Errorf("rm x with only Read allowed: %+v", d)
	}
}

// TestHomeExpandsInFileTools: Read ~/.ssh/id_rsa hits Read(~/.ssh/**).
func TestHomeExpandsInFileTools(t *testing.T) {
	r, _ := New(t.TempDir(), nil, nil, []string{"Read(~/.ssh/**)"})
	for _, p := range []string{"~/.ssh/id_rsa", "$HOME/.ssh/id_rsa", "${HOME}/.ssh/config", "~/.ssh"} {
		if d := r.Check("Read", in("file_path", p)); d.Action != Deny {
			t.Errorf("Read %s: %+v, want deny", p, d)
		}
	}
	if d := r.Check("Read", in("file_path", "x/~/.ssh/id_rsa")); d.Action != Allow {
		t.Errorf("a ~ inside a path is a name: %+v", d)
	}
}

// TestHides: what a Read would not run without asking is hidden from
// Grep and Glob results.
func TestHides(t *testing.T) {
	ws := t.TempDir()
	r, _ := New(ws, nil, []string{"Read(secret/**)"}, []string{"Read(.env)"})
	for p, want := range map[string]bool{
		filepath.Join(ws, ".env"): true, filepath.Join(ws, "a", ".env"): true, filepath.Join(ws, "secret", "k"): true,
		filepath.Join(ws, "main.go"): false, filepath.Join(ws, ".envrc"): false,
	} {
		if got := r.Hides(p); got != want {
			t.Errorf("Hides(%s) = %v, want %v", p, got, want)
		}
	}
	only, _ := New(ws, []string{"Read(src/**)"}, nil, nil)
	if !only.Hides(filepath.Join(ws, "notes.txt")) || only.Hides(filepath.Join(ws, "src", "a.go")) {
		t.Error("Read allow rules: a file they do not list is hidden, one they list is not")
	}
	bash, _ := New(ws, []string{"Bash(ls)"}, nil, nil)
	if bash.Hides(filepath.Join(ws, ".env")) {
		t.Error("no Read rule hides nothing")
	}
	var nilRules *Rules
	if nilRules.Hides("/x") {
		t.Error("nil rules hide")
	}
}
