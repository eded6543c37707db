package httpfront_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/auth"
	"github.com/evokore/evokore/internal/httpfront"
)

// The Host and Origin checks: loopback names pass, configured ones pass,
// anything else is refused before the MCP handler or the token is looked
// at; /health is answered whatever the Host.
func TestHostAndOriginChecks(t *testing.T) {
	reached := 0
	mcp := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { reached++; w.WriteHeader(204) })
	front := httpfront.New(httpfront.Options{MCP: mcp, AllowedHosts: []string{"router.internal", "10.0.0.5:3100"}, AllowedOrigins: []string{"https://app.example"}})
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
	}
	for _, c := range cases {
		reached = 0
		req := httptest.NewRequest("POST", "/mcp?x=1", strings.NewReader("{}"))
		req.Host = c.host
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		rec := httptest.NewRecorder()
		front.ServeHTTP(rec, req)
		if rec.Code != c.want || (c.want == 403) != (reached == 0) {
			t.Errorf("Host %q Origin %q: %d (handler reached %d times), want %d", c.host, c.origin, rec.Code, reached, c.want)
		}
	}
	req := httptest.NewRequest("GET", "/health", nil)
	req.Host = "10.1.2.3:3100"
	rec := httptest.NewRecorder()
	front.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Errorf("/health from a load balancer: %d", rec.Code)
	}
	// Without auth there is no metadata to discover.
	rec = httptest.NewRecorder()
	front.ServeHTTP(rec, httptest.NewRequest("GET", httpfront.MetadataPath, nil))
	if rec.Code != 404 {
		t.Errorf("metadata without auth: %d", rec.Code)
	}
}

// Health details carry the router's problems; the metadata URL follows
// the configured resource.
func TestHealthDetailsAndConfiguredResource(t *testing.T) {
	front := httpfront.New(httpfront.Options{
		MCP: http.NotFoundHandler(), Auth: auth.NewStatic([]string{"t"}),
		Health:   func() []string { return []string{"permissions.yml could not be read"} },
		Resource: "https://mcp.example.com/team/mcp",
	})
	rec := httptest.NewRecorder()
	front.ServeHTTP(rec, httptest.NewRequest("GET", "/health", nil))
	if want := `{"status":"ok","transport":"streamable-http","details":["permissions.yml could not be read"]}` + "\n"; rec.Body.String() != want {
		t.Errorf("/health = %s", rec.Body.String())
	}
	rec = httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/mcp", nil)
	req.Host = "localhost:3100"
	front.ServeHTTP(rec, req)
	if rec.Code != 401 {
		t.Errorf("no token: %d", rec.Code)
	}
	if got := rec.Header().Get("WWW-Authenticate"); got != `Bearer realm="evokore-mcp", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/team/mcp"` {
		t.Errorf("challenge = %s", got)
	}
}
