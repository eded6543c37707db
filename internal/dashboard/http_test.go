package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/audit"
	"github.com/evokore/evokore/internal/dashboard"
	"github.com/evokore/evokore/internal/events"
	"github.com/evokore/evokore/internal/sessionstore"
	"github.com/evokore/evokore/internal/testutil"
)

const secret = "correct-horse-battery-staple"

func bearerHdr(tok string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + tok}
}

func TestTokenAuth(t *testing.T) {
	_, base := served(t, dashboard.Options{Home: t.TempDir(), Token: secret})

	r := do(t, "GET", base+"/api/sessions", nil, "")
	if r.status != 401 || !strings.Contains(r.header.Get("WWW-Authenticate"), "Bearer") || !strings.Contains(r.body, "Unauthorized") {
		t.Errorf("no credentials: %d %q %s", r.status, r.header.Get("WWW-Authenticate"), r.body)
	}
	r = do(t, "GET", base+"/", map[string]string{"Accept": "text/html"}, "")
	if r.status != 302 || r.header.Get("Location") != "/login" {
		t.Errorf("a page without credentials: %d to %q", r.status, r.header.Get("Location"))
	}
	if r = do(t, "GET", base+"/api/sessions", bearerHdr(secret), ""); r.status != 200 {
		t.Errorf("the right bearer token: %d %s", r.status, r.body)
	}
	if r = do(t, "GET", base+"/api/sessions", bearerHdr(secret+"x"), ""); r.status != 401 {
		t.Errorf("a wrong bearer token: %d", r.status)
	}
	r = do(t, "GET", base+"/api/auth/status", nil, "")
	var st map[string]any
	_ = json.Unmarshal([]byte(r.body), &st)
	if r.status != 200 || st["authenticated"] != false || st["mode"] != "token" || st["role"] != nil {
		t.Errorf("auth status without credentials: %d %v", r.status, st)
	}
	r = do(t, "GET", base+"/api/auth/status", bearerHdr(secret), "")
	_ = json.Unmarshal([]byte(r.body), &st)
	if st["authenticated"] != true || st["role"] != "readonly" {
		t.Errorf("auth status with the token (default role readonly): %v", st)
	}

	// The login page: a wrong token is refused, the right one sets a
	// session cookie that opens the pages.
	cookie, csrf := browserSession(t, base+"/login")
	form := func(tok string) string {
		return url.Values{"csrf_token": {csrf}, "token": {tok}}.Encode()
	}
	h := map[string]string{"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded", "Origin": base}
	if r = do(t, "POST", base+"/login", h, form("nope")); r.status != 401 || !strings.Contains(r.body, "Invalid token") {
		t.Errorf("login with a wrong token: %d", r.status)
	}
	r = do(t, "POST", base+"/login", h, form(secret))
	if r.status != 303 || r.header.Get("Location") != "/" {
		t.Fatalf("login: %d %s", r.status, r.body)
	}
	authed := strings.SplitN(r.header.Get("Set-Cookie"), ";", 2)[0]
	if authed == cookie {
		t.Error("login kept the pre-login session id")
	}
	if r = do(t, "GET", base+"/", map[string]string{"Cookie": authed, "Accept": "text/html"}, ""); r.status != 200 || !strings.Contains(r.body, "<h1>Sessions</h1>") {
		t.Errorf("the session list after login: %d", r.status)
	}
	if r = do(t, "GET", base+"/", map[string]string{"Cookie": cookie, "Accept": "text/html"}, ""); r.status != 302 {
		t.Errorf("the pre-login cookie opened a page: %d", r.status)
	}
}

