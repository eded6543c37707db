package connect

import (
	"errors"
	"strings"
	"testing"
)

// TestImportTranslatesEachClientsVariables: each client's way of
// writing a variable becomes evokore's ${NAME}, or the server stays in
// the client with the place and the reason; a reference never moves as
// literal text, and a refusal never shows a default (it may be a
// secret).
func TestImportTranslatesEachClientsVariables(t *testing.T) {
	for _, tc := range []struct {
		name, client, text string
		// want is the imported server's env, headers or args (as JSON);
		// refused, the reference whose place and reason the refusal gives.
		want, refused, reason string
	}{
		{name: "claude-code ${X}", client: "claude-code", text: `{"mcpServers": {"s": {"command": "x", "env": {"T": "${TOKEN}"}}}}`, want: `{"T":"${TOKEN}"}`},
		{name: "claude-code default", client: "claude-code", text: `{"mcpServers": {"s": {"command": "x", "env": {"D": "${DEBUG:-sk-default-secret}"}}}}`,
			refused: `"${DEBUG:-`, reason: "env.D: '${DEBUG:-…}' gives a default, and evokore's ${DEBUG} takes none"},
		{name: "cursor env", client: "cursor", text: `{"mcpServers": {"s": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${env:TOKEN}"}}}}`, want: `{"Authorization":"Bearer ${TOKEN}"}`},
		{name: "cursor userHome", client: "cursor", text: `{"mcpServers": {"s": {"command": "x", "args": ["--db", "${userHome}/db.sqlite"]}}}`, want: `["--db","${HOME}/db.sqlite"]`},
		{name: "cursor workspace", client: "cursor", text: `{"mcpServers": {"s": {"command": "x", "args": ["${workspaceFolder}"]}}}`,
			refused: `"${workspaceFolder}"`, reason: "args[0]: '${workspaceFolder}' is the editor's workspace"},
		{name: "vscode env", client: "vscode", text: `{"servers": {"s": {"type": "stdio", "command": "x", "env": {"K": "${env:KEY}"},},}}`, want: `{"K":"${KEY}"}`},
		{name: "vscode input", client: "vscode", text: "{\n  \"servers\": {\n    \"s\": {\"command\": \"x\", \"env\": {\"K\": \"${input:api-key}\"}}\n  }\n}",
			refused: `"${input:api-key}"`, reason: "env.K: '${input:api-key}' asks the user in the editor"},
		{name: "windsurf env", client: "windsurf", text: `{"mcpServers": {"s": {"serverUrl": "https://h/mcp", "headers": {"X-Key": "${env:KEY}"}}}}`, want: `{"X-Key":"${KEY}"}`},
		{name: "windsurf file", client: "windsurf", text: `{"mcpServers": {"s": {"command": "x", "env": {"K": "${file:/run/secret}"}}}}`,
			refused: `"${file:/run/secret}"`, reason: "env.K: '${file:…}' reads a file"},
		{name: "gemini bare", client: "gemini", text: `{"mcpServers": {"s": {"command": "x", "env": {"K": "$API_KEY", "B": "${B}"}}}}`, want: `{"B":"${B}","K":"${API_KEY}"}`},
		{name: "gemini header", client: "gemini", text: `{"mcpServers": {"s": {"httpUrl": "https://h/mcp", "headers": {"Authorization": "Bearer $TOKEN"}}}}`, want: `{"Authorization":"Bearer ${TOKEN}"}`},
		{name: "claude-desktop editor syntax", client: "claude-desktop", text: `{"mcpServers": {"s": {"command": "x", "env": {"K": "${env:KEY}"}}}}`,
			refused: `"${env:KEY}"`, reason: "env.K: '${env:…}' is not a variable evokore resolves"},
		{name: "codex default", client: "codex", text: "[mcp_servers.s]\ncommand = \"x\"\n\n[mcp_servers.s.env]\nK = \"${KEY:-secret-default}\"\n",
			refused: `K = `, reason: "env.K: '${KEY:…}' is not a variable evokore resolves"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t, tc.client, tc.text)
			p := s.connect()
			why := refusal(p, "s")
			if tc.refused != "" {
				if want := s.position(tc.refused) + ": " + tc.reason; !strings.HasPrefix(why, want) {
					t.Fatalf("refusal %q\nwant it to start %q", why, want)
				}
				if strings.Contains(why, "secret-default") || !strings.Contains(s.read(), `"s"`) && !strings.Contains(s.read(), "[mcp_servers.s]") {
					t.Fatalf("the refusal shows the default, or the server left the client: %q\n%s", why, s.read())
				}
				return
			}
			if why != "" {
				t.Fatalf("refused: %s", why)
			}
			got := s.servers()["s"]
			var part any
			for _, k := range []string{"env", "headers", "args"} {
				if got[k] != nil && strings.HasPrefix(tc.want, map[string]string{"env": "{", "headers": "{", "args": "["}[k]) {
					part = got[k]
				}
			}
			if jsonOf(part) != tc.want {
				t.Fatalf("imported %s, want %s", jsonOf(got), tc.want)
			}
		})
	}
}

