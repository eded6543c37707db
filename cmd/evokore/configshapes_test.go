package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// serveConfig runs the evokore binary in a directory of its own (not the
// config's folder, as when a client starts it) on the config at path,
// and connects a client to it once its children finished their first
// boot.
func serveConfig(t *testing.T, path string, env ...string) (*mcp.ClientSession, *routertest.Buffer) {
	t.Helper()
	cs, stderr := connectConfig(t, context.Background(), path, env...)
	routertest.WaitFor(t, "the children's first boot", func() bool {
		return strings.Contains(stderr.String(), "Proxy bootstrap complete: ")
	})
	return cs, stderr
}

// connectConfig is serveConfig without waiting for the children: it
// returns once the handshake is done, which ctx bounds.
func connectConfig(t *testing.T, ctx context.Context, path string, env ...string) (*mcp.ClientSession, *routertest.Buffer) {
	t.Helper()
	elsewhere := t.TempDir()
	cmd := exec.Command(testutil.Evokore(t), "serve", "--config", path)
	cmd.Dir = elsewhere
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"), testutil.RaceEnv,
		"HOME=" + elsewhere,
		"EVOKORE_HOME=" + filepath.Join(elsewhere, "home"),
		"EVOKORE_TOOL_DISCOVERY_MODE=legacy",
		"EVOKORE_CHILD_SERVER_BOOT_TIMEOUT_MS=20000",
	}, env...)
	stderr := &routertest.Buffer{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "config-shapes-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() {
		_ = cs.Close()
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
	})
	return cs, stderr
}

// statusByID is proxy_server_status keyed by server id.
func statusByID(t *testing.T, cs *mcp.ClientSession) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, s := range routertest.Status(t, cs).Servers {
		out[s.ID] = s.Status + " " + s.LastError
	}
	return out
}

// The original's shipped mcp.config.json, with each command swapped for
// the fixture server and every placeholder set, boots every enabled
// server; its relative pid files land in the config's folder, because
// that is where children run.
func TestOriginalShippedConfigBootsItsChildren(t *testing.T) {
	var doc map[string]any
	raw, err := os.ReadFile(filepath.Join(testutil.Root(t), "testdata", "original", "mcp.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	fx := testutil.FixtureServer(t)
	var env, enabled []string
	for _, v := range regexp.MustCompile(`\$\{(\w+)\}`).FindAllStringSubmatch(string(raw), -1) {
		env = append(env, v[1]+"=set-by-test")
	}
	for id, s := range doc["servers"].(map[string]any) {
		s := s.(map[string]any)
		s["command"] = fx
		s["args"] = []string{"-pidfile", id + ".pid"}
		if s["disabled"] != true {
			enabled = append(enabled, id)
		}
	}
	dir := t.TempDir()
	cs, stderr := serveConfig(t, testutil.WriteJSON(t, dir, "mcp.config.json", doc), env...)
	st := statusByID(t, cs)
	if len(enabled) < 4 {
		t.Fatalf("the original's file should have several enabled servers, got %v", enabled)
	}
	for _, id := range enabled {
		if !strings.HasPrefix(st[id], "connected") {
			t.Errorf("server %s: %q\n%s", id, st[id], stderr.String())
		}
		if _, err := os.Stat(filepath.Join(dir, id+".pid")); err != nil {
			t.Errorf("server %s did not run in the config's folder: %v", id, err)
		}
	}
	if st["reva"] != "disabled " {
		t.Errorf("reva: %q", st["reva"])
	}
}

// A Claude Desktop / Claude Code style file boots: mcpServers, "type"
// for the transport, and the other client's top-level settings ignored.
// A misspelt key fails only its own server, with a positioned error on
// stderr and in proxy_server_status; an "sse" server that does not answer
// fails alone.
func TestClaudeStyleConfigBootsAndOneBadServerFailsAlone(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	remote := exec.Command(testutil.FixtureServer(t), "-http", addr)
	if err := remote.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = remote.Process.Kill(); _ = remote.Wait() })

	fx := testutil.FixtureServer(t)
	dir := t.TempDir()
	path := testutil.WriteFile(t, dir, "claude.json", `{
  "numStartups": 42,
  "projects": {"/somewhere": {"allowedTools": []}},
  "mcpServers": {
    "local": {"type": "stdio", "command": "`+fx+`", "args": ["-pidfile", "local.pid"], "env": {}},
    "remote": {"type": "http", "url": "http://`+addr+`/"},
    "typo": {"type": "stdio", "command": "`+fx+`", "enviroment": {}},
    "legacy": {"type": "sse", "url": "http://127.0.0.1:1/sse"}
  }
}`)
	cs, stderr := serveConfig(t, path)
	routertest.WaitFor(t, "the HTTP child", func() bool { return strings.HasPrefix(statusByID(t, cs)["remote"], "connected") })
	st := statusByID(t, cs)
	if !strings.HasPrefix(st["local"], "connected") {
		t.Errorf("local: %q\n%s", st["local"], stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "local.pid")); err != nil {
		t.Errorf("local did not run in the config's folder: %v", err)
	}
	src, _ := os.ReadFile(path)
	line7 := strings.Split(string(src), "\n")[6]
	// Keys are positioned at their first letter, inside the quote.
	want := fmt.Sprintf("%s:7:%d: error: mcpServers.typo.enviroment: field not allowed", path, strings.Index(line7, `enviroment"`)+1)
	if !strings.HasPrefix(st["typo"], "error ") || !strings.Contains(st["typo"], want) {
		t.Errorf("typo: %q, want an error with %q", st["typo"], want)
	}
	if !strings.Contains(stderr.String(), "Failed to boot child server 'typo': "+want) {
		t.Errorf("stderr lacks the positioned error %q:\n%s", want, stderr.String())
	}
	if !strings.HasPrefix(st["legacy"], "error ") && !strings.HasPrefix(st["legacy"], "booting") {
		t.Errorf("legacy: %q", st["legacy"])
	}
	names := routertest.ToolNames(t, cs)
	for _, n := range []string{"local_echo", "remote_echo"} {
		if !slices.Contains(names, n) {
			t.Errorf("%s not listed", n)
		}
	}
	if got := routertest.Text(routertest.Call(t, cs, "local_echo", map[string]any{"message": "hi"})); got != "Echo: hi" {
		t.Errorf("local_echo = %q", got)
	}
}
