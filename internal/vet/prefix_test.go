package vet_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/vet"
)

// The collisions a prefix option causes are errors at the prefix key:
// two servers with one prefix (known without booting), and an unprefixed
// tool name that another server or a native tool already has (known from
// the tools the children serve, here after a live boot).
func TestPrefixCollisions(t *testing.T) {
	cs := testutil.ContentServer(t)
	fx := testutil.FixtureServer(t)
	dir := t.TempDir()
	path := testutil.WriteFile(t, dir, "mcp.config.json", `{
  "servers": {
    "one": {"command": "`+cs+`", "prefix": ""},
    "two": {"command": "`+cs+`",
            "prefix": ""},
    "x": {"command": "`+fx+`", "prefix": "same"},
    "y": {"command": "`+fx+`",
          "prefix": "same"},
    "z": {"command": "`+fx+`", "prefix": "own"}
  }
}`)
	children := config.ChildTimeouts{Boot: 30 * time.Second, Request: 30 * time.Second, ShutdownGrace: time.Second}
	ds := vet.Run(vet.Options{ConfigPath: path, PermissionsPath: filepath.Join(dir, "permissions.yml"), Env: fixedEnv(nil), Live: true,
		Home: filepath.Join(dir, "home"), Children: children})
	var got []config.Diagnostic
	for _, d := range ds {
		if d.Code == vet.CodePrefixCollision {
			got = append(got, d)
		}
	}
	find := func(line int, substr string) bool {
		for _, d := range got {
			if d.Line == line && d.Severity == config.SeverityError && strings.Contains(d.Message, substr) {
				return true
			}
		}
		return false
	}
	// y's prefix is on line 8; two's on line 5.
	if !find(8, "server 'y' uses the prefix 'same' of server 'x'") {
		t.Errorf("shared prefix not reported at y's prefix key:\n%s", dump(ds))
	}
	if !find(5, "server 'two' with prefix \"\" serves 'bump', which server 'one' serves too") {
		t.Errorf("unprefixed collision not reported at two's prefix key:\n%s", dump(ds))
	}
	for _, d := range got {
		if strings.Contains(d.Message, "server 'z'") {
			t.Errorf("a prefix of its own collides with nothing: %s", d)
		}
	}
}

// A child tool whose "<server>_<tool>" is longer than clients accept is
// reported with the shortened name it is listed and called under.
func TestLongToolNameShowsItsShortName(t *testing.T) {
	fx := testutil.FixtureServer(t)
	dir := t.TempDir()
	long := "summarize_every_open_pull_request_with_its_review_threads_x"
	path := testutil.WriteFile(t, dir, "mcp.config.json", `{"servers": {"github_enterprise": {"command": "`+fx+`", "args": ["-alias", "`+long+`"]}}}`)
	children := config.ChildTimeouts{Boot: 30 * time.Second, Request: 30 * time.Second, ShutdownGrace: time.Second}
	ds := vet.Run(vet.Options{ConfigPath: path, PermissionsPath: filepath.Join(dir, "permissions.yml"), Env: fixedEnv(nil), Live: true,
		Home: filepath.Join(dir, "home"), Children: children})
	full := "github_enterprise_" + long
	for _, d := range ds {
		if d.Code == vet.CodeLongName && d.Line == 1 && strings.Contains(d.Message, "'"+full+"'") && strings.Contains(d.Message, "'"+catalog.ShortName(full)+"'") {
			return
		}
	}
	t.Errorf("no long-name report naming both names:\n%s", dump(ds))
}
