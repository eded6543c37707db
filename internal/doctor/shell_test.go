package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/config"
)

// TestShellFindingSaysWhatConfinementMeans: without Claude Code nothing
// is said; with it, doctor says whether the agent's shell is confined
// and what that means for approvals, from the effective settings.
func TestShellFindingSaysWhatConfinementMeans(t *testing.T) {
	dir := t.TempDir()
	o := Options{Home: filepath.Join(dir, "u", ".evokore"), UserHome: filepath.Join(dir, "u"), ProjectDir: filepath.Join(dir, "p"), Env: config.NewEnv(nil)}
	r := &report{}
	r.shell(o)
	if len(r.out) != 0 {
		t.Fatalf("no Claude Code, yet: %+v", r.out)
	}
	settings := filepath.Join(o.UserHome, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(`{"sandbox": {"enabled": true}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r = &report{}
	r.shell(o)
	if len(r.out) != 1 || !r.out[0].Note || !strings.Contains(r.out[0].Text, "not confined (a command may ask to leave the sandbox") ||
		!strings.Contains(r.out[0].Text, "the shell may write "+o.Home) || !strings.Contains(r.out[0].Text, "against the agent's shell only when confined") {
		t.Fatalf("half a sandbox: %+v", r.out)
	}
	full := `{"sandbox": {"enabled": true, "allowUnsandboxedCommands": false, "excludedCommands": ["docker"], "filesystem": {"denyWrite": ["~/.evokore"], "denyRead": ["~/.evokore/secrets"]}}}`
	if err := os.WriteFile(settings, []byte(full), 0o600); err != nil {
		t.Fatal(err)
	}
	r = &report{}
	r.shell(o)
	if len(r.out) != 1 || !r.out[0].OK || !strings.Contains(r.out[0].Text, "approvals hold against the model's MCP calls and against the agent's shell; except the commands it runs outside the sandbox: docker") {
		t.Fatalf("confined: %+v", r.out)
	}
}