func TestLockoutAfterFiveFailures(t *testing.T) {
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	_, base := served(t, dashboard.Options{Home: t.TempDir(), Token: secret, Now: clk.Now})
	for i := range 5 {
		if r := do(t, "GET", base+"/api/sessions", bearerHdr(fmt.Sprint("wrong", i)), ""); r.status != 401 {
			t.Fatalf("failure %d: %d", i, r.status)
		}
	}
	r := do(t, "GET", base+"/api/sessions", bearerHdr(secret), "")
	if r.status != 429 || r.header.Get("Retry-After") == "" {
		t.Fatalf("after 5 failures the right token got %d (want 429)", r.status)
	}
	if r = do(t, "GET", base+"/login", nil, ""); r.status != 429 {
		t.Errorf("the login page while locked out: %d", r.status)
	}
	clk.Advance(5*time.Minute - time.Second)
	if r = do(t, "GET", base+"/api/sessions", bearerHdr(secret), ""); r.status != 429 {
		t.Errorf("just before the lockout ends: %d", r.status)
	}
	clk.Advance(time.Second)
	if r = do(t, "GET", base+"/api/sessions", bearerHdr(secret), ""); r.status != 200 {
		t.Errorf("after the lockout: %d", r.status)
	}
	// Failures spread over more than 60 s do not lock.
	for i := range 8 {
		do(t, "GET", base+"/api/sessions", bearerHdr("wrong"), "")
		clk.Advance(16 * time.Second)
		_ = i
	}
	if r = do(t, "GET", base+"/api/sessions", bearerHdr(secret), ""); r.status != 200 {
		t.Errorf("4 failures a minute locked the address out: %d", r.status)
	}
}

// Every route against every role.
func TestRoleMatrix(t *testing.T) {
	const unknownID = "0123456789abcdef"
	type route struct {
		method, path, body string
		need               string
	}
	routes := []route{
		{"GET", "/", "", "readonly"},
		{"GET", "/dashboard", "", "readonly"},
		{"GET", "/sessions/s1", "", "readonly"},
		{"GET", "/api/sessions", "", "readonly"},
		{"GET", "/api/sessions/types", "", "readonly"},
		{"GET", "/api/sessions/s1/replay", "", "readonly"},
		{"GET", "/api/sessions/s1/evidence", "", "readonly"},
		{"GET", "/approvals", "", "developer"},
		{"GET", "/api/approvals", "", "developer"},
		{"POST", "/api/approvals/deny", `{"id":"` + unknownID + `"}`, "developer"},
		{"POST", "/api/approvals/approve", `{"id":"` + unknownID + `"}`, "admin"},
		{"GET", "/audit", "", "admin"},
		{"GET", "/api/audit", "", "admin"},
		{"GET", "/api/audit/summary", "", "admin"},
	}
	rank := map[string]int{"readonly": 1, "developer": 2, "admin": 3}
	for _, role := range []string{"readonly", "developer", "admin"} {
		home := t.TempDir()
		hookSession(t, home, "s1", "check the matrix", time.Now(), "Read")
		_, base := served(t, dashboard.Options{Home: home, Token: secret, Role: role})
		for _, rt := range routes {
			hdr := withKey(t, home, bearerHdr(secret))
			hdr["Content-Type"] = "application/json"
			r := do(t, rt.method, base+rt.path, hdr, rt.body)
			want := 200
			if rt.method == "POST" {
				want = 404 // allowed, and no such approval
			}
			if rank[role] < rank[rt.need] {
				want = 403
			}
			if r.status != want {
				t.Errorf("%s %s %s: %d, want %d (%s)", role, rt.method, rt.path, r.status, want, r.body)
			}
		}
	}
	_, base := served(t, dashboard.Options{Home: t.TempDir()})
	if r := do(t, "GET", base+"/no/such/route", nil, ""); r.status != 404 || !strings.Contains(r.body, `"Not found"`) {
		t.Errorf("an unknown route: %d %s", r.status, r.body)
	}
}

