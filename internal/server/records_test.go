package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// auditLines reads EVOKORE_HOME/audit/audit.jsonl.
func auditLines(t *testing.T, home string) []map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join(home, "audit", "audit.jsonl"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("audit line is not JSON: %v: %s", err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

// waitAudit waits until the audit log holds a line matching match.
func waitAudit(t *testing.T, home, what string, match func(map[string]any) bool) map[string]any {
	t.Helper()
	var hit map[string]any
	routertest.WaitFor(t, "audit line: "+what, func() bool {
		for _, l := range auditLines(t, home) {
			if match(l) {
				hit = l
				return true
			}
		}
		return false
	})
	return hit
}

func eventIs(typ, tool string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["eventType"] == typ && (tool == "" || m["tool"] == tool) }
}

// replayFiles lists the sessions/*-replay.jsonl files and their lines.
func replayFiles(t *testing.T, home string) map[string][]map[string]any {
	t.Helper()
	out := map[string][]map[string]any{}
	paths, _ := filepath.Glob(filepath.Join(home, "sessions", "*-replay.jsonl"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		// Only whole lines: the file may be read while its first batch
		// is being written.
		whole := strings.TrimSpace(string(b[:strings.LastIndexByte(string(b), '\n')+1]))
		if whole == "" {
			continue
		}
		for _, line := range strings.Split(whole, "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("%s: %v: %s", p, err, line)
			}
			out[p] = append(out[p], m)
		}
	}
	return out
}

func decodeJSON(t *testing.T, text string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, text)
	}
	return v
}

// A plain MCP client (no Claude Code, no hooks) gets its session recorded
// by the router, and the analytics natives report its calls.
func TestRouterRecordsItsSessionsForTheAnalytics(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, nil)
	cs := h.Connect(nil)
	h.Booted()
	home := filepath.Join(h.Dir, "home")
	for i := range 4 {
		if res := routertest.Call(t, cs, "fx_echo", map[string]any{"message": "m" + string(rune('0'+i))}); res.IsError {
			t.Fatal(routertest.Text(res))
		}
	}
	if res := routertest.Call(t, cs, "fx_fail", map[string]any{"message": "boom"}); !res.IsError {
		t.Fatal("fx_fail did not fail")
	}
	routertest.Call(t, cs, "claim_list", map[string]any{})

	var sid string
	var lines []map[string]any
	routertest.WaitFor(t, "6 replay lines", func() bool {
		for p, ls := range replayFiles(t, home) {
			if len(ls) >= 6 {
				sid, lines = strings.TrimSuffix(filepath.Base(p), "-replay.jsonl"), ls
				return true
			}
		}
		return false
	})
	if !strings.HasPrefix(sid, "stdio-") {
		t.Errorf("session id %q", sid)
	}
	want := []struct{ tool, outcome, summary string }{
		{"fx_echo", "ok", "message=m0"}, {"fx_echo", "ok", "message=m1"}, {"fx_echo", "ok", "message=m2"},
		{"fx_echo", "ok", "message=m3"}, {"fx_fail", "error", "message=boom"}, {"claim_list", "ok", ""},
	}
	for i, w := range want {
		l := lines[i]
		if l["tool"] != w.tool || l["outcome"] != w.outcome || l["summary"] != w.summary || l["source"] != "router" {
			t.Errorf("line %d = %v, want %+v", i, l, w)
		}
		if _, ok := l["latency_ms"].(float64); !ok {
			t.Errorf("line %d has no latency: %v", i, l)
		}
		if _, err := time.Parse("2006-01-02T15:04:05.000Z", l["ts"].(string)); err != nil {
			t.Errorf("line %d ts: %v", i, err)
		}
	}
	if o := lines[0]["output"]; o != "Echo: m0" {
		t.Errorf("output = %v", o)
	}

	// The analytics natives read what the router wrote.
	text, isErr := routertest.CallText(t, cs, "session_analyze_replay", map[string]any{})
	if isErr {
		t.Fatal(text)
	}
	v := decodeJSON(t, text)
	freq, _ := v["tool_frequency"].(map[string]any)
	echo, _ := freq["fx_echo"].(map[string]any)
	fail, _ := freq["fx_fail"].(map[string]any)
	if v["sessions_analyzed"] != 1.0 || echo["total"] != 4.0 || echo["consecutive_repeats"] != 3.0 || fail["errors"] != 1.0 {
		t.Errorf("session_analyze_replay = %s", text)
	}
	text, _ = routertest.CallText(t, cs, "session_work_ratio", map[string]any{})
	v = decodeJSON(t, text)
	flagged, _ := v["flagged_sessions"].([]any)
	if v["sessions_scored"] != 1.0 || len(flagged) != 1 || flagged[0].(map[string]any)["session_id"] != sid ||
		flagged[0].(map[string]any)["replay_entries"].(float64) < 6 {
		t.Errorf("session_work_ratio = %s", text)
	}
	// The ledger is written after the replay lines: wait for it.
	var agents []any
	routertest.WaitFor(t, "the trust ledger", func() bool {
		text, isErr = routertest.CallText(t, cs, "session_trust_report", map[string]any{"session_id": sid})
		v = decodeJSON(t, text)
		agents, _ = v["agents"].([]any)
		return !isErr && len(agents) == 1 && agents[0].(map[string]any)["events"].(float64) >= 6
	})
	a := agents[0].(map[string]any)
	// 5 that worked and 1 error so far, perhaps plus the analytics calls
	// (which worked): Standard or better.
	if a["agentId"] != "test-client" || a["events"].(float64) < 6 || (a["tier"] != "Standard" && a["tier"] != "Trusted") {
		t.Errorf("trust agent = %v", a)
	}
}

