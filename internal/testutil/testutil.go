package testutil

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Root returns the module root.
func Root(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate testutil source")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

var (
	buildMu  sync.Mutex
	built    = map[string]string{}
	buildDir string
)

// build compiles a main package of the module once per test binary.
func build(t testing.TB, pkg, name string, flags ...string) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := built[pkg]; ok {
		return p
	}
	if buildDir == "" {
		d, err := os.MkdirTemp("", "evokore-test-bin-")
		if err != nil {
			t.Fatal(err)
		}
		buildDir = d
	}
	out := filepath.Join(buildDir, name)
	cmd := exec.Command("go", append(append([]string{"build"}, flags...), "-o", out, pkg)...)
	cmd.Dir = Root(t)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	built[pkg] = out
	return out
}

// Build compiles the main package pkg (a path from the module root, such
// as "./internal/voice/testdata/fakehelper") once per test binary and
// returns the path of the program.
func Build(t testing.TB, pkg, name string) string {
	return build(t, pkg, name)
}

// Evokore returns the path of a freshly built evokore binary, built with
// the race detector when the tests run with it.
func Evokore(t testing.TB) string {
	if Race {
		return build(t, "./cmd/evokore", "evokore", "-race")
	}
	return build(t, "./cmd/evokore", "evokore")
}

// FixtureServer returns the path of the fixture MCP server binary; see
// package fixtureserver for its flags and tools.
func FixtureServer(t testing.TB) string {
	return build(t, "./internal/testutil/fixtureserver", "fixtureserver")
}

// ContentServer builds the fixture child that serves prompts, resources,
// templates, subscriptions and completions (internal/testutil/contentserver).
func ContentServer(t testing.TB) string {
	return build(t, "./internal/testutil/contentserver", "contentserver")
}

// SkillServer builds the fixture child that offers the Skills Extension
// (internal/testutil/skillserver).
func SkillServer(t testing.TB) string {
	return build(t, "./internal/testutil/skillserver", "skillserver")
}

// NPMServer returns the entry script of an npm reference server installed
// by `make npm-deps` (name as in "server-everything"). Without the npm
// packages the test is skipped, or failed in CI mode or with
// EVOKORE_REQUIRE_NPM=1 (set by `make test`); see Unavailable.
func NPMServer(t testing.TB, name string) string {
	t.Helper()
	return npmFile(t, "@modelcontextprotocol/"+name, "dist/index.js")
}

// TSClientScript returns the proxy benchmark's driver of the TypeScript
// SDK's client (testdata/npm/bench-client.mjs), with the same skip rule
// as NPMServer for the SDK it imports.
func TSClientScript(t testing.TB) string {
	t.Helper()
	npmFile(t, "@modelcontextprotocol/sdk", "dist/esm/client/stdio.js")
	return filepath.Join(Root(t), "testdata", "npm", "bench-client.mjs")
}

// TSHTTPClientScript returns the path of a one-shot TypeScript SDK client
// of a streamable HTTP endpoint (testdata/npm/http-client.mjs), with the
// same skip rule as NPMServer.
func TSHTTPClientScript(t testing.TB) string {
	t.Helper()
	npmFile(t, "@modelcontextprotocol/sdk", "dist/esm/client/streamableHttp.js")
	return filepath.Join(Root(t), "testdata", "npm", "http-client.mjs")
}

// npmFile returns the path of file in a package `make npm-deps`
// installed. Missing, it skips the test, or fails it in CI mode or with
// EVOKORE_REQUIRE_NPM=1; node missing from PATH fails it.
func npmFile(t testing.TB, pkg, file string) string {
	t.Helper()
	p := filepath.Join(Root(t), "testdata", "npm", "node_modules", filepath.FromSlash(pkg), filepath.FromSlash(file))
	if _, err := os.Stat(p); err != nil {
		Unavailable(t, "EVOKORE_REQUIRE_NPM", pkg+" is not installed: run `make npm-deps`")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is not on PATH")
	}
	return p
}

// InspectorCLI returns the MCP Inspector's binary installed by `make
// npm-deps`, with the same skip rule as NPMServer.
func InspectorCLI(t testing.TB) string {
	t.Helper()
	p := filepath.Join(Root(t), "testdata", "npm", "node_modules", ".bin", "mcp-inspector")
	if _, err := os.Stat(p); err != nil {
		Unavailable(t, "EVOKORE_REQUIRE_NPM", "the MCP Inspector is not installed: run `make npm-deps`")
	}
	return p
}

// WriteJSON writes v as JSON to dir/name and returns the path.
func WriteJSON(t testing.TB, dir, name string, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return WriteFile(t, dir, name, string(b))
}

// WriteFile writes text to dir/name and returns the path.
func WriteFile(t testing.TB, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Python returns the python3 (or python) interpreter on PATH. Without one
// the test is skipped, or failed in CI mode or with
// EVOKORE_REQUIRE_PYTHON=1 (set by `make test`); see Unavailable.
func Python(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"python3", "python"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	Unavailable(t, "EVOKORE_REQUIRE_PYTHON", "python3 is not on PATH")
	return ""
}

// RaceEnv is the GORACE setting for the programs tests start with an
// environment of their own: a program built with the race detector (as
// testutil.Evokore builds it under -race) sleeps one second at exit by
// default (atexit_sleep_ms), and the tests start hundreds of them. Races
// are still reported, and still fail the program's exit status.
var RaceEnv = "GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")
