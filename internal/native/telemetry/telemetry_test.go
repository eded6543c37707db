package telemetry_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/native/telemetry"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

var enabled = map[string]string{"EVOKORE_TELEMETRY": "true"}

func metrics(t *testing.T, cs *mcp.ClientSession) telemetry.Metrics {
	t.Helper()
	text, isErr := routertest.CallText(t, cs, "get_telemetry", map[string]any{})
	if isErr {
		t.Fatal(text)
	}
	var m telemetry.Metrics
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return m
}

type onDisk struct {
	telemetry.Metrics
	LatencyTotalMs float64 `json:"latencyTotalMs"`
	LatencyCount   int     `json:"latencyCount"`
}

func readFile(t *testing.T, home string) (onDisk, bool) {
	t.Helper()
	var f onDisk
	b, err := os.ReadFile(filepath.Join(home, "telemetry", "metrics.json"))
	if err != nil {
		return f, false
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("metrics.json: %v\n%s", err, b)
	}
	return f, true
}

func TestDisabledByDefault(t *testing.T) {
	h := routertest.New(t, map[string]any{}, nil)
	cs := h.Connect(nil)
	for _, tool := range []string{"get_telemetry", "reset_telemetry"} {
		if text, isErr := routertest.CallText(t, cs, tool, map[string]any{}); isErr || text != "Telemetry is disabled. Set EVOKORE_TELEMETRY=true to enable." {
			t.Errorf("%s = %v %q", tool, isErr, text)
		}
	}
	h.Server.Close()
	if _, err := os.Stat(filepath.Join(h.Dir, "home", "telemetry")); !os.IsNotExist(err) {
		t.Errorf("disabled telemetry wrote files: %v", err)
	}
}

func TestCountsCallsErrorsAndSessions(t *testing.T) {
	h := routertest.New(t, map[string]any{}, enabled)
	cs := h.Connect(nil)
	routertest.CallText(t, cs, "claim_list", map[string]any{})
	routertest.CallText(t, cs, "memory_list", map[string]any{"session_id": "s"})
	if _, isErr := routertest.CallText(t, cs, "nav_get_map", map[string]any{"path": "/no/such/file"}); !isErr {
		t.Fatal("want an isError result to count")
	}
	// Refused by the schema: never ran, so not counted.
	routertest.CallText(t, cs, "nav_get_map", map[string]any{})

	m := metrics(t, cs)
	if m.TelemetryVersion != 2 || m.ToolCallCount != 3 || m.ToolErrorCount != 1 || m.SessionCount != 1 {
		t.Errorf("metrics = %+v", m)
	}
	if m.Sessions != (telemetry.Sessions{ActiveCount: 1, TotalCreated: 1}) || m.Auth != (telemetry.Auth{}) {
		t.Errorf("sessions %+v, auth %+v", m.Sessions, m.Auth)
	}
	start, err := time.Parse(time.RFC3339, m.StartTime)
	if err != nil || time.Since(start) < 0 {
		t.Errorf("startTime %q, uptime %d", m.StartTime, m.Uptime)
	}

	// A second session comes and goes.
	cs2 := h.Connect(nil)
	routertest.CallText(t, cs2, "claim_list", map[string]any{})
	m = metrics(t, cs)
	if m.Sessions.ActiveCount != 2 || m.Sessions.TotalCreated != 2 || m.SessionCount != 2 || m.ToolCallCount != 5 {
		t.Errorf("with two sessions: %+v", m)
	}
	_ = cs2.Close()
	routertest.WaitFor(t, "the closed session to expire", func() bool {
		m = metrics(t, cs)
		return m.Sessions.TotalExpired == 1
	})
	if m.Sessions.ActiveCount != 1 || m.Sessions.TotalCreated != 2 {
		t.Errorf("after one session closed: %+v", m.Sessions)
	}
}

func TestFlushResetAndRestart(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	env := map[string]string{"EVOKORE_TELEMETRY": "true", "EVOKORE_HOME": home}
	h1 := routertest.New(t, map[string]any{}, env)
	if !strings.Contains(h1.Stderr.String(), "[EVOKORE] Telemetry enabled; metrics are stored locally path="+filepath.Join(home, "telemetry", "metrics.json")+"\n") {
		t.Errorf("stderr = %s", h1.Stderr.String())
	}
	cs1 := h1.Connect(nil)
	for range 4 {
		routertest.CallText(t, cs1, "claim_list", map[string]any{})
	}
	// Written shortly after the last change, without waiting for Close.
	routertest.WaitFor(t, "metrics.json to hold the calls", func() bool {
		f, ok := readFile(t, home)
		return ok && f.ToolCallCount == 4 && f.LatencyCount == 4
	})

	// Reset zeroes memory and file; the reset call itself is then counted.
	if text, isErr := routertest.CallText(t, cs1, "reset_telemetry", map[string]any{}); isErr || text != "Telemetry metrics have been reset." {
		t.Fatalf("reset = %v %q", isErr, text)
	}
	m := metrics(t, cs1)
	if m.ToolCallCount != 1 || m.ToolErrorCount != 0 || m.SessionCount != 0 || m.Sessions.ActiveCount != 1 {
		t.Errorf("after reset: %+v", m)
	}
	routertest.CallText(t, cs1, "nav_get_map", map[string]any{"path": "/nope"})
	_ = cs1.Close()
	h1.Server.Close()
	f, ok := readFile(t, home)
	if !ok || f.ToolCallCount != 3 || f.ToolErrorCount != 1 || f.TelemetryVersion != 2 || f.LatencyCount != 3 {
		t.Fatalf("metrics.json after close = %+v", f)
	}

	h2 := routertest.New(t, map[string]any{}, env)
	cs2 := h2.Connect(nil)
	m = metrics(t, cs2)
	if m.ToolCallCount != 3 || m.ToolErrorCount != 1 || m.StartTime != f.StartTime || m.Sessions.TotalCreated != 1 || m.Sessions.ActiveCount != 1 {
		t.Errorf("after restart: %+v (file %+v)", m, f.Metrics)
	}
}

