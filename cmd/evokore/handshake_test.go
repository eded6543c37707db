package main_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// TestTheHandshakeDoesNotWaitForTheConfiguration serves with a config
// file that is a named pipe no one writes yet: reading it blocks, so
// evokore can only answer initialize if it does so before it reads its
// configuration. Once the config is written, the same session lists the
// child's tools.
func TestTheHandshakeDoesNotWaitForTheConfiguration(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "mcp.config.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	cfg, err := json.Marshal(map[string]any{"servers": map[string]any{"fx": routertest.Fixture(t)}})
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(testutil.Evokore(t), "serve", "--config", fifo)
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + dir,
		"EVOKORE_HOME=" + filepath.Join(dir, "home"),
		"EVOKORE_TOOL_DISCOVERY_MODE=legacy",
	}
	stderr := &routertest.Buffer{}
	cmd.Stderr = stderr
	// The bound only turns a hang (the old behaviour) into a failure.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "handshake-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 15 * time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("initialize was not answered while the config could not be read: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() {
		_ = cs.Close()
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
	})
	if got := cs.InitializeResult().ServerInfo.Name; got != "evokore" {
		t.Errorf("serverInfo.name = %q", got)
	}

	// Written once: evokore reads its configuration once at start.
	written := make(chan error, 1)
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			_, err = w.Write(cfg)
			_ = w.Close()
		}
		written <- err
	}()
	select {
	case err := <-written:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatalf("evokore never read its configuration\n%s", stderr.String())
	}
	defer func() {
		if t.Failed() {
			t.Logf("stderr:\n%s", stderr.String())
		}
	}()
	routertest.WaitFor(t, "the child's tools after the config was read", func() bool {
		return slices.Contains(routertest.ToolNames(t, cs), "fx_echo")
	})
	if res := routertest.Call(t, cs, "fx_echo", map[string]any{"message": "late"}); res.IsError || routertest.Text(res) != "Echo: late" {
		t.Errorf("fx_echo = %+v", res)
	}
}