func TestCSRFRejected(t *testing.T) {
	home := t.TempDir()
	_, base := served(t, dashboard.Options{Home: home})
	cookie, csrf := operatorBrowser(t, base, home)
	body := `{"id":"0123456789abcdef"}`
	for _, tc := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"no cookie, no token", map[string]string{}, 403},
		{"cookie without the token", map[string]string{"Cookie": cookie}, 403},
		{"cookie with a wrong token", map[string]string{"Cookie": cookie, "X-CSRF-Token": strings.Repeat("0", 64)}, 403},
		{"token of another origin", map[string]string{"Cookie": cookie, "X-CSRF-Token": csrf, "Origin": "http://evil.example"}, 403},
		{"cross-site fetch metadata", map[string]string{"Cookie": cookie, "X-CSRF-Token": csrf, "Sec-Fetch-Site": "cross-site"}, 403},
		{"token without its cookie", map[string]string{"X-CSRF-Token": csrf}, 403},
		{"cookie and token", map[string]string{"Cookie": cookie, "X-CSRF-Token": csrf, "Origin": base}, 404},
	} {
		tc.hdr["Content-Type"] = "application/json"
		for _, verdict := range []string{"approve", "deny"} {
			r := do(t, "POST", base+"/api/approvals/"+verdict, tc.hdr, body)
			if r.status != tc.want {
				t.Errorf("%s %s: %d, want %d (%s)", verdict, tc.name, r.status, tc.want, r.body)
			}
		}
	}
	// Login is state-changing too.
	_, tokBase := served(t, dashboard.Options{Home: home, Token: secret})
	cookie, _ = browserSession(t, tokBase+"/login")
	r := do(t, "POST", tokBase+"/login", map[string]string{"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"},
		url.Values{"token": {secret}}.Encode())
	if r.status != 403 {
		t.Errorf("login without the CSRF token: %d", r.status)
	}
	// And logout.
	if r = do(t, "POST", base+"/logout", map[string]string{"Cookie": cookie}, ""); r.status != 403 {
		t.Errorf("logout without the CSRF token: %d", r.status)
	}
}

func TestSecurityHeaders(t *testing.T) {
	home := t.TempDir()
	hookSession(t, home, "s1", "headers", time.Now(), "Read")
	_, base := served(t, dashboard.Options{Home: home})
	for _, p := range []string{"/", "/sessions/s1", "/approvals", "/audit", "/api/sessions", "/api/approvals", "/static/app.js", "/static/app.css", "/nope", "/login"} {
		r := do(t, "GET", base+p, map[string]string{"Accept": "text/html"}, "")
		csp := r.header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") ||
			!strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("%s: CSP %q", p, csp)
		}
		for k, v := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "same-origin"} {
			if r.header.Get(k) != v {
				t.Errorf("%s: %s = %q", p, k, r.header.Get(k))
			}
		}
		if !strings.HasPrefix(p, "/static/") && r.header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: Cache-Control %q", p, r.header.Get("Cache-Control"))
		}
		if strings.Contains(r.body, "<script>") || strings.Contains(r.body, " style=") || strings.Contains(r.body, " onclick") {
			t.Errorf("%s has inline script or style", p)
		}
	}
	// A loopback dashboard answers only to loopback names (DNS rebinding).
	_, lb := served(t, dashboard.Options{Home: home})
	if r := do(t, "GET", lb+"/api/sessions", map[string]string{"Host": "127.0.0.1"}, ""); r.status != 200 {
		t.Errorf("Host 127.0.0.1: %d", r.status)
	}
	req := lb + "/api/sessions"
	r := doHost(t, req, "attacker.example")
	if r.status != 403 {
		t.Errorf("Host attacker.example: %d", r.status)
	}
}

func doHost(t *testing.T, u, host string) reply {
	t.Helper()
	req, _ := newReq("GET", u)
	req.Host = host
	res, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	return reply{status: res.StatusCode, header: res.Header}
}

const (
	hostileTool    = `<img src=x onerror="alert('tool')">`
	hostilePurpose = `</td><script>alert("purpose")</script>`
	hostileArgs    = `{"q":"<script>alert(1)</script>"}`
)

