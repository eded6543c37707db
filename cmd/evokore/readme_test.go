package main_test

import (
	"encoding/json"
	"os"
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
	b, err := os.ReadFile(filepath.Join(testutil.Root(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	at := strings.Index(string(b), "\n## "+heading)
	if at < 0 {
		t.Fatalf("README has no section %q", heading)
	}
	m := regexp.MustCompile("(?s)\n```" + lang + "\n(.*?)\n```").FindStringSubmatch(string(b[at:]))
	if m == nil {
		t.Fatalf("README's %q has no %s block", heading, lang)
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
