package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/proxy"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// A subject child's subjectEnv placeholders resolve, for each caller's
// instance, from that caller's entry in the tenant's owner-only
// subject-env.json and nowhere else: alice's instance sees her token and
// bob's his, though the router's environment has a value of its own; a
// caller with no entry is refused naming the file, and so is everyone
// once the file may be read by others.
func TestSubjectEnvFromTheTenantsSecretsFile(t *testing.T) {
	dir := t.TempDir()
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
		"fx": map[string]any{"command": testutil.FixtureServer(t), "args": []string{}, "scope": "subject",
			"env": map[string]any{"UPSTREAM_TOKEN": "${UPSTREAM_TOKEN}"}, "subjectEnv": []string{"UPSTREAM_TOKEN"}, "cooldownMs": 0},
	}})
	h, url := instanceRouter(t, dir, cfg, map[string]string{"UPSTREAM_TOKEN": "the-router's-own"})
	tenantHome := session.TenantHome(filepath.Join(h.Dir, "home"), "team")
	if err := os.MkdirAll(tenantHome, 0o700); err != nil {
		t.Fatal(err)
	}
	secrets := filepath.Join(tenantHome, proxy.SubjectEnvFile)
	if err := os.WriteFile(secrets, []byte(`{"alice": {"UPSTREAM_TOKEN": "alice-secret"}, "bob": {"UPSTREAM_TOKEN": "bob-secret"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	alice := connectWithRoots(t, url, "alice", "2025-11-25", t.TempDir())
	h.Booted()
	bob := connectWithRoots(t, url, "bob", "2025-11-25", t.TempDir())
	carol := connectWithRoots(t, url, "carol", "2025-11-25", t.TempDir())
	for cs, want := range map[string]string{"alice": "UPSTREAM_TOKEN=alice-secret", "bob": "UPSTREAM_TOKEN=bob-secret"} {
		sess := alice
		if cs == "bob" {
			sess = bob
		}
		if got := routertest.Text(routertest.Call(t, sess, "fx_env", map[string]any{"name": "UPSTREAM_TOKEN"})); got != want {
			t.Errorf("%s's instance reads %q, want %q", cs, got, want)
		}
	}
	r := routertest.Call(t, carol, "fx_env", map[string]any{"name": "UPSTREAM_TOKEN"})
	if text := routertest.Text(r); !r.IsError || !strings.Contains(text, secrets) || !strings.Contains(text, "no entry for this caller's subject") || strings.Contains(text, "router's-own") {
		t.Errorf("carol, who has no entry: %q", text)
	}

	// Readable by others: refused, naming the file, for a new instance.
	if err := os.Chmod(secrets, 0o644); err != nil {
		t.Fatal(err)
	}
	dave := connectWithRoots(t, url, "dave", "2025-11-25", t.TempDir())
	if err := os.WriteFile(secrets, []byte(`{"dave": {"UPSTREAM_TOKEN": "dave-secret"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r = routertest.Call(t, dave, "fx_env", map[string]any{"name": "UPSTREAM_TOKEN"})
	if text := routertest.Text(r); !r.IsError || !strings.Contains(text, secrets) || !strings.Contains(text, "may be read by other users") {
		t.Errorf("dave, with the file readable by others: %q", text)
	}
}
