// Package routertest assembles a real router for integration tests: files
// in a temporary directory, the server, in-memory client sessions, and
// small helpers to call tools and read results.
package routertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/httpsession"
	"github.com/evokore/evokore/internal/ingress"
	"github.com/evokore/evokore/internal/native/codemode"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/procgroup"
	"github.com/evokore/evokore/internal/server"
	"github.com/evokore/evokore/internal/testutil"
)

// Buffer collects the router's stderr; safe for concurrent writes.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Harness is one router under test: its directory (config, EVOKORE_HOME
// under Dir/home), the assembled server, and its stderr.
type Harness struct {
	t      testing.TB
	Dir    string
	Server *server.Server
	Stderr *Buffer
	// Settings are what the router was built with.
	Settings config.Settings
}

// Fixture is the mcp.config.json entry of a fixture child with args.
func Fixture(t testing.TB, args ...string) map[string]any {
	if args == nil {
		args = []string{}
	}
	return map[string]any{"command": testutil.FixtureServer(t), "args": args}
}

// New writes servers into mcp.config.json and assembles a router with
// env. EVOKORE_HOME, the config, permissions and skills paths point into
// a fresh directory unless env sets them; the process environment is not
// used beyond PATH.
func New(t testing.TB, servers map[string]any, env map[string]string) *Harness {
	t.Helper()
	dir := t.TempDir()
	cfg := map[string]any{"servers": servers}
	return NewWithConfig(t, dir, testutil.WriteJSON(t, dir, "mcp.config.json", cfg), env)
}

// NewWithConfig assembles a router over an existing config file in dir.
func NewWithConfig(t testing.TB, dir, configPath string, env map[string]string) *Harness {
	return NewWithOptions(t, dir, configPath, env, nil)
}

// NewWithOptions is NewWithConfig with a clock for approvals, rate limits
// and cooldowns (nil means time.Now).
func NewWithOptions(t testing.TB, dir, configPath string, env map[string]string, now func() time.Time) *Harness {
	t.Helper()
	return NewWithServerOptions(t, dir, configPath, env, func(o *server.Options) { o.Now = now })
}

