package server_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/server"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// Building a server starts nothing that outlives it: no goroutine, no
// child, no index.
// It runs in a process of its own: the goroutine count of this one moves
// with the stragglers of the tests before it (a child's reader ending, a
// session's queue writer starting).
func TestNewStartsNothing(t *testing.T) {
	if os.Getenv("EVOKORE_TEST_NEW_ALONE") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestNewStartsNothing$", "-test.count=1")
		cmd.Env = append(os.Environ(), "EVOKORE_TEST_NEW_ALONE=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return
	}
	dir := t.TempDir()
	settings, _ := config.ReadSettings(config.NewEnv(map[string]string{
		"HOME": dir, "EVOKORE_HOME": dir + "/home",
		"EVOKORE_MCP_CONFIG_PATH": dir + "/none.json", "EVOKORE_SKILLS_DIR": dir + "/SKILLS",
		"EVOKORE_SKILL_WATCHER": "true",
	}), server.ShippedDefaults)
	before := runtime.NumGoroutine()
	srv := server.New(server.Options{Settings: settings, Version: "test"})
	// New hashes the native definitions on a goroutine of its own while it
	// reads the configuration; on a loaded machine that goroutine may not
	// have exited yet when New returns. What New must not leave is a
	// goroutine that lives on.
	routertest.WaitFor(t, "every goroutine New started to end", func() bool { return runtime.NumGoroutine() <= before })
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Errorf("%d goroutines outlive Shutdown", after-before)
	}
}

// Calls still running when the shutdown context ends are cancelled, the
// sessions closed, and no new session is accepted.
func TestShutdownCancelsStragglers(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, nil)
	cs := h.Connect(nil)
	h.Booted()
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fx_slow", Arguments: map[string]any{"ms": 120000}})
		done <- err
	}()
	routertest.WaitFor(t, "the slow call to be open", func() bool { return h.Server.OpenCalls("fx") == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := h.Server.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown = %v, want the deadline", err)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the straggler was never answered")
	}
	if n := h.Server.OpenCalls("fx"); n != 0 {
		t.Errorf("%d calls still open", n)
	}
	if len(h.Server.Sessions()) != 0 {
		t.Errorf("sessions left: %d", len(h.Server.Sessions()))
	}
	st, _ := mcp.NewInMemoryTransports()
	if _, err := h.Server.Connect(context.Background(), st); !errors.Is(err, server.ErrServerClosed) {
		t.Errorf("Connect after Shutdown = %v", err)
	}
}
