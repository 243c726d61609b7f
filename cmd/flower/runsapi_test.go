package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/flower-run/flower/store/postgres/pgtest"
)

// TestServeRuns: flower serve --runs serves the database's runs with the
// token: POST /runs queues one as flower submit does, GET /runs lists it,
// GET /runs/ID shows it; no token or a workspace that is not a directory
// are refused (the other refusals are front/web's tests, in process).
func TestServeRuns(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	const token = "test-token-0123456789"
	env := []string{storeEnv + "=" + url, "FLOWER_TOKEN=" + token}
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	p := startFlower(t, dir, env, false, "serve", "--runs")
	p.waitOutput("/runs (Authorization")
	base := regexp.MustCompile(`on (http://\S+)/runs`).FindStringSubmatch(p.stdout.String())[1]

	do := func(method, path, body, tok string) (int, map[string]any) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v map[string]any
		json.NewDecoder(resp.Body).Decode(&v)
		return resp.StatusCode, v
	}
	if code, _ := do("GET", "/runs", "", ""); code != http.StatusUnauthorized {
		t.Errorf("GET /runs without the token: %d", code)
	}
	if code, _ := do("GET", "/runs", "", "wrong-token-0123456789"); code != http.StatusUnauthorized {
		t.Errorf("GET /runs with a wrong token: %d", code)
	}
	code, v := do("POST", "/runs", `{"task":"`+testTask+`","workspace":"`+ws+`"}`, token)
	id, _ := v["id"].(string)
	if code != http.StatusCreated || id == "" {
		t.Fatalf("POST /runs: %d %v", code, v)
	}
	code, v = do("GET", "/runs", "", token)
	if runs, _ := v["runs"].([]any); code != 200 || len(runs) != 1 || runs[0].(map[string]any)["id"] != id ||
		runs[0].(map[string]any)["status"] != "in_flight" {
		t.Errorf("GET /runs: %d %v", code, v)
	}
	if code, v = do("GET", "/runs/"+id, "", token); code != 200 || v["run"].(map[string]any)["task"] != testTask {
		t.Errorf("GET /runs/%s: %d %v", id, code, v)
	}
	for _, body := range []string{`{"task":"x","workspace":"/nonexistent-dir"}`, `{"task":"","workspace":"` + ws + `"}`} {
		if code, v = do("POST", "/runs", body, token); code != http.StatusBadRequest || v["error"] == "" {
			t.Errorf("POST /runs %s: %d %v", body, code, v)
		}
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if r := p.wait(); r.code != 0 {
		t.Errorf("serve --runs after SIGTERM: exit %d\n%s", r.code, r.stderr)
	}
}
