package dashboard_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/dashboard"
	"github.com/evokore/evokore/internal/ingress"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// The tenancy rule on every dashboard surface that names a session: the
// dashboard's callers (a static token: the tenant "") see their own
// tenant's session, approval, replay and audit lines, and nothing of a
// tenant-scoped HTTP session's.
func TestDashboardSurfacesFollowTheTenancyRule(t *testing.T) {
	home := t.TempDir()
	now := time.Now()
	store := filepath.Join(home, "session-store")
	if err := os.MkdirAll(store, 0o700); err != nil {
		t.Fatal(err)
	}
	for id, tenant := range map[string]string{"own-session": "", "acme-session": "acme"} {
		b, _ := json.Marshal(map[string]any{"sessionId": id, "createdAt": now.UnixMilli(), "lastAccessedAt": now.UnixMilli(), "role": "admin", "tenantId": tenant})
		if err := os.WriteFile(filepath.Join(store, id+".json"), b, 0o600); err != nil {
			t.Fatal(err)
		}
		routerSession(t, home, id, now, "fx_echo_"+id)
	}
	writeLines(t, filepath.Join(home, "audit", "audit.jsonl"),
		map[string]any{"timestamp": iso(now), "eventType": "tool_call", "sessionId": "own-session", "tool": "fx_echo_own-session"},
		map[string]any{"timestamp": iso(now), "eventType": "tool_call", "sessionId": "acme-session", "tool": "fx_echo_acme-session"})
	// A live router (this process) holds one call of each tenant.
	approvals, _ := json.Marshal(map[string]any{"pid": os.Getpid(), "router": "t", "approvals": []policy.PendingApproval{
		{ID: "00000000000000aa", ToolName: "fx_echo", Session: "own-session", Arguments: "own argument", State: policy.StatePending, CreatedAt: now.UnixMilli(), ExpiresAt: now.Add(time.Hour).UnixMilli()},
		{ID: "00000000000000bb", ToolName: "fx_echo", Session: "acme-session", Tenant: "acme", Arguments: "acme argument", State: policy.StatePending, CreatedAt: now.UnixMilli(), ExpiresAt: now.Add(time.Hour).UnixMilli()},
	}})
	if err := os.MkdirAll(filepath.Join(home, "approvals"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "approvals", "pending-t.json"), approvals, 0o600); err != nil {
		t.Fatal(err)
	}
	_, base := served(t, dashboard.Options{Home: home, Token: secret, Role: "admin"})
	hdr := bearerHdr(secret)
	post := withKey(t, home, map[string]string{"Authorization": "Bearer " + secret, "Content-Type": "application/json"})
	for _, c := range []struct {
		surface    string
		read       func() string
		own, other string // what names each tenant's record in the answer
	}{
		{"the session list", func() string { return do(t, "GET", base+"/api/sessions", hdr, "").body }, "own-session", "acme-session"},
		{"the session page", func() string {
			return do(t, "GET", base+"/", map[string]string{"Authorization": "Bearer " + secret, "Accept": "text/html"}, "").body
		}, "own-session", "acme-session"},
		{"the replay", func() string {
			return do(t, "GET", base+"/api/sessions/own-session/replay", hdr, "").body + do(t, "GET", base+"/api/sessions/acme-session/replay", hdr, "").body
		}, "fx_echo_own-session", "fx_echo_acme-session"},
		{"the replay page", func() string {
			return do(t, "GET", base+"/sessions/acme-session", map[string]string{"Authorization": "Bearer " + secret, "Accept": "text/html"}, "").body +
				do(t, "GET", base+"/sessions/own-session", map[string]string{"Authorization": "Bearer " + secret, "Accept": "text/html"}, "").body
		}, "fx_echo_own-session", "fx_echo_acme-session"},
		{"the audit log", func() string { return do(t, "GET", base+"/api/audit", hdr, "").body }, "fx_echo_own-session", "fx_echo_acme-session"},
		{"the approvals", func() string { return do(t, "GET", base+"/api/approvals", hdr, "").body }, "own argument", "acme argument"},
		{"deciding", func() string {
			return do(t, "POST", base+"/api/approvals/deny", post, `{"id":"00000000000000aa"}`).body +
				do(t, "POST", base+"/api/approvals/deny", post, `{"id":"00000000000000bb"}`).body
		}, `"id":"00000000000000aa","ok":true`, `"id":"00000000000000bb","ok":true`},
	} {
		got := c.read()
		if !strings.Contains(got, c.own) {
			t.Errorf("%s does not show the caller's own tenant's record %q:\n%s", c.surface, c.own, got)
		}
		if strings.Contains(got, c.other) {
			t.Errorf("%s shows another tenant's record %q:\n%s", c.surface, c.other, got)
		}
	}
}

// A tenant's HTTP session on a router that keeps its sessions in memory
// (the default: no store the dashboard could read to learn the tenant)
// still shows nowhere on the dashboard: its replay lives under the
// tenant's home, and its audit lines carry the tenant. A local session of
// the same router shows on every surface.
func TestDashboardHidesATenantsSessionOfARouterWithoutAStore(t *testing.T) {
	h := routertest.New(t, map[string]any{}, nil)
	ts := httptest.NewServer(h.HTTP(func(*http.Request) ingress.SessionOptions {
		return ingress.SessionOptions{Role: "admin", Identity: session.Identity{Subject: "alice", Tenant: "acme"}}
	}, nil))
	t.Cleanup(ts.Close)
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "tenant", Version: "1"}, nil)
	acme, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = acme.Close() })
	local := h.Connect(nil)
	for _, cs := range []*mcp.ClientSession{acme, local} {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "proxy_server_status", Arguments: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
	}
	var localID string
	for _, s := range h.Server.Sessions() {
		if s.ID != acme.ID() {
			localID = s.ID
		}
	}
	home := h.Settings.Home
	// Both sessions' records are written (asynchronously, wherever the
	// router keeps them) before the dashboard is asked.
	replays := func() (n int) {
		_ = filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
			if err == nil && (d.Name() == acme.ID()+"-replay.jsonl" || d.Name() == localID+"-replay.jsonl") {
				n++
			}
			return nil
		})
		return n
	}
	routertest.WaitFor(t, "both replays and both audit lines", func() bool {
		audit, _ := os.ReadFile(filepath.Join(home, "audit", "audit.jsonl"))
		return replays() == 2 && strings.Contains(string(audit), acme.ID()) && strings.Contains(string(audit), localID)
	})

	_, base := served(t, dashboard.Options{Home: home, Token: secret, Role: "admin"})
	hdr := bearerHdr(secret)
	for _, c := range []struct {
		surface string
		read    func(id string) string
	}{
		{"the session list", func(string) string { return do(t, "GET", base+"/api/sessions", hdr, "").body }},
		{"the replay", func(id string) string { return do(t, "GET", base+"/api/sessions/"+id+"/replay", hdr, "").body }},
		{"the audit log", func(string) string { return do(t, "GET", base+"/api/audit", hdr, "").body }},
	} {
		if got := c.read(localID); !strings.Contains(got, localID) && !strings.Contains(got, "proxy_server_status") {
			t.Errorf("%s does not show the local session %s:\n%s", c.surface, localID, got)
		}
		if got := c.read(acme.ID()); strings.Contains(got, acme.ID()) || (c.surface == "the replay" && strings.Contains(got, "proxy_server_status")) {
			t.Errorf("%s shows the tenant's session %s:\n%s", c.surface, acme.ID(), got)
		}
	}
}
