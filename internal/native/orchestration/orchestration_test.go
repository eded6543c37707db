package orchestration_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/native/claims"
	"github.com/evokore/evokore/internal/native/orchestration"
	"github.com/evokore/evokore/internal/procgroup"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// admin runs under the shipped admin role, which may start runs without an
// approval.
var admin = map[string]string{"EVOKORE_ROLE": "admin"}

func claimList(t *testing.T, cs *mcp.ClientSession) map[string]claims.Status {
	t.Helper()
	text, _ := routertest.CallText(t, cs, "claim_list", map[string]any{})
	l := routertest.DecodeJSON[struct {
		Claims []claims.Status `json:"claims"`
	}](t, text)
	out := map[string]claims.Status{}
	for _, c := range l.Claims {
		out[c.Resource] = c
	}
	return out
}

func status(t *testing.T, cs *mcp.ClientSession, runID string) orchestration.Run {
	t.Helper()
	text, isErr := routertest.CallText(t, cs, "orchestration_status", map[string]any{"runId": runID})
	if isErr {
		t.Fatal(text)
	}
	return routertest.DecodeJSON[orchestration.Run](t, text)
}

// family is an agent spec whose process starts a grandchild in its group
// and writes the grandchild's pid to a file.
func family(t *testing.T, resource string) (map[string]any, func() int) {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	spec := map[string]any{"command": "sh", "args": []string{"-c", `sleep 300 & echo $! > "$1"; wait`, "sh", pidFile}}
	if resource != "" {
		spec["resource"] = resource
		spec["ttlMs"] = 600000
	}
	return spec, func() int {
		var pid int
		routertest.WaitFor(t, "the grandchild's pid", func() bool {
			b, err := os.ReadFile(pidFile)
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			return err == nil && pid > 0
		})
		return pid
	}
}

