package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// operator runs an evokore command against a router's EVOKORE_HOME, as an
// operator at another terminal would.
func operator(t *testing.T, home string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(testutil.Evokore(t), args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + t.TempDir(), "EVOKORE_HOME=" + home}
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// pendingList is `approvals list --format json`.
func pendingList(t *testing.T, home string) []policy.PendingApproval {
	t.Helper()
	out, code := operator(t, home, "approvals", "list", "--format", "json")
	var pending []policy.PendingApproval
	if err := json.Unmarshal([]byte(out), &pending); code != 0 || err != nil {
		t.Fatalf("approvals list (exit %d): %s", code, out)
	}
	return pending
}

var approvalID = regexp.MustCompile(`approval id ([0-9a-f]{16})`)

// heldID checks r is the operator interception and returns its id.
func heldID(t *testing.T, r *mcp.CallToolResult) string {
	t.Helper()
	m := approvalID.FindStringSubmatch(routertest.Text(r))
	if !r.IsError || m == nil || !strings.Contains(routertest.Text(r), "waiting for operator approval") {
		t.Fatalf("not an operator interception: %q", routertest.Text(r))
	}
	if strings.Contains(routertest.Text(r), policy.TokenField) {
		t.Fatalf("the interception offers the model a token: %q", routertest.Text(r))
	}
	routertest.SaysNotHowToApprove(t, r)
	return m[1]
}

// The default for a client without elicitation: the model cannot approve
// its own call, however fast it retries; an operator's approval from
// another terminal lets the same call run exactly once.
func TestOperatorApprovesFromTheCommandLine(t *testing.T) {
	cs, home := gatedRouter(t, "fx_count", nil, nil)

	id := heldID(t, routertest.Call(t, cs, "fx_count", map[string]any{}))
	for range 20 { // a model that ignores "ask the user"
		if again := heldID(t, routertest.Call(t, cs, "fx_count", map[string]any{})); again != id {
			t.Fatalf("a retry filed a new approval %s (first %s)", again, id)
		}
	}
	if got := routertest.Text(routertest.Call(t, cs, "fx_read_count", map[string]any{})); got != "calls: 0" {
		t.Fatalf("the held call ran without approval: %s", got)
	}
	pending := pendingList(t, home)
	if len(pending) != 1 || pending[0].ID != id || pending[0].ToolName != "fx_count" || pending[0].State != policy.StatePending {
		t.Fatalf("pending: %+v", pending)
	}
	if out, code := operator(t, home, "approvals", "approve", "--unsafe-no-tty", id); code != 0 || !strings.Contains(out, "Approved approval "+id) {
		t.Fatalf("approvals approve (exit %d): %s", code, out)
	}
	if res := routertest.Call(t, cs, "fx_count", map[string]any{}); res.IsError {
		t.Fatalf("the approved retry: %s", routertest.Text(res))
	}
	// Once: the next identical call is held again, under a new id.
	if again := heldID(t, routertest.Call(t, cs, "fx_count", map[string]any{})); again == id {
		t.Error("the approval ran twice")
	}
	if got := routertest.Text(routertest.Call(t, cs, "fx_read_count", map[string]any{})); got != "calls: 1" {
		t.Errorf("the child counted %s", got)
	}
	if _, code := operator(t, home, "approvals", "approve", "--unsafe-no-tty", "0123456789abcdef"); code != 1 {
		t.Errorf("approving an unknown id: exit %d", code)
	}
}

// A denied call never runs, and its retry says it was denied. Denials of
// concurrent CLIs are never lost, and two routers on one EVOKORE_HOME
// keep their approvals apart.
func TestOperatorDeniesFromTheCommandLine(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	routers := make([]*mcp.ClientSession, 2)
	for i := range routers {
		rdir := filepath.Join(dir, fmt.Sprint(i))
		cfg := testutil.WriteJSON(t, rdir, "mcp.config.json", map[string]any{"servers": map[string]any{"fx": routertest.Fixture(t)}})
		testutil.WriteFile(t, rdir, "permissions.yml", "rules:\n  fx_echo: require_approval\n")
		h := routertest.NewWithConfig(t, rdir, cfg, map[string]string{"EVOKORE_HOME": home})
		routers[i] = h.Connect(nil)
		h.Booted()
	}
	const perRouter = 5
	var ids []string
	for i, cs := range routers {
		for j := range perRouter {
			ids = append(ids, heldID(t, routertest.Call(t, cs, "fx_echo", map[string]any{"message": fmt.Sprintf("r%d-%d", i, j)})))
		}
	}
	if got := len(pendingList(t, home)); got != len(ids) {
		t.Fatalf("listed %d approvals of two routers, want %d", got, len(ids))
	}
	var wg sync.WaitGroup
	codes := make([]int, len(ids))
	for k, id := range ids {
		wg.Go(func() { _, codes[k] = operator(t, home, "approvals", "deny", "--unsafe-no-tty", id) })
	}
	wg.Wait()
	for k, code := range codes {
		if code != 0 {
			t.Errorf("deny %s: exit %d", ids[k], code)
		}
	}
	for i, cs := range routers {
		for j := range perRouter {
			id := ids[i*perRouter+j]
			res := routertest.Call(t, cs, "fx_echo", map[string]any{"message": fmt.Sprintf("r%d-%d", i, j)})
			if !res.IsError || routertest.Text(res) != policy.DeniedApprovalText("fx_echo", id) {
				t.Errorf("retry of denied %s: %q", id, routertest.Text(res))
			}
		}
	}
	if out, code := operator(t, home, "approvals", "approve", "--unsafe-no-tty", ids[0]); code != 1 || !strings.Contains(out, "was denied") {
		t.Errorf("approving a denied call (exit %d): %s", code, out)
	}
	// The operator's verdicts are in the audit log, as given.
	for _, id := range ids {
		if !auditHas(t, home, "approval_deny", id, "decided by the operator in 'evokore approvals'") {
			t.Errorf("no operator denial of %s in the audit log", id)
		}
	}
}

// auditHas reports whether home's audit log holds an event of type typ
// for approval id whose detail contains detail.
func auditHas(t *testing.T, home, typ, id, detail string) bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(home, "audit", "audit.jsonl"))
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		var e struct {
			Type     string `json:"eventType"`
			Approval string `json:"approvalId"`
			Mode     string `json:"mode"`
			Detail   string `json:"detail"`
		}
		if json.Unmarshal([]byte(line), &e) == nil && e.Type == typ && e.Approval == id && e.Mode == "operator" && strings.Contains(e.Detail, detail) {
			return true
		}
	}
	return false
}

