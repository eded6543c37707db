package connect

import (
	"regexp"
	"strings"
	"testing"
)

// secretText is what every secret in the fixtures below looks like.
var secretText = regexp.MustCompile(`sk-[A-Z-]+`)

// TestDryRunDiffShowsNoSecret: the diff a dry run prints shows no secret
// a client's file holds, in the lines it changes or in their context:
// not a top-level API key, not an argument (--token=…, --api-key X, a
// header argument, KEY=… inside sh -c), not a URL's user or query, not
// an env or header value, not a comment, not a reference's default.
// References to variables stay visible: they are what the user needs to
// check.
func TestDryRunDiffShowsNoSecret(t *testing.T) {
	for _, tc := range []struct {
		client, text string
		visible      []string
	}{
		{"claude-code", `{
  "numStartups": 3,
  "customApiKeyResponses": {"approved": ["sk-APPROVED"]},
  "primaryApiKey": "sk-PRIMARY-KEY",
  "mcpServers": {
    "gh": {"command": "npx", "args": ["-y", "server-github", "--token=sk-FLAG-EQ", "--api-key", "sk-FLAG-SPACED", "--header", "Authorization: Bearer sk-HEADER-ARG"],
      "env": {"GITHUB_TOKEN": "sk-ENV", "HOST": "${GITHUB_HOST}", "KEY": "${KEY:-sk-DEFAULT}"}},
    "sh": {"command": "sh", "args": ["-c", "API_KEY=sk-SHELL exec server --secret sk-SHELL-FLAG"]},
    "web": {"type": "http", "url": "https://user:sk-USERINFO@mcp.example.com/mcp?api_key=sk-QUERY&page=2",
      "headers": {"Authorization": "Bearer ${WEB_TOKEN}", "X-Key": "sk-HEADER"}},
    "web2": {"type": "http", "url": "https://sk-TOKEN-USER@mcp.example.com/mcp", "headers": {"Cookie": "sid=sk-COOKIE"}}
  },
  "oauthAccount": {"accessToken": "sk-OAUTH", "pin": 123456}
}
`, []string{`"HOST": "${GITHUB_HOST}"`, `"Authorization": "Bearer ${WEB_TOKEN}"`, `"--api-key"`, "https://user:<hidden>@mcp.example.com/mcp?api_key=<hidden>&page=<hidden>"}},
		{"vscode", `{
    // my key: sk-COMMENT-LINE
    "servers": {
        /* token=sk-COMMENT-BLOCK */
        "fetch": {"type": "stdio", "command": "uvx", "args": ["fetch", "--password", "sk-PASSWORD"], "env": {"K": "${env:K}"},},
    },
}`, []string{`"env": {"K": "${env:K}"}`}},
		{"codex", `# token = sk-TOML-COMMENT
model = "o4"

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs", "--token", "sk-TOML-SPACED",
  "--key=sk-TOML-EQ"]

[mcp_servers.docs.env]
API_KEY = "sk-TOML-ENV"

[mcp_servers.remote]
url = "https://h/mcp?token=sk-TOML-QUERY"
bearer_token_env_var = "REMOTE_TOKEN"
http_headers = { "X-Key" = "sk-TOML-HEADER" }
`, []string{`bearer_token_env_var = "REMOTE_TOKEN"`, `model = "o4"`}},
	} {
		t.Run(tc.client, func(t *testing.T) {
			s := newSetup(t, tc.client, tc.text)
			p, err := Connect(s.options(true))
			if err != nil {
				t.Fatal(err)
			}
			diff := p.Diff()
			if len(p.Imported) == 0 || !strings.Contains(diff, "@@") {
				t.Fatalf("nothing imported: %+v\n%s", p.Refused, diff)
			}
			if leaked := secretText.FindAllString(diff, -1); leaked != nil {
				t.Fatalf("the diff shows %v:\n%s", leaked, diff)
			}
			for _, v := range tc.visible {
				if !strings.Contains(diff, v) {
					t.Errorf("the diff does not show %s:\n%s", v, diff)
				}
			}
		})
	}
}

// TestMaskKeepsWhatIsNotSecret: masking touches secrets only, so a
// file without any reads the same.
func TestMaskKeepsWhatIsNotSecret(t *testing.T) {
	for _, text := range []string{
		"{\n  \"mcpServers\": {\"fs\": {\"command\": \"npx\", \"args\": [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/home/u\"], \"env\": {\"T\": \"${T}\"}}},\n  \"theme\": \"dark\"\n}\n",
		"[mcp_servers.fs]\ncommand = \"npx\" # the runner\nargs = [\"-y\", \"server\", \"--db-path\", \"/tmp/x.db\"]\nenv_vars = [\"HOME\"]\n",
	} {
		if got := string(Mask([]byte(text))); got != text {
			t.Errorf("masked:\n%s\nwant it unchanged:\n%s", got, text)
		}
	}
}
