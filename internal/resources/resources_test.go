package resources_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/resources"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

var ctx = context.Background()

func wireError(t *testing.T, err error, code int64, msg string) {
	t.Helper()
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != code || we.Message != msg {
		t.Errorf("error = %#v, want %d %q", err, code, msg)
	}
}

// notFoundURI checks that a resource-not-found error names the URI in its
// data, as a client reading several URIs needs to tell them apart.
func notFoundURI(t *testing.T, err error, uri string) {
	t.Helper()
	var we *jsonrpc.Error
	var data struct {
		URI string `json:"uri"`
	}
	if !errors.As(err, &we) || json.Unmarshal(we.Data, &data) != nil || data.URI != uri {
		t.Errorf("error = %#v, want data.uri %q", err, uri)
	}
}

func TestEverySkillResourceReadsBack(t *testing.T) {
	h := routertest.New(t, map[string]any{}, nil) // the starter library
	cs := h.Connect(nil)
	res, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Resources) < 43 {
		t.Fatalf("%d resources", len(res.Resources))
	}
	for i, uri := range []string{resources.StatusURI, resources.ConfigURI, resources.CategoriesURI} {
		if res.Resources[i].URI != uri || res.Resources[i].MIMEType != "application/json" {
			t.Errorf("resource %d = %+v, want %s first", i, res.Resources[i], uri)
		}
	}
	// The older resources (the body alone), then each skill's SKILL.md as
	// the Skills Extension maps it (the whole file, named by its
	// frontmatter).
	skillCount, deep, extension := 0, 0, 0
	for _, r := range res.Resources[3:] {
		if readsBack(t, cs, r) {
			extension++
			continue
		}
		skillCount++
		if strings.Count(r.URI, "/") > 3 {
			deep++ // skill://cat/sub/name: a subcategory
		}
	}
	if extension != skillCount {
		t.Errorf("%d skills listed by their SKILL.md, %d by the older URI; the starter library's are all both", extension, skillCount)
	}
	if deep == 0 {
		t.Error("the starter library has skills in subcategories; none was listed")
	}
	// The raw category spelling and another case also resolve.
	got, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://CODE-REVIEW/pr-review/references/review-severity-levels"})
	if err != nil || !strings.Contains(got.Contents[0].Text, "# Review comment severities") {
		t.Errorf("case-insensitive read of a subcategory skill: %v", err)
	}

	tmpl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tmpl.ResourceTemplates) != 1 || tmpl.ResourceTemplates[0].URITemplate != "skill://{category}/{+name}" {
		t.Errorf("templates: %+v %v", tmpl, err)
	}

	var cats struct {
		TotalSkills int `json:"totalSkills"`
		Categories  []struct {
			Name  string `json:"name"`
			Count int    `json:"count"`
		} `json:"categories"`
	}
	readJSON(t, cs, resources.CategoriesURI, &cats)
	sum := 0
	for _, c := range cats.Categories {
		sum += c.Count
	}
	if cats.TotalSkills != skillCount || sum != skillCount || len(cats.Categories) < 8 || cats.Categories[0].Name != "code-review" {
		t.Errorf("categories %+v (skills listed: %d)", cats, skillCount)
	}
}

// readsBack checks a listed skill resource and reads it back: an older
// one ("Skill: <name>") as its body, an extension's SKILL.md (reported
// by ext) as the whole file, of its listed size.
func readsBack(t *testing.T, cs *mcp.ClientSession, r *mcp.Resource) (ext bool) {
	t.Helper()
	ext = strings.HasSuffix(r.URI, "/SKILL.md")
	if !strings.HasPrefix(r.URI, "skill://") || r.MIMEType != "text/markdown" || strings.HasPrefix(r.Name, "Skill: ") == ext || r.Description == "" {
		t.Errorf("skill resource %+v", r)
	}
	got, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI})
	if err != nil {
		t.Errorf("%s: %v", r.URI, err)
		return ext
	}
	if len(got.Contents) != 1 || got.Contents[0].URI != r.URI || strings.TrimSpace(got.Contents[0].Text) == "" ||
		strings.HasPrefix(got.Contents[0].Text, "---\n") != ext || ext && int64(len(got.Contents[0].Text)) != r.Size {
		t.Errorf("%s read back as %+v", r.URI, got.Contents)
	}
	return ext
}

