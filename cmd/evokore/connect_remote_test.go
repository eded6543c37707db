package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pelletier/go-toml/v2"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// remoteToken is what the remote server below takes as its bearer.
const remoteToken = "tok-remote-3f9a"

// remoteServer is a remote MCP server as clients configure them: a
// go-sdk server over streamable HTTP with an echo tool, which answers 401
// to any request without the bearer token, so a call that reaches its
// echo proves the headers (and the variable in them) travelled.
func remoteServer(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	type echoIn struct {
		Message string `json:"message"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes the message back."}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Echo: " + in.Message}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+remoteToken {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// harnessEnv are the test's own settings for every evokore it starts:
// all tools listed, time for a race-built child to boot.
var harnessEnv = []string{testutil.RaceEnv, "EVOKORE_TOOL_DISCOVERY_MODE=legacy", "EVOKORE_CHILD_SERVER_BOOT_TIMEOUT_MS=20000"}

// clientEntry is evokore's entry as a client's file holds it.
type clientEntry struct {
	Command string            `json:"command" toml:"command"`
	Args    []string          `json:"args" toml:"args"`
	Env     map[string]string `json:"env" toml:"env"`
	EnvVars []string          `json:"-" toml:"env_vars"`
}

// entryOf reads evokore's entry from a client's file.
func entryOf(t *testing.T, client, path string) clientEntry {
	t.Helper()
	var doc struct {
		MCPServers map[string]clientEntry `json:"mcpServers" toml:"mcp_servers"`
		Servers    map[string]clientEntry `json:"servers"`
	}
	var err error
	if client == "codex" {
		err = toml.Unmarshal(read(t, path), &doc)
	} else {
		// VS Code's JSONC: comments and trailing commas out.
		text := regexp.MustCompile(`(?m)^\s*//.*$`).ReplaceAll(read(t, path), nil)
		text = regexp.MustCompile(`,(\s*[}\]])`).ReplaceAll(text, []byte("$1"))
		err = json.Unmarshal(text, &doc)
	}
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	e, ok := doc.MCPServers["evokore"]
	if !ok {
		e, ok = doc.Servers["evokore"]
	}
	if !ok {
		t.Fatalf("no evokore entry in %s:\n%s", path, read(t, path))
	}
	return e
}

// clientRefs are how each client writes a variable in an entry's env.
var clientRefs = map[string]*regexp.Regexp{
	"claude-code": regexp.MustCompile(`\$\{(\w+)\}`),
	"cursor":      regexp.MustCompile(`\$\{env:(\w+)\}`),
	"vscode":      regexp.MustCompile(`\$\{env:(\w+)\}`),
	"windsurf":    regexp.MustCompile(`\$\{env:(\w+)\}`),
	"gemini":      regexp.MustCompile(`\$\{(\w+)\}|\$(\w+)`),
}

// secretLooking are the variables Gemini CLI keeps from a server it
// starts unless the entry names them.
var secretLooking = regexp.MustCompile(`(?i)TOKEN|KEY|SECRET|PASSWORD|AUTH|CREDENTIAL`)

// launchAsClient starts evokore's entry of a client's file the way that
// client starts a server: Claude Code, Cursor, VS Code and Windsurf with
// their whole environment, Gemini CLI without the secret-looking
// variables, Codex with HOME and PATH and those its env_vars names,
// Claude Desktop with HOME and PATH; each adds the entry's env, its
// references expanded in the client's syntax. It returns a real MCP
// client's session over the process's stdio.
func launchAsClient(t *testing.T, client string, e clientEntry, command, dir string, clientEnv map[string]string) (*mcp.ClientSession, *routertest.Buffer) {
	t.Helper()
	env := map[string]string{}
	for k, v := range clientEnv {
		switch {
		case client == "codex" || client == "claude-desktop":
			if k == "HOME" || k == "PATH" {
				env[k] = v
			}
		case client == "gemini" && secretLooking.MatchString(k):
		default:
			env[k] = v
		}
	}
	for _, k := range e.EnvVars {
		if v, ok := clientEnv[k]; ok {
			env[k] = v
		}
	}
	for k, v := range e.Env {
		env[k] = expand(clientRefs[client], v, clientEnv)
	}
	cmd := exec.Command(command, e.Args...)
	cmd.Dir = dir
	cmd.Env = harnessEnv
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stderr := &routertest.Buffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("%s starting evokore: %v\n%s", client, err, stderr.String())
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, stderr
}

// expand replaces the references re finds in v by their values in env.
func expand(re *regexp.Regexp, v string, env map[string]string) string {
	if re == nil {
		return v
	}
	return re.ReplaceAllStringFunc(v, func(m string) string {
		for _, name := range re.FindStringSubmatch(m)[1:] {
			if name != "" {
				return env[name]
			}
		}
		return ""
	})
}

