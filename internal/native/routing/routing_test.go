package routing_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil/routertest"
)

// describe_tool's schema types its items as strings (EVOKORE-MCP's
// schema did): an entry that is not a string is refused by name, before
// the tool runs; strings are trimmed and unknown names reported.
func TestDescribeToolTakesStrings(t *testing.T) {
	h := routertest.New(t, map[string]any{}, nil)
	cs := h.Connect(nil)
	res := routertest.Call(t, cs, "describe_tool", map[string]any{"tools": []any{42, "proxy_server_status", nil, " nope "}})
	if text := routertest.Text(res); !res.IsError || !strings.Contains(text, "/tools/0") || !strings.Contains(text, "/tools/2") {
		t.Fatalf("describe_tool with non-strings: %s", text)
	}
	res = routertest.Call(t, cs, "describe_tool", map[string]any{"tools": []any{"proxy_server_status", " nope "}})
	if res.IsError {
		t.Fatalf("describe_tool: %s", routertest.Text(res))
	}
	got := routertest.DecodeJSON[struct {
		Schemas []map[string]any `json:"schemas"`
		Unknown []string         `json:"unknown"`
	}](t, routertest.Text(res))
	if len(got.Schemas) != 1 || got.Schemas[0]["name"] != "proxy_server_status" || len(got.Unknown) != 1 || got.Unknown[0] != "nope" {
		t.Errorf("describe_tool = %+v", got)
	}
}

// discover_tools takes limit as a numeric string too (Number(limit)).
func TestDiscoverToolsNumericStringLimit(t *testing.T) {
	h := routertest.New(t, map[string]any{}, nil)
	cs := h.Connect(nil)
	for _, limit := range []any{"1", 1} {
		res := routertest.Call(t, cs, "discover_tools", map[string]any{"query": "skill", "limit": limit})
		if res.IsError || !strings.Contains(routertest.Text(res), "Matched 1 tool(s).") {
			t.Errorf("limit %#v: %s", limit, routertest.Text(res))
		}
	}
}

// While a server is still starting, discovery and describe_tool say it
// was not searched rather than silently matching less.
func TestDiscoveryNamesServersStillStarting(t *testing.T) {
	h := routertest.New(t, map[string]any{"slowpoke": routertest.Fixture(t, "-start-delay", "30s")}, nil)
	cs := h.Connect(nil)
	res := routertest.Call(t, cs, "discover_tools", map[string]any{"query": "echo"})
	if !strings.Contains(routertest.Text(res), "Not searchable yet (still starting): slowpoke.") {
		t.Errorf("discover_tools while slowpoke boots: %s", routertest.Text(res))
	}
	res = routertest.Call(t, cs, "describe_tool", map[string]any{"tools": []string{"slowpoke_echo"}})
	got := routertest.DecodeJSON[struct {
		NotSearchable []string `json:"notSearchable"`
	}](t, routertest.Text(res))
	if len(got.NotSearchable) != 1 || got.NotSearchable[0] != "slowpoke" {
		t.Errorf("describe_tool while slowpoke boots: %s", routertest.Text(res))
	}
}

// Natives a profile hides are activated by discovery too, and are not
// called proxied.
func TestActivationDoesNotCallNativesProxied(t *testing.T) {
	h := routertest.New(t, map[string]any{}, map[string]string{"EVOKORE_DISCOVERY_PROFILE": "research"})
	cs := h.Connect(nil)
	text := routertest.Text(routertest.Call(t, cs, "discover_tools", map[string]any{"query": "claim_acquire"}))
	if !strings.Contains(text, "- claim_acquire [native") || !strings.Contains(text, "Activated ") || strings.Contains(text, "proxied tool(s)") {
		t.Errorf("discover_tools claim_acquire under research:\n%s", text)
	}
}

// Right after connecting, a search that would find a booting child's
// tool waits for the first boot instead of answering "No tools matched".
func TestDiscoveryRightAfterConnectingWaitsForTheFirstBoot(t *testing.T) {
	h := routertest.New(t, map[string]any{"prompt": routertest.Fixture(t, "-start-delay", "100ms")}, nil)
	cs := h.Connect(nil)
	text := routertest.Text(routertest.Call(t, cs, "discover_tools", map[string]any{"query": "echo"}))
	if !strings.Contains(text, "prompt_echo") || strings.Contains(text, "No tools matched") || strings.Contains(text, "still starting") {
		t.Errorf("discover_tools right after connecting:\n%s", text)
	}
}

// A query the natives match only weakly ("read a file" meets get and
// fetch, no native has both words) waits for the first boot too, so the
// booting child's read_file is the answer rather than the natives alone.
// A child that failed is not starting: nothing waits for it or names it.
func TestDiscoveryWaitsForTheFirstBootOnAWeakAnswer(t *testing.T) {
	h := routertest.New(t, map[string]any{
		"fs":     routertest.Fixture(t, "-start-delay", "300ms", "-alias", "read_file", "-echo", "Reads the contents of a file."),
		"broken": map[string]any{"command": filepath.Join(t.TempDir(), "no-such-server")},
	}, nil)
	cs := h.Connect(nil)
	text := routertest.Text(routertest.Call(t, cs, "discover_tools", map[string]any{"query": "read a file"}))
	if !strings.Contains(text, "- fs_read_file [") || strings.Contains(text, "still starting") {
		t.Errorf("discover_tools right after connecting:\n%s", text)
	}
	h.Booted()
	text = routertest.Text(routertest.Call(t, cs, "discover_tools", map[string]any{"query": "read a file"}))
	if strings.Contains(text, "broken") || strings.Contains(text, "still starting") {
		t.Errorf("a failed child is named as starting:\n%s", text)
	}
}

// discover_tools with explain: true shows how each result scored; with
// explain: "<tool name>" it also says why that tool is not a result: not matched (and
// hidden by the session's profile), its server not ready, not in the
// catalog at all.
func TestDiscoverExplainsResultsAndWhyNot(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, nil)
	cs := h.Connect(nil)
	h.Booted()
	text := routertest.Text(routertest.Call(t, cs, "discover_tools", map[string]any{"query": "echo the message back", "explain": true}))
	if !strings.Contains(text, "- fx_echo [") || !strings.Contains(text, "  why: tier relevance: lexical 1.00, meaning ") || !strings.Contains(text, "matched name: echo") {
		t.Errorf("explain:\n%s", text)
	}
	if text := routertest.Text(routertest.Call(t, cs, "discover_tools", map[string]any{"query": "echo the message back"})); strings.Contains(text, "why:") {
		t.Errorf("without explain, signals are shown:\n%s", text)
	}
	whyNot := func(cs *mcp.ClientSession, name string, want ...string) {
		t.Helper()
		text := routertest.Text(routertest.Call(t, cs, "discover_tools", map[string]any{"query": "echo the message back", "explain": name}))
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("why_not %s: want %q in\n%s", name, w, text)
			}
		}
	}
	whyNot(cs, "fx_count", "Why not fx_count: not matched: no word of the query", "this session's profile does not list it")
	whyNot(cs, "nosuch", `Why not nosuch: no tool named "nosuch" is in the catalog.`)

	slow := routertest.New(t, map[string]any{"slowpoke": routertest.Fixture(t, "-start-delay", "30s")}, nil)
	whyNot(slow.Connect(nil), "slowpoke_echo", `no tool named "slowpoke_echo" is in the catalog; server slowpoke is not ready (booting)`)
}
