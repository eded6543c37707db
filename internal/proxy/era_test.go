package proxy_test

import (
	"context"
	"encoding/json"
	"net"
	"os/exec"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// A child of MCP 2026-07-28 alone reads a client's capabilities from
// each request, or from its connection. A call from a client of
// 2025-11-25 is read with the router's (what its connection to the child
// offers: here elicitation, which the client declared, and no sampling,
// which it did not), the same over stdio and over HTTP.
func TestANewEraChildSeesTheRoutersCapabilitiesForAnOldEraCaller(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	remote := exec.Command(testutil.FixtureServer(t), "-http", addr, "-era", "2026-07-28", "-name", "remote")
	if err := remote.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = remote.Process.Kill(); _ = remote.Wait() })
	h := routertest.New(t, map[string]any{
		"solo":   routertest.Fixture(t, "-era", "2026-07-28", "-name", "solo"),
		"remote": map[string]any{"transport": "http", "url": "http://" + addr + "/"},
	}, with(legacy, map[string]string{"EVOKORE_CHILD_SERVER_BOOT_TIMEOUT_MS": "10000"}))
	cs := h.Connect(&mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}})
	h.Booted()
	for _, id := range []string{"solo", "remote"} {
		routertest.WaitFor(t, id+" connected", func() bool { return routertest.StatusOf(t, cs, id) == "connected" })
		text := routertest.Text(routertest.Call(t, cs, id+"_caps", nil))
		var caps map[string]any
		if err := json.Unmarshal([]byte(text), &caps); err != nil {
			t.Fatalf("%s_caps = %q", id, text)
		}
		if _, ok := caps["elicitation"]; !ok {
			t.Errorf("%s did not see the elicitation the router offers: %s", id, text)
		}
		if _, ok := caps["sampling"]; ok {
			t.Errorf("%s saw sampling, which the router does not offer: %s", id, text)
		}
	}
}
