package main_test

import (
	"context"
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

// TestAConfigThatIsAPipeIsRefusedAndTheNativesServe serves with a config
// file that is a named pipe no one writes: reading it would block the
// router forever (and a pipe to /dev/zero would grow it without bound), so
// it is refused at once, as every file that is not regular is, with the
// file and the reason on stderr; the handshake is answered and the native
// tools serve. (That the handshake never waits for the configuration is
// internal/server TestTheHandshakeIsAnsweredBeforeTheServerExists.)
func TestAConfigThatIsAPipeIsRefusedAndTheNativesServe(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "mcp.config.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, stderr := connectConfig(t, ctx, fifo)
	if got := cs.InitializeResult().ServerInfo.Name; got != "evokore" {
		t.Errorf("serverInfo.name = %q", got)
	}
	if !slices.Contains(routertest.ToolNames(t, cs), "discover_tools") {
		t.Error("the native tools are not served")
	}
	routertest.WaitFor(t, "the refusal on stderr", func() bool {
		return strings.Contains(stderr.String(), fifo+": error: not a regular file")
	})
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
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + dir, "EVOKORE_HOME=" + filepath.Join(dir, "home"), "EVOKORE_CHILD_SERVER_BOOT_TIMEOUT_MS=20000"}
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