// NewWithServerOptions is NewWithConfig with the server's options
// adjusted by adjust (a clock, the file watcher) before it is built.
func NewWithServerOptions(t testing.TB, dir, configPath string, env map[string]string, adjust func(*server.Options)) *Harness {
	t.Helper()
	vars := map[string]string{
		"PATH":                     os.Getenv("PATH"),
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
	settings.Children.ShutdownGrace = 500 * time.Millisecond
	// The directory holding the config plays the project the router was
	// started in, not the test binary's working directory.
	settings.ProjectDir = dir
	h := &Harness{t: t, Dir: dir, Stderr: &Buffer{}, Settings: settings}
	opts := server.Options{Settings: settings, Version: "test", Log: h.Stderr}
	if adjust != nil {
		adjust(&opts)
	}
	h.Server = server.New(opts)
	t.Cleanup(func() { _ = h.Server.Close() })
	return h
}

// CodeSandbox starts run_code's sandbox from a binary built without the
// race detector (internal/testutil/codesandbox): programs that move
// megabytes through the engine run at a user's speed, not the
// detector's, while the router driving them stays instrumented.
func CodeSandbox(t testing.TB) func() (procgroup.Spec, error) {
	path := testutil.Build(t, "./internal/testutil/codesandbox", "codesandbox")
	return func() (procgroup.Spec, error) {
		return procgroup.Spec{Path: path, Args: []string{codemode.SandboxArg}}, nil
	}
}

// HTTP serves the router's sessions over streamable HTTP as `serve
// --http` does, with identify (nil: the router's role, no identity) and
// the SDK handler's options sdk (nil: the defaults).
func (h *Harness) HTTP(identify func(*http.Request) ingress.SessionOptions, sdk *mcp.StreamableHTTPOptions) *httpsession.Handler {
	return h.Server.HTTP(httpsession.Options{Identify: identify, SDK: sdk, TTL: h.Settings.SessionTTL})
}

// Connect opens an in-memory client session; opts may be nil.
func (h *Harness) Connect(opts *mcp.ClientOptions) *mcp.ClientSession {
	h.t.Helper()
	return h.ConnectAs(opts, ingress.SessionOptions{})
}

// ConnectAs is Connect for a session acting for someone (a role, a
// subject and tenant), as an authenticated HTTP session would.
func (h *Harness) ConnectAs(opts *mcp.ClientOptions, so ingress.SessionOptions) *mcp.ClientSession {
	h.t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := h.Server.ConnectAs(ctx, st, so); err != nil {
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

// Booted waits for every child's first boot attempt.
func (h *Harness) Booted() {
	h.t.Helper()
	select {
	case <-h.Server.ChildrenBooted():
	case <-time.After(60 * time.Second):
		h.t.Fatalf("children did not finish booting; stderr:\n%s", h.Stderr.String())
	}
}

// WaitFor polls cond until it holds, failing after 30 s.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	waitWithin(t, 30*time.Second, cond, func() string { return "timed out waiting for " + what })
}

// WaitGone waits until none of pids is alive (a zombie counts as gone) and
// fails after within, naming the processes still running.
func WaitGone(t testing.TB, within time.Duration, pids ...int) {
	t.Helper()
	var left []int
	gone := func() bool {
		left = left[:0]
		for _, p := range pids {
			if procgroup.Alive(p) {
				left = append(left, p)
			}
		}
		return len(left) == 0
	}
	waitWithin(t, within, gone, func() string { return fmt.Sprintf("processes still running after %s: %v", within, left) })
}

func waitWithin(t testing.TB, within time.Duration, cond func() bool, failure func() string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal(failure())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ToolNames lists the session's tools/list names in order.
func ToolNames(t testing.TB, cs *mcp.ClientSession) []string {
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

// Call calls a tool and fails the test on a protocol error.
func Call(t testing.TB, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

// Text joins a result's text blocks.
func Text(r *mcp.CallToolResult) string {
	if r == nil {
		return "<no result>"
	}
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// ServerStatus is proxy_server_status's answer.
type ServerStatus struct {
	TotalServers int `json:"totalServers"`
	Servers      []struct {
		ID                  string `json:"id"`
		Status              string `json:"status"`
		ErrorCount          int    `json:"errorCount"`
		RegisteredToolCount int    `json:"registeredToolCount"`
		LastError           string `json:"lastError"`
	} `json:"servers"`
}

// Status calls proxy_server_status.
func Status(t testing.TB, cs *mcp.ClientSession) ServerStatus {
	t.Helper()
	var st ServerStatus
	if err := json.Unmarshal([]byte(Text(Call(t, cs, "proxy_server_status", map[string]any{}))), &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// StatusOf is one server's status string.
func StatusOf(t testing.TB, cs *mcp.ClientSession, id string) string {
	for _, s := range Status(t, cs).Servers {
		if s.ID == id {
			return s.Status
		}
	}
	t.Fatalf("no server %q in status", id)
	return ""
}

var approvalToken = regexp.MustCompile(`'_evokore_approval_token' with the value '([^']+)'`)

// ApprovalToken extracts the token from an approval interception, the
// way clients written for EVOKORE-MCP do, and fails if r is not one.
func ApprovalToken(t testing.TB, r *mcp.CallToolResult) string {
	t.Helper()
	m := approvalToken.FindStringSubmatch(Text(r))
	if !r.IsError || m == nil {
		t.Fatalf("not an approval interception: %q", Text(r))
	}
	return m[1]
}

var approvalID = regexp.MustCompile(`waiting for operator approval \(approval id ([0-9a-f]{16})\)`)

// HeldApproval checks r is the operator interception and returns its
// approval id.
func HeldApproval(t testing.TB, r *mcp.CallToolResult) string {
	t.Helper()
	m := approvalID.FindStringSubmatch(Text(r))
	if !r.IsError || m == nil {
		t.Fatalf("not an operator interception: %q", Text(r))
	}
	SaysNotHowToApprove(t, r)
	return m[1]
}

// howToApprove matches what would tell a model how to approve its own
// call: a command, the CLI's verbs next to the id, a token, the
// dashboard's routes or the files approvals live in.
var howToApprove = regexp.MustCompile(`(?i)evokore\s+approvals|approvals\s+(approve|deny)|_evokore_approval_token|/api/approvals|/ws/approvals|decisions\.jsonl|--unsafe`)

// SaysNotHowToApprove fails unless the interception r names the approval
// and that it waits for the user or an operator, and nothing a model with
// a shell could use to approve it itself.
func SaysNotHowToApprove(t testing.TB, r *mcp.CallToolResult) {
	t.Helper()
	text := Text(r)
	if m := howToApprove.FindString(text); m != "" {
		t.Fatalf("the interception tells the model how to approve (%q): %q", m, text)
	}
	if !strings.Contains(text, "the user or an operator") {
		t.Fatalf("the interception does not say who decides: %q", text)
	}
}

// Approve approves a held call as an operator would, by its id.
func (h *Harness) Approve(id string) {
	h.t.Helper()
	if err := policy.ApproveApproval(h.Dir+"/home", id, time.Now()); err != nil {
		h.t.Fatal(err)
	}
}

// CallText calls a tool and returns its text and whether it is an error
// result.
func CallText(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res := Call(t, cs, name, args)
	return Text(res), res.IsError
}

// DecodeJSON decodes a tool's JSON text, failing the test when it is not.
func DecodeJSON[T any](t testing.TB, text string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, text)
	}
	return v
}
