package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/testutil"
)

// TestInspectorCLIThroughEvokore drives evokore with an independent
// client, the MCP Inspector's CLI: `vet --live` warms the tool-list cache
// (one-shot clients list tools right after the handshake, before children
// boot), then the Inspector lists and calls a proxied tool.
func TestInspectorCLIThroughEvokore(t *testing.T) {
	if testing.Short() {
		t.Skip("npm Inspector: not in -short")
	}
	inspector := testutil.InspectorCLI(t)
	everything := testutil.NPMServer(t, "server-everything")
	evokore := testutil.Evokore(t)
	dir := t.TempDir()
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
		"everything": map[string]any{"command": "node", "args": []string{everything, "stdio"}},
	}})
	env := map[string]string{
		"EVOKORE_HOME":                filepath.Join(dir, "home"),
		"EVOKORE_MCP_CONFIG_PATH":     cfg,
		"EVOKORE_TOOL_DISCOVERY_MODE": "legacy",
	}
	base := []string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + dir}

	vet := exec.Command(evokore, "vet", "--live")
	vet.Dir = dir
	vet.Env = base
	for k, v := range env {
		vet.Env = append(vet.Env, k+"="+v)
	}
	if out, err := vet.CombinedOutput(); err != nil {
		t.Fatalf("evokore vet --live: %v\n%s", err, out)
	}

	run := func(method string, extra ...string) map[string]any {
		t.Helper()
		args := []string{"--cli", "-q", "--format", "json", "--cwd", dir}
		for k, v := range env {
			args = append(args, "-e", k+"="+v)
		}
		args = append(args, evokore, "serve", "--method", method)
		args = append(args, extra...)
		cmd := exec.Command(inspector, args...)
		cmd.Dir = dir
		cmd.Env = base
		out, err := cmd.Output()
		if err != nil {
			stderr := ""
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("inspector %s: %v\n%s\n%s", method, err, out, stderr)
		}
		var v map[string]any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("inspector %s printed %q: %v", method, out, err)
		}
		return v
	}

	listed := run("tools/list")
	var names []string
	for _, tl := range dig(listed, "tools") {
		names = append(names, tl.(map[string]any)["name"].(string))
	}
	if !slices.Contains(names, "everything_echo") || !slices.Contains(names, "describe_tool") {
		t.Fatalf("Inspector's tools/list: %v", names)
	}
	// The Inspector declares roots, so server-everything lists
	// get-roots-list to it; vet --live pinned it too, so it is served,
	// not held as a new tool.
	if !slices.Contains(names, "everything_get-roots-list") {
		t.Errorf("get-roots-list is not served to the Inspector: %v", names)
	}

	called := run("tools/call", "--tool-name", "everything_echo", "--tool-arg", "message=from-the-inspector")
	content := dig(called, "content")
	if len(content) == 0 || !strings.Contains(content[0].(map[string]any)["text"].(string), "Echo: from-the-inspector") {
		t.Fatalf("Inspector's tools/call: %v", called)
	}
}

// dig returns the list at key, looking inside a "result" wrapper too.
func dig(v map[string]any, key string) []any {
	if r, ok := v["result"].(map[string]any); ok {
		v = r
	}
	list, _ := v[key].([]any)
	return list
}
