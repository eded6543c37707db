package server_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// A child tool whose "<server>_<tool>" would be 77 characters long is
// listed under a stable name of at most 64 (clients reject longer ones),
// is callable under it, and the status shows both names. A second tool
// whose full name shares its first 76 characters gets a name of its own:
// the two do not collide.
func TestALongToolNameIsListedShortAndCallable(t *testing.T) {
	long := "summarize_every_open_pull_request_with_its_review_threads_x"
	twin := strings.TrimSuffix(long, "x") + "y"
	h := routertest.New(t, map[string]any{"github_enterprise": routertest.Fixture(t, "-alias", long+","+twin)},
		map[string]string{"EVOKORE_TOOL_DISCOVERY_MODE": "legacy"})
	cs := h.Connect(nil)
	h.Booted()
	full := "github_enterprise_" + long
	if len(full) != 77 {
		t.Fatalf("the test's name is %d characters", len(full))
	}
	names := routertest.ToolNames(t, cs)
	var short []string
	for _, n := range names {
		if len(n) > catalog.MaxToolName {
			t.Errorf("listed a %d-character name: %s", len(n), n)
		}
		if strings.HasPrefix(n, "github_enterprise_summarize") {
			short = append(short, n)
		}
	}
	if len(short) != 2 || short[0] == short[1] {
		t.Fatalf("the two long names are listed as %q: %v", short, names)
	}
	for _, n := range short {
		if got := routertest.Text(routertest.Call(t, cs, n, map[string]any{"message": "hi"})); got != "Alias: hi" {
			t.Errorf("calling %s: %q", n, got)
		}
	}
	st := routertest.DecodeJSON[struct {
		Servers []struct {
			Shortened map[string]string `json:"shortened"`
		} `json:"servers"`
	}](t, routertest.Text(routertest.Call(t, cs, "proxy_server_status", map[string]any{})))
	if len(st.Servers) != 1 {
		t.Fatalf("status: %+v", st)
	}
	got := []string{st.Servers[0].Shortened[short[0]], st.Servers[0].Shortened[short[1]]}
	slices.Sort(got)
	if want := []string{full, "github_enterprise_" + twin}; !slices.Equal(got, want) {
		t.Errorf("the status maps %q to %q, want %q", short, got, want)
	}
	if !slices.Contains(short, catalog.ShortName(full)) {
		t.Errorf("%s is not listed as catalog.ShortName names it: %q", full, short)
	}
}
