package main_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// operator runs an evokore command against a router's EVOKORE_HOME, as an
// operator at another terminal would.
func operator(t *testing.T, home string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(testutil.Evokore(t), args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "EVOKORE_HOME=" + home}
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

func TestApprovalsListAndDenyFromTheCommandLine(t *testing.T) {
	dir := t.TempDir()
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{"fx": routertest.Fixture(t)}})
	testutil.WriteFile(t, dir, "permissions.yml", "rules:\n  fx_count: require_approval\n")
	h := routertest.NewWithConfig(t, dir, cfg, nil)
	cs := h.Connect(nil)
	h.Booted()
	home := filepath.Join(dir, "home")

	token := routertest.ApprovalToken(t, routertest.Call(t, cs, "fx_count", map[string]any{}))
	out, code := operator(t, home, "approvals", "list", "--format", "json")
	var pending []struct {
		ID, Token, ToolName string
	}
	if err := json.Unmarshal([]byte(out), &pending); code != 0 || err != nil || len(pending) != 1 || pending[0].ToolName != "fx_count" || pending[0].Token != token[:8]+"..." {
		t.Fatalf("approvals list (exit %d): %s", code, out)
	}
	if strings.Contains(out, token[8:]) {
		t.Fatal("the listing must not reveal the token")
	}
	if out, code := operator(t, home, "approvals", "deny", pending[0].ID); code != 0 || !strings.Contains(out, "Denied approval "+pending[0].ID) {
		t.Fatalf("approvals deny (exit %d): %s", code, out)
	}
	routertest.ApprovalToken(t, routertest.Call(t, cs, "fx_count", map[string]any{"_evokore_approval_token": token}))
	if got := routertest.Text(routertest.Call(t, cs, "fx_read_count", map[string]any{})); got != "calls: 0" {
		t.Errorf("a denied approval ran: %s", got)
	}
	if _, code := operator(t, home, "approvals", "deny", "0123456789abcdef"); code != 1 {
		t.Errorf("denying an unknown id: exit %d", code)
	}
}

func TestPinsAcceptFromTheCommandLine(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, nil)
	cs := h.Connect(nil)
	h.Booted()
	home := filepath.Join(h.Dir, "home")
	routertest.Call(t, cs, "fx_mutate", map[string]any{"description": "Changed behind your back."})
	routertest.WaitFor(t, "the quarantine", func() bool {
		out, _ := operator(t, home, "pins", "list")
		return strings.Contains(out, "fx/echo")
	})
	if out, code := operator(t, home, "pins", "accept", "fx/echo"); code != 0 || !strings.Contains(out, "Accepted fx/echo.") {
		t.Fatalf("pins accept (exit %d): %s", code, out)
	}
	routertest.WaitFor(t, "fx_echo to run again", func() bool {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fx_echo", Arguments: map[string]any{"message": "ok"}})
		return err == nil && routertest.Text(res) == "Echo: ok"
	})
	if out, _ := operator(t, home, "pins", "list"); !strings.Contains(out, "No quarantined tools.") {
		t.Errorf("pins list after accept: %s", out)
	}
}
