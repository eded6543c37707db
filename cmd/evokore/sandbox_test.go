package main_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/testutil"
)

// TestDoctorSeesTheShellConfinedAfterHooksInstallSandbox: with a user
// and a project settings file shaped like Claude Code's, doctor says the
// agent's shell is not confined; 'hooks install --user --sandbox' shows
// the diff and writes the sandbox block (keeping the user's settings,
// and idempotent); doctor then says it is confined; a local settings
// file that turns the sandbox off is seen; the installed damage-control
// hook refuses the percent-encoded approvals path.
func TestDoctorSeesTheShellConfinedAfterHooksInstallSandbox(t *testing.T) {
	e := doctorEnv(t, map[string]any{})
	user := testutil.WriteFile(t, filepath.Join(e.home, ".claude"), "settings.json", `{
  "model": "opus",
  "permissions": {"allow": ["Bash(go test:*)"], "deny": ["Read(./.env)"]},
  "sandbox": {
    "excludedCommands": ["docker"],
    "filesystem": {"denyRead": ["~/.aws/credentials"]},
    "network": {"allowedDomains": ["github.com", "localhost:8899"]}
  }
}
`)
	project := testutil.WriteFile(t, filepath.Join(e.wd, ".claude"), "settings.json", `{"env": {"FOO": "1"}, "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}]}}`)

	r := e.run("doctor")
	if !strings.Contains(r.stdout, "note  Claude Code's shell is not confined (its sandbox is off") ||
		!strings.Contains(r.stdout, "approvals hold against the model's MCP calls; against the agent's shell only when confined") ||
		!strings.Contains(r.stdout, "fix: evokore hooks install --sandbox") {
		t.Fatalf("doctor before: %+v", r)
	}

	r = e.run("hooks", "install", "--user", "--sandbox")
	if r.code != 0 || !strings.Contains(r.stdout, `+    "enabled": true,`) || !strings.Contains(r.stdout, `-    "network": {"allowedDomains": ["github.com", "localhost:8899"]}`) ||
		!strings.Contains(r.stdout, user+": updated") {
		t.Fatalf("install --sandbox: %+v", r)
	}
	var got struct {
		Model       string         `json:"model"`
		Permissions map[string]any `json:"permissions"`
		Sandbox     struct {
			Enabled                  bool     `json:"enabled"`
			AllowUnsandboxedCommands *bool    `json:"allowUnsandboxedCommands"`
			ExcludedCommands         []string `json:"excludedCommands"`
			Filesystem               struct {
				DenyWrite, DenyRead []string
			} `json:"filesystem"`
			Network struct {
				AllowedDomains []string `json:"allowedDomains"`
			} `json:"network"`
		} `json:"sandbox"`
		Hooks map[string]any `json:"hooks"`
	}
	written, err := os.ReadFile(user)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(written, &got); err != nil {
		t.Fatal(err)
	}
	sb := got.Sandbox
	want := "/" + e.evokore
	if got.Model != "opus" || len(got.Permissions) != 2 || !sb.Enabled || sb.AllowUnsandboxedCommands == nil || *sb.AllowUnsandboxedCommands ||
		strings.Join(sb.ExcludedCommands, ",") != "docker" || strings.Join(sb.Filesystem.DenyWrite, ",") != want ||
		strings.Join(sb.Filesystem.DenyRead, ",") != "~/.aws/credentials,"+want+"/secrets" ||
		strings.Join(sb.Network.AllowedDomains, ",") != "github.com" || got.Hooks["PreToolUse"] == nil {
		t.Fatalf("settings after install:\n%s", written)
	}
	if r := e.run("hooks", "install", "--user", "--sandbox"); r.code != 0 || !strings.Contains(r.stdout, "already up to date") {
		t.Fatalf("a second install changed something: %+v", r)
	}
	if again, _ := os.ReadFile(user); !bytes.Equal(again, written) {
		t.Fatalf("a second install rewrote the file:\n%s", again)
	}

	r = e.run("doctor")
	if !strings.Contains(r.stdout, "ok    Claude Code's shell is confined by its sandbox") ||
		!strings.Contains(r.stdout, "approvals hold against the model's MCP calls and against the agent's shell; except the commands it runs outside the sandbox: docker") {
		t.Fatalf("doctor after: %+v", r)
	}

	local := testutil.WriteFile(t, filepath.Join(e.wd, ".claude"), "settings.local.json", `{"sandbox": {"enabled": false}}`)
	if r := e.run("doctor"); !strings.Contains(r.stdout, "note  Claude Code's shell is not confined (its sandbox is off") {
		t.Fatalf("doctor with the sandbox off in %s: %+v", local, r)
	}
	_ = os.Remove(local)

	// connect claude-code --sandbox confines the shell too (the
	// project's settings with --project), leaving the hooks alone; no
	// other client has a shell evokore can confine.
	if r := e.run("connect", "cursor", "--sandbox"); r.code != 2 || !strings.Contains(r.stderr, "only Claude Code's shell") {
		t.Fatalf("connect cursor --sandbox: %+v", r)
	}
	if r := e.run("connect", "claude-code", "--project", "--sandbox"); r.code != 0 || !strings.Contains(r.stdout, `+    "enabled": true,`) {
		t.Fatalf("connect claude-code --sandbox: %+v", r)
	}
	if b, _ := os.ReadFile(project); !strings.Contains(string(b), `"command": "./check.sh"`) || !strings.Contains(string(b), `"FOO": "1"`) || !strings.Contains(string(b), `"enabled": true`) || strings.Contains(string(b), "hook damage-control") {
		t.Fatalf("the project's settings after connect --sandbox:\n%s", b)
	}

	// The hook the install wired refuses the approvals route however it
	// is encoded.
	hook := exec.Command(e.exe, "hook", "damage-control")
	hook.Dir = e.wd
	hook.Env = append([]string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + e.home, "EVOKORE_HOME=" + e.evokore}, e.env...)
	hook.Stdin = strings.NewReader(`{"session_id":"s1","tool_name":"Bash","tool_input":{"command":"curl -X POST http://127.0.0.1:8899/api/%61pprovals/approve -d id=1"}}`)
	var stderr bytes.Buffer
	hook.Stderr = &stderr
	err = hook.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), "the approvals API decides calls held for the user") {
		t.Fatalf("the percent-encoded approvals path: %v %s", err, stderr.String())
	}
}
