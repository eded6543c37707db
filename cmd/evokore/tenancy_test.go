package main_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/golang-jwt/jwt/v5"

	"github.com/evokore/evokore/internal/approvalfeed"
	"github.com/evokore/evokore/internal/operatorkey"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// gatedCount holds fx_count for approval under every role the tests use.
const gatedCount = `roles:
  developer:
    default_permission: allow
    overrides:
      fx_count: require_approval
      fx_echo: require_approval
  admin:
    default_permission: allow
    overrides:
      fx_count: require_approval
      fx_echo: require_approval
rules:
  fx_count: require_approval
  fx_echo: require_approval
`

// feed is a raw connection to a router's approvals feed.
type feed struct {
	t *testing.T
	c *websocket.Conn
	// first is the snapshot sent on connect.
	first approvalfeed.Message
}

// feedOf connects to a router's approvals feed as token and reads its
// first frame, the snapshot.
func feedOf(t *testing.T, base, token, key string) *feed {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hdr := http.Header{"Authorization": {"Bearer " + token}}
	if key != "" {
		hdr.Set(operatorkey.Header, key)
	}
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/ws/approvals", &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		t.Fatalf("the feed refused the token: %v", err)
	}
	t.Cleanup(func() { _ = c.CloseNow() })
	f := &feed{t: t, c: c}
	f.first = f.read(ctx)
	if f.first.Type != "snapshot" {
		t.Fatalf("first frame: %+v", f.first)
	}
	return f
}

