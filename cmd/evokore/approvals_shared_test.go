package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// With EVOKORE_SESSION_STORE=redis, `evokore approvals` works on the
// approvals the replicas share: a call held by a router shows up in the
// list of an operator on another machine (another EVOKORE_HOME), and
// their approval lets the retry run once.
func TestApprovalsCommandReachesSharedApprovals(t *testing.T) {
	url := testutil.RedisServer(t)
	env := map[string]string{"EVOKORE_SESSION_STORE": "redis", "EVOKORE_REDIS_URL": url, "EVOKORE_REDIS_KEY_PREFIX": "cli:"}
	cs, _ := gatedRouter(t, "fx_count", nil, env)
	id := routertest.HeldApproval(t, routertest.Call(t, cs, "fx_count", map[string]any{}))

	run := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(testutil.Evokore(t), args...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + t.TempDir(), "EVOKORE_HOME=" + t.TempDir()}
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	out, code := run("approvals", "list", "--format", "json")
	var pending []policy.PendingApproval
	if err := json.Unmarshal([]byte(out), &pending); code != 0 || err != nil || len(pending) != 1 || pending[0].ID != id || pending[0].State != policy.StatePending {
		t.Fatalf("approvals list (exit %d): %s", code, out)
	}
	if out, code := run("approvals", "approve", "--unsafe-no-tty", id); code != 0 || !strings.Contains(out, "Approved approval "+id) {
		t.Fatalf("approvals approve (exit %d): %s", code, out)
	}
	if text, isErr := routertest.CallText(t, cs, "fx_count", map[string]any{}); isErr {
		t.Fatalf("the approved call did not run: %s", text)
	}
	routertest.HeldApproval(t, routertest.Call(t, cs, "fx_count", map[string]any{}))
	if out, code := run("approvals", "approve", "--unsafe-no-tty", "0123456789abcdef"); code == 0 || !strings.Contains(out, "no pending approval") {
		t.Fatalf("approving an unknown id (exit %d): %s", code, out)
	}
}
