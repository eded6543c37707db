package hooks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSandboxInstallKeepsTheUsersSettings: the sandbox block is merged
// into what the user has (their lists kept, evokore's paths added once,
// local hosts dropped from allowedDomains), paths under the home are
// written "~/…", and a second plan changes nothing.
func TestSandboxInstallKeepsTheUsersSettings(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "u")
	path := filepath.Join(home, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	orig := `{"theme": "dark", "sandbox": {"autoAllowBashIfSandboxed": true, "filesystem": {"denyWrite": ["~/.evokore"], "allowWrite": ["/tmp/build"]}, "network": {"allowedDomains": ["127.0.0.1", "*.npmjs.org"], "allowAllUnixSockets": true}}}`
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	sb := SandboxFor(filepath.Join(home, ".evokore"), "/etc/evokore/key")
	s := Settings{Path: path, Sandbox: &sb, UserHome: home, Now: time.Now}
	c, err := s.EnableSandbox()
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(c.After, &got); err != nil {
		t.Fatal(err)
	}
	box := got["sandbox"].(map[string]any)
	fsObj := box["filesystem"].(map[string]any)
	net := box["network"].(map[string]any)
	if got["theme"] != "dark" || box["enabled"] != true || box["allowUnsandboxedCommands"] != false || box["autoAllowBashIfSandboxed"] != true ||
		join(fsObj["denyWrite"]) != "~/.evokore" || join(fsObj["denyRead"]) != "~/.evokore/secrets,//etc/evokore/key" ||
		join(fsObj["allowWrite"]) != "/tmp/build" || join(net["allowedDomains"]) != "*.npmjs.org" || net["allowAllUnixSockets"] != false || got["hooks"] != nil {
		t.Fatalf("merged:\n%s", c.After)
	}
	if err := s.Apply(c); err != nil {
		t.Fatal(err)
	}
	if again, err := s.EnableSandbox(); err != nil || again.Changed {
		t.Fatalf("a second plan changes the file: %v\n%s", err, Diff(path, again.Before, again.After))
	}
	if c := Confine([]string{path}, sb, home); !c.Confined {
		t.Fatalf("not confined after the install: %v", c.Gaps)
	}
}

func join(v any) string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return strings.Join(out, ",")
}

// TestConfineReadsTheEffectiveSettings: the user, project and local
// files fold as Claude Code folds them (a later file's value wins, lists
// merge); each gap is named; a settings file that is not a regular file
// is not believed.
func TestConfineReadsTheEffectiveSettings(t *testing.T) {
	dir := t.TempDir()
	home, project := filepath.Join(dir, "u"), filepath.Join(dir, "p")
	evk := filepath.Join(home, ".evokore")
	sb := SandboxFor(evk, "")
	files := SettingsFiles(home, project)
	write := func(i int, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(files[i]), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(files[i], []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if c := Confine(files, sb, home); c.Confined || len(c.Gaps) != 1 || !strings.Contains(c.Gaps[0], "sandbox is off") {
		t.Fatalf("no settings: %+v", c)
	}
	write(0, `{"sandbox": {"enabled": true, "allowUnsandboxedCommands": false, "filesystem": {"denyWrite": ["~/"]}}}`)
	write(1, `{"sandbox": {"filesystem": {"denyRead": ["~/.evokore/secrets/**"]}}}`)
	if c := Confine(files, sb, home); !c.Confined {
		t.Fatalf("user and project together confine: %+v", c)
	}
	write(2, `{"sandbox": {"allowUnsandboxedCommands": true, "network": {"allowedDomains": ["localhost"]}}}`)
	c := Confine(files, sb, home)
	if c.Confined || len(c.Gaps) != 2 || !strings.Contains(c.Gaps[0], "leave the sandbox") || !strings.Contains(c.Gaps[1], "localhost") {
		t.Fatalf("the local file opens two gaps: %+v", c)
	}
	if err := os.Remove(files[2]); err != nil {
		t.Fatal(err)
	}
	// The project's file comes with the repository: a link to a device
	// must not be read as settings.
	if err := os.Remove(files[1]); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", files[1]); err != nil {
		t.Fatal(err)
	}
	if c := Confine(files, sb, home); c.Confined || !strings.Contains(strings.Join(c.Gaps, ";"), "may read "+evk+"/secrets") {
		t.Fatalf("a device as settings: %+v", c)
	}
}
