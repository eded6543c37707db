package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// An agent's shell has no terminal: `evokore approvals approve|deny` run
// from one refuses and the held call stays held; at a terminal the
// operator sees the call (tool, arguments, session) and must confirm, and
// only a confirmed approval lets the retry run.
func TestApprovalsCommandConfirmsAtATerminalOnly(t *testing.T) {
	dir := t.TempDir()
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{"fx": routertest.Fixture(t)}})
	testutil.WriteFile(t, dir, "permissions.yml", "rules:\n  fx_echo: require_approval\n")
	h := routertest.NewWithConfig(t, dir, cfg, nil)
	cs := h.Connect(nil)
	h.Booted()
	home := filepath.Join(dir, "home")
	args := map[string]any{"message": "ship it"}
	id := heldID(t, routertest.Call(t, cs, "fx_echo", args))
	session := pendingList(t, home)[0].Session

	for _, verb := range []string{"approve", "deny"} {
		out, code := operator(t, home, "approvals", verb, id)
		if code == 0 || !strings.Contains(out, "without an interactive terminal") || !strings.Contains(out, "--unsafe-no-tty") {
			t.Fatalf("approvals %s without a terminal (exit %d): %s", verb, code, out)
		}
	}
	if again := heldID(t, routertest.Call(t, cs, "fx_echo", args)); again != id {
		t.Fatalf("held under a new id %s (was %s)", again, id)
	}

	atTerminal := func(typed string) (string, int) {
		cmd := exec.Command(testutil.Evokore(t), "approvals", "approve", id)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + t.TempDir(), "EVOKORE_HOME=" + home}
		return testutil.NewTerminal(t).Run(t, cmd, typed)
	}
	out, code := atTerminal("no\n")
	if code == 0 || !strings.Contains(out, "not confirmed") {
		t.Fatalf("answering no (exit %d): %s", code, out)
	}
	if again := heldID(t, routertest.Call(t, cs, "fx_echo", args)); again != id {
		t.Fatalf("an unconfirmed approval changed the call: %s", again)
	}
	out, code = atTerminal("yes\n")
	for _, want := range []string{"fx_echo", `"ship it"`, session, "Approve it?", "Approved approval " + id} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("confirming at a terminal (exit %d) does not show %q:\n%s", code, want, out)
		}
	}
	if text, isErr := routertest.CallText(t, cs, "fx_echo", args); isErr || !strings.Contains(text, "ship it") {
		t.Fatalf("the confirmed approval did not run the call: %s", text)
	}
}