func readJSON(t *testing.T, cs *mcp.ClientSession, uri string, v any) string {
	t.Helper()
	got, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(got.Contents[0].Text), v); err != nil {
		t.Fatal(err)
	}
	return got.Contents[0].Text
}

func TestUnknownResources(t *testing.T) {
	h := routertest.New(t, map[string]any{}, nil)
	cs := h.Connect(nil)
	_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "evokore://server/nope"})
	wireError(t, err, -32602, "Unknown evokore resource: evokore://server/nope")
	_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://code-review/no-such-skill"})
	wireError(t, err, -32602, "Skill not found: skill://code-review/no-such-skill")
	notFoundURI(t, err, "skill://code-review/no-such-skill")
	for _, uri := range []string{"evokore://server/nope", "test://nonexistent-resource"} {
		_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		notFoundURI(t, err, uri)
	}
}

func TestServerStatus(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, nil)
	cs := h.Connect(nil)
	h.Booted()
	var st resources.Status
	readJSON(t, cs, resources.StatusURI, &st)
	if st.Version != "test" || st.DiscoveryMode != "dynamic" || st.SkillCount < 40 || st.ToolCount <= 37 {
		t.Errorf("status %+v", st)
	}
	if len(st.ChildServers) != 1 || st.ChildServers[0].ID != "fx" || st.ChildServers[0].Status != "connected" || st.ChildServers[0].RegisteredToolCount == 0 {
		t.Errorf("children %+v", st.ChildServers)
	}
}

// secrets are planted in the fixture config; none may appear in the
// sanitised config.
var secrets = []string{
	"env-secret-value", "header-secret-value", "url-password", "url-user",
	"query-token-value", "flag-token-value", "flag-apikey-value", "eq-password-value",
	"ghp_abcdefghijklmnopqrstuvwxyz0123456789", "assign-secret-value", "bearer-value", "fragment-token-value",
	"client-secret-value",
	// Shapes the first version missed.
	"json-apikey-value", "dash-p-value", "dashp-glued-value", "odbc-pwd-value", "T0AAAAAAA/B0BBBBBBBBB/XXXXXXXXXXXXXXXXXXXXXXXX", "export-token-value",
}

