package httpsession_test

import (
	"context"
	"encoding/json"
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

// Both eras list the same tools, byte for byte: the sessionless answer
// adds "resultType": "complete" at its top level (even for a tool whose
// schema has a property of that name) and escapes nothing the session
// answer does not.
func TestBothErasListTheSameTools(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t, "-param-headers")},
		map[string]string{"EVOKORE_TOOL_DISCOVERY_MODE": "legacy"})
	h.Server.StartChildren(nil)
	h.Booted()
	ts := httptest.NewServer(h.HTTP(nil, nil))
	t.Cleanup(ts.Close)

	_, hdr, _ := postRaw(t, ts.URL, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"}}}, nil)
	session := map[string]string{"Mcp-Session-Id": hdr.Get("Mcp-Session-Id"), "Mcp-Protocol-Version": "2025-11-25"}
	postRaw(t, ts.URL, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
	_, _, old := postRaw(t, ts.URL, map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": map[string]any{}}, session)
	_, _, stateless := postRaw(t, ts.URL, map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": map[string]any{"_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "1"}}}},
		map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"})
	var a, b struct {
		Result struct {
			Tools      json.RawMessage `json:"tools"`
			ResultType *string         `json:"resultType"`
		} `json:"result"`
	}
	if err := json.Unmarshal(old, &a); err != nil {
		t.Fatalf("2025-11-25 tools/list: %q: %v", old, err)
	}
	if err := json.Unmarshal(stateless, &b); err != nil {
		t.Fatalf("2026-07-28 tools/list: %q: %v", stateless, err)
	}
	if !strings.Contains(string(a.Result.Tools), `"fx_deploy"`) || !strings.Contains(string(a.Result.Tools), "<not>") {
		t.Fatalf("the listing lacks the fixture's deploy tool: %.300s", a.Result.Tools)
	}
	if string(a.Result.Tools) != string(b.Result.Tools) {
		t.Errorf("the eras list different tools:\n2025-11-25 %.400s\n2026-07-28 %.400s", a.Result.Tools, b.Result.Tools)
	}
	if a.Result.ResultType != nil {
		t.Errorf("the session answer says resultType %q", *a.Result.ResultType)
	}
	if b.Result.ResultType == nil || *b.Result.ResultType != "complete" {
		t.Errorf("the sessionless answer's resultType: %v", b.Result.ResultType)
	}
}