// The audit log records the session and its role, every call with its
// outcome, approvals asked, granted and denied, refusals, reloads and
// auth failures.
func TestAuditLogRecordsTheRoutersEvents(t *testing.T) {
	h := secured(t, "roles:\n  ops:\n    default_permission: allow\n    overrides:\n      fx_fail: deny\n      fx_echo: require_approval\nactive_role: ops\n",
		nil, map[string]string{"EVOKORE_APPROVALS_MODE": "operator", "EVOKORE_TOOL_DISCOVERY_MODE": "legacy"}, nil)
	cs := h.Connect(nil)
	h.Booted()
	home := filepath.Join(h.Dir, "home")

	start := waitAudit(t, home, "session_create", eventIs("session_create", ""))
	if start["role"] != "ops" || start["actor"] != "ops" || start["client"] != "test-client" || start["transport"] != "stdio" || start["event"] != "session_start" {
		t.Errorf("session_start = %v", start)
	}
	sid := start["sessionId"].(string)

	// Approval asked, then granted by an operator: the retry runs.
	held := routertest.Text(routertest.Call(t, cs, "fx_echo", map[string]any{"message": "first"}))
	id := regexp.MustCompile(`approval id ([0-9a-f]+)`).FindStringSubmatch(held)
	if id == nil {
		t.Fatalf("not held: %s", held)
	}
	asked := waitAudit(t, home, "approval_requested", eventIs("approval_requested", "fx_echo"))
	if asked["approvalId"] != id[1] || asked["mode"] != "operator" || asked["sessionId"] != sid || asked["role"] != "ops" {
		t.Errorf("approval_requested = %v", asked)
	}
	if err := policy.Decide(home, id[1], policy.StateApproved, time.Now()); err != nil {
		t.Fatal(err)
	}
	if res := routertest.Call(t, cs, "fx_echo", map[string]any{"message": "first"}); res.IsError {
		t.Fatal(routertest.Text(res))
	}
	waitAudit(t, home, "approval_granted", func(m map[string]any) bool {
		return m["eventType"] == "approval_grant" && m["event"] == "approval_granted" && m["approvalId"] == id[1]
	})
	waitAudit(t, home, "tool_call ok", func(m map[string]any) bool {
		return eventIs("tool_call", "fx_echo")(m) && m["outcome"] == "success" && m["latencyMs"] != nil
	})

	// Another call, denied by the operator.
	held = routertest.Text(routertest.Call(t, cs, "fx_echo", map[string]any{"message": "second"}))
	id = regexp.MustCompile(`approval id ([0-9a-f]+)`).FindStringSubmatch(held)
	if err := policy.Decide(home, id[1], policy.StateDenied, time.Now()); err != nil {
		t.Fatal(err)
	}
	routertest.Call(t, cs, "fx_echo", map[string]any{"message": "second"})
	waitAudit(t, home, "approval_denied", func(m map[string]any) bool {
		return m["eventType"] == "approval_deny" && m["approvalId"] == id[1]
	})

	// A call the role denies is refused and recorded as such.
	rpcError(t, cs, "fx_fail", map[string]any{"message": "x"})
	refused := waitAudit(t, home, "refused fx_fail", eventIs("tool_call", "fx_fail"))
	if refused["outcome"] != "denied" || !strings.Contains(refused["detail"].(string), "strictly denied") {
		t.Errorf("refused call = %v", refused)
	}

	h.Server.Records().Reload("mcp.config.json: 1 server changed", nil)
	h.Server.Records().AuthFailure("203.0.113.9:5555", "invalid bearer token")
	waitAudit(t, home, "reload", func(m map[string]any) bool {
		return m["eventType"] == "reload" && m["outcome"] == "success" && m["detail"] == "mcp.config.json: 1 server changed"
	})
	waitAudit(t, home, "auth_failure", func(m map[string]any) bool {
		return m["eventType"] == "auth_failure" && m["remote"] == "203.0.113.9:5555"
	})

	// The child changes echo's definition: the pins hold it.
	routertest.Call(t, cs, "fx_mutate", map[string]any{"readOnly": true})
	q := waitAudit(t, home, "quarantine", eventIs("quarantine", "fx_echo"))
	if q["server"] != "fx" || q["detail"] == "" {
		t.Errorf("quarantine = %v", q)
	}

	_ = cs.Close()
	end := waitAudit(t, home, "session_end", eventIs("session_end", ""))
	if end["sessionId"] != sid || end["role"] != "ops" {
		t.Errorf("session_end = %v", end)
	}
	var types []string
	for _, l := range auditLines(t, home) {
		types = append(types, l["eventType"].(string))
	}
	for _, want := range []string{"session_create", "tool_call", "approval_requested", "approval_grant", "approval_deny", "reload", "auth_failure", "quarantine", "session_end"} {
		if !slices.Contains(types, want) {
			t.Errorf("no %s in %v", want, types)
		}
	}
}