// A session whose id, tool names and texts are hostile is shown as text.
func TestHostileValuesEscaped(t *testing.T) {
	home := t.TempDir()
	hookSession(t, home, "s-hostile", hostilePurpose, time.Now(), hostileTool, "!"+hostileTool)
	// A session id the hooks would never write, from a shared store.
	store := sessionstore.NewMemory(0)
	evilID := `"><script>alert('id')</script>`
	_ = store.Save(context.Background(), sessionstore.Record{ID: evilID, Created: time.Now(), LastSeen: time.Now()})
	_ = store.Save(context.Background(), sessionstore.Record{ID: "http-ok", Role: "<i>admin</i>", Created: time.Now(), LastSeen: time.Now()})
	// A pending approval of a tool with a hostile name, held by a live
	// router (this process).
	pending := map[string]any{"pid": os.Getpid(), "router": "test", "approvals": []map[string]any{{
		"id": "00112233aabbccdd", "toolName": hostileTool, "session": evilID, "arguments": hostileArgs, "state": "pending",
		"createdAt": time.Now().UnixMilli(), "expiresAt": time.Now().Add(time.Hour).UnixMilli(), "router": "test"}}}
	writeLines(t, filepath.Join(home, "approvals", "pending-test.json"), pending)
	writeLines(t, filepath.Join(home, "audit", "audit.jsonl"),
		map[string]any{"timestamp": iso(time.Now()), "eventType": "<script>ev</script>", "tool": hostileTool, "sessionId": evilID})
	_, base := served(t, dashboard.Options{Home: home, Store: store})
	for _, p := range []string{"/", "/sessions/s-hostile", "/approvals", "/audit"} {
		r := do(t, "GET", base+p, map[string]string{"Accept": "text/html"}, "")
		if r.status != 200 {
			t.Fatalf("%s: %d", p, r.status)
		}
		for _, raw := range []string{"<script>alert", "<img src=x", "<i>admin"} {
			if strings.Contains(r.body, raw) {
				t.Errorf("%s renders %q unescaped", p, raw)
			}
		}
	}
	if r := do(t, "GET", base+"/sessions/s-hostile", nil, ""); !strings.Contains(r.body, "&lt;img src=x onerror=&#34;alert(&#39;tool&#39;)&#34;&gt;") {
		t.Errorf("the replay page does not show the hostile tool name as text")
	}
	if r := do(t, "GET", base+"/", nil, ""); !strings.Contains(r.body, "&lt;/td&gt;&lt;script&gt;") || strings.Contains(r.body, "alert(&#39;id&#39;)") {
		t.Errorf("the session list: purpose not escaped as text, or the invalid store id listed")
	}
	// The JSON API carries the same values as JSON strings (escaped for
	// HTML by encoding/json), never as markup.
	if r := do(t, "GET", base+"/api/approvals", nil, ""); strings.Contains(r.body, "<img") || !strings.Contains(r.body, `\u003cimg src=x`) {
		t.Errorf("approvals API: %s", r.body)
	}
}

func TestReplayIDTraversalRefused(t *testing.T) {
	home := t.TempDir()
	hookSession(t, home, "s1", "traversal", time.Now(), "Read")
	// A file a traversal would reach.
	writeLines(t, filepath.Join(home, "secret-replay.jsonl"), map[string]any{"tool": "SECRET-TOOL"})
	writeLines(t, filepath.Join(filepath.Dir(home), "outside-replay.jsonl"), map[string]any{"tool": "SECRET-TOOL"})
	_, base := served(t, dashboard.Options{Home: home})
	for _, id := range []string{"..%2Fsecret", "%2e%2e%2fsecret", "..%2F..%2Foutside", "s1%00", "s1.json", "%2E%2E", "a%5C..%5Csecret", "s1%2F..%2F..%2Fsecret"} {
		for _, p := range []string{"/api/sessions/" + id + "/replay", "/api/sessions/" + id + "/evidence", "/sessions/" + id} {
			r := do(t, "GET", base+p, nil, "")
			if strings.Contains(r.body, "SECRET-TOOL") {
				t.Errorf("%s leaked a file outside the session folder", p)
			}
			// /sessions/%2E%2E is /sessions/.. decoded, which is /: the
			// session list (the path is decoded and cleaned once).
			if r.status != 400 && r.status != 404 && p != "/sessions/%2E%2E" {
				t.Errorf("%s: %d, want 400 or 404", p, r.status)
			}
		}
	}
	if r := do(t, "GET", base+"/api/sessions/s1/replay", nil, ""); r.status != 200 || !strings.Contains(r.body, `"tool":"Read"`) {
		t.Errorf("a valid id: %d %s", r.status, r.body)
	}
}

