package server_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// A child tool whose "<server>_<tool>" would be 70 characters long is
// listed under a stable name of at most 64 (clients reject longer ones),
// is callable under it, and the status shows both names.
func TestALongToolNameIsListedShortAndCallable(t *testing.T) {
	long := "summarize_every_open_pull_request_with_its_review_threads_x"
	h := routertest.New(t, map[string]any{"github_enterprise": routertest.Fixture(t, "-alias", long)},
		map[string]string{"EVOKORE_TOOL_DISCOVERY_MODE": "legacy"})
	cs := h.Connect(nil)
	h.Booted()
	full := "github_enterprise_" + long
	if len(full) != 77 {
		t.Fatalf("the test's name is %d characters", len(full))
	}
	short := catalog.ShortName(full)
	names := routertest.ToolNames(t, cs)
	for _, n := range names {
		if len(n) > catalog.MaxToolName {
			t.Errorf("listed a %d-character name: %s", len(n), n)
		}
	}
	if !slices.Contains(names, short) || !strings.HasPrefix(short, "github_enterprise_summarize") {
		t.Fatalf("%s not listed: %v", short, names)
	}
	if got := routertest.Text(routertest.Call(t, cs, short, map[string]any{"message": "hi"})); got != "Alias: hi" {
		t.Errorf("calling %s: %q", short, got)
	}
	st := routertest.DecodeJSON[struct {
		Servers []struct {
			Shortened map[string]string `json:"shortened"`
		} `json:"servers"`
	}](t, routertest.Text(routertest.Call(t, cs, "proxy_server_status", map[string]any{})))
	if len(st.Servers) != 1 || st.Servers[0].Shortened[short] != full {
		t.Errorf("the status does not map %s to %s: %+v", short, full, st)
	}
}
