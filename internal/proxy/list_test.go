package proxy_test

import (
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/testutil/routertest"
)

// A child that hands out a new cursor with every page is read only up to
// the list bounds, not until the boot timeout (a fast one used to fill
// gigabytes in that time): its boot fails saying so, the router and the
// other children serve on.
func TestAChildPaginatingWithoutEndFailsAtTheListBound(t *testing.T) {
	endless := routertest.Fixture(t, "-endless-pages", "50")
	endless["timeouts"] = map[string]any{"bootMs": 60_000}
	h := routertest.New(t, map[string]any{"endless": endless, "fx": routertest.Fixture(t)}, legacy)
	cs := h.Connect(nil)
	h.Booted()
	seen := false
	for _, s := range routertest.Status(t, cs).Servers {
		if s.ID != "endless" {
			continue
		}
		seen = true
		if s.Status != "error" || !strings.Contains(s.LastError, "listing tools: more than 10000 of them") {
			t.Fatalf("status %s, last error %q; want an error at the list bound", s.Status, s.LastError)
		}
	}
	if !seen {
		t.Fatal("no status for the endless child")
	}
	if got, isErr := routertest.CallText(t, cs, "fx_echo", map[string]any{"message": "still here"}); isErr || got != "Echo: still here" {
		t.Fatalf("the other child: %q (isError %v)", got, isErr)
	}
}