func TestSanitizedConfigHasNoSecrets(t *testing.T) {
	dir := t.TempDir()
	cfg := `{"servers": {
	  "gh": {"command": "github-mcp", "disabled": true,
	         "args": ["stdio", "--token", "flag-token-value", "--api-key=flag-apikey-value", "--password=eq-password-value",
	                  "--client-secret", "client-secret-value", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "API_SECRET=assign-secret-value",
	                  "-H", "Authorization: Bearer bearer-value", "--verbose", "https://url-user:url-password@git.example.com/repo?ref=main&access_token=query-token-value"],
	         "env": {"GITHUB_TOKEN": "env-secret-value", "PLAIN": "${HOME}"}},
	  "remote": {"transport": "http", "disabled": true,
	             "url": "https://url-user:url-password@mcp.example.com/mcp?api_key=query-token-value&region=eu#access_token=fragment-token-value",
	             "headers": {"Authorization": "Bearer header-secret-value"}},
	  "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${PROJECT_DIR}"], "cwd": "/srv", "disabled": true},
	  "shapes": {"command": "tool", "disabled": true, "args": [
	      "{\"apiKey\": \"json-apikey-value\", \"region\": \"eu\"}",
	      "-p", "dash-p-value", "-pdashp-glued-value",
	      "Driver={ODBC};Server=db;Uid=app;Pwd=odbc-pwd-value;",
	      "https://hooks.slack.com/services/T0AAAAAAA/B0BBBBBBBBB/XXXXXXXXXXXXXXXXXXXXXXXX",
	      "sh", "-c", "export API_TOKEN=export-token-value && run --url ${URL}"]}
	}}`
	h := routertest.NewWithConfig(t, dir, testutil.WriteFile(t, dir, "mcp.config.json", cfg), nil)
	cs := h.Connect(nil)
	var got resources.SanitizedConfig
	text := readJSON(t, cs, resources.ConfigURI, &got)
	for _, s := range secrets {
		if strings.Contains(text, s) {
			t.Errorf("secret %q leaked:\n%s", s, text)
		}
	}
	gh := got.Servers["gh"]
	wantArgs := []string{"stdio", "--token", "[REDACTED]", "--api-key=[REDACTED]", "--password=[REDACTED]", "--client-secret", "[REDACTED]",
		"[REDACTED]", "API_SECRET=[REDACTED]", "-H", "Authorization: [REDACTED]", "--verbose",
		"https://REDACTED@git.example.com/repo?access_token=REDACTED&ref=main"}
	if strings.Join(gh.Args, "\x00") != strings.Join(wantArgs, "\x00") {
		t.Errorf("args:\n got %q\nwant %q", gh.Args, wantArgs)
	}
	if gh.Env["GITHUB_TOKEN"] != "[REDACTED]" || gh.Env["PLAIN"] != "[REDACTED]" || gh.Command != "github-mcp" || !gh.Disabled {
		t.Errorf("gh %+v", gh)
	}
	remote := got.Servers["remote"]
	if remote.URL != "https://REDACTED@mcp.example.com/mcp?api_key=REDACTED&region=eu#REDACTED" || remote.Headers["Authorization"] != "[REDACTED]" || remote.Transport != "http" {
		t.Errorf("remote %+v", remote)
	}
	if sh := got.Servers["shapes"]; !strings.Contains(strings.Join(sh.Args, " "), `"region":"eu"`) || !strings.Contains(strings.Join(sh.Args, " "), "Server=db;Uid=app;Pwd=[REDACTED]") {
		t.Errorf("redaction lost what is not secret: %q", sh.Args)
	}
	fs := got.Servers["fs"]
	if strings.Join(fs.Args, " ") != "-y @modelcontextprotocol/server-filesystem ${PROJECT_DIR}" || fs.Cwd != "/srv" {
		t.Errorf("ordinary args must stay readable: %+v", fs)
	}
}

