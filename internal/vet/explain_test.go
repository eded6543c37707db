package vet

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/testutil"
)

// vet --explain prints discover_tools' answer offline with each result's
// signals, and why a named tool is not a result under the role and
// profile given.
func TestExplainPrintsSignalsAndWhyNot(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFile(t, dir, "permissions.yml", "roles:\n  ops:\n    default_permission: deny\n")
	testutil.WriteFile(t, dir, "mcp.config.json", `{"discovery": {"profiles": {"tiny": {"alwaysVisible": ["search_skills"]}}}}`)
	var out bytes.Buffer
	err := Explain(&out, ExplainOptions{
		MatrixOptions: func() MatrixOptions {
			o := matrixOptions(t, filepath.Join(dir, "mcp.config.json"), filepath.Join(dir, "permissions.yml"), nil)
			o.Role, o.Profile = "ops", "tiny"
			return o
		}(),
		Query: "how many tokens has this session used", WhyNot: "fleet_spawn", Limit: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		"Query: how many tokens has this session used\n",
		"1. session_context_health\n   why: tier relevance: lexical 1.00, meaning ",
		"Why not fleet_spawn: not matched: no word of the query",
		"profile tiny does not list it",
		`under role "ops", a call is denied.`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("want %q in\n%s", want, text)
		}
	}
}

// vet --explain refuses a role or profile the configuration does not
// have, as --matrix does, rather than explain under none.
func TestExplainRefusesAnUnknownRoleOrProfile(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFile(t, dir, "permissions.yml", "roles:\n  ops:\n    default_permission: deny\n")
	testutil.WriteFile(t, dir, "mcp.config.json", `{}`)
	for _, c := range []struct{ role, profile, want string }{
		{"opps", "", `no role "opps"`},
		{"", "tinny", `no profile "tinny"`},
	} {
		o := matrixOptions(t, filepath.Join(dir, "mcp.config.json"), filepath.Join(dir, "permissions.yml"), nil)
		o.Role, o.Profile = c.role, c.profile
		err := Explain(&bytes.Buffer{}, ExplainOptions{MatrixOptions: o, Query: "read a file", WhyNot: "fleet_spawn"})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("role %q profile %q: err %v, want %q", c.role, c.profile, err, c.want)
		}
	}
}
