package fleet_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/native/fleet"
	"github.com/evokore/evokore/internal/procgroup"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// admin runs under the shipped admin role, which may spawn processes
// without an approval.
var admin = map[string]string{"EVOKORE_ROLE": "admin"}

// spawnFamily starts an agent that starts a grandchild in its group and
// returns the agent's pid and the grandchild's.
func spawnFamily(t *testing.T, cs *mcp.ClientSession, resource string) (agentID string, pid, grandchild int) {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	args := map[string]any{"command": "sh", "args": []string{"-c", `sleep 300 & echo $! > "$1"; wait`, "sh", pidFile}}
	if resource != "" {
		args["resource"] = resource
	}
	text, isErr := routertest.CallText(t, cs, "fleet_spawn", args)
	if isErr {
		t.Fatal(text)
	}
	s := routertest.DecodeJSON[fleet.Snapshot](t, text)
	routertest.WaitFor(t, "the grandchild's pid", func() bool {
		b, err := os.ReadFile(pidFile)
		grandchild, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && grandchild > 0
	})
	return s.AgentID, s.PID, grandchild
}

func TestSpawnStatusClaimRelease(t *testing.T) {
	h := routertest.New(t, map[string]any{}, admin)
	cs := h.Connect(nil)

	id, pid, grandchild := spawnFamily(t, cs, "")
	if id != "FA-001" {
		t.Errorf("first agent = %s", id)
	}
	text, _ := routertest.CallText(t, cs, "fleet_status", map[string]any{"agentId": id})
	s := routertest.DecodeJSON[fleet.Snapshot](t, text)
	if !s.Alive || s.Status != "running" || s.PID != pid || s.PGID != pid || s.Resource != nil || s.SpawnedAt == 0 || s.ExitCode != nil {
		t.Errorf("status = %s", text)
	}
	if !strings.Contains(text, `"resource": null`) {
		t.Errorf("an unlabelled agent reports resource null: %s", text)
	}

	text, isErr := routertest.CallText(t, cs, "fleet_spawn", map[string]any{"command": "sleep", "args": []string{"300"}, "resource": "queue:ingest"})
	want := `"agentId": "FA-002"`
	if isErr || !strings.Contains(text, want) || !strings.Contains(text, `"status": "claimed"`) || !strings.Contains(text, `"resource": "queue:ingest"`) {
		t.Errorf("spawn with a resource = %s", text)
	}
	second := routertest.DecodeJSON[fleet.Snapshot](t, text)

	text, _ = routertest.CallText(t, cs, "fleet_claim", map[string]any{"agentId": id, "resource": "file:src/x.go"})
	if text != "{\n  \"agentId\": \"FA-001\",\n  \"resource\": \"file:src/x.go\",\n  \"status\": \"claimed\"\n}" {
		t.Errorf("claim = %s", text)
	}

	text, _ = routertest.CallText(t, cs, "fleet_status", map[string]any{})
	all := routertest.DecodeJSON[struct {
		Count  int              `json:"count"`
		Agents []fleet.Snapshot `json:"agents"`
	}](t, text)
	if all.Count != 2 || all.Agents[0].AgentID != "FA-001" || all.Agents[1].AgentID != "FA-002" || !all.Agents[1].Alive {
		t.Errorf("all = %s", text)
	}

	text, _ = routertest.CallText(t, cs, "fleet_release", map[string]any{"agentId": id})
	if text != "{\n  \"agentId\": \"FA-001\",\n  \"status\": \"released\",\n  \"resource\": \"file:src/x.go\"\n}" {
		t.Errorf("release = %s", text)
	}
	if procgroup.Alive(pid) {
		t.Errorf("agent %d still runs after release", pid)
	}
	routertest.WaitFor(t, "the released agent's group to be gone", func() bool { return !procgroup.Alive(grandchild) })

	text, _ = routertest.CallText(t, cs, "fleet_status", map[string]any{"agentId": id})
	s = routertest.DecodeJSON[fleet.Snapshot](t, text)
	if s.Alive || s.Status != "released" || s.Resource != nil {
		t.Errorf("status after release = %s", text)
	}
	if text, isErr := routertest.CallText(t, cs, "fleet_claim", map[string]any{"agentId": id, "resource": "r"}); !isErr || text != "Cannot claim released agent: FA-001" {
		t.Errorf("claim of a released agent = %v %q", isErr, text)
	}

	// The router's shutdown releases the rest.
	h.Server.Close()
	if procgroup.Alive(second.PID) {
		t.Errorf("agent %d survived the router's shutdown", second.PID)
	}
}