func TestSessionListMergesSourcesNewestFirst(t *testing.T) {
	home := t.TempDir()
	now := time.Now()
	hookSession(t, home, "hook-old", "an old hook session", now.Add(-48*time.Hour), "Read", "Edit")
	routerSession(t, home, "stdio-router", now.Add(-10*time.Minute), "fx_echo", "fx_echo", "fx_count")
	// A stdio client that called a minute ago and exited: the router's
	// audit log recorded the session's end.
	routerSession(t, home, "stdio-gone", now.Add(-20*time.Minute), "fx_echo")
	audit.Append(audit.Options{Path: audit.Path(home)}, events.Event{Type: events.SessionEnd, Session: "stdio-gone", Transport: "stdio"})
	store := sessionstore.NewMemory(0)
	_ = store.Save(context.Background(), sessionstore.Record{ID: "HTTPSESSION1", Role: "developer", Activations: []string{"fx_echo"},
		Created: now.Add(-time.Minute), LastSeen: now})
	_, base := served(t, dashboard.Options{Home: home, Store: store})
	list := func(q string) []dashboard.Session {
		r := do(t, "GET", base+"/api/sessions"+q, nil, "")
		var out []dashboard.Session
		if err := json.Unmarshal([]byte(r.body), &out); err != nil || r.status != 200 {
			t.Fatalf("%s: %d %s", q, r.status, r.body)
		}
		return out
	}
	ids := func(ss []dashboard.Session) (out []string) {
		for _, s := range ss {
			out = append(out, s.ID+"="+s.Type+"/"+s.Status)
		}
		return out
	}
	all := list("")
	if got := ids(all); !slices.Equal(got, []string{"HTTPSESSION1=http/active", "stdio-router=router/active", "stdio-gone=router/ended", "hook-old=hook/idle"}) {
		t.Errorf("sessions = %v", got)
	}
	for _, s := range all {
		if s.ID == "hook-old" && (s.Purpose != "an old hook session" || s.ReplayCount != 2 || s.EvidenceCount != 2) {
			t.Errorf("hook session %+v", s)
		}
		if s.ID == "stdio-router" && s.ReplayCount != 3 {
			t.Errorf("router session %+v", s)
		}
		if s.ID == "HTTPSESSION1" && s.Metadata["role"] != "developer" {
			t.Errorf("http session %+v", s)
		}
	}
	if got := ids(list("?type=hook")); !slices.Equal(got, []string{"hook-old=hook/idle"}) {
		t.Errorf("type=hook: %v", got)
	}
	if got := ids(list("?status=active")); len(got) != 2 {
		t.Errorf("status=active: %v", got)
	}
	if got := ids(list("?status=ended")); !slices.Equal(got, []string{"stdio-gone=router/ended"}) {
		t.Errorf("status=ended: %v", got)
	}
	if got := ids(list("?since=24h")); len(got) != 3 || slices.Contains(got, "hook-old=hook/idle") {
		t.Errorf("since=24h: %v", got)
	}
	if r := do(t, "GET", base+"/api/sessions?since=yesterday", nil, ""); r.status != 400 {
		t.Errorf("a bad since: %d", r.status)
	}
	r := do(t, "GET", base+"/api/sessions/types", nil, "")
	if !strings.Contains(r.body, `"hook":1`) || !strings.Contains(r.body, `"http":1`) || !strings.Contains(r.body, `"total":4`) {
		t.Errorf("types: %s", r.body)
	}
}

