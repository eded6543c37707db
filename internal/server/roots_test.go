package server_test

//lint:file-ignore SA1019 roots pass through on purpose; see docs/decisions.md

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/ingress"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// connectWithRoots connects a client over HTTP acting for subject,
// speaking version and declaring dir as its one root.
func connectWithRoots(t *testing.T, url, subject, version, dir string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: subject, Version: "1"}, nil)
	c.AddRoots(&mcp.Root{URI: "file://" + dir, Name: subject})
	ct := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: asSubject{subject}}}
	cs, err := c.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// allowed is what server-filesystem says its allowed folders are.
func allowed(t *testing.T, cs *mcp.ClientSession, tool string) string {
	t.Helper()
	text := routertest.Text(routertest.Call(t, cs, tool, map[string]any{}))
	_, dirs, _ := strings.Cut(text, "Allowed directories:\n")
	return dirs
}

// A child shared by the clients of an HTTP router never takes one
// caller's roots as everyone's: server-filesystem keeps the folder its
// arguments give it, or gets the roots its configuration names, whatever
// roots alice and bob (each in a session of 2025-11-25) and carol (of
// 2026-07-28) declare.
func TestSharedChildNeverTakesACallersRoots(t *testing.T) {
	if testing.Short() {
		t.Skip("npm reference servers: not in -short")
	}
	dir := t.TempDir()
	args, configured, aliceDir, bobDir, carolDir := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	fs := testutil.NPMServer(t, "server-filesystem")
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
		"fs":  map[string]any{"command": "node", "args": []string{fs, args}},
		"fsr": map[string]any{"command": "node", "args": []string{fs, args}, "roots": []string{configured}},
	}})
	h := routertest.NewWithConfig(t, dir, cfg, map[string]string{"EVOKORE_CHILD_SERVER_BOOT_TIMEOUT_MS": "20000"})
	ts := httptest.NewServer(h.HTTP(func(r *http.Request) ingress.SessionOptions {
		return ingress.SessionOptions{Identity: session.Identity{Subject: r.Header.Get(subjectHeader), Tenant: "team"}}
	}, nil))
	t.Cleanup(ts.Close)

	alice := connectWithRoots(t, ts.URL, "alice", "2025-11-25", aliceDir)
	h.Booted()
	// Each child has decided where its allowed folders come from once it
	// says so on stderr: fs from its arguments (it was offered no roots),
	// fsr from the roots evokore answered.
	const fromArgs, fromRoots = "Client does not support MCP Roots", "Updated allowed directories from MCP roots"
	decided := func(id string) string {
		for line := range strings.Lines(h.Stderr.String()) {
			if rest, ok := strings.CutPrefix(line, "["+id+"] "); ok && (strings.HasPrefix(rest, fromArgs) || strings.HasPrefix(rest, fromRoots)) {
				return rest
			}
		}
		return ""
	}
	routertest.WaitFor(t, "the children's roots decided", func() bool { return decided("fs") != "" && decided("fsr") != "" })
	if got := decided("fs"); !strings.HasPrefix(got, fromArgs) {
		t.Errorf("fs was given roots: %q", got)
	}
	if got := decided("fsr"); !strings.HasPrefix(got, fromRoots+": 1 valid") {
		t.Errorf("fsr was not given its one configured root: %q", got)
	}
	bob := connectWithRoots(t, ts.URL, "bob", "2025-11-25", bobDir)
	carol := connectWithRoots(t, ts.URL, "carol", "2026-07-28", carolDir)
	for who, cs := range map[string]*mcp.ClientSession{"alice": alice, "bob": bob, "carol": carol} {
		if got := allowed(t, cs, "fs_list_allowed_directories"); got != args {
			t.Errorf("%s sees fs allowed %q, want only its arguments' %q", who, got, args)
		}
		if got := allowed(t, cs, "fsr_list_allowed_directories"); got != configured {
			t.Errorf("%s sees fsr allowed %q, want only the configured root %q", who, got, configured)
		}
	}
}
