package audit_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/audit"
	"github.com/evokore/evokore/internal/events"
)

// Concurrent logs (two routers) share one file: every line is whole JSON,
// the file rotates by size, only Keep rotated files remain, and the lines
// kept are the newest.
func TestConcurrentWritersRotateAndKeepN(t *testing.T) {
	path := audit.Path(t.TempDir())
	const perLog, logs = 2000, 2
	var wg sync.WaitGroup
	for w := range logs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := audit.Open(audit.Options{Path: path, MaxBytes: 8 << 10, Keep: 3})
			for i := range perLog {
				l.Handle(events.Event{Type: events.ToolCall, Tool: fmt.Sprintf("w%d_%04d", w, i), Outcome: "ok"})
			}
			l.Close()
			if d := l.Dropped(); d != 0 {
				t.Errorf("writer %d dropped %d", w, d)
			}
		}()
	}
	wg.Wait()
	files, _ := filepath.Glob(path + "*")
	var logsFound []string
	total := 0
	for _, f := range files {
		if filepath.Ext(f) == ".lock" {
			continue
		}
		logsFound = append(logsFound, filepath.Base(f))
		st, _ := os.Stat(f)
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v", f, st.Mode())
		}
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			var e events.Event
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Type != events.ToolCall {
				t.Fatalf("%s: bad line %q: %v", f, sc.Text(), err)
			}
			total++
		}
		fh.Close()
	}
	if len(logsFound) != 4 {
		t.Errorf("files = %v, want audit.jsonl and 3 rotated", logsFound)
	}
	if total == 0 || total >= perLog*logs {
		t.Errorf("%d lines kept of %d: rotation dropped nothing or everything", total, perLog*logs)
	}
	// The newest lines are in the live file.
	b, _ := os.ReadFile(path)
	if len(b) == 0 {
		t.Error("the live file is empty")
	}
}

// A batch of big events is written in parts: every event is there, in
// order, on a line of its own, and nothing is counted as dropped.
func TestBigEventsAreWrittenWholeAndInOrder(t *testing.T) {
	path := audit.Path(t.TempDir())
	l := audit.Open(audit.Options{Path: path})
	const n = 600
	detail := strings.Repeat("x", 3000)
	for i := range n {
		l.Handle(events.Event{Type: events.ToolCall, Tool: fmt.Sprintf("t%04d", i), Detail: detail})
	}
	l.Close()
	if d := l.Dropped(); d != 0 {
		t.Errorf("dropped %d", d)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != n {
		t.Fatalf("%d lines, want %d", len(lines), n)
	}
	for i, line := range lines {
		var e events.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil || e.Tool != fmt.Sprintf("t%04d", i) || e.Detail != detail {
			t.Fatalf("line %d: %.80s: %v", i, line, err)
		}
	}
}

// The lines of events EVOKORE-MCP also records read as its AuditLog's
// lines: its field names, its event names, its outcomes, its metadata,
// with evokore's fields after them. The want lines are written out by
// hand from EVOKORE-MCP's AuditEntry (timestamp in Unix ms, eventType,
// sessionId, actor, resource, outcome, metadata).
func TestLinesLeadWithEvokoreMCPFields(t *testing.T) {
	path := audit.Path(t.TempDir())
	when := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	ms := 12.5
	l := audit.Open(audit.Options{Path: path})
	for _, e := range []events.Event{
		{Time: when, Type: events.SessionStart, Session: "stdio-1", Transport: "stdio", Pid: 7},
		{Time: when, Type: events.ToolCall, Session: "stdio-1", Role: "ops", Tool: "fx_echo", Source: "proxy", Outcome: events.OutcomeError, LatencyMs: &ms, Detail: "boom", Pid: 7},
		{Time: when, Type: events.ApprovalDenied, Approval: "ab12", Mode: "operator", Pid: 7},
	} {
		l.Handle(e)
	}
	l.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"timestamp":1777629600000,"eventType":"session_create","sessionId":"stdio-1","actor":"system","outcome":"success","metadata":{"transport":"stdio"},"ts":"2026-05-01T10:00:00Z","event":"session_start","transport":"stdio","pid":7}`,
		`{"timestamp":1777629600000,"eventType":"tool_call","sessionId":"stdio-1","actor":"ops","resource":"fx_echo","outcome":"failure","metadata":{"source":"proxy","latencyMs":12.5,"error":"boom"},"ts":"2026-05-01T10:00:00Z","role":"ops","tool":"fx_echo","source":"proxy","latencyMs":12.5,"detail":"boom","pid":7}`,
		`{"timestamp":1777629600000,"eventType":"approval_deny","actor":"system","outcome":"denied","ts":"2026-05-01T10:00:00Z","event":"approval_denied","approvalId":"ab12","mode":"operator","pid":7}`,
	}
	got := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("%d lines:\n%s", len(got), b)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d\n got %s\nwant %s", i+1, got[i], want[i])
		}
	}
}
