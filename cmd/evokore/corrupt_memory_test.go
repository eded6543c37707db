//go:build unix

package main_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/native/memory"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// A memory database damaged on disk used to panic inside the store and take
// the router and its children down. Now that call fails, and everything
// else goes on.
func TestACorruptMemoryDatabaseCostsOneCall(t *testing.T) {
	r := startRouter(t)
	pids := r.childPids(t)
	ctx := context.Background()
	call := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := r.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v\nstderr:\n%s", name, err, r.stderr.String())
		}
		return res
	}
	for i := range 100 {
		call("memory_store", map[string]any{"session_id": "s", "key": fmt.Sprintf("k%d", i), "kind": "knowledge", "value": strings.Repeat("x", 300)})
	}
	path := memory.NewStore(filepath.Join(r.dir, "home", "memory")).PathFor("s")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 2 * os.Getpagesize(); i < len(b); i++ {
		b[i] = byte(i*31 + 7)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}

	if res := call("memory_list", map[string]any{"session_id": "s"}); !res.IsError || !strings.Contains(routertest.Text(res), "corrupt") {
		t.Fatalf("memory_list on the corrupt file = %s", routertest.Text(res))
	}
	if res := call("one_echo", map[string]any{"message": "still here"}); routertest.Text(res) != "Echo: still here" {
		t.Errorf("child after the corrupt read = %s", routertest.Text(res))
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err != nil {
			t.Errorf("child %d is gone: %v", pid, err)
		}
	}
	call("memory_store", map[string]any{"session_id": "s", "key": "fresh", "kind": "knowledge", "value": 1})
	if res := call("memory_list", map[string]any{"session_id": "s"}); res.IsError || !strings.Contains(routertest.Text(res), `"fresh"`) {
		t.Errorf("memory after = %s", routertest.Text(res))
	}
}