// An unreadable decisions file may hold a denial: nothing approval-gated
// runs while it is unreadable, and the CLI says where it is broken.
func TestCorruptDecisionsFailClosed(t *testing.T) {
	cs, home := gatedRouter(t, "fx_count", nil, nil)
	id := heldID(t, routertest.Call(t, cs, "fx_count", map[string]any{}))
	if _, code := operator(t, home, "approvals", "approve", "--unsafe-no-tty", id); code != 0 {
		t.Fatal("approve failed")
	}
	f, err := os.OpenFile(filepath.Join(home, "approvals", "decisions.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("{\"id\": \"deadbeef\", \"decis\n")
	f.Close()
	res := routertest.Call(t, cs, "fx_count", map[string]any{})
	if !res.IsError || !strings.Contains(routertest.Text(res), "decisions.jsonl") {
		t.Errorf("approved call with a corrupt decisions file: %q", routertest.Text(res))
	}
	if got := routertest.Text(routertest.Call(t, cs, "fx_read_count", map[string]any{})); got != "calls: 0" {
		t.Errorf("the child counted %s", got)
	}
	if out, code := operator(t, home, "approvals", "list"); code != 1 || !strings.Contains(out, "decisions.jsonl (line 2") {
		t.Errorf("approvals list with a corrupt file (exit %d): %s", code, out)
	}
}

// The opt-in token mode keeps EVOKORE-MCP's flow, and an operator can
// still deny a token the model holds.
func TestTokenModeDenyFromTheCommandLine(t *testing.T) {
	cs, home := gatedRouter(t, "fx_count", map[string]any{"approvals": map[string]any{"mode": "token"}}, nil)

	token := routertest.ApprovalToken(t, routertest.Call(t, cs, "fx_count", map[string]any{}))
	pending := pendingList(t, home)
	if len(pending) != 1 || pending[0].ToolName != "fx_count" || pending[0].Token != token[:8]+"..." {
		t.Fatalf("approvals list: %+v", pending)
	}
	out, _ := operator(t, home, "approvals", "list", "--format", "json")
	if strings.Contains(out, token[8:]) {
		t.Fatal("the listing must not reveal the token")
	}
	if out, code := operator(t, home, "approvals", "deny", "--unsafe-no-tty", pending[0].ID); code != 0 || !strings.Contains(out, "Denied approval "+pending[0].ID) {
		t.Fatalf("approvals deny (exit %d): %s", code, out)
	}
	res := routertest.Call(t, cs, "fx_count", map[string]any{"_evokore_approval_token": token})
	if !res.IsError || !strings.Contains(routertest.Text(res), "was denied by an operator") {
		t.Errorf("retry with a denied token: %q", routertest.Text(res))
	}
	if got := routertest.Text(routertest.Call(t, cs, "fx_read_count", map[string]any{})); got != "calls: 0" {
		t.Errorf("a denied approval ran: %s", got)
	}
	if _, code := operator(t, home, "approvals", "deny", "--unsafe-no-tty", "0123456789abcdef"); code != 1 {
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

// gatedRouter starts a router over the fixture child, as fx, with tool
// waiting for a human, config's other members and env; it returns the
// booted client and the router's EVOKORE_HOME.
func gatedRouter(t *testing.T, tool string, config map[string]any, env map[string]string) (*mcp.ClientSession, string) {
	t.Helper()
	dir := t.TempDir()
	doc := map[string]any{"servers": map[string]any{"fx": routertest.Fixture(t)}}
	for k, v := range config {
		doc[k] = v
	}
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", doc)
	testutil.WriteFile(t, dir, "permissions.yml", "rules:\n  "+tool+": require_approval\n")
	h := routertest.NewWithConfig(t, dir, cfg, env)
	cs := h.Connect(nil)
	h.Booted()
	return cs, filepath.Join(dir, "home")
}
