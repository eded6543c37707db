package httpfront_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/evokore/evokore/internal/auth"
	"github.com/evokore/evokore/internal/httpfront"
	"github.com/evokore/evokore/internal/httpguard"
)

// Every route checks the Host, the public ones included: a rebound name
// reads neither /health's details nor the metadata. Without auth there
// is no metadata to discover.
func TestEveryRouteChecksHost(t *testing.T) {
	reached := 0
	mcp := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { reached++; w.WriteHeader(204) })
	front := httpfront.New(httpfront.Options{MCP: mcp, Metrics: mcp, Approvals: mcp, Resource: "http://127.0.0.1:3100/mcp",
		Guard: httpguard.Options{Auth: auth.NewStatic([]string{"t"})}})
	for _, path := range []string{"/mcp", "/metrics", "/ws/approvals", "/health", httpfront.MetadataPath, httpfront.MetadataPath + "/mcp", "/nope"} {
		req := httptest.NewRequest("GET", path, nil)
		req.Host = "rebind.example:3100"
		req.Header.Set("Authorization", "Bearer t")
		rec := httptest.NewRecorder()
		front.ServeHTTP(rec, req)
		if rec.Code != 403 || reached != 0 {
			t.Errorf("%s with a foreign Host: %d (handler reached %d times)", path, rec.Code, reached)
		}
	}
	req := httptest.NewRequest("GET", "/health", nil)
	req.Host = "10.1.2.3:3100"
	rec := httptest.NewRecorder()
	httpfront.New(httpfront.Options{MCP: mcp, Guard: httpguard.Options{Hosts: []string{"10.1.2.3"}}}).ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Errorf("/health from a load balancer whose address is allowed: %d", rec.Code)
	}
	rec = httptest.NewRecorder()
	req = httptest.NewRequest("GET", httpfront.MetadataPath, nil)
	req.Host = "127.0.0.1:3100"
	httpfront.New(httpfront.Options{MCP: mcp}).ServeHTTP(rec, req)
	if rec.Code != 404 {
		t.Errorf("metadata without auth: %d", rec.Code)
	}
}

// Health details carry the router's problems; the metadata and the
// challenge name the configured resource whatever Host the request
// carried.
func TestHealthDetailsAndConfiguredResource(t *testing.T) {
	front := httpfront.New(httpfront.Options{
		MCP:      http.NotFoundHandler(),
		Guard:    httpguard.Options{Auth: auth.NewStatic([]string{"t"}), Hosts: []string{"mcp.example.com", "other.example"}},
		Health:   func() []string { return []string{"permissions.yml could not be read"} },
		Resource: "https://mcp.example.com/team/mcp",
	})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/health", nil)
	req.Host = "127.0.0.1:3100"
	front.ServeHTTP(rec, req)
	if want := `{"status":"ok","transport":"streamable-http","details":["permissions.yml could not be read"]}` + "\n"; rec.Body.String() != want {
		t.Errorf("/health = %s", rec.Body.String())
	}
	rec = httptest.NewRecorder()
	req = httptest.NewRequest("POST", "/mcp", nil)
	req.Host = "other.example"
	front.ServeHTTP(rec, req)
	if rec.Code != 401 {
		t.Errorf("no token: %d", rec.Code)
	}
	if got := rec.Header().Get("WWW-Authenticate"); got != `Bearer realm="evokore-mcp", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/team/mcp"` {
		t.Errorf("challenge = %s", got)
	}
	rec = httptest.NewRecorder()
	req = httptest.NewRequest("GET", httpfront.MetadataPath+"/mcp", nil)
	req.Host = "other.example"
	front.ServeHTTP(rec, req)
	if want := `{"authorization_servers":[],"bearer_methods_supported":["header"],"resource":"https://mcp.example.com/team/mcp","resource_name":"evokore"}` + "\n"; rec.Code != 200 || rec.Body.String() != want {
		t.Errorf("metadata asked through another Host: %d %s", rec.Code, rec.Body.String())
	}
}

