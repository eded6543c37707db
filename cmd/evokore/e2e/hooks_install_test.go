package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/hooks"
	"github.com/evokore/evokore/internal/testutil"
)

const existingSettings = `{
    "permissions": {"allow": ["Bash(go test:*)"], "deny": ["Read(./secrets/**)"]},
    "env": {"FOO": "bar"},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "/opt/lint-bash.sh", "timeout": 30}]}
        ],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send claude"}]}]
    },
    "statusLine": {"type": "command", "command": "~/.claude/my-status.sh"},
    "model": "opus"
}
`

// settingsDoc decodes settings.json for the checks.
func settingsDoc(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s is not JSON after the change: %v\n%s", path, err, b)
	}
	return m
}

// commands lists the hook commands of an event.
func commands(doc map[string]any, event string) []string {
	var out []string
	hooksObj, _ := doc["hooks"].(map[string]any)
	groups, _ := hooksObj[event].([]any)
	for _, g := range groups {
		list, _ := g.(map[string]any)["hooks"].([]any)
		for _, h := range list {
			out = append(out, h.(map[string]any)["command"].(string))
		}
	}
	return out
}

func backups(t *testing.T, path string) []string {
	m, _ := filepath.Glob(path + ".bak-*")
	return m
}

func TestHooksInstallMergesIsIdempotentAndUninstalls(t *testing.T) {
	c := newClaude(t)
	exe := testutil.Evokore(t)
	path := testutil.WriteFile(t, filepath.Join(c.project, ".claude"), "settings.json", existingSettings)

	// --dry-run shows the change and writes nothing.
	r := c.run(nil, "hooks", "install", "--dry-run")
	if r.code != 0 || !strings.Contains(r.stdout, "+") || !strings.Contains(r.stdout, "hook damage-control") {
		t.Fatalf("dry run: %+v", r)
	}
	if b, _ := os.ReadFile(path); string(b) != existingSettings || len(backups(t, path)) != 0 {
		t.Fatal("--dry-run wrote")
	}
	// A real diff: the members install does not touch are unchanged
	// context, in the file's own indentation and layout, not lines
	// removed and added again.
	for _, same := range []string{
		`    "permissions": {"allow": ["Bash(go test:*)"], "deny": ["Read(./secrets/**)"]},`,
		`    "env": {"FOO": "bar"},`,
		`    "statusLine": {"type": "command", "command": "~/.claude/my-status.sh"},`,
	} {
		if strings.Contains(r.stdout, "\n-"+same+"\n") || strings.Contains(r.stdout, "\n+"+same+"\n") {
			t.Errorf("dry run removes and adds the untouched %q:\n%s", same, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "\n "+`    "env": {"FOO": "bar"},`+"\n") || strings.Contains(r.stdout, "\n+,") {
		t.Errorf("dry run lost the untouched lines' layout:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "\n@@ -") {
		t.Errorf("dry run is not a unified diff:\n%s", r.stdout)
	}

	r = c.run(nil, "hooks", "install", "--project")
	if r.code != 0 || !strings.Contains(r.stdout, "updated") {
		t.Fatalf("install: %+v", r)
	}
	doc := settingsDoc(t, path)
	if doc["model"] != "opus" || doc["env"].(map[string]any)["FOO"] != "bar" || len(doc["permissions"].(map[string]any)["deny"].([]any)) != 1 {
		t.Fatalf("other settings were not kept: %v", doc)
	}
	if doc["statusLine"].(map[string]any)["command"] != "~/.claude/my-status.sh" {
		t.Fatalf("the user's status line was replaced: %v", doc["statusLine"])
	}
	pre := commands(doc, "PreToolUse")
	if len(pre) != 2 || pre[0] != "/opt/lint-bash.sh" || pre[1] != exe+" hook damage-control" {
		t.Fatalf("PreToolUse: %v", pre)
	}
	if got := commands(doc, "Notification"); len(got) != 1 {
		t.Fatalf("Notification: %v", got)
	}
	for _, w := range hooks.Wirings {
		found := false
		for _, cmd := range commands(doc, w.Event) {
			found = found || cmd == exe+" hook "+w.Hook
		}
		if !found {
			t.Errorf("%s is not wired to %s", w.Hook, w.Event)
		}
	}
	if strings.Count(string(mustRead(t, path)), `"timeout": 30`) != 1 {
		t.Error("the user's hook lost its timeout")
	}
	bk := backups(t, path)
	if len(bk) != 1 || string(mustRead(t, bk[0])) != existingSettings {
		t.Fatalf("backup: %v", bk)
	}

	// A second install changes nothing, and makes no new backup.
	installed := mustRead(t, path)
	if r := c.run(nil, "hooks", "install"); r.code != 0 || !strings.Contains(r.stdout, "already up to date") {
		t.Fatalf("second install: %+v", r)
	}
	if string(mustRead(t, path)) != string(installed) || len(backups(t, path)) != 1 {
		t.Fatal("the second install changed the file")
	}
	if r := c.run(nil, "hooks", "install", "--dry-run"); !strings.Contains(r.stdout, "no change") {
		t.Fatalf("dry run after install: %+v", r)
	}

	// Uninstall removes only evokore's entries.
	if r := c.run(nil, "hooks", "uninstall"); r.code != 0 {
		t.Fatalf("uninstall: %+v", r)
	}
	doc = settingsDoc(t, path)
	if pre := commands(doc, "PreToolUse"); len(pre) != 1 || pre[0] != "/opt/lint-bash.sh" {
		t.Fatalf("PreToolUse after uninstall: %v", pre)
	}
	for _, ev := range []string{"PostToolUse", "Stop", "UserPromptSubmit", "PreCompact"} {
		if _, ok := doc["hooks"].(map[string]any)[ev]; ok {
			t.Errorf("%s left behind", ev)
		}
	}
	if doc["model"] != "opus" || doc["statusLine"] == nil || commands(doc, "Notification") == nil {
		t.Fatalf("uninstall removed the user's settings: %v", doc)
	}
}

func TestHooksInstallUserSettingsAndStatusLine(t *testing.T) {
	c := newClaude(t)
	exe := testutil.Evokore(t)
	if r := c.run(nil, "hooks", "install", "--user"); r.code != 0 || !strings.Contains(r.stdout, "written") {
		t.Fatalf("install --user: %+v", r)
	}
	path := filepath.Join(c.userDir, ".claude", "settings.json")
	doc := settingsDoc(t, path)
	if doc["statusLine"].(map[string]any)["command"] != exe+" status-line" {
		t.Fatalf("statusLine: %v", doc["statusLine"])
	}
	if _, err := os.Stat(filepath.Join(c.project, ".claude", "settings.json")); err == nil {
		t.Fatal("--user wrote the project's settings")
	}
	if r := c.run(nil, "hooks", "install", "--user", "--project"); r.code != 2 {
		t.Fatalf("--user --project: %+v", r)
	}
	// A settings file that is not JSON is left alone.
	bad := testutil.WriteFile(t, filepath.Join(c.project, ".claude"), "settings.json", "{ not json")
	if r := c.run(nil, "hooks", "install"); r.code != 1 || !strings.Contains(r.stderr, "left as it is") {
		t.Fatalf("install over a broken file: %+v", r)
	}
	if string(mustRead(t, bad)) != "{ not json" {
		t.Fatal("the broken file was overwritten")
	}
	// Uninstall takes our status line away too.
	if r := c.run(nil, "hooks", "uninstall", "--user"); r.code != 0 {
		t.Fatal(r)
	}
	if doc := settingsDoc(t, path); doc["statusLine"] != nil || doc["hooks"] != nil {
		t.Fatalf("after uninstall: %v", doc)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
