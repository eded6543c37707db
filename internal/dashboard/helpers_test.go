package dashboard_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/dashboard"
	"github.com/evokore/evokore/internal/operatorkey"
)

// clock is a settable clock for lockout tests.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func writeLines(t *testing.T, path string, lines ...any) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, l := range lines {
		j, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func iso(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// hookSession writes a Claude Code hook session in the formats of the
// hooks: the manifest, the replay and the evidence file.
func hookSession(t *testing.T, home, id, purpose string, start time.Time, tools ...string) {
	t.Helper()
	dir := filepath.Join(home, "sessions")
	writeLines(t, filepath.Join(dir, id+".jsonl"),
		map[string]any{"schemaVersion": 1, "ts": iso(start), "sessionId": id, "type": "session_initialized", "payload": map[string]any{"workspaceRoot": "/repo"}},
		map[string]any{"schemaVersion": 1, "ts": iso(start.Add(time.Second)), "sessionId": id, "type": "purpose_recorded", "payload": map[string]any{"purpose": purpose}})
	var replay []any
	for i, tool := range tools {
		outcome := "ok"
		if strings.HasPrefix(tool, "!") {
			tool, outcome = tool[1:], "error"
		}
		// Uneven spacing and latencies, as real sessions have.
		at := start.Add(time.Duration(2+i*i) * time.Second)
		replay = append(replay, map[string]any{"ts": iso(at), "tool": tool,
			"summary": fmt.Sprintf("call %d of %s", i, tool), "outcome": outcome, "latency_ms": 5 + (i*37)%90})
	}
	writeLines(t, filepath.Join(dir, id+"-replay.jsonl"), replay...)
	writeLines(t, filepath.Join(dir, id+"-evidence.jsonl"),
		map[string]any{"ts": iso(start.Add(3 * time.Second)), "type": "test-result", "tool": "Bash", "evidence_id": "E-001", "summary": "go test ./...", "passed": true},
		map[string]any{"ts": iso(start.Add(4 * time.Second)), "type": "test-result", "tool": "Bash", "evidence_id": "E-002", "summary": "go test ./broken", "passed": false})
}

// routerSession writes only a replay file, as a router records its own
// sessions.
func routerSession(t *testing.T, home, id string, start time.Time, tools ...string) {
	t.Helper()
	var replay []any
	for i, tool := range tools {
		replay = append(replay, map[string]any{"ts": iso(start.Add(time.Duration(i) * time.Second)), "tool": tool, "summary": "{}", "outcome": "ok", "latency_ms": 3})
	}
	writeLines(t, filepath.Join(home, "sessions", id+"-replay.jsonl"), replay...)
}

// served starts a dashboard over opts and returns its URL.
func served(t *testing.T, opts dashboard.Options) (*dashboard.Dashboard, string) {
	t.Helper()
	d, err := dashboard.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(d.Handler())
	t.Cleanup(ts.Close)
	t.Cleanup(d.Close) // first: the live streams end before the server waits for them
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	return d, ts.URL
}

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

type reply struct {
	status int
	header http.Header
	body   string
}

func do(t *testing.T, method, url string, hdr map[string]string, body string) reply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return reply{res.StatusCode, res.Header, string(b)}
}

var csrfMeta = regexp.MustCompile(`<meta name="csrf-token" content="([0-9a-f]{64})">`)

// browserSession loads page like a browser and returns its cookie header
// and CSRF token.
func browserSession(t *testing.T, url string) (cookie, csrf string) {
	t.Helper()
	r := do(t, "GET", url, map[string]string{"Accept": "text/html"}, "")
	m := csrfMeta.FindStringSubmatch(r.body)
	if r.status != 200 || m == nil {
		t.Fatalf("GET %s: %d, no CSRF token in\n%s", url, r.status, r.body)
	}
	c := r.header.Get("Set-Cookie")
	if !strings.Contains(c, "HttpOnly") || !strings.Contains(c, "SameSite=Strict") {
		t.Fatalf("session cookie %q lacks HttpOnly or SameSite=Strict", c)
	}
	return strings.SplitN(c, ";", 2)[0], m[1]
}

func newReq(method, u string) (*http.Request, error) { return http.NewRequest(method, u, nil) }

// operatorKey is home's operator key (made if there is none).
func operatorKey(t *testing.T, home string) string {
	t.Helper()
	if _, err := operatorkey.Load(home); err != nil {
		t.Fatal(err)
	}
	k, err := operatorkey.Read(home)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// withKey adds home's operator key to hdr, as an API client deciding
// approvals sends it.
func withKey(t *testing.T, home string, hdr map[string]string) map[string]string {
	t.Helper()
	if hdr == nil {
		hdr = map[string]string{}
	}
	hdr[operatorkey.Header] = operatorKey(t, home)
	return hdr
}

// operatorBrowser signs a browser in with home's operator key on the
// login page, as an operator does, and returns its cookie header and
// CSRF token.
func operatorBrowser(t *testing.T, base, home string) (cookie, csrf string) {
	t.Helper()
	cookie, csrf = browserSession(t, base+"/login")
	r := do(t, "POST", base+"/login", map[string]string{"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"},
		url.Values{"csrf_token": {csrf}, "token": {operatorKey(t, home)}}.Encode())
	if r.status != http.StatusSeeOther {
		t.Fatalf("sign in with the operator key: %d %s", r.status, r.body)
	}
	signedIn := strings.SplitN(r.header.Get("Set-Cookie"), ";", 2)[0]
	page := do(t, "GET", base+"/approvals", map[string]string{"Cookie": signedIn, "Accept": "text/html"}, "")
	m := csrfMeta.FindStringSubmatch(page.body)
	if page.status != 200 || m == nil {
		t.Fatalf("the approvals page after signing in: %d", page.status)
	}
	return signedIn, m[1]
}
