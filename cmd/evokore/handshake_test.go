package main_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
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

	// The bound only turns a hang (the old behaviour) into a failure.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, stderr := connectConfig(t, ctx, fifo)
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

// TestAStatelessClientGetsItsChildren: the go-sdk client's default
// protocol (2026-07-28) discovers the server and never initialises, so
// no initialized notification comes to boot the children; over stdio they
// boot once the client discovered the server, and its calls reach them.
func TestAStatelessClientGetsItsChildren(t *testing.T) {
	dir := t.TempDir()
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{"fx": routertest.Fixture(t)}})
	cmd := exec.Command(testutil.Evokore(t), "serve", "--config", cfg)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "EVOKORE_HOME=" + filepath.Join(dir, "home"), "EVOKORE_CHILD_SERVER_BOOT_TIMEOUT_MS=20000"}
	stderr := &routertest.Buffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stateless", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("the session speaks %s, not the stateless 2026-07-28 this test is about", v)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fx_echo", Arguments: map[string]any{"message": "hi"}})
	if err != nil || res.IsError {
		t.Fatalf("fx_echo: %v %+v\n%s", err, res, stderr)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(got, "hi") {
		t.Errorf("fx_echo said %q", got)
	}
}
