//go:build linux

package main_test

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil/routertest"
)

// The router's own stdio, devices and FIFOs named as files: each call is
// refused at once with the same answer, and the session goes on.
func TestFileToolsCannotReadTheRoutersStdioOrBlock(t *testing.T) {
	r := startRouter(t)
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	calls := []struct {
		tool, arg, want string
	}{
		{"session_context_health", "session_path", "Session file not found or not readable: "},
		{"nav_get_map", "path", "File not found or not readable: "},
		{"nav_read_anchor", "path", "File not found or not readable: "},
	}
	for _, p := range []string{"/dev/stdin", "/proc/self/fd/0", "/proc/self/fd/1", "/dev/zero", fifo} {
		for _, c := range calls {
			for range 5 {
				res, err := r.cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: map[string]any{c.arg: p, "anchor_id": "a"}})
				if err != nil {
					t.Fatalf("%s %s: %v\n%s", c.tool, p, err, r.stderr.String())
				}
				if got := routertest.Text(res); !res.IsError || got != c.want+p {
					t.Errorf("%s %s = %q", c.tool, p, got)
				}
			}
		}
	}
	if _, err := r.cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("the session did not survive: %v", err)
	}
}
