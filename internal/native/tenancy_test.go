package native_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/ingress"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// Every native that names a session's records shows and acts on them
// only within the caller's tenant (session.Identity.MaySee): alice's
// records, named by their session id, are found by alice and by nobody
// else, whether another tenant (bob) or a caller with no tenant (stdio).
func TestNativesShowOnlyTheCallersTenant(t *testing.T) {
	dir := t.TempDir()
	// worker_dispatch starts processes: named here, it needs no approval.
	if err := os.WriteFile(filepath.Join(dir, "permissions.yml"), []byte("rules:\n  worker_dispatch: allow\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := routertest.NewWithConfig(t, dir, testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{}}), nil)
	alice := h.ConnectAs(nil, ingress.SessionOptions{Identity: session.Identity{Subject: "alice", Tenant: "alice"}})
	bob := h.ConnectAs(nil, ingress.SessionOptions{Identity: session.Identity{Subject: "bob", Tenant: "bob"}})
	local := h.Connect(nil)
	aliceSession := ""
	for _, s := range h.Server.Sessions() {
		if s.Identity.Tenant == "alice" {
			aliceSession = s.ID
		}
	}
	if aliceSession == "" {
		t.Fatal("alice's session is not listed")
	}

	// Alice's records: a memory, a worker, and the router's own record
	// of her calls (replay and trust ledger, written in the background).
	call := func(cs *mcp.ClientSession, tool string, args map[string]any) string {
		t.Helper()
		text, _ := routertest.CallText(t, cs, tool, args)
		return text
	}
	if text, isErr := routertest.CallText(t, alice, "memory_store", map[string]any{"session_id": aliceSession, "key": "plan", "kind": "context", "value": "alice's secret plan"}); isErr {
		t.Fatal(text)
	}
	worker := routertest.DecodeJSON[struct {
		WorkerID string `json:"workerId"`
	}](t, call(alice, "worker_dispatch", map[string]any{"session_id": aliceSession, "worker_type": "repo_analysis"})).WorkerID
	if worker == "" {
		t.Fatal("no worker id")
	}
	routertest.WaitFor(t, "alice's trust ledger", func() bool {
		return strings.Contains(call(alice, "session_trust_report", map[string]any{"session_id": aliceSession}), `"agentId"`)
	})
	routertest.WaitFor(t, "alice's replay", func() bool {
		return strings.Contains(call(alice, "session_analyze_replay", map[string]any{"min_tool_calls": 1}), `"sessions_analyzed": 1`)
	})

	surfaces := []struct {
		name string
		tool string
		args map[string]any
		// sees reports whether the answer shows alice's record.
		sees func(text string) bool
	}{
		{"memory_list", "memory_list", map[string]any{"session_id": aliceSession}, func(s string) bool { return strings.Contains(s, "secret plan") }},
		{"memory_search", "memory_search", map[string]any{"session_id": aliceSession, "query": "plan"}, func(s string) bool { return strings.Contains(s, "secret plan") }},
		{"worker_context", "worker_context", map[string]any{"session_id": aliceSession, "worker_id": worker}, func(s string) bool { return strings.Contains(s, worker) && !strings.Contains(s, "not found") }},
		{"session_trust_report", "session_trust_report", map[string]any{"session_id": aliceSession}, func(s string) bool { return strings.Contains(s, `"agentId"`) }},
		// Each caller's own calls are recorded too: only a tool alice alone
		// called tells her replay apart.
		{"session_analyze_replay", "session_analyze_replay", map[string]any{"min_tool_calls": 1}, func(s string) bool { return strings.Contains(s, `"worker_dispatch"`) }},
		{"session_work_ratio", "session_work_ratio", map[string]any{}, func(s string) bool { return strings.Contains(s, aliceSession) }},
	}
	callers := []struct {
		name string
		cs   *mcp.ClientSession
		may  bool
	}{{"alice", alice, true}, {"bob, another tenant", bob, false}, {"a caller with no tenant", local, false}}
	for _, s := range surfaces {
		for _, c := range callers {
			t.Run(s.name+"/"+c.name, func(t *testing.T) {
				text := call(c.cs, s.tool, s.args)
				if got := s.sees(text); got != c.may {
					t.Errorf("%s sees alice's record: %v, want %v\n%s", c.name, got, c.may, text)
				}
			})
		}
	}

	// Acting: bob writing under alice's session id changes nothing of hers.
	call(bob, "memory_store", map[string]any{"session_id": aliceSession, "key": "plan", "kind": "context", "value": "bob's overwrite"})
	if text := call(alice, "memory_list", map[string]any{"session_id": aliceSession}); !strings.Contains(text, "secret plan") || strings.Contains(text, "overwrite") {
		t.Errorf("bob's store reached alice's memory:\n%s", text)
	}
	// The machine user's Claude Code transcripts are not another
	// tenant's to read.
	if text, isErr := routertest.CallText(t, bob, "session_context_health", map[string]any{}); !isErr || !strings.Contains(text, "not available to this caller") {
		t.Errorf("bob reads the transcripts: %v %s", isErr, text)
	}
	if text, _ := routertest.CallText(t, local, "session_context_health", map[string]any{}); strings.Contains(text, "not available to this caller") {
		t.Errorf("the local caller is refused the transcripts: %s", text)
	}
}
