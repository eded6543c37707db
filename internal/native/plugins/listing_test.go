package plugins_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// managers whose tools this change set serves: 25 of the 38 natives.
var managers = map[native.Manager]bool{
	native.ManagerPlugins: true, native.ManagerTelemetry: true, native.ManagerNavigation: true,
	native.ManagerAnalytics: true, native.ManagerWorkers: true, native.ManagerClaims: true,
	native.ManagerMemory: true, native.ManagerFleet: true, native.ManagerOrchestration: true,
}

// TestLegacyListingShowsTheManagersNatives checks that tools/list in
// legacy mode carries each of the 25 tools with the title and hints the
// generated table declares. The listing states hints only where they
// differ from MCP's defaults, and destructive/idempotent only for tools
// that write, so each is compared in that form.
func TestLegacyListingShowsTheManagersNatives(t *testing.T) {
	h := routertest.New(t, map[string]any{}, map[string]string{"EVOKORE_TOOL_DISCOVERY_MODE": "legacy"})
	cs := h.Connect(nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		listed[tl.Name] = tl
	}
	mine, natives := 0, 0
	for _, s := range native.Specs() {
		tl, ok := listed[s.Name]
		if ok {
			natives++
		}
		if !managers[s.Manager] {
			continue
		}
		if !ok {
			t.Errorf("%s (%s) is not listed", s.Name, s.Manager)
			continue
		}
		mine++
		if tl.Title != s.Title || tl.Description != s.Description {
			t.Errorf("%s: title %q, description %q; want %q, %q", s.Name, tl.Title, tl.Description, s.Title, s.Description)
		}
		a := tl.Annotations
		if a == nil {
			a = &mcp.ToolAnnotations{}
		}
		if a.ReadOnlyHint != s.ReadOnly {
			t.Errorf("%s: readOnlyHint %v, want %v", s.Name, a.ReadOnlyHint, s.ReadOnly)
		}
		if openWorld := a.OpenWorldHint == nil || *a.OpenWorldHint; openWorld != s.OpenWorld {
			t.Errorf("%s: openWorldHint %v, want %v", s.Name, openWorld, s.OpenWorld)
		}
		if !s.ReadOnly {
			if destructive := a.DestructiveHint == nil || *a.DestructiveHint; destructive != s.Destructive {
				t.Errorf("%s: destructiveHint %v, want %v", s.Name, destructive, s.Destructive)
			}
			if a.IdempotentHint != s.Idempotent {
				t.Errorf("%s: idempotentHint %v, want %v", s.Name, a.IdempotentHint, s.Idempotent)
			}
		}
	}
	if mine != 25 {
		t.Errorf("%d of this change set's 25 natives are listed", mine)
	}
	// Legacy mode lists every native, not only this change set's.
	if natives != len(native.Specs()) || natives != native.NumTools {
		t.Errorf("%d of %d natives listed in legacy mode", natives, len(native.Specs()))
	}
}
