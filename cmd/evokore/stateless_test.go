package main_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// A client of the sessionless protocol (2026-07-28, the go-sdk client's
// default) is served by three `evokore serve --http` replicas behind a
// round-robin balancer with no affinity and no session store: its
// requests land on every replica, each answers, and every replica lists
// the same tools.
func TestStatelessRequestsSpreadOverReplicasWithoutAStore(t *testing.T) {
	bin := testutil.Evokore(t)
	dir := t.TempDir()
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
		"probe": map[string]any{"command": testutil.FixtureServer(t), "args": []string{}},
	}})
	var replicas []*replica
	for i := range 3 {
		replicas = append(replicas, startReplica(t, bin, filepath.Join(dir, fmt.Sprintf("r%d", i)), []string{
			"EVOKORE_MCP_CONFIG_PATH=" + cfg, "EVOKORE_TOOL_DISCOVERY_MODE=legacy",
		}))
	}
	front := startProxy(t, dir, replicas)
	c := mcp.NewClient(&mcp.Implementation{Name: "stateless-client", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: front + "/mcp", DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if cs.ID() != "" || cs.InitializeResult().ProtocolVersion != "2026-07-28" {
		t.Fatalf("session %q, protocol %q: want none and 2026-07-28", cs.ID(), cs.InitializeResult().ProtocolVersion)
	}
	var first []string
	for i := range 3 {
		names := routertest.ToolNames(t, cs)
		if i == 0 {
			first = names
		} else if !slices.Equal(names, first) {
			t.Fatalf("two replicas listed different tools:\n%v\n%v", first, names)
		}
	}
	seen := map[int]int{}
	for range 9 {
		res := routertest.Call(t, cs, "probe_pid", map[string]any{})
		pid, err := strconv.Atoi(strings.TrimSpace(routertest.Text(res)))
		if err != nil || res.IsError {
			t.Fatalf("not a pid: %q", routertest.Text(res))
		}
		seen[replicaOf(t, pid, replicas)]++
	}
	if len(seen) != 3 {
		t.Fatalf("the calls reached replicas %v, want all three", seen)
	}
}