func TestAuditLogOff(t *testing.T) {
	h := routertest.New(t, map[string]any{}, map[string]string{"EVOKORE_AUDIT_LOG": "false"})
	cs := h.Connect(nil)
	routertest.Call(t, cs, "claim_list", map[string]any{})
	home := filepath.Join(h.Dir, "home")
	// The replay of the same call is the positive signal that recording
	// ran.
	routertest.WaitFor(t, "the replay line", func() bool { return len(replayFiles(t, home)) == 1 })
	_ = h.Server.Shutdown(context.Background())
	if _, err := os.Stat(filepath.Join(home, "audit")); !os.IsNotExist(err) {
		t.Errorf("EVOKORE_AUDIT_LOG=false still wrote the audit log: %v", err)
	}
}

// A reload is audited, refused or not, and a server a reload adds has its
// env placeholder values hidden from the records like one the router
// started with.
func TestReloadIsAuditedAndItsNewServersRedacted(t *testing.T) {
	const planted = "reload-planted-4e9b21"
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	servers := map[string]any{"fx": routertest.Fixture(t)}
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": servers})
	h := routertest.NewWithConfig(t, dir, cfg, map[string]string{"EVOKORE_HOME": home, "RELOAD_SECRET": planted})
	cs := h.Connect(nil)
	h.Booted()

	added := routertest.Fixture(t)
	added["env"] = map[string]any{"API_TOKEN": "${RELOAD_SECRET}"}
	servers["fy"] = added
	testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": servers})
	if _, err := h.Server.Reload(); err != nil {
		t.Fatal(err)
	}
	waitAudit(t, home, "reload ok", func(m map[string]any) bool {
		return m["eventType"] == "reload" && m["outcome"] == "success" && strings.Contains(m["detail"].(string), "fy")
	})
	routertest.WaitFor(t, "fy's tools", func() bool {
		out, isErr := routertest.CallText(t, cs, "fy_env", map[string]any{"name": "API_TOKEN"})
		return !isErr && strings.Contains(out, planted)
	})

	testutil.WriteFile(t, dir, "mcp.config.json", "{ not json")
	if _, err := h.Server.Reload(); err == nil {
		t.Fatal("a broken mcp.config.json was accepted")
	}
	waitAudit(t, home, "reload refused", func(m map[string]any) bool {
		return m["eventType"] == "reload" && m["outcome"] == "failure"
	})
	waitAudit(t, home, "fy_env recorded", eventIs("tool_call", "fy_env"))
	_ = cs.Close()
	_ = h.Server.Close()
	err := filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if b, _ := os.ReadFile(p); strings.Contains(string(b), planted) {
			t.Errorf("%s holds the secret of the server the reload added", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
