package connect

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// disconnect plans disconnect and applies it.
func (s *setup) disconnect() *Plan {
	s.t.Helper()
	p, err := Disconnect(s.options(false))
	if err != nil {
		s.t.Fatal(err)
	}
	if _, err := p.Apply(time.Now()); err != nil {
		s.t.Fatal(err)
	}
	return p
}

func (s *setup) write(text string) {
	s.t.Helper()
	if err := os.WriteFile(s.file, []byte(text), 0o600); err != nil {
		s.t.Fatal(err)
	}
}

func (s *setup) recordGone() bool {
	_, err := os.Stat(recordPath(s.home, s.file))
	return errors.Is(err, fs.ErrNotExist)
}

const claudeFile = `{
  "numStartups": 118,
  "mcpServers": {
    "github": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},
    "docs": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}},
    "local": {"command": "pg-mcp", "args": ["--db", "${userHome}"]}
  },
  "oauthAccount": {"emailAddress": "dev@example.com"}
}
`

const codexFile = `# Codex configuration
model = "o4-mini"

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp"]

[mcp_servers.docs.env]
API_KEY = "${API_KEY}"

# A remote server.
[mcp_servers.remote]
url = "https://mcp.example.com/mcp"
bearer_token_env_var = "REMOTE_TOKEN"

[profiles.fast]
model = "o3"
`

// TestDisconnectPutsTheFileBackByteForByte: when the client's file is
// still as connect's only change left it, disconnect puts the backup
// back, and forgets the connection.
func TestDisconnectPutsTheFileBackByteForByte(t *testing.T) {
	for client, text := range map[string]string{"claude-code": claudeFile, "codex": codexFile} {
		t.Run(client, func(t *testing.T) {
			s := newSetup(t, client, text)
			if p := s.connect(); len(p.Imported) == 0 {
				t.Fatalf("nothing imported: %+v", p.Refused)
			}
			p := s.disconnect()
			if !p.ByteRestore || s.read() != text || !s.recordGone() {
				t.Fatalf("restore %v, record gone %v, file:\n%s", p.ByteRestore, s.recordGone(), s.read())
			}
		})
	}
}

// TestDisconnectAfterARewritePutsServersBackInPlace: after the client changed
// its file, disconnect removes evokore's entry and puts each imported
// server back as written, where it was: the original plus the client's
// change.
func TestDisconnectAfterARewritePutsServersBackInPlace(t *testing.T) {
	for client, tc := range map[string]struct{ text, from, to string }{
		"claude-code": {claudeFile, `"numStartups": 118`, `"numStartups": 119`},
		// Servers go back in front of the server that followed them, else
		// last: here they were last.
		"codex": {"model = \"o4-mini\"\n\n[profiles.fast]\nmodel = \"o3\"\n\n" + strings.Replace(codexFile[strings.Index(codexFile, "[mcp_servers.docs]"):strings.Index(codexFile, "[profiles.fast]")], "# A remote server.\n", "", 1),
			`model = "o3"`, `model = "o3-pro"`},
	} {
		t.Run(client, func(t *testing.T) {
			s := newSetup(t, client, tc.text)
			s.connect()
			s.write(strings.Replace(s.read(), tc.from, tc.to, 1))
			p := s.disconnect()
			if want := strings.Replace(tc.text, tc.from, tc.to, 1); p.ByteRestore || s.read() != want {
				t.Fatalf("restore %v; file:\n%s\nwant:\n%s", p.ByteRestore, s.read(), want)
			}
			if !s.recordGone() {
				t.Fatal("the record of the connection is still there")
			}
		})
	}
}

// TestDisconnectGivesBackTheEntryConnectReplaced: an entry named
// evokore that connect replaced comes back, in its place, and a server
// the user already put back is not given back twice.
func TestDisconnectGivesBackTheEntryConnectReplaced(t *testing.T) {
	text := `{
  "mcpServers": {
    "evokore": {"command": "/old/evokore", "args": ["serve"]},
    "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem"]}
  },
  "theme": "dark"
}
`
	s := newSetup(t, "claude-desktop", text)
	s.connect()
	s.write(strings.Replace(s.read(), `"theme": "dark"`, `"theme": "light"`, 1))
	p := s.disconnect()
	if want := strings.Replace(text, `"theme": "dark"`, `"theme": "light"`, 1); s.read() != want || strings.Join(p.Restored, ",") != "fs" {
		t.Fatalf("restored %v; file:\n%s\nwant:\n%s", p.Restored, s.read(), want)
	}
	// The user put fs back by hand after connect: it is not given back twice.
	again := newSetup(t, "claude-desktop", text)
	again.connect()
	again.write(strings.Replace(again.read(), `"mcpServers": {`, `"mcpServers": {"fs": {"command": "npx"},`, 1))
	p = again.disconnect()
	if len(p.Restored) != 0 || strings.Count(again.read(), `"fs"`) != 1 {
		t.Fatalf("restored %v; file:\n%s", p.Restored, again.read())
	}
}

// TestDisconnectWithoutARecordRemovesTheEntryOnly: with no record of
// the connection, disconnect takes out the evokore entry and nothing
// else; a file connect created is removed again.
func TestDisconnectWithoutARecordRemovesTheEntryOnly(t *testing.T) {
	s := newSetup(t, "cursor", `{"mcpServers": {"evokore": {"command": "evokore"}, "fs": {"command": "npx"}}}`)
	p := s.disconnect()
	if !p.NoRecord || s.read() != `{"mcpServers": {"fs": {"command": "npx"}}}` {
		t.Fatalf("no record %v; file:\n%s", p.NoRecord, s.read())
	}

	created := newSetup(t, "gemini", "")
	created.connect()
	created.disconnect()
	if _, err := os.Stat(created.file); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the file connect created is still there: %v", err)
	}
}

// TestStartsEvokore: the self-reference rule connect, --import and
// doctor share. A server whose command is evokore, by name or as this
// very executable under another name, or that runs evokore through an
// argument, would start evokore inside itself without end.
func TestStartsEvokore(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(dir, "mcp-router")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		command string
		args    []string
		self    bool
	}{
		{"evokore", []string{"serve"}, true},
		{"/usr/local/bin/evokore", nil, true},
		{`C:\Tools\EVOKORE.exe`, nil, true},
		{"npx", []string{"-y", "evokore@latest"}, true},
		{"go", []string{"run", "./cmd/evokore"}, true},
		{filepath.Join(dir, "mcp-router"), nil, true},
		{"./mcp-router", nil, true},
		{"npx", []string{"-y", "@modelcontextprotocol/server-memory"}, false},
		{"evokore-tools", []string{"--evokore-compatible"}, false},
		{"", []string{"evokore"}, false},
	} {
		why, self := StartsEvokore(tc.command, tc.args, dir)
		if self != tc.self || self == (why == "") {
			t.Errorf("StartsEvokore(%q, %q) = %q, %v; want %v", tc.command, tc.args, why, self, tc.self)
		}
	}
}