func TestStartDegradeAndStop(t *testing.T) {
	h := routertest.New(t, map[string]any{}, admin)
	cs := h.Connect(nil)
	first, grandchild := family(t, "repo:docs")
	text, isErr := routertest.CallText(t, cs, "orchestration_start", map[string]any{"name": "docs-sweep", "agents": []any{
		first,
		map[string]any{"command": "sleep", "args": []string{"300"}, "agentLabel": "helper", "resource": "repo:tests", "ttlMs": 600000},
		map[string]any{"command": "sleep", "args": []string{"300"}},
	}})
	if isErr {
		t.Fatal(text)
	}
	r := routertest.DecodeJSON[orchestration.Run](t, text)
	if r.RunID != "ORCH-001" || r.Name != "docs-sweep" || r.Status != "running" || r.StartedAt == 0 || r.StoppedAt != nil ||
		len(r.Agents) != 3 || len(r.DegradedReasons) != 0 || !strings.Contains(text, `"stoppedAt": null`) || !strings.Contains(text, `"degradedReasons": []`) {
		t.Fatalf("run = %s", text)
	}
	for i, want := range []string{"FA-001", "FA-002", "FA-003"} {
		if a := r.Agents[i]; a.AgentID != want || a.Liveness != "alive" || a.PID == 0 {
			t.Errorf("agent %d = %+v", i, a)
		}
	}
	if c := r.Agents[0].ClaimedResource; c == nil || *c != "repo:docs" || r.Agents[2].ClaimedResource != nil || r.Agents[1].Spec.AgentLabel != "helper" {
		t.Errorf("agents = %s", text)
	}
	held := claimList(t, cs)
	if c := held["repo:docs"]; c.AgentID != "FA-001" || c.PID != r.Agents[0].PID || c.Expired || c.ProcessDead {
		t.Errorf("claim of repo:docs = %+v; want FA-001's, owned by its pid", c)
	}
	if c := held["repo:tests"]; c.AgentID != "FA-002" || c.PID != r.Agents[1].PID {
		t.Errorf("claim of repo:tests = %+v", c)
	}
	gpid := grandchild()

	// An agent dying while the run is active degrades the run and frees
	// its claim.
	if err := syscall.Kill(r.Agents[1].PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	routertest.WaitFor(t, "the run to degrade", func() bool { return status(t, cs, "ORCH-001").Status == "degraded" })
	r = status(t, cs, "ORCH-001")
	if !slices.Equal(r.DegradedReasons, []string{"FA-002: agent exited (code -1) while the run was active"}) {
		t.Errorf("reasons = %q", r.DegradedReasons)
	}
	if a := r.Agents[1]; a.Liveness != "dead" || a.ClaimedResource != nil || a.ExitCode == nil {
		t.Errorf("dead agent = %+v", a)
	}
	if a := r.Agents[0]; a.Liveness != "alive" {
		t.Errorf("live agent = %+v", a)
	}
	if _, ok := claimList(t, cs)["repo:tests"]; ok {
		t.Error("the dead agent's claim was not released")
	}

	text, _ = routertest.CallText(t, cs, "orchestration_status", map[string]any{})
	all := routertest.DecodeJSON[struct {
		Runs []orchestration.Run `json:"runs"`
	}](t, text)
	if len(all.Runs) != 1 || all.Runs[0].RunID != "ORCH-001" {
		t.Errorf("all runs = %s", text)
	}

	text, isErr = routertest.CallText(t, cs, "orchestration_stop", map[string]any{"runId": "ORCH-001"})
	r = routertest.DecodeJSON[orchestration.Run](t, text)
	if isErr || r.Status != "stopped" || r.StoppedAt == nil {
		t.Fatalf("stop = %s", text)
	}
	for _, a := range r.Agents {
		if a.Liveness != "dead" || a.ClaimedResource != nil {
			t.Errorf("agent after stop = %+v", a)
		}
		if procgroup.Alive(a.PID) {
			t.Errorf("agent %s (pid %d) survived the stop", a.AgentID, a.PID)
		}
	}
	routertest.WaitFor(t, "the grandchild to be gone", func() bool { return !procgroup.Alive(gpid) })
	if l := claimList(t, cs); len(l) != 0 {
		t.Errorf("claims after stop = %+v", l)
	}
	again, _ := routertest.CallText(t, cs, "orchestration_stop", map[string]any{"runId": "ORCH-001"})
	if again != text {
		t.Errorf("a second stop changed the record:\n%s\nwas\n%s", again, text)
	}
}

func TestStartRollsBackWhenAClaimIsHeld(t *testing.T) {
	h := routertest.New(t, map[string]any{}, admin)
	cs := h.Connect(nil)
	if text, isErr := routertest.CallText(t, cs, "claim_acquire", map[string]any{"resource": "db:prod", "agentId": "human", "ttlMs": 600000}); isErr {
		t.Fatal(text)
	}
	text, isErr := routertest.CallText(t, cs, "orchestration_start", map[string]any{"name": "migrate", "agents": []any{
		map[string]any{"command": "sleep", "args": []string{"300"}, "resource": "db:staging"},
		map[string]any{"command": "sleep", "args": []string{"300"}, "resource": "db:prod"},
	}})
	wantPrefix := "Run 'migrate' (ORCH-001) was rolled back: agent 2 (FA-002) could not claim 'db:prod': Resource 'db:prod' is already claimed by agent 'human'"
	if !isErr || !strings.HasPrefix(text, wantPrefix) || !strings.HasSuffix(text, "orchestration_status ORCH-001 shows the record.") {
		t.Fatalf("start = %v %q", isErr, text)
	}
	r := status(t, cs, "ORCH-001")
	if r.Status != "error" || r.StoppedAt == nil || !strings.Contains(r.Error, "could not claim 'db:prod'") || len(r.Agents) != 2 {
		t.Errorf("record = %+v", r)
	}
	for _, a := range r.Agents {
		if procgroup.Alive(a.PID) {
			t.Errorf("agent %s (pid %d) survived the rollback", a.AgentID, a.PID)
		}
	}
	held := claimList(t, cs)
	if _, ok := held["db:staging"]; ok || held["db:prod"].AgentID != "human" || len(held) != 1 {
		t.Errorf("claims after rollback = %+v; want only the human's", held)
	}
}

func TestStartRollsBackWhenAnAgentCannotStart(t *testing.T) {
	h := routertest.New(t, map[string]any{}, admin)
	cs := h.Connect(nil)
	text, isErr := routertest.CallText(t, cs, "orchestration_start", map[string]any{"name": "broken", "agents": []any{
		map[string]any{"command": "sleep", "args": []string{"300"}, "resource": "r1"},
		map[string]any{"command": "evokore-no-such-command"},
	}})
	if !isErr || !strings.HasPrefix(text, "Run 'broken' (ORCH-001) was rolled back: agent 2 (evokore-no-such-command) did not start: Failed to spawn 'evokore-no-such-command': ") {
		t.Fatalf("start = %v %q", isErr, text)
	}
	r := status(t, cs, "ORCH-001")
	if len(r.Agents) != 1 || procgroup.Alive(r.Agents[0].PID) || r.Status != "error" {
		t.Errorf("record = %+v", r)
	}
	if l := claimList(t, cs); len(l) != 0 {
		t.Errorf("claims after rollback = %+v", l)
	}
}

func TestRouterExitStopsRuns(t *testing.T) {
	h := routertest.New(t, map[string]any{}, admin)
	cs := h.Connect(nil)
	a, ga := family(t, "res:a")
	b, gb := family(t, "")
	text, isErr := routertest.CallText(t, cs, "orchestration_start", map[string]any{"name": "left-running", "agents": []any{a, b}})
	if isErr {
		t.Fatal(text)
	}
	r := routertest.DecodeJSON[orchestration.Run](t, text)
	pids := []int{r.Agents[0].PID, r.Agents[1].PID, ga(), gb()}
	lock := claims.NewStore(filepath.Join(h.Dir, "home", ".claims")).PathFor("res:a")
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("no claim file: %v", err)
	}
	h.Server.Close()
	routertest.WaitGone(t, 30*time.Second, pids...)
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Errorf("the run's claim outlived the router: %v", err)
	}
}