func TestLoadsFilesWrittenByTheOriginal(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(filepath.Join(home, "telemetry"), 0o700); err != nil {
		t.Fatal(err)
	}
	// An older file: no latency sums, only the mean.
	old := `{"telemetryVersion":2,"toolCallCount":10,"toolErrorCount":2,"sessionCount":3,"avgLatencyMs":40,
"startTime":"2026-01-02T03:04:05.678Z","uptime":1000,
"sessions":{"activeCount":9,"totalCreated":3,"totalResumed":1,"totalExpired":2},
"auth":{"successCount":5,"failureCount":1,"rateLimitedCount":0}}`
	if err := os.WriteFile(filepath.Join(home, "telemetry", "metrics.json"), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	h := routertest.New(t, map[string]any{}, map[string]string{"EVOKORE_TELEMETRY": "true", "EVOKORE_HOME": home})
	cs := h.Connect(nil)
	m := metrics(t, cs)
	if m.ToolCallCount != 10 || m.ToolErrorCount != 2 || m.StartTime != "2026-01-02T03:04:05.678Z" || m.AvgLatencyMs > 40 ||
		m.Sessions.TotalResumed != 1 || m.Sessions.TotalExpired != 2 || m.Sessions.ActiveCount != 1 || m.Auth.SuccessCount != 5 {
		t.Errorf("loaded = %+v", m)
	}
}

// Latency is measured from dispatch to answer: one call that takes at
// least 400 ms gives an average of at least 400 ms, and the router has
// been up at least that long. Lower bounds only: a loaded machine makes
// them larger, never smaller.
func TestLatencyAndUptimeAreMeasured(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, map[string]string{"EVOKORE_TELEMETRY": "true", "EVOKORE_TOOL_DISCOVERY_MODE": "legacy"})
	cs := h.Connect(nil)
	h.Booted()
	if text, isErr := routertest.CallText(t, cs, "fx_slow", map[string]any{"ms": 400}); isErr {
		t.Fatal(text)
	}
	m := metrics(t, cs)
	if m.ToolCallCount != 1 || m.AvgLatencyMs < 400 {
		t.Errorf("one 400 ms call: count %d, avgLatencyMs %d", m.ToolCallCount, m.AvgLatencyMs)
	}
	if m.Uptime < 400 {
		t.Errorf("uptime %d ms after a 400 ms call", m.Uptime)
	}
	// Two more calls of about nothing bring the average down: it is an
	// average, not the last or the largest value.
	routertest.CallText(t, cs, "fx_echo", map[string]any{"message": "a"})
	routertest.CallText(t, cs, "fx_echo", map[string]any{"message": "b"})
	m2 := metrics(t, cs)
	if m2.ToolCallCount != 4 || m2.AvgLatencyMs >= m.AvgLatencyMs || m2.AvgLatencyMs < 100 {
		t.Errorf("after two quick calls: count %d, avg %d (was %d)", m2.ToolCallCount, m2.AvgLatencyMs, m.AvgLatencyMs)
	}
}

// EVOKORE_TELEMETRY_DIR moves metrics.json, as in EVOKORE-MCP.
func TestTelemetryDirIsHonoured(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "elsewhere")
	h := routertest.New(t, map[string]any{}, map[string]string{"EVOKORE_TELEMETRY": "true", "EVOKORE_TELEMETRY_DIR": dir})
	if !strings.Contains(h.Stderr.String(), "metrics are stored locally path="+filepath.Join(dir, "metrics.json")) {
		t.Errorf("stderr = %s", h.Stderr.String())
	}
	cs := h.Connect(nil)
	routertest.CallText(t, cs, "claim_list", map[string]any{})
	routertest.WaitFor(t, "metrics.json in EVOKORE_TELEMETRY_DIR", func() bool {
		_, err := os.Stat(filepath.Join(dir, "metrics.json"))
		return err == nil
	})
	if strings.Contains(h.Stderr.String(), "EVOKORE_TELEMETRY_DIR") {
		t.Errorf("EVOKORE_TELEMETRY_DIR reported as not honoured:\n%s", h.Stderr.String())
	}
}