func TestReplayPageShowsCountsChartAndErrors(t *testing.T) {
	home := t.TempDir()
	hookSession(t, home, "s1", "replay", time.Now().Add(-time.Hour), "Read", "Read", "Edit", "!Bash", "Read")
	_, base := served(t, dashboard.Options{Home: home})
	r := do(t, "GET", base+"/sessions/s1", nil, "")
	for _, want := range []string{`id="count-calls">5<`, `id="count-evidence">2<`, `id="count-errors">1<`, `<svg class="chart"`, `class="bar-error"`,
		`<polyline points=`, `class="ev ev-call ev-error"`, `E-002 · test-result · go test ./broken`} {
		if !strings.Contains(r.body, want) {
			t.Errorf("replay page lacks %q", want)
		}
	}
	top := r.body[strings.Index(r.body, `id="top-tools"`):]
	if i, j := strings.Index(top, "<td>Read</td>"), strings.Index(top, "<td>Edit</td>"); i < 0 || j < 0 || i > j {
		t.Errorf("top tools not ordered by calls")
	}
	if r = do(t, "GET", base+"/api/sessions/s1/evidence", nil, ""); !strings.Contains(r.body, `"evidence_id":"E-001"`) {
		t.Errorf("evidence API: %s", r.body)
	}
}

func TestAuditFiltersAndSummary(t *testing.T) {
	home := t.TempDir()
	now := time.Now()
	var lines []any
	for i, ev := range []string{"tool_call", "tool_call", "approval_requested", "tool_call", "approval_denied"} {
		lines = append(lines, map[string]any{"timestamp": iso(now.Add(time.Duration(i-5) * time.Hour)), "eventType": ev,
			"sessionId": fmt.Sprint("s", i%2), "tool": "fx_count", "outcome": "ok", "seq": i})
	}
	// The oldest two went to the rotated file.
	writeLines(t, filepath.Join(home, "audit", "audit.jsonl.1"), lines[:2]...)
	writeLines(t, filepath.Join(home, "audit", "audit.jsonl"), lines[2:]...)
	_, base := served(t, dashboard.Options{Home: home})
	type page struct {
		Entries []map[string]any `json:"entries"`
		Total   int              `json:"total"`
	}
	get := func(q string) page {
		var p page
		r := do(t, "GET", base+"/api/audit"+q, nil, "")
		if err := json.Unmarshal([]byte(r.body), &p); err != nil || r.status != 200 {
			t.Fatalf("%s: %d %s", q, r.status, r.body)
		}
		return p
	}
	seqs := func(p page) (out []float64) {
		for _, e := range p.Entries {
			out = append(out, e["seq"].(float64))
		}
		return out
	}
	if p := get(""); p.Total != 5 || !slices.Equal(seqs(p), []float64{4, 3, 2, 1, 0}) {
		t.Errorf("newest first: %v", seqs(p))
	}
	if p := get("?event=tool_call&limit=2&offset=1"); p.Total != 3 || !slices.Equal(seqs(p), []float64{1, 0}) {
		t.Errorf("event filter with a page: %d %v", p.Total, seqs(p))
	}
	if p := get("?session=s1"); !slices.Equal(seqs(p), []float64{3, 1}) {
		t.Errorf("session filter: %v", seqs(p))
	}
	if p := get("?since=150m"); !slices.Equal(seqs(p), []float64{4, 3}) {
		t.Errorf("since filter: %v", seqs(p))
	}
	if p := get("?limit=0"); len(p.Entries) != 1 {
		t.Errorf("limit is at least 1: %d", len(p.Entries))
	}
	r := do(t, "GET", base+"/api/audit/summary", nil, "")
	if !strings.Contains(r.body, `"tool_call":3`) || !strings.Contains(r.body, `"approval_denied":1`) || !strings.Contains(r.body, `"total":5`) {
		t.Errorf("summary: %s", r.body)
	}
	if r = do(t, "GET", base+"/audit?event=approval_denied", nil, ""); !strings.Contains(r.body, "1 matching entry") {
		t.Errorf("audit page filter")
	}
	r = do(t, "GET", base+"/audit?event=tool_call&limit=2", nil, "")
	if !strings.Contains(r.body, `id="older" href="/audit?event=tool_call&amp;limit=2&amp;offset=2"`) || strings.Contains(r.body, `id="newer"`) ||
		!strings.Contains(r.body, `<a href="/sessions/s1">s1</a>`) {
		t.Errorf("audit page: no pager or session link")
	}
}

