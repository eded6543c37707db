package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// An agent's shell has no terminal: `evokore approvals approve|deny` run
// from one refuses and the held call stays held; at a terminal the
// operator sees the call (tool, arguments, session) and must confirm, and
// only a confirmed approval lets the retry run.
func TestApprovalsCommandConfirmsAtATerminalOnly(t *testing.T) {
	cs, home := gatedRouter(t, "fx_echo", nil, nil)
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

// What the operator confirms at the terminal is the whole call that will
// run: an argument after a long one is shown, a cut value says so, a
// secret nested in an object never reaches the screen or the pending
// file, and names or values made of terminal controls arrive escaped,
// in the list as in the confirmation.
func TestApprovalAtATerminalShowsTheWholeCall(t *testing.T) {
	cs, home := gatedRouter(t, "fx_args", nil, nil)
	args := map[string]any{
		"a_note":       strings.Repeat("harmless ", 400),
		"path":         "/etc/shadow",
		"\x1b[2Jclear": "\x1b]0;owned\x07\u009b31m",
		"config":       map[string]any{"api_key": "sk-live-123"},
	}
	id := heldID(t, routertest.Call(t, cs, "fx_args", args))

	listed, code := operator(t, home, "approvals", "list")
	if code != 0 || !strings.Contains(listed, id) || strings.ContainsAny(listed, "\x1b\u009b\x07") {
		t.Fatalf("approvals list (exit %d) carries a terminal control:\n%q", code, listed)
	}
	cmd := exec.Command(testutil.Evokore(t), "approvals", "approve", id)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + t.TempDir(), "EVOKORE_HOME=" + home}
	out, code := testutil.NewTerminal(t).Run(t, cmd, "yes\n")
	for _, want := range []string{`"path": "/etc/shadow"`, "more characters not shown", `"\u001b[2Jclear": "\u001b]0;owned\u0007\u009b31m"`, `"config": {"api_key":"[redacted]"}`} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("the confirmation (exit %d) does not show %s:\n%s", code, want, out)
		}
	}
	if strings.ContainsAny(out, "\x1b\u009b\x07") || strings.Contains(out, "sk-live-123") {
		t.Errorf("the confirmation carries a terminal control or a secret:\n%q", out)
	}
	files, _ := filepath.Glob(filepath.Join(home, "approvals", "*"))
	for _, f := range files {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), "sk-live-123") {
			t.Errorf("%s keeps the secret", f)
		}
	}
	if len(files) == 0 {
		t.Errorf("no pending files under %s", filepath.Join(home, "approvals"))
	}
	if text, isErr := routertest.CallText(t, cs, "fx_args", args); isErr || !strings.Contains(text, "/etc/shadow") {
		t.Fatalf("the confirmed approval did not run the call: %s", text)
	}
}

// Files under EVOKORE_HOME are not trusted to be a router's: a pending
// file whose fields carry terminal controls is listed and confirmed with
// them escaped.
func TestApprovalsCommandEscapesAHostilePendingFile(t *testing.T) {
	home := t.TempDir()
	const id = "0123456789abcdef"
	ctl := "\x1b]0;owned\x07\x1b[2J\u009b31m\u202e"
	const controls = "\x1b\x07\u009b\u202e"
	expires := time.Now().Add(time.Hour).UnixMilli()
	testutil.WriteJSON(t, filepath.Join(home, "approvals"), "pending-1.json", map[string]any{
		"pid": os.Getpid(), "router": "r" + ctl,
		"approvals": []map[string]any{{"id": id, "toolName": "fx_echo" + ctl, "session": "s" + ctl, "state": "pending" + ctl,
			"arguments": "\"message\": \"hi\"\n\"x\": \"" + ctl + "\"", "createdAt": expires - 1000, "expiresAt": expires}},
	})
	listed, code := operator(t, home, "approvals", "list")
	if code != 0 || !strings.Contains(listed, id) || !strings.Contains(listed, `fx_echo\u001b]0;owned`) || strings.ContainsAny(listed, controls) {
		t.Errorf("approvals list (exit %d):\n%q", code, listed)
	}
	cmd := exec.Command(testutil.Evokore(t), "approvals", "approve", id)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + t.TempDir(), "EVOKORE_HOME=" + home}
	out, code := testutil.NewTerminal(t).Run(t, cmd, "no\n")
	if code == 0 || !strings.Contains(out, `"message": "hi"`) || !strings.Contains(out, `fx_echo\u001b]0;owned`) || strings.ContainsAny(out, controls) {
		t.Errorf("the confirmation (exit %d):\n%q", code, out)
	}
}
