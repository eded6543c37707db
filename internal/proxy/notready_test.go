//go:build unix

package proxy_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// callErr calls a tool that must fail as a protocol error and returns it.
func callErr(t *testing.T, cs *mcp.ClientSession, name string) *jsonrpc.Error {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"message": "hi"}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		t.Fatalf("%s: want a JSON-RPC error, got %v (result %+v)", name, err, res)
	}
	return we
}

// A tool of a child still booting, with no cached tool list, is not
// "unknown": the call waits for the boot and runs.
func TestCallWaitsForABootingChild(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t, "-start-delay", "1s")}, nil)
	cs := h.Connect(nil)
	if s := routertest.StatusOf(t, cs, "fx"); s != "booting" {
		t.Fatalf("fx status right after initialize = %s", s)
	}
	got, isErr := routertest.CallText(t, cs, "fx_echo", map[string]any{"message": "early"})
	if isErr || got != "Echo: early" {
		t.Fatalf("fx_echo while booting = %q (isError %v)\n%s", got, isErr, h.Stderr.String())
	}
}

// A boot that fails while a call waits for it fails the call with the
// boot's error, naming the server.
func TestCallWaitingForABootGetsItsError(t *testing.T) {
	h := routertest.New(t, map[string]any{"slow": routertest.Fixture(t, "-start-delay", "5s")},
		map[string]string{"EVOKORE_CHILD_SERVER_BOOT_TIMEOUT_MS": "400"})
	cs := h.Connect(nil)
	we := callErr(t, cs, "slow_echo")
	want := "Child server 'slow' failed to start: Timed out connecting to child server 'slow' after 400ms"
	if we.Code != jsonrpc.CodeInternalError || we.Message != want {
		t.Errorf("slow_echo = %d %q, want -32603 %q", we.Code, we.Message, want)
	}
}

// Failed and disabled servers say why; names under no server's prefix,
// or a tool a connected child lacks, stay unknown.
func TestNotReadyServersSayWhy(t *testing.T) {
	broken := routertest.Fixture(t)
	broken["env"] = map[string]string{"TOKEN": "${NOT_SET_ANYWHERE}"}
	off := routertest.Fixture(t)
	off["disabled"] = true
	h := routertest.New(t, map[string]any{"ok": routertest.Fixture(t), "broken": broken, "off": off}, nil)
	cs := h.Connect(nil)
	h.Booted()
	for _, c := range []struct {
		tool   string
		code   int64
		prefix string
	}{
		{"broken_echo", jsonrpc.CodeInternalError, "Child server 'broken' failed to start: Unresolved env placeholder(s)"},
		{"off_echo", jsonrpc.CodeInternalError, "Child server 'off' is disabled in config; its tools are unavailable."},
		{"nobody_echo", jsonrpc.CodeMethodNotFound, "Unknown tool: nobody_echo"},
		{"ok_no_such_tool", jsonrpc.CodeMethodNotFound, "Unknown tool: ok_no_such_tool"},
		{"broken_", jsonrpc.CodeMethodNotFound, "Unknown tool: broken_"},
	} {
		we := callErr(t, cs, c.tool)
		if we.Code != c.code || !strings.HasPrefix(we.Message, c.prefix) {
			t.Errorf("%s = %d %q, want %d %q…", c.tool, we.Code, we.Message, c.code, c.prefix)
		}
	}
}

// A call to a child restarting after kill -9 waits for the restart; one
// whose restart cannot succeed in time gets EVOKORE-MCP's retryable
// "reconnecting" error.
func TestCallDuringARestart(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "fixture")
	src, err := os.ReadFile(testutil.FixtureServer(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, src, 0o755); err != nil {
		t.Fatal(err)
	}
	pidfile := filepath.Join(dir, "pid")
	h := routertest.New(t, map[string]any{
		"fx": map[string]any{"command": bin, "args": []string{"-pidfile", pidfile}},
	}, map[string]string{"EVOKORE_CHILD_SERVER_BOOT_TIMEOUT_MS": "3000"})
	cs := h.Connect(nil)
	h.Booted()

	// The restart succeeds: the call waits for it.
	kill(t, readPid(t, pidfile))
	routertest.WaitFor(t, "fx to be seen down", func() bool { return routertest.StatusOf(t, cs, "fx") != "connected" })
	got, isErr := routertest.CallText(t, cs, "fx_echo", map[string]any{"message": "back"})
	if isErr || got != "Echo: back" {
		t.Fatalf("fx_echo during a restart = %q (isError %v)\n%s", got, isErr, h.Stderr.String())
	}

	// The restart cannot succeed: the command is gone.
	pid := readPid(t, pidfile)
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	kill(t, pid)
	routertest.WaitFor(t, "fx to be seen down", func() bool { return routertest.StatusOf(t, cs, "fx") != "connected" })
	we := callErr(t, cs, "fx_echo")
	if we.Code != jsonrpc.CodeInternalError || we.Message != "Child server 'fx' is reconnecting. Please retry in a moment." {
		t.Errorf("fx_echo while the restart fails = %d %q", we.Code, we.Message)
	}
}

func kill(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
}

// A router closed before its children were up does not claim a bootstrap
// of 0 tools; one that boots says "Proxied" once per child.
func TestBootLinesAreHonest(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	h := routertest.New(t, map[string]any{"slow": routertest.Fixture(t, "-start-delay", "30s", "-pidfile", pidfile)}, nil)
	h.Connect(nil)
	readPid(t, pidfile) // the boot has started
	_ = h.Server.Close()
	h.Booted()
	if strings.Contains(h.Stderr.String(), "Proxy bootstrap complete") {
		t.Errorf("closed before boot, stderr:\n%s", h.Stderr.String())
	}

	h = routertest.New(t, map[string]any{"a": routertest.Fixture(t), "b": routertest.Fixture(t, "-extra", "3")}, nil)
	h.Connect(nil)
	h.Booted()
	log := h.Stderr.String()
	for _, id := range []string{"a", "b"} {
		if n := strings.Count(log, "tools from '"+id+"'"); n != 1 {
			t.Errorf("%d Proxied lines for %s:\n%s", n, id, log)
		}
	}
	if !strings.Contains(log, "Proxy bootstrap complete") {
		t.Errorf("no bootstrap line:\n%s", log)
	}
}

// A server of the session era whose initialize fails (not ready, a bad
// key) is not taken for one of the sessionless era: only an initialize
// refused as an unknown method is asked for MCP 2026-07-28.
func TestAFailedInitializeIsNoSignOfTheNewEra(t *testing.T) {
	h := routertest.New(t, map[string]any{"old": routertest.Fixture(t, "-fail-init")}, nil)
	h.Connect(nil)
	h.Booted()
	log := h.Stderr.String()
	if strings.Contains(log, "refused initialize") {
		t.Errorf("a failed initialize was taken for the new era:\n%s", log)
	}
	if !strings.Contains(log, "not ready") {
		t.Errorf("the child's own error is not reported:\n%s", log)
	}
}