func (f *feed) read(ctx context.Context) approvalfeed.Message {
	f.t.Helper()
	_, data, err := f.c.Read(ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	var m approvalfeed.Message
	if err := json.Unmarshal(data, &m); err != nil {
		f.t.Fatal(err)
	}
	return m
}

// shows reports whether the first snapshot named the approval id.
func (f *feed) shows(id string) bool {
	return slices.ContainsFunc(f.first.Approvals, func(p policy.PendingApproval) bool { return p.ID == id })
}

// decide sends verdict on id and returns the refusal, "" when recorded.
func (f *feed) decide(id, verdict string) string {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, _ := json.Marshal(approvalfeed.Message{Type: verdict, ID: id, Ref: "r"})
	if err := f.c.Write(ctx, websocket.MessageText, b); err != nil {
		f.t.Fatal(err)
	}
	for {
		if m := f.read(ctx); m.Type == "result" {
			if m.OK {
				return ""
			}
			return m.Error
		}
	}
}

// The tenancy rule on the HTTP surfaces that name approvals: with JWT
// auth and tenant scoping, alice's held call is seen and decided through
// the approvals feed by alice only; bob, an admin of another tenant, and
// the dashboard's operator (a static token: the tenant "") neither see it
// (nor its arguments or session id) nor decide it.
func TestApprovalSurfacesFollowTheTenancyRule(t *testing.T) {
	keys := newJWKS(t)
	perms := testutil.WriteFile(t, t.TempDir(), "permissions.yml", gatedCount)
	base, router, stderr := httpRouter(t, "EVOKORE_AUTH_REQUIRED=true", "EVOKORE_AUTH_MODE=jwt", "EVOKORE_OAUTH_JWKS_URI="+keys.url,
		"EVOKORE_OAUTH_AUDIENCE=evokore", "EVOKORE_TENANT_SCOPING=true", "EVOKORE_PERMISSIONS_PATH="+perms, "EVOKORE_APPROVALS_MODE=operator")
	token := func(sub string) string {
		return keys.sign(t, jwt.MapClaims{"aud": "evokore", "sub": sub, "exp": time.Now().Add(time.Hour).Unix(), "role": "admin"})
	}
	alice, bob := token("alice"), token("bob")
	cs, err := connectWith(t, base+"/mcp", alice, nil)
	if err != nil {
		t.Fatalf("alice: %v\n%s", err, stderr.String())
	}
	routertest.WaitFor(t, "the child to boot", func() bool { return strings.Contains(stderr.String(), "Proxy bootstrap complete") })
	id := routertest.HeldApproval(t, routertest.Call(t, cs, "fx_echo", map[string]any{"message": "alice's argument"}))

	dash, _ := startDashboard(t, filepath.Join(router.Dir, "home"), "EVOKORE_DASHBOARD_TOKEN=ops", "EVOKORE_DASHBOARD_ROLE=admin")
	// Every caller below holds the operator key: what refuses them is the
	// tenancy rule.
	key := operatorKeyOf(t, filepath.Join(router.Dir, "home"))
	dashboardAPI := func(method, path, body string) (int, string) {
		req, _ := http.NewRequest(method, dash+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer ops")
		req.Header.Set(operatorkey.Header, key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	type surface struct {
		// sees reports whether the caller is shown the approval; decide
		// approves it and reports the refusal ("" when recorded).
		sees   func() bool
		decide func() string
	}
	feedSurface := func(tok string) surface {
		f := feedOf(t, base, tok, key)
		return surface{sees: func() bool { return f.shows(id) }, decide: func() string { return f.decide(id, "approve") }}
	}
	dashboardSurface := surface{
		sees: func() bool {
			_, body := dashboardAPI("GET", "/api/approvals", "")
			return strings.Contains(body, id) || strings.Contains(body, "alice's argument")
		},
		decide: func() string {
			code, body := dashboardAPI("POST", "/api/approvals/approve", `{"id":"`+id+`"}`)
			if code == 200 {
				return ""
			}
			return body
		},
	}
	// Refusals first: alice's own approval, last, lets the call run.
	for _, c := range []struct {
		name    string
		surface surface
		owner   bool
	}{
		{"bob (admin of another tenant) on the feed", feedSurface(bob), false},
		{"the dashboard's operator (static token, tenant \"\")", dashboardSurface, false},
		{"alice on the feed", feedSurface(alice), true},
	} {
		if got := c.surface.sees(); got != c.owner {
			t.Errorf("%s: sees alice's approval %v, want %v", c.name, got, c.owner)
		}
		refusal := c.surface.decide()
		if (refusal == "") != c.owner {
			t.Errorf("%s: approve refused %q, want refused %v", c.name, refusal, !c.owner)
		}
		if !c.owner {
			if got := routertest.HeldApproval(t, routertest.Call(t, cs, "fx_echo", map[string]any{"message": "alice's argument"})); got != id {
				t.Fatalf("%s: the held approval changed to %s", c.name, got)
			}
		}
	}
	if text, isErr := routertest.CallText(t, cs, "fx_echo", map[string]any{"message": "alice's argument"}); isErr {
		t.Errorf("alice's approved call did not run: %s", text)
	}
}

// A static token has exactly the role its configuration gives it: with
// EVOKORE_ROLE=developer the MCP client's own token may see and deny its
// held call on the feed, never approve it.
func TestStaticTokenHasTheConfiguredRoleOnTheFeed(t *testing.T) {
	perms := testutil.WriteFile(t, t.TempDir(), "permissions.yml", gatedCount)
	base, router, stderr := httpRouter(t, "EVOKORE_AUTH_REQUIRED=true", "EVOKORE_AUTH_TOKEN=client-token", "EVOKORE_ROLE=developer",
		"EVOKORE_PERMISSIONS_PATH="+perms, "EVOKORE_APPROVALS_MODE=operator")
	cs, err := connectWith(t, base+"/mcp", "client-token", nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	routertest.WaitFor(t, "the child to boot", func() bool { return strings.Contains(stderr.String(), "Proxy bootstrap complete") })
	id := routertest.HeldApproval(t, routertest.Call(t, cs, "fx_count", map[string]any{}))
	f := feedOf(t, base, "client-token", operatorKeyOf(t, filepath.Join(router.Dir, "home")))
	if !f.shows(id) {
		t.Fatalf("the developer's feed does not show its own held call")
	}
	if refusal := f.decide(id, "approve"); !strings.Contains(refusal, "needs the admin role") {
		t.Errorf("the client approved its own call through the feed: %q", refusal)
	}
	if got := routertest.HeldApproval(t, routertest.Call(t, cs, "fx_count", map[string]any{})); got != id {
		t.Errorf("the held approval changed to %s", got)
	}
}
