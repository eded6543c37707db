package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/server"
	"github.com/evokore/evokore/internal/testutil"
)

// syncBuffer collects the router's stderr.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// harness is one router under test with its files and stderr.
type harness struct {
	t      *testing.T
	dir    string
	srv    *server.Server
	stderr *syncBuffer
}

// fixture describes a fixture child in a test config.
func fixture(t *testing.T, args ...string) map[string]any {
	if args == nil {
		args = []string{}
	}
	return map[string]any{"command": testutil.FixtureServer(t), "args": args}
}

// newHarness writes servers into mcp.config.json and assembles a router
// with env (EVOKORE_HOME and the config path are filled in).
func newHarness(t *testing.T, servers map[string]any, env map[string]string) *harness {
	t.Helper()
	dir := t.TempDir()
	cfg := map[string]any{"servers": servers}
	return newHarnessConfig(t, dir, testutil.WriteJSON(t, dir, "mcp.config.json", cfg), env)
}

func newHarnessConfig(t *testing.T, dir, configPath string, env map[string]string) *harness {
	t.Helper()
	vars := map[string]string{
		"PATH":                     getenv("PATH"),
		"HOME":                     dir,
		"EVOKORE_HOME":             dir + "/home",
		"EVOKORE_MCP_CONFIG_PATH":  configPath,
		"EVOKORE_PERMISSIONS_PATH": dir + "/permissions.yml",
		"EVOKORE_SKILLS_DIR":       dir + "/SKILLS",
	}
	for k, v := range env {
		vars[k] = v
	}
	settings, _ := config.ReadSettings(config.NewEnv(vars), server.ShippedDefaults)
	settings.ShutdownGrace = 500 * time.Millisecond
	h := &harness{t: t, dir: dir, stderr: &syncBuffer{}}
	h.srv = server.New(server.Options{Settings: settings, Version: "test", Log: h.stderr})
	t.Cleanup(h.srv.Close)
	return h
}

// connect opens an in-memory client session; opts may be nil.
func (h *harness) connect(opts *mcp.ClientOptions) *mcp.ClientSession {
	h.t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := h.srv.Connect(ctx, st); err != nil {
		h.t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, opts)
	cs, err := c.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// booted waits for every child's first boot attempt.
func (h *harness) booted() {
	h.t.Helper()
	select {
	case <-h.srv.ChildrenBooted():
	case <-time.After(60 * time.Second):
		h.t.Fatalf("children did not finish booting; stderr:\n%s", h.stderr.String())
	}
}

// waitFor polls cond until it holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(res.Tools))
	for i, tl := range res.Tools {
		names[i] = tl.Name
	}
	return names
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

func resultText(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

type serverStatus struct {
	TotalServers int `json:"totalServers"`
	Servers      []struct {
		ID                  string `json:"id"`
		Status              string `json:"status"`
		ErrorCount          int    `json:"errorCount"`
		RegisteredToolCount int    `json:"registeredToolCount"`
		LastError           string `json:"lastError"`
	} `json:"servers"`
}

func status(t *testing.T, cs *mcp.ClientSession) serverStatus {
	t.Helper()
	var st serverStatus
	if err := json.Unmarshal([]byte(resultText(call(t, cs, "proxy_server_status", map[string]any{}))), &st); err != nil {
		t.Fatal(err)
	}
	return st
}

func statusOf(t *testing.T, cs *mcp.ClientSession, id string) string {
	for _, s := range status(t, cs).Servers {
		if s.ID == id {
			return s.Status
		}
	}
	t.Fatalf("no server %q in status", id)
	return ""
}