// A route is judged by the path it serves: every spelling of a path that
// needs the token (percent-escapes, doubled slashes, dot segments, a
// trailing slash) reaches its handler only with the token, and a
// spelling that reaches no route is a 404 with or without it.
func TestEverySpellingOfAPathIsJudgedAsThePathServed(t *testing.T) {
	reached := map[string]int{}
	h := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { reached[name]++; w.WriteHeader(204) })
	}
	front := httpfront.New(httpfront.Options{MCP: h("mcp"), Metrics: h("metrics"), Approvals: h("approvals"),
		Resource: "http://127.0.0.1:3100/mcp", Guard: httpguard.Options{Auth: auth.NewStatic([]string{"t"})}})
	for _, c := range []struct{ path, route string }{
		{"/ws/%61pprovals", "approvals"}, {"/ws%2Fapprovals", "approvals"}, {"//ws/approvals", "approvals"},
		{"/ws/./approvals", "approvals"}, {"/x/../ws/approvals", "approvals"}, {"/ws/approvals/", "approvals"},
		{"/%6dcp", "mcp"}, {"//mcp", "mcp"}, {"/mcp/", "mcp"}, {"/metrics/", "metrics"}, {"/%6detrics", "metrics"},
	} {
		for _, token := range []bool{false, true} {
			req := httptest.NewRequest("GET", "http://127.0.0.1:3100"+c.path, nil)
			if token {
				req.Header.Set("Authorization", "Bearer t")
			}
			before := reached[c.route]
			rec := httptest.NewRecorder()
			front.ServeHTTP(rec, req)
			ran := reached[c.route] - before
			switch {
			case !token && (rec.Code != 401 || ran != 0):
				t.Errorf("%s without the token: %d, %s reached %d times; want 401", c.path, rec.Code, c.route, ran)
			case token && (rec.Code != 204 || ran != 1):
				t.Errorf("%s with the token: %d, %s reached %d times; want it served as %s", c.path, rec.Code, c.route, ran, c.route)
			}
		}
	}
	for _, p := range []string{"/WS/approvals", "/ws/approvals.", "/ws/approvals%00"} {
		req := httptest.NewRequest("GET", "http://127.0.0.1:3100"+p, nil)
		req.Header.Set("Authorization", "Bearer t")
		rec := httptest.NewRecorder()
		front.ServeHTTP(rec, req)
		if rec.Code != 404 {
			t.Errorf("%s: %d, want 404", p, rec.Code)
		}
	}
}

// A replica serving without something it shares (the session store,
// say) answers /health with 200 and "degraded", naming what it lacks
// after the router's own problems: a balancer must not pull every
// replica at once. Without anything missing it is "ok" again.
func TestHealthWhileDegradedIs200AndSaysWhat(t *testing.T) {
	var missing []string
	front := httpfront.New(httpfront.Options{MCP: http.NotFoundHandler(),
		Health:   func() []string { return []string{"permissions.yml could not be read"} },
		Degraded: func() []string { return missing }})
	get := func() (int, string) {
		rec := httptest.NewRecorder()
		front.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1:3100/health", nil))
		return rec.Code, rec.Body.String()
	}
	missing = []string{"session store: redis at 127.0.0.1:6390 does not answer"}
	want := `{"status":"degraded","transport":"streamable-http","details":["permissions.yml could not be read","session store: redis at 127.0.0.1:6390 does not answer"]}` + "\n"
	if code, body := get(); code != 200 || body != want {
		t.Errorf("degraded: %d %s", code, body)
	}
	missing = nil
	if code, body := get(); code != 200 || body != `{"status":"ok","transport":"streamable-http","details":["permissions.yml could not be read"]}`+"\n" {
		t.Errorf("recovered: %d %s", code, body)
	}
}
