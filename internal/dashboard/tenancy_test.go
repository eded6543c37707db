package dashboard_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/dashboard"
	"github.com/evokore/evokore/internal/policy"
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
	post := map[string]string{"Authorization": "Bearer " + secret, "Content-Type": "application/json"}
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
