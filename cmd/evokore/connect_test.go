package main_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/testutil"
)

// connectEnv is a user with HOME, EVOKORE_HOME and a working directory
// of their own, so the client files are the fixtures and nothing else.
type connectEnv struct {
	t                 *testing.T
	home, evokore, wd string
	exe               string
	env               []string
}

// runResult is what one run of the binary printed and its exit code.
type runResult struct {
	stdout, stderr string
	code           int
}

func newConnectEnv(t *testing.T) *connectEnv {
	dir := t.TempDir()
	e := &connectEnv{t: t, home: filepath.Join(dir, "home"), evokore: filepath.Join(dir, "evokore-home"), wd: filepath.Join(dir, "project"), exe: testutil.Evokore(t)}
	for _, d := range []string{e.home, e.wd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func (e *connectEnv) run(args ...string) runResult {
	e.t.Helper()
	cmd := exec.Command(e.exe, args...)
	cmd.Dir = e.wd
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + e.home, "EVOKORE_HOME=" + e.evokore}, e.env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return runResult{stdout: out.String(), stderr: errb.String(), code: code}
}

func (e *connectEnv) config() string { return filepath.Join(e.evokore, "mcp.config.json") }

// place copies a fixture to the client's file under the user's home.
func (e *connectEnv) place(fixture, rel string) (path string, original []byte) {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(testutil.Root(e.t), "testdata", "clients", fixture))
	if err != nil {
		e.t.Fatal(err)
	}
	path = filepath.Join(e.home, rel)
	if strings.HasPrefix(rel, "./") {
		path = filepath.Join(e.wd, rel)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		e.t.Fatal(err)
	}
	return path, b
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func evokoreBackups(path string) []string {
	m, _ := filepath.Glob(path + ".evokore-backup-*")
	return m
}

// importedServers decodes evokore's config.
func importedServers(t *testing.T, path string) map[string]map[string]any {
	t.Helper()
	var doc struct {
		Servers map[string]map[string]any `json:"servers"`
	}
	if err := json.Unmarshal(read(t, path), &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc.Servers
}

// clientCase is one client's fixture: what --import moves, the secret
// written in it, and lines outside the servers section that must
// survive byte for byte.
type clientCase struct {
	client, fixture, rel string
	args                 []string
	// project: --project, whose servers stay in the project's config.
	project  bool
	imported []string
	secret   string
	kept     []string
}

var clientCases = []clientCase{
	{client: "claude-code", fixture: "claude-code.json", rel: ".claude.json", imported: []string{"github", "docs"}, secret: "sk-SECRET-claude-code",
		kept: []string{`"numStartups": 118,`, `        {"display": "fix the flaky test", "pastedContents": {}}`, `        "local-db": {"type": "stdio", "command": "pg-mcp", "args": [], "env": {}}`, `  "oauthAccount": {"emailAddress": "dev@example.com", "organizationRole": "admin"}`}},
	{client: "claude-code", fixture: "mcp.json", rel: "./.mcp.json", args: []string{"--project"}, project: true, imported: []string{"memory"}, secret: "sk-SECRET-mcp-json"},
	{client: "claude-desktop", fixture: "claude-desktop.json", rel: ".config/Claude/claude_desktop_config.json", imported: []string{"filesystem"}, secret: "sk-SECRET-claude-desktop",
		kept: []string{"\t\"globalShortcut\": \"Ctrl+Space\",", "\t\"preferences\": {\"menuBarEnabled\": true}"}},
	{client: "cursor", fixture: "cursor.json", rel: ".cursor/mcp.json", imported: []string{"brave"}, secret: "sk-SECRET-cursor"},
	{client: "vscode", fixture: "vscode.json", rel: ".config/Code/User/mcp.json", imported: []string{"fetch"}, secret: "sk-SECRET-vscode",
		kept: []string{"    // Servers for Copilot agent mode.", `            "id": "perplexity-key",`}},
	{client: "windsurf", fixture: "windsurf.json", rel: ".codeium/windsurf/mcp_config.json", imported: []string{"context", "sqlite"}, secret: "sk-SECRET-windsurf"},
	{client: "codex", fixture: "codex.toml", rel: ".codex/config.toml", imported: []string{"docs", "remote"}, secret: "sk-SECRET-codex",
		kept: []string{"# Codex configuration", `approval_policy = "on-request"`, "[profiles.fast]\nmodel = \"o3\""}},
	{client: "gemini", fixture: "gemini.json", rel: ".gemini/settings.json", imported: []string{"remote", "git"}, secret: "sk-SECRET-gemini",
		kept: []string{`  "theme": "Dracula",`, `  "preferredEditor": "vscode"`}},
}

var unifiedHunk = regexp.MustCompile(`(?m)^@@ -\d+(,\d+)? \+\d+(,\d+)? @@$`)

// TestConnectImportsIsIdempotentAndDisconnectRestores runs every client's
// fixture through the real binary: the dry run's diff, connect --import
// (evokore's entry in, the other servers moved into evokore's config
// with their values as written, the evokore entry refused, the rest of
// the file untouched), a second run that changes nothing, and disconnect
// putting the file back byte for byte.
func TestConnectImportsIsIdempotentAndDisconnectRestores(t *testing.T) {
	for _, tc := range clientCases {
		t.Run(tc.client+"/"+tc.fixture, func(t *testing.T) {
			t.Parallel()
			e := newConnectEnv(t)
			path, original := e.place(tc.fixture, tc.rel)
			args := append([]string{"connect", tc.client, "--import"}, tc.args...)
			config := e.config()
			if tc.project {
				config = filepath.Join(e.wd, "mcp.config.json")
			}

			// The dry run prints a unified diff and writes nothing.
			r := e.run(append(args, "--dry-run")...)
			if r.code != 0 || !strings.Contains(r.stdout, "--- "+path+"\n+++ "+path+"\n") || !unifiedHunk.MatchString(r.stdout) ||
				!strings.Contains(r.stdout, "+++ "+config+"\n") {
				t.Fatalf("dry run: %+v", r)
			}
			if !regexp.MustCompile(`(?m)^\+.*"?evokore"?`).MatchString(r.stdout) || !regexp.MustCompile(`(?m)^-.*`+regexp.QuoteMeta(tc.imported[0])).MatchString(r.stdout) {
				t.Fatalf("the dry run's diff does not show the entry added and %s removed:\n%s", tc.imported[0], r.stdout)
			}
			if strings.Contains(r.stdout+r.stderr, "sk-SECRET") {
				t.Fatalf("the dry run printed a secret value:\n%s", r.stdout)
			}
			if !bytes.Equal(read(t, path), original) || len(evokoreBackups(path)) != 0 {
				t.Fatal("--dry-run changed the client's file")
			}
			if _, err := os.Stat(config); err == nil {
				t.Fatal("--dry-run created evokore's config")
			}

			r = e.run(args...)
			if r.code != 0 || !strings.Contains(r.stdout, "imported into "+config+": "+strings.Join(tc.imported, ", ")) {
				t.Fatalf("connect --import: %+v", r)
			}
			if !strings.Contains(r.stdout, "not imported: 'loop'") || !strings.Contains(r.stdout, "does not import itself") {
				t.Fatalf("the entry that starts evokore was not refused by name: %s", r.stdout)
			}
			if strings.Contains(r.stdout+r.stderr, "sk-SECRET") {
				t.Fatalf("connect printed a secret value:\n%s", r.stdout)
			}
			after := read(t, path)
			for _, k := range tc.kept {
				if !bytes.Contains(after, []byte(k)) {
					t.Errorf("%q did not survive connect:\n%s", k, after)
				}
			}
			switch {
			case tc.project && (!bytes.Contains(after, []byte(`"command": "evokore"`)) || bytes.Contains(after, []byte(e.exe)) || bytes.Contains(after, []byte(e.evokore))):
				t.Fatalf("the project's entry is not the portable `evokore serve`:\n%s", after)
			case !tc.project && (!bytes.Contains(after, []byte(e.exe)) || !bytes.Contains(after, []byte(e.config()))):
				t.Fatalf("no evokore entry running %s --config %s:\n%s", e.exe, e.config(), after)
			}
			if b := evokoreBackups(path); len(b) != 1 || !bytes.Equal(read(t, b[0]), original) {
				t.Fatalf("backups %v: want one holding the original", b)
			}
			servers := importedServers(t, config)
			for _, n := range tc.imported {
				if servers[n] == nil {
					t.Errorf("%s is not in evokore's config: %v", n, servers)
				}
				if bytes.Contains(after, []byte(`"`+n+`"`)) || bytes.Contains(after, []byte("mcp_servers."+n+"]")) {
					t.Errorf("%s is still in the client", n)
				}
			}
			if servers["loop"] != nil {
				t.Error("the entry that starts evokore was imported")
			}
			if !bytes.Contains(read(t, config), []byte(tc.secret)) {
				t.Errorf("the secret was not carried as written into evokore's config")
			}
			// What was imported is a config evokore accepts.
			if v := e.run("vet", "--config", config); v.code != 0 {
				t.Fatalf("vet of the imported config: %+v", v)
			}
			if l := e.run("connect", "--list"); l.code != 0 || (tc.args == nil && !regexp.MustCompile(`(?m)^`+tc.client+`\s+`+regexp.QuoteMeta(path)+`\s+connected, 1 other server`).MatchString(l.stdout)) {
				t.Fatalf("--list after connect: %+v", l)
			}

			// A second run changes nothing.
			written := read(t, config)
			if r := e.run(args...); r.code != 0 || !strings.Contains(r.stdout, "no change") {
				t.Fatalf("second connect: %+v", r)
			}
			if !bytes.Equal(read(t, path), after) || !bytes.Equal(read(t, config), written) || len(evokoreBackups(path)) != 1 {
				t.Fatal("a second connect changed something")
			}

			// disconnect puts the file back byte for byte.
			r = e.run(append([]string{"disconnect", tc.client}, tc.args...)...)
			if r.code != 0 || !strings.Contains(r.stdout, "given back: "+strings.Join(tc.imported, ", ")) {
				t.Fatalf("disconnect: %+v", r)
			}
			if got := read(t, path); !bytes.Equal(got, original) {
				t.Fatalf("disconnect did not restore the file:\n%s\nwant:\n%s", got, original)
			}
			if r := e.run(append([]string{"disconnect", tc.client}, tc.args...)...); r.code != 0 || !strings.Contains(r.stdout, "no change") {
				t.Fatalf("second disconnect: %+v", r)
			}
		})
	}
}

// TestDisconnectAfterTheClientRewroteItsFile: Claude Code rewrites
// ~/.claude.json all the time. Disconnect after such a change takes out
// only what connect put in, and the file equals the original with the
// client's change.
func TestDisconnectAfterTheClientRewroteItsFile(t *testing.T) {
	e := newConnectEnv(t)
	path, original := e.place("claude-code.json", ".claude.json")
	if r := e.run("connect", "claude-code", "--import"); r.code != 0 {
		t.Fatalf("connect: %+v", r)
	}
	changed := bytes.Replace(read(t, path), []byte(`"numStartups": 118`), []byte(`"numStartups": 119`), 1)
	if err := os.WriteFile(path, changed, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := e.run("disconnect", "claude-code"); r.code != 0 || !strings.Contains(r.stdout, "removed the evokore entry") {
		t.Fatalf("disconnect: %+v", r)
	}
	want := bytes.Replace(original, []byte(`"numStartups": 118`), []byte(`"numStartups": 119`), 1)
	if got := read(t, path); !bytes.Equal(got, want) {
		t.Fatalf("after disconnect:\n%s\nwant:\n%s", got, want)
	}
}

// TestConnectRefusesToImportThisEvokore: an entry under any name whose
// command is this very executable stays in the client, named, and is
// never written into evokore's config.
func TestConnectRefusesToImportThisEvokore(t *testing.T) {
	e := newConnectEnv(t)
	cursor := filepath.Join(e.home, ".cursor", "mcp.json")
	// Another name for the same executable, as a package manager's link.
	link := filepath.Join(t.TempDir(), "mcp-router")
	if err := os.Symlink(e.exe, link); err != nil {
		t.Fatal(err)
	}
	self, _ := json.Marshal(link)
	testutil.WriteFile(t, filepath.Dir(cursor), "mcp.json", `{"mcpServers": {"router": {"command": `+string(self)+`, "args": ["serve"]}, "fs": {"command": "npx"}}}`)
	r := e.run("connect", "cursor", "--import")
	if r.code != 0 || !strings.Contains(r.stdout, "not imported: 'router': its command '"+link+"' is this evokore") {
		t.Fatalf("connect: %+v", r)
	}
	if servers := importedServers(t, e.config()); servers["router"] != nil || servers["fs"] == nil {
		t.Fatalf("evokore's config: %v", servers)
	}
	if !bytes.Contains(read(t, cursor), []byte(`"router"`)) {
		t.Fatal("the refused entry left the client")
	}
}

// TestConnectWithoutImportCreatesTheConfigAndKeepsServers: a fresh home
// gets an empty config for the entry to serve, and the client keeps its
// servers.
func TestConnectWithoutImportCreatesTheConfigAndKeepsServers(t *testing.T) {
	e := newConnectEnv(t)
	path, _ := e.place("gemini.json", ".gemini/settings.json")
	r := e.run("connect", "gemini")
	if r.code != 0 || !strings.Contains(r.stdout, "left in the client: remote, git, loop (--import moves them under evokore)") {
		t.Fatalf("connect: %+v", r)
	}
	if got := string(read(t, e.config())); got != "{\n  \"servers\": {}\n}\n" {
		t.Fatalf("config: %q", got)
	}
	if !bytes.Contains(read(t, path), []byte(`"git"`)) {
		t.Fatal("a server left the client without --import")
	}
}
