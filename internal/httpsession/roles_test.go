package httpsession_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/ingress"
	"github.com/evokore/evokore/internal/sessionstore"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// Two streamable HTTP sessions are served by the same session views as
// stdio: each with its own id and the role its request was given.
func TestHTTPHandlerServesSessionsWithTheirOwnRoles(t *testing.T) {
	h := routertest.New(t, map[string]any{}, nil)
	handler := h.HTTP(func(r *http.Request) ingress.SessionOptions {
		return ingress.SessionOptions{Role: r.Header.Get("X-Test-Role")}
	}, nil)
	ts := httptest.NewServer(handler)
	// Registered first, so it runs after the clients closed their
	// streams.
	t.Cleanup(ts.Close)
	connect := func(role string) *mcp.ClientSession {
		hc := &http.Client{Transport: roleHeader{role}}
		c := mcp.NewClient(&mcp.Implementation{Name: "http-" + role, Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: hc}, sessionEra)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	ro, admin := connect("readonly"), connect("admin")
	if ro.ID() == "" || ro.ID() == admin.ID() {
		t.Fatalf("session ids %q %q", ro.ID(), admin.ID())
	}
	for _, cs := range []*mcp.ClientSession{ro, admin} {
		if names := routertest.ToolNames(t, cs); !slices.Contains(names, "discover_tools") {
			t.Errorf("%s lists %v", cs.ID(), names)
		}
	}
	var roles []string
	for _, sess := range h.Server.Sessions() {
		roles = append(roles, sess.ID+"="+sess.Role)
	}
	for _, want := range []string{admin.ID() + "=admin", ro.ID() + "=readonly"} {
		if !slices.Contains(roles, want) {
			t.Errorf("sessions %v lack %s", roles, want)
		}
	}
	// readonly denies the spawning natives; admin may run them.
	_, err := ro.CallTool(context.Background(), &mcp.CallToolParams{Name: "fleet_spawn", Arguments: map[string]any{"command": "true"}})
	if err == nil || !strings.Contains(err.Error(), "strictly denied") {
		t.Errorf("readonly fleet_spawn = %v", err)
	}
}

type roleHeader struct{ role string }

func (r roleHeader) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("X-Test-Role", r.role)
	return http.DefaultTransport.RoundTrip(req)
}

// sessionEra asks for the protocol of sessions (2025-11-25): the go-sdk
// client's default is the sessionless one.
var sessionEra = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}

// A request whose identity names another role than its session's is
// refused (docs/http.md), DELETE included, whichever router it reaches:
// the one serving the session or one that would resume it from the store.
func TestDeleteNeedsTheSessionsRole(t *testing.T) {
	store := sessionstore.NewMemory(time.Minute)
	_, handlerA := httpRouter(t, store, true)
	_, handlerB := httpRouter(t, store, true)
	sw := &switcher{}
	sw.to(handlerA)
	ts := httptest.NewServer(sw)
	t.Cleanup(ts.Close)
	c := connectHTTP(t, ts.URL, map[string]string{"X-Test-Role": "beta", "X-Test-Tenant": "acme"})
	sid := c.cs.ID()
	del := func(role string) int {
		req, _ := http.NewRequest(http.MethodDelete, ts.URL, nil)
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("X-Test-Role", role)
		req.Header.Set("X-Test-Tenant", "acme")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	for _, h := range []http.Handler{handlerA, handlerB} {
		sw.to(h)
		if code := del("alpha"); code != http.StatusForbidden {
			t.Errorf("DELETE as alpha of a beta session: %d, want 403", code)
		}
		if _, err := store.Load(context.Background(), sid); err != nil {
			t.Fatalf("the beta session is gone after alpha's DELETE: %v", err)
		}
	}
	if code := del("beta"); code != http.StatusNoContent && code != http.StatusOK {
		t.Errorf("DELETE by its own role: %d", code)
	}
}