// Approvals named by a malformed id are refused before anything is read.
func TestDecisionNeedsAFullID(t *testing.T) {
	home := t.TempDir()
	_, base := served(t, dashboard.Options{Home: home, Token: secret, Role: "admin"})
	for _, body := range []string{`{"id":"0123abcd"}`, `{"id":"0123456789ABCDEF"}`, `{"id":"../../x"}`, `{"token":"0123456789abcdef0123456789abcdef"}`, `not json`} {
		hdr := withKey(t, home, bearerHdr(secret))
		hdr["Content-Type"] = "application/json"
		if r := do(t, "POST", base+"/api/approvals/deny", hdr, body); r.status != 400 {
			t.Errorf("deny %s: %d %s", body, r.status, r.body)
		}
	}
}

// Without a store the dashboard reads the file session store's records
// (EVOKORE-MCP's session-store/<id>.json shape); those idle past the TTL
// are expired, and files that are not records are skipped.
func TestFileSessionStoreIsRead(t *testing.T) {
	home := t.TempDir()
	now := time.Now()
	dir := filepath.Join(home, "session-store")
	writeLines(t, filepath.Join(dir, "LIVE1.json"), map[string]any{"sessionId": "LIVE1", "createdAt": now.Add(-time.Minute).UnixMilli(),
		"lastAccessedAt": now.UnixMilli(), "activatedTools": []string{"fx_echo"}, "role": "developer"})
	writeLines(t, filepath.Join(dir, "OLD1.json"), map[string]any{"sessionId": "OLD1", "createdAt": now.Add(-3 * time.Hour).UnixMilli(),
		"lastAccessedAt": now.Add(-2 * time.Hour).UnixMilli(), "activatedTools": []string{}})
	writeLines(t, filepath.Join(dir, "MISMATCH.json"), map[string]any{"sessionId": "OTHER", "lastAccessedAt": now.UnixMilli()})
	if err := os.WriteFile(filepath.Join(dir, "BROKEN.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, base := served(t, dashboard.Options{Home: home, SessionTTL: time.Hour})
	var list []dashboard.Session
	r := do(t, "GET", base+"/api/sessions?type=http", nil, "")
	if err := json.Unmarshal([]byte(r.body), &list); err != nil {
		t.Fatal(r.body)
	}
	var got []string
	for _, s := range list {
		got = append(got, s.ID+"/"+s.Status)
	}
	if !slices.Equal(got, []string{"LIVE1/active", "OLD1/expired"}) {
		t.Errorf("http sessions = %v", got)
	}
	if r := do(t, "GET", base+"/api/sessions?status=expired", nil, ""); !strings.Contains(r.body, `"OLD1"`) || strings.Contains(r.body, "LIVE1") {
		t.Errorf("status=expired: %s", r.body)
	}
}

// New dials nothing: a feed is connected at Start, as net/http's Server
// listens at Serve and not when it is built.
func TestNewDialsNothingUntilStart(t *testing.T) {
	addr, dialed := testutil.HangUpListener(t)
	d, err := dashboard.New(dashboard.Options{Home: t.TempDir(), Feeds: []string{"ws://" + addr + "/ws/approvals"}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// The handler serves before Start; a request round trip gives any
	// dial New might have started every chance to arrive first.
	ts := httptest.NewServer(d.Handler())
	defer ts.Close()
	if r := do(t, "GET", ts.URL+"/api/auth/status", nil, ""); r.status != 200 {
		t.Fatalf("auth status before Start: %d", r.status)
	}
	select {
	case <-dialed:
		t.Fatal("New dialed the feed")
	default:
	}
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	<-dialed // Start connects the feed
}

// What the operator is shown of a held call has the characters a page
// acts on escaped, as every other surface escapes them: a pending file is
// written by any process of the user, and a tool name whose bidi
// override reverses what follows would show the operator another tool
// than the one approving runs (docs/security.md).
func TestApprovalsShowControlsEscaped(t *testing.T) {
	home := t.TempDir()
	const rlo = "\u202e" // RIGHT-TO-LEFT OVERRIDE
	ctl := rlo + "\x1b[2J\u009b\u2066\x00"
	pending := map[string]any{"pid": os.Getpid(), "router": "r" + ctl, "approvals": []map[string]any{{
		"id": "00112233aabbccdd", "toolName": "fx_echo" + rlo + "daer_elif", "session": "s" + ctl,
		"arguments": "\"message\": \"hi\"\n\"x\": \"" + ctl + "\"", "state": "pending",
		"createdAt": time.Now().UnixMilli(), "expiresAt": time.Now().Add(time.Hour).UnixMilli(), "router": "r" + ctl}}}
	writeLines(t, filepath.Join(home, "approvals", "pending-test.json"), pending)
	_, base := served(t, dashboard.Options{Home: home})
	const controls = "\u202e\x1b\u009b\u2066\x00"
	page := do(t, "GET", base+"/approvals", map[string]string{"Accept": "text/html"}, "")
	if page.status != 200 || strings.ContainsAny(page.body, controls) || !strings.Contains(page.body, `fx_echo\u202edaer_elif`) {
		t.Errorf("the approvals page shows controls raw, or not the escaped tool name (%d):\n%q", page.status, page.body)
	}
	api := do(t, "GET", base+"/api/approvals", nil, "")
	var v dashboard.ApprovalsView
	if err := json.Unmarshal([]byte(api.body), &v); err != nil || len(v.Approvals) != 1 {
		t.Fatalf("approvals API: %s", api.body)
	}
	a := v.Approvals[0]
	for _, f := range []string{a.ToolName, a.Session, a.Arguments, a.Router, a.State} {
		if strings.ContainsAny(f, controls) {
			t.Errorf("approvals API shows %q raw", f)
		}
	}
	// One argument a line still: only what a page acts on is escaped.
	if a.Arguments != "\"message\": \"hi\"\n\"x\": \"\\u202e\\u001b[2J\\u009b\\u2066\\u0000\"" || a.State != "pending" {
		t.Errorf("arguments %q, state %q", a.Arguments, a.State)
	}
}

// A page on another site cannot sign the operator out. It can make the
// browser load the dashboard's pages as images or frames (no CORS is
// needed for that, only to read the answer), and each load used to start
// a browser session; in local mode every session counts as signed in, so
// 1024 of them pushed out the operator's, whose Approve and Deny then
// failed the CSRF check. Only a top-level navigation may come from
// another site.
func TestForeignSubresourcesCannotEvictTheOperator(t *testing.T) {
	home := t.TempDir()
	_, base := served(t, dashboard.Options{Home: home})
	cookie, csrf := operatorBrowser(t, base, home)
	for i := 0; i < 1100; i++ {
		// What Chromium sends for <img src="http://127.0.0.1:8899/"> on
		// another site.
		r := do(t, "GET", base+"/", map[string]string{"Accept": "image/avif,image/webp,*/*",
			"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"}, "")
		if r.status != 403 || r.header.Get("Set-Cookie") != "" {
			t.Fatalf("a cross-site image load of /: %d, Set-Cookie %q", r.status, r.header.Get("Set-Cookie"))
		}
	}
	// The operator's session still holds: the id is unknown (404), not
	// a failed CSRF check (403).
	r := do(t, "POST", base+"/api/approvals/deny", map[string]string{"Cookie": cookie, "X-CSRF-Token": csrf,
		"Content-Type": "application/json", "Origin": base, "Sec-Fetch-Site": "same-origin"}, `{"id":"0123456789abcdef"}`)
	if r.status != 404 {
		t.Fatalf("the operator's deny after the flood: %d %s", r.status, r.body)
	}
	// A link from another site still opens the dashboard.
	nav := do(t, "GET", base+"/", map[string]string{"Accept": "text/html",
		"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}, "")
	if nav.status != 200 || !csrfMeta.MatchString(nav.body) {
		t.Errorf("a cross-site link to the dashboard: %d", nav.status)
	}
	// So does a client that sends no fetch metadata (curl, an old
	// browser).
	if r := do(t, "GET", base+"/api/sessions", nil, ""); r.status != 200 {
		t.Errorf("a plain API call: %d", r.status)
	}
}
