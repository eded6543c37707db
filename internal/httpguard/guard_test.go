package httpguard_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/auth"
	"github.com/evokore/evokore/internal/httpguard"
)

// The Host and Origin checks: loopback names pass, configured ones pass,
// anything else is refused before the handler or the token is looked at.
func TestHostAndOriginChecks(t *testing.T) {
	reached := 0
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { reached++; w.WriteHeader(204) })
	g := httpguard.New(httpguard.Options{Hosts: []string{"router.internal", "10.0.0.5:3100"}, Origins: []string{"https://app.example"}}).Wrap(h)
	cases := []struct {
		host, origin string
		want         int
	}{
		{"127.0.0.1:3100", "", 204},
		{"localhost:3100", "", 204},
		{"LOCALHOST", "", 204},
		{"[::1]:3100", "", 204},
		{"router.internal:8080", "", 204},
		{"10.0.0.5:3100", "", 204},
		{"10.0.0.5:3101", "", 403},
		{"evil.example:3100", "", 403},
		{"127.0.0.1.evil.example", "", 403},
		{"", "", 403},
		{"127.0.0.1:3100", "http://localhost:5173", 204},
		{"127.0.0.1:3100", "http://[::1]:8080", 204},
		{"127.0.0.1:3100", "https://app.example", 204},
		{"127.0.0.1:3100", "https://app.example.evil", 403},
		{"127.0.0.1:3100", "null", 403},
		{"127.0.0.1:3100", "file://localhost", 403},
		// A page of the surface's own (accepted) host and port.
		{"router.internal:8080", "http://router.internal:8080", 204},
		{"router.internal:8080", "http://router.internal:9090", 403},
	}
	for _, c := range cases {
		reached = 0
		req := httptest.NewRequest("POST", "/mcp?x=1", strings.NewReader("{}"))
		req.Host = c.host
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, req)
		if rec.Code != c.want || (c.want == 403) != (reached == 0) {
			t.Errorf("Host %q Origin %q: %d (handler reached %d times), want %d", c.host, c.origin, rec.Code, reached, c.want)
		}
		if rec.Header().Get("X-Content-Type-Options") != "nosniff" || rec.Header().Get("Content-Security-Policy") != httpguard.DefaultCSP {
			t.Errorf("Host %q: security headers missing: %v", c.host, rec.Header())
		}
	}
}

// The zero guard is loopback-only and names every caller; with an
// authenticator a bad token never reaches the handler, and an optional
// surface lets a request without credentials through without a caller.
func TestCredentials(t *testing.T) {
	var got []string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := httpguard.CallerFrom(r.Context())
		if ok {
			got = append(got, c.Role+"/"+c.Tenant)
		} else {
			got = append(got, "anonymous")
		}
	})
	send := func(g http.Handler, token string) int {
		req := httptest.NewRequest("GET", "/", nil)
		req.Host = "127.0.0.1:3100"
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, req)
		return rec.Code
	}
	identify := func(p auth.Principal) httpguard.Caller { return httpguard.Caller{Role: "developer", Tenant: p.Subject} }
	if code := send(httpguard.New(httpguard.Options{}).Wrap(h), ""); code != 200 || got[0] != "/" {
		t.Errorf("zero guard: %d %v", code, got)
	}
	got = nil
	strict := httpguard.New(httpguard.Options{Auth: auth.NewStatic([]string{"t"}), Identify: identify}).Wrap(h)
	if send(strict, "") != 401 || send(strict, "x") != 401 || send(strict, "t") != 200 || len(got) != 1 || got[0] != "developer/" {
		t.Errorf("static token: %v", got)
	}
	got = nil
	optional := httpguard.New(httpguard.Options{Auth: auth.NewStatic([]string{"t"}), Optional: true, Identify: identify}).Wrap(h)
	if send(optional, "") != 200 || send(optional, "x") != 401 || send(optional, "t") != 200 || len(got) != 2 || got[0] != "anonymous" || got[1] != "developer/" {
		t.Errorf("optional token: %v", got)
	}
}
