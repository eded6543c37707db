package server_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// TestDynamicDiscoveryActivatesPerSession is the discovery acceptance
// test: natives only at first; discover_tools activates the file readers
// in the asking session alone; a hidden tool stays callable by name.
func TestDynamicDiscoveryActivatesPerSession(t *testing.T) {
	servers, root := npmServers(t)
	delete(servers, "kg")
	h := routertest.New(t, servers, nil)
	var changedA, changedB atomic.Int32
	a := h.Connect(&mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changedA.Add(1) }})
	b := h.Connect(&mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changedB.Add(1) }})
	h.Booted()
	// Boot sends no tools/list_changed in dynamic mode (proxied tools stay
	// hidden), so every notification counted below is one a test step
	// caused.

	slim := routertest.ToolNames(t, a)
	for _, n := range slim {
		if _, ok := native.Lookup(n); !ok {
			t.Fatalf("dynamic mode should list natives only, found %s", n)
		}
	}

	res := routertest.Call(t, a, "discover_tools", map[string]any{"query": "read the contents of a file on disk"})
	text := routertest.Text(res)
	if res.IsError || !strings.Contains(text, "- fs_read_text_file [proxy, server=fs, visible]") {
		t.Fatalf("discover_tools:\n%s", text)
	}
	if !strings.HasPrefix(text, "[EVOKORE TOOL DISCOVERY] mode=dynamic\nQuery: read the contents of a file on disk\nMatched ") ||
		!strings.Contains(text, "proxied tool(s) for this session.") ||
		!strings.HasSuffix(text, "Re-run tools/list to fetch the updated tool projection.") {
		t.Errorf("discover_tools output shape:\n%s", text)
	}
	routertest.WaitFor(t, "session a's list_changed", func() bool { return changedA.Load() > 0 })
	if names := routertest.ToolNames(t, a); !slices.Contains(names, "fs_read_text_file") {
		t.Errorf("session a should now list fs_read_text_file: %v", names)
	}

	// Session b is untouched (its notifications are counted at the end,
	// against a barrier of its own).
	if names := routertest.ToolNames(t, b); !slices.Equal(names, slim) {
		t.Errorf("session b should stay slim: %v", names)
	}

	// Hidden, but callable by exact name (the shipped rules make writes
	// wait for a human: an operator approves, the model retries).
	file := filepath.Join(root, "written.txt")
	args := map[string]any{"path": file, "content": "hidden but callable"}
	h.Approve(routertest.HeldApproval(t, routertest.Call(t, b, "fs_write_file", args)))
	w := routertest.Call(t, b, "fs_write_file", args)
	if w.IsError {
		t.Fatalf("fs_write_file: %s", routertest.Text(w))
	}
	if got, _ := os.ReadFile(file); string(got) != "hidden but callable" {
		t.Errorf("file holds %q", got)
	}

	// Barriers: each session's own next discovery notifies it, and a
	// session's notifications arrive in order, so whatever a session had
	// counted before its own barrier came from another session's change.
	ownChange := func(cs *mcp.ClientSession, counter *atomic.Int32, query, wantActivated string) int32 {
		t.Helper()
		before := counter.Load()
		text := routertest.Text(routertest.Call(t, cs, "discover_tools", map[string]any{"query": query}))
		if !strings.Contains(text, wantActivated) || !strings.Contains(text, "Activated ") {
			t.Fatalf("discovery %q should activate %s:\n%s", query, wantActivated, text)
		}
		routertest.WaitFor(t, "the session's own list_changed", func() bool { return counter.Load() > before })
		return before
	}
	if n := ownChange(b, &changedB, "echo back the message", "- everything_echo [proxy, server=everything, visible]"); n != 0 {
		t.Errorf("session b got %d list_changed notifications from session a's discovery", n)
	}
	if n := ownChange(a, &changedA, "list the entries of a directory", "- fs_list_directory [proxy, server=fs, visible]"); n != 1 {
		t.Errorf("session a got %d list_changed notifications; want only the one its first discovery caused", n)
	}
}

func TestDiscoverToolsTexts(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, nil)
	cs := h.Connect(nil)
	h.Booted()

	empty := routertest.Call(t, cs, "discover_tools", map[string]any{"query": "   "})
	if !empty.IsError || routertest.Text(empty) != "Please provide a non-empty discovery query." {
		t.Errorf("empty query: %+v %q", empty.IsError, routertest.Text(empty))
	}
	none := routertest.Call(t, cs, "discover_tools", map[string]any{"query": "xylophone quantum zebra"})
	want := "[EVOKORE TOOL DISCOVERY] No tools matched 'xylophone quantum zebra'. Hidden proxied tools remain callable by exact name even when they are not listed." +
		"\nWhy nothing matched: no indexed word matches 'xylophone', 'quantum', 'zebra'; no document is close enough in meaning ("
	if none.IsError || !strings.HasPrefix(routertest.Text(none), want) {
		t.Errorf("no match: %q", routertest.Text(none))
	}
	exact := routertest.Call(t, cs, "discover_tools", map[string]any{"query": "fx_echo", "limit": 1})
	if !strings.Contains(routertest.Text(exact), "Matched 1 tool(s).") || !strings.Contains(routertest.Text(exact), "- fx_echo [proxy, server=fx, visible]") {
		t.Errorf("exact name:\n%s", routertest.Text(exact))
	}
	again := routertest.Call(t, cs, "discover_tools", map[string]any{"query": "fx_echo", "limit": 1})
	if !strings.Contains(routertest.Text(again), "No new proxied tools needed activation for this session.") {
		t.Errorf("second discovery:\n%s", routertest.Text(again))
	}
}

func TestDiscoverToolsInLegacyModeChangesNothing(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, legacy)
	cs := h.Connect(nil)
	h.Booted()
	before := routertest.ToolNames(t, cs)
	text := routertest.Text(routertest.Call(t, cs, "discover_tools", map[string]any{"query": "echo the message back"}))
	if !strings.HasPrefix(text, "[EVOKORE TOOL DISCOVERY] mode=legacy") || !strings.Contains(text, "discovery changes nothing") || strings.Contains(text, "Re-run tools/list") {
		t.Errorf("legacy discovery:\n%s", text)
	}
	if after := routertest.ToolNames(t, cs); !slices.Equal(before, after) {
		t.Errorf("legacy listing changed")
	}
}
