package main_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/testutil"
)

// evokoreIn runs the evokore binary in dir with a clean environment and
// returns its stdout and exit code.
func evokoreIn(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(testutil.Evokore(t), args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + dir, "EVOKORE_HOME=" + filepath.Join(dir, "home")}
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

type report struct {
	Profile string `json:"profile"`
	Tools   []struct {
		Name, Source, Server string
	} `json:"tools"`
	Count      int            `json:"count"`
	Bytes      int            `json:"bytes"`
	Tokens     map[string]int `json:"tokens"`
	StubTokens map[string]int `json:"stubTokens"`
	Budget     int            `json:"budget"`
	OverBudget bool           `json:"overBudget"`
	Missing    []string       `json:"missing"`
}

func profileJSON(t *testing.T, dir string, args ...string) (report, int) {
	t.Helper()
	out, code := evokoreIn(t, dir, append([]string{"profile", "--format", "json"}, args...)...)
	var r report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("profile printed %q: %v", out, err)
	}
	return r, code
}

func TestProfileDefaultListsEveryNativeWithinBudget(t *testing.T) {
	dir := t.TempDir()
	r, code := profileJSON(t, dir, "default")
	if code != 0 || r.Count != 38 || len(r.Tools) != 38 || r.OverBudget {
		t.Fatalf("default: exit %d, %d tools, over %v", code, r.Count, r.OverBudget)
	}
	if r.Tokens["cl100k"] <= 0 || r.Tokens["o200k"] <= 0 || r.Bytes <= 0 || r.Budget != 2800 {
		t.Errorf("measure: %+v", r)
	}
	// The run_code declarations of the same tools cost tokens too, and
	// fewer than their schemas.
	if s := r.StubTokens["cl100k"]; s <= 0 || s >= r.Tokens["cl100k"] {
		t.Errorf("declarations: %d cl100k tokens, schemas %d", s, r.Tokens["cl100k"])
	}
	text, code := evokoreIn(t, dir, "profile", "default", "--tokenizer", "cl100k")
	if code != 0 || !strings.Contains(text, "38 tool(s); tools/list JSON") || !strings.Contains(text, "as run_code declarations cl100k") || !strings.Contains(text, "describe_tool") || strings.Contains(text, "o200k") {
		t.Errorf("table (exit %d):\n%s", code, text)
	}
}

func TestProfileBudgetExitCode(t *testing.T) {
	dir := t.TempDir()
	if _, code := profileJSON(t, dir, "default", "--budget", "100"); code != 2 {
		t.Errorf("over --budget: exit %d, want 2", code)
	}
	testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"discovery": map[string]any{"profiles": map[string]any{
		"tight": map[string]any{"alwaysVisible": []string{"search_skills", "resolve_workflow"}, "budget": 50},
		"tiny":  map[string]any{"alwaysVisible": []string{"search_skills"}, "description": "one native"},
	}}})
	r, code := profileJSON(t, dir, "tight")
	if code != 2 || !r.OverBudget || r.Budget != 50 {
		t.Errorf("own budget: exit %d %+v", code, r)
	}
	r, code = profileJSON(t, dir, "tiny")
	if code != 0 || r.Count != 2 || r.Tools[0].Name != "search_skills" || r.Tools[1].Name != "describe_tool" {
		t.Errorf("user profile: exit %d %+v", code, r.Tools)
	}
	if _, code := evokoreIn(t, dir, "profile", "no-such-profile"); code != 2 {
		t.Errorf("unknown profile: exit %d", code)
	}
}

func TestProfileAllComparesEveryProfile(t *testing.T) {
	dir := t.TempDir()
	out, code := evokoreIn(t, dir, "profile", "--all")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, p := range []string{"default", "coding", "research", "voice", "legacy-full", "legacy-dynamic"} {
		if !strings.Contains(out, p) {
			t.Errorf("--all lacks %s:\n%s", p, out)
		}
	}
	var reports []report
	js, _ := evokoreIn(t, dir, "profile", "--all", "--format", "json")
	if err := json.Unmarshal([]byte(js), &reports); err != nil || len(reports) != 6 {
		t.Fatalf("--all json: %v %d", err, len(reports))
	}
}

func TestProfileCountsCachedAndLiveChildTools(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{
		"servers": map[string]any{"fx": map[string]any{"command": testutil.FixtureServer(t), "args": []string{}}},
		"discovery": map[string]any{"profiles": map[string]any{
			"echoing": map[string]any{"alwaysVisible": []string{"fx_echo", "fx_missing"}},
		}},
	})
	before, _ := profileJSON(t, dir, "echoing")
	if before.Count != 1 || len(before.Missing) != 2 {
		t.Fatalf("without a cache only describe_tool is known: %+v", before)
	}
	live, code := profileJSON(t, dir, "echoing", "--live")
	if code != 0 || live.Count != 2 || live.Tools[1].Name != "fx_echo" || live.Tools[1].Server != "fx" || len(live.Missing) != 1 || live.Missing[0] != "fx_missing" {
		t.Fatalf("--live: exit %d %+v", code, live)
	}
	// The live boot left the cache behind.
	cached, _ := profileJSON(t, dir, "echoing")
	if cached.Count != 2 || cached.Bytes != live.Bytes {
		t.Errorf("cached: %+v", cached)
	}
	full, _ := profileJSON(t, dir, "legacy-full")
	if full.Count <= 37 {
		t.Errorf("legacy-full should add the child's tools: %d", full.Count)
	}
}