func TestPrompts(t *testing.T) {
	h := routertest.New(t, map[string]any{}, nil)
	cs := h.Connect(nil)
	list, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range list.Prompts {
		names = append(names, p.Name)
	}
	if strings.Join(names, ",") != "resolve-workflow,skill-help,server-overview" ||
		len(list.Prompts[0].Arguments) != 1 || list.Prompts[0].Arguments[0].Name != "objective" || !list.Prompts[0].Arguments[0].Required ||
		list.Prompts[1].Arguments[0].Name != "skill_name" || len(list.Prompts[2].Arguments) != 0 {
		t.Fatalf("prompts %v", names)
	}

	r, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "resolve-workflow", Arguments: map[string]string{"objective": "write release notes"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Messages) != 2 || r.Messages[0].Role != "user" || text(r.Messages[0]) != "Find workflows for: write release notes" || r.Messages[1].Role != "assistant" {
		t.Fatalf("resolve-workflow %+v", r.Messages)
	}
	body := text(r.Messages[1])
	if !strings.Contains(body, "--- WORKFLOW: changelog-writing [release] ---") || strings.Contains(body, "<activated_skill") {
		t.Errorf("resolve-workflow body:\n%s", body)
	}
	if !strings.Contains(body, "[... truncated; read skill://") {
		t.Errorf("bodies are cut at 2000 bytes in the prompt:\n%s", body)
	}

	r, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "skill-help", Arguments: map[string]string{"skill_name": "git-bisect"}})
	if err != nil {
		t.Fatal(err)
	}
	help := text(r.Messages[1])
	if text(r.Messages[0]) != "Help for skill: git-bisect" || !strings.HasPrefix(help, "Skill: git-bisect\nCategory: debugging\nSubcategory: -\nVersion: 1.0.0\nDescription: ") ||
		!strings.Contains(help, "Requires: systematic-debugging (>=1.0.0)\nConflicts: none\n\n# Finding the breaking commit") {
		t.Errorf("skill-help:\n%s", help)
	}

	r, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "skill-help", Arguments: map[string]string{"skill_name": "git bisct"}})
	if err != nil || !strings.HasPrefix(text(r.Messages[1]), "No skill is named 'git bisct'; this is the closest match.\nSkill: git-bisect\n") {
		t.Errorf("closest match: %v %q", err, text(r.Messages[1]))
	}

	r, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "server-overview"})
	if err != nil {
		t.Fatal(err)
	}
	ov := text(r.Messages[0])
	if len(r.Messages) != 1 || r.Messages[0].Role != "assistant" || !strings.HasPrefix(ov, "evokore test\nDiscovery mode: dynamic\nTotal tools: ") ||
		!strings.Contains(ov, "\nChild servers (0):\n  (none connected)\nSkill categories:\n  - code-review: ") {
		t.Errorf("server-overview:\n%s", ov)
	}

	_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "resolve-workflow", Arguments: map[string]string{}})
	wireError(t, err, -32602, "The 'objective' argument is required for the resolve-workflow prompt.")
	_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "skill-help", Arguments: map[string]string{"skill_name": " "}})
	wireError(t, err, -32602, "The 'skill_name' argument is required for the skill-help prompt.")
	_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "skill-help", Arguments: map[string]string{"skill_name": "qqzzxx"}})
	wireError(t, err, -32602, "Skill not found: qqzzxx")
	_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "no-such-prompt"})
	wireError(t, err, -32601, "Unknown prompt: no-such-prompt")
}

func text(m *mcp.PromptMessage) string {
	if tc, ok := m.Content.(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

// docker-style -e NAME=value pairs pass values to a child whatever their
// names, and a flag's inline JSON carries its secrets inside: both are
// redacted in evokore://server/config, while what is not secret stays.
func TestSanitizedConfigRedactsEnvPairsAndInlineJSON(t *testing.T) {
	dir := t.TempDir()
	cfg := `{"servers": {"docker": {"command": "docker", "disabled": true, "args": [
	  "run", "-i", "--rm", "-e", "OPENAI=openai-env-value", "--env", "DB_URL=dburl-env-value", "--env=PLAIN_X=plain-env-value",
	  "-e", "PASSTHROUGH", "--config={\"apiKey\":\"config-json-value\",\"region\":\"eu\"}",
	  "--settings", "{\"nested\": {\"password\": \"settings-json-value\"}}", "image:latest"]}}}`
	h := routertest.NewWithConfig(t, dir, testutil.WriteFile(t, dir, "mcp.config.json", cfg), nil)
	var got resources.SanitizedConfig
	text := readJSON(t, h.Connect(nil), resources.ConfigURI, &got)
	for _, s := range []string{"openai-env-value", "dburl-env-value", "plain-env-value", "config-json-value", "settings-json-value"} {
		if strings.Contains(text, s) {
			t.Errorf("secret %q leaked:\n%s", s, text)
		}
	}
	want := []string{"run", "-i", "--rm", "-e", "OPENAI=[REDACTED]", "--env", "DB_URL=[REDACTED]", "--env=PLAIN_X=[REDACTED]",
		"-e", "PASSTHROUGH", `--config={"apiKey":"[REDACTED]","region":"eu"}`,
		"--settings", `{"nested":{"password":"[REDACTED]"}}`, "image:latest"}
	if args := got.Servers["docker"].Args; strings.Join(args, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("args:\n got %q\nwant %q", args, want)
	}
}
