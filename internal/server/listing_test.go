package server_test

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil/routertest"
)

func listPage(t *testing.T, cs *mcp.ClientSession, cursor string) *mcp.ListToolsResult {
	t.Helper()
	res, err := cs.ListTools(context.Background(), &mcp.ListToolsParams{Cursor: cursor})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// pagedHarness lists exactly 100 tools in legacy mode: the bound natives
// plus a fixture child padded with generated tools.
func pagedHarness(t *testing.T, env map[string]string) *mcp.ClientSession {
	t.Helper()
	probe := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, legacy)
	pc := probe.Connect(nil)
	probe.Booted()
	base := len(routertest.ToolNames(t, pc))
	if base > 100 {
		t.Fatalf("already %d tools", base)
	}
	vars := map[string]string{"EVOKORE_TOOL_DISCOVERY_MODE": "legacy"}
	for k, v := range env {
		vars[k] = v
	}
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t, "-extra", strconv.Itoa(100-base))}, vars)
	cs := h.Connect(nil)
	h.Booted()
	return cs
}

func TestPaginationPagesOf35(t *testing.T) {
	cs := pagedHarness(t, map[string]string{"EVOKORE_TOOL_LIST_PAGINATION": "on"})
	var sizes []int
	var all []string
	cur := ""
	for {
		page := listPage(t, cs, cur)
		sizes = append(sizes, len(page.Tools))
		for _, tl := range page.Tools {
			all = append(all, tl.Name)
		}
		if page.NextCursor == "" {
			break
		}
		cur = page.NextCursor
	}
	if len(sizes) != 3 || sizes[0] != 35 || sizes[1] != 35 || sizes[2] != 30 {
		t.Errorf("page sizes = %v", sizes)
	}
	seen := map[string]bool{}
	for _, n := range all {
		if seen[n] {
			t.Errorf("%s listed twice", n)
		}
		seen[n] = true
	}
}

func TestPaginationCursorEdgeCases(t *testing.T) {
	cs := pagedHarness(t, nil)
	// Paging is off, but a client cursor turns it on.
	full := listPage(t, cs, "")
	if len(full.Tools) != 100 || full.NextCursor != "" {
		t.Fatalf("unpaged listing: %d tools, cursor %q", len(full.Tools), full.NextCursor)
	}
	first := full.Tools[0].Name
	for _, bad := range []string{"not base64!", base64.RawURLEncoding.EncodeToString([]byte("{broken")), base64.RawURLEncoding.EncodeToString([]byte(`{"offset":-4,"epoch":1}`)), base64.RawURLEncoding.EncodeToString([]byte(`{"offset":35,"epoch":999999}`))} {
		page := listPage(t, cs, bad)
		if len(page.Tools) != 35 || page.Tools[0].Name != first || page.NextCursor == "" {
			t.Errorf("cursor %q should restart at page 1, got %d tools from %s", bad, len(page.Tools), page.Tools[0].Name)
		}
	}
	page1 := listPage(t, cs, base64.RawURLEncoding.EncodeToString([]byte("{}")))
	// A cursor at or past the end gives an empty last page.
	next, _ := base64.RawURLEncoding.DecodeString(page1.NextCursor)
	past := strings.Replace(string(next), `"offset":35`, `"offset":100`, 1)
	end := listPage(t, cs, base64.RawURLEncoding.EncodeToString([]byte(past)))
	if len(end.Tools) != 0 || end.NextCursor != "" {
		t.Errorf("past the end: %d tools, cursor %q", len(end.Tools), end.NextCursor)
	}
}

func TestDeferredSchemasAndFallback(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, map[string]string{
		"EVOKORE_TOOL_DISCOVERY_MODE":     "legacy",
		"EVOKORE_TOOL_SCHEMA_MODE":        "deferred",
		"EVOKORE_TOOL_SCHEMA_FALLBACK_MS": "300",
	})
	var changed atomic.Int32
	cs := h.Connect(&mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed.Add(1) }})
	h.Booted()
	changed.Store(0)
	res := listPage(t, cs, "")
	for _, tl := range res.Tools {
		schema := tl.InputSchema.(map[string]any)
		if tl.Name == "describe_tool" {
			if schema["required"] == nil {
				t.Error("describe_tool keeps its full schema")
			}
			continue
		}
		if schema["x-evokore-schema-deferred"] != true || tl.Meta["schema_deferred"] != true {
			t.Errorf("%s should be deferred: %v %v", tl.Name, schema, tl.Meta)
		}
	}
	// No describe_tool call arrives: the router falls back to full schemas
	// and tells the client.
	before := changed.Load()
	routertest.WaitFor(t, "the fallback", func() bool { return strings.Contains(h.Stderr.String(), "Schema-deferral fallback") })
	routertest.WaitFor(t, "the fallback's list_changed", func() bool { return changed.Load() > before })
	for _, tl := range listPage(t, cs, "").Tools {
		if tl.Name == "fx_slow" && tl.InputSchema.(map[string]any)["x-evokore-schema-deferred"] != nil {
			t.Error("after the fallback schemas are full")
		}
	}
}

func TestDeferredSchemasStayWhenDescribeToolIsUsed(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, map[string]string{
		"EVOKORE_TOOL_DISCOVERY_MODE":     "legacy",
		"EVOKORE_TOOL_SCHEMA_MODE":        "deferred",
		"EVOKORE_TOOL_SCHEMA_FALLBACK_MS": "200",
	})
	cs := h.Connect(nil)
	h.Booted()
	// describe_tool before the first deferred listing arms the 200 ms
	// fallback: the outcome cannot depend on how fast this machine is.
	d := routertest.Call(t, cs, "describe_tool", map[string]any{"tools": []string{"fx_slow", "nope", "fx_slow"}})
	if d.IsError || !strings.Contains(routertest.Text(d), `"unknown": [`) || !strings.Contains(routertest.Text(d), `"ms"`) {
		t.Fatalf("describe_tool: %s", routertest.Text(d))
	}
	sc, _ := d.StructuredContent.(map[string]any)
	if schemas, _ := sc["schemas"].([]any); len(schemas) != 1 {
		t.Errorf("structuredContent = %v", d.StructuredContent)
	}
	if tl := listPage(t, cs, "").Tools; len(tl) == 0 {
		t.Fatal("empty listing")
	}
	// The fallback's timer has run and kept the deferral.
	routertest.WaitFor(t, "the fallback to be considered", func() bool {
		return strings.Contains(h.Stderr.String(), "[EVOKORE] Schema deferral kept: the client used describe_tool in time within=200ms\n")
	})
	if strings.Contains(h.Stderr.String(), "Schema-deferral fallback") {
		t.Error("the fallback fired although describe_tool was used")
	}
	found := false
	for _, tl := range listPage(t, cs, "").Tools {
		found = found || tl.Name == "fx_slow"
		if tl.Name == "fx_slow" && tl.InputSchema.(map[string]any)["x-evokore-schema-deferred"] != true {
			t.Error("a client that uses describe_tool keeps deferred schemas")
		}
	}
	if !found {
		t.Error("fx_slow is not listed")
	}
}