func TestClaimsAreRenewedWhileTheAgentLives(t *testing.T) {
	h := routertest.New(t, map[string]any{}, admin)
	cs := h.Connect(nil)
	text, isErr := routertest.CallText(t, cs, "orchestration_start", map[string]any{"name": "long", "agents": []any{
		map[string]any{"command": "sleep", "args": []string{"300"}, "resource": "lease", "ttlMs": 200},
	}})
	if isErr {
		t.Fatal(text)
	}
	first := claimList(t, cs)["lease"].ExpiresAt
	routertest.WaitFor(t, "the claim to be renewed", func() bool {
		c := claimList(t, cs)["lease"]
		return c.AgentID == "FA-001" && c.ExpiresAt > first
	})
}

func TestOrchestrationErrors(t *testing.T) {
	h := routertest.New(t, map[string]any{}, admin)
	cs := h.Connect(nil)
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"orchestration_start", map[string]any{"name": "", "agents": []any{map[string]any{"command": "true"}}}, "Missing required argument: name"},
		{"orchestration_start", map[string]any{"name": "n", "agents": []any{map[string]any{"command": "true"}, map[string]any{"command": ""}}}, "Missing required argument: agents[1].command"},
		{"orchestration_stop", map[string]any{"runId": ""}, "Missing required argument: runId"},
		{"orchestration_stop", map[string]any{"runId": "ORCH-999"}, "Unknown runId: ORCH-999"},
		{"orchestration_status", map[string]any{"runId": "ORCH-999"}, "Unknown runId: ORCH-999"},
	}
	for _, c := range cases {
		if text, isErr := routertest.CallText(t, cs, c.tool, c.args); !isErr || text != c.want {
			t.Errorf("%s %v = %v %q, want %q", c.tool, c.args, isErr, text, c.want)
		}
	}
	if text, isErr := routertest.CallText(t, cs, "orchestration_start", map[string]any{"name": "n", "agents": []any{}}); !isErr || text != "Missing required argument: agents (non-empty array)" {
		t.Errorf("empty agents = %v %q", isErr, text)
	}
	if text, _ := routertest.CallText(t, cs, "orchestration_status", map[string]any{}); text != "{\n  \"runs\": []\n}" {
		t.Errorf("no runs = %s", text)
	}
}
