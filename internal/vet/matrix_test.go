package vet

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/budget"
	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// matrixOptions are the options of a matrix over the files in cfg and
// perms with a fresh home and the environment vars.
func matrixOptions(t *testing.T, cfg, perms string, vars map[string]string) MatrixOptions {
	return MatrixOptions{ConfigPath: cfg, PermissionsPath: perms, Env: config.NewEnv(vars), Home: t.TempDir()}
}

func TestMatrixOfTheShippedConfiguration(t *testing.T) {
	dir := t.TempDir()
	o := matrixOptions(t, filepath.Join(dir, "none.json"), filepath.Join(dir, "none.yml"), nil)
	o.Profile = "default"
	rows, err := Matrix(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4*native.NumTools {
		t.Fatalf("%d rows, want 4 roles x %d natives", len(rows), native.NumTools)
	}
	count := map[[2]string]int{}
	for _, r := range rows {
		if !r.Visible || r.Profile != "default" || r.Source != "native" {
			t.Errorf("row %+v", r)
		}
		count[[2]string{r.Role, r.Level}]++
	}
	want := map[[2]string]int{
		{"admin", "allow"}: 38, {"developer", "allow"}: 21, {"developer", "approval"}: 17,
		{"readonly", "allow"}: 20, {"readonly", "deny"}: 18, {NoRole, "allow"}: 34, {NoRole, "approval"}: 4,
	}
	for k, n := range want {
		if count[k] != n {
			t.Errorf("%v: %d, want %d", k, count[k], n)
		}
	}
	if !slices.IsSortedFunc(rows, func(a, b Row) int {
		if a.Role != b.Role {
			return strings.Compare(a.Role, b.Role)
		}
		if a.Profile != b.Profile {
			return strings.Compare(a.Profile, b.Profile)
		}
		return strings.Compare(a.Tool, b.Tool)
	}) {
		t.Error("rows must be sorted by role, profile, tool")
	}
}

func TestMatrixFiltersAndCustomPermissions(t *testing.T) {
	dir := t.TempDir()
	perms := filepath.Join(dir, "permissions.yml")
	testutil.WriteFile(t, dir, "permissions.yml", "roles:\n  ops:\n    default_permission: deny\n    overrides:\n      search_skills: allow\n")
	cfg := filepath.Join(dir, "mcp.config.json")
	testutil.WriteFile(t, dir, "mcp.config.json", `{"discovery": {"profiles": {"tiny": {"alwaysVisible": ["search_skills"]}}}}`)
	o := matrixOptions(t, cfg, perms, nil)
	o.Role, o.Profile = "ops", "tiny"
	rows, err := Matrix(o)
	if err != nil {
		t.Fatal(err)
	}
	// One row per native, or the per-row checks below prove nothing.
	if len(rows) != native.NumTools {
		t.Fatalf("%d rows, want one per native (%d)", len(rows), native.NumTools)
	}
	allowed := 0
	for _, r := range rows {
		visible := r.Tool == "search_skills" || r.Tool == "describe_tool"
		level := "deny"
		if r.Tool == "search_skills" {
			level = "allow"
			allowed++
		}
		if r.Role != "ops" || r.Profile != "tiny" || r.Visible != visible || r.Level != level {
			t.Errorf("row %+v", r)
		}
	}
	if allowed != 1 {
		t.Errorf("search_skills appears %d times", allowed)
	}
	o.Role, o.Profile = "nobody", ""
	if _, err := Matrix(o); err == nil {
		t.Error("an unknown role is an error")
	}
	o.Role, o.Profile = "", "nope"
	if _, err := Matrix(o); err == nil {
		t.Error("an unknown profile is an error")
	}
}

func TestMatrixShowsToolsPinningHolds(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, map[string]string{"EVOKORE_TOOL_DISCOVERY_MODE": "legacy"})
	cs := h.Connect(nil)
	h.Booted()
	routertest.Call(t, cs, "fx_mutate", map[string]any{"description": "changed"})
	routertest.WaitFor(t, "fx_echo to leave the listing", func() bool {
		return !slices.Contains(routertest.ToolNames(t, cs), "fx_echo")
	})
	o := matrixOptions(t, filepath.Join(h.Dir, "mcp.config.json"), filepath.Join(h.Dir, "none.yml"),
		map[string]string{"EVOKORE_TOOL_DISCOVERY_MODE": config.ModeLegacy})
	o.Home = filepath.Join(h.Dir, "home")
	o.Role, o.Profile = NoRole, "default"
	rows, err := Matrix(o)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]Row{}
	for _, r := range rows {
		seen[r.Tool] = r
	}
	if r := seen["fx_echo"]; r.Visible || !r.Held {
		t.Errorf("held tool: %+v", r)
	}
	if r := seen["fx_slow"]; !r.Visible || r.Held {
		t.Errorf("pinned, unchanged tool: %+v", r)
	}
	// `evokore profile` counts what the router lists: not the held tool.
	cfg, err := config.LoadMCPConfig(filepath.Join(h.Dir, "mcp.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	pins, _ := policy.OpenPins(o.Home, nil)
	report, err := budget.Measure(&catalog.Profile{Name: "all", Visibility: catalog.VisibleAll}, budget.Catalog(cfg, o.Home, pins), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range report.Tools {
		names = append(names, tl.Name)
	}
	if slices.Contains(names, "fx_echo") || !slices.Contains(names, "fx_slow") {
		t.Errorf("profile lists %v", names)
	}
}
