package server_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// npmServers configures the three npm reference servers the way a user
// would: everything, filesystem over a scratch directory, and
// server-memory under the id "kg" (the native memory tools are memory_*).
func npmServers(t *testing.T) (map[string]any, string) {
	if testing.Short() {
		t.Skip("npm reference servers: not in -short")
	}
	root := t.TempDir()
	return map[string]any{
		"everything": map[string]any{"command": "node", "args": []string{testutil.NPMServer(t, "server-everything"), "stdio"}},
		"fs":         map[string]any{"command": "node", "args": []string{testutil.NPMServer(t, "server-filesystem"), root}},
		"kg": map[string]any{
			"command": "node",
			"args":    []string{testutil.NPMServer(t, "server-memory")},
			"env":     map[string]any{"MEMORY_FILE_PATH": filepath.Join(root, "memory.jsonl")},
		},
	}, root
}

func TestNPMReferenceServersInLegacyMode(t *testing.T) {
	servers, root := npmServers(t)
	h := routertest.New(t, servers, legacy)
	var mu sync.Mutex
	var progress []float64
	cs := h.Connect(&mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		progress = append(progress, req.Params.Progress)
		mu.Unlock()
	}})
	h.Booted()

	names := routertest.ToolNames(t, cs)
	for _, want := range []string{"everything_echo", "fs_read_text_file", "kg_create_entities"} {
		if !slices.Contains(names, want) {
			t.Fatalf("tools/list lacks %s (stderr:\n%s)", want, h.Stderr.String())
		}
	}

	if got := routertest.Text(routertest.Call(t, cs, "everything_echo", map[string]any{"message": "through evokore"})); got != "Echo: through evokore" {
		t.Errorf("everything_echo = %q", got)
	}

	file := filepath.Join(root, "note.txt")
	if err := os.WriteFile(file, []byte("written on disk"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := routertest.Text(routertest.Call(t, cs, "fs_read_text_file", map[string]any{"path": file})); got != "written on disk" {
		t.Errorf("fs_read_text_file = %q", got)
	}

	res := routertest.Call(t, cs, "kg_create_entities", map[string]any{"entities": []any{
		map[string]any{"name": "evokore", "entityType": "project", "observations": []string{"routes MCP"}},
	}})
	if res.IsError || !strings.Contains(routertest.Text(res), "evokore") {
		t.Errorf("kg_create_entities = %q", routertest.Text(res))
	}

	params := &mcp.CallToolParams{Name: "everything_trigger-long-running-operation", Arguments: map[string]any{"duration": 0.3, "steps": 3}}
	params.SetProgressToken("lro-1")
	lro, err := cs.CallTool(context.Background(), params)
	if err != nil || lro.IsError {
		t.Fatalf("long-running operation: %v %v", err, lro)
	}
	routertest.WaitFor(t, "3 progress notifications", func() bool { mu.Lock(); defer mu.Unlock(); return len(progress) == 3 })
	mu.Lock()
	if !slices.Equal(progress, []float64{1, 2, 3}) {
		t.Errorf("progress = %v", progress)
	}
	mu.Unlock()
}