// TestImportTypesRemoteServers: a remote server of any client becomes
// an HTTP (or SSE) child with its url and headers, never a stdio server
// without a command.
func TestImportTypesRemoteServers(t *testing.T) {
	for _, tc := range []struct{ name, client, text, want string }{
		{"cursor url without type", "cursor", `{"mcpServers": {"s": {"url": "https://h/mcp", "headers": {"X-Key": "k"}}}}`, `{"headers":{"X-Key":"k"},"type":"http","url":"https://h/mcp"}`},
		{"cursor SSE url", "cursor", `{"mcpServers": {"s": {"url": "https://h/sse", "headers": {"X-Key": "k"}}}}`, `{"headers":{"X-Key":"k"},"type":"sse","url":"https://h/sse"}`},
		{"claude-desktop url", "claude-desktop", `{"mcpServers": {"s": {"url": "https://h/mcp?api_key=k"}}}`, `{"type":"http","url":"https://h/mcp?api_key=k"}`},
		{"claude-code typed", "claude-code", `{"mcpServers": {"s": {"type": "sse", "url": "https://h/events", "headers": {"A": "b"}}}}`, `{"headers":{"A":"b"},"type":"sse","url":"https://h/events"}`},
		{"vscode http", "vscode", `{"servers": {"s": {"type": "http", "url": "https://h/mcp", "headers": {"A": "b"}}}}`, `{"headers":{"A":"b"},"type":"http","url":"https://h/mcp"}`},
		{"windsurf serverUrl", "windsurf", `{"mcpServers": {"s": {"serverUrl": "https://h/mcp", "headers": {"A": "b"}}}}`, `{"headers":{"A":"b"},"type":"http","url":"https://h/mcp"}`},
		{"gemini httpUrl", "gemini", `{"mcpServers": {"s": {"httpUrl": "https://h/mcp", "headers": {"A": "b"}, "timeout": 5000}}}`, `{"headers":{"A":"b"},"timeouts":{"requestMs":5000},"type":"http","url":"https://h/mcp"}`},
		{"gemini url is SSE", "gemini", `{"mcpServers": {"s": {"url": "https://h/mcp", "headers": {"A": "b"}}}}`, `{"headers":{"A":"b"},"type":"sse","url":"https://h/mcp"}`},
		{"codex bearer", "codex", "[mcp_servers.s]\nurl = \"https://h/mcp\"\nbearer_token_env_var = \"T\"\nhttp_headers = { X = \"y\" }\nenv_http_headers = { Z = \"ZV\" }\n",
			`{"headers":{"Authorization":"Bearer ${T}","X":"y","Z":"${ZV}"},"type":"http","url":"https://h/mcp"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t, tc.client, tc.text)
			p := s.connect()
			if why := refusal(p, "s"); why != "" {
				t.Fatalf("refused: %s", why)
			}
			if got := jsonOf(s.servers()["s"]); got != tc.want {
				t.Fatalf("imported %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestImportRemoteServersThatSignInWithOAuth: a remote server that sends
// no credentials of its own, or carries the client's OAuth client
// settings, moves only when evokore's config can hold its OAuth
// settings (the schema decides); otherwise it stays in the client,
// which signs it in, and the reason says so.
func TestImportRemoteServersThatSignInWithOAuth(t *testing.T) {
	const bare = `{"mcpServers": {"s": {"type": "http", "url": "https://mcp.example.com/mcp"}}}`
	const settings = `{"mcpServers": {"s": {"type": "http", "url": "https://h/mcp", "oauth": {"clientId": "${CID}", "callbackPort": 8765, "scopes": "read write"}}}}`
	noOAuth := func([]byte) error { return errors.New("oauth: field not allowed") }
	takesOAuth := func(e []byte) error { return nil }
	for _, tc := range []struct {
		name, client, text string
		schema             func([]byte) error
		want, refused      string
	}{
		{"no credentials, no schema", "claude-code", bare, nil, "", "it is a remote server that sends no credentials of its own, so it most likely signs in with OAuth, and evokore's config has no OAuth settings to hold them: it stays in Claude Code"},
		{"no credentials, schema without oauth", "cursor", `{"mcpServers": {"s": {"url": "https://h/mcp"}}}`, noOAuth, "", "evokore's config does not take them (oauth: field not allowed): it stays in Cursor"},
		{"no credentials, schema with oauth", "vscode", `{"servers": {"s": {"type": "http", "url": "https://h/mcp"}}}`, takesOAuth, `{"oauth":{},"type":"http","url":"https://h/mcp"}`, ""},
		{"a header is a credential", "claude-code", `{"mcpServers": {"s": {"type": "http", "url": "https://h/mcp", "headers": {"X-Key": "k"}}}}`, nil, `{"headers":{"X-Key":"k"},"type":"http","url":"https://h/mcp"}`, ""},
		{"codex without a token", "codex", "[mcp_servers.s]\nurl = \"https://h/mcp\"\n", nil, "", "sends no credentials of its own"},
		{"claude-code oauth settings, no schema", "claude-code", settings, nil, "", "it carries OAuth client settings, and evokore's config has no OAuth settings to hold them: it stays in Claude Code"},
		{"claude-code oauth settings, schema", "claude-code", settings, takesOAuth, `{"oauth":{"callbackPort":8765,"clientId":"${CID}","scopes":["read","write"]},"type":"http","url":"https://h/mcp"}`, ""},
		{"cursor auth", "cursor", `{"mcpServers": {"s": {"url": "https://h/mcp", "auth": {"CLIENT_ID": "c", "CLIENT_SECRET": "${env:SECRET}", "scopes": ["a"]}}}}`, takesOAuth,
			`{"oauth":{"clientId":"c","clientSecret":"${SECRET}","scopes":["a"]},"type":"http","url":"https://h/mcp"}`, ""},
		{"gemini literal secret", "gemini", `{"mcpServers": {"s": {"httpUrl": "https://h/mcp", "oauth": {"enabled": true, "clientId": "c", "clientSecret": "sk-literal"}}}}`, takesOAuth,
			"", "oauth.clientSecret: the OAuth client secret is written out in the file, and evokore takes it only as ${VAR}"},
		{"gemini google credentials", "gemini", `{"mcpServers": {"s": {"httpUrl": "https://h/mcp", "authProviderType": "google_credentials"}}}`, takesOAuth,
			"", `its authProviderType "google_credentials" has no equivalent`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t, tc.client, tc.text)
			s.schema = tc.schema
			p := s.connect()
			why := refusal(p, "s")
			switch {
			case tc.refused != "" && !strings.Contains(why, tc.refused):
				t.Fatalf("refusal %q\nwant %q", why, tc.refused)
			case tc.refused != "" && strings.Contains(why, "sk-literal"):
				t.Fatalf("the refusal shows the secret: %q", why)
			case tc.refused == "" && why != "":
				t.Fatalf("refused: %s", why)
			case tc.refused == "" && jsonOf(s.servers()["s"]) != tc.want:
				t.Fatalf("imported %s\nwant %s", jsonOf(s.servers()["s"]), tc.want)
			}
		})
	}
}

// TestCodexPassesWhatItsServersNeedToEvokore: Codex starts a server with
// only a few variables of its environment and those in env_vars, so the
// variables an imported server refers to (its env_vars, its
// bearer_token_env_var) are listed in evokore's own entry; a second
// connect changes nothing. Gemini CLI drops secret-looking variables,
// so its entry passes them by env.
func TestCodexPassesWhatItsServersNeedToEvokore(t *testing.T) {
	s := newSetup(t, "codex", `[mcp_servers.docs]
command = "docs-mcp"
env_vars = ["DOCS_TOKEN", "LANG"]

[mcp_servers.remote]
url = "https://mcp.example.com/mcp"
bearer_token_env_var = "REMOTE_TOKEN"
`)
	p := s.connect()
	want := []string{"DOCS_TOKEN", "LANG", "REMOTE_TOKEN"}
	if jsonOf(p.Passed) != jsonOf(want) {
		t.Fatalf("passed %v, want %v", p.Passed, want)
	}
	if got := jsonOf(s.servers()["docs"]["env"]); got != `{"DOCS_TOKEN":"${DOCS_TOKEN}","LANG":"${LANG}"}` {
		t.Fatalf("docs env: %s", got)
	}
	if !strings.Contains(s.read(), `env_vars = ['DOCS_TOKEN', 'LANG', 'REMOTE_TOKEN']`) {
		t.Fatalf("evokore's entry does not pass the variables:\n%s", s.read())
	}
	again, err := Connect(s.options(true))
	if err != nil || again.Changed() || !again.Connected {
		t.Fatalf("a second connect: %+v, %v", again, err)
	}

	g := newSetup(t, "gemini", "{\n  \"mcpServers\": {\n    \"git\": {\"command\": \"uvx\", \"env\": {\"GITHUB_TOKEN\": \"$GITHUB_TOKEN\"}}\n  }\n}\n")
	g.connect()
	if !strings.Contains(g.read(), `"GITHUB_TOKEN": "${GITHUB_TOKEN}"`) {
		t.Fatalf("Gemini's entry does not pass GITHUB_TOKEN:\n%s", g.read())
	}
}

// TestProjectEntryIsPortable: the entry --project writes names no path
// of this machine: evokore from PATH, serving the project's config.
func TestProjectEntryIsPortable(t *testing.T) {
	s := newSetup(t, "claude-code", "{\n  \"mcpServers\": {\n    \"memory\": {\"command\": \"npx\"}\n  }\n}")
	o := s.options(true)
	o.Target = Target{Exe: "evokore", Config: s.config, Portable: true}
	p, err := Connect(o)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"mcpServers\": {\n    \"evokore\": {\n      \"type\": \"stdio\",\n      \"command\": \"evokore\",\n      \"args\": [\n        \"serve\"\n      ]\n    }\n  }\n}"
	if string(p.Client.After) != want {
		t.Fatalf("project file:\n%s\nwant:\n%s", p.Client.After, want)
	}
}

// TestStrictJSONClientsGetStrictJSONOrARefusal: what a client does not
// accept in its file (a trailing comma or a comment where it reads
// strict JSON) is refused at its place, and the file is left alone;
// what it accepts (VS Code's JSONC, Gemini's comments) is kept.
func TestStrictJSONClientsGetStrictJSONOrARefusal(t *testing.T) {
	for _, tc := range []struct{ client, text, at, want string }{
		{"claude-desktop", "{\n  \"mcpServers\": {\n    \"fs\": {\"command\": \"npx\"},\n  }\n}\n", ",\n  }", "a trailing comma, which Claude Desktop does not accept in this file (it reads it as strict JSON)"},
		{"claude-code", "{\n  // mine\n  \"mcpServers\": {}\n}\n", "// mine", "a comment, which Claude Code does not accept"},
		{"cursor", "{\"mcpServers\": {\"a\": {\"command\": \"x\",}}}", ",}", "a trailing comma, which Cursor does not accept"},
		{"gemini", "{\n  // theme\n  \"mcpServers\": {\"a\": {\"command\": \"x\"},}\n}", ",}", "a trailing comma, which Gemini CLI does not accept"},
		{"windsurf", "{\"mcpServers\": {\"a\": {\"command\": \"x\" \"args\": []}}}", `"args"`, "not valid JSON"},
		{"vscode", "{\n  // mine\n  \"servers\": {\"a\": {\"command\": \"x\",},},\n}", "", ""},
		{"gemini", "{\n  // theme\n  \"mcpServers\": {\"a\": {\"command\": \"x\"}}\n}", "", ""},
	} {
		t.Run(tc.client, func(t *testing.T) {
			s := newSetup(t, tc.client, tc.text)
			_, err := Connect(s.options(true))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused a file %s accepts: %v", tc.client, err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), s.position(tc.at)+": "+tc.want) {
				t.Fatalf("error %v\nwant it to start %s: %s", err, s.position(tc.at), tc.want)
			}
		})
	}
}
