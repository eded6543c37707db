package server_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/server"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// A child flooding tools/list_changed costs a few re-lists, not one per
// notification.
func TestListChangedStormIsCoalesced(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, map[string]string{"EVOKORE_TOOL_DISCOVERY_MODE": "legacy"})
	cs := h.Connect(nil)
	h.Booted()
	const storm = 3000
	if got := routertest.Text(routertest.Call(t, cs, "fx_storm", map[string]any{"steps": storm})); got != "stormed 3000" {
		t.Fatalf("fx_storm: %s", got)
	}
	// A change after the storm: once it is listed, every re-list the
	// storm asked for has run.
	routertest.Call(t, cs, "fx_add_tool", map[string]any{"name": "after_storm"})
	routertest.WaitFor(t, "the tool added after the storm", func() bool {
		_, ok := h.Server.Snapshot().Lookup("fx_after_storm")
		return ok
	})
	n, _ := strconv.Atoi(strings.TrimPrefix(routertest.Text(routertest.Call(t, cs, "fx_lists", map[string]any{})), "lists: "))
	if n < 2 || n > 50 {
		t.Errorf("the child was listed %d times for %d notifications", n, storm)
	}
}

// The token field is stripped however its key is escaped: the child never
// sees it.
func TestEscapedTokenKeyIsStripped(t *testing.T) {
	h := secured(t, approveEverything, nil, nil, nil)
	cs := h.Connect(nil)
	h.Booted()
	token := routertest.ApprovalToken(t, routertest.Call(t, cs, "fx_args", map[string]any{"x": 1}))
	raw := json.RawMessage(`{"x":1,"_evokore\u005fapproval_token":"` + token + `"}`)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fx_args", Arguments: raw})
	if err != nil || res.IsError {
		t.Fatalf("approved call with an escaped token key: %v %v", res, err)
	}
	if got := routertest.Text(res); strings.Contains(got, "approval") || strings.Contains(got, token) {
		t.Errorf("the child saw the token: %s", got)
	}
}

// Only the child a call went to may report its progress: another child
// that learns the token gets nowhere.
func TestProgressOnlyFromTheCalledChild(t *testing.T) {
	var mu sync.Mutex
	var got []string
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t), "other": routertest.Fixture(t)}, map[string]string{"EVOKORE_TOOL_DISCOVERY_MODE": "legacy"})
	cs := h.Connect(&mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		got = append(got, req.Params.Message)
		mu.Unlock()
	}})
	h.Booted()
	params := &mcp.CallToolParams{Name: "fx_progress_token", Arguments: map[string]any{}}
	params.SetProgressToken("mine")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	minted := routertest.Text(res)
	if minted == "mine" || len(minted) < 24 {
		t.Fatalf("the child saw the token %q: want one the router minted, unguessable", minted)
	}
	routertest.Call(t, cs, "other_spoof", map[string]any{"token": minted, "message": "spoofed by other"})
	// A legitimate step from the same child afterwards is the barrier.
	barrier := &mcp.CallToolParams{Name: "other_progress", Arguments: map[string]any{"steps": 1}}
	barrier.SetProgressToken("barrier")
	if _, err := cs.CallTool(context.Background(), barrier); err != nil {
		t.Fatal(err)
	}
	routertest.WaitFor(t, "the barrier step", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(got, "step 1")
	})
	mu.Lock()
	defer mu.Unlock()
	if slices.Contains(got, "spoofed by other") {
		t.Errorf("progress from another child reached the client: %v", got)
	}
}

// A relative EVOKORE_PLUGINS_DIR is made absolute when settings are read,
// so it does not follow the directory the client started evokore in.
func TestRelativePluginsDirIsMadeAbsolute(t *testing.T) {
	s, _ := config.ReadSettings(config.NewEnv(map[string]string{"EVOKORE_PLUGINS_DIR": "plugins", "EVOKORE_HOME": t.TempDir()}), server.ShippedDefaults)
	wd, _ := os.Getwd()
	if s.PluginsDir != filepath.Join(wd, "plugins") {
		t.Errorf("plugins dir %q", s.PluginsDir)
	}
}

// `approvals list` drops the approvals of a router that is gone.
func TestApprovalsOfAGoneRouterAreDropped(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "approvals")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// pid 0x7ffffffe is never a live process here.
	stale := `{"pid":2147483646,"router":"gone","approvals":[{"id":"00112233445566ff","toolName":"fx_echo","state":"pending","createdAt":1,"expiresAt":` +
		strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10) + `,"router":"gone"}]}`
	if err := os.WriteFile(filepath.Join(dir, "pending-gone.json"), []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}
	pending, err := policy.ListPending(home, time.Now())
	if err != nil || len(pending) != 0 {
		t.Errorf("pending of a gone router: %+v %v", pending, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "pending-gone.json")); !os.IsNotExist(err) {
		t.Error("the gone router's file was kept")
	}
}
