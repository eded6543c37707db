package httpsession_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil/routertest"
)

// One endpoint serves both protocol eras at once: a client of the
// session protocol (2025-11-25) gets a session whose discoveries join its
// tool list; a client of the sessionless one (2026-07-28, the go-sdk
// client's default) gets no session id, the role × profile projection
// on every request, and callable definitions from discover_tools, whose
// hidden tools it calls by exact name.
func TestOneEndpointServesBothEras(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, nil)
	h.Server.StartChildren(nil)
	h.Booted()
	ts := httptest.NewServer(h.HTTP(nil, nil))
	t.Cleanup(ts.Close)
	connect := func(opts *mcp.ClientSessionOptions) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "eras", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL}, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	old, stateless := connect(sessionEra), connect(nil)
	if old.ID() == "" {
		t.Error("the 2025-11-25 client got no session")
	}
	if stateless.ID() != "" {
		t.Errorf("the 2026-07-28 client got session %q", stateless.ID())
	}
	if got := stateless.InitializeResult().ProtocolVersion; got != "2026-07-28" {
		t.Errorf("the sessionless client negotiated %q", got)
	}
	before := routertest.ToolNames(t, stateless)
	if slices.Contains(before, "fx_echo") {
		t.Fatalf("dynamic mode lists a proxied tool before discovery: %v", before)
	}
	for _, cs := range []*mcp.ClientSession{old, stateless} {
		text := routertest.Text(routertest.Call(t, cs, "discover_tools", map[string]any{"query": "fx_echo"}))
		if !strings.Contains(text, "fx_echo") {
			t.Fatalf("discover_tools: %s", text)
		}
	}
	if !slices.Contains(routertest.ToolNames(t, old), "fx_echo") {
		t.Error("the session client's discovery did not join its tool list")
	}
	if after := routertest.ToolNames(t, stateless); !slices.Equal(after, before) {
		t.Errorf("a sessionless client's tool list changed with its discovery:\nbefore %v\nafter  %v", before, after)
	}
	res := routertest.Call(t, stateless, "discover_tools", map[string]any{"query": "fx_echo"})
	if len(res.Content) < 2 || !strings.Contains(res.Content[1].(*mcp.TextContent).Text, `"inputSchema"`) {
		t.Errorf("discover_tools gave a sessionless client no callable definitions: %v", routertest.Text(res))
	}
	if got := routertest.Text(routertest.Call(t, stateless, "fx_echo", map[string]any{"message": "hi"})); got != "Echo: hi" {
		t.Errorf("a hidden tool called by exact name: %q", got)
	}
}
