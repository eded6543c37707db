package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/testutil"
)

// readmeBlock is the first fenced block of lang after the README heading
// that starts with heading.
func readmeBlock(t *testing.T, heading, lang string) string {
	t.Helper()
	return docBlock(t, "README.md", heading, lang)
}

// docBlock is the first fenced block of lang after the heading of file
// (relative to the repository) that starts with heading.
func docBlock(t *testing.T, file, heading, lang string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testutil.Root(t), file))
	if err != nil {
		t.Fatal(err)
	}
	at := strings.Index(string(b), "\n## "+heading)
	if at < 0 {
		t.Fatalf("%s has no section %q", file, heading)
	}
	m := regexp.MustCompile("(?s)\n```" + lang + "\n(.*?)\n```").FindStringSubmatch(string(b[at:]))
	if m == nil {
		t.Fatalf("%s's %q has no %s block", file, heading, lang)
	}
	return m[1]
}

// The README's example config, run as written (each npx package replaced
// by its installed copy, the tests having no network), serves the tools
// the shipped coding profile names: its filesystem server is "fs", as the
// profile's fs_* tools expect, so a newcomer who picks the coding profile
// sees their files' tools listed.
func TestREADMEConfigServesTheCodingProfile(t *testing.T) {
	var cfg struct {
		Servers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(readmeBlock(t, "A configuration that works", "json")), &cfg); err != nil {
		t.Fatalf("the README's config is not JSON: %v", err)
	}
	servers := map[string]any{}
	fileServer := ""
	for id, s := range cfg.Servers {
		if s.Command != "npx" || len(s.Args) < 2 || s.Args[0] != "-y" || !strings.HasPrefix(s.Args[1], "@modelcontextprotocol/") {
			t.Fatalf("server %q is not an npx reference server: %+v", id, s)
		}
		pkg := strings.TrimPrefix(s.Args[1], "@modelcontextprotocol/")
		if pkg == "server-filesystem" {
			fileServer = id
		}
		servers[id] = map[string]any{"command": "node", "args": append([]string{testutil.NPMServer(t, pkg)}, s.Args[2:]...)}
	}
	if fileServer == "" {
		t.Fatal("the README's config has no filesystem server")
	}
	dir := t.TempDir()
	testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": servers})
	r, code := profileJSON(t, dir, "coding", "--live")
	if code != 0 {
		t.Fatalf("profile coding: exit %d", code)
	}
	listed := map[string]bool{}
	for _, tool := range r.Tools {
		if tool.Server == fileServer {
			listed[tool.Name] = true
		}
	}
	for _, name := range []string{"read_file", "write_file", "edit_file", "list_directory", "search_files"} {
		if !listed[fileServer+"_"+name] {
			t.Fatalf("the coding profile does not list %s_%s from the README's %q server; it lists %v (missing %v)", fileServer, name, fileServer, r.Tools, r.Missing)
		}
	}
}

// The README's install commands work in a clone as written: each line of
// its Install block is run in the checkout (go with GOBIN in a temporary
// directory, evokore from there on PATH, with a fresh HOME), and the
// evokore the first installs answers the second with a verdict.
func TestREADMEInstallCommandsWorkFromAClone(t *testing.T) {
	bin, home := t.TempDir(), t.TempDir()
	path := "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")
	// go keeps the user's HOME (its module and build caches live there);
	// evokore gets a fresh one.
	goEnv := append(os.Environ(), "GOBIN="+bin, path)
	evokoreEnv := []string{path, "HOME=" + home, testutil.RaceEnv}
	var ran []string
	for _, line := range strings.Split(readmeBlock(t, "Install", "sh"), "\n") {
		line, _, _ = strings.Cut(line, "#")
		args := strings.Fields(line)
		if len(args) == 0 {
			continue
		}
		// A shell runs the line, finding the command on the PATH given.
		cmd := exec.Command("sh", "-c", line)
		cmd.Dir, cmd.Env = testutil.Root(t), evokoreEnv
		if args[0] == "go" {
			cmd.Env = goEnv
		}
		out, err := cmd.CombinedOutput()
		ran = append(ran, args[0]+" "+args[1])
		switch args[0] {
		case "go":
			if err != nil {
				t.Fatalf("%s: %v\n%s", line, err, out)
			}
			if _, err := os.Stat(filepath.Join(bin, "evokore")); err != nil {
				t.Fatalf("%s installed no evokore in GOBIN: %v", line, err)
			}
		case "evokore":
			if !regexp.MustCompile(`(?m)^(all checks passed|\d+ problem\(s\))$`).Match(out) {
				t.Fatalf("%s: %v\n%s", line, err, out)
			}
		default:
			t.Fatalf("the Install block runs %q, which this test does not know", args[0])
		}
	}
	if len(ran) != 2 || ran[0] != "go install" || ran[1] != "evokore doctor" {
		t.Errorf("the Install block runs %q, want go install then evokore doctor", ran)
	}
}

// npxShim stands in for npx on PATH: the tests have no network, so each
// @modelcontextprotocol package runs from its installed copy (the
// Inspector's CLI, a reference server's dist/index.js); anything else
// fails.
func npxShim(t *testing.T, dir string) {
	t.Helper()
	inspector := testutil.InspectorCLI(t)
	// node_modules/@modelcontextprotocol/server-filesystem/dist/index.js
	modules := testutil.NPMServer(t, "server-filesystem")
	for range 4 {
		modules = filepath.Dir(modules)
	}
	script := `#!/bin/sh
while [ $# -gt 0 ]; do case "$1" in -y|--yes) shift ;; *) break ;; esac; done
pkg=$1; shift
case "$pkg" in
@modelcontextprotocol/inspector) exec '` + inspector + `' "$@" ;;
@modelcontextprotocol/server-*) exec node '` + modules + `'/"$pkg"/dist/index.js "$@" ;;
esac
echo "npx (test shim): $pkg is not installed" >&2
exit 127
`
	if err := os.WriteFile(filepath.Join(dir, "npx"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// The Inspector recipe in docs/connect.md works as written: with the
// README's configuration in ~/.evokore/mcp.config.json and evokore on
// PATH, a shell runs the recipe's block and the Inspector's CLI prints
// the filesystem server's answer through evokore.
func TestInspectorRecipeWorksAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("npm Inspector: not in -short")
	}
	bin, home := t.TempDir(), t.TempDir()
	npxShim(t, bin)
	if err := os.Symlink(testutil.Evokore(t), filepath.Join(bin, "evokore")); err != nil {
		t.Fatal(err)
	}
	testutil.WriteFile(t, filepath.Join(home, ".evokore"), "mcp.config.json", readmeBlock(t, "A configuration that works", "json"))
	cmd := exec.Command("sh", "-e", "-c", docBlock(t, "docs/connect.md", "The MCP Inspector", "sh"))
	cmd.Dir = home
	cmd.Env = []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + home, testutil.RaceEnv}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Allowed directories:") || !strings.Contains(string(out), home) {
		t.Fatalf("the recipe: %v\n%s", err, out)
	}
}
