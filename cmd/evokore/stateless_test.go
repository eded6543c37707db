package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

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
	// Each replica boots its own child: wait until a round of listings
	// (one per replica, round robin) all show it.
	ready := 0
	for deadline := time.Now().Add(60 * time.Second); ready < 3; {
		if slices.Contains(routertest.ToolNames(t, cs), "probe_pid") {
			ready++
		} else {
			ready = 0
		}
		if time.Now().After(deadline) {
			t.Fatal("the replicas' children never all listed")
		}
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

// One `serve --http` serves, at once, a 2025-11-25 client with a session
// (the TypeScript SDK's client) and a 2026-07-28 client without one (the
// go-sdk client's default).
func TestBothErasOnOneHTTPEndpoint(t *testing.T) {
	script := testutil.TSHTTPClientScript(t)
	base, _, stderr := httpRouter(t, "EVOKORE_TOOL_DISCOVERY_MODE=legacy")
	c := mcp.NewClient(&mcp.Implementation{Name: "new-era", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if cs.ID() != "" || cs.InitializeResult().ProtocolVersion != "2026-07-28" {
		t.Errorf("go-sdk client: session %q, protocol %q", cs.ID(), cs.InitializeResult().ProtocolVersion)
	}
	waitFor := func(cs *mcp.ClientSession) {
		for range 600 {
			if slices.Contains(routertest.ToolNames(t, cs), "fx_echo") {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("fx_echo never listed:\n%s", stderr.String())
	}
	waitFor(cs)
	done := make(chan string, 1)
	go func() {
		out, _ := exec.Command("node", script, base+"/mcp", "fx_echo", `{"message":"from ts"}`).Output()
		done <- string(out)
	}()
	if got := routertest.Text(routertest.Call(t, cs, "fx_echo", map[string]any{"message": "from go"})); got != "Echo: from go" {
		t.Errorf("go-sdk client's call: %q", got)
	}
	var ts struct {
		Session, Protocol, Text, Error string
		Tools                          int
	}
	if err := json.Unmarshal([]byte(<-done), &ts); err != nil || ts.Error != "" {
		t.Fatalf("TypeScript client: %v %s", err, ts.Error)
	}
	if ts.Session == "" || ts.Protocol != "2025-11-25" || ts.Text != "Echo: from ts" || ts.Tools < 40 {
		t.Errorf("TypeScript client: %+v", ts)
	}
}