func TestAgentThatExitsOnItsOwn(t *testing.T) {
	h := routertest.New(t, map[string]any{}, admin)
	cs := h.Connect(nil)
	text, isErr := routertest.CallText(t, cs, "fleet_spawn", map[string]any{"command": "sh", "args": []string{"-c", "exit 3"}})
	if isErr {
		t.Fatal(text)
	}
	var s fleet.Snapshot
	routertest.WaitFor(t, "the agent to exit", func() bool {
		text, _ := routertest.CallText(t, cs, "fleet_status", map[string]any{"agentId": "FA-001"})
		s = routertest.DecodeJSON[fleet.Snapshot](t, text)
		return s.ExitCode != nil
	})
	if s.Status != "running" || s.Alive || *s.ExitCode != 3 {
		t.Errorf("exited agent = %+v", s)
	}
	if procgroup.Alive(s.PID) {
		t.Errorf("the exited agent %d was not reaped", s.PID)
	}
}

func TestRouterExitLeavesNoProcessBehind(t *testing.T) {
	h := routertest.New(t, map[string]any{}, admin)
	cs := h.Connect(nil)
	var pids []int
	for range 3 {
		_, pid, grandchild := spawnFamily(t, cs, "")
		pids = append(pids, pid, grandchild)
	}
	h.Server.Close()
	routertest.WaitGone(t, 30*time.Second, pids...)
}

func TestFleetErrors(t *testing.T) {
	h := routertest.New(t, map[string]any{}, admin)
	cs := h.Connect(nil)
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"fleet_spawn", map[string]any{"command": ""}, "Missing required argument: command"},
		{"fleet_claim", map[string]any{"agentId": "", "resource": "r"}, "Missing required argument: agentId"},
		{"fleet_claim", map[string]any{"agentId": "FA-001", "resource": ""}, "Missing required argument: resource"},
		{"fleet_release", map[string]any{"agentId": ""}, "Missing required argument: agentId"},
		{"fleet_claim", map[string]any{"agentId": "FA-999", "resource": "r"}, "Unknown agentId: FA-999"},
		{"fleet_release", map[string]any{"agentId": "FA-999"}, "Unknown agentId: FA-999"},
		{"fleet_status", map[string]any{"agentId": "FA-999"}, "Unknown agentId: FA-999"},
	}
	for _, c := range cases {
		if text, isErr := routertest.CallText(t, cs, c.tool, c.args); !isErr || text != c.want {
			t.Errorf("%s %v = %v %q, want %q", c.tool, c.args, isErr, text, c.want)
		}
	}
	text, isErr := routertest.CallText(t, cs, "fleet_spawn", map[string]any{"command": "evokore-no-such-command"})
	if !isErr || !strings.HasPrefix(text, "Failed to spawn 'evokore-no-such-command': ") {
		t.Errorf("spawn of a missing command = %v %q", isErr, text)
	}
	text, _ = routertest.CallText(t, cs, "fleet_status", map[string]any{})
	if text != "{\n  \"count\": 0,\n  \"agents\": []\n}" {
		t.Errorf("empty fleet = %s", text)
	}
}

func TestAgentsGetTheAllowlistNotTheRouterSecrets(t *testing.T) {
	h := routertest.New(t, map[string]any{}, map[string]string{"EVOKORE_ROLE": "admin", "ROUTER_ONLY_SECRET": "s3cr3t"})
	cs := h.Connect(nil)
	out := filepath.Join(t.TempDir(), "env.txt")
	text, isErr := routertest.CallText(t, cs, "fleet_spawn", map[string]any{"command": "sh",
		"args": []string{"-c", `echo "secret=${ROUTER_ONLY_SECRET:-unset} path=${PATH:+set}" > "$0.tmp"; mv "$0.tmp" "$0"`, out}})
	if isErr {
		t.Fatal(text)
	}
	var got []byte
	routertest.WaitFor(t, "the agent's report", func() bool {
		var err error
		got, err = os.ReadFile(out)
		return err == nil
	})
	if string(got) != "secret=unset path=set\n" {
		t.Errorf("an agent sees %q: the base allowlist, never another secret", got)
	}
}
