package analytics_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil/routertest"
)

const transcript = "0b6c1a52-4d1e-4b0a-9a55-3f0f1f6f3b11"

func decode(t *testing.T, text string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, text)
	}
	return v
}

// copyTree copies testdata/<from> to dir/<to>; files get a fresh mtime.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(filepath.Join("testdata", from), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join("testdata", from), p)
		dst := filepath.Join(to, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func age(t *testing.T, path string, by time.Duration) {
	t.Helper()
	when := time.Now().Add(-by)
	if err := os.Chtimes(path, when, when); err != nil {
		t.Fatal(err)
	}
}

// harness is a router whose HOME holds the Claude Code fixtures and whose
// EVOKORE_HOME/sessions holds the hook fixtures.
func harness(t *testing.T, env map[string]string) (*mcp.ClientSession, *routertest.Harness) {
	t.Helper()
	// The router's own record of this test's session would join the
	// fixtures.
	if env == nil {
		env = map[string]string{}
	}
	env["EVOKORE_SESSION_REPLAY"] = "false"
	h := routertest.New(t, map[string]any{}, env)
	copyTree(t, "claude", filepath.Join(h.Dir, ".claude"))
	copyTree(t, "sessions", filepath.Join(h.Dir, "home", "sessions"))
	age(t, filepath.Join(h.Dir, ".claude", "projects", "-home-dev-api", "7d2f9e40-1c3b-4f6a-8e21-5a9c0d4b2e77.jsonl"), 48*time.Hour)
	age(t, filepath.Join(h.Dir, "home", "sessions", "sess-old-replay.jsonl"), 40*24*time.Hour)
	return h.Connect(nil), h
}

// transcripts is a project folder of the harness's Claude Code
// transcripts, the only place session_context_health reads.
func transcripts(t *testing.T, h *routertest.Harness) string {
	t.Helper()
	dir := filepath.Join(h.Dir, ".claude", "projects", "-tmp-"+t.Name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestContextHealth(t *testing.T) {
	cs, h := harness(t, nil)
	path := filepath.Join(h.Dir, ".claude", "projects", "-home-dev-app", transcript+".jsonl")
	want := `{
  "session_id": "` + transcript + `",
  "session_file": "` + path + `",
  "turn_count": 7,
  "context_tokens": {
    "cache_read": 61000,
    "cache_creation": 2400,
    "input": 12,
    "output": 850,
    "total_estimated": 64262
  },
  "cost_per_turn_usd": 0.0401,
  "projected_cost_next_100_turns_usd": 4.01,
  "compact_suggested": true,
  "compact_reason": "Context is over 60K tokens: /compact is recommended to cut the cost of each turn.",
  "cache_hit_rate_pct": 96.2,
  "last_turn_timestamp": "2026-05-01T10:02:30.000Z"
}`
	// Without a path: the newest transcript of any project.
	text, isErr := routertest.CallText(t, cs, "session_context_health", map[string]any{})
	if isErr || text != want {
		t.Errorf("auto-detected = %s\nwant %s", text, want)
	}
	text, _ = routertest.CallText(t, cs, "session_context_health", map[string]any{"session_path": path})
	if text != want {
		t.Errorf("explicit path = %s", text)
	}
	// A small session: no compaction advice.
	other := filepath.Join(h.Dir, ".claude", "projects", "-home-dev-api", "7d2f9e40-1c3b-4f6a-8e21-5a9c0d4b2e77.jsonl")
	v := decode(t, func() string {
		s, _ := routertest.CallText(t, cs, "session_context_health", map[string]any{"session_path": other})
		return s
	}())
	if v["compact_suggested"] != false || v["cache_hit_rate_pct"] != 0.0 || v["turn_count"] != 2.0 ||
		v["compact_reason"] != "Context is well below the size where compacting pays off." {
		t.Errorf("small session = %v", v)
	}
}

func TestContextHealthErrors(t *testing.T) {
	cs, h := harness(t, nil)
	empty := filepath.Join(transcripts(t, h), "empty.jsonl")
	if err := os.WriteFile(empty, []byte(`{"type":"user","message":{"content":"no usage here"}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(transcripts(t, h), "gone.jsonl")
	cases := map[string]string{
		empty:   "No usage data found in session file: " + empty + ". It may be empty or not a Claude Code transcript.",
		missing: "Session file not found or not readable: " + missing,
	}
	for p, want := range cases {
		if text, isErr := routertest.CallText(t, cs, "session_context_health", map[string]any{"session_path": p}); !isErr || text != want {
			t.Errorf("%s = %v %q, want %q", p, isErr, text, want)
		}
	}
	if err := os.RemoveAll(filepath.Join(h.Dir, ".claude")); err != nil {
		t.Fatal(err)
	}
	projects := filepath.Join(h.Dir, ".claude", "projects")
	if text, isErr := routertest.CallText(t, cs, "session_context_health", map[string]any{}); !isErr ||
		text != "No session file found under "+projects+". Pass session_path, or start a Claude Code session first." {
		t.Errorf("no transcripts = %v %q", isErr, text)
	}
}

func TestAnalyzeReplay(t *testing.T) {
	cs, h := harness(t, nil)
	text, isErr := routertest.CallText(t, cs, "session_analyze_replay", map[string]any{})
	if isErr {
		t.Fatal(text)
	}
	today := time.Now().UTC()
	want := `{
  "sessions_analyzed": 2,
  "period": "` + today.AddDate(0, 0, -30).Format("2006-01-02") + ` to ` + today.Format("2006-01-02") + `",
  "tool_frequency": {
    "Bash": {
      "total": 7,
      "pct": 35,
      "consecutive_repeats": 3,
      "errors": 2
    },
    "Edit": {
      "total": 3,
      "pct": 15,
      "consecutive_repeats": 1,
      "errors": 1
    },
    "Glob": {
      "total": 1,
      "pct": 5,
      "consecutive_repeats": 0,
      "errors": 0
    },
    "Grep": {
      "total": 1,
      "pct": 5,
      "consecutive_repeats": 0,
      "errors": 0
    },
    "Read": {
      "total": 7,
      "pct": 35,
      "consecutive_repeats": 3,
      "errors": 0
    },
    "Write": {
      "total": 1,
      "pct": 5,
      "consecutive_repeats": 0,
      "errors": 0
    }
  },
  "retry_signals": [
    {
      "tool": "Bash",
      "consecutive_count": 3,
      "interpretation": "Low: Bash ran 3 times straight after itself."
    },
    {
      "tool": "Read",
      "consecutive_count": 3,
      "interpretation": "Low: Read ran 3 times straight after itself."
    },
    {
      "tool": "Edit",
      "consecutive_count": 1,
      "interpretation": "Low: Edit ran 1 times straight after itself."
    }
  ],
  "sessions_with_zero_evidence": 1,
  "sessions_with_zero_evidence_pct": 50
}`
	if text != want {
		t.Errorf("replay analysis =\n%s\nwant\n%s", text, want)
	}

	// Filters: the manifest's project, the legacy state's project, the id;
	// min_tool_calls 0 takes in the short session; days_back the old one.
	for filter, n := range map[string]float64{"/home/dev/app": 1, "api": 1, "gamma": 0, "nothing-matches": 0} {
		v := decode(t, func() string {
			s, _ := routertest.CallText(t, cs, "session_analyze_replay", map[string]any{"project_filter": filter})
			return s
		}())
		if v["sessions_analyzed"] != n {
			t.Errorf("filter %q analysed %v sessions, want %v", filter, v["sessions_analyzed"], n)
		}
	}
	v := decode(t, func() string {
		s, _ := routertest.CallText(t, cs, "session_analyze_replay", map[string]any{"min_tool_calls": 0})
		return s
	}())
	if v["sessions_analyzed"] != 3.0 {
		t.Errorf("min_tool_calls 0: %v", v["sessions_analyzed"])
	}
	v = decode(t, func() string {
		s, _ := routertest.CallText(t, cs, "session_analyze_replay", map[string]any{"days_back": 60})
		return s
	}())
	if v["sessions_analyzed"] != 3.0 {
		t.Errorf("days_back 60 takes in the old session: %v", v["sessions_analyzed"])
	}

	// No sessions at all.
	dir := filepath.Join(h.Dir, "home", "sessions")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	v = decode(t, func() string {
		s, _ := routertest.CallText(t, cs, "session_analyze_replay", map[string]any{})
		return s
	}())
	if v["sessions_analyzed"] != 0.0 || v["message"] != "No replay files found in "+dir+"." {
		t.Errorf("no sessions = %v", v)
	}
}

func TestWorkRatio(t *testing.T) {
	cs, h := harness(t, nil)
	text, _ := routertest.CallText(t, cs, "session_work_ratio", map[string]any{})
	want := `{
  "sessions_scored": 3,
  "median_work_ratio_pct": 0,
  "flagged_sessions": [
    {
      "session_id": "sess-beta",
      "replay_entries": 12,
      "evidence_entries": 0,
      "work_ratio_pct": 0,
      "diagnosis": "Little evidence of work: 12 tool calls left 0 evidence records."
    },
    {
      "session_id": "sess-gamma",
      "replay_entries": 3,
      "evidence_entries": 0,
      "work_ratio_pct": 0,
      "diagnosis": "Little evidence of work: 3 tool calls left 0 evidence records."
    }
  ],
  "high_efficiency_sessions": [
    {
      "session_id": "sess-alpha",
      "replay_entries": 8,
      "evidence_entries": 3,
      "work_ratio_pct": 37.5
    }
  ],
  "improvement_signal": "2 of 3 sessions are below a 10% work ratio; look at their replays for read or retry loops."
}`
	if text != want {
		t.Errorf("work ratio =\n%s\nwant\n%s", text, want)
	}
	v := decode(t, func() string {
		s, _ := routertest.CallText(t, cs, "session_work_ratio", map[string]any{"project_filter": "/home/dev/app", "threshold_pct": 40})
		return s
	}())
	if v["sessions_scored"] != 1.0 || v["median_work_ratio_pct"] != 37.5 ||
		v["improvement_signal"] != "1 of 1 sessions are below a 40% work ratio; look at their replays for read or retry loops." {
		t.Errorf("filtered, threshold 40 = %v", v)
	}
	v = decode(t, func() string {
		s, _ := routertest.CallText(t, cs, "session_work_ratio", map[string]any{"project_filter": "alpha", "threshold_pct": 12.5})
		return s
	}())
	if v["improvement_signal"] != "Every session is above the threshold: work ratios look healthy." {
		t.Errorf("healthy = %v", v)
	}
	dir := filepath.Join(h.Dir, "home", "sessions")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	text, _ = routertest.CallText(t, cs, "session_work_ratio", map[string]any{})
	if !strings.Contains(text, `"improvement_signal": "No replay files found in `+dir+`."`) || !strings.Contains(text, `"flagged_sessions": []`) {
		t.Errorf("no sessions = %s", text)
	}
}

func TestTrustReport(t *testing.T) {
	cs, h := harness(t, map[string]string{"EVOKORE_SESSION_ID": "sess-alpha"})
	want := `{
  "session_id": "sess-alpha",
  "agents": [
    {
      "agentId": "main",
      "score": 0.86,
      "tier": "Trusted",
      "lastUpdated": "2026-05-01T10:02:30.000Z",
      "events": 40
    },
    {
      "agentId": "SA-001",
      "score": 0.55,
      "tier": "Standard",
      "lastUpdated": "2026-05-01T10:01:10.000Z",
      "events": 6
    },
    {
      "agentId": "SA-002",
      "score": 0.35,
      "tier": "Probation",
      "lastUpdated": "2026-05-01T10:01:40.000Z",
      "events": 4
    },
    {
      "agentId": "SA-003",
      "score": 0.1,
      "tier": "Untrusted",
      "lastUpdated": "2026-05-01T10:02:00.000Z",
      "events": 9
    }
  ],
  "summary": {
    "trusted": 1,
    "standard": 1,
    "probation": 1,
    "untrusted": 1
  }
}`
	// The default session comes from EVOKORE_SESSION_ID.
	if text, isErr := routertest.CallText(t, cs, "session_trust_report", map[string]any{}); isErr || text != want {
		t.Errorf("report =\n%s\nwant\n%s", text, want)
	}
	if text, _ := routertest.CallText(t, cs, "session_trust_report", map[string]any{"session_id": "sess-alpha"}); text != want {
		t.Errorf("explicit id = %s", text)
	}
	text, isErr := routertest.CallText(t, cs, "session_trust_report", map[string]any{"session_id": "no-ledger"})
	if isErr || text != "{\n  \"session_id\": \"no-ledger\",\n  \"agents\": [],\n  \"summary\": {\n    \"trusted\": 0,\n    \"standard\": 0,\n    \"probation\": 0,\n    \"untrusted\": 0\n  }\n}" {
		t.Errorf("no ledger = %s", text)
	}
	bad := filepath.Join(h.Dir, "home", "sessions", "broken-trust.json")
	if err := os.WriteFile(bad, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if text, isErr := routertest.CallText(t, cs, "session_trust_report", map[string]any{"session_id": "broken"}); !isErr ||
		!strings.HasPrefix(text, "Cannot read the trust ledger "+bad+": not valid JSON") {
		t.Errorf("corrupt ledger = %v %q", isErr, text)
	}
	// Ids never leave the sessions directory.
	if text, _ := routertest.CallText(t, cs, "session_trust_report", map[string]any{"session_id": "../../sessions/sess-alpha"}); !strings.Contains(text, `"agents": []`) {
		t.Errorf("path-like id = %s", text)
	}
}

func TestTrustReportDefaultsToDefault(t *testing.T) {
	cs, h := harness(t, nil)
	copyFile := func(from, to string) {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(h.Dir, "home", "sessions")
	copyFile(filepath.Join(dir, "sess-alpha-trust.json"), filepath.Join(dir, "default-trust.json"))
	text, _ := routertest.CallText(t, cs, "session_trust_report", map[string]any{})
	if !strings.HasPrefix(text, "{\n  \"session_id\": \"default\",") || !strings.Contains(text, `"untrusted": 1`) {
		t.Errorf("default session = %s", text)
	}
}