// callThrough calls the remote server's echo through evokore once its
// child is connected.
func callThrough(t *testing.T, cs *mcp.ClientSession, stderr *routertest.Buffer, id string) {
	t.Helper()
	routertest.WaitFor(t, id+" connected through evokore", func() bool {
		st := statusByID(t, cs)[id]
		if strings.HasPrefix(st, "error") {
			t.Fatalf("%s: %s\n%s", id, st, stderr.String())
		}
		return strings.HasPrefix(st, "connected")
	})
	if got := routertest.Text(routertest.Call(t, cs, id+"_echo", map[string]any{"message": "through evokore"})); got != "Echo: through evokore" {
		t.Fatalf("%s_echo = %q", id, got)
	}
}

// TestConnectImportCarriesRemoteServersWhole: for every client, a remote
// server written the client's way (Cursor's url without a type, Gemini's
// httpUrl and $VAR, Windsurf's serverUrl, ${env:VAR}, Codex's
// bearer_token_env_var) is imported as an HTTP child with its headers,
// its variable as evokore's ${REMOTE_TOKEN}; a reference evokore cannot
// resolve (VS Code's ${input:…}) stays in the client with its place; and
// started the way that client starts it, evokore reaches the remote
// server with the token the client's environment holds: Codex and
// Gemini pass it only because evokore's entry names it.
func TestConnectImportCarriesRemoteServersWhole(t *testing.T) {
	u := remoteServer(t)
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	for _, tc := range []struct {
		client, rel, text string
		header            string
		refused           string
	}{
		{client: "claude-code", rel: ".claude.json", text: `{"mcpServers": {"remote": {"type": "http", "url": ` + q(u) + `, "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"}}}}`},
		{client: "claude-desktop", rel: ".config/Claude/claude_desktop_config.json", text: `{"mcpServers": {"remote": {"url": ` + q(u) + `, "headers": {"Authorization": "Bearer ` + remoteToken + `"}}}}`,
			header: "Bearer " + remoteToken},
		{client: "cursor", rel: ".cursor/mcp.json", text: `{"mcpServers": {"remote": {"url": ` + q(u) + `, "headers": {"Authorization": "Bearer ${env:REMOTE_TOKEN}"}}}}`},
		{client: "vscode", rel: ".config/Code/User/mcp.json", text: "{\n  \"inputs\": [{\"type\": \"promptString\", \"id\": \"key\", \"password\": true}],\n  \"servers\": {\n    \"remote\": {\"type\": \"http\", \"url\": " + q(u) + ", \"headers\": {\"Authorization\": \"Bearer ${env:REMOTE_TOKEN}\"}},\n    \"asks\": {\"type\": \"stdio\", \"command\": \"uvx\", \"env\": {\"KEY\": \"${input:key}\"}},\n  },\n}\n",
			refused: "not imported: 'asks': %s:5:64: env.KEY: '${input:key}' asks the user in the editor"},
		{client: "windsurf", rel: ".codeium/windsurf/mcp_config.json", text: `{"mcpServers": {"remote": {"serverUrl": ` + q(u) + `, "headers": {"Authorization": "Bearer ${env:REMOTE_TOKEN}"}}}}`},
		{client: "codex", rel: ".codex/config.toml", text: "[mcp_servers.remote]\nurl = " + q(u) + "\nbearer_token_env_var = \"REMOTE_TOKEN\"\n"},
		{client: "gemini", rel: ".gemini/settings.json", text: `{"mcpServers": {"remote": {"httpUrl": ` + q(u) + `, "headers": {"Authorization": "Bearer $REMOTE_TOKEN"}}}}`},
	} {
		t.Run(tc.client, func(t *testing.T) {
			t.Parallel()
			e := newConnectEnv(t)
			path := filepath.Join(e.home, tc.rel)
			testutil.WriteFile(t, filepath.Dir(path), filepath.Base(path), tc.text)
			r := e.run("connect", tc.client, "--import")
			if r.code != 0 || !strings.Contains(r.stdout, "imported into "+e.config()+": remote\n") {
				t.Fatalf("connect --import: %+v", r)
			}
			if tc.refused != "" && !strings.Contains(r.stdout, strings.Replace(tc.refused, "%s", path, 1)) {
				t.Fatalf("the unresolvable reference was not refused at its place: %s", r.stdout)
			}
			want := tc.header
			if want == "" {
				want = "Bearer ${REMOTE_TOKEN}"
			}
			got := importedServers(t, e.config())["remote"]
			if got["type"] != "http" || got["url"] != u || jsonString(got["headers"]) != `{"Authorization":`+q(want)+`}` {
				t.Fatalf("imported %v", got)
			}
			clientEnv := map[string]string{"HOME": e.home, "PATH": os.Getenv("PATH"), "REMOTE_TOKEN": remoteToken}
			entry := entryOf(t, tc.client, path)
			cs, stderr := launchAsClient(t, tc.client, entry, entry.Command, e.wd, clientEnv)
			callThrough(t, cs, stderr, "remote")
		})
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestConnectProjectWorksOnATeammatesMachine: --project --import writes
// a .mcp.json and a ./mcp.config.json that hold no path of this machine
// and keep the project's servers in the project; on a teammate's machine
// (another HOME, another EVOKORE_HOME, evokore somewhere on their PATH)
// the entry as Claude Code starts it, in the project, reaches the
// project's remote server.
func TestConnectProjectWorksOnATeammatesMachine(t *testing.T) {
	u := remoteServer(t)
	e := newConnectEnv(t)
	mcpJSON := testutil.WriteFile(t, e.wd, ".mcp.json", `{
  "mcpServers": {
    "docs": {"type": "http", "url": "`+u+`", "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"}}
  }
}
`)
	// This machine's PATH, without any evokore a developer installed:
	// the note is for a PATH that has none.
	e.env = append(e.env, "PATH="+pathWithout(t, "evokore"))
	r := e.run("connect", "claude-code", "--project", "--import")
	projectConfig := filepath.Join(e.wd, "mcp.config.json")
	if r.code != 0 || !strings.Contains(r.stdout, "imported into "+projectConfig+": docs") {
		t.Fatalf("connect --project --import: %+v", r)
	}
	if !strings.Contains(r.stdout, "note: 'evokore' is not on this PATH") {
		t.Fatalf("no note that the portable entry needs evokore on PATH: %s", r.stdout)
	}
	for _, f := range []string{mcpJSON, projectConfig} {
		for _, here := range []string{e.home, e.evokore, filepath.Dir(e.exe), e.wd} {
			if bytes.Contains(read(t, f), []byte(here)) {
				t.Fatalf("%s names %s, a path of this machine:\n%s", f, here, read(t, f))
			}
		}
	}
	if _, err := os.Stat(e.config()); err == nil {
		t.Fatalf("the project's servers went into the user's own config %s", e.config())
	}

	// A teammate: their own clone of the project, their own home, evokore
	// on their PATH under its name.
	mate := t.TempDir()
	clone := filepath.Join(mate, "src", "project")
	for _, f := range []string{mcpJSON, projectConfig} {
		testutil.WriteFile(t, clone, filepath.Base(f), string(read(t, f)))
	}
	bin := filepath.Join(mate, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(e.exe, filepath.Join(bin, "evokore")); err != nil {
		t.Fatal(err)
	}
	path := bin + string(os.PathListSeparator) + os.Getenv("PATH")
	entry := entryOf(t, "claude-code", filepath.Join(clone, ".mcp.json"))
	command := lookPath(t, entry.Command, path)
	clientEnv := map[string]string{"HOME": filepath.Join(mate, "home"), "EVOKORE_HOME": filepath.Join(mate, "evokore"), "PATH": path, "REMOTE_TOKEN": remoteToken}
	cs, stderr := launchAsClient(t, "claude-code", entry, command, clone, clientEnv)
	callThrough(t, cs, stderr, "docs")
}

// pathWithout is the test's PATH without the directories that hold an
// executable named name.
func pathWithout(t *testing.T, name string) string {
	t.Helper()
	var keep []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			continue
		}
		keep = append(keep, dir)
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

// lookPath finds a command as a process with PATH path would.
func lookPath(t *testing.T, name, path string) string {
	t.Helper()
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	t.Fatalf("%s is not on %s", name, path)
	return ""
}

// TestConnectRefusesWhatAStrictClientWouldNot: a trailing comma in
// Claude Desktop's strict-JSON file is refused at its line and column,
// and the file is left as it is, with no backup.
func TestConnectRefusesWhatAStrictClientWouldNot(t *testing.T) {
	e := newConnectEnv(t)
	text := "{\n  \"mcpServers\": {\n    \"fs\": {\"command\": \"npx\", \"args\": [\"-y\", \"server\"]},\n  }\n}\n"
	path := filepath.Join(e.home, ".config", "Claude", "claude_desktop_config.json")
	testutil.WriteFile(t, filepath.Dir(path), filepath.Base(path), text)
	r := e.run("connect", "claude-desktop", "--import")
	col := strings.LastIndex(strings.Split(text, "\n")[2], ",") + 1
	want := path + ":3:" + strconv.Itoa(col) + ": a trailing comma, which Claude Desktop does not accept in this file (it reads it as strict JSON)"
	if r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Fatalf("connect: %+v\nwant an error with %q", r, want)
	}
	if string(read(t, path)) != text || len(evokoreBackups(path)) != 0 {
		t.Fatal("the refused file was changed or backed up")
	}
}
